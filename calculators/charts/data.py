"""What each chart shows, as plain rows computed by the calculators: no plotting library here.

Every number on a chart comes from a calculator call (a :class:`~calculators.Scenario`, ``ridge_point``,
``attainable_flops_per_s``); this module only chooses which calls to make and scales results to display units.
It uses the standard library only, so the browser glue can compute the very same rows under Pyodide and push
them into a live Vega view (``view.data(name, rows)``): each chart's ``datasets`` are named for that purpose.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from calculators.charts import (
    achieved,
    attention,
    experts,
    flops,
    formats,
    hierarchy,
    matmul,
    parallel,
    prefix,
    quantization,
    serving,
    speculative,
)
from calculators.charts.content import ChartData, Row, _computed, _in, _tokens, short_gpu_name
from calculators.charts.palette import ATTENTION_COLOURS, SCHEDULER_COLOURS, gpu_colour
from calculators.charts.params import (
    ChartError,
    Param,
    read_all_or_gpus,
    read_any_output_tokens,
    read_batch,
    read_batches,
    read_bool,
    read_choice,
    read_gpu,
    read_gpu_count,
    read_gpus,
    read_level,
    read_link,
    read_model,
    read_optional_intensity,
    read_optional_tokens,
    read_output_tokens,
    read_params,
    read_precision,
    read_precisions,
    read_rates,
    read_seconds,
    read_tensor_parallel,
    read_tokens,
)
from calculators.hardware import GPUS
from calculators.models import MODELS
from calculators.precision import PRECISIONS
from calculators.roofline import attainable_flops_per_s, ridge_point, roofline_time
from calculators.scenario import Scenario
from calculators.setting import at_spec_peak
from calculators.simulator.experiments import SCHEDULERS, prefill_stall
from calculators.simulator.named import Served, served
from calculators.units import UNITS, format_value, with_bound


def _decade_below(value: float) -> float:
    return 10.0 ** math.floor(math.log10(value / 2))


def _decade_above(value: float) -> float:
    return 10.0 ** math.ceil(math.log10(value * 2))


def _check_precision(chart: str, gpus: tuple[str, ...], precision: str, parameter: str = "precision") -> None:
    lacking = [key for key in gpus if precision not in GPUS[key].dense_flops_per_s]
    if lacking:
        raise ChartError(
            chart,
            parameter,
            f"{', '.join(lacking)} {'has' if len(lacking) == 1 else 'have'} no {precision} tensor-core peak",
            f"use `precision: bf16`, or remove {', '.join(lacking)} from the GPUs",
        )


def _scenario(chart: str, model: str, gpu: str, precision: str, level: str, p: dict[str, Any]) -> Scenario:
    """The chart's scenario; ``p`` carries the optional ``kv_traffic`` and ``memory`` parameters."""
    try:
        return Scenario(
            model,
            gpu,
            precision=precision,
            level=level,
            kv_traffic=p.get("kv_traffic", False),
            ignore_memory=p.get("memory", "check") == "ignore",
        )
    except ValueError as error:
        raise ChartError(chart, "precision", str(error), "use `precision: bf16`") from None


# What every chart of passes may add to its scenario: KV-cache traffic at the simple level, and a what-if
# mode that computes setups too big for the GPU's memory (the result then says it ignored memory).
PASS_OPTION_PARAMS = (
    Param(
        "kv_traffic",
        False,
        read_bool,
        "kv_traffic: true",
        "add attention over the KV cache to the simple level (never lowers a time)",
    ),
    Param(
        "memory",
        "check",
        read_choice(("check", "ignore")),
        "memory: ignore",
        "check that weights and KV cache fit (check), or compute anyway (ignore: a what-if)",
    ),
)


# ----------------------------------------------------------------------------------------------- roofline

ROOFLINE_PARAMS = (
    Param(
        "gpus", ("h100-sxm",), read_gpus, "gpus: [h100-sxm, h200]", "GPU presets whose rooflines are drawn"
    ),
    Param("precision", "bf16", read_precision, "precision: bf16", "number format: sets peak FLOP/s"),
    Param("model", "dense-8b", read_model, "model: dense-8b", "model whose passes are placed"),
    Param("level", "simple", read_level, "level: simple", "simple (the lesson's) or refined counting"),
    *PASS_OPTION_PARAMS,
    Param("prompt", 2000, read_optional_tokens, "prompt: 2000", "prefill of this many tokens (null: none)"),
    Param("batches", (1,), read_batches, "batches: [1, 64]", "decode steps at these batch sizes ([]: none)"),
    Param(
        "intensity",
        None,
        read_optional_intensity,
        "intensity: 100",
        "an operation of this many FLOP/byte, placed on every GPU's roofline (null: none)",
    ),
    Param(
        "span",
        "data",
        read_choice(("data", "all")),
        "span: all",
        "axes fitted to this chart (data) or fixed to fit every GPU preset and precision (all), so a live "
        "widget can replace the rows without the axes going stale",
    ),
)
# With ``span: all`` the axes run over these intensities (FLOP/byte): every ridge point, decode up to the
# largest batch and prefill up to about half a million tokens fit, so a widget's points stay on the chart.
FULL_SPAN = (0.01, 1e6)


@cache
def _frame_corners(low: float, high: float) -> tuple[tuple[tuple[str, float], ...], ...]:
    """The corners the axes of ``span: all`` must reach: the lowest roof of any preset GPU and precision at
    ``low``, the highest peak at ``high``. The presets are read-only, so each span is computed once (it was
    about a quarter of a widget roofline's time, per slider move, for the same two corners)."""
    every = [(key, name) for key in GPUS for name in GPUS[key].dense_flops_per_s]
    return (
        (("intensity", low), ("tflops", min(_in("TFLOP/s", attainable_flops_per_s(low, *k)) for k in every))),
        (("intensity", high), ("tflops", max(_in("TFLOP/s", GPUS[k].peak_flops_per_s(n)) for k, n in every))),
    )


