"""Passes, roofline and serving figures worked out by hand, for several presets at both levels of detail.

Each expected value is written as the arithmetic that produces it, with the intermediate results in comments,
so a reader can redo it on paper. Units: seconds, bytes, FLOPs; decimal (1 GB = 1e9 B, 1 TB/s = 1e12 B/s).
"""

from __future__ import annotations

import pytest

from calculators import Scenario, custom_dense_model, custom_gpu, make_setup, prefill, request_timing
from calculators.passes import attention_flops_per_key, decode_step, expected_experts_touched
from calculators.roofline import attainable_flops_per_s, roofline_time

H100_FLOPS, H100_BW = 989.4e12, 3.35e12
H200_FLOPS, H200_BW = 989.4e12, 4.8e12

# ---- simple level ---


def test_llama_70b_simple_on_two_h200s() -> None:
    # N = 70,553,706,496 -> 141,107,412,992 B in BF16: more than one H200's 141 GB, so tensor parallel G = 2.
    s = Scenario("llama-3.1-70b", "h200", gpus=2)
    step = s.decode()
    assert step.bytes_moved == 2 * 70_553_706_496
    assert step.flops == 2 * 70_553_706_496
    # 141,107,412,992 B / (2 x 4.8e12 B/s) = 14.699 ms
    assert step.time_s == pytest.approx(141_107_412_992 / (2 * 4.8e12))
    assert step.time_s == pytest.approx(14.699e-3, rel=1e-4)
    # prefill 1,000 tokens: 2 x 70.55e9 x 1000 = 1.4111e14 FLOPs / (2 x 989.4e12) = 71.31 ms, compute-bound
    first = s.prefill(1000)
    assert first.time_s == pytest.approx(2 * 70_553_706_496 * 1000 / (2 * H200_FLOPS))
    assert first.bound == "compute"
    # ridge 989.4 / 4.8 = 206.1 FLOP/byte, for any number of GPUs
    assert s.ridge_point_flop_per_byte == pytest.approx(206.125)
    assert first.ridge_point_flop_per_byte == pytest.approx(206.125)


def test_tensor_parallelism_divides_simple_times() -> None:
    one = Scenario("llama-3.1-8b", "h100-sxm")
    for g in (2, 8):
        many = Scenario("llama-3.1-8b", "h100-sxm", gpus=g)
        # same FLOPs and bytes in total, G times the peak and the bandwidth
        assert many.decode().time_s == pytest.approx(one.decode().time_s / g)
        assert many.prefill(4000).time_s == pytest.approx(one.prefill(4000).time_s / g)
        assert many.decode().bytes_moved == one.decode().bytes_moved


def test_fp8_halves_the_bytes_and_doubles_the_peak() -> None:
    bf16 = Scenario("dense-8b", "h100-sxm")
    fp8 = Scenario("dense-8b", "h100-sxm", precision="fp8")
    # The decode step reads 8e9 weights x 1 B = 8e9 B: 8e9 / 3.35e12 = 2.388 ms. Stored, the checkpoint keeps
    # its embedding and output layer (2 x 525,336,576 parameters) in BF16, as at the refined level:
    # (8e9 - 1,050,673,152) x 1 B + 1,050,673,152 x 2 B = 9,050,673,152 B (not half of BF16's 16e9).
    assert fp8.weight_bytes == 9_050_673_152
    assert bf16.weight_bytes == 16e9
    assert fp8.decode().time_s == pytest.approx(8e9 / H100_BW)
    # FP8 peak 1,978.9 TFLOP/s: ridge 1978.9 / 3.35 = 590.7 FLOP/byte; prefill intensity 2P (2N FLOPs / N B)
    assert fp8.ridge_point_flop_per_byte == pytest.approx(1978.9 / 3.35)
    assert fp8.prefill(1000).intensity_flop_per_byte == pytest.approx(2000)
    # refined: the KV cache keeps its own format (BF16 by default, as vLLM's "auto"); an FP8 cache halves it
    r16 = Scenario("llama-3.1-8b", "h100-sxm", level="refined").decode(context_tokens=4096)
    r8 = Scenario("llama-3.1-8b", "h100-sxm", level="refined", precision="fp8").decode(context_tokens=4096)
    assert r8.kv_cache_bytes == r16.kv_cache_bytes
    kv8 = Scenario("llama-3.1-8b", "h100-sxm", level="refined", precision="fp8", kv_cache_format="fp8")
    assert kv8.decode(context_tokens=4096).kv_cache_bytes == r16.kv_cache_bytes / 2


