"""Expert parallelism's all-to-alls and routed-expert load (calculators/expert_parallel.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from calculators.expert_load import busiest_gpu_pairs
from calculators.expert_parallel import all_to_all_time_s, dispatch_bytes, expert_load
from calculators.interconnect import all_to_all_time_s as balanced_all_to_all_time_s
from calculators.interconnect import get_interconnect
from calculators.passes import decode_step
from calculators.scenario import Scenario

NVLINK = get_interconnect("nvlink4")  # 450 GB/s each way, 5 us
NDR = get_interconnect("infiniband-ndr")  # 50 GB/s each way, 15 us


def test_dispatch_carries_each_token_to_each_of_its_experts() -> None:
    # DeepSeek-V3: hidden 7168, top-8, BF16 activations: one token's dispatch in one layer is
    # 1 x 8 x 7168 x 2 = 114,688 bytes; 64 tokens 7,340,032.
    assert dispatch_bytes(1, 8, 7168, 2.0) == 114_688
    assert expert_load("deepseek-v3", 8, 64).dispatch_bytes == 7_340_032


def test_all_to_all_inside_one_node() -> None:
    # Busiest GPU receives 16 pairs of 1,000 values x 2 bytes; of them 7/8 from the other 7 GPUs of its
    # node: 16 x 7/8 x 2,000 = 28,000 bytes over 450 GB/s = 62.2 ns, plus NVLink's 5 us latency.
    assert all_to_all_time_s(16, 1000, 2.0, 8, 8, NVLINK, NDR) == pytest.approx(5e-6 + 28_000 / 450e9)


def test_all_to_all_across_two_nodes_waits_for_the_network() -> None:
    # 16 GPUs in nodes of 8: of the busiest GPU's 16 pairs, 7/16 come over NVLink (14,000 bytes, 31 ns) and
    # 8/16 over the network (16,000 bytes / 50 GB/s = 320 ns): the network sets it, with its 15 us latency.
    assert all_to_all_time_s(16, 1000, 2.0, 16, 8, NVLINK, NDR) == pytest.approx(15e-6 + 16_000 / 50e9)
    # Communication efficiency 0.5 halves both bandwidths.
    assert all_to_all_time_s(16, 1000, 2.0, 16, 8, NVLINK, NDR, 0.5) == pytest.approx(15e-6 + 32_000 / 50e9)


def test_one_gpu_sends_nothing() -> None:
    assert all_to_all_time_s(16, 1000, 2.0, 1, 8, NVLINK, NDR) == 0.0


def test_balanced_pairs_inside_a_node_match_the_balanced_all_to_all() -> None:
    # With every GPU receiving the mean T k / G pairs, the time is the plain all-to-all of each GPU's share
    # T k h b / G, of which (G - 1) / G leaves: the interconnect module's formula.
    tokens, k, h, gpus = 64, 8, 7168, 8
    share = dispatch_bytes(tokens, k, h, 2.0) / gpus
    assert all_to_all_time_s(tokens * k / gpus, h, 2.0, gpus, 8, NVLINK, NDR) == pytest.approx(
        balanced_all_to_all_time_s(share, gpus, NVLINK)
    )


def test_mixtral_batch_1_on_8_gpus() -> None:
    # Mixtral 8x7B: 8 experts, top-2; on 8 GPUs each holds one. One token touches 2 experts on 2 GPUs:
    # busiest holds 1, mean 8 (1 - 6/8) / 8 = 0.25 per GPU, so the busiest reads 4x the mean.
    load = expert_load("mixtral-8x7b", 8, 1)
    assert load.experts_touched == pytest.approx(2.0)
    assert load.busiest_gpu_experts == pytest.approx(1.0)
    assert load.imbalance == pytest.approx(4.0)
    assert load.touched_share == pytest.approx(0.25)


def test_the_busiest_gpu_runs_one_mixtral_expert_whether_a_token_picks_2_or_all_8() -> None:
    # One token on 8 GPUs holding one expert each: with top-2 the busiest GPU runs 1 expert (4x the mean of
    # 0.25), with all 8 picked every GPU runs its 1. The same expert work either way, and the router (no
    # expert) the same too: it was scaled by the 4x and made top-2 the slower step (a property test found it).
    def step(per_token: int) -> float:
        scenario = Scenario("mixtral-8x7b", "a100-sxm-80gb", level="refined", gpus=8, expert_parallel=True)
        moe = scenario.setup.model.moe
        assert moe is not None
        model = replace(scenario.setup.model, moe=replace(moe, experts_per_token=per_token))
        return decode_step(replace(scenario.setup, model=model), batch=1, context_tokens=1).time_s

    assert step(2) == pytest.approx(step(8), rel=1e-12)


def test_deepseek_v3_touches_every_expert_only_at_large_batch() -> None:
    # 256 (1 - (31/32)^T): T = 1 -> 8 (3.1 %); T = 32 -> 256 (1 - 0.3621) = 163.3; T = 256 -> 256 - 0.08.
    assert expert_load("deepseek-v3", 8, 1).touched_share == pytest.approx(8 / 256)
    assert expert_load("deepseek-v3", 8, 32).experts_touched == pytest.approx(163.3, abs=0.1)
    assert expert_load("deepseek-v3", 8, 256).experts_touched == pytest.approx(255.92, abs=0.01)
    assert expert_load("deepseek-v3", 8, 1).imbalance == pytest.approx(2.5637, abs=1e-4)


def test_dense_model_is_rejected_with_a_fix() -> None:
    with pytest.raises(ValueError, match=r"dense: pick e\.g\. 'mixtral-8x7b'"):
        expert_load("dense-8b", 8, 1)


@pytest.mark.parametrize("mode", ["peak", "calibrated"])
def test_decode_all_to_alls_use_the_busiest_receiver(mode: str) -> None:
    # DeepSeek-V3 decode at batch 16 on 8 H200s with data-parallel attention: 58 MoE layers, each one
    # dispatch and one combine; the busiest GPU receives more than the mean 16 x 8 / 8 = 16 pairs.
    def step(ep: bool) -> float:
        return Scenario(
            "deepseek-v3", "h200", gpus=8, precision="fp8", level="refined", expert_parallel=ep,
            data_parallel_attention=True, mode=mode,
        ).decode(16, 2048).all_to_all_time_s  # fmt: skip

    pairs = busiest_gpu_pairs(256, 8, 8, 16)
    assert pairs > 16 * 1.2
    if mode == "peak":
        assert step(True) == pytest.approx(116 * all_to_all_time_s(pairs, 7168, 2.0, 8, 8, NVLINK, NDR))
        assert step(False) == pytest.approx(116 * all_to_all_time_s(16, 7168, 2.0, 8, 8, NVLINK, NDR))
    assert step(True) > step(False)