def roofline(**given: Any) -> ChartData:
    """Rooflines of ``gpus`` (attainable FLOP/s against intensity), ridge points marked, passes placed.

    The prefill and decode points are passes of ``model`` on the first GPU listed, at their own intensity
    (about P FLOP/byte for a P-token prefill, about B for a decode step at batch B) and achieved FLOP/s.
    """
    p = read_params("roofline", ROOFLINE_PARAMS, given)
    gpus, precision = p["gpus"], p["precision"]
    _check_precision("roofline", gpus, precision)

    def make_scenario() -> Scenario:
        return _scenario("roofline", p["model"], gpus[0], precision, p["level"], p)

    scenario = make_scenario()
    # The passes at spec peaks too, where the setting is not already there: each sits on its roof, the bound
    # the table and tooltip print beside the FLOP/s the pass reaches.
    at_peaks = at_spec_peak(make_scenario) or scenario
    fix_fit = "use a shorter prompt, a smaller batch or a smaller model"

    operations: list[Row] = []
    passes = []
    if p["prompt"] is not None:
        passes.append(
            (
                "prefill",
                _computed("roofline", "prompt", fix_fit, lambda: scenario.prefill(p["prompt"])),
                at_peaks.prefill(p["prompt"]) if at_peaks is not scenario else None,
            )
        )
    for batch in p["batches"]:
        passes.append(
            (
                "decode",
                _computed("roofline", "batches", fix_fit, partial(scenario.decode, batch)),
                at_peaks.decode(batch) if at_peaks is not scenario else None,
            )
        )
    for phase, result, at_peak in passes:
        if phase == "prefill":
            label = f"prefill, {_tokens(result.tokens_processed)}"
        else:
            label = f"decode, batch {result.tokens_processed}"
        bound = at_peak or result
        operations.append(
            {
                "label": label,
                "phase": phase,
                "gpu": short_gpu_name(gpus[0]),
                "intensity": result.intensity_flop_per_byte,
                "tflops": _in("TFLOP/s", result.flops / result.time_s),
                "time_ms": _in("ms", result.time_s),
                "bound": result.bound_label,
                "peak_tflops": _in("TFLOP/s", bound.flops / bound.time_s),
                "peak_time_ms": _in("ms", bound.time_s),
            }
        )

    if p["intensity"] is not None:
        for key in gpus:
            # An operation of intensity I: I FLOPs per byte moved, timed on the roofline like any pass.
            timed = roofline_time(p["intensity"], 1.0, key, precision)
            operations.append(
                {
                    "label": f"{short_gpu_name(key)}: {timed.bound}-bound",
                    "phase": "operation",
                    "gpu": short_gpu_name(key),
                    "intensity": p["intensity"],
                    "tflops": _in("TFLOP/s", timed.flops / timed.time_s),
                    "bound": f"{timed.bound}-bound",
                }
            )

    ridges = {key: ridge_point(key, precision) for key in gpus}
    intensities = [*ridges.values(), *(row["intensity"] for row in operations)]
    low, high = _decade_below(min(intensities)), _decade_above(max(intensities))
    frame: list[Row] = []
    if p["span"] == "all":
        low, high = min(low, FULL_SPAN[0]), max(high, FULL_SPAN[1])
        frame = [dict(corner) for corner in _frame_corners(low, high)]
    lines: list[Row] = []
    ridge_rows: list[Row] = []
    for key in gpus:
        name = short_gpu_name(key)
        series = f"{name}, ridge {ridges[key]:,.0f}"
        for intensity in (low, ridges[key], high):
            tflops = _in("TFLOP/s", attainable_flops_per_s(intensity, key, precision))
            lines.append(
                {
                    "gpu": name,
                    "series": series,
                    "colour": gpu_colour(key),
                    "intensity": intensity,
                    "tflops": tflops,
                }
            )
        peak = _in("TFLOP/s", GPUS[key].peak_flops_per_s(precision))
        ridge_rows.append(
            {
                "gpu": name,
                "series": series,
                "colour": gpu_colour(key),
                "intensity": ridges[key],
                "tflops": peak,
                "label": f"ridge {ridges[key]:,.0f}",
            }
        )

    table = [
        (
            f"{row['gpu']} ridge point",
            format_value(row["intensity"], "FLOP/byte"),
            format_value(row["tflops"] * UNITS["TFLOP/s"].scale, "TFLOP/s"),
            "(peak)",
        )
        for row in ridge_rows
    ]
    scale = UNITS["TFLOP/s"].scale

    def reached(row: Row) -> str:  # a pass's FLOP/s with its spec-peak bound beside it, as the lessons print
        bound = format_value(row["peak_tflops"] * scale, "TFLOP/s") if "peak_tflops" in row else None
        return with_bound(format_value(row["tflops"] * scale, "TFLOP/s"), bound)

    table += [
        (
            row["label"] if row["phase"] == "operation" else f"{row['label']} ({row['gpu']})",
            format_value(row["intensity"], "FLOP/byte"),
            reached(row),
            row["bound"],
        )
        for row in operations
    ]
    names = ", ".join(short_gpu_name(key) for key in gpus)
    placed = " and ".join(row["label"] for row in operations if row["phase"] != "operation")
    caption = f"Roofline of the {names} in {precision.upper()}" + (
        f", with {MODELS[p['model']].name}: {placed}." if placed else "."
    )
    if p["intensity"] is not None:
        caption += (
            f" An operation of {format_value(p['intensity'], 'FLOP/byte')} is placed on each: "
            + "; ".join(row["label"] for row in operations if row["phase"] == "operation")
            + "."
        )
    datasets = {"rooflines": lines, "ridges": ridge_rows, "operations": operations}
    if frame:
        datasets["frame"] = frame  # not drawn: the corners the axes must reach (span: all)
    return ChartData(
        "roofline",
        p,
        datasets,
        ("What", "Arithmetic intensity", "FLOP/s reached", "Bound"),
        tuple(table),
        caption,
    )


# -------------------------------------------------------------------------------------- prefill vs decode


def _attention_takes_over(scenario: Scenario, longest: int) -> int | None:
    """The shortest prompt whose prefill spends more FLOPs on attention than on the weights (None: beyond
    ``longest``). Attention grows with the square of the prompt, the weights' share linearly, so one bisection
    over the calculators' own counts finds it."""

    def attention_wins(tokens: int) -> bool:
        result = scenario.prefill(tokens)
        return result.attention_flops > result.matmul_flops

    if not attention_wins(longest):
        return None
    low, high = 1, longest
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if attention_wins(middle) else (middle, high)
    return high


# The scenario a chart of one model on one GPU is drawn for; the lesson's by default.
SCENARIO_PARAMS = (
    Param("model", "dense-8b", read_model, "model: dense-8b", "model served"),
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset"),
    Param("precision", "bf16", read_precision, "precision: bf16", "number format"),
    Param("level", "simple", read_level, "level: simple", "simple (the lesson's) or refined counting"),
    *PASS_OPTION_PARAMS,
)


