"""The multi-GPU lessons' charts: a decode step's time by tensor-parallel degree, all-reduces apart; and a
pipeline's step throughput by the number of micro-batches its batch is split into.

One bar per degree (1, 2, 4, ... GPUs sharing every layer): the step's time in the active model setting, split
into the tensor-parallel collectives (:attr:`calculators.passes.PassResult.communication_time_s`) and
everything else (each GPU's kernels on its shard, the engine's per-step overhead). Degrees at which the
model and its KV cache do not fit in memory are kept, marked (the reader sees why they are not an option);
past the GPU's NVLink domain the all-reduces run over the inter-node link (``Setup.all_reduce_link_for``).

The pipeline chart times one engine step as the serving simulator does
(:func:`calculators.simulator.experiments.pipeline_step`, the synchronous schedule of
:mod:`calculators.simulator.pipeline`): one line per number of stages, tokens per second against the
micro-batches, for a prefill step (compute-bound: micro-batches fill the bubble) or a decode step
(memory-bound: each micro-batch reads the stage's weights again).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from calculators.charts.content import ChartData, Row, _computed, _in, _tokens, short_gpu_name
from calculators.charts.palette import TENSOR_PARALLEL_COLOURS, sequential_colours
from calculators.charts.params import (
    Param,
    _Invalid,
    read_batch,
    read_choice,
    read_count,
    read_gpu,
    read_model,
    read_params,
    read_precision,
)
from calculators.models import MODELS
from calculators.scenario import Scenario
from calculators.simulator.experiments import pipeline_step

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


MAX_STAGES = 8  # a lesson's pipelines: up to one stage per server of a small cluster
PHASES = ("prefill", "decode")


def read_stages(_: str, value: Any) -> tuple[int, ...]:
    """Numbers of pipeline stages, one line each, increasing: at most three (the ordered colours' ramp)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise _Invalid(f"expected a list of numbers of stages such as [2, 4], got {value!r}")
    stages = tuple(read_count(2, MAX_STAGES, "a number of pipeline stages")("stages", item) for item in value)
    if len(stages) > 3 or list(stages) != sorted(set(stages)):
        raise _Invalid(f"expected one to three increasing numbers of stages, got {list(stages)!r}")
    return stages


PIPELINE_PARAMS: tuple[Param, ...] = (
    Param("model", "llama-3.1-405b", read_model, "model: llama-3.1-405b", "model preset"),
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset"),
    Param("gpus", 8, read_count(1, 8, "a number of GPUs"), "gpus: 8", "tensor-parallel GPUs in each stage"),
    Param("phase", "prefill", read_choice(PHASES), "phase: decode", "prefill (fresh prompts) or decode"),
    Param("batch", 8, read_batch, "batch: 64", "prompts (prefill) or sequences (decode) in the step"),
    Param(
        "context",
        2000,
        read_count(1, 1 << 17, "a token count"),
        "context: 1000",
        "tokens of each prompt (prefill) or of each sequence's context (decode)",
    ),
    Param("stages", (2, 4, 8), read_stages, "stages: [2, 4]", "pipeline stages, one line each"),
    Param(
        "max_micro_batches",
        8,
        read_count(1, 64, "a number of micro-batches"),
        "max_micro_batches: 8",
        "most micro-batches (1, 2, 4, ... up to this)",
    ),
)


def pipeline_micro_batches(**given: Any) -> ChartData:
    """Tokens per second of one step through 2, 4, ... stages, against the micro-batches it is split into."""
    chart = "pipeline-micro-batches"
    p = read_params(chart, PIPELINE_PARAMS, given)
    counts = [2**i for i in range(p["max_micro_batches"].bit_length()) if 2**i <= p["max_micro_batches"]]
    work = (
        {"prompts": p["batch"], "prompt": p["context"]}
        if p["phase"] == "prefill"
        else {"decoding": p["batch"], "context": p["context"]}
    )
    points: list[Row] = []
    table = []
    for stages, colour in zip(p["stages"], sequential_colours(len(p["stages"])), strict=True):
        series = f"{stages} stages, {stages * p['gpus']} GPUs"
        for m in counts:
            step = _computed(
                chart, "batch", "use a smaller batch or context, or more GPUs per stage",
                partial(pipeline_step, stages, m, gpus=p["gpus"], model=p["model"], gpu=p["gpu"], **work),
            )  # fmt: skip
            points.append(
                {
                    "series": series,
                    "colour": colour,
                    "micro_batches": m,
                    "tokens_per_s": step.tokens_per_s,
                    "step_ms": _in("ms", step.step_s),
                    "speedup": step.speedup,
                    "bubble_pct": 100.0 * step.bubble_fraction,
                }
            )
            table.append(
                (
                    series,
                    str(m),
                    f"{_in('ms', step.step_s):,.0f} ms",
                    f"{step.tokens_per_s:,.0f}",
                    f"{step.speedup:.2f}x",
                    f"{100.0 * step.bubble_fraction:.0f} %",
                )
            )
    what = (
        f"{p['batch']} prompts of {_tokens(p['context'])} prefilled"
        if p["phase"] == "prefill"
        else f"{p['batch']} sequences decoding at {_tokens(p['context'])} of context"
    )
    caption = (
        f"One engine step of {MODELS[p['model']].name} on {short_gpu_name(p['gpu'])} GPUs, {p['gpus']} "
        f"per pipeline stage, {what}: tokens per second against the micro-batches the step is split into, "
        "one line per number of stages, in the synchronous schedule (every stage idles in the bubble)."
    )
    return ChartData(
        chart,
        p,
        {"points": points},
        ("Stages", "Micro-batches", "Step", "Tokens/s", "Against one pass", "Bubble"),
        tuple(table),
        caption,
    )
