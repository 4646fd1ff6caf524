"""The KV cache: bytes per token for MHA, GQA and MLA, growth with context and batch, budget and transfer.

Expected values are worked by hand from the models' config.json shapes, with the arithmetic beside them.
"""

from __future__ import annotations

import pytest

from calculators import Scenario, get_model
from calculators.expressions import evaluate_number


def test_gqa_bytes_per_token_llama_31_8b() -> None:
    # 2 (K and V) x 32 layers x 8 KV heads x 128 head size x 2 bytes (BF16) = 131,072 B = 128 KiB
    assert get_model("llama-3.1-8b").kv_cache_bytes_per_token() == 2 * 32 * 8 * 128 * 2 == 128 * 1024


def test_the_same_model_with_multi_head_attention_caches_four_times_more() -> None:
    mha = get_model("llama-3.1-8b").with_multi_head_attention()
    # 2 x 32 layers x 32 heads x 128 x 2 bytes = 524,288 B: one K/V head per query head, 32 / 8 = 4x GQA
    assert mha.kv_cache_bytes_per_token() == 2 * 32 * 32 * 128 * 2 == 524_288
    assert mha.attention == "mha"
    assert mha.kv_heads == mha.attention_heads == 32
    # K and V projections grow from 4096 x 1024 to 4096 x 4096 in each of 32 layers: + 2 x 32 x 4096 x 3072
    assert mha.params - get_model("llama-3.1-8b").params == 2 * 32 * 4096 * 3072


def test_mla_bytes_per_token_deepseek_v3() -> None:
    # 61 layers x (512 latent + 64 RoPE key) x 2 bytes = 70,272 B, about half of Llama-3.1-8B's
    assert get_model("deepseek-v3").kv_cache_bytes_per_token() == 61 * (512 + 64) * 2 == 70_272


def test_mla_has_no_multi_head_counterpart() -> None:
    with pytest.raises(ValueError, match="multi-head latent attention"):
        get_model("deepseek-v3").with_multi_head_attention()


def test_cache_grows_linearly_with_context_and_batch() -> None:
    s = Scenario("llama-3.1-8b", "h100-sxm")
    assert s.kv_bytes_per_token == 131_072
    assert s.kv_cache_bytes(2000) == 2000 * 131_072 == 262_144_000  # 262 MB for one 2,000-token sequence
    assert s.kv_cache_bytes(2000, batch=64) == 64 * 262_144_000  # 16.8 GB: more than the 16 GB of weights
    assert s.kv_cache_bytes(4000, batch=32) == s.kv_cache_bytes(2000, batch=64)


def test_a_sliding_window_caps_the_cache() -> None:
    s = Scenario("mistral-7b", "h100-sxm")
    window = s.model.sliding_window
    assert window is not None
    assert s.kv_cache_bytes(window * 4) == s.kv_cache_bytes(window)


def test_fp8_kv_cache_halves_the_bytes() -> None:
    assert Scenario("llama-3.1-8b", kv_cache_format="fp8").kv_bytes_per_token == 131_072 / 2


def test_budget_per_gpu_is_what_the_plan_leaves_and_max_batch_divides_it() -> None:
    s = Scenario("llama-3.1-8b", "h100-sxm")
    plan = s.setup.memory
    expected = (
        plan.device_bytes * plan.memory_utilization
        - plan.weight_bytes_per_gpu
        - plan.runtime_reserve_bytes
        - plan.activation_workspace_bytes
    )
    assert s.kv_budget_bytes_per_gpu == pytest.approx(expected, rel=1e-12)
    assert s.max_batch(2256) == int(s.kv_budget_bytes / s.kv_cache_bytes(2256))


def test_decode_reads_the_whole_cache_every_step() -> None:
    s = Scenario("llama-3.1-8b", "h100-sxm", kv_traffic=True)
    step = s.decode(batch=64, context_tokens=2000)
    # each of 64 sequences reads its 2,000 cached tokens (and writes one new one): about 64 x 2,001 x 128 KiB
    assert step.kv_cache_bytes == pytest.approx(64 * 2001 * 131_072, rel=1e-3)
    assert step.time_s > Scenario("llama-3.1-8b", "h100-sxm").decode(batch=64, context_tokens=2000).time_s


def test_kv_transfer_time_over_a_link() -> None:
    s = Scenario("llama-3.1-8b", "h100-sxm")
    # 262,144,000 B over InfiniBand NDR at 50 GB/s = 5.243 ms, plus the 15 us link latency = 5.258 ms
    assert s.kv_transfer_time_s(2000) == pytest.approx(262_144_000 / 50e9 + 15e-6, rel=1e-12)
    # over NVLink 4 at 450 GB/s each way: 0.583 ms + 5 us
    assert s.kv_transfer_time_s(2000, "nvlink4") == pytest.approx(262_144_000 / 450e9 + 5e-6, rel=1e-12)
    with pytest.raises(ValueError, match="interconnect"):
        s.kv_transfer_time_s(2000, "carrier-pigeon")


def test_lesson_expressions_reach_the_helpers() -> None:
    assert (
        evaluate_number('model("llama-3.1-8b").with_multi_head_attention().kv_cache_bytes_per_token()')
        == 524_288
    )
    assert evaluate_number('Scenario("llama-3.1-8b").kv_cache_bytes(2000, batch=64)') == 64 * 262_144_000
