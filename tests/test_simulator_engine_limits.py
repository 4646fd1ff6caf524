"""What real engines do that a bare simulator would not, worked by hand: the most sequences in a step (vLLM's
``max_num_seqs``), the most tokens in a step (``max_num_batched_tokens``), and preemption by recompute or
by swap to CPU memory.

The setup is the lesson's (tests/test_simulator.py): an 8B dense model in BF16 on one H100 SXM at spec peaks,
simple level, so a step of up to 295 tokens takes STEP = 16e9 / 3.35e12 = 4.7761 ms (the weights read once)
and a prefill of P > 295 tokens takes P x 16.1714 us.

The engine limits' workload: four requests at t = 0, each a 100-token prompt and 3 output tokens (the first
from the prefill, two from decode steps).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from calculators import (
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    MemoryConfig,
    Request,
    simulate,
    trace_workload,
)
from calculators.cli import main
from calculators.simulator.schedulers import DEFAULT_MAX_BATCH_TOKENS, DEFAULT_MAX_SEQUENCES

STEP = 16e9 / 3.35e12
PER_PROMPT_TOKEN = 1.6e10 / 989.4e12


def approx(value: float) -> object:
    return pytest.approx(value, rel=1e-9, abs=1e-12)


def four() -> tuple[Request, ...]:
    return trace_workload([(0.0, 100, 3)] * 4)


def test_the_defaults_are_vllms() -> None:
    # vLLM's EngineArgs.get_batch_defaults for GPUs under 70 GiB and the A100: max_num_seqs 256,
    # max_num_batched_tokens 8,192 for the LLM class. The CLI's defaults are the same constants.
    assert (DEFAULT_MAX_SEQUENCES, DEFAULT_MAX_BATCH_TOKENS) == (256, 8192)
    scheduler = ContinuousBatching()
    assert (scheduler.max_sequences, scheduler.max_batch_tokens) == (256, 8192)


def test_without_a_binding_limit_all_four_share_one_prefill() -> None:
    # 400 prompt tokens in one compute-bound step (6.4686 ms), then 2 decode steps of batch 4: 3 steps.
    result = simulate(four())
    assert result.summary["steps"] == 3
    assert [r["ttft_s"] for r in result.requests] == [approx(400 * PER_PROMPT_TOKEN)] * 4
    assert [r["e2e_s"] for r in result.requests] == [approx(400 * PER_PROMPT_TOKEN + 2 * STEP)] * 4


def test_max_batch_tokens_splits_the_prefill() -> None:
    # A budget of 200 prompt tokens per step: step 1 prefills requests 0 and 1 (200 tokens, memory-bound,
    # STEP); step 2 prefills 2 and 3 (prefill first: 0 and 1 wait); steps 3 and 4 decode all four.
    # 4 steps of STEP = 19.10 ms for everyone, where one shared prefill gave 16.02 ms.
    result = simulate(four(), scheduler=ContinuousBatching(max_batch_tokens=200))
    assert result.summary["steps"] == 4
    assert [r["ttft_s"] for r in result.requests] == [approx(STEP)] * 2 + [approx(2 * STEP)] * 2
    assert [r["e2e_s"] for r in result.requests] == [approx(4 * STEP)] * 4
    assert [len(s["prefill"]) for s in result.timeline] == [2, 2, 0, 0]


def test_max_sequences_makes_the_rest_wait_even_with_memory_free() -> None:
    # At most 2 running: step 1 prefills 0 and 1, steps 2 and 3 decode them (they finish at 3 STEP), step 4
    # prefills 2 and 3, steps 5 and 6 decode them. Requests 2 and 3 queue for 3 STEP = 14.33 ms.
    for scheduler in (ContinuousBatching(max_sequences=2), ChunkedPrefill(512, max_sequences=2)):
        result = simulate(four(), scheduler=scheduler)
        assert result.summary["steps"] == 6
        r = result.requests
        assert [x["queueing_s"] for x in r] == [0.0, 0.0, approx(3 * STEP), approx(3 * STEP)]
        assert [x["e2e_s"] for x in r] == [approx(3 * STEP)] * 2 + [approx(6 * STEP)] * 2
        assert result.summary["mean_decode_batch"] == 2.0
        assert result.summary["preemptions"] == 0


def test_a_prompt_longer_than_the_budget_runs_alone() -> None:
    # Budget 50 < 100: each prompt runs alone (vLLM without chunked prefill would refuse it): 4 prefill
    # steps, then 2 decode steps. The step-count check must not refuse this run as needing 8 prompt steps.
    result = simulate(four(), scheduler=ContinuousBatching(max_batch_tokens=50), max_steps=6)
    assert result.summary["steps"] == 6
    assert [r["ttft_s"] for r in result.requests] == [approx(k * STEP) for k in (1, 2, 3, 4)]


def test_disaggregated_prefill_pool_takes_the_token_budget() -> None:
    # The prefill GPU runs continuous batching with the budget: two prefill steps of 200 tokens, so requests
    # 2 and 3 have their first token at 2 STEP, as in the one-GPU case.
    result = simulate(four(), scheduler=Disaggregated(1, 1, max_batch_tokens=200))
    assert [r["ttft_s"] for r in result.requests] == [approx(STEP)] * 2 + [approx(2 * STEP)] * 2
    described = result.config["scheduler"]
    assert isinstance(described, dict)
    assert described["prefill_scheduler"]["max_batch_tokens"] == 200


def test_cli_flags_set_both_limits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "four.csv"
    trace.write_text("arrival_s,prompt_tokens,output_tokens\n" + "0,100,3\n" * 4, encoding="utf-8")
    expected_steps = {(): 3, ("--max-batch-tokens", "200"): 4, ("--max-sequences", "2"): 6}
    for flags, steps in expected_steps.items():
        assert main(["--json", "simulate", "--trace", str(trace), *flags]) == 0
        assert json.loads(capsys.readouterr().out)["summary"]["steps"] == steps
    assert main(["simulate", "--trace", str(trace), "--max-batch-tokens", "0"]) == 2
    assert "max_batch_tokens must be a whole number >= 1" in capsys.readouterr().err


# --- preemption: recompute or swap --------------------------------------------------------------------------
# The preemption case of tests/test_simulator.py: 64 tokens of cache in 16-token blocks (4 blocks), no
# watermark, two requests at 0 with 16-token prompts and 20 output tokens. Both prefill in one step (a block
# each), take a second block at decode step 0 and need a third at decode step 16 (context 33): request 1, the
# later, is preempted after writing 17 tokens, holding 2 blocks (32 tokens); request 0 ends at decode step 18.
KV_BYTES_PER_TOKEN = 131_072  # 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes
PCIE5 = 63e9  # PCIe 5.0 x16, bytes/s per direction; 10 us latency
SWAP_2_BLOCKS = 10e-6 + 32 * KV_BYTES_PER_TOKEN / PCIE5  # 10 us + 4.194 MB / 63 GB/s = 76.58 us


def two_growing() -> tuple[Request, ...]:
    return trace_workload([(0, 16, 20), (0, 16, 20)])


def tiny(preemption: str = "recompute", **swap: Any) -> MemoryConfig:
    return MemoryConfig(capacity_tokens=64, watermark=0.0, preemption=preemption, **swap)


def test_recompute_prefills_the_preempted_request_again() -> None:
    # Request 1 waits for request 0's end (20 steps: the prefill and 19 decode steps), prefills its 16-token
    # prompt and 17 written tokens again (33 tokens, one memory-bound step that writes token 18), then decodes
    # tokens 19 and 20: 23 steps.
    result = simulate(two_growing(), memory=tiny())
    r0, r1 = result.requests
    assert (r0["e2e_s"], r1["e2e_s"]) == (approx(20 * STEP), approx(23 * STEP))
    assert [s["prefill"] for s in result.timeline if s["prefill"]][-1] == [[1, 33, 0]]
    assert "swap" not in result.summary


def test_swap_copies_the_blocks_out_and_back_instead() -> None:
    # Swap: request 1's 2 blocks go to CPU memory during decode step 16 (that step takes STEP + 76.58 us,
    # which delays request 0 too), and come back when request 0 has ended; the step that brings them back
    # decodes at once (no prefill): tokens 18, 19 and 20 in 3 decode steps, the first + 76.58 us.
    result = simulate(two_growing(), memory=tiny("swap"))
    r0, r1 = result.requests
    assert r0["e2e_s"] == approx(20 * STEP + SWAP_2_BLOCKS)
    assert r1["e2e_s"] == approx(23 * STEP + 2 * SWAP_2_BLOCKS)
    assert [s["prefill"] for s in result.timeline if s["prefill"]] == [[[0, 16, 0], [1, 16, 0]]]
    assert (r0["preemptions"], r1["preemptions"]) == (0, 1)
    assert len(result.token_times(1)) == 20
    # 4 GiB of swap space per GPU (vLLM's default) at 131,072 bytes a token: 32,768 tokens.
    assert result.summary["swap"] == {
        "swap_space_tokens": 32_768,
        "swapped_out": 1,
        "recomputed": 0,
        "copy_time_s": approx(2 * SWAP_2_BLOCKS),
    }


def test_a_full_swap_space_falls_back_to_recompute() -> None:
    # No room for 2 blocks (1 MB of swap space holds none of 2 MiB): request 1 is recomputed, and the run is
    # the recompute run to the last figure (vLLM's V0 engine aborted here instead).
    result = simulate(two_growing(), memory=tiny("swap", swap_space_gib=0.001))
    recompute = simulate(two_growing(), memory=tiny())
    assert [r["e2e_s"] for r in result.requests] == [r["e2e_s"] for r in recompute.requests]
    assert result.summary["swap"]["swapped_out"] == 0
    assert result.summary["swap"]["recomputed"] == 1


def test_swap_wins_when_the_recompute_is_long() -> None:
    # Prompts of 1,000 tokens and 40 output tokens, 127 blocks of cache. Both prompts prefill in one step
    # (2,000 x 16.17 us = 32.34 ms), 63 blocks each; at decode step 8 (context 1,009) both need a 64th and
    # one is free: request 0 takes it, request 1 is preempted after 9 tokens, holding its 63 blocks (1,008
    # tokens). Request 0 writes its 40th token at decode step 38: 32.34 + 39 x 4.776 = 218.61 ms.
    #   recompute: request 1 prefills 1,009 tokens again (compute-bound: 1,009 x 16.17 us = 16.32 ms),
    #              writing token 10, then 30 decode steps: it ends at 378.21 ms;
    #   swap:      63 blocks go out (10 us + 132.1 MB / 63 GB/s = 2.107 ms, in decode step 8, which request
    #              0 waits for too) and back (2.107 ms more, in the first of its 31 decode steps): 370.88 ms.
    work = trace_workload([(0, 1000, 40), (0, 1000, 40)])
    memory = {"capacity_tokens": 127 * 16, "watermark": 0.0}
    r0_end = 2000 * PER_PROMPT_TOKEN + 39 * STEP
    copy = 10e-6 + 1008 * KV_BYTES_PER_TOKEN / PCIE5
    recompute = simulate(work, memory=MemoryConfig(**memory)).requests
    swap = simulate(work, memory=MemoryConfig(preemption="swap", **memory)).requests
    recompute_end = r0_end + 1009 * PER_PROMPT_TOKEN + 30 * STEP
    assert [r["e2e_s"] for r in recompute] == [approx(r0_end), approx(recompute_end)]
    assert [r["e2e_s"] for r in swap] == [approx(r0_end + copy), approx(r0_end + 2 * copy + 31 * STEP)]
    assert swap[1]["e2e_s"] == pytest.approx(0.37088, abs=1e-5)
    assert recompute[1]["e2e_s"] == pytest.approx(0.37821, abs=1e-5)


def test_cli_preemption_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "two.csv"
    trace.write_text("arrival_s,prompt_tokens,output_tokens\n0,16,20\n0,16,20\n", encoding="utf-8")
    base = ["simulate", "--trace", str(trace), "--kv-capacity-tokens", "64"]
    assert main(["--json", *base, "--preemption", "swap", "--swap-space", "1"]) == 0
    swap = json.loads(capsys.readouterr().out)["summary"]["swap"]
    assert (swap["swap_space_tokens"], swap["swapped_out"]) == (8192, 1)  # 1 GiB / 131,072 B
    assert main([*base, "--preemption", "swap", "--swap-link", "pcie4"]) == 0
    assert "swap" in capsys.readouterr().out
    assert main([*base, "--preemption", "swap", "--swap-space", "-1"]) == 2
    assert "swap_space_gib must be a finite number between 0 and 65536" in capsys.readouterr().err
    assert main([*base, "--preemption", "swap", "--prefix-caching"]) == 2
    assert "prefix_caching with preemption 'swap' is not simulated" in capsys.readouterr().err
