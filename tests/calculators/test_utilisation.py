"""MFU and MBU of a pass (calculators.utilisation), against values worked by hand."""

from __future__ import annotations

import pytest

from calculators import Scenario, evaluate


def test_a_bound_decode_step_reaches_the_full_bandwidth_and_one_ridge_th_of_the_flops() -> None:
    # dense-8b in BF16 on an H100 SXM, simple level, batch 1: 16e9 bytes and 2 x 8e9 = 16e9 FLOPs; the bound
    # is 16e9 / 3.35e12 s, so MBU = 1 and MFU = 16e9 / (16e9 / 3.35e12) / 989.4e12 = 3.35 / 989.4 = 0.003386.
    shares = Scenario().decode_utilisation()
    assert shares.mbu == pytest.approx(1.0)
    assert shares.mfu == pytest.approx(3.35 / 989.4, rel=1e-3)


def test_a_bound_prefill_reaches_the_full_flops() -> None:
    # 2,000 tokens: 2 x 8e9 x 2000 = 3.2e13 FLOPs, compute-bound, t = 3.2e13 / 989.4e12 = 32.34 ms;
    # MBU = 16e9 / 0.03234 / 3.35e12 = 989.4 / (2000 x 3.35) = 0.1477.
    shares = Scenario().prefill_utilisation(2000)
    assert shares.mfu == pytest.approx(1.0)
    assert shares.mbu == pytest.approx(989.4 / (2000 * 3.35), rel=1e-3)


def test_shares_are_over_all_the_gpus() -> None:
    # Two GPUs share the bytes, so the bound halves and the shares stay 1 and 1/ridge.
    shares = Scenario(gpus=2).decode_utilisation()
    assert shares.mbu == pytest.approx(1.0)
    assert shares.mfu == pytest.approx(3.35 / 989.4, rel=1e-3)


@pytest.mark.parametrize("calibration", ["current", "as-published"])
def test_calibrated_shares_are_the_bounds_scaled_by_bound_over_time(calibration: str) -> None:
    bound = Scenario("llama-3.1-8b", level="refined").decode_utilisation(8, 1000)
    slower = Scenario("llama-3.1-8b", level="refined", mode="calibrated", calibration=calibration)
    shares = slower.decode_utilisation(8, 1000)
    assert shares.time_s > shares.bound_time_s == pytest.approx(bound.time_s)
    assert shares.mbu == pytest.approx(bound.mbu * bound.time_s / shares.time_s)
    assert shares.mfu == pytest.approx(bound.mfu * bound.time_s / shares.time_s)
    assert 0 < shares.mbu < 1


def test_lessons_can_quote_them() -> None:
    assert evaluate("Scenario().decode_utilisation(1, 1).mbu") == pytest.approx(1.0)
