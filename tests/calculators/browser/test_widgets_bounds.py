"""Each widget shows the spec-peak bound beside its calibrated estimate, in the lessons' words (issue 25).

A widget computes in the page's setting (calibrated, KV reads counted); each time, rate or throughput it shows
carries "(bound Y)", the same calculation at spec-sheet peaks, as the prose's ``| bound`` filter prints it
(both call ``calculators.units.with_bound``). The build-time drawing, which readers without JavaScript see, is
the same answer as the live one.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from calculators import Scenario
from calculators.browser import handle
from calculators.browser.bounds import NO_BREAK, NOTE, bound_setting
from calculators.browser.protocol import WIDGETS
from calculators.browser.serving_simulator import TIMED
from calculators.charts.serving import SIMULATION_PARAMS, run_summary, simulation
from calculators.setting import COURSE_SETTING, SPEC_PEAK, ModelSetting, using
from calculators.units import format_duration, format_value, with_bound
from course.widgets.extension import render_widget

BOUND = re.compile(r"\(bound\s")


def plain(text: str) -> str:
    """A widget's result as it reads: its no-break spaces (it wraps only before the bound) as spaces."""
    return text.replace(NO_BREAK, " ")


def ask(widget: str, state: dict[str, Any] | None = None) -> dict[str, Any]:
    answer = json.loads(handle(json.dumps({"widget": widget, "state": state or {}})))
    assert answer["ok"], answer
    return answer["result"]  # type: ignore[no-any-return]


def test_the_wording_is_the_lessons() -> None:
    assert with_bound("6.7 ms", "4.8 ms") == "6.7 ms (bound 4.8 ms)"
    assert with_bound("4.8 ms", "4.8 ms") == "4.8 ms"  # a figure that is its own bound is printed once
    assert with_bound("about 7 ms", "4.8 ms", estimate="6.7 ms") == "about 7 ms (bound 4.8 ms)"
    assert with_bound("about 5 ms", "4.8 ms", estimate="4.8 ms") == "about 5 ms"  # a claim compares figures
    assert with_bound("6.7 ms", None) == "6.7 ms"


def test_the_bound_is_the_lessons_spec_peak_setting() -> None:
    with using(COURSE_SETTING):
        assert bound_setting() == SPEC_PEAK
    with using(SPEC_PEAK):
        assert bound_setting() is None  # already at spec peaks: nothing separate to show
    assert bound_setting() is None  # outside any setting the calculators' defaults are spec peaks


def test_prefill_decode_shows_each_time_with_its_bound() -> None:
    result = ask("prefill-decode")
    shown, bounds = result["shown"], result["bounds"]
    # The first decode step at spec peaks reads the 16 GB of weights and the cache of the prompt, the first
    # token and its own, 2,002 tokens x 131,072 bytes (the nominal 8B model in BF16), at 3.35 TB/s:
    # (16e9 + 262,406,144) bytes / 3.35 TB/s = 4.854 ms.
    assert bounds["decode_step_time_s"] == pytest.approx((16e9 + 2002 * 131072) / 3.35e12, rel=1e-9)
    assert plain(shown["decode_step_time_s"]) == "6.73 ms (bound 4.85 ms)"
    with using(SPEC_PEAK):
        peak = Scenario("dense-8b", "h100-sxm", ignore_memory=True).request(2000, 256)
    assert bounds["prefill_time_s"] == peak.prefill.time_s
    assert bounds["time_to_first_token_s"] == peak.time_to_first_token_s
    assert bounds["total_time_s"] == peak.total_time_s
    for key in bounds:
        assert bounds[key] < result["values"][key]  # kernels below their peaks: the estimate is slower
        assert plain(shown[key]) == with_bound(
            format_duration(result["values"][key]), format_duration(bounds[key])
        )
        assert shown[key] in result["summary"]
    # A ratio of two times is bounded by neither mode's ratio: shown once, as are intensities.
    for key in ("prefill_in_decode_steps", "prefill_bound", "decode_bound", "ridge_point"):
        assert not BOUND.search(shown[key]), key