PREFILL_VS_DECODE_PARAMS = (
    *SCENARIO_PARAMS,
    Param("prompt", 2000, read_tokens, "prompt: 2000", "prompt length marked on the curve"),
    Param("max_prompt", 100_000, read_tokens, "max_prompt: 100000", "longest prompt on the x axis"),
)

CURVE_POINTS_PER_DECADE = 6  # the curve is two straight pieces in log-log; its kink is sampled exactly
TABLE_PROMPTS = (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000)


def _log_spaced_tokens(high: int, *exact: int) -> list[int]:
    steps = max(1, round(math.log10(high) * CURVE_POINTS_PER_DECADE))
    spaced = {max(1, round(10 ** (math.log10(high) * i / steps))) for i in range(steps + 1)}
    return sorted(spaced | {t for t in exact if 1 <= t <= high})


def prefill_vs_decode(**given: Any) -> ChartData:
    """Time of a P-token prefill measured in decode steps, for P from 1 to ``max_prompt`` (log axes).

    Below the break-even (the ridge point: about 295 tokens on an H100 in BF16) prefill is memory-bound and
    costs one decode step whatever P is; above it, cost grows with P.
    ``prompt`` (2,000: "seven steps") is marked.
    """
    p = read_params("prefill-vs-decode", PREFILL_VS_DECODE_PARAMS, given)
    chart = "prefill-vs-decode"
    if p["prompt"] > p["max_prompt"]:
        raise ChartError(
            chart,
            "prompt",
            f"{p['prompt']:,} is beyond max_prompt {p['max_prompt']:,}",
            f"use `max_prompt: {10 ** math.ceil(math.log10(p['prompt'] + 1)):d}`",
        )
    _check_precision(chart, (p["gpu"],), p["precision"])
    scenario = _scenario(chart, p["model"], p["gpu"], p["precision"], p["level"], p)
    fix = "use a smaller max_prompt or a GPU with more memory"

    def point(tokens: int) -> Row:
        timing = _computed(chart, "max_prompt", fix, lambda: scenario.request(tokens))
        return {
            "prompt_tokens": tokens,
            "decode_steps": timing.prefill_cost_in_decode_steps,
            "prefill_ms": _in("ms", timing.prefill.time_s),
            "decode_step_ms": _in("ms", timing.first_decode.time_s),
            "bound": timing.prefill.bound_label,
        }

    break_even = scenario.prompt_tokens_per_decode_step()
    kink = (math.floor(break_even), math.ceil(break_even), p["prompt"])
    crossing = _attention_takes_over(scenario, p["max_prompt"]) if p["kv_traffic"] else None
    extra = (crossing,) if crossing else ()
    curve = [point(tokens) for tokens in _log_spaced_tokens(p["max_prompt"], *kink, *extra)]
    if p["kv_traffic"]:
        # The same prompts with the matrix products alone, so the reader sees where attention bends the line.
        plain = _scenario(chart, p["model"], p["gpu"], p["precision"], p["level"], {**p, "kv_traffic": False})
        label = "with attention over the prompt"
        curve = [{**row, "series": label} for row in curve]
        for tokens in _log_spaced_tokens(p["max_prompt"], *kink):
            timing = _computed(chart, "max_prompt", fix, partial(plain.request, tokens))
            curve.append({
                "prompt_tokens": tokens, "decode_steps": timing.prefill_cost_in_decode_steps,
                "prefill_ms": _in("ms", timing.prefill.time_s),
                "decode_step_ms": _in("ms", timing.first_decode.time_s),
                "bound": timing.prefill.bound_label, "series": "weights only (attention left out)",
            })  # fmt: skip
    at_break_even = point(max(1, round(break_even)))
    chosen = point(p["prompt"])
    marks = [
        {
            **at_break_even,
            "prompt_tokens": break_even,
            "label": f"break-even ≈ {format_value(break_even, 'tokens', decimals=0)}",
        },
        {**chosen, "label": f"{_tokens(p['prompt'])} ≈ {chosen['decode_steps']:.1f} decode steps"},
    ]
    if crossing:
        marks.append(
            {**point(crossing), "label": f"attention's FLOPs pass the weights' at ≈ {_tokens(crossing)}"}
        )
    table_prompts = sorted(
        {*(t for t in TABLE_PROMPTS if t <= p["max_prompt"]), round(break_even), p["prompt"]}
    )
    table = []
    for tokens in table_prompts:
        row = point(tokens)
        table.append(
            (
                _tokens(tokens),
                format_value(row["prefill_ms"] * 1e-3, "ms"),
                format_value(row["decode_step_ms"] * 1e-3, "ms"),
                format_value(row["decode_steps"], "steps"),
                row["bound"],
            )
        )
    caption = (
        f"Prefill time of a prompt, counted in decode steps, for {MODELS[p['model']].name} on the "
        f"{short_gpu_name(p['gpu'])} in {p['precision'].upper()}: one step up to about "
        f"{_tokens(break_even)}, then growing with the prompt; {_tokens(p['prompt'])} cost "
        f"{format_value(chosen['decode_steps'], 'steps')}."
    )
    if crossing:
        caption += (
            f" Attention's arithmetic grows with the square of the prompt and passes the weights' at about "
            f"{_tokens(crossing)}, where the curve bends upward; the straight line leaves attention out."
        )
    return ChartData(
        chart,
        p,
        {"curve": curve, "marks": marks},
        ("Prompt", "Prefill time", "Decode step time", "Prefill in decode steps", "Prefill is"),
        tuple(table),
        caption,
    )


# ------------------------------------------------------------------------------------------- ridge points

RIDGE_POINTS_PARAMS = (
    Param("gpus", tuple(GPUS), read_all_or_gpus, "gpus: all", "GPU presets (all of them by default)"),
    Param("precisions", ("bf16",), read_precisions, "precisions: [bf16, fp8]", "number formats compared"),
)