def test_scenario_ridge_point_is_in_the_arithmetic_format_not_the_weight_format() -> None:
    # The ridge point is the peak FLOP/s of the format the maths runs in over the bandwidth, whatever format
    # the weights are stored in (H100 SXM: 989.4 TFLOP/s BF16, 1,978.9 TFLOP/s FP8, 3.35 TB/s).
    bf16_ridge = 989.4 / 3.35  # = 295.3 FLOP/byte
    fp8_ridge = 1978.9 / 3.35  # = 590.7 FLOP/byte
    # INT4 weights (weight-only) dequantise to BF16: ridge 295.3, not an error for INT4's missing peak
    int4 = Scenario("llama-3.1-8b", "h100-sxm", precision="int4")
    assert int4.ridge_point_flop_per_byte == pytest.approx(bf16_ridge)
    # FP8 weights computed in BF16: 295.3, not FP8's 590.7
    fp8_in_bf16 = Scenario("llama-3.1-8b", "h100-sxm", precision="fp8", arithmetic_format="bf16")
    assert fp8_in_bf16.ridge_point_flop_per_byte == pytest.approx(bf16_ridge)
    # BF16 weights with FP8 arithmetic: 590.7, not BF16's 295.3
    bf16_in_fp8 = Scenario("llama-3.1-8b", "h100-sxm", arithmetic_format="fp8")
    assert bf16_in_fp8.ridge_point_flop_per_byte == pytest.approx(fp8_ridge)
    # and the scenario agrees with the passes it times
    for s in (int4, fp8_in_bf16, bf16_in_fp8):
        assert s.ridge_point_flop_per_byte == s.prefill(1000).ridge_point_flop_per_byte


def test_efficiency_factors_scale_the_peaks() -> None:
    s = Scenario("dense-8b", "h100-sxm", compute_efficiency=0.5, memory_efficiency=0.8)
    # decode: 16e9 B / (0.8 x 3.35e12) = 5.970 ms; prefill 2000: 3.2e13 / (0.5 x 989.4e12) = 64.69 ms
    assert s.decode().time_s == pytest.approx(16e9 / (0.8 * H100_BW))
    assert s.prefill(2000).time_s == pytest.approx(3.2e13 / (0.5 * H100_FLOPS))
    # ridge (0.5 x 989.4) / (0.8 x 3.35) = 184.6 FLOP/byte
    assert s.ridge_point_flop_per_byte == pytest.approx(0.5 * 989.4 / (0.8 * 3.35))
    assert s.prefill(2000).ridge_point_flop_per_byte == s.ridge_point_flop_per_byte


def test_custom_gpu_and_custom_model_by_numbers() -> None:
    gpu = custom_gpu(bf16_tflops=1000, memory_bandwidth_tb_per_s=4, memory_gb=200)
    model = custom_dense_model(params_billion=70)
    s = Scenario(model, gpu)
    # 140e9 B / 4e12 B/s = 35 ms; ridge 1000 / 4 = 250
    assert s.decode().time_s == pytest.approx(35e-3)
    assert s.ridge_point_flop_per_byte == pytest.approx(250)
    assert s.memory().kv_cache_bytes == 0  # a size-only model has no shapes, so no known KV cache


