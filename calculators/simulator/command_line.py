"""``python -m calculators simulate``: serve a stated workload and print what happened.

The options build a workload (Poisson arrivals at ``--rate``, a ``--burst``, or a ``--trace`` file), a
scheduler and a memory configuration; the setup options (model, GPU, precision, ...) are those of the other
subcommands and are parsed by :mod:`calculators.cli`. ``--sweep`` runs the same workload and options at
several rates.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from calculators.hardware import get_gpu
from calculators.interconnect import INTERCONNECTS
from calculators.passes import Setup
from calculators.simulator.engine import ROUTINGS
from calculators.simulator.kv_memory import (
    DEFAULT_SWAP_LINK,
    DEFAULT_SWAP_SPACE_GIB,
    KINDS,
    PREEMPTIONS,
    RESERVES,
    MemoryConfig,
)
from calculators.simulator.kv_transfer import KV_TRANSFERS, LINK_SHARINGS
from calculators.simulator.results import SLO, SimulationResult
from calculators.simulator.run_options import RunOptions
from calculators.simulator.schedulers import (
    DEFAULT_MAX_BATCH_TOKENS,
    DEFAULT_MAX_SEQUENCES,
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Scheduler,
    StaticBatching,
)
from calculators.simulator.speculation import Speculation
from calculators.simulator.sweep import sweep_rates
from calculators.simulator.workload import (
    MAX_REQUESTS,
    Chats,
    Lengths,
    Request,
    SharedPrefix,
    trace_workload,
)
from calculators.speculative import DRAFTERS
from calculators.units import format_duration, format_value
from calculators.validation import count

SCHEDULERS = ("continuous", "chunked", "static", "disaggregated")
MAX_POOL_TENSOR_PARALLEL = 64  # GPUs per replica of a pool: past an NVLink domain of 72, none run one model


def lengths_from_text(field: str, text: str) -> Lengths:
    """``512`` (fixed), ``uniform:LOW:HIGH`` or ``lognormal:MEAN:SPREAD`` (spread = standard deviation)."""
    parts = text.strip().split(":")
    try:
        if len(parts) == 1:
            return Lengths.fixed(int(parts[0]))
        if parts[0] == "uniform" and len(parts) == 3:
            return Lengths.uniform(int(parts[1]), int(parts[2]))
        if parts[0] == "lognormal" and len(parts) in (3, 4):
            cap = int(parts[3]) if len(parts) == 4 else None
            return Lengths.lognormal(float(parts[1]), float(parts[2]), cap=cap)
    except ValueError as error:
        raise ValueError(f"{field} {text!r}: {error}") from None
    raise ValueError(
        f"{field} {text!r} is not a length; give a number of tokens (512), uniform:LOW:HIGH, or "
        "lognormal:MEAN:SPREAD[:CAP]"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The workload, scheduler, memory and SLO options of ``simulate``."""
    work = parser.add_argument_group("workload")
    work.add_argument("--requests", type=int, default=200, help="requests in the workload (default 200)")
    work.add_argument("--rate", type=float, default=5.0, help="Poisson arrivals per second (default 5)")
    work.add_argument("--burst", action="store_true", help="every request arrives at t = 0 instead")
    work.add_argument("--trace", help="CSV or JSON file of arrival_s, prompt_tokens, output_tokens rows")
    work.add_argument(
        "--prompt",
        default="lognormal:512:256",
        help="prompt tokens: N, uniform:LOW:HIGH or lognormal:MEAN:SPREAD[:CAP] (default lognormal:512:256)",
    )
    work.add_argument(
        "--output", default="lognormal:128:64", help="output tokens, as --prompt (default lognormal:128:64)"
    )
    work.add_argument("--seed", type=int, default=0, help="seed of the workload's random draws (default 0)")
    work.add_argument(
        "--shared-prefix",
        type=int,
        help="tokens of a system prompt put before the drawn prompts (default none)",
    )
    work.add_argument(
        "--prefix-share", type=float, default=1.0, help="share of requests with a system prompt (default 1)"
    )
    work.add_argument("--prefixes", type=int, default=1, help="distinct system prompts (default 1)")
    work.add_argument(
        "--turns",
        type=int,
        help="group the requests into chats of this many turns, each prompt holding the previous turn's "
        "prompt and answer; --prompt is then each turn's new message (default: no chats)",
    )
    work.add_argument(
        "--think-time",
        type=float,
        default=10.0,
        help="chats: seconds from one turn's arrival to the next (default 10)",
    )
    sched = parser.add_argument_group("scheduler")
    sched.add_argument("--scheduler", default="continuous", choices=SCHEDULERS)
    sched.add_argument("--batch-size", type=int, default=32, help="static batching: batch size (default 32)")
    sched.add_argument(
        "--batch-timeout",
        type=float,
        help="static batching: start a partial batch once its oldest request has waited this long, s "
        "(default: wait for a full batch or the last arrival)",
    )
    sched.add_argument(
        "--token-budget",
        type=int,
        default=512,
        help="chunked: tokens per step, vLLM's max_num_batched_tokens with chunked prefill (default 512)",
    )
    sched.add_argument(
        "--max-sequences",
        type=int,
        default=DEFAULT_MAX_SEQUENCES,
        help=f"most requests running at once, vLLM's max_num_seqs (default {DEFAULT_MAX_SEQUENCES})",
    )
    sched.add_argument(
        "--max-batch-tokens",
        type=int,
        default=DEFAULT_MAX_BATCH_TOKENS,
        help="continuous, disaggregated: most prompt tokens in one prefill step, vLLM's "
        f"max_num_batched_tokens (default {DEFAULT_MAX_BATCH_TOKENS:,}); chunked: see --token-budget",
    )
    sched.add_argument("--prefill-gpus", type=int, default=1, help="disaggregated: prefill pool GPUs")
    sched.add_argument("--decode-gpus", type=int, default=1, help="disaggregated: decode pool GPUs")
    sched.add_argument(
        "--link", default="nvlink4", choices=sorted(INTERCONNECTS), help="disaggregated: KV link (nvlink4)"
    )
    sched.add_argument(
        "--kv-transfer",
        choices=KV_TRANSFERS,
        help="disaggregated: send each cache whole once its prefill is done, or each layer's once that "
        "layer is computed, overlapping the prefill (default whole)",
    )
    sched.add_argument(
        "--link-sharing",
        choices=LINK_SHARINGS,
        help="disaggregated: which caches queue for the same links, first come first served: each prefill "
        "replica's, each prefill and each decode replica's, or all (default sender)",
    )
    for pool in ("prefill", "decode"):
        sched.add_argument(f"--{pool}-gpu", help=f"disaggregated: the {pool} pool's GPU (default --gpu)")
        sched.add_argument(
            f"--{pool}-tensor-parallel",
            type=int,
            help=f"disaggregated: GPUs per {pool} replica (default --tensor-parallel)",
        )
    sched.add_argument(
        "--micro-batches",
        type=int,
        default=1,
        metavar="M",
        help="with --pipeline-parallel P > 1: split each step's batch into M micro-batches that follow one "
        "another through the stages, each stage idle (P - 1) / (M + P - 1) of the step (default 1: one pass)",
    )
    sched.add_argument("--replicas", type=int, default=1, help="independent copies of the setup (default 1)")
    sched.add_argument(
        "--routing",
        default="round-robin",
        choices=ROUTINGS,
        help="replicas: send requests in turn, or each to the replica with the fewest unfinished, or (with "
        "--prefix-caching) to the one caching the longest prefix of its prompt (continuous, chunked) "
        "(default round-robin)",
    )
    spec = parser.add_argument_group("speculative decoding")
    spec.add_argument(
        "--speculative",
        action="store_true",
        help="each decode step verifies --proposed drafted tokens per request (continuous, chunked, "
        "disaggregated; paged memory)",
    )
    spec.add_argument(
        "--acceptance",
        type=float,
        help="speculative: mean per-token acceptance rate a, strictly between 0 and 1 (required)",
    )
    spec.add_argument(
        "--proposed", type=int, default=4, help="speculative: tokens proposed per step, k (default 4)"
    )
    spec.add_argument(
        "--drafter",
        default="heads",
        choices=DRAFTERS,
        help="speculative: draft heads on the target (default), a draft model (--draft-model), or ngram",
    )
    spec.add_argument("--draft-model", help="speculative, --drafter model: the draft model preset")
    spec.add_argument(
        "--draft-layers",
        type=float,
        default=1.0,
        help="speculative, --drafter heads: one draft step's cost in target layers (default 1.0)",
    )
    spec.add_argument(
        "--acceptance-concentration",
        type=float,
        help="speculative: draw each request's rate from Beta(a c, (1 - a) c) with this c (default: every "
        "request accepts with --acceptance)",
    )
    mem = parser.add_argument_group("KV memory")
    mem.add_argument("--memory", default="paged", choices=KINDS, help="paged blocks or contiguous slabs")
    mem.add_argument(
        "--prefix-caching",
        action="store_true",
        help="keep the KV blocks of prompts and answers and reuse them for any prompt that starts with the "
        "same tokens (paged memory only)",
    )
    mem.add_argument("--block-tokens", type=int, default=16, help="tokens per block (default 16)")
    mem.add_argument("--kv-capacity-tokens", type=int, help="KV cache size in tokens (default: what fits)")
    mem.add_argument("--max-sequence-tokens", type=int, help="contiguous: tokens reserved per request")
    mem.add_argument(
        "--reserve", default="max", choices=RESERVES, help="contiguous slab: max, pow2 or oracle (max)"
    )
    mem.add_argument(
        "--preemption",
        default="recompute",
        choices=PREEMPTIONS,
        help="when blocks run out: recompute the preempted request's cache later (vLLM's default) or swap it "
        "to CPU memory and back (default recompute)",
    )
    mem.add_argument(
        "--swap-space",
        type=float,
        default=DEFAULT_SWAP_SPACE_GIB,
        help="swap: CPU memory per GPU for swapped caches, GiB, vLLM's swap_space "
        f"(default {DEFAULT_SWAP_SPACE_GIB:g})",
    )
    mem.add_argument(
        "--swap-link",
        default=DEFAULT_SWAP_LINK,
        choices=sorted(INTERCONNECTS),
        help=f"swap: the link to CPU memory (default {DEFAULT_SWAP_LINK}; pcie4 for an A100 server)",
    )
    out = parser.add_argument_group("results")
    out.add_argument("--slo-ttft", type=float, default=1.0, help="SLO: time to first token, s (default 1)")
    out.add_argument("--slo-tpot", type=float, default=0.05, help="SLO: time per output token, s (0.05)")
    out.add_argument("--timeline-steps", type=int, default=200, help="steps kept in the JSON timeline (200)")
    out.add_argument("--token-latencies", action="store_true", help="JSON: every inter-token latency")
    out.add_argument(
        "--sweep",
        help="comma-separated arrival rates: the run of --rate at each rate, every other option as given, "
        "one row of results per rate (not with --burst or --trace)",
    )


