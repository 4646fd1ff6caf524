"""Pipeline parallelism with micro-batches in the serving simulator, worked by hand.

The setup is the lesson's (the 8B model in BF16 on H100 SXMs at spec peaks, simple level; see
test_simulator.py) with 2 pipeline stages. At the simple level a pass through the stages takes what
it takes on one GPU (the stages run one after another and the sends between them are not counted): a
prefill of P > 295 tokens P x 16.1714 us, a step of up to 295 tokens 4.7761 ms (memory-bound). One stage
does half of that.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from calculators import ContinuousBatching, Request, Scenario, make_setup, simulate
from calculators.cli import main
from calculators.simulator.experiments import pipeline_step
from calculators.simulator.named import served
from calculators.simulator.pipeline import bubble_fraction, pipelined_step, split_step

PER_PROMPT_TOKEN = 1.6e10 / 989.4e12  # seconds per prompt token, compute-bound
STEP = 16e9 / 3.35e12  # a memory-bound pass: 4.7761 ms
TWO_STAGES = make_setup(pipeline_stages=2)


def burst(n: int, prompt: int, output: int) -> list[Request]:
    return [Request(i, 0.0, prompt, output) for i in range(n)]


def test_micro_batches_overlap_the_stages_of_a_compute_bound_step() -> None:
    # Four 1,000-token prompts prefill in one step. As one batch: a pass of 4,000 tokens, 64.686 ms, each
    # stage busy half of it. In 4 micro-batches of one prompt (t = 16.171 ms a pass, t / 2 a stage): the
    # step is (4 + 2 - 1) t / 2 = 2.5 t = 40.429 ms, and each stage idles (2 - 1) / (4 + 2 - 1) = 20%.
    t = 1000 * PER_PROMPT_TOKEN
    one = simulate(burst(4, 1000, 2), TWO_STAGES)
    four = simulate(burst(4, 1000, 2), TWO_STAGES, micro_batches=4)
    assert [r["ttft_s"] for r in one.requests] == [pytest.approx(4 * t)] * 4
    assert [r["ttft_s"] for r in four.requests] == [pytest.approx(2.5 * t)] * 4
    assert four.config["pipeline"] == {"stages": 2, "micro_batches": 4, "bubble_fraction": 0.2}
    assert one.config["pipeline"]["bubble_fraction"] == 0.5


def test_micro_batches_lengthen_a_memory_bound_step() -> None:
    # Four requests of 10 tokens decode together. As one batch a decode step is one memory-bound pass,
    # 4.7761 ms; in 4 micro-batches of one row each micro-batch reads the weights again: 2.5 x 4.7761 ms =
    # 11.940 ms a step. (The prefill step, 4 x 10 tokens, is memory-bound too: 1 pass, or 2.5 in 4.)
    one = simulate(burst(4, 10, 3), TWO_STAGES)
    four = simulate(burst(4, 10, 3), TWO_STAGES, micro_batches=4)
    assert one.token_times(0) == pytest.approx([STEP, 2 * STEP, 3 * STEP])
    assert four.token_times(0) == pytest.approx([2.5 * STEP, 5 * STEP, 7.5 * STEP])


def test_a_prompt_is_not_split_across_micro_batches() -> None:
    # One 1,000-token prompt: a single micro-batch, so the step is the pass, 16.171 ms, whatever m is.
    for m in (1, 4):
        result = simulate(burst(1, 1000, 2), TWO_STAGES, micro_batches=m)
        assert result.requests[0]["ttft_s"] == pytest.approx(1000 * PER_PROMPT_TOKEN)


def test_one_micro_batch_is_the_plain_pass_as_before() -> None:
    # Without micro-batches the step is the cost model's pass, exactly as a one-stage engine's here.
    rows = [Request(i, 0.01 * i, 300 + 37 * i, 5 + i) for i in range(12)]
    staged = simulate(rows, TWO_STAGES, ContinuousBatching())
    flat = simulate(rows, make_setup(), ContinuousBatching())
    assert [r["e2e_s"] for r in staged.requests] == [r["e2e_s"] for r in flat.requests]


def test_split_step_spreads_rows_keys_and_chunks() -> None:
    # 5 decode rows attending 23 keys: q, r = 4, 3, contexts 5, 5, 5, 4, 4. In 2 micro-batches: rows 3 and
    # 2, keys 15 and 8. Chunks go whole to the micro-batch with the fewest tokens: 100 to the second (2 < 3),
    # then 50 and 30 to the first (3 < 102, 53 < 102).
    parts = split_step(5, 23, [(100, 0), (50, 7), (30, 0)], 2)
    assert parts == [(3, 15, ((50, 7), (30, 0))), (2, 8, ((100, 0),))]
    # Fewer rows than micro-batches: the empty ones are not run.
    assert split_step(2, 10, [], 4) == [(1, 5, ()), (1, 5, ())]


def _grid(passes: list[float], stages: int) -> float:
    """The synchronous schedule, stage by stage: stage s starts micro-batch k once it has finished k - 1
    and stage s - 1 has finished k; micro-batch k takes passes[k] / stages on each stage."""
    done = [0.0] * len(passes)
    for _ in range(stages):
        free = 0.0
        for k, t in enumerate(passes):
            free = done[k] = max(free, done[k]) + t / stages
    return done[-1]


def test_pipelined_step_is_the_longest_path_through_the_schedule() -> None:
    # Passes 3, 1, 1 through 2 stages: (3 + 1 + 1 + (2 - 1) x 3) / 2 = 4.
    assert pipelined_step([(3.0, 2.0, 1.0), (1.0, 0.5, 0.5), (1.0, 0.5, 0.5)], 2) == (4.0, 1.5, 1.0)
    rng = random.Random(5)
    for _ in range(500):
        stages = rng.randint(1, 16)
        passes = [rng.uniform(1e-4, 1.0) for _ in range(rng.randint(1, 20))]
        seconds = pipelined_step([(p, 0.0, 0.0) for p in passes], stages)[0]
        assert seconds == pytest.approx(_grid(passes, stages), rel=1e-12)


def test_bubble_fraction() -> None:
    assert bubble_fraction(4, 1) == 0.75  # 3 / 4: one micro-batch, one stage busy at a time
    assert bubble_fraction(4, 12) == 0.2  # 3 / 15
    assert bubble_fraction(1, 8) == 0.0


def test_bad_micro_batches_are_explained() -> None:
    with pytest.raises(ValueError, match="micro_batches must be a whole number"):
        simulate(burst(1, 10, 2), TWO_STAGES, micro_batches=0)
    with pytest.raises(ValueError, match=r"micro_batches=4 needs pipeline stages .*--pipeline-parallel"):
        simulate(burst(1, 10, 2), make_setup(), micro_batches=4)


def test_cli_pipeline_parallel_with_micro_batches(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--requests", "4", "--burst", "--prompt", "1000", "--output", "2"]
    assert main([*argv, "--pipeline-parallel", "2", "--micro-batches", "4", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["config"]["pipeline"] == {"stages": 2, "micro_batches": 4, "bubble_fraction": 0.2}
    assert record["summary"]["ttft_s"]["mean"] == pytest.approx(2.5 * 1000 * PER_PROMPT_TOKEN)
    assert main([*argv, "--pipeline-parallel", "2", "--micro-batches", "4"]) == 0
    assert "2 stages, each step in 4 micro-batches; each stage idles 20%" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--micro-batches", "4"], "needs pipeline stages"),
        (["--pipeline-parallel", "2", "--micro-batches", "0"], "micro_batches must be a whole number"),
        (["--pipeline-parallel", "2", "--micro-batches", "x"], "invalid int value"),
        (
            ["--pipeline-parallel", "2", "--micro-batches", "2", "--speculative", "--acceptance", "0.5"],
            "micro_batches with speculative decoding",
        ),
    ],
)
def test_cli_bad_micro_batches_is_one_clear_line(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "--requests", "2", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


# --- pipeline_step: the step a lesson quotes, as the simulator times it ----------------------------------
# Llama-3.1 405B on two stages of eight H100s each (the refined level, spec peaks: the calculators' own
# defaults outside any model setting). Each pass is the Scenario's own pass through both stages.

TWO_NODES = {"level": "refined", "gpus": 8, "pipeline_stages": 2}


def test_pipeline_step_without_micro_batches_is_the_scenarios_pass() -> None:
    scenario = Scenario("llama-3.1-405b", **TWO_NODES)
    prefill = pipeline_step(2, 1, prompts=8, prompt=2000)
    decode = pipeline_step(2, 1, decoding=64, context=1000)
    assert prefill.step_s == pytest.approx(scenario.prefill(2000, batch=8).time_s)
    assert decode.step_s == pytest.approx(scenario.decode(64, 1000).time_s)
    assert prefill.tokens == 16_000
    assert decode.tokens == 64
    assert prefill.speedup == 1.0
    assert prefill.bubble_fraction == 0.5  # (2 - 1) / (1 + 2 - 1)


def test_pipeline_step_with_micro_batches_follows_the_synchronous_schedule() -> None:
    # 8 prompts in 4 micro-batches of 2: each pass takes t2 (two prompts through both stages), t2 / 2 on a
    # stage, and the step is (4 t2 + (2 - 1) t2) / 2 = 2.5 t2; each stage idles (2 - 1) / (4 + 2 - 1) = 20%.
    t2 = Scenario("llama-3.1-405b", **TWO_NODES).prefill(2000, batch=2).time_s
    step = pipeline_step(2, 4, prompts=8, prompt=2000)
    assert step.step_s == pytest.approx(2.5 * t2)
    assert step.bubble_fraction == pytest.approx(0.2)
    assert step.tokens_per_s == pytest.approx(16_000 / (2.5 * t2))
    # A decode step of 64 in 4 micro-batches of 16: each reads the stage's weights again, so the step is
    # 2.5 passes of 16 sequences, longer than one pass of all 64 (memory-bound: about the same pass).
    t16 = Scenario("llama-3.1-405b", **TWO_NODES).decode(16, 1000).time_s
    decode = pipeline_step(2, 4, decoding=64, context=1000)
    assert decode.step_s == pytest.approx(2.5 * t16)
    assert decode.speedup < 1


def test_pipeline_step_says_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"give prompts .* or decoding"):
        pipeline_step(2, 1)
    with pytest.raises(ValueError, match=r"give prompts .* or decoding"):
        pipeline_step(2, 1, prompts=1, decoding=1)
    with pytest.raises(ValueError, match="needs pipeline stages"):
        pipeline_step(1, 2, prompts=8)
    with pytest.raises(ValueError, match="does not fit"):
        pipeline_step(2, 1, prompts=1, gpus=1)  # 405B in BF16 over two H100s: 406 GB of weights each


# --- served(): a lesson's named run on pipeline stages ---------------------------------------------------


def test_served_runs_on_pipeline_stages_split_into_micro_batches() -> None:
    # Four 1,000-token prompts arrive at once on two stages: one prefill step, compute-bound. As one pass it
    # takes T; in four micro-batches of one prompt each (T / 4 on the whole pass, so T / 8 a stage), the
    # synchronous schedule lasts (4 x T / 4 + (2 - 1) x T / 4) / 2 = 0.625 T.
    burst_of_four = {"burst": True, "requests": 4, "prompt": 1000, "output": 2, "pipeline_stages": 2}
    whole = served(**burst_of_four)
    split = served(**burst_of_four, micro_batches=4)
    assert split.ttft_s.max / whole.ttft_s.max == pytest.approx(0.625, rel=1e-9)
    assert split.result.config["pipeline"] == {"stages": 2, "micro_batches": 4, "bubble_fraction": 0.2}
    # The same run as the simulator's, built by hand.
    direct = simulate(
        burst(4, 1000, 2),
        make_setup("llama-3.1-8b", "h100-sxm", kv_traffic=True, pipeline_stages=2),
        ContinuousBatching(256, 8192),
        micro_batches=4,
    ).summary
    assert split.ttft_s.p50 == direct["ttft_s"]["p50"]
    assert split.tpot_s.p50 == direct["tpot_s"]["p50"]


def test_served_on_two_stages_has_more_than_twice_the_kv_cache() -> None:
    # One H100 leaves 441,140 tokens x 131,072 bytes = 57.82 GB for the cache beside the 16.06 GB of weights.
    # Each of two stages holds half the weights on its own GPU, so the two leave 2 x 57.82 + 16.06 GB:
    # 2 + 16.06 / 57.82 = 2.278 times as many tokens.
    one = served(requests=10, rate=5)
    two = served(requests=10, rate=5, pipeline_stages=2)
    assert two.kv_capacity_tokens / one.kv_capacity_tokens == pytest.approx(2.278, abs=0.002)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"pipeline_stages": 40},
            "pipeline_stages=40: llama-3.1-8b has 32 layers and each stage holds at least one",
        ),
        ({"pipeline_stages": 0}, "pipeline_stages must be a whole number >= 1"),
        ({"pipeline_stages": 2.5}, "pipeline_stages must be a whole number >= 1"),
        ({"micro_batches": 2}, "micro_batches=2 needs pipeline stages to flow through"),
        (
            {"pipeline_stages": 2, "micro_batches": 2, "speculative": True},
            "micro_batches with speculative decoding is not simulated",
        ),
        (
            {"pipeline_stages": 2, "scheduler": "disaggregated"},
            "prefill_gpus=1 is not a multiple of the setup's 2 GPUs per replica",
        ),
    ],
    ids=["too-many-stages", "no-stage", "fraction", "micro-batches-alone", "speculative", "disaggregated"],
)
def test_served_says_what_is_wrong_with_its_pipeline(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        served(requests=4, **settings)
