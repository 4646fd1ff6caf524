"""Collectives past a GPU preset's NVLink domain run over the inter-node link (GPU.domain_gpus)."""

from __future__ import annotations

import pytest

from calculators.hardware import get_gpu
from calculators.models import get_model
from calculators.passes import Setup, decode_step


def _comm(gpu: str, gpus: int, stages: int = 1, interconnect: str | None = None) -> dict[str, float]:
    setup = Setup(
        get_model("llama-3.1-70b"), get_gpu(gpu), level="refined", gpus=gpus, pipeline_stages=stages,
        interconnect=interconnect, ignore_memory=True,
    )  # fmt: skip
    step = decode_step(setup, batch=1, context_tokens=100)
    return {op.name.split(" (")[0]: op.time_s for op in step.operators if op.kind == "communication"}


# Llama-3.1 70B: 80 layers, hidden 8192. One decode token's activations: 8192 x 2 B = 16,384 B per all-reduce,
# 1 + 80 + 80 = 161 all-reduces a step.
BUFFER, REDUCES = 8192 * 2, 161


def test_presets_carry_their_domain() -> None:
    assert get_gpu("h100-sxm").domain_gpus == 8
    assert get_gpu("h200").domain_gpus == 8
    assert get_gpu("gb200").domain_gpus == 72
    assert "NVL72" in get_gpu("gb200").domain_source


def test_tensor_parallel_past_8_h100s_runs_over_infiniband() -> None:
    # 16 GPUs: InfiniBand NDR (15 us fixed, 2.7 us a step, 50 GB/s a card), the eight cards of a server
    # together: min(450, 8 x 50) = 400 GB/s. A tree: 2 x log2(16) = 8 steps, 15 + 8 x 2.7 = 36.6 us, plus
    # 2 x 16,384 B / 400e9 B/s = 0.08192 us: 36.68192 us each. (A ring would take 2 x 15 = 30 steps:
    # 15 + 81 + 0.0768 = 96.0768 us.)
    each = 36.68192e-6
    assert _comm("h100-sxm", 16)["tensor-parallel all-reduces"] == pytest.approx(REDUCES * each)
    # 8 GPUs stay on NVLink 4 (5 us, 0.6 us a step, 450 GB/s): a tree of 2 x 3 = 6 steps, 5 + 3.6 us, plus
    # 2 x 16,384 / 450e9 = 0.072818 us: 8.672818 us each (the ring: 5 + 14 x 0.6 + 0.0637 = 13.4637 us).
    inside = 8.672818e-6
    assert _comm("h100-sxm", 8)["tensor-parallel all-reduces"] == pytest.approx(REDUCES * inside, rel=1e-6)


def test_gb200_nvl72_keeps_nvlink_at_16_gpus() -> None:
    # NVLink 5: a tree of 8 steps, 5 + 8 x 0.6 = 9.8 us, plus 2 x 16,384 / 900e9 = 0.036409 us.
    each = 9.836409e-6
    assert _comm("gb200", 16)["tensor-parallel all-reduces"] == pytest.approx(REDUCES * each, rel=1e-6)


def test_a_chosen_interconnect_wins() -> None:
    # NVLink 4 at 16 GPUs: 9.8 us + 2 x 16,384 / 450e9 = 0.072818 us.
    each = 9.872818e-6
    assert _comm("h100-sxm", 16, interconnect="nvlink4")["tensor-parallel all-reduces"] == pytest.approx(
        REDUCES * each, rel=1e-6
    )


def test_pipeline_stages_past_the_domain_send_over_infiniband() -> None:
    # 8-way tensor parallel x 2 stages = 16 GPUs: the all-reduces stay on NVLink, the one stage boundary
    # send crosses nodes: 15 us + 16,384 B / 50e9 B/s = 15.328 us (a send is one step: no per-step term).
    comm = _comm("h100-sxm", 8, stages=2)
    assert comm["pipeline sends"] == pytest.approx(15e-6 + BUFFER / 50e9)
    assert comm["tensor-parallel all-reduces"] == pytest.approx(REDUCES * 8.672818e-6, rel=1e-6)


def test_only_the_stage_boundaries_between_servers_cross_the_network() -> None:
    # 4-way tensor parallel x 4 stages = 16 GPUs on two servers of eight: stages 1-2 on the first, 3-4 on the
    # second, so of the 3 boundaries one crosses (15.328 us, as above) and two stay on NVLink 4:
    # 5 us + 16,384 / 450e9 = 5.036409 us each. In all 15.32768 + 10.072818 = 25.400498 us.
    comm = _comm("h100-sxm", 4, stages=4)
    assert comm["pipeline sends"] == pytest.approx(25.400498e-6, rel=1e-6)
    # (tensor-parallel GPUs, stages): boundaries across servers of eight.
    crossings = {(4, 4): 1, (8, 4): 3, (16, 2): 1, (2, 8): 1, (1, 8): 0, (4, 2): 0, (2, 16): 3}
    for (gpus, stages), across in crossings.items():
        setup = Setup(
            get_model("llama-3.1-70b"), get_gpu("h100-sxm"), gpus=gpus, pipeline_stages=stages,
            ignore_memory=True,
        )  # fmt: skip
        assert setup.stage_boundaries_across_servers == across, (gpus, stages)
    # A chosen interconnect is every GPU's link: no boundary is told apart.
    chosen = Setup(
        get_model("llama-3.1-70b"), get_gpu("h100-sxm"), gpus=4, pipeline_stages=4, interconnect="nvlink4",
        ignore_memory=True,
    )  # fmt: skip
    assert chosen.stage_boundaries_across_servers == 0