def _pool_setup(args: argparse.Namespace, setup: Setup, pool: str) -> Setup | None:
    """The setup of a disaggregated pool given its own GPU or tensor-parallel degree; None: the setup's."""
    gpu, tensor_parallel = getattr(args, f"{pool}_gpu"), getattr(args, f"{pool}_tensor_parallel")
    if gpu is None and tensor_parallel is None:
        return None
    if tensor_parallel is not None:
        count(f"--{pool}-tensor-parallel", tensor_parallel, maximum=MAX_POOL_TENSOR_PARALLEL)
    return replace(
        setup,
        gpu=setup.gpu if gpu is None else get_gpu(gpu),
        gpus=setup.gpus if tensor_parallel is None else tensor_parallel,
    )


SPECULATION_FLAGS = {
    "acceptance": None,
    "proposed": 4,
    "drafter": "heads",
    "draft_model": None,
    "draft_layers": 1.0,
    "acceptance_concentration": None,
}


def _speculation(args: argparse.Namespace) -> Speculation | None:
    """The --speculative options as a Speculation (seeded by --seed), or None; options without it refused."""
    if not args.speculative:
        given = [name for name, default in SPECULATION_FLAGS.items() if getattr(args, name) != default]
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise ValueError(f"{flags}: speculative decoding's options; add --speculative to use them")
        return None
    if args.acceptance is None:
        raise ValueError(
            "--speculative needs --acceptance, the mean per-token acceptance rate strictly between 0 and 1 "
            "(e.g. --acceptance 0.7)"
        )
    if args.draft_model is not None and args.drafter != "model":
        raise ValueError("--draft-model is for --drafter model; add --drafter model or leave it out")
    return Speculation(
        args.acceptance,
        args.proposed,
        args.drafter,
        args.draft_model,
        args.draft_layers,
        args.acceptance_concentration,
        seed=count("--seed", args.seed, minimum=0),
    )


