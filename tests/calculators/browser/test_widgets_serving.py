"""The serving simulator widget and its charts on CPython: the same run as the simulator, bad input named by
its control, the controls a lesson picks, and charts whose rows add up (the memory map fills the pool)."""

from __future__ import annotations

import html as html_module
import itertools
import json
import math
import re
import shutil
import subprocess
from typing import Any

import pytest

from calculators import Scenario, make_setup
from calculators.browser import handle
from calculators.charts import chart_data
from calculators.setting import COURSE_SETTING, SPEC_PEAK, site_setting, using
from calculators.simulator import (
    SLO,
    Chats,
    ContinuousBatching,
    MemoryConfig,
    SharedPrefix,
    poisson_workload,
    simulate,
)
from calculators.units import format_duration
from course.widgets.extension import parse_block, render_widget
from tests.conftest import ROOT


def ask(state: dict[str, object]) -> dict[str, object]:
    return json.loads(handle(json.dumps({"widget": "serving-simulator", "state": state})))


def test_defaults_are_the_simulators_own_run() -> None:
    result = ask({})["result"]
    # 100 requests at 10/s, 512-token prompts, 128-token answers, Llama-3.1 8B on an H100, KV reads counted,
    # in the page's model setting (the course's: calibrated), as the widget computes it.
    with using(site_setting()):
        direct = simulate(
            poisson_workload(10.0, 100, 512, 128, seed=0),
            make_setup("llama-3.1-8b", "h100-sxm", kv_traffic=True),
            ContinuousBatching(256, 8192),
            memory=MemoryConfig("paged", 16),
            slo=SLO(1.0, 0.05),
        ).summary
    values = result["values"]
    assert values["output_tokens_per_s"] == direct["output_tokens_per_s"]
    assert values["tpot_p50_s"] == direct["tpot_s"]["p50"]
    assert values["ttft_p99_s"] == direct["ttft_s"]["p99"]
    assert set(result["charts"]) == {"timeline", "latency"}


def test_the_python_behind_it_prints_the_same_figures() -> None:
    result = ask({"scheduler": "static", "batch_size": "8", "rate": "25"})["result"]
    ran = json.loads(handle(json.dumps({"run": result["python"]})))["result"]  # in the page's setting
    assert ran["ok"], ran["error"]
    assert f"{result['values']['output_tokens_per_s']:.0f} output tokens/s" in ran["output"]
    assert "StaticBatching(8)" in result["python"]


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"rate": "fast"}, "Arrival rate (requests per second): expected an arrival rate per second"),
        ({"rate": "0"}, "a number from 0.01 to 1,000, got 0"),
        ({"requests": "5000"}, "Requests: expected a number of requests, a whole number from 1 to 300"),
        ({"prompt": "2.5"}, "Prompt tokens (mean): expected a prompt length"),
        ({"scheduler": "fifo"}, "Scheduler: expected one of continuous, static, chunked, disaggregated"),
        ({"capacity_tokens": "100"}, "KV pool (tokens): request 0 can never be served"),
        ({"decode_gpus": "0"}, "Decode GPUs: expected a number of GPUs"),
        ({"charts": "timeline,pie"}, "charts: unknown pie"),
    ],
)
def test_bad_input_is_named_by_its_control(state: dict[str, str], message: str) -> None:
    answer = ask(state)
    assert answer["ok"] is False
    assert message in answer["error"]


def test_every_scheduler_runs_with_every_chart() -> None:
    for scheduler in ("continuous", "static", "chunked", "disaggregated"):
        state = {
            "scheduler": scheduler,
            "requests": "30",
            "charts": "timeline,memory,latency",
            "decode_gpus": "2",
        }
        answer = ask(state)
        assert answer["ok"], answer
        assert set(answer["result"]["charts"]) == {"timeline", "memory", "latency"}


def test_static_batching_waits_and_continuous_does_not() -> None:
    # The same 40 requests; static batches of 16 make early arrivals wait for company.
    data = chart_data("serving-latency", requests=40, rate=20, compare=["static", "continuous"])
    ttft = {(r["scheduler"], r["percentile"]): r["ms"] for r in data.datasets["percentiles"]
            if r["metric"] == "Time to first token"}  # fmt: skip
    assert ttft[("static batching", "p50")] > 10 * ttft[("continuous batching", "p50")]


