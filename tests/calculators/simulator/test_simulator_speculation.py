"""Speculative decoding in the serving simulator (issue 28): tokens per step, KV blocks, costs, speed-up.

Hand-worked figures use the lesson's setup at spec peaks (``make_setup()``: an 8B model in BF16 on one H100,
simple level, no KV reads), where a decode step is the weights' read, 16 GB / 3.35 TB/s = 4.776 ms, whatever
the batch up to the ridge point and whatever the context.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from calculators import ChunkedPrefill, Disaggregated, MemoryConfig, Request, make_setup, simulate
from calculators.browser import handle
from calculators.cli import main
from calculators.setting import COURSE_SETTING, site_setting, using
from calculators.simulator import (
    SLO,
    ContinuousBatching,
    Lengths,
    Speculation,
    StaticBatching,
    burst_workload,
    poisson_workload,
)
from calculators.simulator.named import run_named
from calculators.simulator.speculation import accepted_prefix
from calculators.simulator.step_cost import StepCost
from calculators.speculative import expected_tokens_per_step, speculative_decoding

PLAIN_STEP_S = 16e9 / 3.35e12  # 4.776 ms: the lesson's decode step at spec peaks
# Draft heads (one target layer and the output layer per draft step, 4 steps; see calculators.speculative):
# a decoder layer (8e9 - 2 x 525,336,576) / 32 = 217,166,464 weights and the output layer 128,256 x 4,096 =
# 525,336,576, so each draft step reads 742,503,040 / 8e9 = 0.09281288 of a decode step and four 0.37125152:
# 1.773 ms. Verifying 5 tokens of one sequence is still memory-bound: one weights' read, 4.776 ms. A
# speculative step: 6.549 ms.
HEADS_SHARE = 0.37125152
SPEC_STEP_S = PLAIN_STEP_S * (1 + HEADS_SHARE)
SURE = 1 - 1e-12  # an acceptance at which no proposal is rejected in these short runs
NEVER = 1e-12  # one at which every proposal is


class Script(random.Random):
    """A generator whose uniform draws are given, to work the accepted prefix by hand."""

    def __init__(self, draws: list[float]) -> None:
        super().__init__(0)
        self.draws = list(draws)

    def random(self) -> float:
        return self.draws.pop(0)


def test_the_accepted_prefix_stops_at_the_first_rejection_or_at_k() -> None:
    # a = 0.5: 0.1 and 0.3 accept, 0.9 rejects; the draw after it is never taken.
    rng = Script([0.1, 0.3, 0.9, 0.2])
    assert accepted_prefix(rng, 0.5, 4) == 2
    assert rng.draws == [0.2]
    assert accepted_prefix(Script([0.7]), 0.5, 4) == 0  # the first proposal rejected: only the target's token
    rng = Script([0.1] * 5)
    assert accepted_prefix(rng, 0.5, 4) == 4  # every proposal accepted: no fifth draw
    assert rng.draws == [0.1]
    assert accepted_prefix(Script([0.5]), 0.5, 4) == 0  # a draw equal to a rejects: P(accept) = a exactly


def test_every_proposal_accepted_writes_k_plus_1_tokens_a_step_until_the_output_runs_out() -> None:
    # Output 10: the prefill writes token 1; step 1 writes 5 (tokens 2-6), step 2 min(5, 4 left) = 4.
    result = simulate([Request(0, 0.0, 110, 10)], speculation=Speculation(SURE, 4))
    assert result.summary["decode_steps"] == 2
    assert result.summary["speculation"]["tokens_per_step"] == pytest.approx((5 + 4) / 2)
    # TPOT: 2 steps of 6.549 ms for 9 tokens = 1.455 ms, against 4.776 ms plain.
    assert result.summary["tpot_s"]["mean"] == pytest.approx(2 * SPEC_STEP_S / 9, rel=1e-9)
    assert result.summary["tpot_s"]["mean"] == pytest.approx(1.455e-3, rel=1e-3)
    # The tokens of a step come together at its end: one gap per step, then 0 for the rest of its tokens.
    gaps = result.inter_token_latencies(0)
    assert gaps == pytest.approx([SPEC_STEP_S, 0, 0, 0, 0, SPEC_STEP_S, 0, 0, 0], rel=1e-9)
    assert len(result.token_times(0)) == 10


def test_every_proposal_rejected_is_plain_decoding_paying_for_the_drafter_and_verifier() -> None:
    # One token per step: 9 steps for tokens 2-10, each 6.549 ms, a slow-down of 4.776 / 6.549 = 0.729.
    plain = simulate([Request(0, 0.0, 110, 10)])
    spec = simulate([Request(0, 0.0, 110, 10)], speculation=Speculation(NEVER, 4))
    assert spec.summary["decode_steps"] == plain.summary["decode_steps"] == 9
    assert spec.summary["tpot_s"]["mean"] == pytest.approx(SPEC_STEP_S, rel=1e-9)
    ratio = plain.summary["tpot_s"]["mean"] / spec.summary["tpot_s"]["mean"]
    assert ratio == pytest.approx(1 / (1 + HEADS_SHARE))
    assert ratio == pytest.approx(0.729, rel=1e-3)


def test_the_proposals_blocks_are_taken_before_a_step_and_the_rejected_ones_freed_after() -> None:
    # Prompt 110 in 16-token blocks: 7 blocks (112 tokens) after the prefill. Step 1 runs at context 111
    # (the first token is its input) and writes cache for it and 4 proposals: 115 tokens, 8 blocks (128).
    memory = MemoryConfig(block_tokens=16)
    rejected = simulate(
        [Request(0, 0.0, 110, 3)], memory=memory, speculation=Speculation(NEVER, 4), timeline_memory=True
    )
    # [id, reserved, filled] while each step runs: 128 tokens reserved during both decode steps.
    assert [step["kv"] for step in rejected.timeline] == [[[0, 112, 110]], [[0, 128, 111]], [[0, 128, 112]]]
    # Every proposal rejected: the cache keeps 111 tokens, and the 8th block is freed after step 1 (the
    # reserved peak, measured after each step, stays at 7 blocks); step 2 writes token 3 and finishes.
    assert rejected.summary["kv_peak_reserved_tokens"] == 112
    # Every proposal accepted: the cache keeps 111 + 4 = 115 tokens, so the 8th block stays.
    accepted = simulate([Request(0, 0.0, 110, 10)], memory=memory, speculation=Speculation(SURE, 4))
    assert accepted.summary["kv_peak_reserved_tokens"] == 128


def test_a_chunked_budget_counts_k_plus_1_tokens_per_decoding_request() -> None:
    # Request 0 decodes from its first step on; request 1's 100-token prompt arrives later. With a budget of
    # 20 tokens a step, request 0's verification takes 4 + 1 = 5 of them, leaving 15 for the prompt (19
    # without speculation).
    requests = [Request(0, 0.0, 16, 200), Request(1, 0.1, 100, 2)]
    for speculation, piece in ((None, 19), (Speculation(0.5, 4), 15)):
        result = simulate(requests, scheduler=ChunkedPrefill(20), speculation=speculation)
        pieces = [c for step in result.timeline for rid, c, _ in step["prefill"] if rid == 1]
        assert pieces[0] == piece
        assert sum(pieces) == 100


def test_the_mean_tokens_per_step_converges_to_the_formula() -> None:
    # a = 0.8, k = 4: (1 - 0.8^5) / (1 - 0.8) = 3.3616 tokens per step. One step's tokens have a standard
    # deviation of 1.603 (1 + the accepted prefix: 1..5 with chances 0.2, 0.16, 0.128, 0.1024, 0.4096), so
    # over the ~11,900 steps of 8 requests of 5,000 tokens the mean's standard error is 1.603 / sqrt(11,900)
    # = 0.0147; the tolerance is 4 of them (0.06). Each request's last step, cut short by its end, lowers
    # the mean by at most 8 x 4 / 11,900 = 0.003.
    expected = (1 - 0.8**5) / (1 - 0.8)
    assert expected == pytest.approx(3.3616)
    assert expected_tokens_per_step(0.8, 4) == pytest.approx(expected)
    requests = burst_workload(8, Lengths.fixed(100), Lengths.fixed(5000), seed=0)
    result = simulate(requests, speculation=Speculation(0.8, 4, seed=3))
    spec = result.summary["speculation"]
    steps = sum(r["output_tokens"] - 1 for r in result.requests) / spec["tokens_per_step"]
    assert 11_000 < steps < 13_000
    assert spec["tokens_per_step"] == pytest.approx(expected, abs=0.06)
    # The accepted share of proposals: E[accepted prefix] / k = (3.3616 - 1) / 4 = 0.590, within 0.06 / 4.
    assert spec["accepted_share"] == pytest.approx((expected - 1) / 4, abs=0.015)


def test_per_request_acceptance_is_drawn_from_a_beta_with_the_given_mean() -> None:
    # Beta(0.7 x 10, 0.3 x 10): mean 0.7, standard deviation sqrt(0.7 x 0.3 / 11) = 0.138; the mean of 400
    # draws has a standard error of 0.0069, and the tolerance is 4 of them (0.028).
    requests = burst_workload(400, Lengths.fixed(10), Lengths.fixed(2), seed=0)
    spec = Speculation(0.7, 4, acceptance_concentration=10.0, seed=1)
    summary = simulate(requests, speculation=spec).summary["speculation"]
    assert summary["mean_request_acceptance"] == pytest.approx(0.7, abs=0.028)
    fixed = simulate(requests, speculation=Speculation(0.7, 4)).summary["speculation"]
    assert fixed["mean_request_acceptance"] == 0.7


@pytest.mark.parametrize("setting", [None, COURSE_SETTING], ids=["spec-peak", "course"])
def test_the_speed_up_at_batch_1_matches_the_analytic_one(setting: object) -> None:
    # One request of 3,000 tokens after a 1,000-token prompt: contexts 1,000 to 4,000, 2,500 on average.
    # The simulated speed-up (plain TPOT over speculative TPOT) differs from calculators.speculative's at
    # batch 1 only by the sampled tokens per step: ~870 steps, standard error 1.603 / sqrt(870) = 0.054 on
    # 3.36 (1.6%), and the tolerance is 5% (3 standard errors); context's effect on the step (KV reads
    # in the course's setting) is linear, so the mean context stands for the run.
    with using(setting):  # type: ignore[arg-type]
        setup = make_setup()
        requests = [Request(0, 0.0, 1000, 3000)]
        plain = simulate(requests, setup).summary["tpot_s"]["mean"]
        spec = simulate(requests, setup, speculation=Speculation(0.8, 4, seed=0)).summary["tpot_s"]["mean"]
        analytic = speculative_decoding(setup, acceptance=0.8, proposed=4, context_tokens=2500).speedup
    assert plain / spec == pytest.approx(analytic, rel=0.05)
    assert analytic > 2.2  # 3.36 / (1 + 0.371) = 2.45 at spec peaks, a little less with the cache's reads


def test_the_speed_up_shrinks_at_high_load() -> None:
    # 256 requests at once decode together: each verification pass is 256 x 5 = 1,280 tokens, past the
    # H100's ridge point (~295 FLOP/byte: ~295 tokens a step), so it costs compute the plain step never
    # spends; at batch 1 it costs nothing extra, and at 64 (320 tokens) a little.
    def speed_up(requests: list[Request]) -> float:
        plain = simulate(requests).summary["tpot_s"]["mean"]
        spec = simulate(requests, speculation=Speculation(0.8, 4)).summary["tpot_s"]["mean"]
        return float(plain / spec)

    def burst(n: int) -> list[Request]:
        return list(burst_workload(n, Lengths.fixed(512), Lengths.fixed(256), seed=0))

    alone, some, loaded = speed_up(burst(1)), speed_up(burst(64)), speed_up(burst(256))
    assert alone > 2.2  # 3.36 / (1 + 0.371) = 2.45 at most
    assert alone > some > loaded
    assert loaded < 1.0  # a slow-down
    # The analytic slow-down at batch 256 is deeper (0.71x: 3.3616 x 4.776 ms / (2 x 8e9 x 1,280 / 989.4
    # TFLOP/s = 20.70 ms, + 1.773 ms of heads)): the simulated TPOT also holds the prefill
    # steps the decodes wait behind (16 prompts a step), the same with or without speculation, and the
    # batch thins out at the end as requests finish.
    analytic = speculative_decoding(make_setup(), acceptance=0.8, proposed=4, batch=256, context_tokens=640)
    assert analytic.speedup == pytest.approx(0.7144, abs=0.001)
    assert analytic.speedup < loaded


def test_a_draft_model_costs_its_k_decode_steps_kernels() -> None:
    # llama-3.1-8b drafting for llama-3.1-70b on 4 H100s (BF16): every proposal accepted, output 6, so one
    # step writes tokens 2-6. The step: verification (5 tokens, memory-bound) plus 4 draft decode steps.
    setup = make_setup("llama-3.1-70b", "h100-sxm", gpus=4)
    spec = Speculation(SURE, 4, drafter="model", draft_model="llama-3.1-8b")
    result = simulate([Request(0, 0.0, 100, 6)], setup, speculation=spec)
    analytic = speculative_decoding(
        setup, acceptance=0.5, proposed=4, context_tokens=101, drafter="model", draft_model="llama-3.1-8b"
    )
    assert result.summary["decode_steps"] == 1
    assert result.summary["speculation"]["draft_time_s"] == pytest.approx(analytic.draft_time_s, rel=1e-9)
    assert result.summary["tpot_s"]["mean"] * 5 == pytest.approx(analytic.step_time_s, rel=1e-9)


def test_the_same_seed_gives_the_same_run_and_another_seed_another() -> None:
    requests = burst_workload(20, Lengths.fixed(200), Lengths.uniform(10, 300), seed=0)

    def run(seed: int) -> dict[str, object]:
        return simulate(requests, speculation=Speculation(0.7, 3, seed=seed)).as_dict(token_latencies=True)

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_speculation_runs_on_a_disaggregated_decode_pool() -> None:
    requests = burst_workload(12, Lengths.fixed(300), Lengths.fixed(100), seed=0)
    plain = simulate(requests, scheduler=Disaggregated(1, 1))
    spec = simulate(requests, scheduler=Disaggregated(1, 1), speculation=Speculation(0.8, 4))
    assert spec.summary["output_tokens"] == plain.summary["output_tokens"] == 1200
    assert spec.summary["speculation"]["tokens_per_step"] > 2.5
    assert spec.summary["tpot_s"]["mean"] < plain.summary["tpot_s"]["mean"] / 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"acceptance": 1.0}, "strictly between 0 and 1"),
        ({"acceptance": 0.0}, "strictly between 0 and 1"),
        ({"acceptance": math.nan}, "strictly between 0 and 1"),
        ({"acceptance": 0.5, "proposed": 0}, "proposed must be a whole number >= 1"),
        ({"acceptance": 0.5, "drafter": "model"}, "needs draft_model"),
        ({"acceptance": 0.5, "drafter": "model", "draft_model": "nope"}, "draft_model: unknown model 'nope'"),
        ({"acceptance": 0.5, "draft_model": "llama-3.1-8b"}, "only for drafter 'model'"),
        ({"acceptance": 0.5, "drafter": "magic"}, "drafter"),
        ({"acceptance": 0.5, "acceptance_concentration": 0.0}, "acceptance_concentration"),
    ],
)
def test_bad_speculation_is_refused_with_the_field_named(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Speculation(**kwargs)  # type: ignore[arg-type]


def test_speculation_refuses_contiguous_memory_and_static_batching() -> None:
    requests = [Request(0, 0.0, 10, 10)]
    with pytest.raises(ValueError, match="needs paged KV memory"):
        simulate(requests, memory=MemoryConfig("contiguous"), speculation=Speculation(0.5))
    with pytest.raises(ValueError, match="not static"):
        simulate(requests, scheduler=StaticBatching(), speculation=Speculation(0.5))


def test_a_request_that_fits_only_without_the_proposals_is_refused_at_once() -> None:
    # 90 + 10 tokens fit 100 tokens of cache, but the last step holds 99 + 4 = 103.
    requests = [Request(0, 0.0, 90, 10)]
    memory = MemoryConfig(block_tokens=1, capacity_tokens=100)
    simulate(requests, memory=memory)
    with pytest.raises(ValueError, match=r"needs 103 tokens of KV cache \(with 4 proposals\)"):
        simulate(requests, memory=memory, speculation=Speculation(0.5, 4))


def test_cli_speculative_runs_and_reports(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--requests", "4", "--burst", "--prompt", "100", "--output", "50", "--speculative"]
    assert main([*argv, "--acceptance", "0.8", "--proposed", "4", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["summary"]["speculation"]["proposed"] == 4
    assert record["config"]["speculation"]["drafter"] == "heads"
    assert main([*argv, "--acceptance", "0.8", "--drafter", "model", "--draft-model", "llama-3.1-8b"]) == 0
    assert "model llama-3.1-8b proposing 4" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--speculative", "--acceptance", "1.5"], "strictly between 0 and 1"),
        (["--speculative", "--acceptance", "0"], "strictly between 0 and 1"),
        (["--speculative", "--acceptance", "0.5", "--proposed", "0"], "proposed must be a whole number"),
        (
            ["--speculative", "--acceptance", "0.5", "--drafter", "model", "--draft-model", "x"],
            "unknown model",
        ),
        (["--speculative", "--acceptance", "0.5", "--drafter", "model"], "needs draft_model"),
        (["--speculative", "--acceptance", "0.5", "--draft-model", "llama-3.1-8b"], "--drafter model"),
        (["--speculative"], "needs --acceptance"),
        (["--acceptance", "0.5"], "add --speculative"),
        (["--speculative", "--acceptance", "0.5", "--memory", "contiguous"], "paged"),
    ],
)
def test_cli_speculative_bad_input_is_one_clear_line(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "--requests", "2", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


# --- the serving widget and run_named (a lesson's served(...)) ---------------------------------------------


def _ask(state: dict[str, object]) -> dict[str, object]:
    return json.loads(handle(json.dumps({"widget": "serving-simulator", "state": state})))  # type: ignore[no-any-return]


def test_the_widgets_speculative_run_is_the_simulators_and_its_python_prints_the_same() -> None:
    state = {"speculative": True, "acceptance": "0.8", "proposed": "3", "drafter": "ngram", "requests": 30}
    result = _ask(state)["result"]
    assert isinstance(result, dict)
    with using(site_setting()):
        direct = simulate(
            poisson_workload(10.0, 30, 512, 128, seed=0),
            make_setup("llama-3.1-8b", "h100-sxm", kv_traffic=True),
            ContinuousBatching(256, 8192),
            memory=MemoryConfig("paged", 16),
            slo=SLO(1.0, 0.05),
            speculation=Speculation(0.8, 3, "ngram"),
        ).summary
        plain = run_named(requests=30).summary
    assert result["values"]["tpot_p50_s"] == direct["tpot_s"]["p50"]
    assert result["values"]["tpot_p50_s"] < plain["tpot_s"]["p50"]
    assert "Speculative decoding wrote" in result["summary"]
    assert "Speculation(0.8, 3, 'ngram', seed=0)" in result["python"]
    ran = json.loads(handle(json.dumps({"run": result["python"]})))["result"]
    assert ran["ok"], ran["error"]
    assert f"{result['values']['output_tokens_per_s']:.0f} output tokens/s" in ran["output"]


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"speculative": True, "acceptance": "1.2"}, "Acceptance rate of a proposed token: expected"),
        ({"speculative": True, "proposed": "0"}, "Tokens proposed per step: expected"),
        ({"speculative": True, "drafter": "model"}, "Drafter: expected one of heads, ngram"),
        (
            {"speculative": True, "memory": "contiguous"},
            "Speculative decoding: speculative decoding needs paged",
        ),
        (
            {"speculative": True, "scheduler": "static"},
            "Speculative decoding: speculative decoding needs paged",
        ),
    ],
)
def test_the_widgets_bad_speculation_is_named_by_its_control(state: dict[str, object], message: str) -> None:
    answer = _ask({**state, "requests": 5})
    assert answer["ok"] is False
    assert message in str(answer["error"])


def test_run_named_takes_speculation() -> None:
    spec = run_named(requests=10, speculative=True, acceptance=0.6, proposed=2, drafter="heads")
    assert spec.summary["speculation"]["proposed"] == 2
    assert spec.summary["speculation"]["acceptance"] == 0.6
    assert "speculation" not in run_named(requests=10).summary


@pytest.mark.parametrize("batch", [1, 64, 256])
def test_the_simulators_verifier_is_calculators_speculative_one(batch: int) -> None:
    # In the course's setting at batch 256 the chunk form is taken with its attention raised to the plain
    # step's (calculators.speculative.attention_at_least): the pass costs 42.1 ms, not the 34.1 ms of the
    # chunk form alone. At batch 1 the decode form is the faster.
    with using(COURSE_SETTING):
        setup = make_setup()
        analytic = speculative_decoding(setup, acceptance=0.8, proposed=4, batch=batch, context_tokens=1000)
        cost = StepCost(setup)
        simulated = cost.verify_time([1000] * batch, 4)[0]
        again = cost.verify_time([999, 1001] * (batch // 2) or [1000], 4)[0]  # same total: interpolated
    assert simulated == pytest.approx(analytic.verify.time_s, rel=1e-9)
    assert again == pytest.approx(simulated, rel=1e-9)
    if batch == 256:
        assert simulated == pytest.approx(42.1e-3, rel=2e-3)


def test_a_swapped_sequence_waits_for_room_for_its_proposals_in_a_crowded_decode_pool() -> None:
    # A case the property test found: a decode pool of 8 blocks of 32 tokens, 4 of them held by a cache
    # still on its way, and a swapped sequence of 128 tokens (exactly 4 blocks). With k = 2 proposals its
    # next step needs 128 + 2 tokens, a 5th block: it joined for its 4, the step preempted it at once, and
    # planning recursed until Python's limit. It now waits until the landed cache has run and freed blocks.
    arrivals = ((0.1425, 79), (0.1578, 69), (0.3234, 42), (0.3962, 116))
    requests = [Request(i, arrival, tokens, tokens) for i, (arrival, tokens) in enumerate(arrivals)]
    scheduler = Disaggregated(1, 1, "pcie4", max_batch_tokens=64, kv_transfer="whole", link_sharing="sender")
    memory = MemoryConfig("paged", 32, capacity_tokens=256, watermark=0.0, preemption="swap")
    speculation = Speculation(0.2654, 2, "model", "llama-3.1-8b")
    result = simulate(
        requests, make_setup(), scheduler, memory=memory, timeline_steps=0, speculation=speculation
    )
    assert result.summary["output_tokens"] == 79 + 69 + 42 + 116
    for request in requests:
        assert len(result.token_times(request.id)) == request.output_tokens
