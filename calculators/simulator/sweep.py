"""One setup across arrival rates: the latency-against-load curves and the highest rate an SLO allows.

Every rate uses the same seed, so the arrival gaps at rate 2r are exactly half those at rate r (the same
uniform draws, scaled): the curves differ only by load, not by luck, and come out smooth.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from calculators.simulator.results import SimulationResult
from calculators.simulator.run_options import RunOptions
from calculators.simulator.workload import MAX_ARRIVAL_S, MAX_RATE_PER_S, MAX_REQUESTS
from calculators.validation import bounded_number, fraction
from calculators.validation import count as whole_number

MAX_RATES = 64  # rates in one sweep: each is a whole simulation
MAX_SEARCH_STEPS = 40  # halvings of the rate search: 40 narrow any range to its float resolution


def _row(rate: float, result: SimulationResult) -> dict[str, float | None]:
    """The headline figures of one rate's run; with prefix caching also the share of prompt tokens found
    cached, with speculative decoding the tokens each request wrote per decode step."""
    s = result.summary
    ttft, tpot, itl, queueing = s["ttft_s"], s["tpot_s"], s["itl_s"], s["queueing_s"]
    row: dict[str, float | None] = {
        "rate_per_s": rate,
        "throughput_rps": s["throughput_rps"],
        "output_tokens_per_s": s["output_tokens_per_s"],
        "goodput_rps": s["goodput_rps"],
        "slo_attainment": s["slo_attainment"],
        "queueing_p50_s": queueing["p50"],
        "ttft_p50_s": ttft["p50"],
        "ttft_p99_s": ttft["p99"],
        "tpot_p50_s": tpot["p50"],
        "tpot_p99_s": tpot["p99"],
        "itl_p99_s": itl["p99"],
        "preemptions": s["preemptions"],
    }
    if "prefix_cache" in s:
        row["prefix_hit_rate"] = s["prefix_cache"]["hit_rate"]
    if "speculation" in s:
        row["tokens_per_step"] = s["speculation"]["tokens_per_step"]
    return row


def sweep_rates(
    rates: Iterable[float], count: int = 500, options: RunOptions | None = None, **changes: Any
) -> list[dict[str, float | None]]:
    """Serve a Poisson workload of ``count`` requests at each rate; one row of headline figures per rate.

    The run is ``options`` (a :class:`~calculators.simulator.run_options.RunOptions`: the workload's lengths,
    system prompts and chats, and every option of :func:`~calculators.simulator.simulate`) with ``changes``
    over it, by the same names (``sweep_rates([2, 4], 200, prompt=512, prefix_caching=True)``). Each rate's
    workload is :meth:`RunOptions.poisson` at that rate, served by :meth:`RunOptions.simulate`, so a row
    holds the figures that one run at that rate reports.
    """
    run = RunOptions.of(options, **changes)
    if isinstance(rates, str | bytes) or not isinstance(rates, Iterable):
        raise ValueError(f"rates must be a list of arrival rates per second, got {rates!r:.60}")
    rows = []
    for i, rate in enumerate(rates):
        if i >= MAX_RATES:
            raise ValueError(f"rates has more than {MAX_RATES} rates; give at most {MAX_RATES}")
        rows.append(_row(float(rate), run.simulate(run.poisson(rate, count))))
    if not rows:
        raise ValueError("rates is empty; give at least one arrival rate")
    return rows


def max_rate_meeting_slo(
    options: RunOptions | None = None,
    *,
    attainment: float = 0.9,
    duration_s: float = 60.0,
    max_requests: int = 5000,
    low_per_s: float = 0.1,
    high_per_s: float = 1000.0,
    steps: int = 12,
    **changes: Any,
) -> dict[str, float | None]:
    """The highest arrival rate at which at least ``attainment`` of requests meet the SLO.

    This is the goodput of DistServe (Zhong et al., OSDI 2024): the rate a system sustains while keeping
    ``attainment`` (90% there) of requests within both latency bounds. Each trial rate r serves r x
    ``duration_s`` requests (at most ``max_requests``): a fixed count would let any rate pass, since a short
    burst never builds the queue an overloaded system builds over time. Bisection on a log scale between
    ``low_per_s`` and ``high_per_s`` in ``steps`` halvings, so the answer is within a factor
    (high/low)^(1/2^steps) of the rate where attainment crosses the target (about 0.2% by default).
    Returns the rate and the figures there; the rate is None if even ``low_per_s`` misses the target.

    The run at each trial rate is ``options`` (a :class:`~calculators.simulator.run_options.RunOptions`)
    with ``changes`` over it, by the same names, as :func:`sweep_rates` serves it: the workload's system
    prompts and chats, prefix caching, speculative decoding, replicas and routing, pipeline stages (the
    setup's) and micro-batches are those of a single run (``max_rate_meeting_slo(prompt=512, output=64,
    shared_prefix=SharedPrefix(2048), prefix_caching=True)``).
    """
    run = RunOptions.of(options, **changes)
    target = fraction("attainment", attainment)
    window = bounded_number("duration_s", duration_s, MAX_ARRIVAL_S)
    cap = whole_number("max_requests", max_requests, maximum=MAX_REQUESTS)
    lo = bounded_number("low_per_s", low_per_s, MAX_RATE_PER_S)
    hi = bounded_number("high_per_s", high_per_s, MAX_RATE_PER_S)
    if hi <= lo:
        raise ValueError(f"high_per_s must be above low_per_s, got {hi} and {lo}")
    n_steps = whole_number("steps", steps, maximum=MAX_SEARCH_STEPS)

    def trial(rate: float) -> dict[str, float | None]:
        n = min(cap, max(1, math.ceil(rate * window)))
        return sweep_rates([rate], n, run)[0]

    def passes(row: dict[str, float | None]) -> bool:
        return (row["slo_attainment"] or 0.0) >= target

    low_row = trial(lo)
    if not passes(low_row):
        return {**low_row, "rate_per_s": None}
    high_row = trial(hi)
    if passes(high_row):
        return high_row
    best = low_row
    for _ in range(n_steps):
        mid = math.sqrt(lo * hi)
        row = trial(mid)
        if passes(row):
            lo, best = mid, row
        else:
            hi = mid
    return best
