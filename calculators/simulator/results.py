"""What a simulation produced, as plain data: per-request latencies, their percentiles, throughput, goodput,
utilisation, KV memory over time, and a compact timeline of steps.

Everything :meth:`SimulationResult.as_dict` returns is made of dicts, lists, numbers, strings and None, so a
browser widget can pass it straight to a chart. Percentiles are nearest-rank: the p-th percentile is the
smallest value with at least p% of the values at or below it, so it is always one of the measured values.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calculators.validation import positive_number

if TYPE_CHECKING:
    from calculators.passes import Setup
    from calculators.simulator.kv_memory import MemoryConfig
    from calculators.simulator.schedulers import Scheduler, StepPlan
    from calculators.simulator.state import Instance, Sequence

PERCENTILES = (50, 90, 99)
SERIES_POINTS = 300  # points of each memory-over-time series


@dataclass(frozen=True)
class SLO:
    """A service-level objective: a request meets it when both its TTFT and its TPOT are within bounds."""

    ttft_s: float = 1.0
    tpot_s: float = 0.05

    def __post_init__(self) -> None:
        positive_number("slo ttft_s", self.ttft_s)
        positive_number("slo tpot_s", self.tpot_s)

    def as_dict(self) -> dict[str, float]:
        return {"ttft_s": self.ttft_s, "tpot_s": self.tpot_s}


def percentile(values: Seq[float], p: float) -> float | None:
    """Nearest-rank percentile of ``values`` (None when there are none)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[rank - 1]


def weighted_percentile(pairs: list[tuple[float, int]], p: float) -> float | None:
    """Nearest-rank percentile of values given as (value, how many times) pairs."""
    total = sum(w for _, w in pairs)
    if total == 0:
        return None
    rank = max(1, math.ceil(p / 100.0 * total))
    seen = 0
    for value, weight in sorted(pairs):
        seen += weight
        if seen >= rank:
            return value
    return sorted(pairs)[-1][0]  # pragma: no cover - rounding guard


