"""One matrix product: its work, intensity, critical batch, and its tiles and waves (calculators.gemm).

Expected values are worked by hand beside each assertion; the H100 SXM's BF16 peak is 989.4 TFLOP/s, its
bandwidth 3.35 TB/s and its SM count 132 (NVIDIA H100 architecture whitepaper).
"""

from __future__ import annotations

import pytest

from calculators.expressions import evaluate_number
from calculators.gemm import critical_tokens, gemm
from calculators.roofline import ridge_point
from calculators.setting import COURSE_SETTING, SPEC_PEAK, using

PEAK, BANDWIDTH = 989.4e12, 3.35e12


def test_one_token_through_a_weight_does_about_one_flop_per_byte() -> None:
    product = gemm(1, 14336, 4096)
    # 2 x 1 x 14336 x 4096 FLOPs; bytes 2 x (1 x 4096 + 4096 x 14336 + 1 x 14336) = 2 x 58,738,688
    assert product.flops == 117_440_512
    assert product.bytes_moved == 117_477_376
    assert product.intensity_flop_per_byte == pytest.approx(117_440_512 / 117_477_376)
    assert product.bound == "memory"
    assert product.bound_time_s == pytest.approx(117_477_376 / BANDWIDTH)


def test_intensity_is_about_the_token_count_in_bf16_and_twice_it_in_fp8() -> None:
    # T = 64 tokens through 8192 x 8192: 2 T D / (2 (D + 2 T 8192)) = 64 x 8192 / (8192 + 128) = 63.0
    assert gemm(64, 8192, 8192).intensity_flop_per_byte == pytest.approx(64 * 8192 / 8320)
    # FP8 halves the bytes of the same product: 2 x 64 x 8192 / 8320 = 126.0
    assert gemm(64, 8192, 8192, precision="fp8").intensity_flop_per_byte == pytest.approx(128 * 8192 / 8320)


def test_tile_quantisation_pads_the_token_dimension() -> None:
    decode = gemm(1, 14336, 4096)
    # 14336 / 128 = 112 tile columns, one tile row holding 1 of its 128 rows
    assert (decode.tiles, decode.waves) == (112, 1)
    assert decode.tile_efficiency == pytest.approx(1 / 128)
    assert decode.wave_efficiency == pytest.approx(112 / 132)


def test_padded_maths_of_a_decode_product_stays_under_its_memory_time() -> None:
    decode = gemm(1, 14336, 4096)
    # 112 tiles of 128 x 128 in one wave of 132 slots: the maths of a full wave of 128 x 128 x 4096 tiles,
    # 2 x 132 x 128 x 128 x 4096 / 989.4e12 = 17.9 us, against 117,477,376 B / 3.35e12 B/s = 35.1 us of bytes
    assert decode.quantised_compute_time_s == pytest.approx(2 * 132 * 128 * 128 * 4096 / PEAK)
    assert decode.quantised_compute_time_s == pytest.approx(17.9e-6, rel=1e-2)
    assert decode.quantised_compute_time_s < decode.memory_time_s
    # the quantised roofline is then the memory time: it alone cannot show the padded maths
    assert decode.quantised_time_s == decode.memory_time_s


def test_one_token_more_can_start_a_nearly_empty_wave() -> None:
    full = gemm(512, 4096, 4096)
    over = gemm(513, 4096, 4096)
    # 512 tokens: 4 x 32 = 128 tiles, one wave on 132 SMs; 513: 5 x 32 = 160 tiles, two waves
    assert (full.tiles, full.waves) == (128, 1)
    assert (over.tiles, over.waves) == (160, 2)
    assert over.wave_efficiency == pytest.approx(160 / 264)
    assert over.tile_efficiency == pytest.approx(513 / 640)
    # the maths of two waves of 132 tiles of 128 x 128 x 4096, at the spec peak
    assert over.quantised_time_s == pytest.approx(2 * 2 * 132 * 128 * 128 * 4096 / PEAK)
    assert full.quantised_time_s == pytest.approx(2 * 132 * 128 * 128 * 4096 / PEAK)
    # the roofline alone sees one token's worth of difference
    assert over.bound_time_s / full.bound_time_s == pytest.approx(513 / 512, rel=1e-3)