def test_prefill_decode_bound_follows_the_readers_inputs() -> None:
    state = {
        "model": "llama-3.1-70b",
        "gpu": "h200",
        "prompt": "8000",
        "output": "64",
        "batch": "4",
        "kv": "0",
    }
    result = ask("prefill-decode", state)
    with using(SPEC_PEAK):
        peak = Scenario("llama-3.1-70b", "h200", kv_traffic=False, ignore_memory=True).request(
            8000, 64, batch=4
        )
    assert result["bounds"]["decode_step_time_s"] == peak.first_decode.time_s
    assert plain(result["shown"]["decode_step_time_s"]).endswith(
        f"(bound {format_duration(peak.first_decode.time_s)})"
    )


def test_kv_cache_shows_both_decode_steps_with_their_bounds() -> None:
    result = ask("kv-cache")
    bounds, shown = result["bounds"], result["shown"]
    # Llama-3.1-8B in BF16 on an H100 SXM (3.35 TB/s) at spec peaks, batch 64 at 2,000 tokens of context:
    # weights only, 16.061 GB / 3.35 TB/s = 4.79 ms; reading the cache too, 64 x 2,001 x 131,072 bytes =
    # 16.786 GB more: 32.846 GB / 3.35 TB/s = 9.80 ms.
    assert bounds["decode_step_weights_only_s"] == pytest.approx(16.060522496e9 / 3.35e12, rel=1e-9)
    assert bounds["decode_step_with_kv_s"] == pytest.approx((16.060522496e9 + 64 * 2001 * 131072) / 3.35e12)
    assert plain(shown["decode_step_weights_only_s"]) == "7.11 ms (bound 4.79 ms)"
    assert plain(shown["decode_step_with_kv_s"]) == "13.4 ms (bound 9.80 ms)"
    assert "from 7.11 ms (bound 4.79 ms) to 13.4 ms (bound 9.80 ms)" in plain(result["summary"])
    for key in ("kv_bytes_batch", "kv_budget_bytes", "max_batch", "max_context"):  # sizes: no mode
        assert not BOUND.search(shown[key]), key


def test_serving_simulator_shows_every_time_and_rate_with_the_run_at_spec_peaks() -> None:
    result = ask("serving-simulator")
    values, bounds, shown = result["values"], result["bounds"], result["shown"]
    params = {param.name: result["state"][param.name] for param in SIMULATION_PARAMS}
    with using(SPEC_PEAK):
        peak = run_summary(simulation("serving-simulator", params))
    assert bounds == {key: peak[key] for key in TIMED}
    for key in TIMED[1:]:
        assert bounds[key] < values[key], key  # faster steps: shorter waits and gaps
        assert plain(shown[key]) == with_bound(format_duration(values[key]), format_duration(bounds[key]))
    # At 10 requests a second neither run is saturated, but the spec-peak run finishes its last answers
    # sooner, so its output rate over the run is a little higher: a rate's bound is above the estimate.
    assert bounds["output_tokens_per_s"] > values["output_tokens_per_s"]
    assert plain(shown["output_tokens_per_s"]) == with_bound(
        format_value(values["output_tokens_per_s"], "tokens/s"),
        format_value(bounds["output_tokens_per_s"], "tokens/s"),
    )
    for key in ("output_tokens_per_s", "ttft_p50_s", "tpot_p50_s"):
        assert shown[key] in result["summary"]
    for key in ("slo_attainment", "mean_decode_batch", "kv_waste_fraction", "preemptions"):
        assert not BOUND.search(shown[key]), key


def _compute_in(widget: str, setting: ModelSetting) -> dict[str, Any]:
    """The widget's answer computed under ``setting`` (the protocol always takes the site's)."""
    with using(setting):
        return WIDGETS[widget]({})


@pytest.mark.parametrize("widget", ["prefill-decode", "kv-cache", "serving-simulator"])
def test_in_a_spec_peak_setting_each_figure_is_its_own_bound(widget: str) -> None:
    result = _compute_in(widget, SPEC_PEAK)
    assert result["bounds"] == {}
    assert not any(BOUND.search(text) for text in result["shown"].values())
    assert _compute_in(widget, COURSE_SETTING)["bounds"]  # and in the course's setting there are bounds


