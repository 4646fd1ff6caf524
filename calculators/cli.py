"""``python -m calculators``: the calculators from a terminal, as readable tables or as JSON for scripts.

Subcommands:
  presets   the GPU, model and interconnect presets with their key figures and sources
  roofline  ridge points, or where a given arithmetic intensity falls on each GPU's roofline
  phases    prefill and decode of one request: the prefill-vs-decode lesson's numbers for any setup,
            with each pass broken down by operator, and what fits in memory
  simulate  many requests served over time: TTFT, TPOT, throughput, goodput, KV memory (calculators.simulator)
  speculative  speculative decoding against plain decode: tokens per step, speed-up, best k, break-even batch

A GPU or a model can be a preset name or numbers (``--gpu-tflops/--gpu-tbps/--gpu-gb``, ``--params-billion``).
Bad input prints one line naming the flag and the fix and exits with status 2; with ``--json`` the
error is a JSON object too, so a script always gets valid JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from calculators.hardware import GPU, GPUS, custom_gpu, get_gpu
from calculators.interconnect import INTERCONNECTS
from calculators.models import MODELS, Model, custom_dense_model, get_model
from calculators.passes import LEVELS, PassResult
from calculators.precision import PRECISIONS
from calculators.roofline import attainable_flops_per_s, bound_at, ridge_point
from calculators.scenario import Scenario
from calculators.simulator import command_line as simulate_command
from calculators.speculative import DRAFTERS, best_proposed, break_even_batch, speculative_decoding
from calculators.units import format_duration, format_value


def _table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


class UsageError(ValueError):
    """A command line argparse cannot read (unknown flag, a word where a number goes)."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so ``main`` can answer in JSON when asked to."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _gpu_from(args: argparse.Namespace) -> GPU:
    numbers = (args.gpu_tflops, args.gpu_tbps, args.gpu_gb)
    if any(n is not None for n in (*numbers, args.gpu_fp8_tflops)):
        if None in numbers:
            raise ValueError("a GPU given by numbers needs all of --gpu-tflops, --gpu-tbps and --gpu-gb")
        return custom_gpu(
            bf16_tflops=args.gpu_tflops,
            fp8_tflops=args.gpu_fp8_tflops,
            memory_bandwidth_tb_per_s=args.gpu_tbps,
            memory_gb=args.gpu_gb,
        )
    return get_gpu(args.gpu)


def _scaled(value: float, suffix: str) -> str:
    """A count of FLOPs or bytes with a decimal prefix that suits its size: "1.61 G", "8.39 M"."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:,.3g} {prefix}{suffix}"
    return f"{value:,.3g} {suffix}"


def _operator_rows(result: PassResult) -> list[list[str]]:
    """The per-operator breakdown of a pass: each kernel's FLOPs, bytes, time and share of the pass."""
    rows = []
    for op in result.operators:
        rows.append(
            [
                op.name,
                "-" if op.flops == 0 else _scaled(op.flops, "FLOP"),
                _scaled(op.bytes_moved, "B"),
                format_duration(op.time_s),
                f"{op.time_s / result.time_s:.0%}",
                op.bound,
            ]
        )
    engine = result.overhead_s - result.host_wait_s
    waits = (("per-step overhead", engine), ("waiting for the host to issue kernels", result.host_wait_s))
    for name, seconds in waits:
        if seconds:
            rows.append([name, "-", "-", format_duration(seconds), f"{seconds / result.time_s:.0%}", "-"])
    return rows


def _model_from(args: argparse.Namespace) -> Model:
    if args.params_billion is not None:
        return custom_dense_model(params_billion=args.params_billion)
    return get_model(args.model)