def test_roofline_time_and_attainable() -> None:
    # 1e12 FLOPs, 1e10 B on an H100: compute 1.0107 ms, memory 2.985 ms -> 2.985 ms, memory-bound (100 < 295)
    r = roofline_time(1e12, 1e10, "h100-sxm")
    assert r.compute_time_s == pytest.approx(1e12 / H100_FLOPS)
    assert r.memory_time_s == pytest.approx(1e10 / H100_BW)
    assert r.time_s == r.memory_time_s
    assert r.bound == "memory"
    assert r.intensity_flop_per_byte == pytest.approx(100)
    # attainable at 100 FLOP/byte: 100 x 3.35e12 = 335 TFLOP/s; above the ridge, the peak
    assert attainable_flops_per_s(100, "h100-sxm") == pytest.approx(335e12)
    assert attainable_flops_per_s(1000, "h100-sxm") == H100_FLOPS


# ---- refined level ---


def test_refined_embedding_is_a_row_lookup() -> None:
    s = Scenario("llama-3.1-8b", "h100-sxm", level="refined")
    step = s.decode()
    # one token reads one 4096-value row: 4096 x 2 B = 8,192 B, not the 128,256 x 4096 x 2 = 1.05 GB table
    assert step.embedding_bytes == 4096 * 2
    # weights read by the matrix products: everything but the input embedding and the 65 norms
    # (2 x 32 + 1) x 4096 = 266,240, lm_head included: (8,030,261,248 - 525,336,576 - 266,240) x 2 B
    assert step.weight_bytes == (8_030_261_248 - 128256 * 4096 - 266_240) * 2 == 15_009_316_864
    # KV: context 1 means reading the token's own K/V and writing it: 2 x 131,072 B
    assert step.kv_cache_bytes == 2 * 131_072
    assert step.bytes_moved == sum(op.bytes_moved for op in step.operators)
    assert step.matmul_flops == 2 * (8_030_261_248 - 128256 * 4096 - 266_240)
    # a 10-token prefill reads 10 rows; more tokens than the vocabulary still read at most the whole table
    assert s.prefill(10).embedding_bytes == 10 * 4096 * 2
    assert s.prefill(200_000).embedding_bytes == 128256 * 4096 * 2


def test_dense_8b_refined_uses_its_shapes() -> None:
    # At the refined level the nominal model counts Llama-3.1-8B's shapes (8.03e9), not the round 8e9.
    nominal = Scenario("dense-8b", "h100-sxm", level="refined").decode(context_tokens=2000)
    llama = Scenario("llama-3.1-8b", "h100-sxm", level="refined").decode(context_tokens=2000)
    assert nominal.as_dict() == llama.as_dict()
    assert Scenario("dense-8b", "h100-sxm", level="refined").weight_bytes == 2 * 8_030_261_248


def test_llama_70b_refined_decode_on_two_h200s() -> None:
    s = Scenario("llama-3.1-70b", "h200", level="refined", gpus=2)
    step = s.decode(context_tokens=4096)
    # weights: (70,553,706,496 - 128256 x 8192 - 161 norms x 8192) x 2 B = 69,501,714,432 x 2
    # = 139,003,428,864 B
    # KV: (4096 read + 1 written) x 2*80*8*128*2 (327,680 B) = 1,342,504,960 B; G = 2 <= 8 KV heads: no copies
    assert step.weight_bytes == 139_003_428_864
    assert step.kv_cache_bytes == 4097 * 327_680 == 1_342_504_960
    assert step.embedding_bytes == 8192 * 2
    # FLOPs: matmuls 2 x 69,503,033,344 = 139,006,066,688; attention 2 x 80 layers x 64 heads x (128 + 128)
    # = 2,621,440 per key x 4096 keys = 10,737,418,240
    assert step.attention_flops == 2 * 80 * 64 * 256 * 4096 == 10_737_418_240
    assert step.matmul_flops == 139_003_428_864
    # time: about (139.0e9 + 1.34e9) / (2 x 4.8e12) = 14.62 ms of memory traffic, plus 161 all-reduces of
    # 8192 x 2 B = 16 KB over NVLink 4, a ring of 2 x (2 - 1) = 2 steps of 0.6 us:
    # 161 x (5 + 1.2 us + 16,384 / 450e9) = 1.004 ms, plus the logits gather (5 us + 128,256 / 450e9)
    assert step.communication_time_s == pytest.approx(161 * (6.2e-6 + 16_384 / 450e9) + 5e-6 + 128256 / 450e9)
    assert step.time_s == pytest.approx(14.62e-3 + 1.009e-3, rel=2e-3)
    assert step.time_s == pytest.approx(sum(op.time_s for op in step.operators))
    assert step.bound == "memory"


