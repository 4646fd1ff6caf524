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