def _presets(args: argparse.Namespace) -> tuple[object, str]:
    gpus = list(GPUS.values())
    models = list(MODELS.values())
    gpu_records = [
        {
            "key": g.key,
            "name": g.name,
            "bf16_dense_flops_per_s": g.dense_flops_per_s.get("bf16"),
            "fp8_dense_flops_per_s": g.dense_flops_per_s.get("fp8"),
            "int8_dense_flops_per_s": g.dense_flops_per_s.get("int8"),
            "fp4_dense_flops_per_s": g.dense_flops_per_s.get("fp4"),
            "memory_bandwidth_bytes_per_s": g.memory_bandwidth_bytes_per_s,
            "memory_capacity_bytes": g.memory_capacity_bytes,
            "usable_memory_bytes": g.usable_memory_bytes,
            "interconnect": g.interconnect,
            "ridge_point_bf16_flop_per_byte": ridge_point(g, "bf16"),
            "source": g.source,
            "notes": list(g.notes),
        }
        for g in gpus
    ]
    model_records = [
        {
            "key": m.key,
            "name": m.name,
            "moe": m.moe is not None,
            "params": m.params,
            "derived_params": m.derived_params,
            "published_params": m.published_params,
            "active_params": m.active_params,
            "layers": m.layers,
            "attention": m.attention,
            "kv_cache_bytes_per_token_bf16": m.kv_cache_bytes_per_token(2.0),
            "source": m.source,
            "notes": list(m.notes),
        }
        for m in models
    ]

    def tflops(g: GPU, precision: str) -> str:
        peak = g.dense_flops_per_s.get(precision)
        return "-" if peak is None else format_value(peak, "TFLOP/s", decimals=1)

    gpu_rows = [
        [
            g.key,
            tflops(g, "bf16"),
            tflops(g, "fp8"),
            format_value(g.memory_bandwidth_bytes_per_s, "TB/s", decimals=2),
            format_value(g.memory_capacity_bytes, "GB", decimals=0),
            format_value(ridge_point(g, "bf16"), "number", decimals=0),
        ]
        for g in gpus
    ]
    model_rows = [
        [
            m.key,
            format_value(m.params, "B", digits=4),
            format_value(m.active_params, "B", digits=4),
            str(m.layers),
            m.attention,
            format_value(m.kv_cache_bytes_per_token(2.0) / 1e3, "number", decimals=1) + " kB",
        ]
        for m in models
    ]
    text = (
        "GPUs (dense peaks, decimal units)\n"
        + _table(gpu_rows, ["gpu", "BF16", "FP8", "bandwidth", "memory", "ridge (BF16, FLOP/byte)"])
        + "\n\nModels (parameters derived from config shapes)\n"
        + _table(model_rows, ["model", "params", "active/token", "layers", "attention", "KV/token (BF16)"])
        + "\n\nSources: python -m calculators presets --json"
    )
    link_records = [
        {
            "key": link.key,
            "name": link.name,
            "bandwidth_bytes_per_s": link.bandwidth_bytes_per_s,
            "latency_s": link.latency_s,
            "hop_latency_s": link.hop_latency_s,
            "source": link.source,
            "notes": list(link.notes),
        }
        for link in INTERCONNECTS.values()
    ]
    link_rows = [
        [
            link.key,
            format_value(link.bandwidth_bytes_per_s, "GB/s", digits=3),
            format_value(link.latency_s, "us", digits=2),
            format_value(link.hop_latency_s, "us", digits=2),
        ]
        for link in INTERCONNECTS.values()
    ]
    text += "\n\nInterconnects (per GPU, each direction)\n" + _table(
        link_rows, ["link", "bandwidth", "latency", "per step"]
    )
    return {"gpus": gpu_records, "models": model_records, "interconnects": link_records}, text


def _roofline(args: argparse.Namespace) -> tuple[object, str]:
    if args.gpus:
        chips = [get_gpu(key) for key in args.gpus]  # a named GPU without this precision is an error
    else:
        chips = [g for g in GPUS.values() if args.precision in g.dense_flops_per_s]
    records: list[dict[str, object]] = []
    rows: list[list[str]] = []
    header = ["gpu", f"ridge ({args.precision}, FLOP/byte)"]
    if args.intensity is not None:
        header += [f"at {args.intensity:g} FLOP/byte", "attainable"]
    for chip in chips:
        ridge = ridge_point(chip, args.precision)
        record: dict[str, object] = {
            "gpu": chip.key,
            "precision": args.precision,
            "ridge_point_flop_per_byte": ridge,
        }
        row = [chip.key, format_value(ridge, "number", decimals=1)]
        if args.intensity is not None:
            attainable = attainable_flops_per_s(args.intensity, chip, args.precision)
            bound = bound_at(args.intensity, ridge)
            record |= {
                "intensity_flop_per_byte": args.intensity,
                "bound": bound,
                "attainable_flops_per_s": attainable,
            }
            row += [f"{bound}-bound", format_value(attainable, "TFLOP/s", decimals=1)]
        records.append(record)
        rows.append(row)
    return records, _table(rows, header)


