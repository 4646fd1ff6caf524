"""Fuzz the calculators' API, CLI and widgets: bad input gets a clear ValueError, good input finite figures.

Inputs are drawn from everything a reader can type: preset names and typos, numbers of every size and sign,
NaN, infinities, strings and None, for every argument of the public functions, every CLI flag and every
widget control. Each draw must either raise ``ValueError`` with a message that names what was wrong, or
return finite numbers, never negative; the CLI must never print a traceback, and with ``--json`` must always
print valid JSON; a widget's answer is never a defect's ("TypeError: ..."). Work sizes (replicas, pools,
steps, sweeps, traces) are capped, so no draw runs for long. 20,500 inputs in all, from a fixed seed
(derandomized): 6,000 API, 1,500 custom hardware, 2,500 CLI command lines (the cost model); 2,500 custom
shapes, 3,000 formatting and roofline helpers, 2,500 workloads and traces, 800 simulations, 500 ``simulate``
command lines and 1,200 widget requests.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculators import (
    GPU,
    GPUS,
    INTERCONNECTS,
    MODELS,
    PRECISIONS,
    SLO,
    UNITS,
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Lengths,
    MemoryConfig,
    Scenario,
    StaticBatching,
    attainable_flops_per_s,
    bound_at,
    burst_workload,
    custom_dense_model,
    custom_gpu,
    format_value,
    make_setup,
    poisson_workload,
    roofline_time,
    simulate,
    trace_workload,
)
from calculators.browser import kv_cache, prefill_decode, roofline_explorer, serving_simulator
from calculators.browser.protocol import WIDGETS, compute, handle
from calculators.cli import main
from calculators.models import MLAShape, MoEShape
from calculators.passes import LEVELS, mixed_step
from calculators.simulator import Speculation
from calculators.simulator.command_line import summary_text
from calculators.simulator.workload import MAX_ARRIVAL_S
from calculators.units import format_duration, significant
from calculators.validation import MAX_COUNT

pytestmark = pytest.mark.properties


def fuzz(examples: int) -> settings:
    """``examples`` draws from a fixed seed (the same inputs on every run), with no per-example deadline."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


MANY = fuzz(6000)
CUSTOM = fuzz(1500)
CLI = fuzz(2500)

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


# --- custom shapes: MoE, MLA, sliding windows, GPUs given by their figures --------------------------------

shape_numbers = st.one_of(
    st.integers(-3, 300), st.sampled_from([0, 1, 8, 64, 4096, 10**6, 10**6 + 1]), anything
)


@fuzz(2500)
@given(
    part=st.sampled_from(["moe", "mla", "window", "gpu"]),
    values=st.lists(shape_numbers, min_size=6, max_size=6),
    tokens=st.one_of(st.integers(1, 5000), weird_numbers),
)
def test_custom_shapes_are_checked_where_they_enter(part: str, values: list[Any], tokens: Any) -> None:
    a, b, c, d, e, f = values
    try:
        if part == "moe":
            shape = MoEShape(experts=a, experts_per_token=b, expert_mlp_width=c, shared_experts=d)
            model = replace(MODELS["mixtral-8x7b"], moe=shape)
            scenario = Scenario(model, "h100-sxm", level="refined", ignore_memory=True)
        elif part == "mla":
            model = replace(MODELS["deepseek-v3"], mla=MLAShape(a, b, c, d, e))
            scenario = Scenario(model, "h200", level="refined", gpus=8, ignore_memory=True)
        elif part == "window":
            model = replace(MODELS["llama-3.1-8b"], sliding_window=a)
            scenario = Scenario(model, "h100-sxm", level="refined", kv_traffic=True)
        else:
            gpu = GPU(
                key="fuzzed",
                name="fuzzed",
                dense_flops_per_s={
                    "bf16": a
                    if isinstance(a, str | None)
                    else a * 10.0**f
                    if isinstance(f, int) and 0 <= f < 40
                    else a
                },
                memory_bandwidth_bytes_per_s=b * 1e12
                if isinstance(b, int) and not isinstance(b, bool)
                else b,
                memory_capacity_bytes=c * 1e9 if isinstance(c, int) and not isinstance(c, bool) else c,
                source="fuzz",
            )
            scenario = Scenario("dense-8b", gpu, ignore_memory=True)
        results = [
            scenario.prefill(tokens).as_dict(),
            scenario.decode(batch=tokens, context_tokens=tokens).as_dict(),
            {"kv_bytes": scenario.kv_cache_bytes(tokens)},
        ]
    except ValueError as error:
        assert_clear(error)
        return
    for result in results:
        assert_finite(result)


