"""The peak-vs-achieved lesson's chart: decode's time per token against its output, bound and calibrated.

Each point is one decode step at batch b, computed three ways by the same cost model: the spec-peak bound,
the calibrated estimate of a current CUDA-graph engine, and the calibrated estimate of the 2023-24 engines
(see :mod:`calculators.calibration`). The rows have the batch-tradeoff chart's fields, so its drawing is
reused (``calculators.charts.specs.batch_tradeoff_chart``).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from calculators.charts.content import ChartData, Row, _computed, _in, _tokens, short_gpu_name
from calculators.charts.palette import NEUTRAL, SEQUENTIAL_COLOURS
from calculators.charts.params import Param, read_count, read_gpu, read_model, read_params
from calculators.models import MODELS
from calculators.scenario import Scenario
from calculators.units import format_value

BOUND_VS_CALIBRATED_PARAMS: tuple[Param, ...] = (
    Param("model", "llama-3.1-8b", read_model, "model: llama-3.1-8b", "model served"),
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset"),
    Param(
        "context",
        1000,
        read_count(1, 1 << 20, "a context length"),
        "context: 1000",
        "tokens each request attends",
    ),
    Param(
        "max_batch", 256, read_count(2, 4096, "a batch size"), "max_batch: 256", "largest batch on the curve"
    ),
)
LABELLED = (1, 8, 64, 256)
# (series label, colour, calculator options): the bound grey like every baseline; the two engines are an
# ordered series (further from the bound), the current one in the lightest of the ordered shades, the
# 2023-24 one in the darkest.
SERIES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("spec-peak bound", NEUTRAL, {"mode": "peak"}),
    ("calibrated, current engine", SEQUENTIAL_COLOURS[0], {"mode": "calibrated", "calibration": "current"}),
    (
        "calibrated, 2023-24 engine",
        SEQUENTIAL_COLOURS[-1],
        {"mode": "calibrated", "calibration": "as-published"},
    ),
)


def bound_vs_calibrated(**given: Any) -> ChartData:
    """Time per output token against tokens/s for batch 1 to ``max_batch``, in the three ways above."""
    chart = "bound-vs-calibrated"
    p = read_params(chart, BOUND_VS_CALIBRATED_PARAMS, given)
    context = p["context"]
    batches = sorted(
        {max(1, round(2 ** (i / 2))) for i in range(int(2 * math.log2(p["max_batch"])) + 1)}
        | {p["max_batch"]}
    )
    points: list[Row] = []
    for series, colour, options in SERIES:
        scenario = Scenario(p["model"], p["gpu"], level="refined", ignore_memory=True, **options)
        fits_up_to = _computed(chart, "model", "use a model preset", partial(scenario.max_batch, context))
        for batch in batches:
            step = _computed(
                chart,
                "max_batch",
                "use a smaller max_batch",
                partial(scenario.decode, batch, context),
            )
            points.append(
                {
                    "series": series,
                    "colour": colour,
                    "batch": batch,
                    "tpot_ms": _in("ms", step.time_s),
                    "tokens_per_s": batch / step.time_s,
                    "bound": f"{step.bound}-bound",
                    "fits": "fits" if batch <= fits_up_to else "does not fit",
                    "label": f"batch {batch}" if batch in LABELLED else "",
                }
            )
    table = [
        (
            str(row["batch"]),
            row["series"],
            format_value(row["tpot_ms"] * 1e-3, "ms"),
            format_value(row["tokens_per_s"], "tokens/s"),
        )
        for row in points
        if row["batch"] in (*LABELLED, p["max_batch"])
    ]
    caption = (
        f"Decode of {MODELS[p['model']].name} on the {short_gpu_name(p['gpu'])}, each request at "
        f"{_tokens(context)} of context, batch 1 to {p['max_batch']}: time per output token against the "
        "GPU's output, as the spec-peak bound and as the calibrated estimates of a current and a 2023-24 "
        "engine."
    )
    return ChartData(
        chart,
        p,
        {"points": points},
        ("Batch", "Figure", "Time per output token", "Output"),
        tuple(table),
        caption,
    )