def _setup_options(args: argparse.Namespace, gpus: int) -> dict[str, Any]:
    """The setup keywords of ``phases`` and ``simulate`` (see :class:`calculators.passes.Setup`)."""
    return {
        "precision": args.precision,
        "level": args.level,
        "gpus": gpus,
        "compute_efficiency": args.compute_efficiency,
        "memory_efficiency": args.memory_efficiency,
        "kv_cache_format": args.kv_cache_format,
        "arithmetic_format": args.arithmetic_format,
        "kv_traffic": args.kv_traffic,
        "pipeline_stages": args.pipeline_stages,
        "expert_parallel": args.expert_parallel,
        "data_parallel_attention": args.dp_attention,
        "interconnect": args.interconnect,
        "communication_efficiency": args.communication_efficiency,
        "step_overhead_s": _overhead_s(args.step_overhead_ms),
        "memory_utilization": args.memory_utilization,
        "ignore_memory": args.ignore_memory,
        "mode": args.mode,
        "calibration": args.calibration,
    }


def _scenario(args: argparse.Namespace, gpus: int) -> Scenario:
    return Scenario(_model_from(args), _gpu_from(args), **_setup_options(args, gpus))


def _fewest_gpus_that_fit(args: argparse.Namespace, most: int = 64) -> int | None:
    """The smallest ``--tensor-parallel`` above the given one at which the request fits (up to ``most``)."""
    for gpus in range(args.tensor_parallel + 1, most + 1):
        try:
            _scenario(args, gpus).request(args.prompt, args.output, batch=args.batch)
        except ValueError:
            continue
        return gpus
    return None


