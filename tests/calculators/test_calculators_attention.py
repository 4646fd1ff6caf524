"""Attention's own roofline: its intensity in prefill and decode, and where it overtakes the weight products.

Expected values are worked by hand from the config shapes, the arithmetic beside them. Llama-3.1-8B: 32
layers, 32 query heads and 8 KV heads of 128, so one cached token holds 2 x 32 x 8 x 128 x 2 B = 131,072 B
and one (query, key) pair costs 2 x 32 x 32 x (128 + 128) = 524,288 FLOPs over all layers.
"""

from __future__ import annotations

import pytest

from calculators import Scenario
from calculators.models import get_model

KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # 131,072 B
FLOPS_PER_KEY = 2 * 32 * 32 * (128 + 128)  # 524,288 FLOPs
QUERY_AND_OUTPUT = 2 * 32 * 32 * (128 + 128)  # 524,288 B: one token's query and output, all heads, BF16


def test_decode_attention_intensity_is_the_gqa_group_size_in_bf16() -> None:
    step = Scenario("llama-3.1-8b", level="refined").decode(1, 8000)
    # 8,000 keys x 524,288 FLOPs over (8,000 read + 1 written) x 131,072 B + 524,288 B of query and output
    flops = 8000 * FLOPS_PER_KEY  # 4,194,304,000
    moved = 8001 * KV_PER_TOKEN + QUERY_AND_OUTPUT  # 1,049,231,360
    assert step.attention_intensity_flop_per_byte == pytest.approx(flops / moved, rel=1e-12)  # 3.9975
    # about 2 x (32 / 8 query heads per KV head) / 2 B = 4, and the batch does not change it
    assert step.attention_intensity_flop_per_byte == pytest.approx(4.0, rel=1e-3)
    batch = Scenario("llama-3.1-8b", level="refined", ignore_memory=True).decode(64, 8000)
    assert batch.attention_intensity_flop_per_byte == pytest.approx(flops / moved, rel=1e-12)


def test_multi_head_attention_decodes_at_one_flop_per_byte_and_fp8_doubles_it() -> None:
    mha = get_model("llama-3.1-8b").with_multi_head_attention()
    step = Scenario(mha, level="refined").decode(1, 8000)
    # the same FLOPs over 4 x the cache: 4,194,304,000 / (8,001 x 524,288 + 524,288) = 0.99988
    assert step.attention_intensity_flop_per_byte == pytest.approx(
        8000 * FLOPS_PER_KEY / (8001 * 4 * KV_PER_TOKEN + QUERY_AND_OUTPUT), rel=1e-12
    )
    fp8 = Scenario("llama-3.1-8b", level="refined", kv_cache_format="fp8").decode(1, 8000)
    # a 1-byte cache: 4,194,304,000 / (8,001 x 65,536 + 524,288) = 7.99
    assert fp8.attention_intensity_flop_per_byte == pytest.approx(
        8000 * FLOPS_PER_KEY / (8001 * KV_PER_TOKEN / 2 + QUERY_AND_OUTPUT), rel=1e-12
    )


def test_mla_decode_intensity_is_about_twice_the_query_heads() -> None:
    # DeepSeek-V3, absorbed MLA: per key and layer 2 x 128 heads x (576 + 512) = 278,528 FLOPs over one latent
    # of (512 + 64) x 2 B = 1,152 B: 241.8 FLOP/byte, near 2 x 128. Data-parallel attention keeps one copy.
    s = Scenario(
        "deepseek-v3", "h200", gpus=8, precision="fp8", level="refined", data_parallel_attention=True
    )
    step = s.decode(1, 100_000)
    # 61 layers, 100,000 keys read and 1 written; the query and output of 128 heads x 1,088 values x 2 B
    # per layer add 0.24 %
    moved = 61 * (100_001 * 1_152 + 2 * 128 * 1_088)
    assert step.attention_intensity_flop_per_byte == pytest.approx(61 * 100_000 * 278_528 / moved, rel=1e-9)
    assert step.attention_intensity_flop_per_byte == pytest.approx(278_528 / 1_152, rel=3e-3)
    # tensor parallelism copies the latent to all 8 GPUs: 8 x the bytes for the same FLOPs
    tp = Scenario("deepseek-v3", "h200", gpus=8, precision="fp8", level="refined").decode(1, 100_000)
    assert tp.attention_intensity_flop_per_byte == pytest.approx(278_528 / 1_152 / 8, rel=3e-3)


