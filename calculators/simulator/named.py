"""A serving run described by plain names and numbers, as a lesson, a chart or a widget states it.

``run_named(scheduler="static", rate=20, capacity_tokens=12000)`` builds the workload, the setup, the
scheduler, the KV memory and the SLO from keywords and simulates them; :func:`served` returns the run's
figures as attributes, which is what a lesson's ``{{ ... }}`` expression can read
(``served(scheduler="static").tpot_s.p50``). The charts and the serving widget call :func:`run_named` too, so
a figure in the prose and the bar on the chart come from the same run.

Two sets of defaults are named (:data:`PRESETS`): ``"reference"``, the batching and paging lessons' run
(Llama-3.1 8B, fixed lengths), and ``"course"``, the course workload of the latency, chunked-prefill and
disaggregation lessons (the nominal 8B model, chat-like log-normal lengths, 400 requests, a tight SLO).
"""

from __future__ import annotations

import bisect
import inspect
from dataclasses import dataclass
from typing import Any

from calculators.models import get_model
from calculators.passes import make_setup
from calculators.setting import active_setting, cache_per_setting
from calculators.simulator.engine import DEFAULT_MAX_STEPS
from calculators.simulator.kv_memory import MemoryConfig
from calculators.simulator.results import SLO, SimulationResult
from calculators.simulator.run_options import RunOptions
from calculators.simulator.schedulers import (
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Scheduler,
    StaticBatching,
)
from calculators.simulator.speculation import Speculation
from calculators.simulator.workload import Chats, Lengths, SharedPrefix
from calculators.validation import choice, count

SCHEDULERS = ("continuous", "static", "chunked", "disaggregated")
LENGTH_CAP = 32_768  # a log-normal length is cut here (its tail is long)

# The serving lessons' course workload: chat-like prompts and answers of varied length (log-normal, as
# measured request traces are), capped so that every request fits one GPU's cache. Means in tokens.
COURSE_WORKLOAD = {
    "prompt_mean": 1500,
    "prompt_spread": 1000,
    "prompt_cap": 8000,
    "output_mean": 250,
    "output_spread": 200,
    "output_cap": 1000,
}
# Per simulated rate: enough for a stable p99 (nearest rank: the 396th of 400, fifth worst), quick to build.
COURSE_REQUESTS = 400

PRESETS: dict[str, dict[str, object]] = {
    # run_named's own defaults: Llama-3.1 8B with attention over the cache counted, 512 + 128 tokens
    "reference": {},
    # the course workload on the nominal 8B model, SLO TTFT <= 0.5 s and TPOT <= 20 ms; attention's reads of
    # the KV cache counted (run_named's default), as the course's model setting counts them
    "course": {
        "model": "dense-8b",
        "requests": COURSE_REQUESTS,
        "prompt": COURSE_WORKLOAD["prompt_mean"],
        "prompt_spread": COURSE_WORKLOAD["prompt_spread"],
        "prompt_cap": COURSE_WORKLOAD["prompt_cap"],
        "output": COURSE_WORKLOAD["output_mean"],
        "output_spread": COURSE_WORKLOAD["output_spread"],
        "output_cap": COURSE_WORKLOAD["output_cap"],
        "slo_ttft_ms": 500.0,
        "slo_tpot_ms": 20.0,
    },
}
"""Named sets of :func:`run_named` keywords; a keyword given with a preset overrides it."""


def scheduler_named(
    name: str,
    *,
    batch_size: int = 16,
    batch_timeout_s: float | None = None,
    max_sequences: int = 256,
    max_batch_tokens: int = 8192,
    token_budget: int = 512,
    prefill_gpus: int = 1,
    decode_gpus: int = 1,
    link: str = "nvlink4",
) -> Scheduler:
    """The scheduler called ``name`` (one of :data:`SCHEDULERS`) with these settings."""
    choice("scheduler", name, SCHEDULERS)
    if name == "static":
        return StaticBatching(batch_size, batch_timeout_s)
    if name == "chunked":
        return ChunkedPrefill(token_budget, max_sequences)
    if name == "disaggregated":
        return Disaggregated(
            prefill_gpus, decode_gpus, link, max_sequences=max_sequences, max_batch_tokens=max_batch_tokens
        )
    return ContinuousBatching(max_sequences, max_batch_tokens)


