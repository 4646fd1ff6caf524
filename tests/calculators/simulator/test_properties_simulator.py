"""Properties of the serving simulator that must hold for every workload, scheduler and memory, checked with
Hypothesis.

Every request finishes exactly once with exactly its output tokens; no request sees its first token before
its prompt could have been processed on an idle GPU; tokens come in order and never before the request
arrives; KV memory in use never exceeds capacity; an instance's steps never overlap or run backwards; and the
same inputs give the same result.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculators import (
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    MemoryConfig,
    Request,
    Setup,
    StaticBatching,
    make_setup,
    prefill,
    simulate,
)
from calculators.simulator import Scheduler, Speculation
from calculators.simulator.speculation import SpeculativeInstance

pytestmark = pytest.mark.properties

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def workloads(draw: st.DrawFn) -> list[Request]:
    n = draw(st.integers(1, 25))
    gaps = draw(st.lists(st.floats(0.0, 0.2), min_size=n, max_size=n))
    prompts = draw(st.lists(st.integers(1, 3000), min_size=n, max_size=n))
    outputs = draw(st.lists(st.integers(1, 200), min_size=n, max_size=n))
    arrivals = list(itertools.accumulate(gaps))
    return [Request(i, arrivals[i], prompts[i], outputs[i]) for i in range(n)]


schedulers: st.SearchStrategy[Scheduler] = st.one_of(
    st.builds(ContinuousBatching, st.integers(1, 64), st.integers(64, 8192)),
    st.builds(ChunkedPrefill, st.integers(16, 1024), st.integers(1, 64)),
    st.builds(StaticBatching, st.integers(1, 16), st.one_of(st.none(), st.floats(0.0, 0.5))),
    st.builds(
        Disaggregated,
        st.integers(1, 2),
        st.integers(1, 2),
        st.sampled_from(["nvlink4", "infiniband-ndr", "pcie4"]),
        max_batch_tokens=st.integers(64, 8192),
        kv_transfer=st.sampled_from(["whole", "layerwise"]),
        link_sharing=st.sampled_from(["sender", "endpoints", "shared"]),
    ),
)


@st.composite
def memories(draw: st.DrawFn, requests: list[Request]) -> MemoryConfig:
    longest = max(r.prompt_tokens + r.output_tokens for r in requests)
    kind = draw(st.sampled_from(["paged", "contiguous"]))
    block = draw(st.sampled_from([1, 8, 16, 32]))
    smallest = -(-longest // block) * block if kind == "paged" else longest
    capacity = draw(st.integers(smallest, smallest * 6))
    return MemoryConfig(
        kind,
        block,
        capacity_tokens=capacity,
        watermark=draw(st.sampled_from([0.0, 0.01])),
        reserve=draw(st.sampled_from(["max", "pow2", "oracle"])) if kind == "contiguous" else "max",
        max_sequence_tokens=longest if kind == "contiguous" else None,
        preemption=draw(st.sampled_from(["recompute", "swap"])),
        swap_space_gib=draw(st.sampled_from([0.0, 0.001, 0.01, 4.0])),  # none, a few blocks, vLLM's 4 GiB
    )


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Request], Scheduler, MemoryConfig, int]:
    requests = draw(workloads())
    memory = draw(memories(requests))
    if memory.reserve == "pow2":  # a pow2 slab may exceed the longest sequence: make room for it
        longest = max(r.prompt_tokens + (1 << (r.output_tokens - 1).bit_length()) for r in requests)
        memory = MemoryConfig(
            "contiguous", capacity_tokens=max(memory.capacity_tokens or 0, longest), reserve="pow2"
        )
    scheduler = draw(schedulers)
    replicas = 1 if isinstance(scheduler, Disaggregated) else draw(st.integers(1, 2))
    return requests, scheduler, memory, replicas


LESSON = make_setup()
REFINED = make_setup("llama-3.1-8b", "h100-sxm", level="refined")


@FAST
@given(cases(), st.sampled_from([LESSON, REFINED]), st.sampled_from(["round-robin", "least-loaded"]))
def test_every_request_is_served_once_in_order(case: tuple, setup: Setup, routing: str) -> None:  # type: ignore[type-arg]
    requests, scheduler, memory, replicas = case
    if not isinstance(scheduler, ContinuousBatching | ChunkedPrefill):
        routing = "round-robin"  # least-loaded routing takes the schedulers that never wait for a batch
    result = simulate(
        requests, setup, scheduler, memory=memory, replicas=replicas, timeline_steps=100_000, routing=routing
    )
    by_id = {r["id"]: r for r in result.requests}
    assert sorted(by_id) == [r.id for r in requests]
    assert result.summary["output_tokens"] == sum(r.output_tokens for r in requests)
    for request in requests:
        record = by_id[request.id]
        times = result.token_times(request.id)
        assert len(times) == request.output_tokens
        assert times == sorted(times)
        assert times[0] >= request.arrival_s
        assert 0 <= record["queueing_s"] <= record["ttft_s"] <= record["e2e_s"]
        assert record["finish_s"] == times[-1]
    # Memory: never more reserved than there is.
    for series in result.kv_series:
        assert max(series["reserved_tokens"], default=0) <= result.summary["kv_capacity_tokens"]
        assert all(s <= r for s, r in zip(series["stored_tokens"], series["reserved_tokens"], strict=True))
    # Time: an instance's steps follow one another.
    ends: dict[int, float] = {}
    for step in result.timeline:
        assert step["time_s"] > 0
        assert step["start_s"] >= ends.get(step["instance"], 0.0)
        ends[step["instance"]] = step["start_s"] + step["time_s"]


@FAST
@given(cases(), st.sampled_from([LESSON, REFINED]))
def test_no_first_token_before_its_prompt_could_be_processed(case: tuple, setup: Setup) -> None:  # type: ignore[type-arg]
    requests, scheduler, memory, replicas = case
    result = simulate(requests, setup, scheduler, memory=memory, replicas=replicas, timeline_steps=0)
    for request, record in zip(requests, result.requests, strict=True):
        alone = prefill(setup, request.prompt_tokens).time_s
        assert record["ttft_s"] >= alone * (1 - 1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([LESSON, REFINED]))
def test_same_inputs_same_result(case: tuple, setup: Setup) -> None:  # type: ignore[type-arg]
    requests, scheduler, memory, replicas = case
    first = simulate(requests, setup, scheduler, memory=memory, replicas=replicas)
    again = simulate(list(requests), setup, scheduler, memory=memory, replicas=replicas)
    assert first.as_dict(token_latencies=True) == again.as_dict(token_latencies=True)


# --- pipeline parallelism with micro-batches (issue 25) ---------------------------------------------------

STAGED = (
    make_setup(pipeline_stages=2),
    make_setup("llama-3.1-8b", "h100-sxm", level="refined", pipeline_stages=4),
)


@FAST
@given(cases(), st.sampled_from(STAGED), st.integers(1, 8))
def test_micro_batched_pipelines_serve_every_token_in_order_no_sooner_than_a_pass(
    case: tuple,  # type: ignore[type-arg]
    setup: Setup,
    micro_batches: int,
) -> None:
    requests, scheduler, memory, replicas = case
    if isinstance(scheduler, Disaggregated):  # each pool a whole number of replicas of the staged setup
        per_replica = setup.total_gpus
        scheduler = Disaggregated(
            scheduler.prefill_gpus * per_replica,
            scheduler.decode_gpus * per_replica,
            scheduler.link,
            max_batch_tokens=scheduler.max_batch_tokens,
            kv_transfer=scheduler.kv_transfer,
            link_sharing=scheduler.link_sharing,
        )
    result = simulate(
        requests, setup, scheduler, memory=memory, replicas=replicas, micro_batches=micro_batches
    )
    assert result.summary["output_tokens"] == sum(r.output_tokens for r in requests)
    for request, record in zip(requests, result.requests, strict=True):
        times = result.token_times(request.id)
        assert len(times) == request.output_tokens
        assert times == sorted(times)
        # A step lasts at least the longest of its micro-batches' passes, each at least the prompt's alone.
        assert record["ttft_s"] >= prefill(setup, request.prompt_tokens).time_s * (1 - 1e-12)
    for series in result.kv_series:
        assert max(series["reserved_tokens"], default=0) <= result.summary["kv_capacity_tokens"]


# --- speculative decoding (issue 28) -----------------------------------------------------------------------

speculations = st.builds(
    Speculation,
    st.floats(0.01, 0.99),
    st.integers(1, 6),
    st.sampled_from(["heads", "ngram"]),
    acceptance_concentration=st.one_of(st.none(), st.floats(0.5, 50.0)),
    seed=st.integers(0, 3),
) | st.builds(
    Speculation, st.floats(0.01, 0.99), st.integers(1, 6), st.just("model"), st.just("llama-3.1-8b")
)


@st.composite
def speculative_cases(draw: st.DrawFn) -> tuple[list[Request], Scheduler, MemoryConfig, int, Speculation]:
    requests = draw(workloads())
    speculation = draw(speculations)
    block = draw(st.sampled_from([1, 8, 16, 32]))
    longest = max(r.prompt_tokens + r.output_tokens for r in requests) + speculation.proposed - 1
    smallest = -(-longest // block) * block
    memory = MemoryConfig(
        "paged",
        block,
        capacity_tokens=draw(st.integers(smallest, smallest * 4)),
        watermark=draw(st.sampled_from([0.0, 0.01])),
        preemption=draw(st.sampled_from(["recompute", "swap"])),
        swap_space_gib=draw(st.sampled_from([0.0, 0.001, 4.0])),
    )
    scheduler = draw(st.one_of(schedulers.filter(lambda s: not isinstance(s, StaticBatching))))
    replicas = 1 if isinstance(scheduler, Disaggregated) else draw(st.integers(1, 2))
    return requests, scheduler, memory, replicas, speculation


@FAST
@given(speculative_cases(), st.sampled_from([LESSON, REFINED]), st.booleans())
def test_speculation_serves_every_token_once_in_order_within_memory(
    case: tuple,  # type: ignore[type-arg]
    setup: Setup,
    prefix_caching: bool,
) -> None:
    requests, scheduler, memory, replicas, speculation = case
    prefix_caching = (
        prefix_caching and memory.preemption == "recompute" and not isinstance(scheduler, Disaggregated)
    )
    if prefix_caching:  # some requests share a system prompt
        requests = [
            Request(r.id, r.arrival_s, r.prompt_tokens + 64, r.output_tokens, r.id % 2, 64) for r in requests
        ]
        longest = max(r.prompt_tokens + r.output_tokens for r in requests) + speculation.proposed - 1
        memory = replace(
            memory, capacity_tokens=max(memory.capacity_tokens or 0, longest + memory.block_tokens)
        )
    checked = [0]
    original = SpeculativeInstance.stored_tokens

    def stored_tokens(self: SpeculativeInstance) -> int:  # after every step: the blocks add up
        running = [*self.decoding.values(), *self.prefilling.values()]
        physical = sum(s.slots for s in running) + sum(self.held.values()) + self.incoming_slots
        physical += sum(slots for _, _, slots, _ in self.releases)
        if self.prefix is not None:
            physical += len(self.prefix.refs) - len(self.prefix.unheld)
        assert self.memory.free >= 0
        assert physical == self.memory.total - self.memory.free
        checked[0] += 1
        return original(self)

    SpeculativeInstance.stored_tokens = stored_tokens  # type: ignore[method-assign]
    try:
        result = simulate(
            requests,
            setup,
            scheduler,
            memory=memory,
            replicas=replicas,
            timeline_steps=0,
            prefix_caching=prefix_caching,
            speculation=speculation,
        )
    finally:
        del SpeculativeInstance.stored_tokens  # the Instance method again
    assert checked[0] == result.summary["steps"]
    assert result.summary["output_tokens"] == sum(r.output_tokens for r in requests)
    for request, record in zip(requests, result.requests, strict=True):
        times = result.token_times(request.id)
        assert len(times) == request.output_tokens
        assert times == sorted(times)
        assert times[0] >= request.arrival_s
        assert record["finish_s"] == times[-1]
        assert len(result.inter_token_latencies(request.id)) == request.output_tokens - 1
    for series in result.kv_series:
        assert max(series["reserved_tokens"], default=0) <= result.summary["kv_capacity_tokens"]
    spec = result.summary["speculation"]
    if spec["tokens_per_step"] is not None:  # None: every request ended with its prefill's token
        assert 1 <= spec["tokens_per_step"] <= speculation.proposed + 1
    again = simulate(
        list(requests),
        setup,
        scheduler,
        memory=memory,
        replicas=replicas,
        timeline_steps=0,
        prefix_caching=prefix_caching,
        speculation=speculation,
    )
    assert again.as_dict(token_latencies=True) == result.as_dict(token_latencies=True)
