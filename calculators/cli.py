"""``python -m calculators``: the calculators from a terminal, as readable tables or as JSON for scripts.

Subcommands:
  presets   the GPU and model presets with their key figures and sources
  roofline  ridge points, or where a given arithmetic intensity falls on each GPU's roofline
  phases    prefill and decode of one request: the prefill-vs-decode lesson's numbers for any setup
  simulate  many requests served over time: TTFT, TPOT, throughput, goodput, KV memory (calculators.simulator)

A GPU or a model can be a preset name or numbers (``--gpu-tflops/--gpu-tbps/--gpu-gb``, ``--params-billion``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from calculators.hardware import GPU, GPUS, custom_gpu, get_gpu
from calculators.models import MODELS, Model, custom_dense_model, get_model
from calculators.passes import LEVELS, make_setup
from calculators.precision import PRECISIONS
from calculators.roofline import attainable_flops_per_s, bound_at, ridge_point
from calculators.scenario import Scenario
from calculators.simulator import command_line as simulate_command
from calculators.units import format_value


def _table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


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
            "memory_bandwidth_bytes_per_s": g.memory_bandwidth_bytes_per_s,
            "memory_capacity_bytes": g.memory_capacity_bytes,
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
    return {"gpus": gpu_records, "models": model_records}, text


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


def _scenario(args: argparse.Namespace, gpus: int) -> Scenario:
    return Scenario(
        _model_from(args),
        _gpu_from(args),
        precision=args.precision,
        level=args.level,
        gpus=gpus,
        compute_efficiency=args.compute_efficiency,
        memory_efficiency=args.memory_efficiency,
    )


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
    }
    rows = [
        [
            name,
            format_value(result.flops, "GFLOP", digits=4),
            format_value(result.bytes_moved, "GB", digits=4),
            format_value(result.intensity_flop_per_byte, "number", digits=4),
            format_value(result.time_s, "ms", digits=3),
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
    summary = [
        f"{scenario.model.name} on {args.tensor_parallel} x {scenario.gpu.name}, {args.precision}, "
        f"{args.level} level;"
        f" prompt {args.prompt:,} tokens, {args.output:,} output tokens, batch {args.batch}",
        "",
        _table(rows, ["phase", "FLOPs", "bytes", "FLOP/byte", "time", "bound"]),
        "",
        *(f"{label.ljust(width)}  {value}" for label, value in facts),
    ]
    return record, "\n".join(summary)


def _simulate(args: argparse.Namespace) -> tuple[object, str]:
    setup = make_setup(
        _model_from(args),
        _gpu_from(args),
        precision=args.precision,
        level=args.level,
        gpus=args.tensor_parallel,
        compute_efficiency=args.compute_efficiency,
        memory_efficiency=args.memory_efficiency,
    )
    text = (
        f"{setup.model.name} on {args.tensor_parallel} x {setup.gpu.name} per replica, {args.precision}, "
        f"{args.level} level"
    )
    return simulate_command.run(args, setup, text)


def _add_setup_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="dense-8b", help="model preset (default dense-8b, the lesson's)")
    parser.add_argument("--params-billion", type=float, help="a dense model by its size instead of a preset")
    parser.add_argument("--gpu", default="h100-sxm", help="GPU preset (default h100-sxm)")
    parser.add_argument("--gpu-tflops", type=float, help="custom GPU: dense BF16 TFLOP/s")
    parser.add_argument("--gpu-fp8-tflops", type=float, help="custom GPU: dense FP8 TFLOP/s (optional)")
    parser.add_argument("--gpu-tbps", type=float, help="custom GPU: memory bandwidth, TB/s")
    parser.add_argument("--gpu-gb", type=float, help="custom GPU: memory, GB")
    parser.add_argument("--precision", default="bf16", choices=sorted(PRECISIONS))
    parser.add_argument("--level", default="simple", choices=LEVELS, help="simple (the lesson's) or refined")
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; its help text is the CLI's documentation."""
    parser = argparse.ArgumentParser(
        prog="python -m calculators",
        description="Ridgepoint's calculators: prefill, decode and the roofline at spec-sheet peaks "
        "(decimal units).",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (base SI units) instead of a table")
    sub = parser.add_subparsers(dest="command", required=True)

    # --json is accepted after the subcommand too ("phases --json"); SUPPRESS keeps a value given before it.
    json_after = argparse.ArgumentParser(add_help=False)
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; bad input prints the calculators' message and exits with status 2."""
    args = build_parser().parse_args(argv)
    handlers = {
        "presets": _presets,
        "roofline": _roofline,
        "phases": _phases,
        "simulate": _simulate,
    }
    try:
        record, text = handlers[args.command](args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(record, indent=2) if args.json else text)
    return 0