# --- formatting helpers and the roofline's small functions ------------------------------------------------


@fuzz(3000)
@given(
    function=st.sampled_from(
        ["format_value", "format_duration", "significant", "bound_at", "attainable", "time"]
    ),
    value=weird_numbers | anything,
    other=weird_numbers | anything,
    unit=st.one_of(st.sampled_from(sorted(UNITS)), anything),
    digits=st.one_of(st.none(), st.integers(-2, 30), weird_numbers),
)
def test_formatting_and_roofline_helpers_check_their_inputs(
    function: str, value: Any, other: Any, unit: Any, digits: Any
) -> None:
    try:
        if function == "format_value":
            text = format_value(value, unit, digits=digits)
            assert isinstance(text, str)
            assert len(text) < 400
            assert "nan" not in text
            assert "inf" not in text
            return
        if function == "format_duration":
            text = format_duration(value, digits=3 if digits is None else digits)
            assert isinstance(text, str)
            assert len(text) < 400
            return
        if function == "significant":
            number = significant(value, 3 if digits is None else digits)
            assert math.isfinite(number)
            return
        if function == "bound_at":
            assert bound_at(value, other) in ("compute", "memory")
            return
        if function == "attainable":
            result: Any = {"flops": attainable_flops_per_s(value, "h100-sxm")}
        else:
            result = roofline_time(
                value, other, "h100-sxm", gpus=digits if digits is not None else 1
            ).__dict__
    except ValueError as error:
        assert_clear(error)
        return
    assert_finite(result)


# --- workloads and traces -----------------------------------------------------------------------------------

trace_rows = st.lists(
    st.one_of(
        st.tuples(weird_numbers, counts, counts).map(list),
        st.fixed_dictionaries({"arrival_s": weird_numbers, "prompt_tokens": counts, "output_tokens": counts}),
        st.lists(anything, max_size=4),
        anything,
        st.sampled_from([[1e15, 10, 5], [1e8, 10, 5], [0, 10**9, 1], {"arrival_s": 1}]),
    ),
    max_size=5,
)


@fuzz(2500)
@given(
    kind=st.sampled_from(["lognormal", "uniform", "fixed", "poisson", "burst", "trace"]),
    a=weird_numbers,
    b=weird_numbers,
    cap=st.one_of(st.none(), counts),
    rows=trace_rows,
)
def test_workloads_are_bounded_and_checked(kind: str, a: Any, b: Any, cap: Any, rows: list[Any]) -> None:
    try:
        if kind == "trace":
            requests = trace_workload(rows)
        elif kind == "burst":
            requests = burst_workload(
                8, Lengths.lognormal(a, b, cap=cap), 4, at_s=cap if cap is not None else 0
            )
        elif kind == "poisson":
            requests = poisson_workload(a, 8, Lengths.uniform(1, 10), Lengths.fixed(2), seed=0)
        else:
            lengths = {
                "lognormal": lambda: Lengths.lognormal(a, b, cap=cap),
                "uniform": lambda: Lengths.uniform(a, b),
                "fixed": lambda: Lengths.fixed(a),
            }[kind]()
            requests = poisson_workload(1.0, 8, lengths, lengths, seed=0)
    except ValueError as error:
        assert_clear(error)
        return
    for r in requests:
        assert 0 <= r.arrival_s <= MAX_ARRIVAL_S
        assert 1 <= r.prompt_tokens <= MAX_COUNT
        assert 1 <= r.output_tokens <= MAX_COUNT


