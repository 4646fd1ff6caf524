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
    # 16 GPUs: InfiniBand NDR, 15 us + 2 x 15/16 x 16,384 B / 50e9 B/s = 15 + 0.6144 us = 15.6144 us each.
    each = 15e-6 + 2 * 15 / 16 * BUFFER / 50e9
    assert _comm("h100-sxm", 16)["tensor-parallel all-reduces"] == pytest.approx(REDUCES * each)
    # 8 GPUs stay on NVLink 4: 5 us + 2 x 7/8 x 16,384 / 450e9 = 5.0637 us each.
    inside = 5e-6 + 2 * 7 / 8 * BUFFER / 450e9
    assert _comm("h100-sxm", 8)["tensor-parallel all-reduces"] == pytest.approx(REDUCES * inside)


def test_gb200_nvl72_keeps_nvlink_at_16_gpus() -> None:
    # NVLink 5: 5 us + 2 x 15/16 x 16,384 / 900e9 = 5.0341 us each.
    each = 5e-6 + 2 * 15 / 16 * BUFFER / 900e9
    assert _comm("gb200", 16)["tensor-parallel all-reduces"] == pytest.approx(REDUCES * each)


def test_a_chosen_interconnect_wins() -> None:
    each = 5e-6 + 2 * 15 / 16 * BUFFER / 450e9
    assert _comm("h100-sxm", 16, interconnect="nvlink4")["tensor-parallel all-reduces"] == pytest.approx(
        REDUCES * each
    )


def test_pipeline_stages_past_the_domain_send_over_infiniband() -> None:
    # 8-way tensor parallel x 2 stages = 16 GPUs: the all-reduces stay on NVLink, the one stage boundary
    # send crosses nodes: 15 us + 16,384 B / 50e9 B/s = 15.328 us.
    comm = _comm("h100-sxm", 8, stages=2)
    assert comm["pipeline sends"] == pytest.approx(15e-6 + BUFFER / 50e9)
    assert comm["tensor-parallel all-reduces"] == pytest.approx(REDUCES * (5e-6 + 2 * 7 / 8 * BUFFER / 450e9))
