"""Presets against their sources: parameter totals derived from config shapes, and GPU spec-sheet figures.

Model totals are worked out here by hand from the published config.json shapes, independently of
``calculators.models``, and compared with the published totals (exactly where the source gives an exact count,
such as a Hugging Face safetensors total). GPU figures are transcribed from the project's research file
(research/presets.json, dense FLOP/s only); when that file is present the transcription is checked against it.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from calculators import GPUS, MODELS, Scenario, get_gpu, get_model

# ---- models ---


def llama_style_total(layers: int, h: int, heads: int, kv_heads: int, d: int, ffn: int, vocab: int) -> int:
    """Untied GQA decoder with SwiGLU MLP, no biases: the arithmetic each hand-worked total below follows."""
    attention = h * heads * d + 2 * h * kv_heads * d + heads * d * h  # q, k, v, o projections
    mlp = 3 * h * ffn  # gate, up, down
    norms = 2 * h * layers + h  # two RMSNorms per layer + the final one
    return layers * (attention + mlp) + norms + 2 * vocab * h  # + input embedding + lm_head


# Llama-3.1-8B: attention 4096*4096 + 2*4096*1024 + 4096*4096 = 41,943,040; MLP 3*4096*14336 = 176,160,768;
# 32 * 218,103,808 = 6,979,321,856; norms 2*4096*32 + 4096 = 266,240; embed+head 2*128256*4096 = 1,050,673,152
# => 8,030,261,248 (HF safetensors count).
LLAMA_8B = 6_979_321_856 + 266_240 + 1_050_673_152
# Llama-3.1-70B: attention 2*8192*8192 + 2*8192*1024 = 150,994,944; MLP 3*8192*28672 = 704,643,072;
# 80 * 855,638,016 = 68,451,041,280; norms 2*8192*80 + 8192 = 1,318,912;
# embed+head 2*128256*8192 = 2,101,346,304
LLAMA_70B = 68_451_041_280 + 1_318_912 + 2_101_346_304
# Llama-3.1-405B: attention 2*16384^2 + 2*16384*1024 = 570,425,344; MLP 3*16384*53248 = 2,617,245,696;
# 126 * 3,187,671,040 = 401,646,551,040; norms 2*16384*126 + 16384 = 4,145,152; embed+head 4,202,692,608
LLAMA_405B = 401_646_551_040 + 4_145_152 + 4_202_692_608
# Mistral-7B v0.1: Llama-8B layers, vocabulary 32,000: 6,979,321,856 + 266,240 + 2*32000*4096 (262,144,000)
MISTRAL_7B = 6_979_321_856 + 266_240 + 262_144_000
# Mixtral-8x7B: attention 32*41,943,040 = 1,342,177,280; experts 32*8*3*4096*14336 = 45,097,156,608;
# router 32*4096*8 = 1,048,576; norms 266,240; embed+head 262,144,000.
MIXTRAL_TOTAL = 1_342_177_280 + 45_097_156_608 + 1_048_576 + 266_240 + 262_144_000
# active: 2 of 8 experts per layer, so 6 * 32 * 176,160,768 = 33,822,867,456 fewer
MIXTRAL_ACTIVE = MIXTRAL_TOTAL - 6 * 32 * 176_160_768
# Qwen2.5-7B: attention 3584*3584*2 + 2*3584*512 + biases (3584 + 2*512) = 29,364,736; MLP 3*3584*18944 =
# 203,685,888; 28 * 233,050,624 = 6,525,417,472; norms 2*3584*28 + 3584 = 204,288; embed+head 2*152064*3584 =
# 1,089,994,752 => 7,615,616,512 (safetensors count; the model card says 7.61B)
QWEN_7B = 6_525_417_472 + 204_288 + 1_089_994_752
# DeepSeek-V3 (MLA + MoE), per layer:
#   q: 7168*1536 + 1536 (norm) + 1536*128*(128+64) = 48,760,320
#   kv: 7168*(512+64) + 512 (norm) + 512*128*(128+128) = 20,906,496
#   o: 128*128*7168 = 117,440,512                         => attention 187,107,328; * 61 = 11,413,547,008
#   3 dense layers: 3 * 3*7168*18432 = 1,189,085,184
#   58 MoE layers: router 7168*256 + 256 (bias) = 1,835,264; 257 experts (256 routed + 1 shared) * 3*7168*2048
#   (44,040,192) = 11,318,329,344 => 58 * 11,320,164,608 = 656,569,547,264
#   norms 2*7168*61 + 7168 = 881,664; embed+head 2*129280*7168 = 1,853,358,080
DEEPSEEK_TOTAL = 11_413_547_008 + 1_189_085_184 + 656_569_547_264 + 881_664 + 1_853_358_080
# active: 8 routed + 1 shared expert: 58 * (1,835,264 + 9*44,040,192) = 23,095,425,536
DEEPSEEK_ACTIVE = 11_413_547_008 + 1_189_085_184 + 23_095_425_536 + 881_664 + 1_853_358_080


QWEN_72B = llama_style_total(80, 8192, 64, 8, 128, 29568, 152064) + 80 * (64 + 2 * 8) * 128


def test_hand_worked_totals_are_what_the_sources_publish() -> None:
    # The arithmetic above, against the figures the sources print (guards the comments from typos).
    assert LLAMA_8B == 8_030_261_248
    assert llama_style_total(32, 4096, 32, 8, 128, 14336, 128256) == LLAMA_8B
    assert LLAMA_70B == 70_553_706_496 == llama_style_total(80, 8192, 64, 8, 128, 28672, 128256)
    assert LLAMA_405B == 405_853_388_800 == llama_style_total(126, 16384, 128, 8, 128, 53248, 128256)
    assert MISTRAL_7B == 7_241_732_096 == llama_style_total(32, 4096, 32, 8, 128, 14336, 32000)
    assert MIXTRAL_TOTAL == 46_702_792_704
    assert QWEN_7B == 7_615_616_512
    assert DEEPSEEK_TOTAL == 671_026_419_200
    assert DEEPSEEK_ACTIVE == 37_552_297_472
    # Qwen2.5-72B: Llama-style plus QKV biases (64 + 2 x 8) x 128 = 10,240 per layer x 80 = 819,200
    assert QWEN_72B == 72_706_203_648


@pytest.mark.parametrize(
    ("key", "total", "active"),
    [
        ("llama-3.1-8b", LLAMA_8B, LLAMA_8B),
        ("llama-3.1-70b", LLAMA_70B, LLAMA_70B),
        ("llama-3.1-405b", LLAMA_405B, LLAMA_405B),
        ("mistral-7b", MISTRAL_7B, MISTRAL_7B),
        ("mixtral-8x7b", MIXTRAL_TOTAL, MIXTRAL_ACTIVE),
        ("qwen2.5-7b", QWEN_7B, QWEN_7B),
        ("qwen2.5-72b", QWEN_72B, QWEN_72B),
        ("llama-3.3-70b", LLAMA_70B, LLAMA_70B),  # Llama-3.1-70B's shapes
        ("deepseek-v3", DEEPSEEK_TOTAL, DEEPSEEK_ACTIVE),
        ("dense-8b", LLAMA_8B, 8e9),  # shapes are Llama-3.1-8B's; N itself is the lesson's round 8e9
    ],
)
def test_parameter_totals_derived_from_shapes(key: str, total: int, active: float) -> None:
    model = get_model(key)
    assert model.derived_params == total
    assert model.active_params == active


def test_every_model_preset_is_checked_above() -> None:
    checked = {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "mistral-7b", "mixtral-8x7b", "qwen2.5-7b"}
    checked |= {"qwen2.5-72b", "llama-3.3-70b"}
    assert set(MODELS) == checked | {"deepseek-v3", "dense-8b"}


# Published totals that are exact counts (Hugging Face safetensors totals); the others are rounded in print.
EXACTLY_PUBLISHED = {
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "mistral-7b",
    "mixtral-8x7b",
    "qwen2.5-7b",
}


@pytest.mark.parametrize("key", sorted(MODELS))
def test_derived_totals_match_published_totals(key: str) -> None:
    model = MODELS[key]
    if key in EXACTLY_PUBLISHED:
        assert model.derived_params == model.published_params
    elif key == "deepseek-v3":
        assert model.derived_params == pytest.approx(model.published_params, rel=0.001)  # "671B"
    else:  # the lesson's nominal model: N = 8e9 by definition
        assert model.params == model.published_params
    if model.published_active_params is not None:
        # DeepSeek-V3's "37B activated" is rounded down from 37.55B (1.5%); Mixtral's 12.9B from 12.88B.
        assert model.active_params == pytest.approx(model.published_active_params, rel=0.02)
    assert model.source.strip()


def test_dense_8b_is_the_lessons_round_model() -> None:
    model = get_model("dense-8b")
    assert model.params == 8e9
    assert model.derived_params == pytest.approx(8.03e9, rel=1e-3)


# ---- parameters by component (the tokens-parameters-and-flops lesson's breakdown) ---


def test_llama_8b_components_by_hand() -> None:
    # The breakdown the lesson teaches, each figure from the arithmetic in the comments at the top.
    model = get_model("llama-3.1-8b")
    assert model.attention_params_per_layer == 41_943_040  # 4096*4096 + 2*4096*1024 + 4096*4096
    assert model.attention_params == 1_342_177_280  # x 32 layers
    assert model.dense_mlp_params_per_layer == 176_160_768  # 3 * 4096 * 14336
    assert model.mlp_params() == 5_637_144_576  # x 32 layers
    assert model.norm_params == 266_240  # (2 * 32 + 1) * 4096
    assert model.embedding_params == model.lm_head_params == 525_336_576  # 128256 * 4096
    assert model.stored_lm_head_params == 525_336_576  # untied: the output layer is a matrix of its own
    assert model.router_params_per_layer == 0
    parts = 1_342_177_280 + 5_637_144_576 + 266_240 + 2 * 525_336_576
    assert parts == LLAMA_8B == model.derived_params


@pytest.mark.parametrize("key", sorted(MODELS))
def test_components_add_up_to_the_total(key: str) -> None:
    model = MODELS[key]
    parts = (
        model.attention_params
        + model.mlp_params()
        + model.norm_params
        + model.embedding_params
        + model.stored_lm_head_params
    )
    assert parts == model.derived_params


def test_tied_embeddings_store_the_output_layer_once() -> None:
    # Tying shares the 128256 x 4096 matrix: 525,336,576 fewer stored, the same matrix products.
    untied = get_model("llama-3.1-8b")
    tied = replace(untied, key="tied", tied_embeddings=True)
    assert tied.stored_lm_head_params == 0
    assert tied.derived_params == LLAMA_8B - 525_336_576
    assert tied.matmul_params() == untied.matmul_params() == LLAMA_8B - 525_336_576


def test_moe_mlp_counts_routed_experts_per_token() -> None:
    mixtral = get_model("mixtral-8x7b")
    assert mixtral.router_params_per_layer == 4096 * 8  # = 32,768
    # all 8 experts: 32 * (32,768 + 8 * 176,160,768) = 45,098,205,184
    assert mixtral.mlp_params() == 45_097_156_608 + 1_048_576
    # 2 experts per token: 32 * (32,768 + 2 * 176,160,768) = 11,275,337,728
    assert mixtral.mlp_params(2) == 11_275_337_728
    deepseek = get_model("deepseek-v3")
    assert deepseek.router_params_per_layer == 1_835_264  # 7168 * 256 + 256 (bias)
    # 3 dense layers (3 * 3 * 7168 * 18432) + 58 MoE layers of router, 8 routed and 1 shared expert
    assert deepseek.mlp_params(8) == 1_189_085_184 + 23_095_425_536


@pytest.mark.parametrize("key", ["llama-3.1-8b", "qwen2.5-7b", "mixtral-8x7b", "deepseek-v3"])
def test_cost_model_weight_flops_use_the_same_count(key: str) -> None:
    # One decode token at the refined level: 2 FLOPs (a multiply and an add) per weight it multiplies by:
    # every layer's attention and MLP (the experts it is routed to) and the output layer; no embedding FLOPs.
    model = MODELS[key]
    k = None if model.moe is None else model.moe.experts_per_token
    step = Scenario(key, level="refined", ignore_memory=True).decode(1, 1)
    expected = 2 * (model.attention_params + model.mlp_params(k) + model.lm_head_params)
    assert step.matmul_flops == pytest.approx(expected, rel=1e-12)


def test_attention_flops_grow_with_context_by_hand() -> None:
    # Llama-3.1-8B, one decode token attending 8,000 tokens: per layer, head and key a 128-wide dot product
    # (2 * 128) and a 128-wide weighted sum (2 * 128): 4 * 32 layers * 32 heads * 128 * 8000 = 4,194,304,000.
    step = Scenario("llama-3.1-8b", level="refined", ignore_memory=True).decode(1, 8000)
    assert step.attention_flops == 4_194_304_000


# ---- KV cache per token ---


@pytest.mark.parametrize(
    ("key", "bf16_bytes"),
    [
        ("llama-3.1-8b", 2 * 32 * 8 * 128 * 2),  # K and V * 32 layers * 8 KV heads * 128 dims * 2 B = 131,072
        ("llama-3.1-70b", 2 * 80 * 8 * 128 * 2),  # = 327,680
        ("llama-3.1-405b", 2 * 126 * 8 * 128 * 2),  # = 516,096
        ("mistral-7b", 2 * 32 * 8 * 128 * 2),  # = 131,072
        ("mixtral-8x7b", 2 * 32 * 8 * 128 * 2),  # = 131,072
        ("qwen2.5-7b", 2 * 28 * 4 * 128 * 2),  # only 4 KV heads: 57,344
        ("deepseek-v3", (512 + 64) * 61 * 2),  # MLA: latent 512 + RoPE key 64, per layer: 70,272
    ],
)
def test_kv_cache_bytes_per_token(key: str, bf16_bytes: int) -> None:
    model = get_model(key)
    assert model.kv_cache_bytes_per_token() == bf16_bytes
    assert model.kv_cache_bytes_per_token(1.0) == bf16_bytes / 2  # fp8 halves it


def test_mla_cache_is_far_smaller_than_expanded_heads() -> None:
    # Expanded into ordinary heads, DeepSeek-V3 would cache K (192 dims) and V (128 dims) for 128 heads:
    # (192 + 128) * 128 * 61 layers * 2 B = 4,997,120 B per token, 71x the latent's 70,272 B.
    expanded = (192 + 128) * 128 * 61 * 2
    assert expanded / get_model("deepseek-v3").kv_cache_bytes_per_token() == pytest.approx(71.1, rel=1e-3)


# ---- GPUs ---

# Transcribed from research/presets.json (generated 2026-12-02): dense BF16 and FP8 TFLOP/s, TB/s, GB.
# Our key "h200" is the research file's "h200-sxm".
RESEARCH_GPUS: dict[str, tuple[float, float | None, float, float]] = {
    "h100-sxm": (989.4, 1978.9, 3.35, 80),
    "h100-pcie": (756.0, 1513.0, 2.0, 80),
    "h200": (989.4, 1978.9, 4.8, 141),
    "b200": (2250.0, 4500.0, 8.0, 180),
    "a100-sxm-80gb": (312.0, None, 2.039, 80),
    "l40s": (362.05, 733.0, 0.864, 48),
    "l4": (121.0, 242.5, 0.3, 24),
    "mi300x": (1307.4, 2614.9, 5.3, 192),
    "rtx-4090": (165.2, 330.3, 1.008, 24),
    "tpu-v5e": (197.0, None, 0.819, 16),
    # Not in the research file: GB200 NVL72 specifications / 72 GPUs (sparse 5 / 10 PFLOPS BF16 / FP8 halved,
    # 576 TB/s / 72 = 8 TB/s) and MLPerf Inference system descriptions (186 GB per GPU).
    "gb200": (2500.0, 5000.0, 8.0, 186),
}
# The sparsity figures vendors print next to the dense ones; a preset must never use them.
SPARSE_BF16_TFLOPS = {"h100-sxm": 1979, "h100-pcie": 1513, "h200": 1979, "b200": 4500, "a100-sxm-80gb": 624}
RESEARCH_FILE = Path("/work/shared/research/presets.json")


@pytest.mark.parametrize("key", sorted(RESEARCH_GPUS))
def test_gpu_presets_match_the_research_figures(key: str) -> None:
    bf16, fp8, tb_per_s, gb = RESEARCH_GPUS[key]
    gpu = get_gpu(key)
    assert gpu.peak_flops_per_s("bf16") == pytest.approx(bf16 * 1e12)
    if fp8 is None:
        assert "fp8" not in gpu.dense_flops_per_s
    else:
        assert gpu.peak_flops_per_s("fp8") == pytest.approx(fp8 * 1e12)
    assert gpu.memory_bandwidth_bytes_per_s == pytest.approx(tb_per_s * 1e12)
    assert gpu.memory_capacity_bytes == pytest.approx(gb * 1e9)
    assert gpu.source.strip()


def test_every_gpu_preset_is_checked_and_the_required_ones_exist() -> None:
    assert set(GPUS) == set(RESEARCH_GPUS)
    required = {"h100-sxm", "h100-pcie", "h200", "b200", "a100-sxm-80gb", "l40s", "l4", "mi300x", "rtx-4090"}
    assert required <= set(GPUS)


@pytest.mark.parametrize("key", sorted(SPARSE_BF16_TFLOPS))
def test_presets_use_dense_not_sparse_flops(key: str) -> None:
    dense = get_gpu(key).peak_flops_per_s("bf16") / 1e12
    # Dense is half the "with sparsity" figure (rounded on the datasheets).
    assert dense == pytest.approx(SPARSE_BF16_TFLOPS[key] / 2, rel=0.001)


@pytest.mark.parametrize(
    ("key", "ridge"),
    [
        ("h100-sxm", 989.4 / 3.35),  # 295.3
        ("h200", 989.4 / 4.8),  # 206.1
        ("b200", 2250 / 8.0),  # 281.25
        ("a100-sxm-80gb", 312 / 2.039),  # 153.0
        ("mi300x", 1307.4 / 5.3),  # 246.7
    ],
)
def test_bf16_ridge_points(key: str, ridge: float) -> None:
    assert get_gpu(key).ridge_point_flop_per_byte("bf16") == pytest.approx(ridge)


@pytest.mark.skipif(
    not RESEARCH_FILE.exists(), reason="the shared research file is only on the project machine"
)
def test_transcription_matches_the_research_file() -> None:
    research = json.loads(RESEARCH_FILE.read_text())
    for key, (bf16, fp8, tb_per_s, gb) in RESEARCH_GPUS.items():
        if key == "gb200":
            continue  # sourced above, not in the research file
        entry = research["hardware"]["h200-sxm" if key == "h200" else key]
        assert (entry["bf16_dense_tflops"], entry["fp8_dense_tflops"]) == (bf16, fp8), key
        assert (entry["hbm_tbps"], entry["memory_gb"]) == (tb_per_s, gb), key
    for key, entry in research["models"].items():
        ours = {"mistral-7b-v0.1": "mistral-7b"}.get(key, key)
        if ours not in MODELS:
            continue  # researched but not a preset
        model = MODELS[ours]
        assert model.derived_params == entry["params_total"], key
        assert model.kv_cache_bytes_per_token() == entry["kv_cache_bytes_per_token_bf16"], key
        assert (model.layers, model.hidden_size, model.vocab_size) == (
            entry["num_hidden_layers"],
            entry["hidden_size"],
            entry["vocab_size"],
        ), key
        if "params_active_per_token" in entry:
            assert model.active_params == entry["params_active_per_token"], key


def test_gpu_figures_are_finite_and_decimal() -> None:
    for gpu in GPUS.values():
        assert all(math.isfinite(v) and v > 1e12 for v in gpu.dense_flops_per_s.values())
        assert 1e11 <= gpu.memory_bandwidth_bytes_per_s <= 1e13
        assert gpu.memory_capacity_bytes % 1e9 == 0  # decimal GB


def test_gb200_and_b200_memory_are_read_in_the_same_units() -> None:
    # B200's "180 GB" is what its driver reports, 183,359 MiB: a binary figure. GB200's "186 GB" read as
    # decimal (186e9 bytes) made the larger part hold less than the B200 (192.3e9 bytes).
    b200, gb200 = get_gpu("b200"), get_gpu("gb200")
    assert gb200.usable_memory_bytes > b200.usable_memory_bytes
    assert gb200.usable_memory_bytes / b200.usable_memory_bytes == pytest.approx(186 / 179.06, rel=1e-3)