# --- simulations --------------------------------------------------------------------------------------------

small = st.one_of(st.integers(1, 64), weird_numbers)


@fuzz(800)
@given(
    scheduler=st.sampled_from(["continuous", "chunked", "static", "disaggregated"]),
    knobs=st.lists(small, min_size=3, max_size=3),
    memory=st.fixed_dictionaries(
        {},
        optional={
            "kind": st.one_of(st.sampled_from(["paged", "contiguous"]), anything),
            "block_tokens": small,
            "capacity_tokens": st.one_of(st.integers(1, 100_000), weird_numbers),
            "max_sequence_tokens": st.one_of(st.integers(1, 100_000), weird_numbers),
            "watermark": weird_numbers,
            "preemption": st.one_of(st.sampled_from(["recompute", "swap"]), anything),
            "swap_space_gib": weird_numbers,
            "swap_link": _names(INTERCONNECTS),
        },
    ),
    rows=st.lists(
        st.tuples(st.one_of(st.floats(0, 10), st.sampled_from([0, 1e8, 1e15])), small, small),
        min_size=1,
        max_size=6,
    ),
    slo=st.tuples(weird_numbers, weird_numbers),
    pipeline=st.tuples(
        st.one_of(st.integers(1, 4), weird_numbers), st.one_of(st.integers(1, 8), weird_numbers)
    ),
    transfer=st.fixed_dictionaries(
        {},
        optional={
            "kv_transfer": st.one_of(st.sampled_from(["whole", "layerwise"]), anything),
            "link_sharing": st.one_of(st.sampled_from(["sender", "endpoints", "shared"]), anything),
        },
    ),
    speculation=st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {"acceptance": st.one_of(st.floats(0.01, 0.99), weird_numbers)},
            optional={
                "proposed": st.one_of(st.integers(1, 8), weird_numbers),
                "drafter": st.one_of(st.sampled_from(["heads", "model", "ngram"]), anything),
                "draft_model": _names(MODELS),
                "draft_layers": weird_numbers,
                "acceptance_concentration": st.one_of(st.none(), weird_numbers),
                "seed": weird_numbers,
            },
        ),
    ),
)
def test_simulations_finish_quickly_with_finite_results_or_say_why(
    scheduler: str,
    knobs: list[Any],
    memory: dict[str, Any],
    rows: list[Any],
    slo: Any,
    pipeline: tuple[Any, Any],
    transfer: dict[str, Any],
    speculation: dict[str, Any] | None,
) -> None:
    a, b, c = knobs
    stages, micro_batches = pipeline
    try:
        requests = trace_workload(rows)
        setup = make_setup(pipeline_stages=stages)
        chosen = {
            "continuous": lambda: ContinuousBatching(a, b),
            "chunked": lambda: ChunkedPrefill(a, b),
            "static": lambda: StaticBatching(a, b),  # b: a batching timeout, s
            "disaggregated": lambda: Disaggregated(a, b, "pcie4", **transfer),
        }[scheduler]()
        result = simulate(
            requests,
            setup,
            scheduler=chosen,
            memory=MemoryConfig(**memory),
            replicas=1 if scheduler == "disaggregated" else c,
            slo=SLO(*slo),
            timeline_steps=20,
            max_steps=20_000,
            speculation=None if speculation is None else Speculation(**speculation),
            micro_batches=micro_batches,
        )
        record = result.as_dict()
        text = summary_text(result, "fuzz")
    except ValueError as error:
        assert_clear(error)
        return
    assert_finite(record["summary"])
    assert "None" not in text


