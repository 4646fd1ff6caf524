"""The simulator experiments the serving lessons quote: each figure checked by hand or by the behaviour it
teaches, and reachable from a calculator expression."""

from __future__ import annotations

import math
import re

import pytest

from calculators.expressions import NAMESPACE, evaluate_number
from calculators.simulator.experiments import chunk_step_s, kv_handoff, max_good_rate, prefill_stall
from calculators.simulator.named import COURSE_WORKLOAD, run_named, served

# Llama-3.1-8B shapes (the dense-8b preset): 32 layers, 8 KV heads of 128, keys and values, 2 bytes each.
KV_BYTES_PER_TOKEN = 32 * 8 * 128 * 2 * 2  # 131,072 B


def test_kv_handoff_is_the_prompts_cache_over_the_link() -> None:
    h = kv_handoff(2000, "nvlink4")
    assert h.bytes == 2000 * KV_BYTES_PER_TOKEN  # 262,144,000 B
    # NVLink 4: 450 GB/s one way, 5 us latency: 5e-6 + 2.62144e8 / 4.5e11 = 5.8754e-4 s
    assert h.time_s == pytest.approx(5e-6 + 2.62144e8 / 4.5e11, rel=1e-12)
    # InfiniBand NDR: 50 GB/s, 15 us: 1.5e-5 + 2.62144e8 / 5e10 = 5.25788e-3 s, about one decode step
    ib = kv_handoff(2000, "infiniband-ndr")
    assert ib.time_s == pytest.approx(1.5e-5 + 2.62144e8 / 5e10, rel=1e-12)
    assert 1.0 < ib.decode_steps < 1.2


def test_an_unchunked_long_prompt_stalls_the_decodes_for_its_whole_prefill() -> None:
    stall = prefill_stall(8000, 16)
    # 8,000 tokens x 2 x 8.03e9 FLOPs / 989 TFLOP/s is about 130 ms: the decodes wait that long, plus a step.
    prefill_s = stall.ttft_s
    assert stall.longest_gap_s == pytest.approx(prefill_s + stall.decode_step_s, rel=0.05)
    assert 25 < stall.stall_steps < 30


def test_a_chunk_below_the_ridge_leaves_the_decode_step_as_it_was() -> None:
    # 16 decodes + 240 prompt tokens = 256 tokens a step, under the H100's ridge (about 295): memory-bound
    stall = prefill_stall(8000, 16, 256)
    assert stall.stall_steps == pytest.approx(1.0, rel=1e-9)
    # the price: the prompt now takes 8000 / 240 = 34 steps instead of one long one
    assert stall.ttft_s > prefill_stall(8000, 16).ttft_s
    assert stall.ttft_steps == pytest.approx(math.ceil(8000 / 240), rel=0.02)


def test_a_bigger_chunk_lengthens_the_step_it_rides_in() -> None:
    assert chunk_step_s(64, 0) < chunk_step_s(64, 256) < chunk_step_s(64, 1024)
    assert prefill_stall(8000, 16, 512).longest_gap_s < prefill_stall(8000, 16, 2048).longest_gap_s


def test_served_runs_keep_their_books() -> None:
    run = served("course", rate=20, scheduler="chunked", replicas=2)
    assert run.goodput_rps <= run.throughput_rps
    assert run.ttft_s.p50 <= run.ttft_s.p99 <= run.ttft_s.max
    assert run.busy_prefill is None
    split = served("course", rate=20, scheduler="disaggregated")
    assert split.busy_prefill is not None
    assert split.busy_decode is not None
    assert split.busy_prefill < split.busy_decode  # the prefill pool waits for prompts most of the time


def test_chunking_bounds_the_inter_token_latency_that_prefill_first_lets_grow() -> None:
    chunked = served("course", rate=30, scheduler="chunked", replicas=2)
    assert chunked.itl_s.p99 < served("course", rate=30, scheduler="continuous", replicas=2).itl_s.p99
    # A decode pool never runs a prefill, so its gaps stay below the chunked replicas' (10.7 ms against
    # 11.5 ms at spec peaks); but the course workload counts the KV-cache reads, and each of its steps reads
    # the caches of the ~38 requests it carries, so the gaps are well above a plain step of one request
    # (4.78 ms).
    split = served("course", rate=30, scheduler="disaggregated")
    assert split.itl_s.p99 < chunked.itl_s.p99
    assert split.itl_s.p99 > 1.5 * chunk_step_s(1, 0)


