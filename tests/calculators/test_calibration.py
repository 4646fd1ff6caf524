"""The calibrated mode: its coefficients come from the summary points, and it never beats the bound."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from calculators import calibration, calibration_fit, decode_step, make_setup, mixed_step, prefill
from calculators import calibration_points as points
from calculators.passes import PassResult


def test_the_stored_coefficients_are_refitted_from_the_summary_points() -> None:
    assert calibration_fit.refit() == dict(calibration.FITTED)


def test_the_fit_describes_its_own_points() -> None:
    """Median error of the linear-layer fit on the points it was fitted to, per GPU: a few percent."""
    for gpu, (peak, bandwidth) in calibration.PEAKS.items():
        errors = sorted(
            abs(
                calibration.matmul_time_s(
                    calibration.FITTED[f"matmul/{gpu}"], 2.0 * t * k * n, 2.0 * (k * n + t * k + t * n), t,
                    peak, bandwidth,
                ) / (ms * 1e-3) - 1.0
            )
            for k, n, t, ms in points.MATMUL[gpu]
        )  # fmt: skip
        assert errors[len(errors) // 2] < 0.08


@pytest.mark.parametrize("gpu", ["a100-sxm-80gb", "h100-sxm", "b200", "l4"])
@pytest.mark.parametrize("level", ["simple", "refined"])
def test_calibrated_is_never_faster_than_the_spec_peak_bound(gpu: str, level: str) -> None:
    for gpus in (1, 4):
        setup = make_setup(
            "llama-3.1-8b",
            gpu,
            level=level,
            gpus=gpus,
            mode="calibrated",
            kv_traffic=True,
            ignore_memory=True,
        )
        for result in (
            decode_step(setup, batch=1, context_tokens=128),
            decode_step(setup, batch=64, context_tokens=2000),
            prefill(setup, 2048),
            mixed_step(setup, decode_contexts=[1000] * 16, prefill_chunks=[(512, 0)]),
        ):
            assert result.mode == "calibrated"
            assert result.time_s >= result.bound_time_s
            assert result.bound_time_s > 0


def test_peak_mode_is_the_default_and_its_bound_is_its_time() -> None:
    step = decode_step(make_setup("llama-3.1-8b", "h100-sxm", level="refined"), batch=8, context_tokens=1000)
    assert step.mode == "peak"
    assert step.time_s == step.bound_time_s


def test_small_decode_all_reduces_are_latency_bound_when_calibrated() -> None:
    setup = make_setup("llama-3.1-70b", "h100-sxm", level="refined", gpus=4, mode="calibrated")
    step = decode_step(setup, batch=1, context_tokens=1000)
    reduces = next(op for op in step.operators if op.name.startswith("tensor-parallel all-reduces"))
    count = int(reduces.name.split("(")[1].split(" x ")[0])
    # Vidur's ring fit on NVLink 4: alpha + 2 (4 - 1) steps x hop = 19.53 + 6 x 0.6614 = 23.50 us; the
    # 16 KB message adds 2 x 3/4 x 16,384 B / 450 GB/s = 0.05 us.
    alpha_us, hop_us, _ = calibration.FITTED["all-reduce/nvlink4"]
    assert alpha_us + 6 * hop_us == pytest.approx(23.50, abs=0.01)
    assert reduces.time_s / count == pytest.approx(23.50e-6, rel=0.01)


def test_extrapolated_gpus_and_formats_say_so() -> None:
    setup = make_setup("llama-3.1-8b", "b200", level="refined", precision="fp8", mode="calibrated")
    warnings = decode_step(setup, batch=4, context_tokens=500).warnings
    assert any("extrapolated from Vidur's H100" in w for w in warnings)
    assert any("fp8 matrix products are extrapolated" in w for w in warnings)


def test_what_the_collectives_take_is_said_per_link_and_calibration() -> None:
    # The current calibration takes NCCL's measured share of a network card over InfiniBand (nothing to
    # flag), NCCL's NVLink 4 share on other unmeasured links (flagged); as published, Vidur's NVLink 4 fit.
    def notes(gpus: int, calibration_name: str, **options: object) -> tuple[str, ...]:
        setup = make_setup(
            "llama-3.1-70b", "h100-sxm", level="refined", gpus=gpus, mode="calibrated",
            calibration=calibration_name, ignore_memory=True, **options,
        )  # fmt: skip
        warnings = decode_step(setup, batch=1, context_tokens=100).warnings
        return tuple(w for w in warnings if "collectives" in w)

    assert notes(16, "current") == ()
    assert notes(8, "current", interconnect="pcie5") == (
        "calibrated: collectives over pcie5 take the share of spec NCCL reaches on NVLink 4",
    )
    assert notes(16, "as-published") == (
        "calibrated: collectives over infiniband-ndr are extrapolated from Vidur's NVLink 4 profiles",
    )
    assert notes(8, "current") == notes(8, "as-published") == ()


def test_calibrated_refuses_hand_set_efficiencies() -> None:
    with pytest.raises(ValueError, match="mode 'calibrated' sets every kernel's efficiency"):
        make_setup("llama-3.1-8b", "h100-sxm", mode="calibrated", memory_efficiency=0.5)
    with pytest.raises(ValueError, match="mode"):
        make_setup("llama-3.1-8b", "h100-sxm", mode="fast")


def test_the_current_calibration_is_faster_than_as_published_at_small_batch() -> None:
    def step(name: str) -> float:
        setup = make_setup("llama-3.1-8b", "h100-sxm", level="refined", mode="calibrated", calibration=name)
        return decode_step(setup, batch=1, context_tokens=500).time_s

    assert step("current") < step("as-published")


def test_cli_prints_both_figures_in_calibrated_mode() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "calculators", "phases", "--mode", "calibrated", "--level", "refined",
         "--json"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    record = json.loads(out)
    text = json.dumps(record)
    assert '"mode": "calibrated"' in text
    assert "bound_time_s" in text


def test_the_host_floor_is_fitted_where_it_binds_and_not_where_the_overhead_is() -> None:
    """The overhead a + b x batch is fitted on 2 A100s as what the steps leave over the kernels, and the
    host's floor after it on 4 GPUs: exact only if the floor never binds on the 2-GPU points and binds on
    the 4-GPU ones (Llama-2-70B's 80 layers x 0.4918 ms = 39.3 ms on the DGX-A100's host, below the 51.2 ms
    of kernels on 2 A100s and above the 30.9 ms on 4)."""
    for gpu, gpus, prompt, batch, _ in points.SPLITWISE_DECODE:
        floor = calibration.host_floor_s("as-published", "a100", 80)
        assert calibration_fit.kernel_step_s(gpu, gpus, prompt, batch) > floor
    for like, rows in points.SPLITWISE_HOST.items():
        floor = calibration.host_floor_s("as-published", like, 80)
        for gpu, gpus, prompt, batch, _ in rows:
            assert calibration_fit.kernel_step_s(gpu, gpus, prompt, batch) < floor


def test_a_small_model_on_the_2023_engine_waits_for_its_host() -> None:
    """Llama-3.1-8B on one H100 at batch 1: its kernels (about 6.2 ms) are shorter than the DGX-H100 host's
    issue of 32 layers, 32 x 0.3042 = 9.734 ms, so the as-published step is that floor plus the overhead,
    9.734 + 4.478 + 0.3425 = 14.555 ms; the current calibration (CUDA graphs) never waits for its host."""

    def step(name: str) -> PassResult:
        setup = make_setup("llama-3.1-8b", "h100-sxm", level="refined", mode="calibrated", calibration=name)
        return decode_step(setup, batch=1, context_tokens=1000)

    eager = step("as-published")
    assert eager.time_s - eager.overhead_s < 9.734e-3
    assert eager.time_s == pytest.approx(14.555e-3, rel=1e-4)
    assert eager.overhead_s - eager.host_wait_s == pytest.approx((4.478 + 0.3425) * 1e-3)
    assert step("current").host_wait_s == 0.0
    peak = decode_step(make_setup("llama-3.1-8b", "h100-sxm"), batch=1, context_tokens=1000)
    assert peak.host_wait_s == 0.0
