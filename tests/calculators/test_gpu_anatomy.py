"""Inside a GPU preset: SMs, tensor cores, clocks and on-chip memories against NVIDIA's published figures.

Every expected value is worked out here by hand from the per-SM figures of the architecture whitepapers
(arithmetic beside it) and compared with a figure NVIDIA prints elsewhere, so a wrong per-SM figure or a wrong
formula in :mod:`calculators.gpu_anatomy` cannot pass.
"""

from __future__ import annotations

import math

import pytest

from calculators import get_gpu
from calculators.expressions import evaluate_number
from calculators.gpu_anatomy import H100_SXM, KIB, Anatomy
from calculators.units import format_value


def test_a100_peak_is_sms_times_flops_per_clock_times_the_printed_boost_clock() -> None:
    # A100 whitepaper: 108 SMs x 4 tensor cores x 256 FMA x 2 FLOPs = 108 x 2,048 = 221,184 FLOPs per clock;
    # at its printed 1,410 MHz boost clock that is 311.87e12, the 312 TFLOPS its datasheet prints.
    a100 = get_gpu("a100-sxm-80gb")
    assert a100.anatomy is not None
    assert a100.anatomy.dense_bf16_flops_per_clock_per_sm == 2048
    assert a100.anatomy.tensor_peak_at(1.41e9) == pytest.approx(311.87e12, rel=1e-4)
    assert a100.anatomy.tensor_peak_at(1.41e9) == pytest.approx(a100.peak_flops_per_s("bf16"), rel=1e-3)
    # The FP32 peak, 19.5 TFLOPS over 108 SMs x 64 cores x 2 = 13,824 FLOPs per clock, gives 1.4106 GHz:
    # the 1,410 MHz the whitepaper prints, so the FP32 peak is computed at the boost clock.
    assert a100.anatomy.boost_clock_hz == pytest.approx(1.41e9, rel=1e-3)


def test_h100_tensor_peak_is_quoted_below_the_boost_clock() -> None:
    # H100 SXM: 132 SMs x 4 tensor cores x 512 FMA x 2 = 540,672 FLOPs per clock.
    # 989.4e12 / 540,672 = 1.8300e9 Hz; the whitepaper's FP32 peak 66.9e12 / (132 x 128 x 2 = 33,792)
    # = 1.9798e9 Hz, the 1,980 MHz top boost clock (the datasheet's rounded 67 TFLOPS would give 1.9827).
    h100 = get_gpu("h100-sxm")
    anatomy = h100.anatomy
    assert anatomy is not None
    assert anatomy.sm_count * anatomy.dense_bf16_flops_per_clock_per_sm == 540_672
    assert anatomy.tensor_clock_hz(h100.peak_flops_per_s("bf16")) == pytest.approx(1.8300e9, rel=1e-4)
    assert anatomy.boost_clock_hz == pytest.approx(1.9798e9, rel=1e-4)
    # At the boost clock the tensor cores would give 540,672 x 1.9798e9 = 1,070.4e12, 8% over the datasheet.
    assert anatomy.tensor_peak_at(anatomy.boost_clock_hz) == pytest.approx(1070.4e12, rel=1e-3)


def test_h100_pcie_fp32_peak_implies_its_1755_mhz_boost_clock() -> None:
    # The whitepaper's 51.2 TFLOPS over 114 SMs x 128 cores x 2 = 29,184 FLOPs per clock is 1.7544e9 Hz: the
    # 1,755 MHz maximum boost clock nvidia-smi reports (Chips and Cheese's table), against which their
    # 1,395 MHz is "just under 80%". The datasheet's rounded 51 would put it at 1.7475e9, below that clock.
    # The tensor peak, 756e12 / (114 x 4,096 = 466,944), is quoted at 1.6190e9.
    pcie = get_gpu("h100-pcie")
    assert pcie.anatomy is not None
    assert pcie.anatomy.boost_clock_hz == pytest.approx(1.7544e9, rel=1e-4)
    assert 1.395e9 / pcie.anatomy.boost_clock_hz == pytest.approx(0.795, rel=1e-3)
    assert pcie.anatomy.tensor_clock_hz(pcie.peak_flops_per_s("bf16")) == pytest.approx(1.6190e9, rel=1e-4)


