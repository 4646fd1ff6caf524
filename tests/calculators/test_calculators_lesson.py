"""The source lesson's four claims, recomputed by the calculators.

Setting: the nominal 8B dense model in BF16 on an H100 SXM at spec-sheet peaks, simple level (KV traffic
ignored). The lesson rounds its figures ("about 5 ms", "about 300 tokens", "about seven steps", "around 295");
the values below are the unrounded ones, and each must agree within 0.5%.
"""

from __future__ import annotations

import pytest

from calculators import Scenario, ridge_point

REL = 0.005  # the tolerance: each claim within 0.5%


@pytest.fixture(scope="module")
def lesson() -> Scenario:
    return Scenario("dense-8b", "h100-sxm", precision="bf16", level="simple")


def test_decode_pass_takes_about_5_ms(lesson: Scenario) -> None:
    # One decode step reads all 2N = 2 x 8e9 = 16e9 bytes of weights at 3.35e12 B/s:
    # 16e9 / 3.35e12 = 4.776e-3 s.
    step = lesson.decode()
    assert step.time_s == pytest.approx(4.78e-3, rel=REL)
    assert step.bound == "memory"


def test_about_300_prompt_tokens_fit_in_one_decode_step(lesson: Scenario) -> None:
    # Prefill costs 2N = 16e9 FLOPs per token at 989.4e12 FLOP/s, i.e. 16.17 us per token;
    # 4.776 ms / 16.17 us = 989.4 / 3.35 = 295.3 tokens.
    assert lesson.prompt_tokens_per_decode_step() == pytest.approx(295, rel=REL)


def test_2000_token_prefill_costs_about_seven_decode_steps(lesson: Scenario) -> None:
    # Prefill: 2 x 8e9 x 2000 = 3.2e13 FLOPs / 989.4e12 = 32.34 ms (compute-bound);
    # 32.34 ms / 4.776 ms = 2000 / 295.3 = 6.77 decode steps.
    timing = lesson.request(2000, 2)
    assert timing.prefill.bound == "compute"
    assert timing.prefill.time_s == pytest.approx(32.34e-3, rel=REL)
    assert timing.prefill_cost_in_decode_steps == pytest.approx(6.8, rel=REL)


def test_h100_ridge_point_is_about_295_flop_per_byte(lesson: Scenario) -> None:
    # 989.4e12 FLOP/s / 3.35e12 B/s = 295.3 FLOP/byte (the sparse 1,979 TFLOP/s would wrongly give 591).
    assert lesson.ridge_point_flop_per_byte == pytest.approx(295, rel=REL)
    assert ridge_point("h100-sxm") == pytest.approx(295, rel=REL)
    assert lesson.decode().ridge_point_flop_per_byte == lesson.ridge_point_flop_per_byte


def test_lesson_intensities_are_p_and_one(lesson: Scenario) -> None:
    # The lesson: prefill of P tokens does about P FLOP per byte, decode at batch 1 about 1.
    assert lesson.prefill(2000).intensity_flop_per_byte == pytest.approx(2000)
    assert lesson.decode().intensity_flop_per_byte == pytest.approx(1)
    # "prompts longer than a few hundred tokens are firmly compute-bound"
    assert lesson.prefill(294).bound == "memory"
    assert lesson.prefill(296).bound == "compute"
