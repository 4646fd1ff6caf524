"""What real engines do that a bare simulator would not, worked by hand: the most sequences in a step (vLLM's
``max_num_seqs``), the most tokens in a step (``max_num_batched_tokens``), and preemption by recompute or
by swap to CPU memory; static batching with a batching timeout; routing across replicas; and disaggregated
pools with their own setups.

The setup is the lesson's (test_simulator.py): an 8B dense model in BF16 on one H100 SXM at spec peaks,
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
    Interconnect,
    MemoryConfig,
    Request,
    StaticBatching,
    make_setup,
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
# The preemption case of test_simulator.py: 64 tokens of cache in 16-token blocks (4 blocks), no
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


# --- static batching with a batching timeout --------------------------------------------------------------
def test_a_batch_starts_when_its_oldest_request_has_waited_the_timeout() -> None:
    # Batch size 4, timeout 100 ms. Requests at 0, 50 ms and 300 ms, 100-token prompts, 2 tokens each.
    #   timeout: at 100 ms request 0 has waited 100 ms, so 0 and 1 start: one prefill of 2 x 100 tokens
    #            (memory-bound, STEP) and one decode step; request 2, the last to come, starts at once.
    #   no timeout: nobody starts before the last arrival (300 ms); then all three: 300 prompt tokens,
    #            compute-bound (300 x 16.17 us = 4.851 ms), and one decode step.
    #   continuous batching: each starts on arrival, 2 STEP each.
    work = trace_workload([(0.0, 100, 2), (0.05, 100, 2), (0.3, 100, 2)])
    timed = simulate(work, scheduler=StaticBatching(4, timeout_s=0.1)).requests
    assert [r["queueing_s"] for r in timed] == [approx(0.1), approx(0.05), 0.0]
    assert [r["e2e_s"] for r in timed] == [approx(0.1 + 2 * STEP), approx(0.05 + 2 * STEP), approx(2 * STEP)]
    untimed = simulate(work, scheduler=StaticBatching(4)).requests
    assert [r["queueing_s"] for r in untimed] == [approx(0.3), approx(0.25), 0.0]
    assert untimed[2]["e2e_s"] == approx(300 * PER_PROMPT_TOKEN + STEP)
    continuous = simulate(work).requests
    assert [r["e2e_s"] for r in continuous] == [approx(2 * STEP)] * 3


def test_a_request_whose_timeout_runs_out_during_a_batch_waits_for_its_end() -> None:
    # Batch size 4, timeout 10 ms. Request 0 (0 s, 4 tokens) starts alone at 10 ms and its batch runs
    # 4 STEP (prefill and 3 decode steps), to 29.10 ms. Request 1 arrives at 15 ms; its wait runs out at
    # 25 ms, inside that batch, so it starts at the batch's end: queued 14.10 ms, done 2 STEP later. Request
    # 2 (1 s) is the last and starts at once.
    work = trace_workload([(0.0, 100, 4), (0.015, 100, 2), (1.0, 100, 2)])
    r0, r1, r2 = simulate(work, scheduler=StaticBatching(4, timeout_s=0.01)).requests
    assert (r0["queueing_s"], r0["e2e_s"]) == (approx(0.01), approx(0.01 + 4 * STEP))
    assert (r1["queueing_s"], r1["e2e_s"]) == (
        approx(0.01 + 4 * STEP - 0.015),
        approx(0.01 + 6 * STEP - 0.015),
    )
    assert (r2["queueing_s"], r2["e2e_s"]) == (0.0, approx(2 * STEP))


def test_a_zero_timeout_batches_whoever_is_waiting() -> None:
    # Triton's default delay, 0: a batch takes whoever waits when the engine is free. Two requests at 0
    # and one at 1 ms (during their batch): the first two share a batch, the third runs after it.
    work = trace_workload([(0.0, 100, 2), (0.0, 100, 2), (0.001, 100, 2)])
    r = simulate(work, scheduler=StaticBatching(4, timeout_s=0.0)).requests
    assert [x["e2e_s"] for x in r] == [approx(2 * STEP), approx(2 * STEP), approx(4 * STEP - 0.001)]


def test_cli_batch_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "three.csv"
    trace.write_text(
        "arrival_s,prompt_tokens,output_tokens\n0,100,2\n0.05,100,2\n0.3,100,2\n", encoding="utf-8"
    )
    base = ["--json", "simulate", "--trace", str(trace), "--scheduler", "static", "--batch-size", "4"]
    assert main([*base, "--batch-timeout", "0.1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["queueing_s"] for r in data["requests"]] == [approx(0.1), approx(0.05), 0.0]
    assert data["config"]["scheduler"]["timeout_s"] == 0.1
    assert main([*base, "--batch-timeout", "-1"]) == 2
    assert "timeout_s must be a finite number between 0 and 86400" in capsys.readouterr().out


# --- routing across replicas ------------------------------------------------------------------------------
def test_least_loaded_routing_sends_a_request_to_the_idle_replica() -> None:
    # Two replicas. Request 0 (0 s, 40 tokens) runs long on replica A; request 1 (1 ms, 2 tokens) goes to B
    # either way and is done at 1 ms + 2 STEP = 10.55 ms; request 2 arrives at 20 ms.
    #   round-robin: request 2 is A's turn. A is decoding request 0; its next step starts at 5 STEP =
    #                23.88 ms and prefills request 2 (prefill first: request 0 waits a step), whose second
    #                token comes at 7 STEP: 13.43 ms after it arrived; request 0 ends at 41 STEP.
    #   least-loaded: at 20 ms A has 1 unfinished request and B none: request 2 runs alone on B, 2 STEP =
    #                9.55 ms; request 0 ends at 40 STEP, never stalled.
    work = trace_workload([(0.0, 100, 40), (0.001, 100, 2), (0.02, 100, 2)])
    turn = simulate(work, replicas=2).requests
    least = simulate(work, replicas=2, routing="least-loaded").requests
    assert [r["e2e_s"] for r in turn] == [approx(41 * STEP), approx(2 * STEP), approx(7 * STEP - 0.02)]
    assert [r["e2e_s"] for r in least] == [approx(40 * STEP), approx(2 * STEP), approx(2 * STEP)]


def test_least_loaded_routing_with_equal_loads_goes_in_turn() -> None:
    # Four requests at once on two replicas: loads tie at every arrival, so they alternate, as round-robin
    # does, and the two runs are the same.
    work = trace_workload([(0.0, 100, 3)] * 4)
    turn = simulate(work, replicas=2)
    least = simulate(work, replicas=2, routing="least-loaded")
    assert [r["e2e_s"] for r in least.requests] == [r["e2e_s"] for r in turn.requests]
    assert least.summary["steps"] == turn.summary["steps"] == 6  # a prefill and 2 decode steps on each


def test_least_loaded_routing_needs_a_scheduler_that_does_not_wait_for_a_batch() -> None:
    with pytest.raises(ValueError, match="routing 'least-loaded' takes a continuous or chunked scheduler"):
        simulate(four(), scheduler=StaticBatching(2), replicas=2, routing="least-loaded")
    with pytest.raises(ValueError, match="routing must be one of cache-aware, least-loaded, round-robin"):
        simulate(four(), routing="random")


# --- disaggregated pools with their own setups ------------------------------------------------------------
SLOW_LINK = Interconnect("test", "test link", 1e9, 0.001, "hand-worked")


def test_a_decode_pool_on_another_gpu_decodes_at_its_speed() -> None:
    # One request, prompt 1,000, 3 tokens (test_simulator.py's handoff case): the H100 prefills it in
    # 16.17 ms; its 131.07 MB cache crosses a 1 GB/s link with 1 ms latency (132.07 ms); an H200 decode pool
    # (4.8 TB/s) writes tokens 2 and 3 in steps of 16e9 / 4.8e12 = 3.333 ms, where an H100's take 4.776 ms.
    h200 = make_setup(gpu="h200")
    result = simulate(
        trace_workload([(0.0, 1000, 3)]), scheduler=Disaggregated(1, 1, SLOW_LINK, decode_setup=h200)
    )
    prefill = 1000 * PER_PROMPT_TOKEN
    transfer = 0.001 + 1000 * KV_BYTES_PER_TOKEN / 1e9
    h200_step = 16e9 / 4.8e12
    assert result.token_times(0) == [
        approx(prefill),
        approx(prefill + transfer + h200_step),
        approx(prefill + transfer + 2 * h200_step),
    ]
    described = result.config["scheduler"]
    assert isinstance(described, dict)
    assert described["decode_setup"] == {"gpu": "h200", "tensor_parallel": 1, "gpus": 1}
    # Each pool's cache is its own GPU's: the H200's 141 GB hold more tokens than the H100's 80 GB.
    by_role = result.summary["kv_capacity_tokens_by_role"]
    assert (
        by_role["decode"]
        > by_role["prefill"]
        == simulate(trace_workload([(0.0, 1000, 3)])).summary["kv_capacity_tokens"]
    )


def test_a_cache_crosses_as_many_links_as_the_smaller_pool_has_gpus() -> None:
    # The 131.07 MB cache of a 1,000-token prompt over 1 GB/s links: both pools on 2 GPUs send half each
    # (1 ms + 65.54 ms); a 1-GPU prefill pool sends all of it over its one link to a 2-GPU decode pool
    # (1 ms + 131.07 ms), as does a 2-GPU prefill pool to a 1-GPU decode pool.
    work = trace_workload([(0.0, 1000, 3)])
    one, two = make_setup(), make_setup(gpus=2)
    both_two = simulate(work, two, Disaggregated(2, 2, SLOW_LINK)).requests[0]["kv_transfer_s"]
    one_to_two = simulate(work, one, Disaggregated(1, 2, SLOW_LINK, decode_setup=two)).requests[0]
    two_to_one = simulate(work, one, Disaggregated(2, 1, SLOW_LINK, prefill_setup=two)).requests[0]
    assert both_two == approx(0.001 + 1000 * KV_BYTES_PER_TOKEN / 2 / 1e9)
    assert one_to_two["kv_transfer_s"] == approx(0.001 + 1000 * KV_BYTES_PER_TOKEN / 1e9)
    assert two_to_one["kv_transfer_s"] == approx(0.001 + 1000 * KV_BYTES_PER_TOKEN / 1e9)


def test_pools_must_hold_the_same_cache() -> None:
    other = make_setup("llama-3.1-70b", gpus=4)
    with pytest.raises(ValueError, match="a cache sent from one must fit the other"):
        simulate(four(), scheduler=Disaggregated(1, 4, decode_setup=other))
    with pytest.raises(ValueError, match="decode_setup must be a Setup"):
        Disaggregated(decode_setup="h200")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="decode_gpus=3 is not a multiple of the setup's 2 GPUs"):
        simulate(four(), scheduler=Disaggregated(1, 3, decode_setup=make_setup(gpus=2)))


def test_cli_pool_setups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "one.csv"
    trace.write_text("arrival_s,prompt_tokens,output_tokens\n0,1000,3\n", encoding="utf-8")
    base = ["simulate", "--trace", str(trace), "--scheduler", "disaggregated"]
    assert (
        main(["--json", *base, "--decode-gpu", "h200", "--decode-tensor-parallel", "2", "--decode-gpus", "2"])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["scheduler"]["decode_setup"] == {"gpu": "h200", "tensor_parallel": 2, "gpus": 2}
    assert "prefill_setup" not in data["config"]["scheduler"]
    # Two H200 decode steps of batch 1 after the handoff: tokens 2 and 3 are one H200 TP-2 step apart.
    times = data["requests"][0]
    assert times["e2e_s"] > times["ttft_s"]
    assert main([*base, "--prefill-gpu", "h200"]) == 0
    assert "scheduler disaggregated, prefill on 1 x h200;" in capsys.readouterr().out
    assert main([*base, "--decode-tensor-parallel", "0"]) == 2
    assert "--decode-tensor-parallel must be a whole number >= 1" in capsys.readouterr().err
    assert main([*base, "--prefill-gpu", "h2000"]) == 2
    assert "unknown GPU 'h2000'" in capsys.readouterr().err


def test_a_lesson_can_name_each_option() -> None:
    # run_named, which lessons and charts call, takes the new options by name and passes them through.
    from calculators.simulator.named import run_named

    swapped = run_named(
        requests=20, rate=50, capacity_tokens=4000, preemption="swap", model="dense-8b", kv_traffic=False
    )
    assert swapped.config["memory"]["preemption"] == "swap"  # type: ignore[index]
    routed = run_named(requests=20, rate=50, replicas=2, routing="least-loaded")
    assert routed.summary["instances"] == 2
    timed = run_named(requests=5, rate=1, scheduler="static", batch_size=4, batch_timeout_s=0.2)
    assert timed.config["scheduler"]["timeout_s"] == 0.2  # type: ignore[index]
    assert timed.requests[0]["queueing_s"] <= 0.2 + 1e-9  # the first waits at most the timeout
