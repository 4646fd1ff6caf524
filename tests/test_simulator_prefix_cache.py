"""Prefix caching: shared system prompts in the workload, block reuse in the simulator."""

from __future__ import annotations

import subprocess
import sys

import pytest

from calculators.simulator import (
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Lengths,
    MemoryConfig,
    Request,
    Scheduler,
    SharedPrefix,
    StaticBatching,
    burst_workload,
    poisson_workload,
    simulate,
)
from calculators.simulator.kv_memory import KVMemory
from calculators.simulator.prefix_cache import PrefixCache
from calculators.simulator.state import Instance, Sequence


def test_a_shared_prefix_is_prepended_and_leaves_the_other_draws_alone() -> None:
    plain = poisson_workload(5.0, 200, 100, 20, seed=3)
    shared = poisson_workload(
        5.0, 200, 100, 20, seed=3, shared_prefix=SharedPrefix(1024, share=0.5, prefixes=3)
    )
    with_prefix = [r for r in shared if r.prefix_id is not None]
    assert 60 < len(with_prefix) < 140  # about half of 200
    assert {r.prefix_id for r in with_prefix} == {0, 1, 2}
    for a, b in zip(plain, shared, strict=True):
        assert (a.arrival_s, a.output_tokens) == (b.arrival_s, b.output_tokens)
        extra = 1024 if b.prefix_id is not None else 0
        assert b.prompt_tokens == a.prompt_tokens + extra
        assert b.prefix_tokens == extra
    again = poisson_workload(
        5.0, 200, 100, 20, seed=3, shared_prefix=SharedPrefix(1024, share=0.5, prefixes=3)
    )
    assert again == shared