def _phases(args: argparse.Namespace) -> tuple[object, str]:
    scenario = _scenario(args, args.tensor_parallel)
    try:
        timing = scenario.request(args.prompt, args.output, batch=args.batch)
    except ValueError as error:
        if "does not fit" not in str(error):
            raise
        # The calculators' message says what to change; here, say which flag changes it.
        fewest = _fewest_gpus_that_fit(args)
        flag = f"--tensor-parallel {fewest} (or --gpus {fewest})" if fewest else "--tensor-parallel N"
        raise ValueError(
            f"{error}. On the command line: {flag}, --precision fp8 or a smaller --batch"
        ) from None
    first = timing.prefill
    step = timing.first_decode
    plan = scenario.setup.memory
    context = args.prompt + args.output
    fits_batch = plan.max_sequences(context) if scenario.model.shapes_known else None
    warnings = list(dict.fromkeys([*first.warnings, *step.warnings]))
    record = {
        "model": scenario.model.key,
        "gpu": scenario.gpu.key,
        "precision": args.precision,
        "level": args.level,
        "tensor_parallel": args.tensor_parallel,
        "prefill": first.as_dict(),
        "decode_step": step.as_dict(),
        "request": timing.as_dict(),
        "ridge_point_flop_per_byte": scenario.ridge_point_flop_per_byte,
        "prompt_tokens_per_decode_step": scenario.prompt_tokens_per_decode_step(),
        "weight_format": scenario.setup.weight_format,
        "kv_cache_format": scenario.setup.kv_cache_format,
        "arithmetic_format": scenario.setup.arithmetic,
        "pipeline_stages": scenario.setup.pipeline_stages,
        "operators": {
            "prefill": [op.as_dict() for op in first.operators],
            "decode_step": [op.as_dict() for op in step.operators],
        },
        "memory": {
            "device_bytes_per_gpu": plan.device_bytes,
            "memory_utilization": plan.memory_utilization,
            "weight_bytes_per_gpu": plan.weight_bytes_per_gpu,
            "runtime_reserve_bytes_per_gpu": plan.runtime_reserve_bytes,
            "activation_workspace_bytes_per_gpu": plan.activation_workspace_bytes,
            "kv_budget_bytes": plan.kv_budget_bytes,
            "max_batch_at_this_context": fits_batch,
        },
        "warnings": warnings,
    }
    rows = [
        [
            name,
            format_value(result.flops, "GFLOP", digits=4),
            format_value(result.bytes_moved, "GB", digits=4),
            format_value(result.intensity_flop_per_byte, "number", digits=4),
            format_value(result.time_s, "ms", digits=3),
            format_value(result.bound_time_s, "ms", digits=3),
            result.bound,
        ]
        for name, result in (("prefill", first), ("decode step", step))
    ]
    facts = [
        ("ridge point", format_value(first.ridge_point_flop_per_byte, "FLOP/byte", decimals=1)),
        (
            "prompt tokens per decode step",
            format_value(scenario.prompt_tokens_per_decode_step(), "tokens", digits=3),
        ),
        ("prefill costs", format_value(timing.prefill_cost_in_decode_steps, "steps", digits=3)),
        ("time to first token", format_value(timing.time_to_first_token_s, "ms", digits=3)),
        ("time per output token", format_value(timing.time_per_output_token_s, "ms", digits=3)),
        ("total time", format_value(timing.total_time_s, "s", digits=3)),
        ("output tokens/s (batch)", format_value(timing.tokens_per_s_total, "tokens/s", digits=4)),
    ]
    width = max(len(label) for label, _ in facts)
    setup = scenario.setup
    formats = f"weights {setup.weight_format}, arithmetic {setup.arithmetic}"
    if setup.level == "refined" or setup.kv_traffic:
        formats += f", KV cache {setup.kv_cache_format}"
    layout = f"{args.tensor_parallel} x {scenario.gpu.name}"
    if setup.pipeline_stages > 1:
        layout = f"{setup.pipeline_stages} stages of {layout}"
    operator_header = ["operator", "FLOPs", "bytes", "time", "share", "bound"]
    memory_line = (
        f"memory per GPU: weights {format_value(plan.weight_bytes_per_gpu, 'GB', digits=3)}, workspace "
        f"{format_value(plan.activation_workspace_bytes, 'GB', digits=2)}, reserve "
        f"{format_value(plan.runtime_reserve_bytes, 'GB', digits=2)}, of "
        f"{format_value(plan.device_bytes, 'GB', digits=3)} x {plan.memory_utilization:.0%}"
    )
    if fits_batch is not None:
        memory_line += f"; at most {fits_batch:,} sequences of {context:,} tokens fit"
    if setup.mode == "calibrated":
        achieved = (
            f"calibrated ({setup.calibration}: kernels fitted to Vidur's published A100/H100 profiles); "
            "the spec-peak bound beside it"
        )
    elif (setup.compute_efficiency, setup.memory_efficiency, setup.step_overhead_s) == (1.0, 1.0, 0.0):
        achieved = "at spec-sheet peaks, no per-step overhead"
    else:
        achieved = (
            f"at {setup.compute_efficiency:.0%} of peak FLOP/s and {setup.memory_efficiency:.0%} of peak "
            f"bandwidth, {format_duration(setup.step_overhead_s)} per step"
        )
    summary = [
        f"{scenario.model.name} on {layout}, {formats}, {args.level} level;"
        f" prompt {args.prompt:,} tokens, {args.output:,} output tokens, batch {args.batch}; {achieved}",
        "",
        _table(rows, ["phase", "FLOPs", "bytes", "FLOP/byte", "time", "spec-peak time", "bound"]),
        "",
        *(f"{label.ljust(width)}  {value}" for label, value in facts),
        "",
        "Operators of the prefill pass (time = sum of max(compute, memory) per operator, plus communication)",
        _table(_operator_rows(first), operator_header),
        "",
        "Operators of the first decode step",
        _table(_operator_rows(step), operator_header),
        "",
        memory_line,
        *(f"warning: {warning}" for warning in warnings),
    ]
    return record, "\n".join(summary)


def _overhead_s(milliseconds: float) -> float:
    if not isinstance(milliseconds, float | int) or not math.isfinite(milliseconds) or milliseconds < 0:
        raise ValueError(f"--step-overhead-ms must be a finite number >= 0, got {milliseconds!r}")
    return milliseconds * 1e-3


