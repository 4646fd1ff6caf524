"""The quantization lesson's chart: each recipe's decode speed-up over BF16 against the batch.

Each point is one batch size: BF16's decode step time over the recipe's at the same batch and context
(:mod:`calculators.quantization`), so 1 is "buys nothing". A weight-only recipe starts high, where decode is
memory-bound, and falls towards 1 as the batch turns the step compute-bound at the same BF16 peak; an
arithmetic recipe keeps its faster peak. Points whose batch does not fit in memory in that recipe (its own
weights and KV format) are hollow, so the chart shows capacity too: a recipe's line stays solid further out.
Where BF16 itself holds fewer sequences than the chart's last batch, a dotted rule marks its limit: past it
each ratio compares with a BF16 step that could not run, so it speaks of capacity more than of speed.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from calculators.charts.content import ChartData, Row, _computed, _tokens, short_gpu_name
from calculators.charts.palette import RECIPE_COLOURS
from calculators.charts.params import (
    ChartError,
    Param,
    _Invalid,
    read_choice,
    read_count,
    read_gpu,
    read_level,
    read_model,
    read_params,
)
from calculators.models import MODELS
from calculators.quantization import KV_FORMATS, RECIPES

MAX_RECIPES = 4  # a legend a reader can match to lines at a glance


def read_recipes(_: str, value: Any) -> tuple[str, ...]:
    """One to four recipe keys (:data:`calculators.quantization.RECIPES`), none twice."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not 1 <= len(value) <= MAX_RECIPES:
        raise _Invalid(
            f"expected a list of one to {MAX_RECIPES} recipes such as [w4a16, w8a8-fp8], got {value!r}"
        )
    for item in value:
        if item not in RECIPES:
            raise _Invalid(f"unknown recipe {item!r}; allowed: {', '.join(RECIPES)}")
    if len(set(value)) != len(value):
        raise _Invalid(f"a recipe is listed twice in {list(value)!r}")
    return tuple(value)


QUANTIZATION_SPEEDUP_PARAMS: tuple[Param, ...] = (
    Param("model", "llama-3.1-8b", read_model, "model: llama-3.1-8b", "model preset"),
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset"),
    Param(
        "recipes", ("w4a16", "w8a8-fp8"), read_recipes, "recipes: [w4a16, w8a8-fp8]",
        "quantisation recipes, one line each, against BF16",
    ),
    Param(
        "kv_format", "bf16", read_choice(KV_FORMATS), "kv_format: fp8",
        "KV-cache format of the recipes (the BF16 baseline's cache stays BF16)",
    ),
    Param(
        "context", 1000, read_count(1, 1 << 17, "a context length"), "context: 1000",
        "tokens each sequence attends",
    ),
    Param(
        "max_batch", 512, read_count(2, 2048, "a batch size"), "max_batch: 512", "largest batch on the curve"
    ),
    Param(
        "level", "simple", read_level, "level: refined",
        "simple (all weights in the recipe's format) or refined (output layer in BF16, as in checkpoints)",
    ),
)  # fmt: skip


def quantization_speedup(**given: Any) -> ChartData:
    """Decode speed-up of each recipe over BF16 for batch 1 to ``max_batch``, at one context length."""
    chart = "quantization-speedup"
    p = read_params(chart, QUANTIZATION_SPEEDUP_PARAMS, given)
    model, gpu, context = p["model"], p["gpu"], p["context"]
    if "bf16" in p["recipes"] and p["kv_format"] == "bf16":
        raise ChartError(
            chart, "recipes", "bf16 with a BF16 KV cache is the baseline itself, a flat line at 1",
            "leave bf16 out, or set kv_format: fp8 to show what the FP8 cache alone buys",
        )  # fmt: skip
    batches = sorted(
        {max(1, round(2 ** (i / 2))) for i in range(int(2 * math.log2(p["max_batch"])) + 1)}
        | {p["max_batch"]}
    )
    fix = "use a GPU with more memory, or another GPU for this recipe"
    level = p["level"]
    baseline = _computed(
        chart, "gpu", fix, partial(RECIPES["bf16"].scenario, model, gpu, level=level, ignore_memory=True)
    )
    baseline_fits_up_to = baseline.max_batch(context)
    points: list[Row] = []
    table: list[tuple[str, ...]] = []
    shown = {1, 16, 64, 256, p["max_batch"]}
    for key in p["recipes"]:
        recipe = RECIPES[key]
        series = recipe.name if p["kv_format"] == "bf16" else f"{recipe.name}, FP8 KV cache"
        scenario = _computed(
            chart,
            "recipes",
            fix,
            partial(recipe.scenario, model, gpu, p["kv_format"], level=level, ignore_memory=True),
        )
        fits_up_to = scenario.max_batch(context)
        for batch in batches:
            plain = baseline.decode(batch, context)
            step = scenario.decode(batch, context)
            bf16_fits = batch <= baseline_fits_up_to
            row = {
                "series": series,
                "colour": RECIPE_COLOURS[recipe.name],
                "batch": batch,
                "speedup": plain.time_s / step.time_s,
                "tokens_per_s": batch / step.time_s,
                "bf16_tokens_per_s": batch / plain.time_s,
                "bound": step.bound_label,
                "fits": "fits" if batch <= fits_up_to else "does not fit",
                "bf16_fits": "fits" if bf16_fits else "does not fit",
            }
            points.append(row)
            if batch in shown:
                table.append(
                    (
                        str(batch), series, f"{row['speedup']:.2f}x", f"{row['tokens_per_s']:,.0f}",
                        f"{row['bf16_tokens_per_s']:,.0f}" + ("" if bf16_fits else " (does not fit)"),
                        step.bound_label, row["fits"],
                    )
                )  # fmt: skip
    kv = "" if p["kv_format"] == "bf16" else " with an FP8 KV cache (BF16's in BF16)"
    caption = (
        f"Decode of {MODELS[model].name} on one {short_gpu_name(gpu)}, each sequence at "
        f"{_tokens(context)} of context: each recipe's speed-up over BF16 at the same batch{kv}; at 1 (the "
        "dashed line) it buys nothing. Hollow points do not fit in memory in that recipe."
    )
    limit: list[Row] = []
    if baseline_fits_up_to < batches[-1]:
        if baseline_fits_up_to >= 1:
            label = f"BF16 fits up to {baseline_fits_up_to:,}"
            said = f"BF16 itself holds at most {baseline_fits_up_to:,} sequences (the dotted line); past it"
        else:
            label = "BF16 does not fit"
            said = "BF16 itself does not fit at any batch: everywhere"
        limit = [{"batch": max(1, baseline_fits_up_to), "label": label}]
        caption += f" {said} the speed-up compares with a step BF16 could not run."
    return ChartData(
        chart,
        p,
        {"points": points, "bf16_limit": limit},
        ("Batch", "Recipe", "Speed-up over BF16", "Tokens/s", "BF16 tokens/s", "Recipe's step", "Memory"),
        tuple(table),
        caption,
    )
