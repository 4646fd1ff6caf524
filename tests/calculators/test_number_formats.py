"""Number formats worked out by hand: bit layouts, range and precision, block scales, and which peak applies.

Each expected value is the arithmetic that gives it, from the layout the standard defines (OCP OFP8 and MX
specifications, IEEE 754, NVIDIA's NVFP4 description), so a reader can redo it on paper.
"""

from __future__ import annotations

import pytest

from calculators import FORMATS, PRECISIONS, Scenario, get_format, get_gpu, make_setup, ridge_point
from calculators.expressions import evaluate_number


@pytest.mark.parametrize(
    ("key", "bits"),
    [
        ("fp32", 32),  # 1 + 8 + 23
        ("bf16", 16),  # 1 + 8 + 7
        ("fp16", 16),  # 1 + 5 + 10
        ("fp8-e4m3", 8),  # 1 + 4 + 3, one scale per tensor: free
        ("fp8-e5m2", 8),  # 1 + 5 + 2
        ("nvfp4", 4 + 8 / 16),  # E2M1 + an E4M3 scale per 16 values = 4.5
        ("mxfp4", 4 + 8 / 32),  # E2M1 + an E8M0 scale per 32 values = 4.25
        ("int8", 8),  # per-channel scale: free
        ("int4", 4 + (16 + 16) / 128),  # 16-bit scale and zero point per 128 = 4.25
    ],
)
def test_bits_per_value_include_the_block_scale(key: str, bits: float) -> None:
    fmt = get_format(key)
    assert fmt.bits_per_value == pytest.approx(bits)
    assert fmt.bytes_per_value == pytest.approx(bits / 8)


def test_nvfp4_and_mxfp4_share_elements_but_not_scales() -> None:
    nv, mx = get_format("nvfp4"), get_format("mxfp4")
    assert nv.element_bits == mx.element_bits == 4
    assert (nv.block_size, mx.block_size) == (16, 32)
    # the finer block costs 0.5 - 0.25 = 0.25 bits more per value
    assert nv.scale_bits_per_value - mx.scale_bits_per_value == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("key", "largest", "smallest_normal", "step"),
    [
        ("fp16", (2 - 2**-10) * 2**15, 2**-14, 2**-10),  # 65,504
        ("bf16", (2 - 2**-7) * 2**127, 2**-126, 2**-7),  # 3.39e38: FP32's range, 1/128 steps
        ("fp32", (2 - 2**-23) * 2**127, 2**-126, 2**-23),
        ("fp8-e4m3", 1.75 * 2**8, 2**-6, 2**-3),  # 448: top exponent kept for numbers, S.1111.111 is NaN
        ("fp8-e5m2", 1.75 * 2**15, 2**-14, 2**-2),  # 57,344: IEEE specials
        ("nvfp4", 1.5 * 2**2, 1.0, 0.5),  # E2M1: 6, no specials
        ("mxfp4", 6.0, 1.0, 0.5),
        ("int8", 127, 1, 1 / 127),
        ("int4", 7, 1, 1 / 7),
    ],
)
def test_range_and_precision_from_the_bits(
    key: str, largest: float, smallest_normal: float, step: float
) -> None:
    fmt = get_format(key)
    assert fmt.max_value == pytest.approx(largest)
    assert fmt.min_normal == pytest.approx(smallest_normal)
    assert fmt.relative_step == pytest.approx(step)


def test_published_maxima() -> None:
    # OCP OFP8 rev 1.0 table 1: E4M3 448, E5M2 57,344; IEEE 754 binary16: 65,504; OCP MX v1.0: E2M1 6.0
    assert get_format("fp8-e4m3").max_value == 448
    assert get_format("fp8-e5m2").max_value == 57_344
    assert get_format("fp16").max_value == 65_504
    assert get_format("mxfp4").max_value == 6


def test_range_against_precision() -> None:
    # BF16 trades FP16's mantissa for FP32's exponent: the same 16 bits, far more range, 8x coarser steps
    bf16, fp16 = get_format("bf16"), get_format("fp16")
    assert bf16.range_ratio > 1e70 > fp16.range_ratio
    assert bf16.relative_step == 8 * fp16.relative_step
    e4m3, e5m2 = get_format("fp8-e4m3"), get_format("fp8-e5m2")
    assert e5m2.range_ratio > e4m3.range_ratio
    assert e4m3.relative_step == e5m2.relative_step / 2


def test_finer_blocks_cost_bits() -> None:
    int4 = get_format("int4")
    # a 16-bit scale per 32 values: 4 + 16/32 = 4.5; per 128: 4.125; per 4,096 (a channel): 4.0039
    assert int4.with_block(32, 16).bits_per_value == pytest.approx(4.5)
    assert int4.with_block(128, 16).bits_per_value == pytest.approx(4.125)
    assert int4.with_block(4096, 16).bits_per_value == pytest.approx(4 + 16 / 4096)
    with pytest.raises(ValueError, match="block_size"):
        int4.with_block(0, 16)


def test_precisions_read_their_formats_bytes() -> None:
    # one figure: what a setup costs per weight is its format's bytes per value
    for precision in PRECISIONS.values():
        assert precision.bytes_per_value == FORMATS[precision.format].bytes_per_value
    assert PRECISIONS["fp4"].bytes_per_value == pytest.approx(4.5 / 8)  # NVFP4
    assert PRECISIONS["int4"].bytes_per_value == pytest.approx(4.25 / 8)
    # Llama-3.1 8B: 8,030,261,248 weights, of which the embedding and output layer (2 x 525,336,576) stay BF16
    kept = 2 * 525_336_576
    quantised = 8_030_261_248 - kept
    setup = make_setup("llama-3.1-8b", precision="fp4", level="refined")
    assert setup.weight_bytes == pytest.approx(quantised * 4.5 / 8 + kept * 2, rel=1e-3)