def test_disaggregation_needs_gpus_on_both_sides() -> None:
    with pytest.raises(ValueError, match="decode_gpus"):
        served("course", rate=10, scheduler="disaggregated", decode_gpus=0)
    with pytest.raises(ValueError, match="scheduler must be one of"):
        served("course", rate=10, scheduler="fastest")
    with pytest.raises(ValueError, match="preset must be one of"):
        served("courses", rate=10)


def test_one_wrapper_serves_every_lesson_run() -> None:
    # Lessons, charts and notebooks quote a served workload through served() alone (serve() is gone), and
    # the course preset is run_named with the course workload's keywords spelled out: the same run.
    assert "serve" not in NAMESPACE
    w = COURSE_WORKLOAD
    spelled_out = run_named(
        "dense-8b",
        kv_traffic=True,  # the course preset counts attention's reads of the KV cache, as the course does
        scheduler="chunked",
        requests=400,
        rate=20,
        prompt=w["prompt_mean"],
        prompt_spread=w["prompt_spread"],
        prompt_cap=w["prompt_cap"],
        output=w["output_mean"],
        output_spread=w["output_spread"],
        output_cap=w["output_cap"],
        slo_ttft_ms=500,
        slo_tpot_ms=20,
    )
    run = served("course", rate=20, scheduler="chunked")
    assert run.result.summary == spelled_out.summary
    # the course caps hold: no prompt beyond 8,000 tokens, no answer beyond 1,000
    assert max(int(r["prompt_tokens"]) for r in run.result.requests) <= 8000
    assert max(int(r["output_tokens"]) for r in run.result.requests) <= 1000
    # served_rps counts the tokens written while requests arrive; good_rate_rps is rate x attainment
    assert run.good_rate_rps == pytest.approx(20 * run.slo_attainment)


def test_lessons_reach_the_experiments_through_expressions() -> None:
    assert evaluate_number("prefill_stall(8000, 16).stall_steps") == prefill_stall(8000, 16).stall_steps
    assert evaluate_number('kv_handoff(2000, "nvlink4").bytes') == 2000 * KV_BYTES_PER_TOKEN
    expression = 'served("course", rate=20, scheduler="chunked").ttft_s.p99'
    assert evaluate_number(expression) == served("course", rate=20, scheduler="chunked").ttft_s.p99


def test_an_experiment_of_many_runs_brings_its_own_time_limit() -> None:
    from calculators.expressions import ExpressionError, evaluate

    # Warm the cache so the test itself is quick; the limit is what is under test, not the speed.
    rate = max_good_rate("chunked", gpus=1, ttft_slo=1.0)
    # An expression naming max_good_rate may run for as long as the function declares ...
    assert evaluate('max_good_rate("chunked", gpus=1, ttft_slo=1.0)', time_limit_s=1e-9) == rate
    # ... while any other expression keeps the limit it was given.
    with pytest.raises(ExpressionError, match="took longer than"):
        evaluate("Scenario().decode().time_s + 1", time_limit_s=1e-9)


def test_goodput_on_pipeline_stages_is_a_replicas_not_a_gpus() -> None:
    # At the simple level a pass through two stages takes what it takes on one GPU (the stages run one after
    # another, the sends between them are not counted), and the course workload never fills one GPU's
    # cache at these rates: two GPUs as one two-stage replica serve as one GPU does, half what two
    # replicas of one GPU serve (capacity, not speed).
    one_gpu = max_good_rate("chunked", gpus=1)
    staged = max_good_rate("chunked", gpus=2, pipeline_stages=2)
    assert staged == one_gpu
    assert staged < 0.6 * max_good_rate("chunked", gpus=2)
    # Micro-batches each read their stage's weights again: a memory-bound decode step grows, goodput falls.
    assert max_good_rate("chunked", gpus=2, pipeline_stages=2, micro_batches=2) < staged
    # And a lesson reaches it.
    assert evaluate_number('max_good_rate("chunked", gpus=2, pipeline_stages=2)') == staged


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"gpus": 3, "pipeline_stages": 2}, "gpus=3 does not split into replicas of 2 pipeline stages"),
        ({"pipeline_stages": 40}, "pipeline_stages=40: dense-8b has 32 layers"),
        ({"micro_batches": 2}, "micro_batches=2 needs pipeline stages to flow through"),
        (
            {"scheduler": "disaggregated", "pipeline_stages": 2},
            "prefill_gpus=1 is not a multiple of the setup's 2 GPUs per replica",
        ),
    ],
    ids=["gpus-not-a-multiple", "too-many-stages", "micro-batches-alone", "disaggregated-pool"],
)
def test_goodput_says_what_is_wrong_with_its_pipeline(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        max_good_rate(**settings)  # type: ignore[arg-type]