def test_prefill_attention_intensity_grows_with_the_prompt() -> None:
    s = Scenario("llama-3.1-8b", level="refined")
    # causal: 524,288 x 8,000 x 8,001 / 2 FLOPs over 8,000 tokens' K/V written and read (2 x 8,000 x 131,072)
    # plus their queries and outputs (8,000 x 524,288): 1.6779e13 / 6.2915e9 = 2,667, about a third of P
    flops = FLOPS_PER_KEY * 8000 * 8001 / 2
    moved = 2 * 8000 * KV_PER_TOKEN + 8000 * QUERY_AND_OUTPUT
    assert s.prefill(8000).attention_intensity_flop_per_byte == pytest.approx(flops / moved, rel=1e-12)
    assert s.prefill(16_000).attention_intensity_flop_per_byte == pytest.approx(
        2 * s.prefill(8000).attention_intensity_flop_per_byte, rel=1e-3
    )


def test_attention_and_weight_times_add_up_to_the_pass() -> None:
    for mode in ("peak", "calibrated"):
        result = Scenario("llama-3.1-8b", level="refined", mode=mode).prefill(4000)
        others = sum(op.time_s for op in result.operators if op.kind not in ("attention", "weights"))
        assert result.attention_time_s > 0
        assert result.weights_time_s > 0
        total = result.attention_time_s + result.weights_time_s + others + result.overhead_s
        assert total == pytest.approx(result.time_s, rel=1e-12)
    simple = Scenario("llama-3.1-8b").decode(1, 1000)  # no attention at the simple level without KV reads
    assert simple.attention_time_s == 0.0
    assert simple.attention_intensity_flop_per_byte == 0.0


def test_prefill_attention_overtakes_the_weights_past_about_4n_over_flops_per_key() -> None:
    s = Scenario("llama-3.1-8b", level="refined", mode="peak")
    # per token the weights do 2 x 32 x (4096 x 6144 + 4096 x 4096 + 3 x 4096 x 14336)
    # = 2 x 6,979,321,856 FLOPs; causal attention 524,288 x P (P + 1) / 2 in all. Both compute-bound at the
    # same BF16 peak, so they cross at P + 1 = 4 x 6,979,321,856 / 524,288 = 53,248. The output layer's
    # read (1.05 GB, 0.31 ms) adds a few tokens.
    crossing = s.attention_takes_over("prefill")
    assert 53_247 <= crossing <= 53_247 * 1.001
    at, before = s.prefill(crossing), s.prefill(crossing - 1)
    assert at.attention_time_s > at.weights_time_s
    assert before.attention_time_s <= before.weights_time_s


def test_decode_attention_overtakes_the_weights_at_weight_bytes_over_batch_times_kv_bytes() -> None:
    s = Scenario("llama-3.1-8b", level="refined", mode="peak")
    # both memory-bound: the weights without the embedding table, 16,060,522,496 - 128,256 x 4,096 x 2 =
    # 15,009,849,344 B, once per step; the cache b x T x 131,072 B: T = 15,009,849,344 / 131,072 / b
    # 114,516
    assert s.attention_takes_over("decode") == pytest.approx(15_009_849_344 / KV_PER_TOKEN, rel=1e-3)
    # at batch 64, 1,789 (activations, which grow with the batch, add 2 %)
    assert s.attention_takes_over("decode", 64) == pytest.approx(15_009_849_344 / KV_PER_TOKEN / 64, rel=0.02)


def test_calibrated_attention_overtakes_sooner_in_prefill() -> None:
    """Vidur's attention kernels reach a smaller share of peak than its matrix products, so calibrated."""
    bound = Scenario("llama-3.1-8b", level="refined", mode="peak").attention_takes_over("prefill")
    calibrated = Scenario(
        "llama-3.1-8b", level="refined", mode="calibrated", calibration="current"
    ).attention_takes_over("prefill")
    assert 0 < calibrated < bound


def test_a_sliding_window_keeps_decode_attention_below_the_weights() -> None:
    # Mistral-7B caches at most 4,096 tokens: 4,096 x 131,072 B = 0.54 GB against 14 GB of weights
    assert Scenario("mistral-7b", level="refined", mode="peak").attention_takes_over("decode") == 0


def test_attention_takes_over_refuses_what_it_cannot_answer() -> None:
    with pytest.raises(ValueError, match="phase must be one of prefill, decode"):
        Scenario("llama-3.1-8b", level="refined").attention_takes_over("mixed")
    with pytest.raises(ValueError, match="batch"):
        Scenario("llama-3.1-8b", level="refined").attention_takes_over("decode", 0)


def test_attention_takes_over_counts_attention_even_where_the_setup_leaves_it_out() -> None:
    # the simple level without KV reads has no attention operator; the question is about attention
    without = Scenario("llama-3.1-8b").attention_takes_over("decode", 8)
    assert without == Scenario("llama-3.1-8b", kv_traffic=True).attention_takes_over("decode", 8) > 0