# Trace files the simulate command lines may read: good ones, and each way a file goes wrong.
TRACE_FILES = {
    "good.csv": "arrival_s,prompt_tokens,output_tokens\n0,100,5\n0.5,200,3\n",
    "good.json": '[[0, 100, 5], {"arrival_s": 0.2, "prompt_tokens": 50, "output_tokens": 2}]',
    "late.csv": "arrival_s,prompt_tokens,output_tokens\n1e15,100,5\n",
    "deep.json": "[" * 100_000 + "]" * 100_000,
    "object.json": '{"arrival_s": 0}',
    "scalars.json": "[1, 2, 3]",
    "ragged.csv": "arrival_s,prompt_tokens,output_tokens\n0,1\n",
    "words.csv": "arrival_s,prompt_tokens,output_tokens\nsoon,many,few\n",
    "binary.csv": "\udcff",
    "missing.csv": None,
}


@pytest.fixture(scope="module")
def trace_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("traces")
    for name, text in TRACE_FILES.items():
        if text is not None:
            (folder / name).write_bytes(text.encode("utf-8", "surrogateescape"))
    return folder


# Sizes a simulate command line takes: small ones that run in milliseconds, and every kind of bad or huge
# one (refused at once). Sizes between, a million output tokens, are valid runs of seconds: not drawn here.
run_sizes = st.one_of(
    st.integers(1, 300),
    st.sampled_from([0, -1, 0.5, 1e-300, 1e300, 10**9, 10**9 + 1, 2**63, 10**15, 2_000_001]),
    st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not 300 < abs(x) < 1e9),
    st.text(max_size=4),
)
simulate_flags = st.one_of(
    st.tuples(
        st.sampled_from(
            [
                "--rate",
                "--replicas",
                "--token-budget",
                "--max-sequences",
                "--max-batch-tokens",
                "--prefill-gpus",
                "--decode-gpus",
                "--batch-size",
                "--batch-timeout",
                "--prefill-tensor-parallel",
                "--decode-tensor-parallel",
                "--block-tokens",
                "--kv-capacity-tokens",
                "--max-sequence-tokens",
                "--timeline-steps",
                "--slo-ttft",
                "--slo-tpot",
                "--seed",
            ]
        ),
        run_sizes,
    ),
    st.tuples(
        st.sampled_from(["--prompt", "--output"]),
        st.one_of(
            run_sizes,
            st.builds(lambda a, b: f"lognormal:{a}:{b}", run_sizes, run_sizes),
            st.builds(lambda a, b: f"uniform:{a}:{b}", run_sizes, run_sizes),
            st.text(max_size=8),
        ),
    ),
    st.tuples(
        st.sampled_from(["--sweep"]),
        st.one_of(
            st.lists(run_sizes, min_size=1, max_size=4).map(lambda r: ",".join(map(str, r))),
            st.just(",".join(["1"] * 65)),
        ),
    ),
    st.tuples(
        st.sampled_from(["--scheduler"]),
        st.sampled_from(["continuous", "chunked", "static", "disaggregated", "x"]),
    ),
    st.tuples(st.sampled_from(["--memory"]), st.sampled_from(["paged", "contiguous"])),
    st.tuples(st.sampled_from(["--preemption"]), st.sampled_from(["recompute", "swap", "x"])),
    st.tuples(st.sampled_from(["--routing"]), st.sampled_from(["round-robin", "least-loaded", "x"])),
    st.tuples(st.sampled_from(["--swap-space"]), run_sizes),
    st.tuples(st.sampled_from(["--swap-link"]), _names(INTERCONNECTS)),
    st.tuples(st.sampled_from(["--link"]), _names(INTERCONNECTS)),
    st.tuples(st.sampled_from(["--pipeline-parallel", "--micro-batches"]), st.one_of(run_sizes, st.just(2))),
    st.tuples(st.sampled_from(["--kv-transfer"]), st.sampled_from(["whole", "layerwise", "x"])),
    st.tuples(st.sampled_from(["--link-sharing"]), st.sampled_from(["sender", "endpoints", "shared", "x"])),
    st.tuples(st.sampled_from(["--prefill-gpu", "--decode-gpu"]), _names(GPUS)),
    st.tuples(st.sampled_from(["--trace"]), st.sampled_from(sorted(TRACE_FILES))),
    st.tuples(st.sampled_from(["--burst", "--token-latencies", "--speculative"]), st.none()),
    st.tuples(
        st.sampled_from(["--acceptance", "--proposed", "--draft-layers", "--acceptance-concentration"]),
        st.one_of(run_sizes, st.sampled_from([0.3, 0.8, 0.999])),
    ),
    st.tuples(st.sampled_from(["--drafter"]), st.sampled_from(["heads", "model", "ngram", "x"])),
    st.tuples(st.sampled_from(["--draft-model"]), _names(MODELS)),
)