def test_tile_shape_and_sm_count_are_inputs() -> None:
    # 256 x 128 tiles: 2 x 32 = 64 tiles for 513 x 4096 -> ceil(513/256) = 3 rows, 96 tiles, one wave
    wide = gemm(513, 4096, 4096, tile_m=256, tile_n=128)
    assert (wide.tiles, wide.waves) == (96, 1)
    with pytest.raises(ValueError, match="sms"):
        gemm(1, 4096, 4096, gpu="b200")
    assert gemm(1, 4096, 4096, gpu="b200", sms=148).wave_efficiency == pytest.approx(32 / 148)


def test_critical_tokens_is_where_the_intensity_meets_the_ridge() -> None:
    ridge = PEAK / BANDWIDTH  # 295.3 FLOP/byte
    tokens = critical_tokens(4096, 14336)
    # R b D / (2 D - R b S) with D = 4096 x 14336, S = 18432, b = 2
    d, s = 4096 * 14336, 4096 + 14336
    assert tokens == pytest.approx(ridge * 2 * d / (2 * d - ridge * 2 * s))
    assert gemm(round(tokens), 14336, 4096).intensity_flop_per_byte == pytest.approx(ridge, rel=2e-3)
    # very wide layers: the ridge itself in BF16 (b / 2 = 1)
    assert critical_tokens(1 << 20, 1 << 20) == pytest.approx(ridge, rel=1e-3)
    # FP8 doubles the ridge and halves the bytes, so the critical batch hardly moves
    assert critical_tokens(4096, 14336, precision="fp8") == pytest.approx(tokens, rel=1e-3)
    assert critical_tokens(1 << 20, 1 << 20, "h200") == pytest.approx(ridge_point("h200"), rel=1e-3)


def test_a_narrow_product_never_reaches_the_ridge() -> None:
    # 128 x 128: the intensity levels off at 2 D / (b S) = 2 x 16384 / (2 x 256) = 64 FLOP/byte
    with pytest.raises(ValueError, match="never reaches"):
        critical_tokens(128, 128)


def test_time_follows_the_setting_and_the_calibrated_curve_is_slower() -> None:
    assert gemm(64, 4096, 4096).time_s == gemm(64, 4096, 4096).bound_time_s
    with using(COURSE_SETTING):
        product = gemm(64, 4096, 4096)
        assert product.mode == "calibrated"
        assert product.time_s == product.calibrated_time_s
        assert product.calibrated_time_s > product.bound_time_s
    with using(SPEC_PEAK):
        assert gemm(64, 4096, 4096).time_s == gemm(64, 4096, 4096, mode="peak").bound_time_s


def test_expressions_can_quote_a_product() -> None:
    assert evaluate_number("gemm(513, 4096, 4096).waves") == 2
    assert evaluate_number('critical_tokens(4096, 14336, "h100-sxm")') == pytest.approx(
        critical_tokens(4096, 14336)
    )


def test_the_chart_marks_the_critical_batch_and_the_edges_of_each_tile_row() -> None:
    from calculators.charts import ChartError, chart_data

    data = chart_data("gemm-efficiency", max_tokens=512)
    (mark,) = data.datasets["marks"]
    assert mark["tokens"] == pytest.approx(critical_tokens(4096, 14336))
    tokens = {row["tokens"] for row in data.datasets["points"]}
    assert {128, 129, 256, 257, 384, 385, 512} <= tokens  # a new row of 128-row tiles starts past each
    padded = {
        row["tokens"]: row["share"]
        for row in data.datasets["points"]
        if row["series"] == "bound with tiles and waves"
    }
    # 384 tokens: 3 rows of 112 tiles, 336 tiles in 3 waves of 132; 385: 448 tiles in 4 waves, more maths time
    assert padded[385] < padded[384]
    with pytest.raises(ChartError, match="SM count"):
        chart_data("gemm-efficiency", gpu="b200")
