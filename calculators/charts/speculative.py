"""The speculative-decoding lesson's chart: speed-up over plain decoding against the batch, per acceptance.

Each point is one batch size: the plain decode step's time per token over the speculative step's
(:func:`calculators.speculative.speculative_decoding`), so 1 is break-even and below it speculation slows
decoding down. One series per acceptance rate, in the ordered shades; points whose batch does not fit in
memory while speculating (beside the drafter, each sequence caching its proposals too:
``Scenario.speculative_max_batch``) are hollow.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from calculators.charts.content import ChartData, Row, _computed, _tokens, short_gpu_name
from calculators.charts.palette import sequential_colours
from calculators.charts.params import (
    Param,
    read_acceptances,
    read_choice,
    read_count,
    read_gpu,
    read_model,
    read_params,
    read_precision,
)
from calculators.models import MODELS
from calculators.scenario import Scenario
from calculators.speculative import DRAFTERS

SPECULATIVE_SPEEDUP_PARAMS: tuple[Param, ...] = (
    Param("model", "llama-3.1-70b", read_model, "model: llama-3.1-70b", "target model"),
    Param("gpu", "h200", read_gpu, "gpu: h200", "GPU preset"),
    Param("precision", "fp8", read_precision, "precision: fp8", "weight format of target and draft"),
    Param("drafter", "model", read_choice(DRAFTERS), "drafter: heads", "model, heads or ngram"),
    Param(
        "draft_model", "llama-3.1-8b", read_model, "draft_model: llama-3.1-8b", "draft model (drafter: model)"
    ),
    Param("proposed", 4, read_count(1, 16, "a number of proposed tokens"), "proposed: 4", "tokens proposed"),
    Param(
        "acceptance",
        (0.6, 0.7, 0.8),
        read_acceptances,
        "acceptance: [0.6, 0.8]",
        "per-token acceptance rates, one curve each",
    ),
    Param(
        "context",
        1000,
        read_count(1, 1 << 17, "a context length"),
        "context: 1000",
        "tokens each sequence attends",
    ),
    Param(
        "max_batch", 256, read_count(2, 2048, "a batch size"), "max_batch: 256", "largest batch on the curve"
    ),
)


def speculative_speedup(**given: Any) -> ChartData:
    """Speed-up of speculative decoding over plain decoding for batch 1 to ``max_batch``, per acceptance."""
    chart = "speculative-speedup"
    p = read_params(chart, SPECULATIVE_SPEEDUP_PARAMS, given)
    context, k = p["context"], p["proposed"]
    draft = p["draft_model"] if p["drafter"] == "model" else None
    fits_up_to = _computed(
        chart, "model", "use a GPU with more memory, a smaller precision or a smaller draft_model",
        partial(
            Scenario(p["model"], p["gpu"], precision=p["precision"]).speculative_max_batch,
            k, context, p["drafter"], draft,
        ),
    )  # fmt: skip
    # Batches at steps of sqrt(2), the end, and the largest that fits: the last solid point is the limit.
    batches = sorted(
        {max(1, round(2 ** (i / 2))) for i in range(int(2 * math.log2(p["max_batch"])) + 1)}
        | {p["max_batch"]}
        | ({fits_up_to} if 1 <= fits_up_to < p["max_batch"] else set())
    )
    scenario = Scenario(p["model"], p["gpu"], precision=p["precision"], ignore_memory=True)
    colours = sequential_colours(len(p["acceptance"]))
    points: list[Row] = []
    for acceptance, colour in zip(p["acceptance"], colours, strict=True):
        series = f"acceptance {acceptance:g}"
        for batch in batches:
            result = _computed(
                chart, "drafter", "use drafter: heads or a smaller draft_model",
                partial(scenario.speculative, acceptance, k, batch, context, p["drafter"], draft),
            )  # fmt: skip
            points.append(
                {
                    "series": series,
                    "colour": colour,
                    "batch": batch,
                    "speedup": result.speedup,
                    "tokens_per_step": result.expected_tokens_per_step,
                    "verify": f"verifier {result.verify.bound}-bound",
                    "fits": "fits" if batch <= fits_up_to else "does not fit",
                }
            )
    shown = {1, 8, 64, p["max_batch"]}
    table = tuple(
        (str(row["batch"]), row["series"], f"{row['speedup']:.2f}x", row["verify"], row["fits"])
        for row in points
        if row["batch"] in shown
    )
    drafter = {
        "model": f"{MODELS[draft].name if draft else ''} as the draft model",
        "heads": "draft heads of one layer each (and the output layer)",
        "ngram": "n-gram lookup (free)",
    }[p["drafter"]]
    caption = (
        f"Speculative decoding of {MODELS[p['model']].name} ({p['precision'].upper()}) on one "
        f"{short_gpu_name(p['gpu'])}, {drafter}, {k} tokens proposed per step, each sequence at "
        f"{_tokens(context)} of context: speed-up over plain decoding against the batch, one curve per "
        "acceptance rate; below 1, speculation is slower. Hollow points do not fit in memory."
    )
    return ChartData(
        chart,
        p,
        {"points": points},
        ("Batch", "Acceptance", "Speed-up", "Verifier", "Memory"),
        table,
        caption,
    )