@pytest.mark.parametrize("widget", ["roofline-explorer", "parameter-counter"])
def test_widgets_without_a_time_depend_on_no_mode(widget: str) -> None:
    """The roofline explorer draws the spec sheet's roofs and the parameter counter counts: no figure has
    a bound to show, and none changes with the mode (if one did, it would need its bound)."""
    calibrated, peak = _compute_in(widget, COURSE_SETTING), _compute_in(widget, SPEC_PEAK)
    assert calibrated["summary"] == peak["summary"]
    assert calibrated.get("shown") == peak.get("shown")
    assert calibrated.get("gpus") == peak.get("gpus")
    assert not BOUND.search(calibrated["summary"])


@pytest.mark.parametrize("widget", ["prefill-decode", "kv-cache", "serving-simulator"])
def test_the_page_without_javascript_shows_the_live_answers_bounds(widget: str) -> None:
    """The build draws the widget with the answer the worker gives, bounds and all, and says what they are."""
    html = render_widget(widget, {})
    bounded = {key: text for key, text in ask(widget)["shown"].items() if BOUND.search(text)}
    assert bounded
    for key, text in bounded.items():
        assert f'data-shown="{key}">{text}</dd>' in html
    assert NOTE in html


def test_the_request_timeline_draws_each_bar_at_spec_peaks_too() -> None:
    """The prefill-vs-decode timeline: a grey line per bar at spec peaks; bounds in caption and table."""
    result = ask("prefill-decode", {"output": "4", "kv": "0"})
    payload = result["charts"]["timeline"]
    prefill, decode = payload["datasets"]["segments"]
    # At spec peaks without the cache reads: the prefill's 2 x 8e9 x 2,000 FLOPs at 989 TFLOP/s = 32.4 ms,
    # each decode step 16 GB at 3.35 TB/s = 4.78 ms, three of them after the first token 14.3 ms.
    with using(SPEC_PEAK):
        peak = Scenario("dense-8b", "h100-sxm", kv_traffic=False, ignore_memory=True).request(2000, 4)
    assert prefill["peak_ms"] == pytest.approx(peak.prefill.time_s * 1e3)
    assert prefill["peak_ms"] == pytest.approx(2 * 8e9 * 2000 / 989e12 * 1e3, rel=0.01)  # attention aside
    assert (decode["peak_start_ms"], decode["peak_end_ms"]) == pytest.approx(
        (peak.prefill.time_s * 1e3, peak.total_time_s * 1e3)
    )
    assert decode["peak_ms"] == pytest.approx(3 * 16e9 / 3.35e12 * 1e3, rel=1e-3)
    assert decode["peak_end_ms"] < decode["end_ms"]  # the estimate takes longer than its bound
    assert (
        f"about {plain(result['shown']['decode_step_time_s'])}" in payload["caption"]
    )  # "6.53 ms (bound 4.78 ms)"
    takes = with_bound(
        format_value(decode["duration_ms"] / 1e3, "ms"), format_value(peak.decode_time_s, "ms")
    )
    assert payload["rows"][1][-1] == takes  # the table, the chart's text alternative, carries them too


def test_the_request_timeline_outside_a_setting_is_its_own_bound() -> None:
    from calculators.charts import chart_data

    data = chart_data("request-timeline", output=4)  # the calculators' defaults: spec peaks
    for row in data.datasets["segments"]:
        assert (row["peak_start_ms"], row["peak_end_ms"]) == (row["start_ms"], row["end_ms"])
    assert "(bound " not in data.caption


def test_the_serving_latency_chart_carries_the_run_at_spec_peaks() -> None:
    """The serving widget's latency chart: a grey tick per bar at the spec-peak run's figure; table bounds."""
    result = ask("serving-simulator", {"charts": "latency", "compare": "continuous,chunked"})
    payload = result["charts"]["latency"]
    params = {param.name: result["state"][param.name] for param in SIMULATION_PARAMS}
    with using(SPEC_PEAK):
        peak = simulation("serving-latency", params, "continuous").summary
    continuous = [
        row for row in payload["datasets"]["percentiles"] if row["scheduler"] == "continuous batching"
    ]
    ttft_p99 = next(
        row for row in continuous if row["metric"] == "Time to first token" and row["percentile"] == "p99"
    )
    assert ttft_p99["peak_ms"] == pytest.approx(peak["ttft_s"]["p99"] * 1e3)
    assert all(row["peak_ms"] < row["ms"] for row in payload["datasets"]["percentiles"])  # faster steps
    output = payload["datasets"]["throughput"][0]
    assert output["peak_tokens_per_s"] == peak["output_tokens_per_s"]
    # The table (the chart's text alternative) reads like the widget's own results beside it: the widget's
    # run is continuous batching's, the chart's first.
    assert result["state"]["scheduler"] == "continuous"
    row = next(row for row in payload["rows"] if row[0] == "continuous batching")
    assert row[1] == plain(result["shown"]["output_tokens_per_s"])
    assert row[3] == with_bound(
        format_value(ttft_p99["ms"] / 1e3, "ms"), format_value(peak["ttft_s"]["p99"], "ms")
    )
    assert "Grey ticks: the same run at spec-sheet peaks" in payload["caption"]