def test_a_burst_with_share_one_gives_every_request_the_prefix() -> None:
    reqs = burst_workload(10, 50, 5, shared_prefix=SharedPrefix(256))
    assert all(r.prefix_id == 0 and r.prefix_tokens == 256 and r.prompt_tokens == 306 for r in reqs)
    assert reqs[0].as_dict()["prefix_tokens"] == 256
    assert "prefix_id" not in burst_workload(1, 50, 5)[0].as_dict()  # plain requests keep their old record


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Request(0, 0.0, 100, 5, 0, 101), "longer than the prompt"),
        (lambda: Request(0, 0.0, 100, 5, None, 10), "needs a prefix_id"),
        (lambda: Request(0, 0.0, 100, 5, True, 10), "prefix_id must be"),
        (lambda: SharedPrefix(0), "shared prefix tokens"),
        (lambda: SharedPrefix(10, share=1.5), "prefix share"),
        (lambda: SharedPrefix(10, prefixes=0), "prefixes"),
        (lambda: poisson_workload(1.0, 2, shared_prefix=100), "shared_prefix must be"),  # type: ignore[arg-type]
    ],
)
def test_bad_prefix_settings_are_refused_with_the_field_named(make, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        make()


# --- the simulator's books, worked by hand ---------------------------------------------------------
def _instance(blocks: int) -> Instance:
    config = MemoryConfig(capacity_tokens=16 * blocks)
    inst = Instance(0, KVMemory(config, 16 * blocks, 16 * blocks))
    inst.prefix = PrefixCache(16)
    return inst


def _admit(inst: Instance, request: Request) -> Sequence:
    seq = Sequence(request)
    inst.waiting.append(seq)
    assert inst.can_reserve(seq, seq.target)
    inst.admit(seq)
    return seq


def test_the_second_request_with_a_cached_1024_token_prefix_prefills_only_its_tail() -> None:
    inst = _instance(1000)
    first = _admit(inst, Request(0, 0.0, 1024 + 40, 10, 7, 1024))
    assert first.prefilled == 0  # nothing cached yet: the whole prompt is computed
    inst.finish_prefill_chunk(first, 1064, 1.0)
    assert len(first.shared) == 64
    assert first.slots == 3
    second = _admit(inst, Request(1, 0.0, 1024 + 20, 10, 7, 1024))
    assert second.prefilled == 1024
    assert second.target - second.prefilled == 20
    assert second.slots == 2  # its own tail: ceil(1044/16) - 64
    assert inst.memory.total - inst.memory.free == 64 + 3 + 2  # the 64 shared blocks counted once
    assert inst.stored_tokens() == 1024 + 40  # the first prompt once: the second adds no stored token yet
    assert inst.prefix is not None
    assert inst.prefix.hit_tokens == 1024
    inst._release(first)
    inst._release(second)
    assert inst.memory.free == 1000
    assert len(inst.prefix.unheld) == 64


def test_a_whole_prompt_in_the_cache_still_computes_its_last_token() -> None:
    inst = _instance(100)
    first = _admit(inst, Request(0, 0.0, 64, 4, 0, 64))
    inst.finish_prefill_chunk(first, 64, 1.0)
    second = _admit(inst, Request(1, 0.0, 64, 4, 0, 64))
    assert second.prefilled == 48
    assert second.target == 64


def test_unheld_blocks_are_evicted_least_recently_used_first_and_tails_before_heads() -> None:
    inst = _instance(10)
    cache = inst.prefix
    assert cache is not None
    for i, pid in enumerate((0, 1)):  # prefix 0 then prefix 1, two blocks each, released in that order
        seq = _admit(inst, Request(i, 0.0, 40, 2, pid, 32))
        inst.finish_prefill_chunk(seq, 40, 1.0)
        inst._release(seq)
    assert list(cache.unheld) == [(0, 1), (0, 0), (1, 1), (1, 0)]
    _admit(inst, Request(2, 0.0, 16 * 7, 2))  # 7 blocks leave 3 free: one cached block must go
    assert list(cache.unheld) == [(0, 0), (1, 1), (1, 0)]
    assert cache.evictions == 1
    _admit(inst, Request(3, 0.0, 16 * 2, 2))  # 1 left free: two more go, the oldest first
    assert list(cache.unheld) == [(1, 0)]
    assert cache.evictions == 3
    assert inst.memory.free == 1
    assert len(cache.unheld) <= inst.memory.free


def test_prefix_caching_off_changes_nothing_and_on_cuts_ttft_and_kv() -> None:
    reqs = poisson_workload(
        10.0, 60, 256, 32, seed=1, shared_prefix=SharedPrefix(2048, share=0.8, prefixes=2)
    )
    plain = simulate(poisson_workload(10.0, 60, 256, 32, seed=1))
    assert "prefix_cache" not in plain.summary
    off = simulate(reqs)
    on = simulate(reqs, prefix_caching=True)
    cache = on.summary["prefix_cache"]
    # Every prefix but its first computation could be found; arrivals 0.1 s apart find almost all.
    reusable = sum(r.prefix_tokens for r in reqs) - 2048 * len(
        {r.prefix_id for r in reqs if r.prefix_id is not None}
    )
    assert 0.9 * reusable <= cache["hit_tokens"] <= reusable
    assert cache["hit_tokens"] + cache["miss_tokens"] == sum(r.prompt_tokens for r in reqs)
    assert on.summary["ttft_s"]["mean"] < 0.6 * off.summary["ttft_s"]["mean"]
    assert on.summary["kv_peak_reserved_tokens"] < off.summary["kv_peak_reserved_tokens"]


@pytest.mark.parametrize("scheduler", [ContinuousBatching(), ChunkedPrefill(256), StaticBatching(8)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_under_memory_pressure_the_books_hold(scheduler: Scheduler, seed: int) -> None:
    """A small cache with many prefixes: evictions and preemptions happen, and still the KV in use never
    exceeds the capacity, every request finishes, and hits never exceed the prompt tokens."""
    reqs = poisson_workload(
        50.0,
        80,
        Lengths.uniform(16, 300),
        Lengths.uniform(1, 200),
        seed=seed,
        shared_prefix=SharedPrefix(600, share=0.7, prefixes=5),
    )
    result = simulate(
        reqs, scheduler=scheduler, memory=MemoryConfig(capacity_tokens=6000), prefix_caching=True
    )
    s = result.summary
    assert s["kv_peak_reserved_tokens"] <= 6000
    assert s["requests"] == 80
    cache = s["prefix_cache"]
    assert 0 < cache["hit_tokens"] <= cache["hit_tokens"] + cache["miss_tokens"]
    if not isinstance(scheduler, StaticBatching):  # batches of 8 leave room; the others fill the cache
        assert cache["evicted_blocks"] > 0
    assert cache["hit_tokens"] <= sum(r.prefix_tokens for r in reqs) * (1 + s["preemptions"])


def test_prefix_caching_is_refused_where_it_is_not_modelled() -> None:
    reqs = burst_workload(2, 64, 4)
    with pytest.raises(ValueError, match="paged"):
        simulate(reqs, memory=MemoryConfig("contiguous"), prefix_caching=True)
    with pytest.raises(ValueError, match="disaggregated"):
        simulate(reqs, scheduler=Disaggregated(), prefix_caching=True)
    with pytest.raises(ValueError, match="True or False"):
        simulate(reqs, prefix_caching="yes")  # type: ignore[arg-type]


def test_the_command_line_reports_the_hit_rate() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "calculators", "simulate", "--requests", "30", "--shared-prefix", "1024",
         "--prefix-caching"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "prefix cache" in out
    assert "of prompt tokens found cached" in out
    assert "start with one of 1 system prompts of 1,024 tokens" in out