def test_timeline_rows_follow_the_simulators_steps() -> None:
    data = chart_data("serving-timeline", requests=20, rate=50, rows=5, steps=50)
    result = simulate(
        poisson_workload(50.0, 20, 512, 128, seed=0),
        make_setup("llama-3.1-8b", "h100-sxm", kv_traffic=True),
        timeline_steps=50,
    )
    first = result.timeline[0]
    # The first step prefills the first request's whole prompt, so request 1's first span is a prefill of it.
    assert first["prefill"][0][:2] == [0, 512]
    span = next(s for s in data.datasets["spans"] if s["request"] == "request 1" and s["phase"] == "prefill")
    assert span["tokens"] == 512
    assert span["start_ms"] == pytest.approx(first["start_s"] * 1e3)
    decoding = sum(s["requests"] for s in data.datasets["steps"] if s["what"] == "decoding")
    assert decoding == sum(len(step["decode"]) for step in result.timeline[:50])


def test_memory_map_fills_the_pool_and_shows_contiguous_waste() -> None:
    common = {"requests": 60, "rate": 40, "output_spread": 64, "capacity_tokens": 12000}
    paged = chart_data("kv-memory", **common)
    contiguous = chart_data("kv-memory", memory="contiguous", **common)
    for data in (paged, contiguous):
        parts = data.datasets["map"]
        assert parts[0]["start"] == 0
        assert parts[-1]["part"] == "free"
        assert parts[-1]["end"] == 12000
        assert all(a["end"] == b["start"] for a, b in itertools.pairwise(parts))

    def empty(data: object) -> int:
        return sum(p["end"] - p["start"] for p in data.datasets["map"] if p["part"] == "reserved, empty")

    # Paged: at most one partly filled 16-token block per request; contiguous: whole unused slabs.
    running = sum(1 for p in paged.datasets["map"] if p["part"] == "filled")
    assert empty(paged) < 16 * running
    assert empty(contiguous) > 10 * empty(paged)


def test_running_out_of_blocks_preempts() -> None:
    crowded = ask({"capacity_tokens": "12000", "rate": "60", "requests": "80", "output": "400"})["result"]
    roomy = ask({"rate": "60", "requests": "80", "output": "400"})["result"]
    assert crowded["values"]["preemptions"] > 0
    assert roomy["values"]["preemptions"] == 0
    assert crowded["values"]["ttft_p99_s"] > roomy["values"]["ttft_p99_s"]


def test_batch_tradeoff_is_the_cost_models_decode_step() -> None:
    data = chart_data("batch-tradeoff", context=2000, max_batch=64)
    by = {(r["series"], r["batch"]): r for r in data.datasets["points"]}
    plain = Scenario("llama-3.1-8b", ignore_memory=True).decode(64, 2000)
    kv = Scenario("llama-3.1-8b", kv_traffic=True, ignore_memory=True).decode(64, 2000)
    assert by[("weights only", 64)]["tpot_ms"] == pytest.approx(plain.time_s * 1e3)
    assert by[("with the KV cache of 2,000 tokens", 64)]["tokens_per_s"] == pytest.approx(64 / kv.time_s)


@pytest.mark.parametrize("setting", [COURSE_SETTING, SPEC_PEAK], ids=["calibrated", "spec-peak"])
def test_batch_tradeoffs_weights_only_curve_reads_no_cache_under_the_course_settings(setting: Any) -> None:
    """The site draws its charts under a setting that counts the cache's reads; the weights-only curve must
    still leave them out (it was drawn identical to the other curve, on top of it, in the Batching lesson)."""
    with using(setting):
        data = chart_data("batch-tradeoff", context=2000, max_batch=64)
        plain = Scenario("llama-3.1-8b", kv_traffic=False, ignore_memory=True).decode(64, 2000)
    by = {(r["series"], r["batch"]): r for r in data.datasets["points"]}
    weights_only, with_kv = by[("weights only", 64)], by[("with the KV cache of 2,000 tokens", 64)]
    assert weights_only["tpot_ms"] == pytest.approx(plain.time_s * 1e3)
    assert weights_only["tpot_ms"] < 0.75 * with_kv["tpot_ms"]
    if setting is SPEC_PEAK:
        # Memory-bound at spec peaks, weights only: 16.06e9 bytes / 3.35e12 B/s = 4.79 ms, at any batch up to
        # the ridge; reading 64 caches of 2,000 tokens (64 x 2,000 x 131,072 B = 16.78 GB) too doubles it.
        assert weights_only["tpot_ms"] == pytest.approx(4.79, rel=0.01)
        assert with_kv["tpot_ms"] == pytest.approx((16.06e9 + 16.78e9) / 3.35e12 * 1e3, rel=0.01)