@pytest.mark.parametrize(
    ("key", "per_clock", "published_ratio"),
    [
        # per clock: 4 x 512 x 2 = 4,096 against 128 x 2 = 256, so 16; published 989.4 / 66.9 = 14.79
        ("h100-sxm", 16.0, 14.789),
        # PCIe: the same SM; 756 / 51.2 = 14.77
        ("h100-pcie", 16.0, 14.766),
        # A100: 4 x 256 x 2 = 2,048 against 64 x 2 = 128, so 16; published 312 / 19.5 = 16.0 (one clock)
        ("a100-sxm-80gb", 16.0, 312 / 19.5),
    ],
)
def test_matrix_peak_against_vector_peak(key: str, per_clock: float, published_ratio: float) -> None:
    gpu = get_gpu(key)
    assert gpu.anatomy is not None
    assert gpu.anatomy.tensor_to_vector_per_clock == per_clock
    assert gpu.peak_flops_per_s("bf16") / gpu.anatomy.fp32_peak_flops_per_s == pytest.approx(
        published_ratio, rel=2e-3
    )


@pytest.mark.parametrize(
    ("key", "register_file_kb"),
    # The H100 whitepaper's comparison table prints the register file per GPU: 33,792 KB (SXM5) and
    # 29,184 KB (PCIe), i.e. 132 x 256 and 114 x 256; the A100's is 108 x 256 = 27,648 KB.
    [("h100-sxm", 33_792), ("h100-pcie", 29_184), ("a100-sxm-80gb", 27_648)],
)
def test_register_file_per_gpu_matches_the_whitepaper_table(key: str, register_file_kb: int) -> None:
    anatomy = get_gpu(key).anatomy
    assert anatomy is not None
    assert anatomy.register_bytes == register_file_kb * KIB


def test_on_chip_memory_of_an_h100() -> None:
    # registers 132 x 256 KiB = 34,603,008 B; L1/shared 132 x 256 KiB = 34,603,008 B; L2 50 MiB = 52,428,800 B
    assert H100_SXM.on_chip_bytes == 34_603_008 * 2 + 52_428_800
    # against 80 GB of HBM: 121,634,816 / 80e9 = 0.152 %
    assert H100_SXM.on_chip_bytes / get_gpu("h100-sxm").memory_capacity_bytes == pytest.approx(
        0.00152, rel=1e-2
    )


def test_shared_memory_bandwidth_is_128_bytes_per_sm_per_clock() -> None:
    # 132 SMs x 128 B x 1.9798e9 Hz = 33.45e12 B/s, ten times HBM's 3.35e12
    assert H100_SXM.shared_memory_bandwidth_bytes_per_s == pytest.approx(33.45e12, rel=1e-3)
    assert H100_SXM.shared_memory_bandwidth_bytes_per_s / get_gpu(
        "h100-sxm"
    ).memory_bandwidth_bytes_per_s == pytest.approx(10.0, rel=1e-2)


def test_presets_without_a_published_breakdown_have_none() -> None:
    assert get_gpu("mi300x").anatomy is None


def test_shared_memory_larger_than_the_sram_is_refused() -> None:
    fields = {name: getattr(H100_SXM, name) for name in H100_SXM.__dataclass_fields__}
    fields["max_shared_bytes_per_sm"] = 300 * KIB
    with pytest.raises(ValueError, match="max_shared_bytes_per_sm"):
        Anatomy(**fields)


def test_lessons_can_read_the_anatomy_and_its_units() -> None:
    assert evaluate_number('gpu("h100-sxm").anatomy.sm_count') == 132
    clock = evaluate_number('gpu("h100-sxm").anatomy.tensor_clock_hz(gpu("h100-sxm").peak_flops_per_s())')
    assert format_value(clock, "GHz") == "1.83 GHz"
    assert format_value(H100_SXM.l2_bytes, "MiB") == "50.0 MiB"
    assert format_value(H100_SXM.power_limit_w, "W") == "700 W"
    assert math.isclose(evaluate_number('gpu("h100-pcie").anatomy.power_limit_w'), 350)


def test_memory_hierarchy_chart_rows_and_refusal() -> None:
    from calculators.charts import ChartError, chart_data

    data = chart_data("memory-hierarchy", gpus=["h100-sxm"])
    assert [row[1:] for row in data.table_rows] == [
        ("Registers", "34.6 MB", "not published"),  # 132 x 256 KiB
        ("Shared / L1", "34.6 MB", "33.5 TB/s"),  # 132 x 256 KiB; 132 x 128 B x 1.9798 GHz = 33.45e12
        ("L2 cache", "52.4 MB", "not published"),  # 50 MiB
        ("HBM", "80.0 GB", "3.35 TB/s"),
    ]
    # The A100 whitepaper prints its L2's read bandwidth per clock (5,120 bytes, against V100's 2,048);
    # NVIDIA prints none for the H100's, nor for registers on either.
    a100 = chart_data("memory-hierarchy", gpus=["a100-sxm-80gb"])
    assert [row[1:] for row in a100.table_rows][2] == ("L2 cache", "41.9 MB", "5,120 bytes per clock")
    with pytest.raises(ChartError, match="mi300x"):
        chart_data("memory-hierarchy", gpus=["mi300x"])
