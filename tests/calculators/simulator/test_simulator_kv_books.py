"""KV memory books and batch figures of the serving simulator (issue 25, part 5).

Disaggregated serving: a cache that lands on the decode pool must have blocks there, and the blocks in use
(reserved by running requests, held by finished prefills, and landed or on their way) never exceed either
pool. The reproducer below overflowed the decode pool by up to 8%: caches were only promised room when
sent, and the running requests' growth took that room before they were admitted.
"""

from __future__ import annotations

from typing import Any

import pytest

from calculators import (
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Lengths,
    MemoryConfig,
    StaticBatching,
    poisson_workload,
    simulate,
)
from calculators.simulator import Scheduler
from calculators.simulator.state import Instance


def _check_books(inst: Instance) -> None:
    mem = inst.memory
    running = [*inst.decoding.values(), *inst.prefilling.values()]
    landed = [s for s in inst.waiting if s.prefilled >= s.target]  # caches that arrived, not yet admitted
    for seq in landed:
        assert seq.id in inst.incoming, f"request {seq.id}'s cache landed without blocks"
    physical = sum(s.slots for s in running) + sum(inst.held.values()) + inst.incoming_slots
    physical += sum(slots for _, _, slots, _ in inst.releases)  # sent caches still on the prefill GPU
    assert mem.free >= 0
    assert physical == mem.total - mem.free, "blocks in use differ from the books"
    assert physical <= mem.total, f"{physical} blocks in use of {mem.total}"


@pytest.fixture
def checked_every_step(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Check the books of each instance at every step (the engine asks each for its stored tokens)."""
    steps = [0]
    original = Instance.stored_tokens

    def stored_tokens(self: Instance) -> int:
        _check_books(self)
        steps[0] += 1
        return original(self)

    monkeypatch.setattr(Instance, "stored_tokens", stored_tokens)
    return steps


def test_disaggregated_pools_never_hold_more_kv_than_they_have(checked_every_step: list[int]) -> None:
    requests = poisson_workload(
        30,
        1500,
        Lengths.lognormal(2000, 1000, cap=8000),
        Lengths.lognormal(128, 64),
        seed=5,
    )
    result = simulate(
        requests,
        scheduler=Disaggregated(1, 1, "pcie4"),
        memory=MemoryConfig(capacity_tokens=20_000),
        timeline_steps=0,
    )
    assert checked_every_step[0] > 10_000
    assert result.summary["requests"] == 1500
    pools: Any = result.summary
    assert pools["kv_peak_reserved_tokens"] <= 20_000


@pytest.mark.parametrize(
    "scheduler", [ContinuousBatching(), ChunkedPrefill(512), StaticBatching(16)], ids=lambda s: s.name
)
def test_the_time_averaged_decode_batch_obeys_littles_law(scheduler: Scheduler) -> None:
    # L = lambda x W: requests in the decode phase averaged over time, against the completion rate times
    # the mean time a request spends from its first token to its last.
    requests = poisson_workload(20, 400, Lengths.lognormal(1000, 600), Lengths.lognormal(200, 120), seed=3)
    result = simulate(requests, scheduler=scheduler, timeline_steps=0)
    s = result.summary
    rate = s["requests"] / s["duration_s"]
    residence = sum(r["e2e_s"] - r["ttft_s"] for r in result.requests) / len(result.requests)
    assert s["time_averaged_decode_batch"] == pytest.approx(rate * residence, rel=0.02)


# A decode pool that preempts: request 6 is preempted and waits at the head of the queue for 168 blocks
# while the caches of requests 7 and 8 land behind it holding the 223 blocks they took when they were sent.
# Admitting strictly in queue order, the pool had 35 blocks free, nothing running and never freed any:
# "the pools stalled with requests in flight" (found by test_properties_simulator.py's random cases).
PREEMPTED_AHEAD_OF_LANDED = [
    (0.106736, 230, 35), (0.190254, 200, 135), (0.254014, 2016, 148), (0.308548, 1032, 63),
    (0.458295, 2880, 147), (0.562316, 1388, 93), (0.564038, 2636, 95), (0.588411, 1649, 79),
    (0.651833, 1903, 154), (0.797194, 1395, 137), (0.954135, 2079, 43), (1.068757, 120, 38),
    (1.15912, 1025, 176), (1.215042, 906, 145), (1.305871, 547, 29), (1.378704, 757, 197),
    (1.527031, 1684, 187), (1.603137, 2539, 13), (1.781053, 407, 140), (1.796687, 2791, 69),
    (1.912481, 2928, 28),
]  # fmt: skip


def test_a_landed_cache_is_not_stuck_behind_a_preempted_request() -> None:
    from calculators import Request

    requests = [Request(i, *row) for i, row in enumerate(PREEMPTED_AHEAD_OF_LANDED)]
    memory = MemoryConfig("paged", 16, capacity_tokens=4134, watermark=0.0)
    result = simulate(requests, scheduler=Disaggregated(1, 1), memory=memory)
    assert result.summary["output_tokens"] == sum(r.output_tokens for r in requests)
    assert result.summary["preemptions"] > 0  # the case this test is about