@fuzz(500)
@given(
    chosen=st.lists(simulate_flags, max_size=4),
    requests=st.one_of(st.integers(1, 6), st.sampled_from([0, -1, 2.5, 1_000_001, 10**9, 2**63, "x"])),
)
def test_cli_simulate_answers_json_or_one_error_line(
    trace_folder: Path, chosen: list[tuple[str, Any]], requests: Any
) -> None:
    argv = ["simulate", "--requests", str(requests)]
    for flag, value in chosen:
        argv.append(flag)
        if value is not None:
            argv.append(str(trace_folder / value) if flag == "--trace" else str(value))
    code, out, err = _run([*argv, "--json"])
    assert code in (0, 2), err[-500:]
    assert "Traceback" not in err
    record = json.loads(out, parse_constant=_not_json)
    if code == 2:
        assert record["error"]
        return
    summaries = [row for row in record] if isinstance(record, list) else [record["summary"]]
    for summary in summaries:
        assert_finite(summary)
    code, out, err = _run(argv)
    assert code == 0
    assert "None" not in out


# --- the widgets' protocol ---------------------------------------------------------------------------------

widget_values = st.one_of(
    anything,
    st.integers(1, 8),
    st.sampled_from(["", "1", "2.5e3", "-3", "abc", "h100-sxm", "chunked", "disaggregated", "fp8", "on"]),
    st.lists(st.one_of(st.sampled_from(sorted(GPUS)), anything), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
WIDGET_KEYS = sorted(
    {
        *prefill_decode.DEFAULTS,
        *kv_cache.DEFAULTS,
        *roofline_explorer.DEFAULTS,
        *(key for key in serving_simulator.DEFAULTS if key != "requests"),
        "unknown",
    }
)


@fuzz(1200)
@given(
    widget=st.one_of(st.sampled_from(sorted(WIDGETS)), anything),
    state=st.dictionaries(st.sampled_from(WIDGET_KEYS), widget_values, max_size=5),
    requests=st.one_of(st.integers(1, 6), anything),
)
def test_widgets_answer_a_result_or_a_readers_message(
    widget: Any, state: dict[str, Any], requests: Any
) -> None:
    state = {**state, "requests": requests}
    answer = json.loads(handle(json.dumps({"widget": widget, "state": state})), parse_constant=_not_json)
    if not answer["ok"]:
        error = answer["error"]
        assert error
        assert len(error) < 2000
        assert not re.match(r"[A-Z][A-Za-z]*(Error|Exception): ", error), error  # a defect, not a message
        return
    assert_finite_anywhere(compute(str(widget), state))


def assert_finite_anywhere(value: Any, where: str = "") -> None:
    """No NaN or infinity anywhere (charts may hold negative offsets, so signs are not checked here)."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert_finite_anywhere(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            assert_finite_anywhere(item, f"{where}[{i}]")
    elif isinstance(value, float):
        assert math.isfinite(value), where