def test_compute_bound_batch_with_and_without_the_kv_cache() -> None:
    # Weights only, an H100 in BF16 turns compute-bound at its ridge point, 989.4e12 / 3.35e12 = 295.3.
    assert Scenario("llama-3.1-8b").compute_bound_batch(2000) == math.ceil(
        Scenario().ridge_point_flop_per_byte
    )
    kv = Scenario("llama-3.1-8b", kv_traffic=True)
    # A step is compute-bound only when its whole compute time exceeds its whole memory time (issue 25,
    # part 6): b (2N + 4 L d c) / pi > (W + b k (c + 1)) / beta, so b > W / ((2N + 4 L d c) / R - k (c + 1))
    # = 16.06e9 / ((16.06e9 + 4 x 32 x 4096 x 100) / 295.34 - 131,072 x 101) = 16.06e9 / 41.32e6 = 388.7.
    assert kv.compute_bound_batch(100) == 389  # a short context already moves it by a third
    assert kv.compute_bound_batch(2000) == 0  # never: the cache reads outweigh the weights' maths
    # Beyond about 2N / (k x ridge) = 16.06e9 / (131,072 x 295.3) = 415 tokens no batch is compute-bound.
    assert kv.longest_compute_bound_context() == pytest.approx(415, abs=5)
    assert kv.compute_bound_batch(kv.longest_compute_bound_context()) > 0
    assert kv.compute_bound_batch(kv.longest_compute_bound_context() + 1) == 0


def test_block_picks_controls_and_keeps_the_rest_hidden() -> None:
    name, defaults = parse_block(
        "name: serving-simulator\ncontrols: [memory, block_tokens]\ncharts: [memory]"
    )
    html = render_widget(name, defaults)
    assert '<label for="widget-serving-simulator-memory">' in html
    assert '<label for="widget-serving-simulator-block_tokens">' in html
    assert '<label for="widget-serving-simulator-rate">' not in html
    assert '<input type="hidden" name="rate" value="10">' in html
    assert html.count('data-widget-chart="memory"') == 1
    assert html.count("<svg") == 2  # the memory chart only: its narrow drawing and the wide one's frame
    assert html.count('<svg class="rp-chart__frame"') == 1


WIDGETS_JS = ROOT / "overrides/assets/ridgepoint/widgets.js"


