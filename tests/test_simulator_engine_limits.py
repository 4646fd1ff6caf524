"""The limits real engines put on a step, worked by hand: the most sequences in a step (vLLM's
``max_num_seqs``) and the most tokens in a step (``max_num_batched_tokens``).

The setup is the lesson's (tests/test_simulator.py): an 8B dense model in BF16 on one H100 SXM at spec peaks,
simple level, so a step of up to 295 tokens takes STEP = 16e9 / 3.35e12 = 4.7761 ms (the weights read once)
and a prefill of P > 295 tokens takes P x 16.1714 us.

The workload of every case: four requests at t = 0, each a 100-token prompt and 3 output tokens (the first
from the prefill, two from decode steps).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calculators import ChunkedPrefill, ContinuousBatching, Disaggregated, Request, simulate, trace_workload
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