def test_qwen_gqa_kv_traffic() -> None:
    s = Scenario("qwen2.5-7b", "h100-sxm", level="refined")
    # 4 KV heads: 2 x 28 x 4 x 128 x 2 = 57,344 B per token; decode at context 8,000 reads 8,000 and writes 1
    assert s.decode(context_tokens=8000).kv_cache_bytes == 8001 * 57_344
    # prefill of 1,000 tokens writes 1,000 tokens' K/V and reads them back once
    assert s.prefill(1000).kv_cache_bytes == 2 * 1000 * 57_344
    # causal attention: 1000 x 1001 / 2 = 500,500 query/key pairs x 2 x 28 layers x 28 heads x 256
    assert s.prefill(1000).attention_flops == 500_500 * 2 * 28 * 28 * 256


def test_mixtral_decode_reads_only_routed_experts() -> None:
    s = Scenario("mixtral-8x7b", "h200", level="refined")
    expert = 3 * 4096 * 14336  # one expert in one layer: 176,160,768 weights
    embedding = 32000 * 4096  # 131,072,000, a lookup
    total = 46_702_792_704
    # batch 1: the token picks 2 of 8 experts, so 6 x 32 x 176,160,768 = 33,822,867,456 weights stay unread:
    norms = 65 * 4096  # 266,240, counted with the norms, not the matrix weights
    # (46,702,792,704 - 33,822,867,456 - 131,072,000 - 266,240) x 2 B = 25,497,174,016 B
    one = s.decode(batch=1)
    assert one.weight_bytes == (total - 6 * 32 * expert - embedding - norms) * 2 == 25_497_174_016
    # batch 2: expected experts touched 8 x (1 - (6/8)^2) = 3.5, so 4.5 x 32 experts unread
    two = s.decode(batch=2)
    assert two.weight_bytes == pytest.approx((total - 4.5 * 32 * expert - embedding - norms) * 2)
    # batch 64: 8 x (1 - 0.75^64) = 7.99999992 experts: effectively the whole model, 93,142,908,928 B
    big = s.decode(batch=64)
    assert big.weight_bytes == pytest.approx((total - embedding - norms) * 2, rel=1e-7)
    # FLOPs always count the 2 routed experts per token: 2 x (12,879,925,248 - 131,072,000 - 266,240) each
    assert big.matmul_flops == 64 * 2 * (12_879_925_248 - embedding - norms)
    # so batching an MoE at decode pays: bytes per generated token fall from 25.5 GB to 1.46 GB
    assert big.weight_bytes / 64 < one.weight_bytes / 10
    assert expected_experts_touched(8, 2, 2) == pytest.approx(3.5)