def _scheduler(args: argparse.Namespace, setup: Setup) -> Scheduler:
    if args.scheduler != "disaggregated":
        for flag in ("kv_transfer", "link_sharing"):
            if getattr(args, flag) is not None:
                raise ValueError(
                    f"--{flag.replace('_', '-')} is for disaggregated serving; add --scheduler disaggregated "
                    "or leave it out"
                )
    if args.scheduler == "static":
        return StaticBatching(args.batch_size, args.batch_timeout)
    if args.scheduler == "chunked":
        return ChunkedPrefill(args.token_budget, args.max_sequences)
    if args.scheduler == "disaggregated":
        return Disaggregated(
            args.prefill_gpus,
            args.decode_gpus,
            args.link,
            max_sequences=args.max_sequences,
            max_batch_tokens=args.max_batch_tokens,
            prefill_setup=_pool_setup(args, setup, "prefill"),
            decode_setup=_pool_setup(args, setup, "decode"),
            kv_transfer=args.kv_transfer or "whole",
            link_sharing=args.link_sharing or "sender",
        )
    return ContinuousBatching(args.max_sequences, args.max_batch_tokens)


# The largest trace file read: a million rows of "arrival_s,prompt_tokens,output_tokens" (MAX_REQUESTS, the
# most a workload may have) take about 30 MB. The size is checked before a byte is parsed.
MAX_TRACE_BYTES = 64 * 2**20