def _url_text(value: object) -> str:
    """widgets.js's urlText: how the page writes a default it compares an input with (checked against the
    JavaScript itself in the test below)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # JSON.parse reads 10.0 as the number 10, and String(10) is "10"
    return str(value)


def test_inputs_left_alone_match_their_defaults_so_the_address_keeps_only_changes() -> None:
    # After Start the page writes to the address every input whose text differs from its default
    # (writeURLState). Inputs the reader never touched, hidden ones included, must not differ: rate 10.0 was
    # "10.0" against "10", an empty pool size "" against null, so every link carried them.
    name, defaults = parse_block("name: serving-simulator\ncontrols: [scheduler, rate, capacity_tokens]")
    page = render_widget(name, defaults)
    data_defaults = json.loads(html_module.unescape(re.search(r'data-defaults="([^"]*)"', page).group(1)))
    fields = dict(re.findall(r'<input type="(?:hidden|text)"[^>]*?name="([^"]+)" value="([^"]*)"', page))
    assert {"rate", "capacity_tokens", "slo_ttft_ms", "slo_tpot_ms", "max_sequence_tokens"} <= set(fields)
    unchanged = {key: html_module.unescape(text) for key, text in fields.items()}
    written = {key: text for key, text in unchanged.items() if text != _url_text(data_defaults[key])}
    assert written == {}
    assert (unchanged["rate"], unchanged["capacity_tokens"], unchanged["slo_ttft_ms"]) == ("10", "", "1000")
    # The mirror is widgets.js's own urlText, run by Node on the defaults as the page parses them.
    if shutil.which("node") is None:
        pytest.skip("node is not installed: urlText itself not run")
    source = re.search(r"function urlText\(value\) \{.*?\n  \}", WIDGETS_JS.read_text(), re.DOTALL)
    assert source is not None
    script = f"{source.group(0)}\nconst d = JSON.parse(process.argv[1]);\n"
    script += "const texts = Object.entries(d).map(([k, v]) => [k, urlText(v)]);\n"
    script += "console.log(JSON.stringify(Object.fromEntries(texts)));"
    ran = subprocess.run(
        ["node", "-e", script, json.dumps(data_defaults)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(ran.stdout) == {key: _url_text(value) for key, value in data_defaults.items()}


def test_chunking_shortens_the_longest_gap_the_widget_reports() -> None:
    # The chunked-prefill lesson's controls: long prompts among decoding requests, prefill first or chunked.
    state = {"requests": "40", "rate": "20", "prompt": "4000", "output": "200", "kv_traffic": "false"}
    first = ask({**state, "scheduler": "continuous"})["result"]
    chunked = ask({**state, "scheduler": "chunked", "token_budget": "512"})["result"]
    assert chunked["values"]["longest_stall_s"] < first["values"]["longest_stall_s"]
    stall = chunked["shown"]["longest_stall_s"].replace("\u00a0", " ")  # no-break spaces: wraps at " ("
    assert stall.startswith(format_duration(chunked["values"]["longest_stall_s"]))
    assert stall.endswith(" ms)")  # in ms, its spec-peak bound beside it


def test_colocated_replicas_give_a_split_and_a_colocated_engine_the_same_gpus() -> None:
    # The disaggregation lesson: two prefill GPUs and one decode GPU against three chunked replicas.
    state = {
        "requests": "60",
        "rate": "30",
        "scheduler": "disaggregated",
        "prefill_gpus": "2",
        "decode_gpus": "1",
        "replicas": "3",
        "compare": ["chunked", "disaggregated"],
        "charts": ["latency"],
    }
    result = ask(state)["result"]
    rows = result["charts"]["latency"]["rows"]
    assert [row[0] for row in rows] == ["chunked prefill", "disaggregated prefill and decode"]
    one = ask({**state, "replicas": "1"})["result"]["charts"]["latency"]["rows"]
    assert rows[0] != one[0]  # three replicas share the load that one GPU took alone
    assert rows[1] == one[1]  # the split ignores the colocated replica count
    assert "replicas=1" in ask({**state, "compare": []})["result"]["python"]


def test_controls_come_in_the_blocks_order() -> None:
    html = render_widget("serving-simulator", {"controls": ["rate", "memory", "scheduler"], "charts": []})
    positions = [html.index(f'<label for="widget-serving-simulator-{name}">') for name in ("rate", "memory")]
    assert positions == sorted(positions)
    assert html.index('for="widget-serving-simulator-memory"') < html.index(
        'for="widget-serving-simulator-scheduler"'
    )


def test_served_figures_are_the_widgets_run() -> None:
    from calculators.simulator.named import served

    state = {"scheduler": "chunked", "token_budget": "256", "requests": "50", "rate": "30"}
    values = ask(state)["result"]["values"]
    with using(site_setting()):  # a lesson's figure and the widget are computed in the same setting
        figures = served(scheduler="chunked", token_budget=256, requests=50, rate=30.0)
    assert figures.output_tokens_per_s == values["output_tokens_per_s"]
    assert figures.tpot_s.p99 == values["tpot_p99_s"]
    assert figures.preemptions == values["preemptions"]


# --- prefix caching: a switch and a shared system prompt ------------------------------------------------


def test_the_widgets_prefix_caching_run_is_the_simulators_and_its_python_prints_the_same() -> None:
    state = {"prefix_caching": "on", "shared_prefix": "1024", "requests": "30"}
    result = ask(state)["result"]
    with using(site_setting()):
        direct = simulate(
            poisson_workload(10.0, 30, 512, 128, seed=0, shared_prefix=SharedPrefix(1024)),
            make_setup("llama-3.1-8b", "h100-sxm", kv_traffic=True),
            ContinuousBatching(256, 8192),
            memory=MemoryConfig("paged", 16),
            slo=SLO(1.0, 0.05),
            prefix_caching=True,
        ).summary
    values = result["values"]
    assert values["ttft_p50_s"] == direct["ttft_s"]["p50"]
    assert values["output_tokens_per_s"] == direct["output_tokens_per_s"]
    assert values["prefix_hit_rate"] == direct["prefix_cache"]["hit_rate"]
    # 1,024 of each 1,536-token prompt is the system prompt: all but the first request's are found cached,
    # in whole 16-token blocks, so the hit rate is a little under 1024 / 1536 = 2/3.
    assert 0.6 < values["prefix_hit_rate"] < 2 / 3
    uncached = ask({**state, "prefix_caching": "off"})["result"]["values"]
    # A cached prompt computes 512 of its 1,536 tokens: a third of the work, plus what a step costs whatever
    # its length (the weights' read), so its first token comes in about half the time.
    assert values["ttft_p50_s"] < 0.6 * uncached["ttft_p50_s"]
    assert uncached["prefix_hit_rate"] == 0.0
    assert "of prompt tokens found in the prefix cache" in result["summary"]
    assert "shared_prefix=SharedPrefix(1024)" in result["python"]
    assert "prefix_caching=True" in result["python"]
    ran = json.loads(handle(json.dumps({"run": result["python"]})))["result"]
    assert ran["ok"], ran["error"]
    assert f"{values['output_tokens_per_s']:.0f} output tokens/s" in ran["output"]


def test_served_figures_are_the_widgets_prefix_caching_run() -> None:
    from calculators.simulator.named import served

    state = {"prefix_caching": "1", "shared_prefix": "2048", "requests": "40", "rate": "6"}
    values = ask(state)["result"]["values"]
    with using(site_setting()):
        figures = served(shared_prefix=2048, prefix_caching=True, requests=40, rate=6.0)
    assert figures.prefix_hit_rate == values["prefix_hit_rate"] > 0
    assert figures.ttft_s.p99 == values["ttft_p99_s"]


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"prefix_caching": "on", "memory": "contiguous"}, "Prefix caching: prefix caching needs paged"),
        ({"prefix_caching": "on", "scheduler": "disaggregated"}, "Prefix caching: prefix caching needs"),
        ({"shared_prefix": "-5"}, "Shared system prompt (tokens): expected"),
        ({"shared_prefix": "2.5"}, "Shared system prompt (tokens): expected"),
    ],
)
def test_the_widgets_bad_prefix_caching_is_named_by_its_control(state: dict[str, str], message: str) -> None:
    answer = ask({**state, "requests": "5"})
    assert answer["ok"] is False
    assert message in answer["error"]


def test_a_block_shows_the_prefix_caching_switch_and_the_system_prompt() -> None:
    name, defaults = parse_block(
        "name: serving-simulator\nshared_prefix: 2048\ncontrols: [prefix_caching, rate]\ncharts: [latency]"
    )
    html = render_widget(name, defaults)
    assert 'role="switch" id="widget-serving-simulator-prefix_caching" name="prefix_caching">' in html
    assert '<input type="hidden" name="shared_prefix" value="2048">' in html


# --- conversations, the prefix share and pipeline stages --------------------------------------------------


def test_the_widgets_chats_and_prefix_share_are_the_simulators_run_and_its_python_prints_the_same() -> None:
    state = {
        "turns": "4",
        "think_s": "2",
        "shared_prefix": "512",
        "prefix_share": "0.5",
        "prefixes": "3",
        "prefix_caching": "on",
        "requests": "40",
    }
    result = ask(state)["result"]
    with using(site_setting()):
        direct = simulate(
            poisson_workload(
                10.0, 40, 512, 128, seed=0, shared_prefix=SharedPrefix(512, 0.5, 3), chats=Chats(4, 2.0)
            ),
            make_setup("llama-3.1-8b", "h100-sxm", kv_traffic=True),
            ContinuousBatching(256, 8192),
            memory=MemoryConfig("paged", 16),
            slo=SLO(1.0, 0.05),
            prefix_caching=True,
        ).summary
    values = result["values"]
    assert values["ttft_p99_s"] == direct["ttft_s"]["p99"]
    assert values["prefix_hit_rate"] == direct["prefix_cache"]["hit_rate"]
    assert "shared_prefix=SharedPrefix(512, 0.5, 3), chats=Chats(4, 2.0)" in result["python"]
    assert "in conversations of 4 turns 2 s apart" in result["charts"]["latency"]["caption"]
    ran = json.loads(handle(json.dumps({"run": result["python"]})))["result"]
    assert ran["ok"], ran["error"]
    assert f"{values['output_tokens_per_s']:.0f} output tokens/s" in ran["output"]


def test_turns_and_the_prefix_share_change_what_the_cache_finds() -> None:
    # Without a system prompt or chats, no prompt starts like another: nothing is found. Chats of 4 turns
    # carry each turn's prompt and answer into the next, so later turns find their history cached.
    base = {"prefix_caching": "on", "requests": "40", "think_s": "2"}
    alone = ask(base)["result"]["values"]["prefix_hit_rate"]
    chats = ask({**base, "turns": "4"})["result"]["values"]["prefix_hit_rate"]
    assert alone == 0.0 < chats
    # Half the requests with the system prompt find about half as much as all of them (the share is drawn
    # per request, so not exactly half).
    full = ask({**base, "shared_prefix": "2048"})["result"]["values"]["prefix_hit_rate"]
    half = ask({**base, "shared_prefix": "2048", "prefix_share": "0.5"})["result"]["values"][
        "prefix_hit_rate"
    ]
    assert 0.3 * full < half < 0.8 * full
    # Forty distinct system prompts leave most requests the first with theirs: fewer hits than one prompt.
    many = ask({**base, "shared_prefix": "2048", "prefixes": "40"})["result"]["values"]["prefix_hit_rate"]
    assert many < full


def test_served_figures_are_the_widgets_pipeline_run() -> None:
    from calculators.simulator.named import served

    state = {"pipeline_stages": "2", "micro_batches": "4", "requests": "30", "rate": "20"}
    result = ask(state)["result"]
    with using(site_setting()):
        figures = served(pipeline_stages=2, micro_batches=4, requests=30, rate=20.0)
        plain = served(requests=30, rate=20.0)
    assert figures.tpot_s.p50 == result["values"]["tpot_p50_s"] != plain.tpot_s.p50
    assert figures.kv_capacity_tokens == result["values"]["kv_capacity_tokens"] > plain.kv_capacity_tokens
    assert "pipeline_stages=2" in result["python"]
    assert "micro_batches=4" in result["python"]
    assert "2 NVIDIA H100 SXM5 80GB GPUs a replica, as pipeline stages" in result["summary"]
    ran = json.loads(handle(json.dumps({"run": result["python"]})))["result"]
    assert ran["ok"], ran["error"]
    assert f"{result['values']['output_tokens_per_s']:.0f} output tokens/s" in ran["output"]


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"turns": "0"}, "Turns per conversation: expected a number of turns, a whole number from 1 to 10"),
        ({"turns": "11"}, "Turns per conversation: expected a number of turns"),
        ({"turns": "3", "burst": "on"}, "Turns per conversation: conversations need arrivals over time"),
        ({"think_s": "-1"}, "Time between a conversation's turns (s): expected a time in seconds"),
        ({"think_s": "4000"}, "a number from 0 to 3,600"),
        ({"prefix_share": "0"}, "Share of requests with a system prompt: expected a share of the requests"),
        ({"prefix_share": "1.5"}, "Share of requests with a system prompt: expected"),
        ({"prefixes": "0"}, "Distinct system prompts: expected a number of system prompts"),
        ({"prefixes": "301"}, "Distinct system prompts: expected"),
        (
            {"pipeline_stages": "0"},
            "Pipeline stages (GPUs per replica): expected a number of pipeline stages",
        ),
        ({"pipeline_stages": "17"}, "a whole number from 1 to 16"),
        ({"micro_batches": "2"}, "Micro-batches per step: micro-batches follow one another through pipeline"),
        (
            {"micro_batches": "2", "pipeline_stages": "2", "speculative": "on"},
            "Micro-batches per step: micro-batches with speculative decoding are not simulated",
        ),
        ({"micro_batches": "65", "pipeline_stages": "2"}, "Micro-batches per step: expected"),
        (
            {"scheduler": "disaggregated", "pipeline_stages": "2"},
            "Prefill GPUs: a pool of 1 GPU does not split into replicas of 2 pipeline stages",
        ),
        (
            {"scheduler": "disaggregated", "pipeline_stages": "2", "prefill_gpus": "2", "decode_gpus": "3"},
            "Decode GPUs: a pool of 3 GPUs does not split into replicas of 2 pipeline stages",
        ),
    ],
)
def test_the_widgets_bad_chats_prefixes_and_stages_are_named_by_their_control(
    state: dict[str, str], message: str
) -> None:
    answer = ask({**state, "requests": "5"})
    assert answer["ok"] is False
    assert message in answer["error"]


def test_a_block_shows_the_conversation_and_prefix_share_controls_with_their_hints() -> None:
    name, defaults = parse_block(
        "name: serving-simulator\nshared_prefix: 1024\nprefix_caching: true\n"
        "controls: [turns, think_s, prefix_share, prefixes, pipeline_stages]\ncharts: [latency]"
    )
    html = render_widget(name, defaults)
    for control in ("turns", "think_s", "prefix_share", "prefixes", "pipeline_stages"):
        assert f'<label for="widget-serving-simulator-{control}">' in html
    assert "1 to 10, 1: no conversations" in html
    assert '<input type="hidden" name="micro_batches" value="1">' in html