def _simulate(args: argparse.Namespace) -> tuple[object, str]:
    setup = _scenario(args, args.tensor_parallel).setup
    layout = f"{setup.gpus} x {setup.gpu.name}"
    if setup.pipeline_stages > 1:
        layout = f"{setup.pipeline_stages} stages of {layout}"
    text = f"{setup.model.name} on {layout} per replica, weights {setup.weight_format}, {setup.level} level"
    if setup.mode == "calibrated":
        text += f"; step times calibrated ({setup.calibration}; --mode peak for the spec-peak bound)"
    else:
        text += "; step times at spec-sheet peaks, a lower bound (--mode calibrated for measured kernels)"
    return simulate_command.run(args, setup, text)


def _drafter(args: argparse.Namespace) -> dict[str, Any]:
    """``--draft``: "heads", "ngram", or a model preset (the draft model)."""
    if args.draft in DRAFTERS and args.draft != "model":
        return {"drafter": args.draft, "draft_layers": args.draft_layers}
    if args.draft == "model":
        raise ValueError("--draft takes a model preset (e.g. llama-3.1-8b), heads or ngram; got 'model'")
    return {"drafter": "model", "draft_model": args.draft, "draft_layers": args.draft_layers}


def _speculative(args: argparse.Namespace) -> tuple[object, str]:
    setup = _scenario(args, args.tensor_parallel).setup
    drafter = _drafter(args)
    common = {"acceptance": args.acceptance, "context_tokens": args.context, **drafter}
    result = speculative_decoding(setup, proposed=args.proposed, batch=args.batch, **common)
    best = best_proposed(setup, batch=args.batch, **common)
    even = break_even_batch(setup, proposed=args.proposed, **common)
    fits = setup.memory.max_sequences(args.context) if setup.model.shapes_known else None
    record = {
        "model": setup.model.key,
        "gpu": setup.gpu.key,
        "draft": args.draft,
        **result.as_dict(),
        "best_proposed": best.proposed,
        "best_speedup": best.speedup,
        "break_even_batch": even,
        "max_batch_at_this_context": fits,
    }
    what = {
        "heads": f"draft heads ({args.draft_layers:g} target layer and the output layer per draft step)",
        "ngram": "n-gram lookup",
    }
    drafter_name = what.get(args.draft, f"draft model {args.draft}")
    estimate = "calibrated estimate" if setup.mode == "calibrated" else "spec-peak bound"
    rows = [
        ["plain decode step", format_value(result.plain.time_s, "ms", digits=3), "1", result.plain.bound],
        [
            f"speculative step (draft {format_value(result.draft_time_s, 'ms', digits=3)})",
            format_value(result.step_time_s, "ms", digits=3),
            f"{result.expected_tokens_per_step:.4g}",
            f"verifier {result.verify.bound}",
        ],
    ]
    if even is None:
        even_text = "none up to about a million sequences"
    else:
        even_text = f"{even:,} sequences"
        if fits is not None and even > fits:
            even_text += f" (more than the {fits:,} that fit in memory at this context)"
    facts = [
        ("tokens per step", f"(1 - a^(k+1)) / (1 - a) = {result.expected_tokens_per_step:.4f}"),
        ("time per token", f"{format_value(result.time_per_token_s, 'ms', digits=3)} against "
                           f"{format_value(result.plain_time_per_token_s, 'ms', digits=3)} plain"),
        (f"speed-up ({estimate})", f"{result.speedup:.3f}x"),
        *([("speed-up at spec peaks", f"{result.bound_speedup:.3f}x")] if setup.mode == "calibrated" else []),
        ("best k at this batch", f"{best.proposed} ({best.speedup:.3f}x)"),
        ("slower than plain from batch", even_text),
    ]  # fmt: skip
    width = max(len(label) for label, _ in facts)
    text = "\n".join(
        [
            f"{setup.model.name} on {setup.gpus} x {setup.gpu.name}, weights {setup.weight_format}, "
            f"{setup.level} level, {setup.mode} mode; {drafter_name}; acceptance {args.acceptance:g}, "
            f"k = {args.proposed} proposed, batch {args.batch}, context {args.context:,} tokens",
            "",
            _table(rows, ["step", "time", "tokens per sequence", "bound"]),
            "",
            *(f"{label.ljust(width)}  {value}" for label, value in facts),
            *(f"warning: {warning}" for warning in result.warnings),
        ]
    )
    return record, text