def _trace(path_text: str) -> tuple[Request, ...]:
    path = Path(path_text)
    try:
        with path.open("rb") as file:
            data = file.read(MAX_TRACE_BYTES + 1)
    except OSError as error:
        raise ValueError(f"cannot read the trace {path}: {error.strerror}") from None
    if len(data) > MAX_TRACE_BYTES:
        raise ValueError(
            f"the trace {path} is larger than {MAX_TRACE_BYTES // 2**20} MiB; give at most "
            f"{MAX_REQUESTS:,} rows of arrival_s, prompt_tokens, output_tokens"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"the trace {path} is not UTF-8 text; save it as UTF-8 CSV or JSON") from None
    try:
        rows: Iterable[Any]
        if path.suffix == ".json":
            rows = _json_rows(text)
        else:
            rows = (_csv_row(i, r) for i, r in enumerate(csv.DictReader(text.splitlines())))
        return trace_workload(rows)  # reads the rows one by one and stops at the row limit
    except (ValueError, csv.Error) as error:
        raise ValueError(f"{path}: {error}") from None


def _json_rows(text: str) -> list[Any]:
    """A JSON trace's rows: a list of [arrival_s, prompt_tokens, output_tokens] lists or of mappings."""
    try:
        rows = json.loads(text)
    except RecursionError:  # "[[[[...": deeper than the parser's stack, never a trace
        raise ValueError("the JSON is nested too deeply; a trace is a list of rows, one level deep") from None
    except json.JSONDecodeError as error:
        raise ValueError(
            f"not valid JSON ({error.msg} at line {error.lineno}, column {error.colno})"
        ) from None
    if not isinstance(rows, list):
        raise ValueError("a JSON trace is a list of rows")
    return rows