def ridge_points(**given: Any) -> ChartData:
    """Each GPU preset's ridge point (peak FLOP/s over memory bandwidth), one bar per GPU and precision.

    A GPU without tensor cores for a precision (the A100 has no FP8) gets no bar for it
    and a note in the table.
    """
    p = read_params("ridge-points", RIDGE_POINTS_PARAMS, given)
    rows: list[Row] = []
    table: list[tuple[str, ...]] = []
    order = sorted(
        p["gpus"],
        key=lambda key: (
            -ridge_point(key, p["precisions"][0])
            if p["precisions"][0] in GPUS[key].dense_flops_per_s
            else 0.0
        ),
    )
    for key in order:
        gpu = GPUS[key]
        for precision in p["precisions"]:
            label = PRECISIONS[precision].name.upper()
            if precision not in gpu.dense_flops_per_s:
                table.append((short_gpu_name(key), label, "none", "none", f"no {label} tensor cores"))
                continue
            value = ridge_point(key, precision)
            rows.append(
                {
                    "gpu": short_gpu_name(key),
                    "precision": label,
                    "ridge": value,
                    "peak_tflops": _in("TFLOP/s", gpu.peak_flops_per_s(precision)),
                    "bandwidth_tb_s": _in("TB/s", gpu.memory_bandwidth_bytes_per_s),
                }
            )
            table.append(
                (
                    short_gpu_name(key),
                    label,
                    format_value(gpu.peak_flops_per_s(precision), "TFLOP/s"),
                    format_value(gpu.memory_bandwidth_bytes_per_s, "TB/s"),
                    format_value(value, "FLOP/byte"),
                )
            )
    formats = " and ".join(precision.upper() for precision in p["precisions"])
    caption = (
        f"Ridge point of each GPU in {formats}: the arithmetic intensity above which work is compute-bound."
    )
    return ChartData(
        "ridge-points",
        p,
        {"ridges": rows},
        ("GPU", "Precision", "Peak (dense)", "Memory bandwidth", "Ridge point"),
        tuple(table),
        caption,
    )


# ---------------------------------------------------------------------------------------- request timeline

REQUEST_TIMELINE_PARAMS = (
    *SCENARIO_PARAMS,
    Param("prompt", 2000, read_tokens, "prompt: 2000", "prompt tokens read by prefill"),
    Param(
        "output", 16, read_any_output_tokens, "output: 16", "tokens generated (the first comes from prefill)"
    ),
    Param("batch", 1, read_batch, "batch: 1", "identical requests served together"),
    Param(
        "decode",
        "steps",
        read_choice(("steps", "together")),
        "decode: together",
        "a bar per decode step (steps, up to 512 tokens) or one bar for all of them (together: any length, "
        "and quick enough for a live widget)",
    ),
)


def request_timeline(**given: Any) -> ChartData:
    """One request on the time axis: the prefill (it yields the first token), then a decode step per token.

    Under a calibrated setting each bar carries the same request at spec peaks (``peak_*`` fields, drawn as
    a grey line over the bar), and the caption and table print each time with its bound beside it, as the
    lessons do; in a spec-peak setting the bound fields repeat the bar's own times.
    """
    p = read_params("request-timeline", REQUEST_TIMELINE_PARAMS, given)
    chart = "request-timeline"
    _check_precision(chart, (p["gpu"],), p["precision"])

    def make_scenario() -> Scenario:
        return _scenario(chart, p["model"], p["gpu"], p["precision"], p["level"], p)

    scenario = make_scenario()
    if p["decode"] == "steps":
        try:
            read_output_tokens("output", p["output"])
        except ValueError as error:
            raise ChartError(
                chart, "output", str(error), "for example `output: 16`, or `decode: together`"
            ) from None
    fix = "use a shorter prompt, fewer output tokens or a smaller batch"
    timing = _computed(chart, "prompt", fix, lambda: scenario.request(p["prompt"], p["output"], p["batch"]))
    # The same request at spec peaks (None where the setting is already there): each bar's bound.
    peak_scenario = at_spec_peak(make_scenario)
    bound_timing = peak_scenario.request(p["prompt"], p["output"], p["batch"]) if peak_scenario else timing

    def shown(estimate: float, bound: float) -> str:
        return with_bound(format_value(estimate, "ms"), format_value(bound, "ms") if peak_scenario else None)

    prefill_ms = _in("ms", timing.prefill.time_s)
    bound_prefill_ms = _in("ms", bound_timing.prefill.time_s)
    segments: list[Row] = [
        {
            "phase": "prefill",
            "label": f"prefill of {_tokens(p['prompt'])}",
            "start_ms": 0.0,
            "end_ms": prefill_ms,
            "duration_ms": prefill_ms,
            "token": 1,
            "bound": timing.prefill.bound_label,
            "peak_start_ms": 0.0,
            "peak_end_ms": bound_prefill_ms,
            "peak_ms": bound_prefill_ms,
        },
    ]
    start, bound_start = prefill_ms, bound_prefill_ms
    if p["decode"] == "together" and timing.decode_steps:
        # One bar for every step: the calculators sum the steps in closed form, so this costs two passes.
        last = scenario.decode(p["batch"], p["prompt"] + timing.decode_steps)
        bounds = dict.fromkeys((timing.first_decode.bound_label, last.bound_label))
        segments.append(
            {
                "phase": "decode",
                "label": f"{timing.decode_steps} decode steps",
                "start_ms": start,
                "end_ms": _in("ms", timing.total_time_s),
                "duration_ms": _in("ms", timing.decode_time_s),
                "token": p["output"],
                "bound": ", then ".join(bounds),
                "peak_start_ms": bound_start,
                "peak_end_ms": _in("ms", bound_timing.total_time_s),
                "peak_ms": _in("ms", bound_timing.decode_time_s),
            }
        )
    peak = peak_scenario or scenario
    for step in range(1, timing.decode_steps + 1 if p["decode"] == "steps" else 1):
        # Step i produces token i + 1 while attending the prompt and the i tokens before it.
        result = scenario.decode(p["batch"], p["prompt"] + step)
        duration = _in("ms", result.time_s)
        bound_duration = _in("ms", peak.decode(p["batch"], p["prompt"] + step).time_s)
        segments.append(
            {
                "phase": "decode",
                "label": f"decode step {step}",
                "start_ms": start,
                "end_ms": start + duration,
                "duration_ms": duration,
                "token": step + 1,
                "bound": result.bound_label,
                "peak_start_ms": bound_start,
                "peak_end_ms": bound_start + bound_duration,
                "peak_ms": bound_duration,
            }
        )
        start += duration
        bound_start += bound_duration
    events = [{"time_ms": _in("ms", timing.time_to_first_token_s), "label": "first token", "kind": "first"}]
    if timing.decode_steps:
        events.append(
            {"time_ms": _in("ms", timing.total_time_s), "label": f"token {p['output']}", "kind": "last"}
        )
    prefill_s, bound_prefill_s = timing.prefill.time_s, bound_timing.prefill.time_s
    table = [
        (
            "Prefill",
            _tokens(p["prompt"]),
            format_value(0.0, "ms"),
            shown(prefill_s, bound_prefill_s),
            shown(prefill_s, bound_prefill_s),
        ),
    ]
    if timing.decode_steps:
        table.append(
            (
                f"Decode: {timing.decode_steps} steps of "
                f"{shown(timing.time_per_output_token_s, bound_timing.time_per_output_token_s)} on average",
                f"{timing.decode_steps} tokens",
                shown(prefill_s, bound_prefill_s),
                shown(timing.total_time_s, bound_timing.total_time_s),
                shown(timing.decode_time_s, bound_timing.decode_time_s),
            )
        )
    caption = (
        f"One request for {MODELS[p['model']].name} on the {short_gpu_name(p['gpu'])}: the prefill of "
        f"{_tokens(p['prompt'])} takes {shown(prefill_s, bound_prefill_s)} and yields the first "
        f"token, then each decode step adds one token in about "
        f"{shown(timing.first_decode.time_s, bound_timing.first_decode.time_s)}."
    )
    if peak_scenario is not None:
        caption += " The grey line over each bar is the same work at spec-sheet peaks, its bound."
    return ChartData(
        chart,
        p,
        {"segments": segments, "events": events},
        ("Phase", "Tokens", "Starts", "Ends", "Takes"),
        tuple(table),
        caption,
    )


