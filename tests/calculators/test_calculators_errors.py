"""Bad input raises ``ValueError`` naming the field, the value and what is allowed; nothing else breaks.

Widgets show these messages inline and the build prints them, so each test checks the words a reader needs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from calculators import (
    Scenario,
    custom_dense_model,
    custom_gpu,
    get_gpu,
    get_model,
    get_precision,
    make_setup,
    ridge_point,
    roofline_time,
)
from calculators.units import format_value

BAD_NUMBERS: list[Any] = [0, -1, -0.5, math.nan, math.inf, -math.inf, True, "2000", None]
BAD_COUNTS: list[Any] = [*BAD_NUMBERS, 2.5]


def _message(call: Callable[[], object]) -> str:
    with pytest.raises(ValueError) as info:  # noqa: PT011 - the message is checked by each caller
        call()
    return str(info.value)


@pytest.mark.parametrize("value", BAD_COUNTS, ids=repr)
@pytest.mark.parametrize(
    ("field", "call"),
    [
        pytest.param("prompt_tokens", lambda v: Scenario().prefill(v), id="prefill-prompt"),
        pytest.param("batch", lambda v: Scenario().prefill(100, batch=v), id="prefill-batch"),
        pytest.param("batch", lambda v: Scenario().decode(batch=v), id="decode-batch"),
        pytest.param("context_tokens", lambda v: Scenario().decode(context_tokens=v), id="decode-context"),
        pytest.param("output_tokens", lambda v: Scenario().request(100, v), id="request-output"),
        pytest.param("gpus", lambda v: Scenario(gpus=v), id="gpus"),
        pytest.param("context_tokens", lambda v: Scenario().max_batch(v), id="max-batch-context"),
    ],
)
def test_bad_counts_name_field_and_value(field: str, call: Callable[[Any], object], value: Any) -> None:
    message = _message(lambda: call(value))
    assert field in message
    assert repr(value) in message
    assert "whole number >= 1" in message


@pytest.mark.parametrize("value", BAD_NUMBERS, ids=repr)
@pytest.mark.parametrize(
    ("field", "call"),
    [
        ("compute_efficiency", lambda v: Scenario(compute_efficiency=v)),
        ("memory_efficiency", lambda v: Scenario(memory_efficiency=v)),
        ("bf16_tflops", lambda v: custom_gpu(bf16_tflops=v, memory_bandwidth_tb_per_s=3, memory_gb=80)),
        (
            "memory_bandwidth_tb_per_s",
            lambda v: custom_gpu(bf16_tflops=1, memory_bandwidth_tb_per_s=v, memory_gb=1),
        ),
        ("memory_gb", lambda v: custom_gpu(bf16_tflops=1, memory_bandwidth_tb_per_s=1, memory_gb=v)),
        ("params_billion", lambda v: custom_dense_model(params_billion=v)),
        ("flops", lambda v: roofline_time(v, 1.0, "h100-sxm")),
        ("bytes_moved", lambda v: roofline_time(1.0, v, "h100-sxm")),
    ],
)
def test_bad_numbers_name_field_and_value(field: str, call: Callable[[Any], object], value: Any) -> None:
    message = _message(lambda: call(value))
    assert field in message
    assert repr(value) in message
    assert "greater than 0" in message


@pytest.mark.parametrize("field", ["compute_efficiency", "memory_efficiency"])
def test_efficiency_above_one_is_rejected(field: str) -> None:
    message = _message(lambda: Scenario(**{field: 1.5}))
    assert field in message
    assert "1.5" in message
    assert "(0, 1]" in message


@pytest.mark.parametrize(
    ("call", "kind", "typed", "suggested"),
    [
        (lambda: get_gpu("h100"), "GPU", "h100", "h100-sxm"),
        (lambda: get_gpu("h200-sxm"), "GPU", "h200-sxm", "h200"),
        (lambda: Scenario(gpu="a100"), "GPU", "a100", "a100-sxm-80gb"),
        (lambda: get_model("llama-8b"), "model", "llama-8b", "llama-3.1-8b"),
        (lambda: Scenario("mixtral"), "model", "mixtral", "mixtral-8x7b"),
        (lambda: get_model("Qwen2.5-7B"), "model", "Qwen2.5-7B", "qwen2.5-7b"),
    ],
)
def test_unknown_presets_suggest_close_names(
    call: Callable[[], object], kind: str, typed: str, suggested: str
) -> None:
    message = _message(call)
    assert f"unknown {kind} {typed!r}" in message
    did_you_mean = message.split("Did you mean", 1)[1].split("?", 1)[0]
    assert repr(suggested) in did_you_mean


@pytest.mark.parametrize("value", [None, 3, 1.5])
def test_preset_that_is_not_a_name(value: object) -> None:
    assert repr(value) in _message(lambda: get_gpu(value))  # type: ignore[arg-type]
    assert repr(value) in _message(lambda: get_model(value))  # type: ignore[arg-type]


def test_batch_that_does_not_fit() -> None:
    # Llama-3.1-8B BF16 on an H100: 16.06 GB of weights + 1,000 x 4,096 tokens x 131,072 B = 537 GB of cache
    message = _message(lambda: Scenario("llama-3.1-8b", "h100-sxm", level="refined").decode(1000, 4096))
    assert "batch 1000" in message
    assert "4,096 tokens" in message
    assert "does not fit" in message
    assert "85.5 GB" in message  # what the H100 reports (81,559 MiB), not its "80 GB" label
    assert "ignore_memory=True" in message  # the what-if way out
    # the weights alone: 141.1 GB of Llama-3.1-70B in BF16 on one 141 GB H200
    assert "does not fit" in _message(lambda: Scenario("llama-3.1-70b", "h200").decode())
    assert "does not fit" in _message(lambda: Scenario("llama-3.1-70b", "h200").request(100, 10))


def test_unsupported_precision() -> None:
    # FP8 weights on an A100 are computed in BF16 (weight-only); asking for FP8 maths there is an error
    assert Scenario("dense-8b", "a100-sxm-80gb", precision="fp8").setup.arithmetic == "bf16"
    message = _message(
        lambda: Scenario("dense-8b", "a100-sxm-80gb", precision="fp8", arithmetic_format="fp8")
    )
    assert "arithmetic_format 'fp8'" in message
    assert "A100" in message
    assert "bf16" in message  # what is supported
    message = _message(lambda: get_precision("int3"))
    assert "precision" in message
    assert "'int3'" in message
    assert "bf16, fp4, fp8, int4, int8" in message
    assert "'fp8'" in _message(lambda: ridge_point("a100-sxm-80gb", "fp8"))


@pytest.mark.parametrize("level", ["fast", "", "Simple", None, 1])
def test_bad_level(level: object) -> None:
    message = _message(lambda: make_setup(level=level))  # type: ignore[arg-type]
    assert "level" in message
    assert repr(level) in message
    assert "refined, simple" in message


def test_size_only_model_needs_the_simple_level() -> None:
    model = custom_dense_model(params_billion=70)
    message = _message(lambda: Scenario(model, level="refined"))
    assert "refined" in message
    assert "simple" in message
    assert "max_batch" in _message(lambda: Scenario(model, "b200").max_batch(1000))


def test_bad_unit() -> None:
    message = _message(lambda: format_value(1.0, "furlongs"))
    assert "unit" in message
    assert "'furlongs'" in message


def test_errors_leave_the_calculators_working() -> None:
    lesson = Scenario()
    with pytest.raises(ValueError, match="prompt_tokens"):
        lesson.prefill(-5)
    assert lesson.decode().time_s == pytest.approx(16e9 / 3.35e12)