def _csv_row(index: int, row: dict[str, str]) -> dict[str, float | int]:
    """One CSV row as numbers: arrival_s a number of seconds, the token counts whole numbers."""
    out: dict[str, float | int] = {}
    for key, text in row.items():
        if key is None or text is None:
            raise ValueError(f"trace row {index} does not have one value per column of the header")
        try:
            out[key] = float(text) if key == "arrival_s" else int(text)
        except ValueError:
            kind = "a number" if key == "arrival_s" else "a whole number"
            raise ValueError(f"trace row {index}: {key} {text!r} is not {kind}") from None
    return out


def _run_options(args: argparse.Namespace, setup: Setup) -> RunOptions:
    """Every option of a run but its arrivals, as the options give them: what a single run and every rate of
    a sweep are served with (one description, :class:`RunOptions`, so the two cannot differ)."""
    shared = None
    if args.shared_prefix is not None:
        shared = SharedPrefix(args.shared_prefix, args.prefix_share, args.prefixes)
    return RunOptions(
        prompt=lengths_from_text("--prompt", args.prompt),
        output=lengths_from_text("--output", args.output),
        seed=args.seed,
        shared_prefix=shared,
        chats=None if args.turns is None else Chats(args.turns, args.think_time),
        setup=setup,
        scheduler=_scheduler(args, setup),
        memory=_memory(args),
        replicas=args.replicas,
        slo=SLO(args.slo_ttft, args.slo_tpot),
        prefix_caching=args.prefix_caching,
        routing=args.routing,
        speculation=_speculation(args),
        micro_batches=args.micro_batches,
    )


def _workload(args: argparse.Namespace, options: RunOptions) -> tuple[tuple[Request, ...], str]:
    if args.trace:
        if args.turns is not None or args.shared_prefix is not None:
            raise ValueError(
                "--turns and --shared-prefix shape a generated workload; a --trace gives its requests as "
                "they are"
            )
        requests = _trace(args.trace)
        return requests, f"{len(requests):,} requests from {args.trace}"
    if args.turns is not None and args.burst:
        raise ValueError(
            "--turns needs arrivals over time (--rate): a --burst has no time between a chat's turns"
        )
    prompt, output = options.prompt, options.output
    shared, chats = options.shared_prefix, options.chats
    assert isinstance(prompt, Lengths)  # as lengths_from_text reads it
    assert isinstance(output, Lengths)
    lengths = f"prompt {prompt.describe()}, output {output.describe()} tokens"
    if shared is not None:
        lengths += (
            f"; {shared.share:.0%} of {'chats' if chats is not None else 'prompts'} start with one of "
            f"{shared.prefixes:,} system prompts of {shared.tokens:,} tokens"
        )
    if chats is not None:
        return options.poisson(args.rate, args.requests), (
            f"{args.requests:,} requests in chats of {chats.turns:,} turns {chats.think_s:g} s apart, chats "
            f"starting Poisson at {args.rate / chats.turns:g}/s; new message {prompt.describe()}, answer "
            f"{output.describe()} tokens" + (lengths[lengths.index(";") :] if shared is not None else "")
        )
    if args.burst:
        return options.burst(args.requests), f"{args.requests:,} requests at once; {lengths}"
    return options.poisson(args.rate, args.requests), (
        f"{args.requests:,} requests, Poisson at {args.rate:g}/s; {lengths}"
    )


def _memory(args: argparse.Namespace) -> MemoryConfig:
    return MemoryConfig(
        args.memory,
        args.block_tokens,
        args.kv_capacity_tokens,
        args.max_sequence_tokens,
        reserve=args.reserve,
        preemption=args.preemption,
        swap_space_gib=args.swap_space,
        swap_link=args.swap_link,
    )