# ---------------------------------------------------------------------------------------------- KV cache

KV_CACHE_PARAMS = (
    Param("model", "llama-3.1-8b", read_model, "model: llama-3.1-8b", "model whose cache is drawn"),
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset whose memory holds weights and cache"),
    Param("gpus", 1, read_tensor_parallel, "gpus: 8", "GPUs sharing the model (tensor parallel)"),
    Param("precision", "bf16", read_precision, "precision: fp8", "format of the weights"),
    Param("kv_format", "bf16", read_precision, "kv_format: fp8", "format of the cached keys and values"),
    Param("batch", 64, read_batch, "batch: 64", "sequences cached at once"),
    Param("context", 2000, read_tokens, "context: 2000", "context length marked on the lines"),
    Param("max_context", 16_384, read_tokens, "max_context: 32768", "longest context on the x axis"),
    Param(
        "compare_mha",
        True,
        read_bool,
        "compare_mha: false",
        "also draw the same model with full multi-head attention (GQA models only)",
    ),
)
KV_CURVE_POINTS = 32  # the lines are straight; the points are there for tooltips
KV_TABLE_CONTEXTS = (1_024, 2_048, 4_096, 8_192, 16_384, 32_768, 131_072, 1_048_576)


def kv_cache(**given: Any) -> ChartData:
    """KV-cache memory of a batch against context length, next to the memory left for it on the GPUs.

    One line per attention layout (the model's own; with ``compare_mha`` its multi-head twin as well), and
    the KV budget (device memory an engine may use, less weights, runtime reserve and activations) as a
    horizontal line: where a line crosses it, the batch no longer fits.
    """
    p = read_params("kv-cache", KV_CACHE_PARAMS, given)
    chart = "kv-cache"
    if p["context"] > p["max_context"]:
        raise ChartError(
            chart, "context", f"{p['context']:,} is beyond max_context {p['max_context']:,}",
            f"use `max_context: {2 ** math.ceil(math.log2(p['context'])):d}`",
        )  # fmt: skip
    model = MODELS[p["model"]]
    variants = [model]
    if p["compare_mha"] and model.attention == "gqa":
        variants.append(model.with_multi_head_attention())

    def scenario_for(variant: Any) -> Scenario:
        made: Scenario = _computed(chart, "precision", "use `precision: bf16`", lambda: Scenario(
            variant, p["gpu"], gpus=p["gpus"], precision=p["precision"], kv_cache_format=p["kv_format"],
            ignore_memory=True))  # fmt: skip
        return made

    scenarios = [(variant, scenario_for(variant)) for variant in variants]
    budget = scenarios[0][1].kv_budget_bytes
    # The lines' points do not depend on the chosen context (below the axis's top a context move sends the
    # live chart new marks only, course/widgets/benchmark.py). Each line is straight from zero,
    # except where a sliding window caps the cache: that window is a point of its own, so the line bends
    # where the cache stops growing, whatever the grid's step.
    steps = range(KV_CURVE_POINTS + 1)
    grid = {max(1, round(p["max_context"] * i / KV_CURVE_POINTS)) for i in steps}
    windows = {variant.sliding_window for variant in variants if variant.sliding_window is not None}
    bends = {window for window in windows if window < p["max_context"]}
    contexts = sorted(grid | bends)
    # The y axis must come from the rows alone (a live widget swaps rows, not scales): lines are cut where
    # they pass twice the memory left (or the model's own top), ending on that edge. The edge is never below
    # a marked point, so each line reaches its mark (a multi-head twin's point far above the memory left
    # would otherwise float over the end of its line).
    own_top = scenarios[0][1].kv_cache_bytes(contexts[-1], p["batch"])
    chosen = [scenario.kv_cache_bytes(p["context"], p["batch"]) for _, scenario in scenarios]
    top = max(2.0 * budget if budget > 0 else 0.0, own_top, *chosen)
    lines: list[Row] = []
    marks: list[Row] = []
    for (variant, scenario), at in zip(scenarios, chosen, strict=True):
        one_copy = scenario.kv_bytes_per_token / scenario.setup.kv_replication
        series = f"{variant.name} ({variant.attention.upper()}), {format_value(one_copy, 'KiB')} per token"
        colour = ATTENTION_COLOURS[variant.attention.upper()]
        per_context = scenario.kv_cache_bytes(1, p["batch"])
        reached = 0
        for context in contexts:
            size = scenario.kv_cache_bytes(context, p["batch"])
            if size > top:  # the edge: where the straight line reaches the top of the axis
                edge = top / per_context
                if not math.isclose(edge, reached):  # a grid point already on the edge ends the line
                    lines.append({"series": series, "colour": colour, "context": edge, "gb": _in("GB", top)})
                break
            lines.append({"series": series, "colour": colour, "context": context, "gb": _in("GB", size)})
            reached = context
        fits = budget > 0 and at <= budget
        # Each mark carries what its label must keep clear of (specs.py): the memory left (the rule), and
        # whether another line runs below its own ("upper": the label then goes above its line).
        marks.append({"series": series, "colour": colour, "context": p["context"], "gb": _in("GB", at),
                      "label": f"{format_value(at, 'GB')}{'' if fits else ', does not fit'}",
                      "rule": _in("GB", max(budget, 0.0)), "upper": at > min(chosen)})  # fmt: skip
    room = format_value(max(budget, 0.0), "GB")
    budget_rows = [{"gb": _in("GB", max(budget, 0.0)), "label": f"memory left for the KV cache: {room}"}]
    table = [
        (_tokens(context), *(format_value(s.kv_cache_bytes(context, p["batch"]), "GB") for _, s in scenarios))
        for context in sorted({c for c in KV_TABLE_CONTEXTS if c <= p["max_context"]} | {p["context"]})
    ]
    table.append(("memory left for it", *(format_value(max(budget, 0.0), "GB") for _ in scenarios)))
    gpus = f"{p['gpus']} x {short_gpu_name(p['gpu'])}" if p["gpus"] > 1 else f"one {short_gpu_name(p['gpu'])}"
    own = scenarios[0][1]
    most = own.setup.memory.max_context(p["batch"]) if budget > 0 else 0
    caption = (
        f"KV cache of {p['batch']} sequences of {model.name} as their context grows, against the "
        f"{room} left for it on {gpus}"
        + (f" (weights in {p['precision'].upper()})" if p["precision"] != "bf16" else "")
        + f": at {_tokens(p['context'])} it takes "
        + format_value(own.kv_cache_bytes(p["context"], p["batch"]), "GB")
        + (f", and it fills the memory at about {_tokens(most)} each" if 0 < most < 1_048_576 else "")
        + "."
    )
    copies = own.setup.kv_replication
    if copies > 1:
        caption += (
            f" Across the {p['gpus']} GPUs the cache is kept {copies:g} times over (each GPU holds the"
            f" {'latent' if model.attention == 'mla' else 'KV heads'} its attention needs), so a token of"
            f" context takes {format_value(own.kv_bytes_per_token, 'KiB')} in all."
        )
    if len(scenarios) > 1:
        twin = scenarios[1][1]
        caption += (
            f" With full multi-head attention the same batch would need "
            f"{format_value(twin.kv_cache_bytes(p['context'], p['batch']), 'GB')}."
        )
    return ChartData(
        chart,
        p,
        {"lines": lines, "marks": marks, "budget": budget_rows},
        ("Context per sequence", *(f"KV cache, {v.name}" for v, _ in scenarios)),
        tuple(table),
        caption,
    )


