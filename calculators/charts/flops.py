"""The tokens-parameters-and-flops lesson's chart: the share of a token's FLOPs that attention takes.

A token's weight products cost about two FLOPs per parameter whatever the context; its attention costs a
fixed number of FLOPs per earlier token it attends to, so its share grows with the context. Each point is one
decode token of one model, counted by the cost model itself (a refined decode step of batch 1:
``matmul_flops`` and ``attention_flops``), so the chart and the lesson's figures cannot disagree. FLOPs do not
depend on the GPU or on the mode (spec peaks or calibrated), which set only times.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from calculators.charts.content import ChartData, Row, _computed, _tokens
from calculators.charts.palette import sequential_colours
from calculators.charts.params import ChartError, Param, read_count, read_models, read_params
from calculators.models import MODELS
from calculators.scenario import Scenario
from calculators.units import format_value

TABLE_CONTEXTS = (1024, 8192, 32768, 131072)
EVEN_LABEL = "attention = weight products"


ATTENTION_SHARE_PARAMS: tuple[Param, ...] = (
    Param(
        "models",
        ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"),
        read_models,
        "models: [llama-3.1-8b, llama-3.1-70b]",
        "one to three model presets, one line each",
    ),
    Param(
        "context",
        8192,
        read_count(1, 1 << 20, "a context length"),
        "context: 8192",
        "context marked on every line",
    ),
    Param(
        "max_context",
        131072,
        read_count(256, 1 << 20, "a context length"),
        "max_context: 131072",
        "longest context on the axis",
    ),
)


def token_flops(model: str, context: int) -> tuple[float, float]:
    """(weight-product FLOPs, attention FLOPs) of one decode token attending ``context`` tokens."""
    step = Scenario(model, level="refined", ignore_memory=True).decode(1, context)
    return step.matmul_flops, step.attention_flops


def attention_share(**given: Any) -> ChartData:
    """Attention's share of one decode token's FLOPs against its context, one line per model."""
    chart = "attention-share"
    p = read_params(chart, ATTENTION_SHARE_PARAMS, given)
    if p["context"] > p["max_context"]:
        raise ChartError(
            chart, "context", f"{p['context']:,} is beyond max_context {p['max_context']:,}",
            "use a context at most max_context",
        )  # fmt: skip
    models = sorted(p["models"], key=lambda key: MODELS[key].derived_params)  # lighter to darker as N grows
    colours = dict(zip(models, sequential_colours(len(models)), strict=True))
    powers = {2**k for k in range(7, 21) if 2**k <= p["max_context"]}
    contexts = sorted(powers | {p["max_context"], p["context"]})
    lines: list[Row] = []
    marks: list[Row] = []
    table: list[tuple[str, ...]] = []
    for key in models:
        name = MODELS[key].name
        for context in contexts:
            weights, attention = _computed(
                chart, "models", "use a model preset with known shapes", partial(token_flops, key, context)
            )
            row = {
                "series": name,
                "colour": colours[key],
                "context": context,
                "share_pct": 100.0 * attention / (weights + attention),
                "attention_gflop": attention / 1e9,
                "weights_gflop": weights / 1e9,
            }
            lines.append(row)
            if context == p["context"]:
                marks.append({**row, "label": f"{row['share_pct']:.0f}%"})
        shown = [c for c in TABLE_CONTEXTS if c <= p["max_context"]]
        for context in sorted({*shown, p["context"]}):
            weights, attention = token_flops(key, context)
            table.append(
                (
                    name,
                    _tokens(context),
                    format_value(weights, "GFLOP"),
                    format_value(attention, "GFLOP"),
                    format_value(attention / (weights + attention), "%"),
                )
            )
    caption = (
        "Share of one decoded token's FLOPs spent in attention, against the tokens it attends to, for "
        + ", ".join(MODELS[key].name for key in models)
        + f": the weight products cost the same at every context, attention grows with it (marked at "
        f"{_tokens(p['context'])})."
    )
    return ChartData(
        chart,
        p,
        {"lines": lines, "marks": marks, "even": [{"share_pct": 50.0, "label": EVEN_LABEL}]},
        ("Model", "Context", "Weight products", "Attention", "Attention's share"),
        tuple(table),
        caption,
    )
