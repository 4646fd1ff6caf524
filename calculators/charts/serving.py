"""Charts of serving: a simulated run's step timeline, KV memory and latencies, and decode's batch trade-off.

The simulator charts share one set of parameters (:data:`SIMULATION_PARAMS`): the setup, the workload, the
scheduler, the KV memory and the SLO. :func:`simulation` runs :func:`calculators.simulator.simulate` for them
and keeps the last few results, so a widget drawing three charts of one run simulates once. Runs are kept
small (at most :data:`MAX_REQUESTS` requests, a capped timeline) so that they stay quick in the browser.
Standard library only, like :mod:`calculators.charts.data`: the browser computes the same rows under Pyodide.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from typing import Any

from calculators.charts.content import ChartData, Row, _computed, _in, _tokens, short_gpu_name
from calculators.charts.palette import NEUTRAL, PHASE_COLOURS, SCHEDULER_COLOURS
from calculators.charts.params import (
    ChartError,
    Param,
    _Invalid,
    _whole,
    read_bool,
    read_choice,
    read_count,
    read_gpu,
    read_model,
    read_params,
)
from calculators.interconnect import INTERCONNECTS
from calculators.models import MODELS
from calculators.scenario import Scenario
from calculators.setting import at_spec_peak, bound_setting, cache_per_setting
from calculators.simulator import SimulationResult
from calculators.simulator.named import LENGTH_CAP, SCHEDULERS, pipeline_stage_count, run_named
from calculators.units import format_value, with_bound

MAX_REQUESTS = 300  # a run of this many stays well under a second in the browser
MAX_TIMELINE_STEPS = 600  # steps kept for the timeline and the memory map
MAX_ROWS = 40  # requests drawn as rows of the timeline
MAX_PROMPT = LENGTH_CAP
MAX_OUTPUT = 4_096
MAX_RATE = 1_000.0
MAX_TURNS = 10  # turns of one conversation: each prompt holds every turn before it, so a run grows quickly
MAX_THINK_S = 3_600.0  # an hour between two turns, plenty for a run of at most MAX_REQUESTS requests
MAX_PIPELINE_STAGES = 16  # one GPU per stage; real deployments split a replica over a few nodes at most
MAX_MICRO_BATCHES = 64
# Engine steps one run may take (a few seconds in CPython): a reader's settings that need more, such as a
# token budget of 1 over long prompts, get a message instead of a page that hangs.
MAX_STEPS = 300_000
SCHEDULER_NAMES = {
    "continuous": "continuous batching",
    "static": "static batching",
    "chunked": "chunked prefill",
    "disaggregated": "disaggregated prefill and decode",
}


def _number(low: float, high: float, what: str) -> Any:
    def read(_: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
            raise _Invalid(f"expected {what}, a number from {low:,g} to {high:,g}, got {value!r}")
        return float(value)

    return read


def _optional_count(high: int, what: str) -> Any:
    def read(_: str, value: Any) -> int | None:
        if value is None or value is False or value == 0:
            return None
        return _whole(value, 1, high, what)

    return read


def _link(_: str, value: Any) -> str:
    if value not in INTERCONNECTS:
        raise _Invalid(f"unknown link {value!r}; allowed: {', '.join(INTERCONNECTS)}")
    return str(value)


def _schedulers(_: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple):
        raise _Invalid(f"expected a list of schedulers such as [static, continuous], got {value!r}")
    for item in value:
        if item not in SCHEDULERS:
            raise _Invalid(f"unknown scheduler {item!r}; allowed: {', '.join(SCHEDULERS)}")
    if len(set(value)) != len(value):
        raise _Invalid(f"a scheduler is listed twice in {list(value)!r}")
    return tuple(value)


# Everything one simulated run depends on. The widget offers the same names as controls.
SIMULATION_PARAMS: tuple[Param, ...] = (
    Param("model", "llama-3.1-8b", read_model, "model: llama-3.1-8b", "model served (one replica per GPU)"),
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset"),
    Param(
        "kv_traffic",
        True,
        read_bool,
        "kv_traffic: false",
        "count attention's reads of the KV cache in each step's time (false: weights only)",
    ),
    Param("scheduler", "continuous", read_choice(SCHEDULERS), "scheduler: static", "how steps are filled"),
    Param(
        "requests",
        100,
        read_count(1, MAX_REQUESTS, "a number of requests"),
        "requests: 100",
        "requests served",
    ),
    Param(
        "rate", 10.0, _number(0.01, MAX_RATE, "an arrival rate per second"), "rate: 10", "Poisson arrivals/s"
    ),
    Param("burst", False, read_bool, "burst: true", "every request arrives at once (rate is then unused)"),
    Param("prompt", 512, read_count(1, MAX_PROMPT, "a prompt length"), "prompt: 512", "mean prompt tokens"),
    Param(
        "prompt_spread",
        0,
        read_count(0, MAX_PROMPT, "a spread of prompt lengths"),
        "prompt_spread: 256",
        "standard deviation of prompt lengths (0: all the same; else log-normal)",
    ),
    Param("output", 128, read_count(1, MAX_OUTPUT, "an output length"), "output: 128", "mean output tokens"),
    Param(
        "output_spread",
        0,
        read_count(0, MAX_OUTPUT, "a spread of output lengths"),
        "output_spread: 64",
        "standard deviation of output lengths (0: all the same; else log-normal)",
    ),
    Param(
        "batch_size", 16, read_count(1, 1024, "a batch size"), "batch_size: 16", "static batching: batch size"
    ),
    Param(
        "max_sequences",
        256,
        read_count(1, 4096, "a number of sequences"),
        "max_sequences: 256",
        "requests running at once, at most",
    ),
    Param(
        "max_batch_tokens",
        8192,
        read_count(1, 1 << 20, "a token count"),
        "max_batch_tokens: 8192",
        "continuous batching: prompt tokens one step takes",
    ),
    Param(
        "token_budget",
        512,
        read_count(1, 1 << 20, "a token budget"),
        "token_budget: 512",
        "chunked prefill: tokens per step",
    ),
    Param(
        "memory",
        "paged",
        read_choice(("paged", "contiguous")),
        "memory: contiguous",
        "how KV memory is handed out",
    ),
    Param(
        "block_tokens", 16, read_count(1, 4096, "a block size"), "block_tokens: 16", "paged: tokens per block"
    ),
    Param(
        "reserve",
        "max",
        read_choice(("max", "pow2", "oracle")),
        "reserve: oracle",
        "contiguous: slab per request (max length, power of two, or exact)",
    ),
    Param(
        "capacity_tokens",
        None,
        _optional_count(1 << 30, "a number of tokens"),
        "capacity_tokens: 20000",
        "tokens of KV cache (null: what the GPU's memory leaves)",
    ),
    Param(
        "max_sequence_tokens",
        None,
        _optional_count(1 << 24, "a number of tokens"),
        "max_sequence_tokens: 4096",
        "contiguous max: the slab (null: the workload's longest request)",
    ),
    Param(
        "prefill_gpus",
        1,
        read_count(1, 64, "a number of GPUs"),
        "prefill_gpus: 1",
        "disaggregated: prefill pool",
    ),
    Param(
        "decode_gpus",
        1,
        read_count(1, 64, "a number of GPUs"),
        "decode_gpus: 1",
        "disaggregated: decode pool",
    ),
    Param("link", "nvlink4", _link, "link: infiniband-ndr", "disaggregated: link the KV caches cross"),
    Param(
        "replicas",
        1,
        read_count(1, 64, "a number of GPUs"),
        "replicas: 3",
        "colocated schedulers: replicas of one GPU each, requests in turn (match a split's GPU count)",
    ),
    Param(
        "slo_ttft_ms", 1000.0, _number(0.1, 1e6, "a time in ms"), "slo_ttft_ms: 1000", "SLO: TTFT bound (ms)"
    ),
    Param("slo_tpot_ms", 50.0, _number(0.01, 1e5, "a time in ms"), "slo_tpot_ms: 50", "SLO: TPOT bound (ms)"),
    Param("seed", 0, read_count(0, 1 << 31, "a seed"), "seed: 1", "seed of the workload's random draws"),
    Param(
        "speculative",
        False,
        read_bool,
        "speculative: true",
        "speculative decoding: each decode step verifies proposed drafted tokens per request (paged memory, "
        "not static batching)",
    ),
    Param(
        "acceptance",
        0.7,
        _number(0.01, 0.99, "an acceptance rate"),
        "acceptance: 0.8",
        "speculative: chance each proposed token is accepted",
    ),
    Param(
        "proposed", 4, read_count(1, 16, "a number of tokens"), "proposed: 4", "speculative: tokens per step"
    ),
    Param(
        "drafter",
        "heads",
        read_choice(("heads", "ngram")),
        "drafter: ngram",
        "speculative: draft heads on the target, or free n-gram lookup",
    ),
    Param(
        "shared_prefix",
        0,
        read_count(0, MAX_PROMPT, "a number of tokens"),
        "shared_prefix: 2048",
        "tokens of one system prompt put before every prompt (0: none)",
    ),
    Param(
        "prefix_share",
        1.0,
        _number(0.01, 1.0, "a share of the requests"),
        "prefix_share: 0.5",
        "with shared_prefix: the share of requests (of conversations, with turns) whose prompt starts with a "
        "system prompt",
    ),
    Param(
        "prefixes",
        1,
        read_count(1, MAX_REQUESTS, "a number of system prompts"),
        "prefixes: 4",
        "with shared_prefix: distinct system prompts of that length, each request's drawn at random",
    ),
    Param(
        "turns",
        1,
        read_count(1, MAX_TURNS, "a number of turns"),
        "turns: 4",
        "requests grouped into conversations of this many turns, each prompt holding the previous turn's "
        "prompt and answer, then a new message of prompt tokens (1: no conversations; not with burst)",
    ),
    Param(
        "think_s",
        10.0,
        _number(0.0, MAX_THINK_S, "a time in seconds"),
        "think_s: 5",
        "with turns: seconds from one turn's arrival to the next (the user reading and typing)",
    ),
    Param(
        "prefix_caching",
        False,
        read_bool,
        "prefix_caching: true",
        "prefix caching: reuse the cached KV blocks of prompts' shared beginnings (paged memory, not "
        "disaggregated)",
    ),
    Param(
        "pipeline_stages",
        1,
        read_count(1, MAX_PIPELINE_STAGES, "a number of pipeline stages"),
        "pipeline_stages: 2",
        "GPUs one replica's layers are split across, one after another (at most the model's layers)",
    ),
    Param(
        "micro_batches",
        1,
        read_count(1, MAX_MICRO_BATCHES, "a number of micro-batches"),
        "micro_batches: 4",
        "with pipeline_stages above 1: micro-batches each step's batch is split into, following one another "
        "through the stages (not with speculative decoding)",
    ),
)
SIMULATION_NAMES = tuple(param.name for param in SIMULATION_PARAMS)


@cache_per_setting(16)
def _run(items: tuple[tuple[str, Any], ...]) -> SimulationResult:
    return run_named(
        **dict(items), timeline_steps=MAX_TIMELINE_STEPS, timeline_memory=True, max_steps=MAX_STEPS
    )


def simulation_source(p: Mapping[str, Any]) -> str:
    """The Python that runs the same simulation as :func:`simulation` for ``p``, for a reader to edit.

    Kept beside :func:`_run` so that the two build the same workload, scheduler and memory.
    """

    def lengths(mean: int, spread: int) -> str:
        return f"{mean!r}" if spread == 0 else f"Lengths.lognormal({mean!r}, {spread!r}, cap={LENGTH_CAP})"

    prompt = lengths(p["prompt"], p["prompt_spread"])
    output = lengths(p["output"], p["output_spread"])
    shared = ""
    if p["shared_prefix"]:
        share = (
            ""
            if (p["prefix_share"], p["prefixes"]) == (1.0, 1)
            else f", {p['prefix_share']!r}, {p['prefixes']!r}"
        )
        shared = f", shared_prefix=SharedPrefix({p['shared_prefix']!r}{share})"
    if p["burst"]:
        work = f"burst_workload({p['requests']!r}, {prompt}, {output}, seed={p['seed']!r}{shared})"
    else:
        chats = f", chats=Chats({p['turns']!r}, {p['think_s']!r})" if p["turns"] != 1 else ""
        work = (
            f"poisson_workload({p['rate']!r}, {p['requests']!r}, {prompt}, {output}, seed={p['seed']!r}"
            f"{shared}{chats})"
        )
    scheduler = {
        "static": f"StaticBatching({p['batch_size']!r})",
        "chunked": f"ChunkedPrefill({p['token_budget']!r}, {p['max_sequences']!r})",
        "disaggregated": f"Disaggregated({p['prefill_gpus']!r}, {p['decode_gpus']!r}, {p['link']!r}, "
        f"max_sequences={p['max_sequences']!r}, max_batch_tokens={p['max_batch_tokens']!r})",
        "continuous": f"ContinuousBatching({p['max_sequences']!r}, {p['max_batch_tokens']!r})",
    }[p["scheduler"]]
    replicas = 1 if p["scheduler"] == "disaggregated" else p["replicas"]
    speculation = ""
    if p["speculative"]:
        speculation = (
            f", speculation=Speculation({p['acceptance']!r}, {p['proposed']!r}, {p['drafter']!r}, "
            f"seed={p['seed']!r})"
        )
    if p["prefix_caching"]:
        speculation += ", prefix_caching=True"
    if p["micro_batches"] != 1:
        speculation += f", micro_batches={p['micro_batches']!r}"
    stages = f", pipeline_stages={p['pipeline_stages']!r}" if p["pipeline_stages"] != 1 else ""
    return (
        "from calculators import make_setup\n"
        "from calculators.simulator import *\n"
        "\n"
        f"requests = {work}\n"
        f"setup = make_setup({p['model']!r}, {p['gpu']!r}, kv_traffic={p['kv_traffic']!r}{stages})\n"
        f"memory = MemoryConfig({p['memory']!r}, {p['block_tokens']!r}, "
        f"capacity_tokens={p['capacity_tokens']!r}, max_sequence_tokens={p['max_sequence_tokens']!r}, "
        f"reserve={p['reserve']!r})\n"
        f"slo = SLO({p['slo_ttft_ms'] / 1e3!r}, {p['slo_tpot_ms'] / 1e3!r})\n"
        f"result = simulate(requests, setup, {scheduler}, memory=memory, replicas={replicas!r}, slo=slo"
        f"{speculation})\n"
        "s = result.summary\n"
        "print(f\"{s['output_tokens_per_s']:.0f} output tokens/s\")\n"
        "print(f\"TTFT p50 {s['ttft_s']['p50'] * 1e3:.1f} ms, p99 {s['ttft_s']['p99'] * 1e3:.1f} ms\")\n"
        "print(f\"TPOT p50 {s['tpot_s']['p50'] * 1e3:.2f} ms, p99 {s['tpot_s']['p99'] * 1e3:.2f} ms\")\n"
        "print(f\"{s['slo_attainment']:.0%} within the SLO, {s['preemptions']} preemptions\")\n"
    )


def simulation(chart: str, p: Mapping[str, Any], scheduler: str | None = None) -> SimulationResult:
    """The run for the simulation parameters in ``p`` (validated), remembered for the next chart of it.

    The simulator's ``ValueError`` (a request that can never fit, a pool size that is not a multiple) becomes
    a :class:`ChartError` of ``chart`` naming the parameter most likely at fault.
    """
    values = {name: p[name] for name in SIMULATION_NAMES}
    if scheduler is not None:
        values["scheduler"] = scheduler
    if values["speculative"] and (values["memory"] != "paged" or values["scheduler"] == "static"):
        raise ChartError(
            chart,
            "speculative",
            "speculative decoding needs paged memory and a scheduler other than static batching",
            "set memory: paged and another scheduler, or speculative: false",
        )
    if values["prefix_caching"] and (values["memory"] != "paged" or values["scheduler"] == "disaggregated"):
        raise ChartError(
            chart,
            "prefix_caching",
            "prefix caching needs paged memory on one pool, so not a disaggregated split",
            "set memory: paged and a colocated scheduler, or prefix_caching: false",
        )
    if values["turns"] > 1 and values["burst"]:
        raise ChartError(
            chart,
            "turns",
            "conversations need arrivals over time: a burst has no time between a conversation's turns",
            "set burst: false, or turns: 1",
        )
    try:
        pipeline_stage_count(values["model"], values["pipeline_stages"])
    except ValueError as error:
        raise ChartError(chart, "pipeline_stages", str(error), "pipeline_stages: 2") from None
    stages = values["pipeline_stages"]
    if values["scheduler"] == "disaggregated":
        for pool in ("prefill_gpus", "decode_gpus"):
            if values[pool] % stages:
                raise ChartError(
                    chart,
                    pool,
                    f"a pool of {values[pool]} GPU{'s' * (values[pool] != 1)} does not split into replicas "
                    f"of {stages} pipeline stages",
                    f"give a multiple of {stages}, e.g. {pool}: {stages}",
                )
    if values["micro_batches"] > 1 and values["pipeline_stages"] < 2:
        raise ChartError(
            chart,
            "micro_batches",
            "micro-batches follow one another through pipeline stages, so they need pipeline_stages above 1",
            "set pipeline_stages: 2, or micro_batches: 1",
        )
    if values["micro_batches"] > 1 and values["speculative"]:
        raise ChartError(
            chart,
            "micro_batches",
            "micro-batches with speculative decoding are not simulated",
            "set micro_batches: 1, or speculative: false",
        )
    items = tuple(sorted(values.items()))
    fix = "use shorter requests, more KV capacity (capacity_tokens), or fewer requests"
    return _computed(chart, "capacity_tokens", fix, lambda: _run(items))  # type: ignore[no-any-return]


def run_summary(result: SimulationResult) -> dict[str, Any]:
    """The headline figures of a run, as plain numbers (seconds, tokens, shares)."""
    s = result.summary
    return {
        "throughput_rps": s["throughput_rps"],
        "output_tokens_per_s": s["output_tokens_per_s"],
        "goodput_rps": s["goodput_rps"],
        "slo_attainment": s["slo_attainment"],
        "ttft_p50_s": s["ttft_s"]["p50"],
        "ttft_p99_s": s["ttft_s"]["p99"],
        "tpot_p50_s": s["tpot_s"]["p50"],
        "tpot_p99_s": s["tpot_s"]["p99"],
        "itl_p99_s": s["itl_s"]["p99"],
        "longest_stall_s": s["longest_stall_s"],
        "mean_decode_batch": s["mean_decode_batch"],
        "preemptions": s["preemptions"],
        "kv_capacity_tokens": s["kv_capacity_tokens"],
        "kv_peak_reserved_tokens": s["kv_peak_reserved_tokens"],
        "kv_waste_fraction": s["kv_waste_fraction"],
        "duration_s": s["duration_s"],
        "prefix_hit_rate": s["prefix_cache"]["hit_rate"] if "prefix_cache" in s else 0.0,
    }


def _describe(p: Mapping[str, Any]) -> str:
    arrivals = "all at once" if p["burst"] else f"at {p['rate']:g} per second"

    def spread(n: int) -> str:
        return "" if n == 0 else f" (spread {n:,})"

    speculation = ""
    if p["speculative"]:
        speculation = (
            f", with speculative decoding ({p['proposed']} proposed a step, acceptance {p['acceptance']:g})"
        )
    if p["turns"] != 1 and not p["burst"]:
        speculation += f", in conversations of {p['turns']} turns {p['think_s']:g} s apart"
    if p["shared_prefix"]:
        caching = "cached" if p["prefix_caching"] else "not cached"
        which = "every prompt" if p["prefix_share"] == 1.0 else f"{p['prefix_share']:.0%} of the prompts"
        kinds = "a" if p["prefixes"] == 1 else f"one of {p['prefixes']:,}"
        plural = "" if p["prefixes"] == 1 else "s"
        speculation += (
            f", {kinds} {p['shared_prefix']:,}-token system prompt{plural} before {which} ({caching})"
        )
    if p["pipeline_stages"] != 1:
        speculation += f", {p['pipeline_stages']} pipeline stages"
        if p["micro_batches"] != 1:
            speculation += f" in {p['micro_batches']} micro-batches"
    return (
        f"{p['requests']} requests arriving {arrivals}, prompts of {p['prompt']:,} tokens"
        f"{spread(p['prompt_spread'])} "
        f"and answers of {p['output']:,}{spread(p['output_spread'])}, for {MODELS[p['model']].name} on the "
        f"{short_gpu_name(p['gpu'])}{speculation}"
    )


# ------------------------------------------------------------------------------------------- step timeline

SERVING_TIMELINE_PARAMS: tuple[Param, ...] = (
    *SIMULATION_PARAMS,
    Param("rows", 16, read_count(1, MAX_ROWS, "a number of requests"), "rows: 16", "requests drawn as rows"),
    Param(
        "steps",
        300,
        read_count(1, MAX_TIMELINE_STEPS, "a number of steps"),
        "steps: 300",
        "engine steps drawn, from the start of the run",
    ),
)


def _ms_with_bound(value: float | None, bound: float | None, *, none: str = "0 ms") -> str:
    """A time in ms with its spec-peak bound beside it (``bound`` None: none to show), as lessons print."""
    if value is None:
        return none
    return with_bound(format_value(value, "ms"), None if bound is None else format_value(bound, "ms"))


def serving_timeline(**given: Any) -> ChartData:
    """The first steps of a simulated run: each request's wait, prefill and decode, and what each step ran.

    Top: one row per request (the first ``rows`` to arrive), a bar while it queues, prefills or decodes; a gap
    in a decode bar is a step it sat out. Bottom: each step's requests, decoding or prefilling.
    """
    chart = "serving-timeline"
    p = read_params(chart, SERVING_TIMELINE_PARAMS, given)
    result = simulation(chart, p)
    steps = result.timeline[: p["steps"]]
    arrivals = {int(r["id"]): float(r["arrival_s"]) for r in result.requests}
    shown = sorted(arrivals, key=lambda i: (arrivals[i], i))[: p["rows"]]
    wanted = set(shown)
    order = {rid: index for index, rid in enumerate(shown)}
    spans: list[Row] = []
    open_spans: dict[int, Row] = {}  # request -> its span still growing
    last_step: dict[int, int] = {}  # request -> index of the last step it ran in
    first_seen: dict[int, float] = {}
    step_rows: list[Row] = []
    end_ms = 0.0
    for index, step in enumerate(steps):
        start, stop = _in("ms", step["start_s"]), _in("ms", step["start_s"] + step["time_s"])
        end_ms = max(end_ms, stop)
        decode_ids = step["decode"]
        prefill = step["prefill"]
        if decode_ids:
            step_rows.append(
                {"step": index + 1, "start_ms": start, "end_ms": stop, "what": "decoding",
                 "requests": len(decode_ids), "tokens": len(decode_ids)}
            )  # fmt: skip
        if prefill:
            step_rows.append(
                {"step": index + 1, "start_ms": start, "end_ms": stop, "what": "prefilling",
                 "requests": len(prefill), "tokens": sum(chunk for _, chunk, _ in prefill)}
            )  # fmt: skip
        ran = [(rid, "decode", 1) for rid in decode_ids] + [(rid, "prefill", c) for rid, c, _ in prefill]
        for rid, phase, tokens in ran:
            if rid not in wanted:
                continue
            first_seen.setdefault(rid, start)
            current = open_spans.get(rid)
            if current is not None and current["phase"] == phase and last_step.get(rid) == index - 1:
                current["end_ms"] = stop
                current["tokens"] += tokens
            else:
                current = {"request": f"request {order[rid] + 1}", "row": order[rid], "phase": phase,
                           "start_ms": start, "end_ms": stop, "tokens": tokens}  # fmt: skip
                spans.append(current)
                open_spans[rid] = current
            last_step[rid] = index
    for rid in shown:
        arrived = _in("ms", arrivals[rid])
        began = first_seen.get(rid, end_ms)
        if arrived < end_ms and began > arrived:
            spans.append({"request": f"request {order[rid] + 1}", "row": order[rid], "phase": "queued",
                          "start_ms": arrived, "end_ms": began, "tokens": 0})  # fmt: skip
    spans.sort(key=lambda row: (row["row"], row["start_ms"]))
    s = result.summary
    name = SCHEDULER_NAMES[p["scheduler"]]
    decode_steps = [row["requests"] for row in step_rows if row["what"] == "decoding"]
    mean_batch = sum(decode_steps) / len(decode_steps) if decode_steps else 0.0
    # The same run at spec peaks (kept per setting, as this one): the bound of each time the text states.
    peak = at_spec_peak(partial(simulation, chart, p))
    tpot = s["tpot_s"]["p50"] or 0.0
    caption = (
        f"The first {len(steps)} steps ({format_value(end_ms * 1e-3, 'ms')}) of {name}: {_describe(p)}. "
        f"Decode steps in this window ran {mean_batch:.1f} requests on average; over the whole run the "
        f"median time per output token was "
        f"{_ms_with_bound(tpot, None if peak is None else peak.summary['tpot_s']['p50'] or 0.0)}."
    )
    table = []
    for rid in shown:
        record = result.requests[rid]  # records keep the workload's order, whose ids are 0, 1, 2 ...
        bound = peak.requests[rid] if peak is not None else {"ttft_s": None, "tpot_s": None}
        table.append(
            (
                f"request {order[rid] + 1}",
                format_value(record["arrival_s"], "ms"),
                _tokens(record["prompt_tokens"]),
                _tokens(record["output_tokens"]),
                _ms_with_bound(record["ttft_s"], bound["ttft_s"]),
                _ms_with_bound(record["tpot_s"], bound["tpot_s"], none="one token"),
            )
        )
    return ChartData(
        chart,
        p,
        {"spans": spans, "steps": step_rows},
        ("Request", "Arrives", "Prompt", "Output", "Time to first token", "Time per output token"),
        tuple(table),
        caption,
    )


# ---------------------------------------------------------------------------------------------- KV memory

KV_MEMORY_PARAMS: tuple[Param, ...] = SIMULATION_PARAMS


def _serving_instance(result: SimulationResult) -> dict[str, Any]:
    """The instance whose memory is drawn: the first that decodes (not a prefill-only pool)."""
    for series in result.kv_series:
        if series["role"] != "prefill":
            return series
    return result.kv_series[0]  # pragma: no cover - every run has a decoding instance


def kv_memory(**given: Any) -> ChartData:
    """KV memory of a run: reserved and filled tokens over time, and a map of the pool at its fullest step.

    The map is one bar as long as the pool: each running request's filled tokens, then what its allocation
    holds empty (the last block's slack when paged; the rest of its slab when contiguous), then free memory.
    """
    chart = "kv-memory"
    p = read_params(chart, KV_MEMORY_PARAMS, given)
    result = simulation(chart, p)
    s = result.summary
    capacity = s["kv_capacity_tokens"]
    instance = _serving_instance(result)
    over_time: list[Row] = []
    for time_s, used, stored in zip(
        instance["time_s"], instance["reserved_tokens"], instance["stored_tokens"], strict=True
    ):
        over_time.append({"time_s": time_s, "tokens": used, "what": "reserved"})
        over_time.append({"time_s": time_s, "tokens": stored, "what": "filled"})
    steps = [step for step in result.timeline if step["instance"] == instance["instance"] and "kv" in step]
    fullest = max(steps, key=lambda step: (sum(row[1] for row in step["kv"]), -step["start_s"]), default=None)
    blocks: list[Row] = []
    position = 0
    filled_total = reserved_total = 0
    if fullest is not None:
        for rid, reserved, filled in fullest["kv"]:
            filled = min(filled, reserved)
            blocks.append({"request": rid, "part": "filled", "start": position, "end": position + filled})
            if reserved > filled:
                blocks.append({"request": rid, "part": "reserved, empty", "start": position + filled,
                               "end": position + reserved})  # fmt: skip
            position += reserved
            filled_total += filled
            reserved_total += reserved
    blocks.append({"request": None, "part": "free", "start": position, "end": max(capacity, position)})
    moment = (fullest["start_s"] + fullest["time_s"]) if fullest else 0.0
    running = len(fullest["kv"]) if fullest else 0
    waste = 1.0 - filled_total / reserved_total if reserved_total else 0.0
    kind = "paged" if p["memory"] == "paged" else "contiguous"
    peak = at_spec_peak(partial(simulation, chart, p))  # the same run at spec peaks: its times' bounds
    b = None if peak is None else peak.summary
    caption = (
        f"KV memory of one GPU under {SCHEDULER_NAMES[p['scheduler']]} with {kind} allocation: "
        f"{_describe(p)}. At its fullest step in the first {MAX_TIMELINE_STEPS} "
        f"(t = {format_value(moment, 'ms')}), {running} requests held {_tokens(reserved_total)} of the "
        f"pool's {_tokens(capacity)}, {format_value(waste, '%')} of it empty; the run made "
        f"{s['preemptions']} preemptions."
    )
    table = [
        ("Pool (tokens of KV cache)", _tokens(capacity)),
        ("Peak reserved", _tokens(s["kv_peak_reserved_tokens"])),
        ("Reserved but empty, over the run", format_value(s["kv_waste_fraction"], "%")),
        ("Requests running at the fullest step", str(running)),
        ("Preemptions", str(s["preemptions"])),
        (
            "Median time to first token",
            _ms_with_bound(s["ttft_s"]["p50"], None if b is None else b["ttft_s"]["p50"]),
        ),
        (
            "Median time per output token",
            _ms_with_bound(s["tpot_s"]["p50"] or 0.0, None if b is None else b["tpot_s"]["p50"] or 0.0),
        ),
    ]
    return ChartData(
        chart,
        p,
        {"over_time": over_time, "capacity": [{"tokens": capacity, "label": "pool"}], "map": blocks},
        ("Quantity", "Value"),
        tuple(table),
        caption,
    )


# ---------------------------------------------------------------------------------------------- latencies

SERVING_LATENCY_PARAMS: tuple[Param, ...] = (
    *SIMULATION_PARAMS,
    Param(
        "compare",
        (),
        _schedulers,
        "compare: [static, continuous]",
        "schedulers to run on the same workload ([]: only `scheduler`)",
    ),
)
PERCENTILE_KEYS = ("p50", "p90", "p99")


def serving_latency(**given: Any) -> ChartData:
    """Percentiles of time to first token and time per output token, and output throughput, per scheduler.

    Every scheduler serves the very same requests, so the bars differ only by how steps were filled. Under a
    calibrated setting each also runs at spec peaks: its figures (``peak_*``) are drawn as a grey tick on each
    bar, and the table prints each with its bound beside it, as the lessons do; outside one the ticks mark
    the bars' own tops.
    """
    chart = "serving-latency"
    p = read_params(chart, SERVING_LATENCY_PARAMS, given)
    names = p["compare"] or (p["scheduler"],)
    percentiles: list[Row] = []
    throughput: list[Row] = []
    table = []
    bounded = bound_setting() is not None
    for name in names:
        result = simulation(chart, p, name)
        s = result.summary
        # The same run at spec peaks (kept per setting like this one): each figure's bound.
        peak = at_spec_peak(partial(simulation, chart, p, name))
        b = peak.summary if peak is not None else s
        label = SCHEDULER_NAMES[name]
        for metric, key in (("Time to first token", "ttft_s"), ("Time per output token", "tpot_s")):
            for pct in PERCENTILE_KEYS:
                value = s[key][pct]
                if value is not None:
                    bound = b[key][pct] if b[key][pct] is not None else value
                    percentiles.append(
                        {"scheduler": label, "colour": SCHEDULER_COLOURS[name], "metric": metric,
                         "percentile": pct, "ms": _in("ms", value), "peak_ms": _in("ms", bound)}
                    )  # fmt: skip
        throughput.append(
            {"scheduler": label, "colour": SCHEDULER_COLOURS[name],
             "tokens_per_s": s["output_tokens_per_s"] or 0.0,
             "peak_tokens_per_s": b["output_tokens_per_s"] or 0.0,
             "goodput_rps": s["goodput_rps"] or 0.0, "slo_attainment": s["slo_attainment"]}
        )  # fmt: skip

        def shown(unit: str, value: float | None, bound: float | None) -> str:
            text = format_value(value or 0.0, unit)
            return with_bound(text, format_value(bound or 0.0, unit) if bounded else None)

        table.append(
            (
                label,
                shown("tokens/s", s["output_tokens_per_s"], b["output_tokens_per_s"]),
                shown("ms", s["ttft_s"]["p50"], b["ttft_s"]["p50"]),
                shown("ms", s["ttft_s"]["p99"], b["ttft_s"]["p99"]),
                shown("ms", s["tpot_s"]["p50"], b["tpot_s"]["p50"]),
                shown("ms", s["tpot_s"]["p99"], b["tpot_s"]["p99"]),
                format_value(s["slo_attainment"], "%"),
            )
        )
    slo = [
        {"metric": "Time to first token", "ms": p["slo_ttft_ms"]},
        {"metric": "Time per output token", "ms": p["slo_tpot_ms"]},
    ]
    caption = (
        f"Latency percentiles and output throughput of {', '.join(SCHEDULER_NAMES[n] for n in names)}: "
        f"{_describe(p)}. Dashed lines: the SLO (TTFT {format_value(p['slo_ttft_ms'] * 1e-3, 'ms')}, TPOT "
        f"{format_value(p['slo_tpot_ms'] * 1e-3, 'ms')})."
    )
    if bounded:
        caption += " Grey ticks: the same run at spec-sheet peaks, the bound."
    return ChartData(
        chart,
        p,
        {"percentiles": percentiles, "throughput": throughput, "slo": slo},
        ("Scheduler", "Output tokens/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "Meets the SLO"),
        tuple(table),
        caption,
    )


# ------------------------------------------------------------------------------------ batch trade-off (cost)

BATCH_TRADEOFF_PARAMS: tuple[Param, ...] = (
    Param("model", "llama-3.1-8b", read_model, "model: llama-3.1-8b", "model served"),
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset"),
    Param(
        "context",
        2000,
        read_count(1, 1 << 20, "a context length"),
        "context: 2000",
        "tokens each request attends",
    ),
    Param(
        "max_batch", 512, read_count(2, 4096, "a batch size"), "max_batch: 512", "largest batch on the curve"
    ),
)
TRADEOFF_LABELS = (1, 8, 64, 256)


def batch_tradeoff(**given: Any) -> ChartData:
    """Decode's latency against its throughput as the batch grows: weights only, and with the KV cache read.

    Each point is one decode step at batch b: its time is the time per output token every request sees, and
    b over it is the GPU's output. Points whose KV cache does not fit in the GPU's memory are marked.
    """
    chart = "batch-tradeoff"
    p = read_params(chart, BATCH_TRADEOFF_PARAMS, given)
    context = p["context"]
    # Both say whether they read the cache: left unsaid, the course's setting (which counts the reads) would
    # fill it in, and the weights-only curve was drawn on top of the other, identical to it.
    plain = Scenario(p["model"], p["gpu"], kv_traffic=False, ignore_memory=True)
    with_kv = Scenario(p["model"], p["gpu"], kv_traffic=True, ignore_memory=True)
    fits_up_to = _computed(chart, "model", "use a model preset", lambda: with_kv.max_batch(context))
    batches = sorted(
        {max(1, round(2 ** (i / 2))) for i in range(int(2 * math.log2(p["max_batch"])) + 1)}
        | {p["max_batch"]}
    )
    points: list[Row] = []
    series_names = ("weights only", f"with the KV cache of {_tokens(context)}")
    # Both curves are decode steps: the one that reads the KV cache in the decode's colour, the baseline grey.
    colours = (NEUTRAL, PHASE_COLOURS["decode"])
    for series, colour, scenario in zip(series_names, colours, (plain, with_kv), strict=True):
        for batch in batches:
            step = scenario.decode(batch, context)
            points.append(
                {
                    "series": series,
                    "colour": colour,
                    "batch": batch,
                    "tpot_ms": _in("ms", step.time_s),
                    "tokens_per_s": batch / step.time_s,
                    "bound": step.bound_label,
                    "fits": "fits" if batch <= fits_up_to else "does not fit",
                    "label": f"batch {batch}" if batch in TRADEOFF_LABELS else "",
                }
            )
    table = [
        (
            str(row["batch"]),
            row["series"],
            format_value(row["tpot_ms"] * 1e-3, "ms"),
            format_value(row["tokens_per_s"], "tokens/s"),
            row["bound"],
            row["fits"],
        )
        for row in points
        if row["batch"] in (*TRADEOFF_LABELS, p["max_batch"])
    ]
    caption = (
        f"Decode of {MODELS[p['model']].name} on the {short_gpu_name(p['gpu'])}: time per output token "
        f"against the GPU's output, batch 1 to {p['max_batch']}, each request at {_tokens(context)} of "
        "context. Counting the KV cache, the curve bends up long before the weights-only one; beyond batch "
        f"{fits_up_to} the cache no longer fits in memory (hollow points)."
    )
    return ChartData(
        chart,
        p,
        {"points": points},
        ("Batch", "Counting", "Time per output token", "Output", "Step is", "Memory"),
        tuple(table),
        caption,
    )
