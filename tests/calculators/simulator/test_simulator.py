"""The serving simulator, worked by hand: a few requests, step by step, with the arithmetic beside each value.

The setup is the lesson's unless stated: an 8B dense model (N = 8e9) in BF16 on one H100 SXM at spec peaks
(989.4e12 FLOP/s, 3.35e12 B/s, ridge 295.3 FLOP/byte), simple level. So a step that processes T tokens
takes max(2 N T / 989.4e12, 2 N / 3.35e12) seconds:

- any step of up to 295 tokens (a decode batch, a short prompt): 16e9 / 3.35e12 = 4.7761 ms, memory-bound;
- a prefill of P > 295 tokens: 1.6e10 P / 989.4e12 = P x 16.1714 us, compute-bound.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from calculators import (
    SLO,
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Interconnect,
    Lengths,
    MemoryConfig,
    Request,
    StaticBatching,
    burst_workload,
    make_setup,
    max_rate_meeting_slo,
    mixed_step,
    poisson_workload,
    request_timing,
    simulate,
    sweep_rates,
    trace_workload,
)
from calculators.cli import main
from calculators.simulator import Scheduler
from calculators.simulator.results import percentile, weighted_percentile

STEP = 16e9 / 3.35e12  # one memory-bound step: the weights read once, 4.7761 ms
PER_PROMPT_TOKEN = 1.6e10 / 989.4e12  # compute-bound prefill, per token: 16.1714 us


def approx(value: float) -> object:
    return pytest.approx(value, rel=1e-9, abs=1e-12)


def trace(*rows: tuple[float, int, int]) -> tuple[Request, ...]:
    return trace_workload(rows)


# --- one request: the simulator reproduces the cost model's single-request figures exactly -----------------
@pytest.mark.parametrize(
    ("model", "level", "gpus", "prompt"),
    [
        ("dense-8b", "simple", 1, 2000),
        ("llama-3.1-8b", "refined", 1, 2000),
        ("llama-3.1-70b", "refined", 2, 2000),
        ("mistral-7b", "refined", 1, 5000),  # past its 4,096-token sliding window
        ("mixtral-8x7b", "refined", 2, 2000),
    ],
)
def test_one_request_alone_matches_request_timing(model: str, level: str, gpus: int, prompt: int) -> None:
    setup = make_setup(model, "h200", level=level, gpus=gpus)
    result = simulate(trace((0.0, prompt, 256)), setup)
    expected = request_timing(setup, prompt, 256)
    record = result.requests[0]
    assert record["queueing_s"] == 0.0
    assert record["ttft_s"] == approx(expected.time_to_first_token_s)
    assert record["e2e_s"] == approx(expected.total_time_s)
    assert record["tpot_s"] == approx(expected.time_per_output_token_s)
    assert len(result.inter_token_latencies(0)) == 255


@pytest.mark.parametrize("model", ["llama-3.1-8b", "mistral-7b"])
@pytest.mark.parametrize("scheduler", [ContinuousBatching(), ChunkedPrefill(token_budget=256)])
def test_every_step_is_the_cost_models_step_for_its_actual_mix(model: str, scheduler: Scheduler) -> None:
    # Rebuild each step's mix from the result alone (a decoding request attends its prompt plus the tokens
    # it has written so far) and time it with mixed_step: the simulator's step times must be exactly those.
    setup = make_setup(model, "h100-sxm", level="refined", ignore_memory=True)
    work = poisson_workload(50, 30, Lengths.uniform(200, 4000), Lengths.uniform(50, 300), seed=2)
    result = simulate(work, setup, scheduler, memory=MemoryConfig(capacity_tokens=12_000, watermark=0.0))
    assert result.summary["preemptions"] > 0
    prompts = {r.id: r.prompt_tokens for r in work}
    times = {r.id: result.token_times(r.id) for r in work}
    for step in result.timeline:
        start = step["start_s"]
        contexts = [prompts[i] + sum(1 for t in times[i] if t <= start) for i in step["decode"]]
        chunks = [(tokens, cached) for _, tokens, cached in step["prefill"]]
        expected = mixed_step(setup, decode_contexts=contexts, prefill_chunks=chunks)
        assert step["time_s"] == approx(expected.time_s)


def test_lesson_request_by_hand() -> None:
    # Prompt 2,000 tokens: 2,000 x 16.1714 us = 32.343 ms; then 255 decode steps of 4.7761 ms = 1.2179 s.
    result = simulate(trace((0.0, 2000, 256)))
    record = result.requests[0]
    assert record["ttft_s"] == approx(2000 * PER_PROMPT_TOKEN)
    assert record["ttft_s"] == pytest.approx(0.032343, abs=1e-6)
    assert record["e2e_s"] == approx(2000 * PER_PROMPT_TOKEN + 255 * STEP)
    assert result.summary["decode_steps"] == 255
    assert result.summary["steps"] == 256


# --- two requests together ---------------------------------------------------------------------------------
def test_two_requests_share_one_prefill_and_the_decode_steps() -> None:
    # Both arrive at 0 with 1,000-token prompts and 3 output tokens. Continuous batching prefills both in one
    # step of 2,000 tokens (32.343 ms), then two decode steps of batch 2 (4.7761 ms each).
    result = simulate(trace((0.0, 1000, 3), (0.0, 1000, 3)))
    first = 2000 * PER_PROMPT_TOKEN
    for record in result.requests:
        assert record["ttft_s"] == approx(first)
        assert record["e2e_s"] == approx(first + 2 * STEP)
        assert record["tpot_s"] == approx(STEP)
    steps = result.timeline
    assert [s["prefill"] for s in steps] == [[[0, 1000, 0], [1, 1000, 0]], [], []]
    assert [s["decode"] for s in steps] == [[], [0, 1], [0, 1]]
    assert result.summary["mean_decode_batch"] == 2.0
    assert result.summary["throughput_rps"] == approx(2 / (first + 2 * STEP))


def test_prefill_first_stalls_decodes_and_chunked_prefill_does_not() -> None:
    # A arrives at 0 (prompt 100, 4 tokens); B at 5 ms (prompt 3,000, 2 tokens).
    work = trace((0.0, 100, 4), (0.005, 3000, 2))
    # Continuous, prefill first:
    #   0       -> 4.776   prefill A (100 tokens, memory-bound)            A token 1
    #   4.776   -> 9.552   decode A (B has not arrived yet)                A token 2
    #   9.552   -> 58.066  prefill B, 3,000 x 16.1714 us = 48.514 ms       B token 1; A waits
    #   58.066  -> 62.842  decode A and B                                  A token 3, B token 2 (done)
    #   62.842  -> 67.618  decode A                                        A token 4 (done)
    prefill_b = 3000 * PER_PROMPT_TOKEN
    cont = simulate(work, scheduler=ContinuousBatching())
    assert cont.token_times(0) == [
        approx(t) for t in (STEP, 2 * STEP, 3 * STEP + prefill_b, 4 * STEP + prefill_b)
    ]
    assert cont.requests[1]["ttft_s"] == approx(2 * STEP + prefill_b - 0.005)
    assert cont.summary["longest_stall_s"] == approx(prefill_b + STEP)  # 53.29 ms between A's tokens 2 and 3
    assert cont.summary["longest_stall_request"] == 0
    # Chunked, budget 512, decode first:
    #   0      -> 4.776   A's prompt (100 tokens)                         A token 1
    #   4.776  -> 9.552   decode A                                        A token 2
    #   9.552  -> 17.832  decode A + 511 tokens of B: 512 x 16.1714 us = 8.2797 ms      A token 3
    #   17.832 -> 26.112  decode A + 511 more of B                        A token 4 (done)
    #   then B alone: 512, 512, 512 and 442 tokens (3,000 - 1,022 = 1,978), the last writing B's token 1.
    chunk = 512 * PER_PROMPT_TOKEN
    chunked = simulate(work, scheduler=ChunkedPrefill(token_budget=512))
    assert chunked.token_times(0) == [
        approx(t) for t in (STEP, 2 * STEP, 2 * STEP + chunk, 2 * STEP + 2 * chunk)
    ]
    b_first = 2 * STEP + 5 * chunk + 442 * PER_PROMPT_TOKEN
    assert chunked.requests[1]["ttft_s"] == approx(b_first - 0.005)
    assert chunked.inter_token_latencies(1) == [approx(STEP)]
    assert chunked.summary["longest_stall_s"] == approx(chunk)  # 8.28 ms, not 53.29 ms
    assert [s["prefill"] for s in chunked.timeline[2:4]] == [[[1, 511, 0]], [[1, 511, 511]]]


def test_static_batching_waits_for_the_whole_batch() -> None:
    # Batch size 2, three requests at 0, 1,000-token prompts, outputs 2, 4 and 3 tokens.
    #   batch 1: prefill 2,000 tokens (32.343 ms), then 3 decode steps until the longest (4 tokens) ends;
    #            request 0 is done after the first step but its row is still computed (static padding).
    #   batch 2: request 2 alone, prefill 1,000 tokens (16.171 ms), then 2 decode steps.
    result = simulate(trace((0, 1000, 2), (0, 1000, 4), (0, 1000, 3)), scheduler=StaticBatching(2))
    batch_1_end = 2000 * PER_PROMPT_TOKEN + 3 * STEP
    r0, r1, r2 = result.requests
    assert r0["e2e_s"] == approx(2000 * PER_PROMPT_TOKEN + STEP)
    assert r1["e2e_s"] == approx(batch_1_end)
    assert r2["queueing_s"] == approx(batch_1_end)
    assert r2["ttft_s"] == approx(batch_1_end + 1000 * PER_PROMPT_TOKEN)
    assert r2["e2e_s"] == approx(batch_1_end + 1000 * PER_PROMPT_TOKEN + 2 * STEP)
    # Continuous batching takes all three at once: one 3,000-token prefill (48.514 ms) for all.
    cont = simulate(trace((0, 1000, 2), (0, 1000, 4), (0, 1000, 3)))
    assert [r["ttft_s"] for r in cont.requests] == [approx(3000 * PER_PROMPT_TOKEN)] * 3


def test_a_static_batch_pads_every_prompt_to_the_longest() -> None:
    # Batch size 2: prompts of 1,000 and 3,000 tokens, 2 tokens each. The batch is a rectangle: its prefill
    # computes 2 x 3,000 = 6,000 tokens, 6,000 x 16.171 us = 97.03 ms (the 4,000 real tokens alone would
    # take 64.69 ms). Both get their first token then, and the second one decode step later.
    result = simulate(trace((0, 1000, 2), (0, 3000, 2)), scheduler=StaticBatching(2))
    prefill = 2 * 3000 * PER_PROMPT_TOKEN
    assert [r["ttft_s"] for r in result.requests] == [approx(prefill)] * 2
    assert [r["e2e_s"] for r in result.requests] == [approx(prefill + STEP)] * 2
    # Equal prompts have nothing to pad: 2 x 1,000 tokens, 32.34 ms, as continuous batching's one prefill.
    even = simulate(trace((0, 1000, 2), (0, 1000, 2)), scheduler=StaticBatching(2))
    assert [r["ttft_s"] for r in even.requests] == [approx(2000 * PER_PROMPT_TOKEN)] * 2
    # Continuous batching prefills the 4,000 real tokens only: 64.69 ms.
    cont = simulate(trace((0, 1000, 2), (0, 3000, 2)))
    assert [r["ttft_s"] for r in cont.requests] == [approx(4000 * PER_PROMPT_TOKEN)] * 2


def test_static_batching_starts_a_partial_batch_only_when_no_one_else_will_come() -> None:
    # Batch size 4 but 3 requests: they start when the last one arrives (at 1 s), not before.
    result = simulate(trace((0.0, 100, 2), (0.5, 100, 2), (1.0, 100, 2)), scheduler=StaticBatching(4))
    assert [r["queueing_s"] for r in result.requests] == [approx(1.0), approx(0.5), 0.0]


def test_disaggregated_sends_the_cache_over_the_link() -> None:
    # One request, prompt 1,000, 3 tokens. Prefill GPU: 16.171 ms, first token. The cache of 1,000 tokens
    # is 1,000 x 131,072 B (32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B) = 131.07 MB; over a 1 GB/s
    # link with 1 ms latency it lands after 132.07 ms; the decode GPU then writes tokens 2 and 3.
    link = Interconnect("test", "test link", 1e9, 0.001, "hand-worked")
    result = simulate(trace((0.0, 1000, 3)), scheduler=Disaggregated(1, 1, link))
    prefill = 1000 * PER_PROMPT_TOKEN
    transfer = 0.001 + 1000 * 131072 / 1e9
    assert result.requests[0]["kv_transfer_s"] == approx(transfer)
    assert result.token_times(0) == [
        approx(prefill),
        approx(prefill + transfer + STEP),
        approx(prefill + transfer + 2 * STEP),
    ]
    assert result.config["roles"] == ["prefill", "decode"]
    assert result.summary["instances"] == 2


def test_a_full_decode_pool_holds_prefilled_caches_back() -> None:
    # A tiny pool: 160 tokens = 10 blocks of 16 on each GPU. Twenty requests at once, prompt 24 (a cache of
    # 2 blocks) and 8 tokens (24 + 8 = 32 tokens, still 2 blocks: no block is added while decoding). So the
    # decode GPU runs at most 5 requests, and the prefill GPU holds at most 5 finished caches.
    rows = [(0.0, 24, 8)] * 20
    result = simulate(trace(*rows), scheduler=Disaggregated(1, 1), memory=MemoryConfig(capacity_tokens=160))
    tau = 5e-6 + 24 * 131072 / 450e9  # one cache over NVLink 4: 5 us + 3,145,728 B / 450 GB/s = 11.99 us
    ttft = [r["ttft_s"] for r in result.requests]
    finish = [r["finish_s"] for r in result.requests]
    # The first five prefill in one memory-bound step; request 0's cache lands first and decodes alone for
    # a step, then with the other four: its 7 decode steps end at STEP + tau + 7 STEP.
    assert ttft[:5] == [approx(STEP)] * 5
    assert finish[0] == approx(8 * STEP + tau)
    # Request 10 waits for the decode pool: request 0 finishes, request 5's cache (held on the prefill GPU)
    # moves into its 2 blocks, its 2 blocks on the prefill GPU free, and request 10 prefills alone:
    # 8 STEP + tau + tau + STEP = 9 STEP + 2 tau = 43.01 ms. Without back-pressure the prefill GPU freed
    # each cache as its prefill ended and request 10 had its first token after 3 prefill steps, 14.3 ms.
    assert ttft[10] == approx(9 * STEP + 2 * tau)
    # So never more requests are prefilled and unfinished than both pools hold: 5 decoding + 5 held (it was
    # all 20 at 14.3 ms, 15 of them with their cache nowhere).
    events = sorted([(t, 1) for t in ttft] + [(t, -1) for t in finish], key=lambda e: (e[0], e[1]))
    in_between = [sum(d for _, d in events[: i + 1]) for i in range(len(events))]
    assert max(in_between) == 10
    assert result.summary["preemptions"] == 0
    assert len(result.requests) == 20


def test_disaggregated_pools_must_be_whole_replicas() -> None:
    with pytest.raises(ValueError, match="prefill_gpus=3 is not a multiple of the setup's 2 GPUs"):
        simulate(trace((0, 10, 2)), make_setup(gpus=2), Disaggregated(3, 2))
    with pytest.raises(ValueError, match="replicas=2 with disaggregated serving: size the pools"):
        simulate(trace((0, 10, 2)), scheduler=Disaggregated(1, 1), replicas=2)


def test_replicas_take_requests_in_turn() -> None:
    # Two replicas, two requests at 0: each runs alone, as if it were the only request.
    result = simulate(trace((0, 1000, 3), (0, 1000, 3)), replicas=2)
    assert [r["ttft_s"] for r in result.requests] == [approx(1000 * PER_PROMPT_TOKEN)] * 2
    assert result.summary["instances"] == 2


# --- KV memory ---------------------------------------------------------------------------------------------
def test_paged_memory_preempts_the_latest_request_and_recomputes_it() -> None:
    # 64 tokens of cache in 16-token blocks (4 blocks), no watermark. Two requests at 0, prompt 16, 20 tokens.
    #   prefill both: 1 block each (16 tokens).               2 blocks used
    #   decode step 0: contexts 17 -> a second block each.   4 blocks used
    #   decode step 16: contexts 33 -> both need a third block; none is free, so the later request (1) is
    #   preempted after 17 tokens, freeing 2 blocks, and request 0 takes one.
    #   request 0 ends at decode step 18 (1 + 19 tokens); then request 1 is prefilled again over its prompt
    #   and the 17 tokens it wrote (33 tokens, 3 blocks), writing token 18, and decodes 2 more.
    memory = MemoryConfig(capacity_tokens=64, watermark=0.0)
    result = simulate(trace((0, 16, 20), (0, 16, 20)), memory=memory)
    r0, r1 = result.requests
    assert (r0["preemptions"], r1["preemptions"]) == (0, 1)
    assert result.summary["preemptions"] == 1
    assert len(result.token_times(1)) == 20
    recompute = [s for s in result.timeline if s["prefill"] and s["prefill"][0][0] == 1][-1]
    assert recompute["prefill"] == [[1, 33, 0]]
    # Timing: prefill of 32 tokens (memory-bound, 1 step), 19 decode steps, the 33-token recompute (1 step),
    # then 2 decode steps: 23 steps of 4.7761 ms.
    assert r1["e2e_s"] == approx(23 * STEP)
    assert r0["e2e_s"] == approx(20 * STEP)
    assert result.summary["kv_peak_reserved_tokens"] == 64


def test_contiguous_reserves_a_slab_and_paged_a_block_at_a_time() -> None:
    # One request, prompt 10, 6 tokens: at most 10 + 6 - 1 = 15 tokens are ever cached (the last token is
    # never fed back). Paged: one 16-token block. Contiguous "max": the 100-token slab.
    work = trace((0, 10, 6))
    paged = simulate(work, memory=MemoryConfig(capacity_tokens=1000))
    slab = simulate(work, memory=MemoryConfig("contiguous", capacity_tokens=1000, max_sequence_tokens=100))
    oracle = simulate(work, memory=MemoryConfig("contiguous", capacity_tokens=1000, reserve="oracle"))
    pow2 = simulate(work, memory=MemoryConfig("contiguous", capacity_tokens=1000, reserve="pow2"))
    assert paged.summary["kv_peak_reserved_tokens"] == 16
    assert slab.summary["kv_peak_reserved_tokens"] == 100
    assert oracle.summary["kv_peak_reserved_tokens"] == 16  # 10 + 6
    assert pow2.summary["kv_peak_reserved_tokens"] == 18  # 10 + 8 (6 rounded up to a power of two)
    assert slab.summary["kv_waste_fraction"] > paged.summary["kv_waste_fraction"]


def test_memory_budget_comes_from_the_cost_model() -> None:
    # The cost model's plan for one H100: the device reports 81,559 MiB; 0.9 of it, less 16 GB of weights,
    # a 2 GiB runtime reserve and the activation workspace of an 8,192-token step (8,192 x (2 x 4,096 +
    # 6,144 + 3 x 14,336) values x 2 B = 0.94 GB), over 131,072 B of KV cache per token: 441,602 tokens.
    result = simulate(trace((0, 10, 2)))
    budget = 81559 * 2**20 * 0.9 - 16e9 - 2 * 2**30 - 8192 * 57344 * 2
    assert result.summary["kv_capacity_tokens"] == int(budget / 131072) == 441602


# --- results -----------------------------------------------------------------------------------------------
def test_percentiles_are_nearest_rank() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.0  # ceil(0.5 x 4) = 2nd smallest
    assert percentile([4.0, 1.0, 3.0, 2.0], 90) == 4.0  # ceil(3.6) = 4th
    assert percentile([], 50) is None
    assert weighted_percentile([(1.0, 3), (5.0, 1)], 75) == 1.0  # ceil(0.75 x 4) = 3rd of 1, 1, 1, 5
    assert weighted_percentile([(1.0, 3), (5.0, 1)], 76) == 5.0


def test_summary_latencies_agree_with_every_request_record() -> None:
    work = poisson_workload(40, 150, Lengths.lognormal(600, 400), Lengths.lognormal(150, 100), seed=4)
    result = simulate(work, memory=MemoryConfig(capacity_tokens=6000))
    assert result.summary["preemptions"] > 0  # tight memory, so the recompute paths are exercised
    all_itls = [x for r in result.requests for x in result.inter_token_latencies(r["id"])]
    itl = result.summary["itl_s"]
    for p in (50, 90, 99):
        assert itl[f"p{p}"] == approx(percentile(all_itls, p) or 0.0)
    assert itl["mean"] == pytest.approx(sum(all_itls) / len(all_itls))
    assert result.summary["longest_stall_s"] == approx(max(all_itls))
    for r in result.requests:
        times = result.token_times(r["id"])
        assert len(times) == r["output_tokens"]
        assert r["longest_gap_s"] == approx(max([b - a for a, b in itertools.pairwise(times)], default=0.0))
    ttfts = [r["ttft_s"] for r in result.requests]
    assert result.summary["ttft_s"]["p99"] == percentile(ttfts, 99)


def test_goodput_counts_requests_within_both_bounds() -> None:
    # Two requests, TTFT 32.3 ms each, TPOT 4.78 ms. An SLO of TTFT <= 30 ms fails both; 40 ms passes both.
    work = trace((0, 1000, 3), (0, 1000, 3))
    assert simulate(work, slo=SLO(ttft_s=0.030)).summary["slo_attainment"] == 0.0
    good = simulate(work, slo=SLO(ttft_s=0.040, tpot_s=0.005)).summary
    assert good["slo_attainment"] == 1.0
    assert good["goodput_rps"] == good["throughput_rps"]
    assert simulate(work, slo=SLO(ttft_s=0.040, tpot_s=0.004)).summary["goodput_rps"] == 0.0


def test_result_is_plain_json_data() -> None:
    work = poisson_workload(20, 60, Lengths.uniform(100, 900), Lengths.uniform(10, 200), seed=1)
    for scheduler in (ContinuousBatching(), ChunkedPrefill(), StaticBatching(8), Disaggregated(1, 1)):
        data = simulate(work, scheduler=scheduler, timeline_steps=20).as_dict(token_latencies=True)
        assert json.loads(json.dumps(data)) == data
        assert len(data["timeline"]) == 20
        assert data["timeline_truncated"] is True
        assert len(data["requests"][0]["inter_token_latencies_s"]) == data["requests"][0]["output_tokens"] - 1


def test_kv_series_is_capped() -> None:
    work = burst_workload(300, 200, 200)
    series = simulate(work).kv_series[0]
    assert len(series["time_s"]) <= 300
    assert max(series["reserved_tokens"]) == simulate(work).summary["kv_peak_reserved_tokens"]


# --- load: sweeps and the highest rate meeting an SLO ------------------------------------------------------
def test_latency_rises_with_load() -> None:
    rows = sweep_rates(
        [2, 20, 60, 120], 200, prompt=Lengths.lognormal(512, 256), output=Lengths.lognormal(128, 64)
    )
    p99s = [r["ttft_p99_s"] or 0.0 for r in rows]
    assert p99s == sorted(p99s)
    tpots = [r["tpot_p50_s"] or 0.0 for r in rows]
    assert tpots == sorted(tpots)


def test_more_kv_memory_means_fewer_preemptions_bigger_batches_and_more_throughput() -> None:
    work = poisson_workload(30, 200, Lengths.lognormal(600, 400), Lengths.lognormal(200, 150), seed=3)
    runs = [
        simulate(work, memory=MemoryConfig(capacity_tokens=c), timeline_steps=0).summary
        for c in (4000, 8000, 16000, 64000)
    ]
    for smaller, larger in itertools.pairwise(runs):
        assert larger["preemptions"] <= smaller["preemptions"]
        assert larger["mean_decode_batch"] > smaller["mean_decode_batch"]
        assert larger["throughput_rps"] > smaller["throughput_rps"]
        assert larger["ttft_s"]["p99"] < smaller["ttft_s"]["p99"]


def test_a_faster_gpu_means_faster_tokens() -> None:
    work = poisson_workload(30, 200, Lengths.lognormal(600, 400), Lengths.lognormal(200, 150), seed=3)
    runs = [simulate(work, make_setup(memory_efficiency=e)).summary for e in (0.25, 0.5, 1.0)]
    for slower, faster in itertools.pairwise(runs):
        assert faster["tpot_s"]["p50"] < slower["tpot_s"]["p50"]
        assert faster["e2e_s"]["mean"] < slower["e2e_s"]["mean"]


def test_max_rate_meeting_slo_sits_at_the_knee() -> None:
    slo = SLO(ttft_s=0.5, tpot_s=0.05)
    best = max_rate_meeting_slo(
        prompt=Lengths.fixed(512), output=Lengths.fixed(64), slo=slo, duration_s=10, max_requests=800, steps=8
    )
    rate = best["rate_per_s"]
    assert rate is not None
    assert (best["slo_attainment"] or 0.0) >= 0.9
    above = sweep_rates([rate * 1.2], int(rate * 1.2 * 10), prompt=512, output=64, slo=slo)[0]
    assert (above["slo_attainment"] or 0.0) < 0.9


# --- workloads ---------------------------------------------------------------------------------------------
def test_workloads_are_deterministic_and_streams_independent() -> None:
    a = poisson_workload(3, 50, Lengths.lognormal(500, 200), 100, seed=7)
    assert a == poisson_workload(3, 50, Lengths.lognormal(500, 200), 100, seed=7)
    b = poisson_workload(3, 50, Lengths.lognormal(500, 200), Lengths.uniform(1, 50), seed=7)
    assert [r.arrival_s for r in a] == [r.arrival_s for r in b]
    assert [r.prompt_tokens for r in a] == [r.prompt_tokens for r in b]
    # Doubling the rate halves every gap: the same draws, scaled.
    c = poisson_workload(6, 50, Lengths.lognormal(500, 200), 100, seed=7)
    assert [r.arrival_s for r in c] == [approx(r.arrival_s / 2) for r in a]


def test_lognormal_lengths_have_the_stated_mean() -> None:
    work = burst_workload(4000, Lengths.lognormal(161.31, 160), Lengths.lognormal(337.99, 330), seed=2)
    mean_prompt = sum(r.prompt_tokens for r in work) / len(work)
    assert mean_prompt == pytest.approx(161.31, rel=0.05)
    assert sum(r.output_tokens for r in work) / len(work) == pytest.approx(337.99, rel=0.05)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: poisson_workload(0, 10), "rate_per_s is 0: no request would ever arrive"),
        (lambda: poisson_workload(-1, 10), "rate_per_s must be a finite number greater than 0"),
        (lambda: Lengths.uniform(10, 5), "uniform lengths need low <= high"),
        (lambda: trace_workload([]), "the trace has no rows"),
        (lambda: trace_workload([(0, 10)]), r"trace row 0 has 2 values; give \(arrival_s"),
        (lambda: trace_workload([{"arrival_s": 0, "prompt_tokens": 5}]), "trace row 0 lacks output_tokens"),
        (lambda: trace_workload([(-1, 10, 2)]), "trace row 0: arrival_s must be a finite number"),
        (lambda: simulate([]), "the workload has no requests"),
        (lambda: simulate(trace((0, 10, 2), (1, 10, 2))[:1] * 2), "request id 0 appears twice"),
        (
            lambda: simulate(trace((0, 5000, 2)), memory=MemoryConfig(capacity_tokens=4096)),
            "request 0 can never be served: it needs 5,008 tokens of KV cache but one instance holds 4,096",
        ),
        (
            lambda: simulate(trace((0, 50, 60)), memory=MemoryConfig("contiguous", max_sequence_tokens=100)),
            "request 0 needs 110 tokens of cache .* raise max_sequence_tokens",
        ),
        (lambda: MemoryConfig("virtual"), "memory kind must be one of contiguous, paged"),
        (lambda: Disaggregated(link="carrier-pigeon"), "unknown interconnect 'carrier-pigeon'"),
        (
            lambda: simulate(trace((0, 10, 2)), max_steps=1),
            "needs at least 2 engine steps and max_steps is 1",
        ),
        (lambda: simulate(trace((0, 10, 2), (5, 10, 2)), max_steps=2), "ran past max_steps"),
        (lambda: Request(0, 0.0, 10, 0), "request 0: output_tokens must be a whole number >= 1"),
    ],
)
def test_bad_input_gets_a_clear_message(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


# --- the command line --------------------------------------------------------------------------------------
def test_cli_reads_a_trace_as_csv_or_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv_file = tmp_path / "trace.csv"
    csv_file.write_text("arrival_s,prompt_tokens,output_tokens\n0,1000,3\n0,1000,3\n", encoding="utf-8")
    json_file = tmp_path / "trace.json"
    rows = [[0, 1000, 3], {"arrival_s": 0, "prompt_tokens": 1000, "output_tokens": 3}]
    json_file.write_text(json.dumps(rows), encoding="utf-8")
    for path in (csv_file, json_file):
        assert main(["--json", "simulate", "--trace", str(path)]) == 0
        data = json.loads(capsys.readouterr().out)
        # The two-request case worked above: one 2,000-token prefill, then two decode steps of batch 2.
        assert [r["ttft_s"] for r in data["requests"]] == [approx(2000 * PER_PROMPT_TOKEN)] * 2


def test_cli_explains_a_bad_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("arrival_s,prompt_tokens,output_tokens\n0,0,3\n", encoding="utf-8")
    assert main(["simulate", "--trace", str(bad)]) == 2
    assert "trace row 0: prompt_tokens must be a whole number >= 1" in capsys.readouterr().err
    bad.write_text("arrival_s,prompt_tokens,output_tokens\n0,ten,3\n", encoding="utf-8")
    assert main(["simulate", "--trace", str(bad)]) == 2
    assert "trace row 0: prompt_tokens 'ten' is not a whole number" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(tmp_path / "missing.csv")]) == 2
    assert "cannot read the trace" in capsys.readouterr().err
    assert main(["simulate", "--prompt", "gaussian:5:1"]) == 2
    assert "--prompt 'gaussian:5:1' is not a length" in capsys.readouterr().err