def _add_setup_options(parser: argparse.ArgumentParser) -> None:
    """The model, GPU, formats and parallel layout: the same flags for ``phases`` and ``simulate``."""
    parser.add_argument("--model", default="dense-8b", help="model preset (default dense-8b, the lesson's)")
    parser.add_argument("--params-billion", type=float, help="a dense model by its size instead of a preset")
    parser.add_argument("--gpu", default="h100-sxm", help="GPU preset (default h100-sxm)")
    parser.add_argument("--gpu-tflops", type=float, help="custom GPU: dense BF16 TFLOP/s")
    parser.add_argument("--gpu-fp8-tflops", type=float, help="custom GPU: dense FP8 TFLOP/s (optional)")
    parser.add_argument("--gpu-tbps", type=float, help="custom GPU: memory bandwidth, TB/s")
    parser.add_argument("--gpu-gb", type=float, help="custom GPU: memory, GB")
    parser.add_argument(
        "--precision",
        "--weight-format",
        dest="precision",
        default="bf16",
        choices=sorted(PRECISIONS),
        help="weight format (int4: W4A16 with group scales, about 4.25 bits)",
    )
    parser.add_argument(
        "--kv-cache-format", default="bf16", choices=sorted(PRECISIONS), help="KV-cache format (default bf16)"
    )
    parser.add_argument(
        "--arithmetic-format",
        choices=sorted(f for f, p in PRECISIONS.items() if p.arithmetic),
        help="format of the maths (default: the weight format where the GPU computes in it, else bf16)",
    )
    parser.add_argument("--level", default="simple", choices=LEVELS, help="simple (the lesson's) or refined")
    parser.add_argument(
        "--kv-traffic", action="store_true", help="simple level: add attention over the KV cache"
    )
    parser.add_argument(
        "--tensor-parallel",
        "--gpus",
        type=int,
        default=1,
        metavar="G",
        help="GPUs sharing the model by tensor parallelism (default 1); --gpus is the same",
    )
    parser.add_argument("--compute-efficiency", type=float, default=1.0, help="share of peak FLOP/s reached")
    parser.add_argument(
        "--memory-efficiency", type=float, default=1.0, help="share of peak bandwidth reached"
    )
    parser.add_argument(
        "--pipeline-stages",
        "--pipeline-parallel",
        type=int,
        default=1,
        metavar="P",
        help="pipeline stages (default 1); --pipeline-parallel is the same",
    )
    parser.add_argument("--expert-parallel", action="store_true", help="MoE: experts spread over the GPUs")
    parser.add_argument(
        "--dp-attention", action="store_true", help="data-parallel attention (DeepSeek-style serving)"
    )
    parser.add_argument(
        "--interconnect", choices=sorted(INTERCONNECTS), help="link between GPUs (default: the GPU's own)"
    )
    parser.add_argument(
        "--communication-efficiency", type=float, default=1.0, help="share of link bandwidth reached"
    )
    parser.add_argument("--step-overhead-ms", type=float, default=0.0, help="fixed cost per pass, ms")
    parser.add_argument(
        "--mode",
        default="peak",
        choices=("peak", "calibrated"),
        help="peak (the default): the spec-peak roofline, a lower bound on time, which the lessons quote "
        "and teach from; calibrated: each kernel timed by curves fitted to Vidur's published A100/H100 "
        "measurements (an estimate of a 2024 engine's kernels; other GPUs extrapolated). Both figures are "
        "printed and in the JSON (time_s and bound_time_s)",
    )
    parser.add_argument(
        "--calibration",
        default="as-published",
        choices=("as-published", "current"),
        help="with --mode calibrated: as-published (the default: kernels and collectives as Vidur measured "
        "them, engine overhead and host launch floor as Splitwise's vLLM of 2023-24; what the validation "
        "checks) or current "
        "(CUDA-graph launch floors, one-shot all-reduce, the overhead of a vLLM 0.23 step)",
    )
    parser.add_argument(
        "--memory-utilization",
        type=float,
        default=0.9,
        help="share of GPU memory the engine uses (vLLM: 0.9)",
    )
    parser.add_argument(
        "--ignore-memory", action="store_true", help="compute a setup that does not fit, with a warning"
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; its help text is the CLI's documentation."""
    parser = _Parser(
        prog="python -m calculators",
        description="Ridgepoint's calculators: prefill, decode and the roofline at spec-sheet peaks "
        "(decimal units).",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (base SI units) instead of a table")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    # --json is accepted after the subcommand too ("phases --json"); SUPPRESS keeps a value given before it.
    json_after = _Parser(add_help=False)
    json_after.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")

    sub.add_parser("presets", parents=[json_after], help="list GPU and model presets with their figures")

    roof = sub.add_parser(
        "roofline", parents=[json_after], help="ridge points, or where an intensity falls on each roofline"
    )
    roof.add_argument(
        "--gpu", dest="gpus", action="append", metavar="GPU", help="GPU preset (repeatable; default all)"
    )
    roof.add_argument("--precision", default="bf16", choices=sorted(PRECISIONS))
    roof.add_argument("--intensity", type=float, help="an operation's arithmetic intensity, FLOP per byte")

    phases = sub.add_parser(
        "phases",
        parents=[json_after],
        help="prefill and decode of one request (default: the lesson's scenario)",
    )
    _add_setup_options(phases)
    phases.add_argument("--prompt", type=int, default=2000, help="prompt tokens (default 2000)")
    phases.add_argument("--output", type=int, default=256, help="output tokens (default 256)")
    phases.add_argument("--batch", type=int, default=1, help="requests decoded together (default 1)")

    simulate = sub.add_parser(
        "simulate",
        parents=[json_after],
        help="serve a workload over time: TTFT, TPOT, throughput, goodput, KV memory",
    )
    _add_setup_options(simulate)
    simulate_command.add_arguments(simulate)

    speculative = sub.add_parser(
        "speculative",
        parents=[json_after],
        help="speculative decoding against plain decode at one batch: speed-up, best k, break-even batch",
        description="A drafter proposes k tokens per sequence; the target checks them in one pass of "
        "batch x (k + 1) tokens and keeps (1 - a^(k+1)) / (1 - a) on average (independent acceptance a). "
        "It pays while that pass is memory-bound and turns into a slow-down once it is compute-bound.",
    )
    _add_setup_options(speculative)
    speculative.add_argument(
        "--draft",
        default="heads",
        metavar="DRAFT",
        help="the drafter: a model preset (a second, smaller model on the same GPUs, e.g. llama-3.1-8b), "
        "heads (Medusa/EAGLE-style draft heads, the default) or ngram (n-gram lookup, no GPU work)",
    )
    speculative.add_argument(
        "--draft-layers",
        type=float,
        default=1.0,
        help="with --draft heads: decoder layers of the target's size per draft step, besides the output "
        "layer each step runs (default 1.0, EAGLE's one layer)",
    )
    speculative.add_argument(
        "--acceptance",
        type=float,
        required=True,
        help="per-token acceptance rate a, in [0, 1): the chance each proposed token is kept",
    )
    speculative.add_argument(
        "--proposed", type=int, default=4, help="tokens proposed per step, k (default 4)"
    )
    speculative.add_argument("--batch", type=int, default=1, help="sequences decoded together (default 1)")
    speculative.add_argument(
        "--context", type=int, default=2000, help="tokens each sequence attends to (default 2000)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; bad input prints the calculators' message and exits with status 2.

    With ``--json`` everything printed on stdout is JSON, errors included (``{"error": ...}``), and a
    result that would hold a non-finite number is refused rather than printed as NaN or Infinity.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    wants_json = "--json" in arguments
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
        handlers = {
            "presets": _presets,
            "roofline": _roofline,
            "phases": _phases,
            "simulate": _simulate,
            "speculative": _speculative,
        }
        record, text = handlers[args.command](args)
        output = json.dumps(record, indent=2, allow_nan=False) if args.json else text
    except UsageError as error:
        return _fail(str(error), wants_json, usage=parser.format_usage())
    except (ValueError, OverflowError, ZeroDivisionError) as error:
        # OverflowError and ZeroDivisionError are bugs if they ever happen; they still get a message, not a
        # traceback, and json's "Out of range float values" lands here too.
        return _fail(str(error), wants_json)
    try:
        print(output)
    except BrokenPipeError:  # the reader stopped early (``| head``): not an error worth a traceback
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - Python flushes stdout again at exit
    return 0


def _fail(message: str, wants_json: bool, usage: str = "") -> int:
    if wants_json:
        print(json.dumps({"error": message}))
    else:
        print(f"{usage}error: {message}", file=sys.stderr)
    return 2
