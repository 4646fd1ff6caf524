"""The mixture-of-experts lesson's chart: routed experts touched per GPU against the batch.

Each batch size is a pair of points: the experts an average GPU's share of the batch touches
(E (1 - (1 - k/E)^T) / G) and the expected count on the busiest GPU
(:func:`calculators.expert_load.busiest_gpu_experts`), both under uniform random routing. A memory-bound
decode step reads the weights of every expert it touches, and expert parallelism waits for the busiest GPU,
so the gap between the lines is the time lost to imbalance; both climb to the experts a GPU holds (the
dashed line), where every weight is read whatever the batch.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from calculators.charts.content import ChartData, Row, _computed
from calculators.charts.palette import EXPERT_LOAD_COLOURS
from calculators.charts.params import ChartError, Param, read_count, read_model, read_params
from calculators.expert_parallel import expert_load
from calculators.models import MODELS

EXPERT_LOAD_PARAMS: tuple[Param, ...] = (
    Param("model", "deepseek-v3", read_model, "model: deepseek-v3", "an MoE model preset"),
    Param(
        "gpus",
        8,
        read_count(2, 512, "a number of GPUs"),
        "gpus: 8",
        "GPUs the routed experts are spread over",
    ),
    Param(
        "max_batch",
        512,
        read_count(2, 4096, "a batch size"),
        "max_batch: 512",
        "largest batch (tokens) on the curve",
    ),
)


def expert_load_chart_data(**given: Any) -> ChartData:
    """Experts touched on the average and the busiest GPU for batches of 1 to ``max_batch`` tokens."""
    chart = "expert-load"
    p = read_params(chart, EXPERT_LOAD_PARAMS, given)
    model = MODELS[p["model"]]
    if model.moe is None:
        raise ChartError(chart, "model", f"{model.name} is dense: it has no experts", "model: deepseek-v3")
    batches = sorted(
        {max(1, round(2 ** (i / 2))) for i in range(int(2 * math.log2(p["max_batch"])) + 1)}
        | {p["max_batch"]}
    )
    held = math.ceil(model.moe.experts / p["gpus"])
    points: list[Row] = []
    table = []
    for batch in batches:
        load = _computed(chart, "gpus", "use fewer GPUs", partial(expert_load, p["model"], p["gpus"], batch))
        for series, value in (
            ("busiest GPU", load.busiest_gpu_experts),
            ("average GPU", load.mean_gpu_experts),
        ):
            points.append(
                {
                    "series": series,
                    "colour": EXPERT_LOAD_COLOURS[series],
                    "batch": batch,
                    "experts": value,
                    "share_pct": 100.0 * value / held,
                }
            )
        if batch in {1, 4, 16, 64, 256, p["max_batch"]}:
            table.append(
                (
                    str(batch),
                    f"{load.mean_gpu_experts:.2f}",
                    f"{load.busiest_gpu_experts:.2f}",
                    f"{load.imbalance:.2f}x",
                )
            )
    caption = (
        f"{model.name}'s {model.moe.experts} routed experts per layer spread over {p['gpus']} GPUs "
        f"({held} each, the dashed line), {model.moe.experts_per_token} chosen per token at random: the "
        "experts touched on the average GPU and on the busiest one, against the batch. A decode step reads "
        "every touched expert's weights and waits for the busiest GPU."
    )
    return ChartData(
        chart,
        p,
        {"points": points, "held": [{"experts": float(held)}]},
        ("Batch (tokens)", "Average GPU", "Busiest GPU", "Busiest / average"),
        tuple(table),
        caption,
    )
