"""The busiest GPU of expert parallelism under uniform random top-k routing (calculators/expert_load.py)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from calculators.expert_load import (
    busiest_gpu_experts,
    busiest_gpu_factors,
    busiest_gpu_pairs,
    experts_per_gpu,
    mean_gpu_experts,
    touched_distribution,
)
from calculators.hardware import get_gpu
from calculators.models import get_model
from calculators.passes import Setup, decode_step


def test_one_token_one_expert_lands_on_one_gpu() -> None:
    # E = 4 on G = 2 GPUs (2 each), k = 1, one token: it picks one expert, so one GPU holds 1 touched
    # expert and the other 0. Busiest = 1 always; mean = 4 (1 - 3/4) / 2 = 0.5; factor 2.
    assert busiest_gpu_experts(4, 2, 1, 1) == pytest.approx(1.0)
    assert mean_gpu_experts(4, 2, 1, 1) == pytest.approx(0.5)
    assert busiest_gpu_factors(4, 2, 1, 1) == pytest.approx((2.0, 2.0))


def test_one_token_two_experts_enumerated() -> None:
    # E = 4 (GPU A: {0, 1}, GPU B: {2, 3}), k = 2: C(4, 2) = 6 equally likely pairs. {0,1} and {2,3} put
    # both on one GPU (max 2); the other 4 split them (max 1). E[max] = (2 x 2 + 4 x 1) / 6 = 8/6.
    assert busiest_gpu_experts(4, 2, 2, 1) == pytest.approx(8 / 6)
    assert busiest_gpu_pairs(4, 2, 2, 1) == pytest.approx(8 / 6)


def test_two_tokens_one_expert_each_enumerated() -> None:
    # E = 2 on G = 2 (one expert each), k = 1, two tokens: 4 equally likely routings. Same expert twice
    # (2 of 4): distinct experts per GPU 1 and 0, pairs 2 and 0. Different experts (2 of 4): 1 and 1.
    # Exact: busiest distinct = 1 always; busiest pairs = (2 x 2 + 2 x 1) / 4 = 1.5.
    # One GPU alone: touched with P = 1 - (1/2)^2 = 3/4; pairs 0, 1, 2 with P 1/4, 1/2, 1/4.
    # Distinct experts are counted exactly (1). Pairs take the GPUs as independent past one token, which
    # understates the maximum: (1 - P(max <= 0)) + (1 - P(max <= 1)) = (1 - 1/16) + (1 - 9/16) = 22/16.
    assert touched_distribution(1, 2, 1, 2) == pytest.approx((0.25, 0.75))
    assert busiest_gpu_experts(2, 2, 1, 2) == pytest.approx(1.0)
    assert busiest_gpu_pairs(2, 2, 1, 2) == pytest.approx(22 / 16)


def test_two_tokens_on_two_gpus_of_two_experts_enumerated() -> None:
    # E = 4 (GPU A: {0, 1}, GPU B: {2, 3}), k = 1, two tokens: 16 equally likely ordered routings.
    # Same expert twice (4): busiest holds 1. Two experts of the same GPU (2 on A + 2 on B = 4): 2.
    # One on each GPU (8): 1. Exact E[max] = (4 x 1 + 4 x 2 + 8 x 1) / 16 = 20/16 = 1.25.
    # (Taking the GPUs as independent would give 75/64 = 1.17: one GPU holds 0, 1, 2 touched experts with
    # P 1/4, 5/8, 1/8, so 1 - (1/4)^2 + 1 - (7/8)^2 = 15/16 + 15/64.)
    assert busiest_gpu_experts(4, 2, 1, 2) == pytest.approx(20 / 16)


@pytest.mark.parametrize(
    ("experts", "gpus", "k", "tokens"), [(4, 2, 2, 2), (6, 3, 2, 3), (5, 2, 2, 3), (6, 2, 3, 2)]
)
def test_busiest_experts_against_brute_force(experts: int, gpus: int, k: int, tokens: int) -> None:
    # Every ordered routing of the batch (each token one k-subset), equally likely: the mean of the
    # busiest GPU's distinct experts, with experts dealt out as experts_per_gpu does (first GPUs one more).
    sizes = experts_per_gpu(experts, gpus)
    owner = [g for g, held in enumerate(sizes) for _ in range(held)]
    subsets = list(itertools.combinations(range(experts), k))
    total = 0
    for routing in itertools.product(subsets, repeat=tokens):
        touched = set().union(*routing)
        total += max(sum(1 for e in touched if owner[e] == g) for g in range(gpus))
    assert busiest_gpu_experts(experts, gpus, k, tokens) == pytest.approx(
        total / len(subsets) ** tokens, rel=1e-12
    )


def test_deepseek_v3_batch_1_on_8_gpus_is_2_6x() -> None:
    # DeepSeek-V3: 256 routed experts, top-8 (plus 1 shared expert on every GPU, not routed); 8 GPUs hold 32
    # each. One token touches 8 experts, 1 per GPU on average; the busiest GPU holds 2.56 of them.
    assert mean_gpu_experts(256, 8, 8, 1) == pytest.approx(1.0)
    touched, pairs = busiest_gpu_factors(256, 8, 8, 1)
    assert touched == pytest.approx(2.5637, abs=1e-4)
    assert pairs == touched  # one token: each touched expert is one pair
    assert round(touched, 1) == 2.6


def test_touched_distribution_is_a_distribution_with_the_exact_mean() -> None:
    for held, experts, k, tokens in ((32, 256, 8, 5), (3, 7, 2, 4), (5, 10, 5, 1)):
        pmf = touched_distribution(held, experts, k, tokens)
        assert sum(pmf) == pytest.approx(1.0)
        mean = sum(c * p for c, p in enumerate(pmf))
        assert mean == pytest.approx(held * (1.0 - (1.0 - k / experts) ** tokens))


def test_uneven_split_gives_the_extra_experts_to_the_first_gpus() -> None:
    assert experts_per_gpu(10, 4) == (3, 3, 2, 2)


@pytest.mark.parametrize(("experts", "gpus", "k"), [(256, 8, 8), (8, 8, 2), (64, 4, 6), (60, 8, 4)])
def test_busiest_at_least_the_mean_and_tends_to_it(experts: int, gpus: int, k: int) -> None:
    previous = (float("inf"), float("inf"))
    for tokens in (1, 2, 4, 16, 64, 256, 1024, 4096):
        touched, pairs = busiest_gpu_factors(experts, gpus, k, tokens)
        assert touched >= 1.0
        assert pairs >= 1.0
        assert touched <= previous[0] + 1e-9
        assert pairs <= previous[1] + 1e-9
        previous = (touched, pairs)
    # Every expert touched: the busiest GPU is the one holding the most (60 on 8: 8 against a mean of 7.5).
    most = max(experts_per_gpu(experts, gpus)) * gpus / experts
    assert previous[0] == pytest.approx(most, abs=1e-6)
    assert previous[1] < most * 1.06  # pairs' spread shrinks as 1 / sqrt(T)


@pytest.mark.parametrize("tokens", [2, 4, 16])
def test_against_a_seeded_simulation(tokens: int) -> None:
    # DeepSeek-V3's shape, 3,000 seeded trials: the busiest GPU's count has a standard deviation under 1.5,
    # so the simulated mean is within about 0.03 (1 standard error) of the truth; 2 % is over 4 of them.
    experts, gpus, k, trials = 256, 8, 8, 3000
    rng = random.Random(7)
    held = experts // gpus
    most_touched = most_pairs = 0
    for _ in range(trials):
        touched: list[set[int]] = [set() for _ in range(gpus)]
        pairs = [0] * gpus
        for _ in range(tokens):
            for e in rng.sample(range(experts), k):
                touched[e // held].add(e)
                pairs[e // held] += 1
        most_touched += max(len(t) for t in touched)
        most_pairs += max(pairs)
    simulated_touched, simulated_pairs = most_touched / trials, most_pairs / trials
    # Distinct experts: exact.
    assert busiest_gpu_experts(experts, gpus, k, tokens) == pytest.approx(simulated_touched, rel=0.02)
    # Pairs: GPUs' counts are negatively correlated, so taking them as independent understates (<= 6 %).
    pairs = busiest_gpu_pairs(experts, gpus, k, tokens)
    assert pairs <= simulated_pairs * 1.01
    assert pairs >= simulated_pairs * 0.94


def test_deepseek_v3_busiest_gpu_exact_values() -> None:
    # Exact values at 8 GPUs (32 experts each), checked against the simulation above and an independent
    # derivation in the lesson's notebook. 2 tokens touch 256 (1 - (31/32)^2) = 256 x 0.0615 = 15.75
    # experts in all (1.97 per GPU on average, the busiest 4.07); 64 tokens 256 (1 - (31/32)^64)
    # = 256 (1 - e^(64 ln 0.96875)) = 256 (1 - e^-2.032) = 256 x 0.8689 = 222.4 (27.81 per GPU, the busiest
    # 30.30 of 32).
    assert busiest_gpu_experts(256, 8, 8, 2) == pytest.approx(4.0666, abs=1e-4)
    assert mean_gpu_experts(256, 8, 8, 64) == pytest.approx(27.81, abs=0.01)
    assert busiest_gpu_experts(256, 8, 8, 64) == pytest.approx(30.299, abs=1e-3)
    # Enough tokens touch every expert: the busiest GPU holds all 32.
    assert busiest_gpu_experts(256, 8, 8, 100_000) == pytest.approx(32.0)


def test_more_experts_per_token_than_experts_is_rejected() -> None:
    with pytest.raises(ValueError, match="experts_per_token"):
        busiest_gpu_experts(8, 2, 9, 2)


def _routed(expert_parallel: bool, batch: int, mode: str = "peak") -> Any:
    setup = Setup(
        get_model("deepseek-v3"), get_gpu("h200"), weight_format="fp8", level="refined", gpus=8,
        expert_parallel=expert_parallel, mode=mode, ignore_memory=True,
    )  # fmt: skip
    step = decode_step(setup, batch=batch, context_tokens=2048)
    (routed,) = [op for op in step.operators if op.name.startswith("routed experts")]
    return routed


@pytest.mark.parametrize("mode", ["peak", "calibrated"])
def test_expert_parallel_decode_waits_for_the_busiest_gpu(mode: str) -> None:
    # Batch 1 is memory-bound: the busiest GPU reads 2.56x the mean experts' weights (and their token's
    # activations). The router's weights (256 x 7,168 x 58 layers x 2 bytes = 212.9 MB) and the token's
    # input (7,168 x 58 x 2 = 0.83 MB) are no expert's: read as the balanced split reads them. So the time is
    # 2.5637 - 1.5637 x their share of the operator's bytes times the balanced one (about 2.547 times).
    balanced = _routed(False, 1, mode)
    shared = (256 * 7168 * 58 * 2 + 7168 * 58 * 2) / balanced.bytes_moved
    expected = (2.5637 - 1.5637 * shared) * balanced.time_s
    assert _routed(True, 1, mode).time_s == pytest.approx(expected, rel=1e-3)
    # At batch 512 every GPU touches all its 32 experts: weights are balanced again.
    assert _routed(True, 512, mode).time_s == pytest.approx(_routed(False, 512, mode).time_s, rel=0.01)