def test_which_peak_a_format_uses() -> None:
    h100, b200, a100 = get_gpu("h100-sxm"), get_gpu("b200"), get_gpu("a100-sxm-80gb")
    assert h100.arithmetic_for("int4") == "bf16"  # W4A16: weights dequantised, BF16 maths
    assert h100.arithmetic_for("fp8") == "fp8"  # W8A8 FP8: the FP8 peak
    assert h100.arithmetic_for("int8") == "int8"
    assert h100.arithmetic_for("fp4") == "bf16"  # Hopper has no FP4 tensor cores
    assert b200.arithmetic_for("fp4") == "fp4"
    assert a100.arithmetic_for("fp8") == "bf16"
    # W8A16: INT8 weights asked to compute in BF16 read FP8's bytes at BF16's peak
    w8a16 = Scenario("dense-8b", precision="int8", arithmetic_format="bf16")
    assert w8a16.ridge_point_flop_per_byte == pytest.approx(989.4 / 3.35)  # 295.3
    assert Scenario("dense-8b", precision="fp8").ridge_point_flop_per_byte == pytest.approx(1978.9 / 3.35)
    # B200: BF16 2,250 / 8 = 281.25; NVFP4 9,000 / 8 = 1,125 FLOP/byte
    assert ridge_point("b200", "fp4") == pytest.approx(1125)


def test_weight_only_relieves_memory_not_compute() -> None:
    # dense-8b at spec peaks on an H100: decode reads 8e9 weights, prefill of 2,000 tokens does 2 x 8e9 x 2000
    bf16 = Scenario("dense-8b", mode="peak")
    w4a16 = Scenario("dense-8b", precision="int4", mode="peak")
    fp8 = Scenario("dense-8b", precision="fp8", mode="peak")
    # decode: 8e9 x 2 B / 3.35e12 = 4.776 ms; INT4 8e9 x 0.53125 B / 3.35e12 = 1.269 ms
    assert bf16.decode().time_s == pytest.approx(8e9 * 2 / 3.35e12)
    assert w4a16.decode().time_s == pytest.approx(8e9 * 0.53125 / 3.35e12)
    # prefill: 3.2e13 FLOPs / 989.4e12 = 32.3 ms for both; FP8 maths halves it: / 1,978.9e12 = 16.2 ms
    assert w4a16.prefill(2000).time_s == pytest.approx(bf16.prefill(2000).time_s)
    assert bf16.prefill(2000).time_s == pytest.approx(2 * 8e9 * 2000 / 989.4e12)
    assert fp8.prefill(2000).time_s == pytest.approx(2 * 8e9 * 2000 / 1978.9e12)


def test_expressions_reach_formats() -> None:
    assert evaluate_number('number_format("nvfp4").bits_per_value') == pytest.approx(4.5)
    assert evaluate_number('precision("int4").number_format.max_value') == 7
    assert evaluate_number('number_format("int4").with_block(64, 16).bits_per_value') == pytest.approx(4.25)
    with pytest.raises(ValueError, match="format must be one of"):
        get_format("fp6")


def test_format_bits_chart_splits_each_value_into_its_bits_and_its_scale() -> None:
    from calculators.charts import chart_data

    data = chart_data("format-bits", formats=["nvfp4", "mxfp4", "bf16"])
    parts = {(row["format"], row["part"]): row["bits"] for row in data.datasets["bits"]}
    assert parts[("NVFP4", "the value's own bits")] == 4
    assert parts[("NVFP4", "its share of the block's scale")] == pytest.approx(8 / 16)
    assert parts[("MXFP4", "its share of the block's scale")] == pytest.approx(8 / 32)
    assert ("BF16", "its share of the block's scale") not in parts  # no block, no bar
    assert [row[-1] for row in data.table_rows] == ["4.5", "4.25", "16"]
    with pytest.raises(ValueError, match="unknown format 'fp6'"):
        chart_data("format-bits", formats=["fp6"])


def test_a_quantised_decode_reads_its_layers_in_the_format_and_the_output_layer_in_bf16() -> None:
    # The number-formats lesson's step table (refined level). Llama-3.1-8B's transformer layers hold
    # 32 x (4096 x 6144 + 4096 x 4096 + 3 x 4096 x 14336) = 6,979,321,856 weights, in the weight format;
    # the output layer, 128,256 x 4,096 = 525,336,576 weights, stays BF16 (2 B); the embedding table is only
    # looked up, so it is not among the weight bytes.
    layers, output_layer = 6_979_321_856, 525_336_576
    expected = {
        "bf16": layers * 2 + output_layer * 2,  # 15,009,849,344 B
        "fp8": layers * 1 + output_layer * 2,  # 8,029,995,008 B
        "int4": layers * 4.25 / 8 + output_layer * 2,  # 3,707,764,736 + 1,050,673,152 = 4,758,437,888 B
    }
    for precision, weight_bytes in expected.items():
        step = Scenario("llama-3.1-8b", precision=precision, level="refined").decode(1, 1000)
        assert step.weight_bytes == pytest.approx(weight_bytes, rel=1e-12)