def test_deepseek_mla_attention_and_cache() -> None:
    model = make_setup("deepseek-v3", "h200", level="refined").model
    # decode, absorbed MLA: 2 x 61 x 128 heads x ((512 + 64) + 512) = 16,990,208 FLOPs per key
    assert attention_flops_per_key(model, "decode") == 2 * 61 * 128 * (576 + 512) == 16_990_208
    # prefill, heads expanded: 2 x 61 x 128 x ((128 + 64) + 128) = 4,997,120 FLOPs per key
    assert attention_flops_per_key(model, "prefill") == 2 * 61 * 128 * (192 + 128) == 4_997_120
    # FP8 on 8 x H200 with tensor parallelism: every GPU keeps the whole latent, 8 copies:
    # (512 + 64) x 61 x 1 B x 8 = 281,088 B per token
    s = Scenario("deepseek-v3", "h200", level="refined", precision="fp8", kv_cache_format="fp8", gpus=8)
    assert s.setup.kv_replication == 8
    assert s.decode(context_tokens=1000).kv_cache_bytes == 1001 * 576 * 61 * 1 * 8
    # batch 1 reads 8 routed + 1 shared experts per MoE layer. FP8 (1 B): attention 11,413,547,008, the 3
    # dense MLPs 3 x 3 x 7168 x 18432 = 1,189,085,184, experts 58 x 9 x 3 x 7168 x 2048 = 22,988,980,224;
    # kept in BF16 (2 B): the routers 58 x (7168 x 256 + 256) = 106,445,312 and the output layer 926,679,040
    assert s.decode().weight_bytes == 11_413_547_008 + 1_189_085_184 + 22_988_980_224 + 2 * (
        106_445_312 + 926_679_040
    )


def test_kv_heads_are_replicated_when_gpus_outnumber_them() -> None:
    # Llama-3.1-8B has 8 KV heads: up to G = 8 each GPU holds its own, at G = 16 every head is on 2 GPUs.
    assert make_setup("llama-3.1-8b", "h100-sxm", gpus=2).kv_replication == 1
    assert make_setup("llama-3.1-8b", "h100-sxm", gpus=8).kv_replication == 1
    assert make_setup("llama-3.1-8b", "h100-sxm", gpus=16).kv_replication == 2
    # Qwen2.5-7B has only 4: at G = 8 two copies, doubling the cache in memory
    s8 = make_setup("qwen2.5-7b", "h100-sxm", level="refined", gpus=8)
    assert s8.kv_cache_bytes(1, 1000) == 2 * 1000 * 57_344


def test_mistral_sliding_window_caps_the_cache() -> None:
    s = Scenario("mistral-7b", "h100-sxm", level="refined")
    # decode beyond the 4,096-token window costs the same as at the window
    assert s.decode(context_tokens=10_000).as_dict() == s.decode(context_tokens=4096).as_dict()
    assert s.decode(context_tokens=10_000).kv_cache_bytes == (4096 + 1) * 131_072
    # memory holds at most the window: 4096 x 131,072 = 536,870,912 B per sequence
    assert s.memory(context_tokens=32_768).kv_cache_bytes == 536_870_912
    # prefill of 5,000 tokens: 4096 x 4097 / 2 + 904 x 4096 = 12,093,440 query/key pairs
    assert s.prefill(5000).attention_flops == 12_093_440 * 2 * 32 * 32 * 256
    # it reads all 5,000 tokens' K/V once and writes the last 4,096 into the rolling cache
    assert s.prefill(5000).kv_cache_bytes == (5000 + 4096) * 131_072


# ---- serving ---


def test_request_timing_for_the_lesson() -> None:
    s = Scenario("dense-8b", "h100-sxm")
    t = s.request(2000, 256)
    # TTFT = prefill = 2 x 8e9 x 2000 / 989.4e12 = 32.343 ms
    assert t.time_to_first_token_s == pytest.approx(3.2e13 / H100_FLOPS)
    # TPOT = one decode step = 16e9 / 3.35e12 = 4.776 ms; 255 steps after the first token
    assert t.time_per_output_token_s == pytest.approx(16e9 / H100_BW)
    assert t.decode_steps == 255
    assert t.total_time_s == pytest.approx(3.2e13 / H100_FLOPS + 255 * 16e9 / H100_BW)  # 1.2503 s
    # 1 / 4.776 ms = 209.4 tokens/s for the user; 256 tokens / 1.2503 s = 204.8 tokens/s over the request
    assert t.tokens_per_s_per_request == pytest.approx(3.35e12 / 16e9)
    assert t.tokens_per_s_total == pytest.approx(256 / 1.250253, rel=1e-5)
    # batch 32 decodes 32 streams for the price of one at batch 1 (still memory-bound: 32 < 295)
    b = s.request(2000, 256, batch=32)
    assert b.time_per_output_token_s == pytest.approx(t.time_per_output_token_s)
    assert b.first_decode.bound == "memory"