def test_the_roofline_prints_each_pass_with_its_bound_on_the_roof() -> None:
    """The prefill-vs-decode roofline: a pass at spec peaks sits on its roof, the bound of its FLOP/s."""
    result = ask("prefill-decode", {"kv": "0"})
    payload = result["charts"]["roofline"]
    decode = next(row for row in payload["datasets"]["operations"] if row["phase"] == "decode")
    # Decode at batch 1 without the cache reads, at spec peaks: 2 FLOPs per byte of BF16 weight read, about
    # 1 FLOP/byte, so the roof there is 1 FLOP/byte x 3.35 TB/s = 3.35 TFLOP/s.
    assert decode["peak_tflops"] == pytest.approx(decode["intensity"] * 3.35, rel=1e-9)
    assert decode["tflops"] < decode["peak_tflops"]  # the calibrated pass sits below its roof
    row = next(row for row in payload["rows"] if row[0].startswith("decode, batch 1"))
    assert row[2] == with_bound(
        format_value(decode["tflops"] * 1e12, "TFLOP/s"),
        format_value(decode["peak_tflops"] * 1e12, "TFLOP/s"),
    )
    assert row[2].endswith("(bound 3.35 TFLOP/s)")


def test_the_serving_timeline_and_memory_charts_state_their_times_with_bounds() -> None:
    """The serving widget's other charts: every time their caption and table state has its bound beside it."""
    result = ask("serving-simulator", {"charts": "timeline,memory"})
    params = {param.name: result["state"][param.name] for param in SIMULATION_PARAMS}
    with using(SPEC_PEAK):
        peak = simulation("serving-timeline", params)
    median = plain(result["shown"]["tpot_p50_s"])  # the widget's own figure, the same run's
    assert f"median time per output token was {median}." in result["charts"]["timeline"]["caption"]
    first = result["charts"]["timeline"]["rows"][0]
    ttft = result["values"]["ttft_p50_s"]
    assert first[4].endswith(f"(bound {format_value(peak.requests[0]['ttft_s'], 'ms')})")
    memory = dict(result["charts"]["memory"]["rows"])
    assert memory["Median time to first token"] == with_bound(
        format_value(ttft, "ms"), format_value(peak.summary["ttft_s"]["p50"], "ms")
    )


def test_the_python_behind_each_widget_prints_its_bounds_too() -> None:
    """The code a reader edits and runs (in the page's setting, as the worker runs it) prints the bounds the
    widget shows; the KV-cache widget's "weights only" step leaves the cache reads out there as it does."""
    for widget, printed in (
        ("prefill-decode", ("bound: prefill {prefill_time_s} ms, decode step {decode_step_time_s} ms",)),
        ("kv-cache", ("bound: {decode_step_weights_only_s} ms weights only, {decode_step_with_kv_s} ms",)),
    ):
        result = ask(widget)
        ran = json.loads(handle(json.dumps({"run": result["python"]})))["result"]
        assert ran["ok"], ran["error"]
        in_ms = {key: f"{value * 1e3:.2f}" for key, value in result["bounds"].items()}
        for line in printed:
            assert line.format(**in_ms) in ran["output"], (widget, ran["output"])
    kv = ask("kv-cache")
    ran = json.loads(handle(json.dumps({"run": kv["python"]})))["result"]
    weights, reading = (
        kv["values"][key] * 1e3 for key in ("decode_step_weights_only_s", "decode_step_with_kv_s")
    )
    assert (
        f"decode step: {weights:.2f} ms weights only, {reading:.2f} ms reading the cache too" in ran["output"]
    )