# ------------------------------------------------------------------------------------------ prefill stall

PREFILL_STALL_PARAMS = (
    Param("prompt", 8000, read_tokens, "prompt: 8000", "the long prompt that arrives"),
    Param("decoding", 16, read_batch, "decoding: 16", "requests already writing their answers"),
    Param("token_budget", 512, read_batch, "token_budget: 512", "chunked prefill's tokens per step"),
    Param("model", "dense-8b", read_model, "model: dense-8b", "model preset"),
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset"),
)


def prefill_stall_chart(**given: Any) -> ChartData:
    """The gaps between one decoding request's tokens while a long prompt arrives, with and without chunks.

    Both runs are :func:`calculators.simulator.experiments.prefill_stall`: ``decoding`` requests writing
    answers, then a ``prompt``-token prompt. Prefill first, the gap that holds the prompt's whole prefill
    stands out; chunked, every gap is one step with a chunk in it.
    """
    chart = "prefill-stall"
    p = read_params(chart, PREFILL_STALL_PARAMS, given)
    runs = {
        "prefill first (no chunks)": _computed(
            chart,
            "prompt",
            "use a shorter prompt",
            lambda: prefill_stall(p["prompt"], p["decoding"], model=p["model"], gpu=p["gpu"]),
        ),
        f"chunked, budget {p['token_budget']:,}": _computed(
            chart,
            "token_budget",
            "use a budget above the number of decoding requests",
            lambda: prefill_stall(
                p["prompt"], p["decoding"], p["token_budget"], model=p["model"], gpu=p["gpu"]
            ),
        ),
    }
    # Prefill first is continuous batching (experiments.prefill_stall): each run in its scheduler's colour.
    first, chunked = runs
    colours = {first: SCHEDULER_COLOURS["continuous"], chunked: SCHEDULER_COLOURS["chunked"]}
    arrival_s = float(next(iter(runs.values())).result.requests[-1]["arrival_s"])
    last_s = max(arrival_s + run.ttft_s for run in runs.values())
    start_s, end_s = arrival_s - 0.25 * (last_s - arrival_s), last_s + 0.25 * (last_s - arrival_s)
    gaps: list[Row] = []
    events: list[Row] = [{"time_ms": arrival_s * 1e3, "label": "long prompt arrives"}]
    table = []
    for series, run in runs.items():
        times = run.result.token_times(0)
        for before, after in itertools.pairwise(times):
            if start_s <= after <= end_s:
                gaps.append({"series": series, "colour": colours[series], "time_ms": after * 1e3,
                             "gap_ms": (after - before) * 1e3})  # fmt: skip
        table.append(
            (
                series,
                format_value(run.longest_gap_s, "ms"),
                f"{run.stall_steps:.3g}",
                format_value(run.ttft_s, "ms"),
            )
        )
    caption = (
        f"Gaps between the tokens of one of {p['decoding']} decoding requests when a "
        f"{p['prompt']:,}-token prompt arrives: prefill first, one gap of "
        f"{format_value(runs['prefill first (no chunks)'].longest_gap_s, 'ms')}; chunked, none longer than "
        f"{format_value(list(runs.values())[1].longest_gap_s, 'ms')}."
    )
    return ChartData(
        chart,
        p,
        {"gaps": gaps, "events": events},
        ("Scheduler", "Longest gap", "In decode steps", "Long prompt's TTFT"),
        tuple(table),
        caption,
    )


# --------------------------------------------------------------------------- served workload: sweeps

SERVING_PARAMS = (
    Param("gpus", 1, read_gpu_count, "gpus: 2", "GPUs serving the workload"),
    Param("token_budget", 512, read_batch, "token_budget: 512", "chunked prefill's tokens per step"),
    Param("prefill_gpus", 1, read_gpu_count, "prefill_gpus: 1", "GPUs given to prefill when disaggregated"),
    Param("link", "nvlink4", read_link, "link: nvlink4", "interconnect carrying caches when disaggregated"),
    Param("ttft_slo", 0.5, read_seconds, "ttft_slo: 0.5", "SLO bound on time to first token, seconds"),
    Param("tpot_slo", 0.02, read_seconds, "tpot_slo: 0.02", "SLO bound on time per output token, seconds"),
)


