"""The tensor-parallelism lesson's chart: a decode step's time by tensor-parallel degree, all-reduces apart.

One bar per degree (1, 2, 4, ... GPUs sharing every layer): the step's time in the active model setting, split
into the tensor-parallel collectives (:attr:`calculators.passes.PassResult.communication_time_s`) and
everything else (each GPU's kernels on its shard, the engine's per-step overhead). Degrees at which the
model and its KV cache do not fit in memory are kept, marked (the reader sees why they are not an option);
past the GPU's NVLink domain the collectives run over the inter-node link (``Setup.link_for``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from calculators.charts.content import ChartData, Row, _computed, _in, _tokens, short_gpu_name
from calculators.charts.palette import TENSOR_PARALLEL_COLOURS
from calculators.charts.params import (
    Param,
    read_batch,
    read_count,
    read_gpu,
    read_model,
    read_params,
    read_precision,
)
from calculators.models import MODELS
from calculators.scenario import Scenario

TENSOR_PARALLEL_PARAMS: tuple[Param, ...] = (
    Param("model", "llama-3.1-70b", read_model, "model: llama-3.1-70b", "model preset"),
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset"),
    Param("precision", "bf16", read_precision, "precision: bf16", "weight format"),
    Param("batch", 1, read_batch, "batch: 64", "sequences decoded together"),
    Param(
        "context",
        1000,
        read_count(1, 1 << 17, "a context length"),
        "context: 1000",
        "tokens each sequence attends",
    ),
    Param(
        "max_gpus",
        16,
        read_count(2, 64, "a number of GPUs"),
        "max_gpus: 16",
        "largest tensor-parallel degree",
    ),
)
PARTS = tuple(TENSOR_PARALLEL_COLOURS)  # ("all-reduces between GPUs", "each GPU's own work")


def tensor_parallel_decode(**given: Any) -> ChartData:
    """A decode step's time at tensor-parallel degrees 1, 2, 4, ... ``max_gpus``, all-reduces apart."""
    chart = "tensor-parallel-decode"
    p = read_params(chart, TENSOR_PARALLEL_PARAMS, given)
    degrees = [2**i for i in range(p["max_gpus"].bit_length()) if 2**i <= p["max_gpus"]]
    bars: list[Row] = []
    table = []
    for tp in degrees:
        fitting = Scenario(p["model"], p["gpu"], precision=p["precision"], level="refined", gpus=tp)
        room = _computed(chart, "model", "use a model preset", partial(fitting.max_batch, p["context"]))
        fits = room >= p["batch"]
        scenario = Scenario(
            p["model"], p["gpu"], precision=p["precision"], level="refined", gpus=tp, ignore_memory=True
        )
        step = _computed(
            chart, "model", "use a model preset", partial(scenario.decode, p["batch"], p["context"])
        )
        communication = step.communication_time_s
        own = step.time_s - communication
        memory = "fits" if fits else "does not fit"
        for part, value in zip(PARTS, (communication, own), strict=True):
            bars.append(
                {
                    "gpus": tp,
                    "part": part,
                    "colour": TENSOR_PARALLEL_COLOURS[part],
                    "ms": _in("ms", value),
                    "step_ms": _in("ms", step.time_s),
                    "share_pct": 100.0 * communication / step.time_s,
                    "fits": memory,
                    "order": PARTS.index(part),
                }
            )
        table.append(
            (
                str(tp),
                f"{_in('ms', step.time_s):.2f} ms",
                f"{_in('ms', communication):.2f} ms",
                f"{100.0 * communication / step.time_s:.0f} %",
                memory,
            )
        )
    gpu = short_gpu_name(p["gpu"])
    caption = (
        f"One decode step of {MODELS[p['model']].name} ({p['precision'].upper()}) on {gpu} GPUs, "
        f"batch {p['batch']}, each sequence at {_tokens(p['context'])} of context, by the number of GPUs "
        "sharing every layer: the all-reduces between GPUs and each GPU's own work. Pale bars do not fit in "
        "memory."
    )
    return ChartData(
        chart,
        p,
        {"bars": bars},
        ("GPUs", "Step", "All-reduces", "Share", "Memory"),
        tuple(table),
        caption,
    )
