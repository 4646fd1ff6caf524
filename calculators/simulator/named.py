"""A serving run described by plain names and numbers, as a lesson, a chart or a widget states it.

``run_named(scheduler="static", rate=20, capacity_tokens=12000)`` builds the workload, the setup, the
scheduler, the KV memory and the SLO from keywords and simulates them; :func:`served` returns the run's
headline figures as attributes, which is what a lesson's ``{{ ... }}`` expression can read
(``served(scheduler="static").tpot_p50_s``). The charts and the serving widget call :func:`run_named` too, so
a figure in the prose and the bar on the chart come from the same run.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields

from calculators.passes import make_setup
from calculators.simulator.engine import simulate
from calculators.simulator.kv_memory import MemoryConfig
from calculators.simulator.results import SLO, SimulationResult
from calculators.simulator.schedulers import (
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Scheduler,
    StaticBatching,
)
from calculators.simulator.workload import Lengths, burst_workload, poisson_workload
from calculators.validation import choice

SCHEDULERS = ("continuous", "static", "chunked", "disaggregated")
LENGTH_CAP = 32_768  # a log-normal length is cut here (its tail is long)


def scheduler_named(
    name: str,
    *,
    batch_size: int = 16,
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
        return StaticBatching(batch_size)
    if name == "chunked":
        return ChunkedPrefill(token_budget, max_sequences)
    if name == "disaggregated":
        return Disaggregated(prefill_gpus, decode_gpus, link, max_sequences=max_sequences)
    return ContinuousBatching(max_sequences, max_batch_tokens)


def lengths(mean: int, spread: int = 0) -> Lengths | int:
    """Every request is ``mean`` tokens long when ``spread`` is 0; else log-normal with that deviation."""
    return mean if spread == 0 else Lengths.lognormal(mean, spread, cap=LENGTH_CAP)


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
    output: int = 128,
    output_spread: int = 0,
    batch_size: int = 16,
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
    slo_ttft_ms: float = 1000.0,
    slo_tpot_ms: float = 50.0,
    seed: int = 0,
    timeline_steps: int = 0,
    timeline_memory: bool = False,
) -> SimulationResult:
    """Simulate ``requests`` requests (Poisson at ``rate`` per second, or a ``burst``) of ``prompt`` and
    ``output`` tokens on one replica of ``model`` on ``gpu``; every keyword is one of the run's settings.

    The defaults are the serving lessons' reference run: Llama-3.1 8B in BF16 on an H100 SXM with attention
    over the KV cache counted, continuous batching, paged KV memory in 16-token blocks. A colocated scheduler
    runs on ``replicas`` GPUs (requests in turn); a disaggregated one on its own pools, ignoring it.
    """
    if burst:
        work = burst_workload(
            requests, lengths(prompt, prompt_spread), lengths(output, output_spread), seed=seed
        )
    else:
        work = poisson_workload(
            rate, requests, lengths(prompt, prompt_spread), lengths(output, output_spread), seed=seed
        )
    schedule = scheduler_named(
        scheduler,
        batch_size=batch_size,
        max_sequences=max_sequences,
        max_batch_tokens=max_batch_tokens,
        token_budget=token_budget,
        prefill_gpus=prefill_gpus,
        decode_gpus=decode_gpus,
        link=link,
    )
    kv = MemoryConfig(
        memory,
        block_tokens,
        capacity_tokens=capacity_tokens,
        max_sequence_tokens=max_sequence_tokens,
        reserve=reserve,
    )
    return simulate(
        work,
        make_setup(model, gpu, kv_traffic=kv_traffic),
        schedule,
        memory=kv,
        replicas=1 if scheduler == "disaggregated" else replicas,
        slo=SLO(slo_ttft_ms / 1e3, slo_tpot_ms / 1e3),
        timeline_steps=timeline_steps,
        timeline_memory=timeline_memory,
    )


@dataclass(frozen=True)
class ServedFigures:
    """The headline figures of one run (seconds, tokens, shares), as attributes a lesson can quote."""

    output_tokens_per_s: float  # output tokens per second over the run
    throughput_rps: float  # requests finished per second
    goodput_rps: float  # requests per second that met the SLO
    slo_attainment: float  # share of requests within both SLO bounds
    ttft_p50_s: float  # median time to first token
    ttft_p99_s: float  # 99th-percentile time to first token
    tpot_p50_s: float  # median time per output token
    tpot_p99_s: float  # 99th-percentile time per output token
    itl_p99_s: float  # 99th-percentile gap between two tokens of a request
    longest_stall_s: float  # longest gap between two tokens of any request
    mean_decode_batch: float  # requests in an average decode step
    preemptions: int  # times a running request lost its cache and had to recompute it
    kv_capacity_tokens: int  # tokens of KV cache the pool holds
    kv_peak_reserved_tokens: int  # most tokens of KV cache reserved at once
    kv_waste_fraction: float  # share of reserved KV memory (over time) that held no token
    duration_s: float  # from the first arrival to the last token

    @classmethod
    def of(cls, result: SimulationResult) -> ServedFigures:
        s = result.summary
        nested = {
            "ttft_p50_s": s["ttft_s"]["p50"],
            "ttft_p99_s": s["ttft_s"]["p99"],
            "tpot_p50_s": s["tpot_s"]["p50"] or 0.0,
            "tpot_p99_s": s["tpot_s"]["p99"] or 0.0,
            "itl_p99_s": s["itl_s"]["p99"] or 0.0,
        }
        return cls(**{f.name: nested[f.name] if f.name in nested else s[f.name] for f in fields(cls)})


@functools.lru_cache(maxsize=64)
def _served(items: tuple[tuple[str, object], ...]) -> ServedFigures:
    return ServedFigures.of(run_named(**dict(items)))  # type: ignore[arg-type]


def served(model: str = "llama-3.1-8b", gpu: str = "h100-sxm", **settings: object) -> ServedFigures:
    """The headline figures of :func:`run_named` for these settings (the same run is simulated once)."""
    return _served(tuple(sorted({"model": model, "gpu": gpu, **settings}.items())))
