"""Honest bound labels: "compute-bound" only when the compute time exceeds the memory time (issue 25, part 6).

An audit of 740,000 passes found 8,674 labelled compute-bound with the larger memory time: the pass was
named by the kind of operator that took most of its time. A step whose weight products are compute-bound
while its cache reads make the memory time the larger is now "mixed", and says so.
"""

from __future__ import annotations

import itertools

import pytest

from calculators import Scenario, mixed_step


def test_the_audits_example_is_mixed_not_compute_bound() -> None:
    step = Scenario("dense-8b", "h100-sxm", kv_traffic=True).decode(batch=300, context_tokens=128)
    assert step.compute_time_s == pytest.approx(4.87e-3, rel=0.01)
    assert step.memory_time_s == pytest.approx(6.29e-3, rel=0.01)
    assert step.bound == "mixed"
    assert step.bound_label == "mixed (compute- and memory-bound parts)"
    assert step.as_dict()["bound"] == "mixed"


def test_a_clear_case_keeps_its_one_word_label() -> None:
    lesson = Scenario("dense-8b", "h100-sxm")
    assert lesson.prefill(2000).bound == "compute"
    assert lesson.decode(batch=1).bound == "memory"
    assert lesson.decode(batch=1).bound_label == "memory-bound"


GRID = list(
    itertools.product(
        [("dense-8b", "simple"), ("llama-3.1-8b", "refined"), ("mixtral-8x7b", "refined")],
        ["h100-sxm", "a100-sxm-80gb", "l4"],
        [True, False],
        [1, 8, 64, 256, 300, 512, 2048],
        [1, 128, 400, 2000, 32000],
    )
)


@pytest.mark.parametrize("kv_traffic", [True, False])
def test_no_pass_or_operator_is_compute_bound_with_the_larger_memory_time(kv_traffic: bool) -> None:
    labels = set()
    for (model, level), gpu, _, batch, context in (g for g in GRID if g[2] == kv_traffic):
        scenario = Scenario(model, gpu, level=level, kv_traffic=kv_traffic, ignore_memory=True)
        passes = [
            scenario.decode(batch=batch, context_tokens=context),
            scenario.prefill(context, batch=1),
            mixed_step(scenario.setup, decode_contexts=[context] * batch, prefill_chunks=[(512, 0)]),
        ]
        for result in passes:
            labels.add(result.bound)
            if result.bound == "compute":
                assert result.compute_time_s > result.memory_time_s, (model, gpu, batch, context)
            if result.bound == "memory":
                assert result.memory_time_s >= result.compute_time_s, (model, gpu, batch, context)
            for op in result.operators:
                if op.bound == "compute":
                    assert op.compute_time_s > op.memory_time_s or op.bytes_moved == 0, op
                elif op.bound == "memory":
                    assert op.memory_time_s >= op.compute_time_s, op
    assert {"compute", "memory"} <= labels
    if kv_traffic:
        assert "mixed" in labels


@pytest.mark.parametrize("precision", ["fp8", "int4", "fp4"])
def test_the_simple_level_keeps_the_embedding_and_output_layer_in_bf16_as_the_refined_level_does(
    precision: str,
) -> None:
    # Before: 8B weights 13% (FP8) and 36-40% (INT4, FP4) smaller at the simple level than at the refined.
    simple = Scenario("llama-3.1-8b", precision=precision).weight_bytes
    refined = Scenario("llama-3.1-8b", precision=precision, level="refined").weight_bytes
    assert simple == pytest.approx(refined, rel=1e-3)