def _stats(values: Seq[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "p50": None, "p90": None, "p99": None, "max": None}
    ordered = sorted(values)
    n = len(ordered)
    out: dict[str, float | None] = {"mean": math.fsum(ordered) / n}
    for p in PERCENTILES:
        out[f"p{p}"] = ordered[max(1, math.ceil(p / 100.0 * n)) - 1]
    out["max"] = ordered[-1]
    return out


class StepLog:
    """Per-step records of every instance (columns of arrays), and the first steps as a timeline."""

    COLUMNS = (
        "start_s",
        "time_s",
        "decode_tokens",
        "prefill_tokens",
        "kv_used",
        "kv_stored",
        "compute_s",
        "memory_s",
        "in_decode",  # requests in the decode phase during the step, whether or not the step decodes
    )

    def __init__(self, timeline_steps: int, *, memory: bool = False) -> None:
        self.timeline_limit = timeline_steps
        self.memory = memory  # add each running request's KV cache to every timeline step
        # Each instance's first steps; the timeline is instance after instance, whatever order they ran in
        # (the pools of disaggregated serving run interleaved in time).
        self.by_instance: dict[int, list[dict[str, Any]]] = {}
        self.steps = 0
        self.columns: dict[int, tuple[array[Any], ...]] = {}

    @property
    def timeline(self) -> list[dict[str, Any]]:
        """The first ``timeline_limit`` steps, instance by instance."""
        steps = [step for index in sorted(self.by_instance) for step in self.by_instance[index]]
        return steps[: self.timeline_limit]

    @property
    def truncated(self) -> bool:
        return self.steps > self.timeline_limit

    def new_instance(self, index: int) -> tuple[array[Any], ...]:
        cols = (
            array("d"),
            array("d"),
            array("l"),
            array("l"),
            array("l"),
            array("l"),
            array("d"),
            array("d"),
            array("l"),
        )
        self.columns[index] = cols
        self.by_instance[index] = []
        return cols

    def timeline_step(
        self,
        inst: Instance,
        start: float,
        dt: float,
        plan: StepPlan,
        chunks: list[tuple[int, int]],
    ) -> None:
        """Record one step of ``inst`` if it is among its first ``timeline_limit``."""
        self.steps += 1
        mine = self.by_instance[inst.index]
        if len(mine) >= self.timeline_limit:
            return
        step: dict[str, Any] = {
            "instance": inst.index,
            "start_s": start,
            "time_s": dt,
            "decode": list(inst.decoding) if plan.decode else [],
            "prefill": [[s.id, c, cached] for (s, _), (c, cached) in zip(plan.prefill, chunks, strict=True)],
        }
        if self.memory:
            step["kv"] = kv_holdings(inst, plan)
        mine.append(step)


def kv_holdings(inst: Instance, plan: StepPlan) -> list[list[int]]:
    """``[id, reserved tokens, filled tokens]`` of every request holding KV cache once this step has run.

    Reserved is what the allocator handed out (whole blocks, or a contiguous slab); filled is what the request
    has actually written: its context so far, the token this step writes included (a decoding request), or
    the prompt tokens prefilled so far, this step's chunk included. The difference is the waste a memory map
    shows.
    """
    unit = inst.memory.unit
    j = len(inst.decode_ends)  # this step's decode index (not yet recorded)
    chunk = {s.id: c for s, c in plan.prefill}
    rows = [
        [s.id, s.slots * unit, s.ctx_at_join + j - s.join if plan.decode else s.ctx_at_join + j - s.join - 1]
        for s in inst.decoding.values()
    ]
    rows += [[s.id, s.slots * unit, s.prefilled + chunk.get(s.id, 0)] for s in inst.prefilling.values()]
    rows.sort()
    return rows


class SimulationResult:
    """The outcome of :func:`calculators.simulate`.

    ``summary`` holds the headline figures, ``requests`` one record per request (in the workload's order),
    ``timeline`` the first steps (which requests ran, and how many tokens), ``kv_series`` KV memory over time
    per instance. :meth:`inter_token_latencies` gives every gap between one request's tokens.
    """

    def __init__(
        self,
        *,
        config: dict[str, Any],
        summary: dict[str, Any],
        requests: list[dict[str, Any]],
        timeline: list[dict[str, Any]],
        timeline_truncated: bool,
        kv_series: list[dict[str, Any]],
        token_sources: dict[int, tuple[list[float], list[tuple[int, int, int]]]],
        decode_ends: dict[int, array[Any]],
        bursts: dict[int, list[tuple[int, int, int]]] | None = None,
    ) -> None:
        self.config = config
        self.summary = summary
        self.requests = requests
        self.timeline = timeline
        self.timeline_truncated = timeline_truncated
        self.kv_series = kv_series
        # Per request: the tokens written by prefills, and its stays in a decode batch; token times are
        # built from them on demand, so a 10,000-request run does not build 3 million of them up front.
        self._token_sources = token_sources
        self._decode_ends = decode_ends
        self._bursts = bursts or {}

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"SimulationResult({s['requests']} requests, {s['throughput_rps']:.3g} req/s, "
            f"p99 TTFT {s['ttft_s']['p99']!r} s)"
        )

    def token_times(self, request_id: int) -> list[float]:
        """When each of a request's output tokens came, seconds from the start."""
        try:
            prefilled, segments = self._token_sources[request_id]
        except KeyError:
            raise ValueError(f"no request with id {request_id!r} in this result") from None
        times = list(prefilled)
        for index, first, last in segments:
            times.extend(self._decode_ends[index][first : last + 1])
        for index, step, extra in self._bursts.get(request_id, ()):
            times.extend([self._decode_ends[index][step]] * extra)  # a speculative step's further tokens
        times.sort()
        return times

    def inter_token_latencies(self, request_id: int) -> list[float]:
        """Seconds between each of a request's output tokens and the one before it."""
        t = self.token_times(request_id)
        return [b - a for a, b in itertools.pairwise(t)]

    def as_dict(self, *, token_latencies: bool = False) -> dict[str, Any]:
        """Plain data for JSON and charts; ``token_latencies=True`` adds every inter-token latency."""
        requests = self.requests
        if token_latencies:
            requests = [
                {**r, "inter_token_latencies_s": self.inter_token_latencies(int(r["id"]))} for r in requests
            ]
        return {
            "config": self.config,
            "summary": self.summary,
            "requests": requests,
            "timeline": self.timeline,
            "timeline_truncated": self.timeline_truncated,
            "kv_series": self.kv_series,
        }

    @classmethod
    def build(
        cls,
        *,
        setup: Setup,
        scheduler: Scheduler,
        memory: MemoryConfig,
        slo: SLO,
        capacity_tokens: int,
        sequences: list[Sequence],
        instances: list[Instance],
        roles: list[str],
        log: StepLog,
        transfers: dict[int, float],
    ) -> SimulationResult:
        ends = {inst.index: inst.decode_ends for inst in instances}
        gaps_between = {
            i: array("d", [0.0] + [e[j] - e[j - 1] for j in range(1, len(e))]) for i, e in ends.items()
        }
        # How many tokens followed a decode step of the same stay, per decode step: their latency is the
        # time between the two steps' ends.
        followers = {i: [0] * (len(e) + 1) for i, e in ends.items()}
        records: list[dict[str, Any]] = []
        token_sources: dict[int, tuple[list[float], list[tuple[int, int, int]]]] = {}
        single_gaps: list[float] = []
        bursts: dict[int, list[tuple[int, int, int]]] = {}
        burst_tokens = 0  # speculative decoding: tokens that came in the same step as the one before them
        output_tokens = 0
        for seq in sequences:
            assert seq.finish_s is not None
            assert seq.first_token_s is not None
            tokens = 1 + len(seq.recompute_token_s)
            longest = max(seq.gaps, default=0.0)
            for inst_index, a, b in seq.segments:
                tokens += b - a + 1
                if b > a:
                    f = followers[inst_index]
                    f[a + 1] += 1
                    f[b + 1] -= 1
                    longest = max(longest, max(gaps_between[inst_index][a + 1 : b + 1]))
            if seq.bursts:
                extra = sum(e for _, _, e in seq.bursts)
                tokens += extra
                burst_tokens += extra
                bursts[seq.id] = seq.bursts
            token_sources[seq.id] = ([seq.first_token_s, *seq.recompute_token_s], seq.segments)
            single_gaps.extend(seq.gaps)
            output_tokens += seq.output
            ttft = seq.first_token_s - seq.arrival_s
            tpot = (seq.finish_s - seq.first_token_s) / (seq.output - 1) if seq.output > 1 else None
            queueing = (seq.first_scheduled_s or seq.arrival_s) - seq.arrival_s
            meets = ttft <= slo.ttft_s and (tpot is None or tpot <= slo.tpot_s)
            records.append(
                {
                    "id": seq.id,
                    "arrival_s": seq.arrival_s,
                    "prompt_tokens": seq.prompt,
                    "output_tokens": seq.output,
                    "queueing_s": queueing,
                    "ttft_s": ttft,
                    "tpot_s": tpot,
                    "e2e_s": seq.finish_s - seq.arrival_s,
                    "finish_s": seq.finish_s,
                    "longest_gap_s": longest,
                    "preemptions": seq.preemptions,
                    "kv_transfer_s": transfers.get(seq.id),
                    "meets_slo": meets,
                }
            )
            assert tokens == seq.output, (seq.id, tokens, seq.output)

        itl_pairs: list[tuple[float, int]] = [(g, 1) for g in single_gaps]
        if burst_tokens:
            itl_pairs.append((0.0, burst_tokens))
        for i, f in followers.items():
            running = 0
            gb = gaps_between[i]
            for j in range(1, len(f) - 1):
                running += f[j]
                if running:
                    itl_pairs.append((gb[j], running))
        itl_count = sum(w for _, w in itl_pairs)
        itl_summary: dict[str, float | None] = {
            "mean": (math.fsum(v * w for v, w in itl_pairs) / itl_count) if itl_count else None,
            **{f"p{p}": weighted_percentile(itl_pairs, p) for p in PERCENTILES},
            "max": max((v for v, _ in itl_pairs), default=None),
        }

        first_arrival = min(s.arrival_s for s in sequences)
        last_finish = max(s.finish_s or 0.0 for s in sequences)
        duration = last_finish - first_arrival
        n = len(sequences)
        met = sum(1 for r in records if r["meets_slo"])
        busy = compute = mem_time = used_area = stored_area = in_decode_area = 0.0
        steps = decode_steps = decode_rows = 0
        series: list[dict[str, Any]] = []
        peak_used = 0
        busy_by_role: dict[str, list[float]] = {}
        role_end: dict[str, float] = {}
        for inst, role in zip(instances, roles, strict=True):
            start, dt, dec, _pre, used, stored, comp, memt, in_decode = log.columns[inst.index]
            busy += math.fsum(dt)
            busy_by_role.setdefault(role, []).append(math.fsum(dt))
            if len(dt):
                role_end[role] = max(role_end.get(role, first_arrival), start[-1] + dt[-1])
            compute += math.fsum(comp)
            mem_time += math.fsum(memt)
            used_area += math.fsum(u * t for u, t in zip(used, dt, strict=True))
            stored_area += math.fsum(s * t for s, t in zip(stored, dt, strict=True))
            in_decode_area += math.fsum(k * t for k, t in zip(in_decode, dt, strict=True))
            steps += len(dt)
            decode_steps += len(inst.decode_ends)
            decode_rows += sum(dec)
            peak_used = max(peak_used, max(used, default=0))
            series.append(_series(inst.index, role, start, dt, used, stored))
        gpu_seconds = duration * len(instances) if duration > 0 else 0.0
        ttfts = [float(r["ttft_s"]) for r in records]
        tpots = [float(r["tpot_s"]) for r in records if r["tpot_s"] is not None]
        longest_record = max(records, key=lambda r: (r["longest_gap_s"], -int(r["id"])))
        summary: dict[str, Any] = {
            "requests": n,
            "output_tokens": output_tokens,
            "prompt_tokens": sum(s.prompt for s in sequences),
            "duration_s": duration,
            "throughput_rps": n / duration if duration > 0 else None,
            "output_tokens_per_s": output_tokens / duration if duration > 0 else None,
            "goodput_rps": met / duration if duration > 0 else None,
            "slo_attainment": met / n,
            "queueing_s": _stats([float(r["queueing_s"]) for r in records]),
            "ttft_s": _stats(ttfts),
            "tpot_s": _stats(tpots),
            "itl_s": itl_summary,
            "e2e_s": _stats([float(r["e2e_s"]) for r in records]),
            "longest_stall_s": longest_record["longest_gap_s"],
            "longest_stall_request": longest_record["id"],
            "preemptions": sum(inst.preemptions for inst in instances),
            "steps": steps,
            "decode_steps": decode_steps,
            # Two averages of the batch, which differ: the requests a decode step carries, averaged over
            # decode steps; and the requests in the decode phase (from the first token to the last, stalled
            # behind a prefill step or not), averaged over the run's time and summed over instances: the L
            # of Little's law, equal to the completion rate times the mean time in the decode phase.
            "mean_decode_batch": decode_rows / decode_steps if decode_steps else 0.0,
            "time_averaged_decode_batch": in_decode_area / duration if duration > 0 else None,
            "busy_fraction": busy / gpu_seconds if gpu_seconds else None,
            # Per role (serve, or prefill and decode under disaggregation): the share of its GPUs' time each
            # pool spent working, from the first arrival to that pool's last step (a prefill pool is done
            # when the arrivals stop, while the decode pool still finishes the answers); an idle pool is the
            # price of a split that does not match the workload.
            "busy_fraction_by_role": {
                role: _busy_share(times, role_end.get(role, first_arrival) - first_arrival)
                for role, times in busy_by_role.items()
            },
            "compute_utilisation": compute / gpu_seconds if gpu_seconds else None,
            "bandwidth_utilisation": mem_time / gpu_seconds if gpu_seconds else None,
            "kv_capacity_tokens": capacity_tokens,
            "kv_peak_reserved_tokens": peak_used,
            "kv_waste_fraction": 1.0 - stored_area / used_area if used_area else 0.0,
            "instances": len(instances),
        }
        config: dict[str, Any] = {
            "model": setup.model.key,
            "gpu": setup.gpu.key,
            "precision": setup.precision,
            "level": setup.level,
            "gpus_per_replica": setup.gpus,
            "compute_efficiency": setup.compute_efficiency,
            "memory_efficiency": setup.memory_efficiency,
            "scheduler": scheduler.describe(),
            "memory": memory.as_dict(),
            "slo": slo.as_dict(),
            "roles": roles,
        }
        return cls(
            config=config,
            summary=summary,
            requests=records,
            timeline=log.timeline,
            timeline_truncated=log.truncated,
            kv_series=series,
            token_sources=token_sources,
            decode_ends=ends,
            bursts=bursts,
        )


def _busy_share(busy_s: list[float], span_s: float) -> float | None:
    """Busy seconds of a pool's instances over their GPU-seconds in ``span_s`` (None for an empty span)."""
    return math.fsum(busy_s) / (span_s * len(busy_s)) if span_s > 0 else None


def _series(
    index: int, role: str, start: array[Any], dt: array[Any], used: array[Any], stored: array[Any]
) -> dict[str, Any]:
    """KV memory of one instance over time, at most SERIES_POINTS points (each bucket's largest value)."""
    n = len(dt)
    size = max(1, -(-n // SERIES_POINTS))
    time_s, used_tokens, stored_tokens = [], [], []
    for lo in range(0, n, size):
        hi = min(n, lo + size)
        time_s.append(start[hi - 1] + dt[hi - 1])
        used_tokens.append(max(used[lo:hi]))
        stored_tokens.append(max(stored[lo:hi]))
    return {
        "instance": index,
        "role": role,
        "time_s": time_s,
        "reserved_tokens": used_tokens,
        "stored_tokens": stored_tokens,
    }