def run(args: argparse.Namespace, setup: Setup, setup_text: str) -> tuple[object, str]:
    """Run ``simulate`` (or a sweep) for parsed ``args``; return the JSON record and the readable text."""
    options = _run_options(args, setup)
    if args.sweep:
        if args.burst or args.trace:
            raise ValueError(
                "--sweep varies the arrival rate of Poisson arrivals; leave out --burst (every request at "
                "t = 0) and --trace (arrivals as recorded), or run them without --sweep"
            )
        rows = sweep_rates(_rates(args.sweep), args.requests, options)
        assert options.scheduler is not None
        return rows, _sweep_text(rows, setup_text, options.scheduler)
    requests, workload_text = _workload(args, options)
    result = options.simulate(requests, timeline_steps=args.timeline_steps)
    return result.as_dict(token_latencies=args.token_latencies), summary_text(
        result, f"{setup_text}\n{workload_text}"
    )


def _rates(text: str) -> list[float]:
    try:
        return [float(r) for r in text.split(",") if r.strip()]
    except ValueError:
        raise ValueError(f"--sweep {text!r}: give arrival rates separated by commas, like 1,2,4,8") from None


def _table(rows: list[list[str]], header: list[str]) -> str:
    """Text table: the first column left-aligned, the numbers right-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, ["-" * w for w in widths], *rows]:
        cells = [c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _time(value: Any) -> str:
    return "-" if value is None else format_duration(float(value))


def _tokens_per_s(value: Any) -> str:
    return "- tokens/s" if value is None else format_value(value, "tokens/s", digits=4)


def _figure(value: Any, spec: str) -> str:
    """``value`` formatted by ``spec``, or "-" for a figure that has no value (a run of zero duration)."""
    return "-" if value is None else format(value, spec)


def _prefix_cache_facts(s: dict[str, Any]) -> list[tuple[str, str]]:
    cache = s.get("prefix_cache")
    if cache is None:
        return []
    return [
        (
            "prefix cache",
            f"{cache['hit_rate']:.1%} of prompt tokens found cached ({cache['hit_tokens']:,} hit, "
            f"{cache['miss_tokens']:,} computed); {cache['evicted_blocks']:,} blocks evicted, "
            f"{cache['cached_blocks_at_end']:,} cached at the end",
        )
    ]


def _swap_facts(s: dict[str, Any]) -> list[tuple[str, str]]:
    swap = s.get("swap")
    if swap is None:
        return []
    return [
        (
            "swap",
            f"{swap['swapped_out']:,} preemptions swapped to CPU memory "
            f"({swap['swap_space_tokens']:,} tokens of room), {swap['recomputed']:,} recomputed for want of "
            "room; copies took "
            f"{_time(swap['copy_time_s'])}",
        )
    ]


def _speculation_facts(s: dict[str, Any]) -> list[tuple[str, str]]:
    spec = s.get("speculation")
    if spec is None:
        return []
    drafter = spec["drafter"] + (f" {spec['draft_model']}" if spec["draft_model"] else "")
    return [
        (
            "speculation",
            f"{drafter} proposing {spec['proposed']}; {_figure(spec['tokens_per_step'], '.2f')} tokens per "
            f"request per step ({spec['expected_tokens_per_step']:.2f} expected at a = "
            f"{spec['acceptance']:g}), {_figure(spec['accepted_share'], '.1%')} of proposals accepted; "
            f"drafting took {_time(spec['draft_time_s'])}",
        )
    ]


def _pipeline_facts(pipeline: Any) -> list[tuple[str, str]]:
    if not isinstance(pipeline, dict):
        return []
    return [
        (
            "pipeline",
            f"{pipeline['stages']} stages, each step in {pipeline['micro_batches']} micro-batches; each "
            f"stage idles {pipeline['bubble_fraction']:.0%} of a step with equal micro-batches",
        )
    ]


def _pools_text(scheduler: dict[str, Any]) -> str:
    """ ", prefill on 1 x h100-sxm, decode on 2 x h200" where a disaggregated pool has its own setup, and the
    KV transfer's options where they are not the defaults."""
    parts = [
        f"{pool} on {scheduler[f'{pool}_setup']['gpus']} x {scheduler[f'{pool}_setup']['gpu']}"
        for pool in ("prefill", "decode")
        if f"{pool}_setup" in scheduler
    ]
    if scheduler.get("kv_transfer") == "layerwise":
        parts.append("KV caches sent layer by layer")
    sharing = {"endpoints": "each decode replica's links shared", "shared": "every cache on the same links"}
    if scheduler.get("link_sharing") in sharing:
        parts.append(sharing[scheduler["link_sharing"]])
    return "".join(f", {part}" for part in parts)