def test_refined_request_sums_every_decode_step() -> None:
    # Only attention grows with the context. MLA's absorbed decode does 16,990,208 FLOPs per key against
    # 576 x 61 x 1 B x 8 copies = 281,088 B (60 FLOP/byte), above the ridge at 20 % of peak (41 FLOP/byte):
    # at short contexts the fixed bytes (Q, output, one written token) keep it memory-bound, later it is
    # compute-bound. The closed form must equal the step-by-step sum across that switch.
    setup = make_setup(
        "deepseek-v3", "h200", level="refined", precision="fp8", kv_cache_format="fp8", gpus=8,
        compute_efficiency=0.2,
    )  # fmt: skip
    t = request_timing(setup, 100, 3000, batch=64)
    steps = [decode_step(setup, batch=64, context_tokens=101 + i).time_s for i in range(2999)]
    attention = [op for op in t.first_decode.operators if op.kind == "attention"]
    assert attention[0].bound == "memory"
    last = decode_step(setup, batch=64, context_tokens=3099)
    assert [op.bound for op in last.operators if op.kind == "attention"] == ["compute"]
    assert t.decode_time_s == pytest.approx(sum(steps), rel=1e-12)
    assert t.prefill.time_s == prefill(setup, 100, batch=64).time_s


def test_memory_footprint_and_max_batch() -> None:
    # What an engine leaves for weights and KV on one H200: 143,771 MiB = 150,754,820,096 B reported,
    # x 0.9 = 135,679,338,086 B, less 2 GiB runtime reserve and the workspace of 8,192 tokens of Llama 70B:
    # 8192 x (2 x 8192 + 10,240 + 3 x 28,672) x 2 B = 1,845,493,760 B -> 131,686,360,678 B
    m = Scenario("llama-3.1-70b", "h200", precision="fp8").memory(batch=8, context_tokens=8192)
    assert m.capacity_bytes == pytest.approx(150_754_820_096 * 0.9 - 2**31 - 1_845_493_760)
    # weights 70,553,706,496 B in FP8 with the embedding and the output layer (2 x 1,050,673,152) kept in
    # BF16: 72,655,052,800 B; KV in BF16: 8 x 8192 x 327,680 = 21,474,836,480 B: 94.1 GB fits
    assert m.weight_bytes == 72_655_052_800
    assert m.kv_cache_bytes == 21_474_836_480
    assert m.fits
    # Llama-3.1-8B BF16 on an H100 at 4,096 tokens: 81,559 MiB = 85,520,809,984 B x 0.9 = 76,968,728,986
    # - 16,060,522,496 weights - 2,147,483,648 reserve - 939,524,096 workspace (8192 x 57,344 x 2)
    # = 57,821,198,746 B / (4096 x 131,072 = 536,870,912) = 107.7 -> 107 (the old 80e9-only answer was 119)
    s = Scenario("llama-3.1-8b", "h100-sxm", level="refined")
    assert s.max_batch(4096) == 107
    assert s.memory(batch=107, context_tokens=4096).fits
    assert not s.memory(batch=108, context_tokens=4096).fits
    # Mistral's window caps the cache: (76,968,728,986 - 14,483,464,192 - 2,147,483,648 - 939,524,096)
    # / 536,870,912 = 110.6 -> 110 at any context
    assert Scenario("mistral-7b", "h100-sxm").max_batch(32_768) == 110
    # weights alone don't fit: 141.1 GB of Llama-3.1-70B BF16 against 135.7 GB usable on one H200
    assert Scenario("llama-3.1-70b", "h200").max_batch(1) == 0