def _served(chart: str, p: Mapping[str, Any], rate: float, scheduler: str) -> Served:
    """The course workload at ``rate`` on the chart's ``gpus``: as many replicas when colocated, split into
    ``prefill_gpus`` and the rest for decode when disaggregated."""
    gpus = p["gpus"]
    if scheduler == "disaggregated":
        if not 0 < p["prefill_gpus"] < gpus:
            raise ChartError(
                chart,
                "prefill_gpus",
                f"disaggregated serving needs 1 to {gpus - 1} of its {gpus} GPUs for prefill, "
                f"got {p['prefill_gpus']}",
                "give prefill fewer GPUs than `gpus`",
            )
        placement = {"prefill_gpus": p["prefill_gpus"], "decode_gpus": gpus - p["prefill_gpus"]}
    else:
        placement = {"replicas": gpus}
    run: Served = _computed(
        chart,
        "prefill_gpus" if scheduler == "disaggregated" else "rates",
        "give prefill fewer GPUs than `gpus`" if scheduler == "disaggregated" else "use lower rates",
        lambda: served(
            "course",
            rate=rate,
            scheduler=scheduler,
            token_budget=p["token_budget"],
            link=p["link"],
            slo_ttft_ms=p["ttft_slo"] * 1e3,
            slo_tpot_ms=p["tpot_slo"] * 1e3,
            **placement,
        ),
    )
    return run


LATENCY_VS_RATE_PARAMS = (
    Param(
        "rates",
        (5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0),
        read_rates,
        "rates: [5, 10, 20, 40]",
        "arrival rates to serve, requests per second",
    ),
    Param("scheduler", "chunked", read_choice(SCHEDULERS), "scheduler: chunked", "how the engine schedules"),
    *SERVING_PARAMS,
)


