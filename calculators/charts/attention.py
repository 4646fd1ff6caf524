"""The attention-roofline lesson's chart: attention's time per token against the weight products', by context.

For each context length it computes, with the course's cost model, one prefill of a prompt that long and one
decode step of ``batch`` sequences at that context, and splits each pass's time into its attention operators
and its weight matrix products (:attr:`calculators.passes.PassResult.attention_time_s` and
``weights_time_s``), per token: a prefill's time over its prompt, a decode step's over its batch.
Attention per token grows with the context in both phases while the weights' stays flat, so each
phase's two lines cross; the crossings are marked where :func:`calculators.serving.attention_takes_over` finds
them.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from calculators.charts.content import ChartData, Row, _computed, _in, _tokens, short_gpu_name
from calculators.charts.palette import PHASE_COLOURS
from calculators.charts.params import (
    MAX_TOKENS,
    Param,
    read_batch,
    read_count,
    read_gpu,
    read_model,
    read_params,
)
from calculators.models import MODELS
from calculators.scenario import Scenario
from calculators.units import format_value

ATTENTION_VS_WEIGHTS_PARAMS: tuple[Param, ...] = (
    Param("model", "llama-3.1-8b", read_model, "model: llama-3.1-8b", "model served"),
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset"),
    Param("batch", 1, read_batch, "batch: 8", "sequences in each decode step"),
    Param(
        "max_context",
        131_072,
        read_count(1024, MAX_TOKENS, "a context length"),
        "max_context: 131072",
        "longest context on the axis",
    ),
)
PHASES = ("prefill", "decode")
PARTS = ("attention", "weight products")
SHORTEST = 256  # the axis starts here: shorter contexts say nothing about attention


def _contexts(longest: int) -> list[int]:
    """Four points a doubling from 256 tokens up to ``longest`` (which is always the last, once: a power of
    two such as 131,072 is reached by the doubling itself, give or take the float's last digit)."""
    contexts, value = [], float(SHORTEST)
    while round(value) < longest:
        contexts.append(round(value))
        value *= 2**0.25
    return [*contexts, longest]


def attention_vs_weights(**given: Any) -> ChartData:
    """Per-token time of attention and of the weight products, prefill and decode, against the context."""
    chart = "attention-vs-weights"
    p = read_params(chart, ATTENTION_VS_WEIGHTS_PARAMS, given)
    batch = p["batch"]
    scenario = Scenario(p["model"], p["gpu"], level="refined", ignore_memory=True)
    lines: list[Row] = []
    for context in _contexts(p["max_context"]):
        passes = {
            "prefill": (partial(scenario.prefill, context), context),
            "decode": (partial(scenario.decode, batch, context), batch),
        }
        for phase, (compute, per) in passes.items():
            result = _computed(chart, "max_context", "use a shorter max_context", compute)
            for part, seconds in zip(PARTS, (result.attention_time_s, result.weights_time_s), strict=True):
                lines.append(
                    {
                        "phase": phase,
                        "part": part,
                        "series": f"{phase}: {part}",
                        "colour": PHASE_COLOURS[phase],
                        "context": context,
                        "us_per_token": _in("us", seconds / per),
                    }
                )
    marks: list[Row] = []
    for phase in PHASES:
        per = batch if phase == "decode" else 1  # the prefill lines are one prompt's
        crossing = _computed(
            chart, "model", "use a model preset", partial(scenario.attention_takes_over, phase, per)
        )
        if not crossing or crossing > p["max_context"]:
            continue
        result = scenario.prefill(crossing) if phase == "prefill" else scenario.decode(batch, crossing)
        per = crossing if phase == "prefill" else batch
        marks.append(
            {
                "phase": phase,
                "colour": PHASE_COLOURS[phase],
                "context": crossing,
                "us_per_token": _in("us", result.attention_time_s / per),
                "label": f"attention passes at {_tokens(crossing)}",
            }
        )
    table = tuple(
        (
            _tokens(row["context"]),
            row["phase"],
            row["part"],
            format_value(row["us_per_token"] * 1e-6, "us"),
        )
        for row in lines
        if row["context"] in (1024, 8192, 32768, p["max_context"])
    )
    caption = (
        f"{MODELS[p['model']].name} on the {short_gpu_name(p['gpu'])}: time per token of attention and of "
        f"the weight products against the context, for a prefill of that many tokens and for a decode step "
        f"of {batch} sequence{'s' if batch != 1 else ''} at that context each."
    )
    return ChartData(
        chart,
        p,
        {"lines": lines, "marks": marks},
        ("Context", "Phase", "Part", "Time per token"),
        table,
        caption,
    )