def lengths(mean: int, spread: int = 0, cap: int = LENGTH_CAP) -> Lengths | int:
    """Every request is ``mean`` tokens long when ``spread`` is 0; else log-normal with that deviation,
    cut at ``cap``."""
    return mean if spread == 0 else Lengths.lognormal(mean, spread, cap=cap)


def course_lengths() -> tuple[Lengths | int, Lengths | int]:
    """The course workload's prompt and output length distributions."""
    w = COURSE_WORKLOAD
    return (
        lengths(w["prompt_mean"], w["prompt_spread"], w["prompt_cap"]),
        lengths(w["output_mean"], w["output_spread"], w["output_cap"]),
    )


def run_named(
    model: str = "llama-3.1-8b",
    gpu: str = "h100-sxm",
    *,
    kv_traffic: bool = True,
    scheduler: str = "continuous",
    requests: int = 100,
    rate: float = 10.0,
    burst: bool = False,
    prompt: int = 512,
    prompt_spread: int = 0,
    prompt_cap: int = LENGTH_CAP,
    output: int = 128,
    output_spread: int = 0,
    output_cap: int = LENGTH_CAP,
    batch_size: int = 16,
    batch_timeout_s: float | None = None,
    max_sequences: int = 256,
    max_batch_tokens: int = 8192,
    token_budget: int = 512,
    memory: str = "paged",
    block_tokens: int = 16,
    reserve: str = "max",
    capacity_tokens: int | None = None,
    max_sequence_tokens: int | None = None,
    prefill_gpus: int = 1,
    decode_gpus: int = 1,
    link: str = "nvlink4",
    replicas: int = 1,
    routing: str = "round-robin",
    preemption: str = "recompute",
    slo_ttft_ms: float = 1000.0,
    slo_tpot_ms: float = 50.0,
    seed: int = 0,
    timeline_steps: int = 0,
    timeline_memory: bool = False,
    max_steps: int = DEFAULT_MAX_STEPS,
    prefix_caching: bool = False,
    shared_prefix: int = 0,
    prefix_share: float = 1.0,
    prefixes: int = 1,
    turns: int = 1,
    think_s: float = 10.0,
    speculative: bool = False,
    acceptance: float = 0.7,
    proposed: int = 4,
    drafter: str = "heads",
    draft_model: str | None = None,
    pipeline_stages: int = 1,
    micro_batches: int = 1,
) -> SimulationResult:
    """Simulate ``requests`` requests (Poisson at ``rate`` per second, or a ``burst``) of ``prompt`` and
    ``output`` tokens on one replica of ``model`` on ``gpu``; every keyword is one of the run's settings.

    The defaults are the serving lessons' reference run: Llama-3.1 8B in BF16 on an H100 SXM with attention
    over the KV cache counted, continuous batching, paged KV memory in 16-token blocks. A colocated scheduler
    runs on ``replicas`` GPUs (requests in turn, or by ``routing="least-loaded"``); a disaggregated one on
    its own pools, ignoring it. ``preemption="swap"`` swaps a preempted request's cache to CPU memory
    instead of recomputing it; ``batch_timeout_s`` starts a static batch once its oldest request has waited
    that long.

    Prefix caching: ``shared_prefix`` tokens of system prompt (one of ``prefixes``) start a
    ``prefix_share`` of the prompts; ``turns`` above 1 groups the requests into chats whose turns arrive
    ``think_s`` apart, each prompt holding the previous turn's prompt and answer (``prompt`` is then each
    turn's new message); ``prefix_caching`` reuses the cached blocks (see :mod:`.prefix_cache`).

    ``speculative`` turns on speculative decoding: ``drafter`` ("heads", "ngram", or "model" with
    ``draft_model``) proposes ``proposed`` tokens a step, each accepted with chance ``acceptance`` (see
    :mod:`.speculation`; its draws are seeded by ``seed``).

    ``pipeline_stages`` above 1 splits the model's layers over that many GPUs one after another (each
    replica, and each disaggregated pool's GPU, is then that many GPUs), and ``micro_batches`` above 1
    splits each step's batch into micro-batches that follow one another through the stages (see
    :mod:`.pipeline`; not with speculative decoding).
    """
    stages = pipeline_stage_count(model, pipeline_stages)
    if burst and turns != 1:
        raise ValueError("turns needs arrivals over time: a burst has no time between a chat's turns")
    schedule = scheduler_named(
        scheduler,
        batch_size=batch_size,
        batch_timeout_s=batch_timeout_s,
        max_sequences=max_sequences,
        max_batch_tokens=max_batch_tokens,
        token_budget=token_budget,
        prefill_gpus=prefill_gpus,
        decode_gpus=decode_gpus,
        link=link,
    )
    options = RunOptions(
        prompt=lengths(prompt, prompt_spread, prompt_cap),
        output=lengths(output, output_spread, output_cap),
        seed=seed,
        shared_prefix=SharedPrefix(shared_prefix, prefix_share, prefixes) if shared_prefix else None,
        chats=Chats(turns, think_s) if turns != 1 else None,
        setup=make_setup(model, gpu, kv_traffic=kv_traffic, pipeline_stages=stages),
        scheduler=schedule,
        memory=MemoryConfig(
            memory,
            block_tokens,
            capacity_tokens=capacity_tokens,
            max_sequence_tokens=max_sequence_tokens,
            reserve=reserve,
            preemption=preemption,
        ),
        replicas=1 if scheduler == "disaggregated" else replicas,
        slo=SLO(slo_ttft_ms / 1e3, slo_tpot_ms / 1e3),
        prefix_caching=prefix_caching,
        routing=routing,
        speculation=(
            Speculation(acceptance, proposed, drafter, draft_model, seed=seed) if speculative else None
        ),
        micro_batches=micro_batches,
    )
    work = options.burst(requests) if burst else options.poisson(rate, requests)
    return options.simulate(
        work, timeline_steps=timeline_steps, timeline_memory=timeline_memory, max_steps=max_steps
    )