def latency_vs_rate(**given: Any) -> ChartData:
    """TTFT and TPOT percentiles of the course workload as its arrival rate rises (log time axis)."""
    chart = "latency-vs-rate"
    p = read_params(chart, LATENCY_VS_RATE_PARAMS, given)
    points: list[Row] = []
    table = []
    for rate in p["rates"]:
        run = _served(chart, p, rate, p["scheduler"])
        for metric, value in (
            ("TTFT p50", run.ttft_s.p50),
            ("TTFT p99", run.ttft_s.p99),
            ("TPOT p50", run.tpot_s.p50),
            ("TPOT p99", run.tpot_s.p99),
        ):
            points.append({"rate": rate, "metric": metric, "ms": value * 1e3})
        table.append(
            (
                f"{rate:g}",
                f"{run.served_rps:.3g}",
                format_value(run.ttft_s.p50, "ms"),
                format_value(run.ttft_s.p99, "ms"),
                format_value(run.tpot_s.p50, "ms"),
                format_value(run.tpot_s.p99, "ms"),
            )
        )
    bounds = [
        {"metric": "TTFT p99", "ms": p["ttft_slo"] * 1e3, "label": "TTFT bound"},
        {"metric": "TPOT p99", "ms": p["tpot_slo"] * 1e3, "label": "TPOT bound"},
    ]
    caption = (
        f"Latency percentiles of the course workload on {p['gpus']} GPU(s) with {p['scheduler']} scheduling, "
        f"as the arrival rate rises from {p['rates'][0]:g} to {p['rates'][-1]:g} requests per second."
    )
    return ChartData(
        chart,
        p,
        {"points": points, "bounds": bounds},
        ("Rate (req/s)", "Served (req/s)", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99"),
        tuple(table),
        caption,
    )


GOODPUT_VS_RATE_PARAMS = (
    Param(
        "rates",
        (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0),
        read_rates,
        "rates: [10, 20, 40, 80]",
        "arrival rates to serve, requests per second",
    ),
    Param(
        "schedulers",
        ("chunked", "disaggregated"),
        lambda _, value: _read_schedulers(value),
        "schedulers: [chunked, disaggregated]",
        "the systems compared, on the same GPUs and workload",
    ),
    Param("gpus", 2, read_gpu_count, "gpus: 3", "GPUs each system gets"),
    *SERVING_PARAMS[1:],
)


def _read_schedulers(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value or any(v not in SCHEDULERS for v in value):
        raise ValueError(f"expected a list drawn from {', '.join(SCHEDULERS)}, got {value!r}")
    return tuple(value)


def goodput_vs_rate(**given: Any) -> ChartData:
    """Goodput against the offered rate, per system: the arrival rate times the share of requests that
    meet both SLO bounds, so a system that keeps up sits on the diagonal and one that falls behind drops."""
    chart = "goodput-vs-rate"
    p = read_params(chart, GOODPUT_VS_RATE_PARAMS, given)
    points: list[Row] = []
    table = []
    for scheduler in p["schedulers"]:
        label = _system_label(scheduler, p)
        for rate in p["rates"]:
            run = _served(chart, p, rate, scheduler)
            points.append(
                {
                    "rate": rate,
                    "system": label,
                    "colour": SCHEDULER_COLOURS[scheduler],
                    "goodput": run.good_rate_rps,
                    "attainment": 100 * run.slo_attainment,
                    "ttft_p99_ms": run.ttft_s.p99 * 1e3,
                    "tpot_p99_ms": run.tpot_s.p99 * 1e3,
                }
            )
            table.append(
                (
                    label,
                    f"{rate:g}",
                    f"{run.good_rate_rps:.3g}",
                    format_value(run.slo_attainment, "%", digits=3),
                    format_value(run.ttft_s.p99, "ms"),
                    format_value(run.tpot_s.p99, "ms"),
                )
            )
    caption = (
        f"Goodput on {p['gpus']} GPUs against the arrival rate of the course workload, SLO TTFT <= "
        f"{format_value(p['ttft_slo'], 'ms')} and TPOT <= {format_value(p['tpot_slo'], 'ms')}."
    )
    return ChartData(
        chart,
        p,
        {"points": points},
        ("System", "Rate (req/s)", "Goodput (req/s)", "Meet the SLO", "TTFT p99", "TPOT p99"),
        tuple(table),
        caption,
    )


def _system_label(scheduler: str, p: Mapping[str, Any]) -> str:
    if scheduler == "disaggregated":
        return f"disaggregated {p['prefill_gpus']}P+{p['gpus'] - p['prefill_gpus']}D"
    if scheduler == "chunked":
        return f"colocated, chunked ({p['token_budget']:,})"
    return "colocated, prefill first"


# ----------------------------------------------------------------------------------------------- catalogue


@dataclass(frozen=True)
class ChartKind:
    """A chart a lesson can name: its parameters and the function computing its data."""

    name: str
    params: tuple[Param, ...]
    data: Callable[..., ChartData]
    summary: str


CHARTS: Mapping[str, ChartKind] = {
    kind.name: kind
    for kind in (
        ChartKind(
            "roofline", ROOFLINE_PARAMS, roofline, "GPUs' rooflines with prefill and decode placed on them"
        ),
        ChartKind(
            "prefill-vs-decode",
            PREFILL_VS_DECODE_PARAMS,
            prefill_vs_decode,
            "time of a P-token prefill measured in decode steps, as P grows",
        ),
        ChartKind("ridge-points", RIDGE_POINTS_PARAMS, ridge_points, "ridge point of every GPU preset"),
        ChartKind(
            "request-timeline",
            REQUEST_TIMELINE_PARAMS,
            request_timeline,
            "one request: prefill then decode steps, on the time axis",
        ),
        ChartKind(
            "kv-cache",
            KV_CACHE_PARAMS,
            kv_cache,
            "KV-cache memory of a batch against context, and the room for it",
        ),
        ChartKind(
            "prefill-stall",
            PREFILL_STALL_PARAMS,
            prefill_stall_chart,
            "gaps between a decoding request's tokens while a long prompt arrives, with and without chunks",
        ),
        ChartKind(
            "latency-vs-rate",
            LATENCY_VS_RATE_PARAMS,
            latency_vs_rate,
            "TTFT and TPOT percentiles of a served workload as the arrival rate rises",
        ),
        ChartKind(
            "goodput-vs-rate",
            GOODPUT_VS_RATE_PARAMS,
            goodput_vs_rate,
            "requests per second meeting an SLO against the arrival rate, per serving system",
        ),
        ChartKind(
            "serving-timeline",
            serving.SERVING_TIMELINE_PARAMS,
            serving.serving_timeline,
            "a simulated run's first steps: each request's wait, prefill and decode, and what each step ran",
        ),
        ChartKind(
            "kv-memory",
            serving.KV_MEMORY_PARAMS,
            serving.kv_memory,
            "a simulated run's KV memory: reserved and filled over time, and a map of the pool when fullest",
        ),
        ChartKind(
            "serving-latency",
            serving.SERVING_LATENCY_PARAMS,
            serving.serving_latency,
            "latency percentiles and throughput of one workload under one or several schedulers",
        ),
        ChartKind(
            "batch-tradeoff",
            serving.BATCH_TRADEOFF_PARAMS,
            serving.batch_tradeoff,
            "decode's time per token against its throughput as the batch grows, with and without KV reads",
        ),
        ChartKind(
            "bound-vs-calibrated",
            achieved.BOUND_VS_CALIBRATED_PARAMS,
            achieved.bound_vs_calibrated,
            "decode's time per token against its throughput: the spec-peak bound and two calibrated engines",
        ),
        ChartKind(
            "format-bits",
            formats.FORMAT_BITS_PARAMS,
            formats.format_bits,
            "bits one value costs in memory per number format: its own bits and its share of a block's scale",
        ),
        ChartKind(
            "attention-share",
            flops.ATTENTION_SHARE_PARAMS,
            flops.attention_share,
            "attention's share of a decoded token's FLOPs as its context grows, one line per model",
        ),
        ChartKind(
            "speculative-speedup",
            speculative.SPECULATIVE_SPEEDUP_PARAMS,
            speculative.speculative_speedup,
            "speculative decoding's speed-up over plain decoding against the batch, per acceptance rate",
        ),
        ChartKind(
            "quantization-speedup",
            quantization.QUANTIZATION_SPEEDUP_PARAMS,
            quantization.quantization_speedup,
            "each quantisation recipe's decode speed-up over BF16 against the batch, and what fits",
        ),
        ChartKind(
            "expert-load",
            experts.EXPERT_LOAD_PARAMS,
            experts.expert_load_chart_data,
            "routed experts touched on the average and the busiest GPU of expert parallelism, by batch",
        ),
        ChartKind(
            "prefix-caching-ttft",
            prefix.PREFIX_CACHING_PARAMS,
            prefix.prefix_caching_ttft,
            "time to first token against the arrival rate, with and without caching a shared prompt",
        ),
        ChartKind(
            "attention-vs-weights",
            attention.ATTENTION_VS_WEIGHTS_PARAMS,
            attention.attention_vs_weights,
            "attention's time per token against the weight products', prefill and decode, by context",
        ),
        ChartKind(
            "memory-hierarchy",
            hierarchy.MEMORY_HIERARCHY_PARAMS,
            hierarchy.memory_hierarchy,
            "a GPU's memories from registers to HBM, by capacity, with bandwidths where published",
        ),
        ChartKind(
            "tensor-parallel-decode",
            parallel.TENSOR_PARALLEL_PARAMS,
            parallel.tensor_parallel_decode,
            "a decode step's time by tensor-parallel degree, its all-reduces apart",
        ),
        ChartKind(
            "pipeline-micro-batches",
            parallel.PIPELINE_PARAMS,
            parallel.pipeline_micro_batches,
            "one step's tokens per second through pipeline stages against the micro-batches it is split into",
        ),
        ChartKind(
            "gemm-efficiency",
            matmul.GEMM_EFFICIENCY_PARAMS,
            matmul.gemm_efficiency,
            "share of peak FLOP/s one weight product reaches by its token count: bound, tiles and waves, "
            "calibrated",
        ),
    )
}


def chart_kind(name: Any) -> ChartKind:
    """The chart called ``name``; an unknown name raises :class:`ChartError` listing the known ones."""
    if not isinstance(name, str) or name not in CHARTS:
        known = ", ".join(CHARTS)
        close = [c for c in CHARTS if isinstance(name, str) and (name in c or c in name)]
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ChartError(
            str(name),
            "name",
            f"unknown chart {name!r}{hint}; known charts: {known}",
            "write `name: roofline` (or another known chart)",
        )
    return CHARTS[name]


def chart_data(name: str, **params: Any) -> ChartData:
    """Compute the chart ``name`` with ``params`` (validated; see each chart's ``params``)."""
    return chart_kind(name).data(**params)
