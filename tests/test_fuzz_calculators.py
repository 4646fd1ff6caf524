"""Fuzzing the calculators' API and CLI: bad input gets a clear ValueError, good input a finite answer.

Inputs are drawn from everything a reader can type: preset names and typos, numbers of every size and sign,
NaN, infinities, strings and None, for every argument of the public functions and every CLI flag. Each draw
must either raise ``ValueError`` with a message that names what was wrong, or return finite numbers; the CLI
must never print a traceback, and with ``--json`` must always print valid JSON. 10,000 inputs in all
(6,000 API, 1,500 custom hardware, 2,500 CLI command lines), about 50 s on one core.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculators import GPUS, INTERCONNECTS, MODELS, PRECISIONS, Scenario, custom_dense_model, custom_gpu
from calculators.cli import main
from calculators.passes import LEVELS, mixed_step

pytestmark = pytest.mark.properties

MANY = settings(
    max_examples=6000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
CUSTOM = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CLI = settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])

weird_numbers = st.one_of(
    st.integers(-5, 5),
    st.integers(-(10**12), 10**13),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2, 0.5, 1e-300, 1e300, -1, 10**9, 10**9 + 1, 2**63]),
)
anything = st.one_of(weird_numbers, st.text(max_size=6), st.none(), st.booleans())
counts = st.one_of(st.integers(1, 5000), st.integers(1, 10**9), weird_numbers)


def _names(known: Any) -> st.SearchStrategy[Any]:
    return st.one_of(st.sampled_from(sorted(known)), anything)


def assert_finite(value: Any, where: str = "") -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            assert_finite(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            assert_finite(item, f"{where}[{i}]")
    elif isinstance(value, float):
        assert math.isfinite(value), where
        assert value >= 0 or where.endswith("kv_budget_bytes"), where


def assert_clear(error: ValueError) -> None:
    message = str(error)
    assert message, "an empty error message"
    assert len(message) < 2000
    assert "Traceback" not in message


@MANY
@given(
    model=_names(MODELS),
    gpu=_names(GPUS),
    options=st.fixed_dictionaries(
        {},
        optional={
            "precision": _names(PRECISIONS),
            "level": _names(LEVELS),
            "gpus": counts,
            "compute_efficiency": weird_numbers,
            "memory_efficiency": weird_numbers,
            "kv_cache_format": _names(PRECISIONS),
            "arithmetic_format": _names(PRECISIONS),
            "kv_traffic": anything,
            "pipeline_stages": counts,
            "expert_parallel": anything,
            "data_parallel_attention": anything,
            "interconnect": _names(INTERCONNECTS),
            "communication_efficiency": weird_numbers,
            "step_overhead_s": weird_numbers,
            "memory_utilization": weird_numbers,
            "ignore_memory": st.booleans(),
        },
    ),
    prompt=counts,
    output=counts,
    batch=counts,
    step=st.tuples(
        st.lists(counts, max_size=6),
        st.lists(st.one_of(st.tuples(counts, st.integers(-3, 10**6)), anything), max_size=3),
    ),
)
def test_api_never_escapes_with_anything_but_a_clear_value_error(
    model: Any, gpu: Any, options: dict[str, Any], prompt: Any, output: Any, batch: Any, step: Any
) -> None:
    try:
        scenario = Scenario(model, gpu, **options)
        contexts, chunks = step
        results = [
            scenario.prefill(prompt, batch=batch).as_dict(),
            scenario.decode(batch=batch, context_tokens=prompt).as_dict(),
            mixed_step(scenario.setup, decode_contexts=contexts, prefill_chunks=chunks).as_dict(),
            scenario.memory(batch, prompt).as_dict(),
        ]
        if isinstance(output, int) and 0 < output <= 10**6:
            results.append(scenario.request(prompt, output, batch=batch).as_dict())
        if scenario.model.shapes_known:
            results.append({"max_batch": scenario.max_batch(prompt)})
    except ValueError as error:
        assert_clear(error)
        return
    for result in results:
        assert_finite(result)


@CUSTOM
@given(
    tflops=weird_numbers,
    tbps=weird_numbers,
    gb=weird_numbers,
    params=weird_numbers,
    prompt=counts,
    batch=counts,
)
def test_custom_gpus_and_models_never_overflow(
    tflops: Any, tbps: Any, gb: Any, params: Any, prompt: Any, batch: Any
) -> None:
    try:
        gpu = custom_gpu(bf16_tflops=tflops, memory_bandwidth_tb_per_s=tbps, memory_gb=gb)
        model = custom_dense_model(params_billion=params)
        scenario = Scenario(model, gpu, ignore_memory=True)
        results = [scenario.prefill(prompt, batch=batch).as_dict(), scenario.decode(batch=batch).as_dict()]
        results.append(scenario.request(prompt, 3, batch=batch).as_dict())
        results.append({"max_context": float(scenario.setup.memory.max_context(batch))})
    except ValueError as error:
        assert_clear(error)
        return
    for result in results:
        assert_finite(result)


flags = st.one_of(
    st.tuples(st.sampled_from(["--model"]), _names(MODELS)),
    st.tuples(st.sampled_from(["--gpu"]), _names(GPUS)),
    st.tuples(
        st.sampled_from(["--precision", "--kv-cache-format", "--arithmetic-format"]), _names(PRECISIONS)
    ),
    st.tuples(st.sampled_from(["--level"]), _names(LEVELS)),
    st.tuples(st.sampled_from(["--interconnect"]), _names(INTERCONNECTS)),
    st.tuples(
        st.sampled_from(
            [
                "--prompt",
                "--output",
                "--batch",
                "--tensor-parallel",
                "--pipeline-stages",
                "--params-billion",
                "--gpu-tflops",
                "--gpu-fp8-tflops",
                "--gpu-tbps",
                "--gpu-gb",
                "--compute-efficiency",
                "--memory-efficiency",
                "--communication-efficiency",
                "--step-overhead-ms",
                "--memory-utilization",
                "--intensity",
            ]
        ),
        counts,
    ),
    st.tuples(
        st.sampled_from(
            ["--kv-traffic", "--expert-parallel", "--dp-attention", "--ignore-memory", "--bogus"]
        ),
        st.none(),
    ),
)


def _not_json(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON")


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as leave:  # --help
            code = 0 if leave.code is None else int(leave.code)
    return code, out.getvalue(), err.getvalue()


@CLI
@given(
    command=st.sampled_from(["phases", "roofline", "presets", "nonsense"]), chosen=st.lists(flags, max_size=6)
)
def test_cli_always_answers_json_or_a_one_line_error(command: str, chosen: list[tuple[str, Any]]) -> None:
    argv = [command]
    for flag, value in chosen:
        argv.append(flag)
        if value is not None:
            argv.append(str(value))
    code, out, err = _run([*argv, "--json"])
    assert code in (0, 2)
    assert err == ""
    record = json.loads(out, parse_constant=_not_json)  # strict JSON whatever happened: no NaN, no Infinity
    if code == 2:
        assert record["error"]
    else:
        assert_finite(record)
    code, out, err = _run(argv)
    assert code in (0, 2)
    assert "Traceback" not in err
    if code == 2:
        assert "\nerror: " in f"\n{err}"  # usage (argparse) then one "error: ..." line
    else:
        assert " nan " not in out.lower()
        assert " inf " not in out.lower()