def summary_text(result: SimulationResult, heading: str) -> str:
    """The readable summary: latency percentiles in a table, then throughput, goodput and memory."""
    s = result.summary
    rows = []
    for label, key in (
        ("queueing", "queueing_s"),
        ("time to first token", "ttft_s"),
        ("time per output token", "tpot_s"),
        ("inter-token latency", "itl_s"),
        ("end to end", "e2e_s"),
    ):
        st = s[key]
        rows.append([label, *(_time(st[k]) for k in ("mean", "p50", "p90", "p99", "max"))])
    slo = result.config["slo"]
    assert isinstance(slo, dict)
    facts = [
        (
            "throughput",
            f"{_figure(s['throughput_rps'], '.3g')} requests/s, "
            f"{_tokens_per_s(s['output_tokens_per_s'])} out",
        ),
        (
            "goodput",
            f"{_figure(s['goodput_rps'], '.3g')} requests/s meet TTFT <= {_time(slo['ttft_s'])} and TPOT <= "
            f"{_time(slo['tpot_s'])} ({s['slo_attainment']:.1%} of requests)",
        ),
        (
            "utilisation",
            f"compute {_figure(s['compute_utilisation'], '.1%')}, memory bandwidth "
            f"{_figure(s['bandwidth_utilisation'], '.1%')}, busy {_figure(s['busy_fraction'], '.1%')}",
        ),
        (
            "decode batch",
            f"{s['mean_decode_batch']:.1f} requests per decode step (mean of {s['decode_steps']:,} steps); "
            f"{_figure(s['time_averaged_decode_batch'], '.1f')} in the decode phase on average over time",
        ),
        (
            "KV cache",
            f"peak {s['kv_peak_reserved_tokens']:,} of {s['kv_capacity_tokens']:,} tokens "
            f"reserved; {s['kv_waste_fraction']:.1%} of reserved memory held no token",
        ),
        ("preemptions", f"{s['preemptions']:,}"),
        *_swap_facts(s),
        *_prefix_cache_facts(s),
        *_speculation_facts(s),
        *_pipeline_facts(result.config.get("pipeline")),
        ("longest stall", f"{_time(s['longest_stall_s'])} (request {s['longest_stall_request']})"),
    ]
    width = max(len(label) for label, _ in facts)
    scheduler = result.config["scheduler"]
    assert isinstance(scheduler, dict)
    return "\n".join(
        [
            heading,
            f"scheduler {scheduler['name']}{_pools_text(scheduler)}; {s['requests']:,} requests served in "
            f"{_time(s['duration_s'])}",
            "",
            _table(rows, ["latency", "mean", "p50", "p90", "p99", "max"]),
            "",
            *(f"{label.ljust(width)}  {value}" for label, value in facts),
        ]
    )


def _sweep_text(rows: list[dict[str, float | None]], heading: str, scheduler: Scheduler) -> str:
    """One line per rate; the prefix cache's hit rate and speculation's tokens per step where they were on."""
    optional = (("prefix_hit_rate", "prefix hits", ".1%"), ("tokens_per_step", "tok/step", ".2f"))
    extra = [(key, label, spec) for key, label, spec in optional if key in rows[0]]
    table = [
        [
            f"{r['rate_per_s']:g}",
            _figure(r["throughput_rps"], ".3g"),
            _figure(r["output_tokens_per_s"], ",.0f"),
            _figure(r["slo_attainment"], ".0%"),
            _time(r["ttft_p99_s"]),
            _time(r["tpot_p99_s"]),
            *(_figure(r[key], spec) for key, _, spec in extra),
        ]
        for r in rows
    ]
    header = ["rate/s", "served/s", "out tok/s", "in SLO", "p99 TTFT", "p99 TPOT"]
    header += [label for _, label, _ in extra]
    return f"{heading}\nscheduler {scheduler.name}\n\n{_table(table, header)}"