def pipeline_stage_count(model: str, stages: object) -> int:
    """``stages`` checked for ``model``: a whole number from 1 to its number of layers (a stage holds at
    least one layer), with a message that says so."""
    layers = get_model(model).layers
    if isinstance(stages, int) and not isinstance(stages, bool) and stages > layers:
        raise ValueError(
            f"pipeline_stages={stages:,}: {model} has {layers} layers and each stage holds at least one; "
            f"give 1 to {layers}"
        )
    return count("pipeline_stages", stages, maximum=layers)


@dataclass(frozen=True)
class Stats:
    """One latency's distribution over a run's requests, in seconds (nearest-rank percentiles)."""

    mean: float
    p50: float
    p90: float
    p99: float
    max: float

    @classmethod
    def of(cls, summary: dict[str, float | None], name: str) -> Stats:
        values = [summary[k] for k in ("mean", "p50", "p90", "p99", "max")]
        if any(v is None for v in values):
            raise ValueError(f"this run has no {name} values (every request wrote a single token?)")
        return cls(*(float(v) for v in values))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Served:
    """The figures of one run (seconds, tokens, shares), as attributes a lesson can quote.

    ``slo_attainment`` is the share of requests that met both bounds of the SLO, and ``good_rate_rps`` the
    arrival rate times that share: the requests per second that arrive and are served within the SLO.
    ``goodput_rps`` divides the same count by the run's whole length, tail included, so a short run
    understates it; the lessons quote ``good_rate_rps``. For the same reason ``served_rps`` measures only
    the window in which requests arrive: the output tokens written in it per second, divided by the mean
    tokens of an answer. It follows the arrival rate while the engine keeps up and levels off when the
    arrivals outrun it (``throughput_rps`` is over the whole run, tail included).

    ``busy_prefill`` and ``busy_decode`` are the pools' busy fractions under disaggregation (``busy`` for a
    colocated engine), and ``mean_decode_batch`` the requests an average decode step carried.
    """

    rate_per_s: float  # the arrival rate asked for (requests per second)
    ttft_s: Stats  # time to first token
    tpot_s: Stats  # time per output token
    itl_s: Stats  # gaps between two tokens of a request
    e2e_s: Stats  # arrival to last token
    queueing_s: Stats  # arrival to first scheduled
    throughput_rps: float  # requests finished per second, over the whole run
    goodput_rps: float  # requests per second that met the SLO, over the whole run
    slo_attainment: float  # share of requests within both SLO bounds
    busy: float  # share of GPU time spent in steps
    busy_prefill: float | None  # the prefill pool's busy share (disaggregated only)
    busy_decode: float | None  # the decode pool's busy share (disaggregated only)
    output_tokens_per_s: float  # output tokens per second over the run
    mean_output_tokens: float  # tokens of an average answer
    served_rps: float  # requests per second served while requests arrive
    mean_decode_batch: float  # requests in an average decode step
    longest_stall_s: float  # longest gap between two tokens of any request
    preemptions: int  # times a running request lost its cache and had to recompute it
    kv_capacity_tokens: int  # tokens of KV cache the pool holds
    kv_peak_reserved_tokens: int  # most tokens of KV cache reserved at once
    kv_waste_fraction: float  # share of reserved KV memory (over time) that held no token
    duration_s: float  # from the first arrival to the last token
    prefix_hit_rate: float  # share of prompt tokens found in the prefix cache (0 without prefix caching)
    result: SimulationResult

    @property
    def good_rate_rps(self) -> float:
        return self.rate_per_s * self.slo_attainment

    @classmethod
    def of(cls, result: SimulationResult, rate_per_s: float) -> Served:
        s = result.summary
        by_role = s["busy_fraction_by_role"]
        first = min(float(r["arrival_s"]) for r in result.requests)
        last = max(float(r["arrival_s"]) for r in result.requests)
        written = sum(bisect.bisect_right(result.token_times(int(r["id"])), last) for r in result.requests)
        mean_output = s["output_tokens"] / s["requests"]
        return cls(
            rate_per_s=rate_per_s,
            ttft_s=Stats.of(s["ttft_s"], "TTFT"),
            tpot_s=Stats.of(s["tpot_s"], "TPOT"),
            itl_s=Stats.of(s["itl_s"], "inter-token latency"),
            e2e_s=Stats.of(s["e2e_s"], "end-to-end latency"),
            queueing_s=Stats.of(s["queueing_s"], "queueing"),
            throughput_rps=float(s["throughput_rps"]),
            goodput_rps=float(s["goodput_rps"]),
            slo_attainment=float(s["slo_attainment"]),
            busy=float(s["busy_fraction"]),
            busy_prefill=by_role.get("prefill"),
            busy_decode=by_role.get("decode"),
            output_tokens_per_s=float(s["output_tokens_per_s"]),
            mean_output_tokens=mean_output,
            served_rps=(
                written / (last - first) / mean_output if last > first else float(s["throughput_rps"])
            ),
            mean_decode_batch=float(s["mean_decode_batch"]),
            longest_stall_s=float(s["longest_stall_s"]),
            preemptions=int(s["preemptions"]),
            kv_capacity_tokens=int(s["kv_capacity_tokens"]),
            kv_peak_reserved_tokens=int(s["kv_peak_reserved_tokens"]),
            kv_waste_fraction=float(s["kv_waste_fraction"]),
            duration_s=float(s["duration_s"]),
            prefix_hit_rate=float(s["prefix_cache"]["hit_rate"]) if "prefix_cache" in s else 0.0,
            result=result,
        )


def preset_settings(preset: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The :func:`run_named` keywords of ``preset`` (see :data:`PRESETS`) with ``settings`` over them."""
    choice("preset", preset, tuple(PRESETS))
    return {**PRESETS[preset], **settings}


@cache_per_setting(256)
def _served(items: tuple[tuple[str, Any], ...]) -> Served:
    settings = dict(items)
    rate = settings.get("rate", inspect.signature(run_named).parameters["rate"].default)
    return Served.of(run_named(**settings), float(rate))


def served(preset: str = "reference", **settings: Any) -> Served:
    """The figures of :func:`run_named` for ``preset``'s keywords with ``settings`` over them; the same run
    is simulated once. ``served(preset="course", rate=20, scheduler="chunked")`` is the course workload at
    20 requests/s on one GPU with chunked prefill. Under a model setting (:mod:`calculators.setting`),
    KV reads follow the setting unless ``kv_traffic`` is given, whatever the preset says."""
    merged = preset_settings(preset, settings)
    chosen = active_setting()
    if chosen is not None and "kv_traffic" not in settings:
        merged["kv_traffic"] = chosen.kv_traffic  # the setting fills what the lesson left unsaid
    return _served(tuple(sorted(merged.items())))
