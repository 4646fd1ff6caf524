"""Properties of the calculators that must hold for every valid input, checked with Hypothesis.

Time never falls as the model, the prompt or the context grows; the simple model's prefill intensity is P;
a pass is compute-bound exactly when its intensity reaches the ridge point; every result is finite and
positive. Inputs are drawn from every preset, both levels, both precisions, tensor parallelism and efficiency
factors, and only setups whose weights and KV cache fit in memory are kept.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from calculators import GPUS, MODELS, PRECISIONS, custom_dense_model, get_gpu, max_batch, roofline_time
from calculators.passes import LEVELS, PassResult, Setup, decode_step, make_setup, mixed_step, prefill
from calculators.serving import request_timing

pytestmark = pytest.mark.properties

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def setups(
    draw: st.DrawFn, level: str | None = None, precision: str | None = None, models: list[str] | None = None
) -> Setup:
    gpu = draw(st.sampled_from(sorted(GPUS)))
    model = draw(st.sampled_from(models or sorted(MODELS)))
    return make_setup(
        model,
        gpu,
        precision=precision or draw(st.sampled_from(sorted(PRECISIONS))),
        level=level or draw(st.sampled_from(LEVELS)),
        gpus=draw(st.sampled_from([1, 2, 4, 8, 16])),
        compute_efficiency=draw(st.floats(0.05, 1.0)),
        memory_efficiency=draw(st.floats(0.05, 1.0)),
        kv_cache_format=draw(st.sampled_from(sorted(PRECISIONS))),
        kv_traffic=draw(st.booleans()),
        pipeline_stages=draw(st.sampled_from([1, 2])),
        expert_parallel=MODELS[model].moe is not None and draw(st.booleans()),
        step_overhead_s=draw(st.sampled_from([0.0, 1e-3])),
    )


def fitting_batch(draw: st.DrawFn, setup: Setup, context: int) -> int:
    """A batch that fits at ``context`` tokens; rejects setups where not even one sequence does."""
    largest = max_batch(setup, context)
    assume(largest >= 1)
    return draw(st.integers(1, min(largest, 1024)))


tokens = st.integers(1, 200_000)


def assert_sane(result: PassResult) -> None:
    for key, value in result.as_dict().items():
        if isinstance(value, float | int) and not isinstance(value, bool):
            assert math.isfinite(value), key
            assert value >= 0, key
    assert result.flops > 0
    assert result.bytes_moved > 0
    assert result.time_s > 0
    # the pass time is the sum of its operators' times (communication included) plus the fixed overhead
    assert result.time_s == pytest.approx(sum(op.time_s for op in result.operators) + result.overhead_s)
    for op in result.operators:
        assert op.time_s == max(op.compute_time_s, op.memory_time_s)


# ---- time never falls ---


@FAST
@given(data=st.data(), setup=setups(), a=tokens, b=tokens)
def test_prefill_time_never_falls_as_the_prompt_grows(
    data: st.DataObject, setup: Setup, a: int, b: int
) -> None:
    short, long = sorted((a, b))
    batch = fitting_batch(data.draw, setup, long)
    assert prefill(setup, short, batch=batch).time_s <= prefill(setup, long, batch=batch).time_s


@FAST
@given(data=st.data(), setup=setups(), a=tokens, b=tokens)
def test_decode_time_never_falls_as_the_context_grows(
    data: st.DataObject, setup: Setup, a: int, b: int
) -> None:
    short, long = sorted((a, b))
    batch = fitting_batch(data.draw, setup, long)
    before = decode_step(setup, batch=batch, context_tokens=short)
    after = decode_step(setup, batch=batch, context_tokens=long)
    assert before.time_s <= after.time_s
    assert before.bytes_moved <= after.bytes_moved


@FAST
@given(data=st.data(), setup=setups(), context=tokens)
def test_decode_time_never_falls_as_the_batch_grows(data: st.DataObject, setup: Setup, context: int) -> None:
    big = fitting_batch(data.draw, setup, context)
    small = data.draw(st.integers(1, big))
    assert (
        decode_step(setup, batch=small, context_tokens=context).time_s
        <= decode_step(setup, batch=big, context_tokens=context).time_s
    )


@FAST
@given(
    gpu=st.sampled_from(sorted(GPUS)),
    sizes=st.lists(st.floats(0.1, 2000), min_size=2, max_size=2),
    prompt=tokens,
    gpus=st.sampled_from([1, 2, 8, 64]),
)
def test_simple_time_never_falls_as_parameters_grow(
    gpu: str, sizes: list[float], prompt: int, gpus: int
) -> None:
    small, large = sorted(sizes)
    chip = get_gpu(gpu)
    before = make_setup(custom_dense_model(params_billion=small), chip, gpus=gpus, ignore_memory=True)
    after = make_setup(custom_dense_model(params_billion=large), chip, gpus=gpus, ignore_memory=True)
    assert prefill(before, prompt).time_s <= prefill(after, prompt).time_s
    assert decode_step(before).time_s <= decode_step(after).time_s


@FAST
@given(
    data=st.data(), setup=setups(level="refined"), extra_layers=st.integers(0, 40), wider=st.integers(0, 8192)
)
def test_refined_time_never_falls_as_the_model_grows(
    data: st.DataObject, setup: Setup, extra_layers: int, wider: int
) -> None:
    model = setup.model
    grown = replace(
        setup, model=replace(model, layers=model.layers + extra_layers, mlp_width=model.mlp_width + wider)
    )
    context = data.draw(st.integers(1, 32_768))
    batch = fitting_batch(data.draw, grown, context)
    assert grown.model.derived_params >= model.derived_params
    for phase in (
        lambda s: prefill(s, context, batch=batch),
        lambda s: decode_step(s, batch=batch, context_tokens=context),
    ):
        assert phase(setup).time_s <= phase(grown).time_s


# ---- intensity and the ridge point ---


DENSE = sorted(key for key, model in MODELS.items() if model.moe is None)


@FAST
@given(data=st.data(), bf16=setups(level="simple", precision="bf16", models=DENSE), prompt=tokens)
def test_simple_prefill_intensity_is_p_in_bf16(data: st.DataObject, bf16: Setup, prompt: int) -> None:
    bf16 = replace(bf16, kv_traffic=False)
    batch = fitting_batch(data.draw, bf16, prompt)
    # 2N FLOPs per token over 2N bytes of weights: P FLOP/byte per prompt (B x P for B prompts)
    assert prefill(bf16, prompt).intensity_flop_per_byte == pytest.approx(prompt, rel=1e-12)
    assert prefill(bf16, prompt, batch=batch).intensity_flop_per_byte == pytest.approx(
        batch * prompt, rel=1e-12
    )
    assert decode_step(bf16, batch=batch).intensity_flop_per_byte == pytest.approx(batch, rel=1e-12)


@FAST
@given(
    data=st.data(), setup=setups(level="simple"), context=tokens, phase=st.sampled_from(["prefill", "decode"])
)
def test_compute_bound_exactly_at_or_above_the_ridge(
    data: st.DataObject, setup: Setup, context: int, phase: str
) -> None:
    # The simple level without KV traffic is one operator: its bound is the lessons' definition.
    setup = replace(setup, kv_traffic=False)
    batch = fitting_batch(data.draw, setup, context)
    result = (
        prefill(setup, context, batch=batch)
        if phase == "prefill"
        else decode_step(setup, batch=batch, context_tokens=context)
    )
    at_or_above = result.intensity_flop_per_byte >= result.ridge_point_flop_per_byte
    assert (result.bound == "compute") == at_or_above
    if not math.isclose(result.compute_time_s, result.memory_time_s, rel_tol=1e-12):
        assert (result.bound == "compute") == (result.compute_time_s >= result.memory_time_s)


@FAST
@given(
    flops=st.floats(1e-3, 1e22),
    bytes_moved=st.floats(1e-3, 1e16),
    gpu=st.sampled_from(sorted(GPUS)),
    gpus=st.integers(1, 64),
    efficiencies=st.tuples(st.floats(0.01, 1.0), st.floats(0.01, 1.0)),
)
def test_roofline_bound_agrees_with_the_times(
    flops: float, bytes_moved: float, gpu: str, gpus: int, efficiencies: tuple[float, float]
) -> None:
    r = roofline_time(
        flops,
        bytes_moved,
        gpu,
        gpus=gpus,
        compute_efficiency=efficiencies[0],
        memory_efficiency=efficiencies[1],
    )
    assert (r.bound == "compute") == (r.intensity_flop_per_byte >= r.ridge_point_flop_per_byte)
    if not math.isclose(r.compute_time_s, r.memory_time_s, rel_tol=1e-12):
        assert (r.bound == "compute") == (r.compute_time_s >= r.memory_time_s)
    assert r.time_s > 0
    assert math.isfinite(r.time_s)


# ---- finite and positive ---


@FAST
@given(data=st.data(), setup=setups(), prompt=tokens, output=st.integers(1, 100_000))
def test_results_are_finite_and_positive(data: st.DataObject, setup: Setup, prompt: int, output: int) -> None:
    batch = fitting_batch(data.draw, setup, prompt + output)
    assert_sane(prefill(setup, prompt, batch=batch))
    assert_sane(decode_step(setup, batch=batch, context_tokens=prompt + output))
    timing = request_timing(setup, prompt, output, batch=batch)
    for key, value in timing.as_dict().items():
        assert math.isfinite(value), key
        assert value >= 0, key
    assert timing.time_to_first_token_s > 0
    assert timing.tokens_per_s_total > 0
    # the last step is the slowest, the first the fastest: the mean lies between
    if output > 1:
        last = decode_step(setup, batch=batch, context_tokens=prompt + output - 1).time_s
        assert timing.first_decode.time_s * (1 - 1e-9) <= timing.time_per_output_token_s <= last * (1 + 1e-9)


# ---- the per-operator model ---


steps = st.tuples(
    st.lists(st.integers(1, 50_000), max_size=40),
    st.lists(st.tuples(st.integers(1, 8192), st.integers(0, 50_000)), max_size=4),
).filter(lambda step: bool(step[0] or step[1]))


def _what_if(setup: Setup) -> Setup:
    return replace(setup, ignore_memory=True)


@FAST
@given(setup=setups(level="simple"), step=steps)
def test_kv_traffic_switch_never_lowers_a_time(
    setup: Setup, step: tuple[list[int], list[tuple[int, int]]]
) -> None:
    assume(setup.model.shapes_known)
    without = _what_if(replace(setup, kv_traffic=False))
    with_kv = _what_if(replace(setup, kv_traffic=True))
    contexts, chunks = step
    a = mixed_step(without, decode_contexts=contexts, prefill_chunks=chunks)
    b = mixed_step(with_kv, decode_contexts=contexts, prefill_chunks=chunks)
    assert a.time_s <= b.time_s
    assert_sane(b)


@FAST
@given(setup=setups(), step=steps, more_context=st.integers(0, 10_000), more_batch=st.integers(0, 64))
def test_more_context_or_batch_never_lowers_a_step(
    setup: Setup, step: tuple[list[int], list[tuple[int, int]]], more_context: int, more_batch: int
) -> None:
    setup = _what_if(setup)
    contexts, chunks = step
    base = mixed_step(setup, decode_contexts=contexts, prefill_chunks=chunks)
    longer = mixed_step(setup, decode_contexts=[c + more_context for c in contexts], prefill_chunks=chunks)
    bigger = mixed_step(setup, decode_contexts=contexts + [1000] * more_batch, prefill_chunks=chunks)
    assert base.time_s <= longer.time_s * (1 + 1e-12)
    assert base.time_s <= bigger.time_s * (1 + 1e-12)
    assert_sane(base)


@FAST
@given(setup=setups(), step=steps, lower=st.floats(0.05, 1.0))
def test_lower_efficiency_never_lowers_a_time(
    setup: Setup, step: tuple[list[int], list[tuple[int, int]]], lower: float
) -> None:
    setup = _what_if(setup)
    contexts, chunks = step
    base = mixed_step(setup, decode_contexts=contexts, prefill_chunks=chunks).time_s
    for field in ("compute_efficiency", "memory_efficiency", "communication_efficiency"):
        slower = replace(setup, **{field: getattr(setup, field) * lower})
        assert base <= mixed_step(slower, decode_contexts=contexts, prefill_chunks=chunks).time_s * (
            1 + 1e-12
        )


@FAST
@given(setup=setups(), more=st.sampled_from([2, 4, 8]))
def test_more_gpus_never_raise_the_memory_each_gpu_holds(setup: Setup, more: int) -> None:
    bigger = replace(setup, gpus=setup.gpus * more)
    assert bigger.memory.weight_bytes_per_gpu <= setup.memory.weight_bytes_per_gpu
    per_gpu = setup.memory.kv_bytes_per_token / setup.memory.gpus
    assert bigger.memory.kv_bytes_per_token / bigger.memory.gpus <= per_gpu * (1 + 1e-12)


MOE = sorted(key for key, model in MODELS.items() if model.moe is not None)


@FAST
@given(setup=setups(models=MOE), batch=st.integers(1, 4096), context=st.integers(1, 10_000))
def test_moe_time_lies_between_active_only_and_all_experts(setup: Setup, batch: int, context: int) -> None:
    # Lower bound: a model whose only experts are the k each token runs (same FLOPs, fewest bytes).
    # Upper bound: every token runs all E experts (the old "treat the MoE as dense" count).
    setup = _what_if(setup)
    moe = setup.model.moe
    assert moe is not None
    only_active = replace(setup, model=replace(setup.model, moe=replace(moe, experts=moe.experts_per_token)))
    all_experts = replace(setup, model=replace(setup.model, moe=replace(moe, experts_per_token=moe.experts)))
    for run in (
        lambda s: decode_step(s, batch=batch, context_tokens=context),
        lambda s: prefill(s, context, batch=min(batch, 4)),
    ):
        low, mid, high = run(only_active).time_s, run(setup).time_s, run(all_experts).time_s
        # Under expert parallelism k experts on G GPUs are unevenly held unless G divides k (Mixtral's 2 on 8
        # GPUs leave 6 idle), and the step waits for the busiest GPU: no lower bound then.
        if not setup.expert_parallel or moe.experts_per_token % setup.gpus == 0:
            assert low <= mid * (1 + 1e-12)
        assert mid <= high * (1 + 1e-12)


@FAST
@given(setup=setups(), step=steps)
def test_prefill_and_decode_are_the_mixed_step(
    setup: Setup, step: tuple[list[int], list[tuple[int, int]]]
) -> None:
    setup = _what_if(setup)
    contexts, _ = step
    context = contexts[0] if contexts else 100
    assert decode_step(setup, batch=3, context_tokens=context).time_s == pytest.approx(
        mixed_step(setup, decode_contexts=[context] * 3).time_s, rel=1e-12
    )
    assert prefill(setup, context, batch=2).time_s == pytest.approx(
        mixed_step(setup, prefill_chunks=[(context, 0)] * 2).time_s, rel=1e-12
    )
