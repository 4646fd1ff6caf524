"""Every work size and every input that used to break a calculator is refused at once with a clear message.

Found by fuzzing (issue 25, part 7): custom MoE, MLA and sliding-window shapes, peaks so small that times
were infinite, formatting helpers and ``bound_at`` given anything, log-normal lengths that overflowed,
trace rows that are not lists, arrivals near 1e15 s (where a step vanished in rounding and the summary
crashed on a missing throughput), and runs whose size had no cap. Each case here failed (a traceback, a
non-finite or negative figure, or a run of minutes) before its check was added.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from calculators import (
    GPU,
    MODELS,
    ChunkedPrefill,
    Disaggregated,
    Lengths,
    MemoryConfig,
    Scenario,
    bound_at,
    burst_workload,
    format_value,
    max_rate_meeting_slo,
    poisson_workload,
    simulate,
    sweep_rates,
    trace_workload,
)
from calculators.cli import main
from calculators.models import MLAShape, MoEShape
from calculators.simulator import command_line, workload
from calculators.units import format_duration


def _message(call: Callable[[], object]) -> str:
    with pytest.raises(ValueError) as info:  # noqa: PT011 - each caller checks the words
        call()
    return str(info.value)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        pytest.param(
            lambda: MoEShape(experts=8, experts_per_token=2, expert_mlp_width=-14336),
            ["expert_mlp_width", "-14336", "whole number >= 1"],
            id="negative-expert-width",
        ),
        pytest.param(
            lambda: MoEShape(experts=8, experts_per_token=9, expert_mlp_width=64),
            ["experts_per_token (9) must be at most experts (8)"],
            id="more-experts-per-token-than-experts",
        ),
        pytest.param(
            lambda: MLAShape(1536, 512, 128, 0, 128), ["qk_rope_head_dim", "0"], id="mla-zero-rope-dim"
        ),
        pytest.param(
            lambda: replace(MODELS["llama-3.1-8b"], sliding_window=0),
            ["sliding_window", "None for full attention", "got 0"],
            id="zero-sliding-window",
        ),
        pytest.param(
            lambda: replace(MODELS["deepseek-v3"], moe=replace(MODELS["deepseek-v3"].moe, dense_layers=99)),
            ["dense_layers (99) must be at most layers (61)"],
            id="more-dense-layers-than-layers",
        ),
        pytest.param(
            lambda: GPU(
                key="tiny",
                name="tiny",
                dense_flops_per_s={"bf16": 1e-300},
                memory_bandwidth_bytes_per_s=3e12,
                memory_capacity_bytes=80e9,
                source="test",
            ),
            ["tiny: dense_flops_per_s[bf16] must be between 1e+09 and 1e+21"],
            id="tiny-peak",
        ),
        pytest.param(
            lambda: format_value(None, "ms"), ["value must be a finite number", "None"], id="format-none"
        ),
        pytest.param(
            lambda: format_value(1.0, "ms", digits=10**9),
            ["digits must be a whole number <= 17"],
            id="digits",
        ),
        pytest.param(
            lambda: format_duration(float("nan")), ["seconds must be a finite number"], id="duration-nan"
        ),
        pytest.param(lambda: bound_at("x", 295.0), ["intensity_flop_per_byte", "'x'"], id="bound-at-text"),
        pytest.param(
            lambda: bound_at(100.0, 0), ["ridge_point_flop_per_byte", "greater than 0"], id="bound-at-0"
        ),
        pytest.param(
            lambda: Lengths.lognormal(1e-300, 2), ["mean must be between 1 and 1e+09"], id="lognormal-mean"
        ),
        pytest.param(lambda: Lengths("gamma", 3), ["lengths kind must be one of"], id="lengths-kind"),
        pytest.param(
            lambda: trace_workload([128, "x"]),
            ["trace row 0 is 128; give a list [arrival_s, prompt_tokens, output_tokens]"],
            id="trace-row-not-a-list",
        ),
        pytest.param(lambda: trace_workload(7), ["a trace is a list of rows"], id="trace-not-a-list"),
        pytest.param(
            lambda: trace_workload([[1e15, 10, 5]]),
            ["trace row 0: arrival_s must be at most 1e+08 s", "start the trace nearer 0"],
            id="arrival-near-1e15",
        ),
        pytest.param(
            lambda: poisson_workload(1e300, 3),
            ["rate_per_s must be between 0 and 1e+09"],
            id="rate-huge",
        ),
        pytest.param(
            lambda: poisson_workload(1e-9, 3),
            ["would arrive after 1e+08 s", "give a higher rate or fewer requests"],
            id="rate-arrivals-too-late",
        ),
        pytest.param(
            lambda: max_rate_meeting_slo(prompt=32, output=4, high_per_s=1e300),
            ["high_per_s must be between 0 and 1e+09"],
            id="rate-search-overflow",
        ),
        pytest.param(
            lambda: simulate(burst_workload(2, 10, 2), replicas=1_000_000),
            ["replicas must be a whole number <= 4,096"],
            id="replicas",
        ),
        pytest.param(
            lambda: simulate(burst_workload(2, 10, 2), scheduler=Disaggregated(10**9, 1)),
            ["prefill_gpus=1,000,000,000 makes 1,000,000,000 replicas in one pool; at most 4,096"],
            id="prefill-pool",
        ),
        pytest.param(
            lambda: sweep_rates([1.0] * 65, 2, prompt=10, output=2),
            ["rates has more than 64 rates"],
            id="sweep-rates",
        ),
        pytest.param(
            lambda: simulate(
                burst_workload(200, 131_072, 2),
                scheduler=ChunkedPrefill(token_budget=1),
                memory=MemoryConfig(capacity_tokens=10**9),
            ),
            ["needs at least 26,214,401 engine steps and max_steps is 2,000,000", "a larger token budget"],
            id="token-budget-1-over-long-prompts",
        ),
    ],
)
def test_bad_input_and_oversized_work_are_refused_with_the_field_and_the_fix(
    call: Callable[[], object], words: list[str]
) -> None:
    started = time.perf_counter()
    message = _message(call)
    for word in words:
        assert word in message
    # refused before the work, not after it (a generous bound: the runs refused here took minutes)
    assert time.perf_counter() - started < 20


def test_a_huge_number_formats_in_scientific_notation_not_three_hundred_digits() -> None:
    assert format_value(1.004e298, "s") == "1.00e+298 s"
    assert format_value(2.5e15, "tokens") == "2.50e+15 tokens"
    assert format_value(123456.0, "tokens") == "123,000 tokens"


def test_a_window_and_shapes_at_their_bounds_still_compute() -> None:
    windowed = Scenario(replace(MODELS["llama-3.1-8b"], sliding_window=1), "h100-sxm", level="refined")
    assert windowed.decode(batch=4, context_tokens=1000).time_s > 0


def test_the_summary_of_a_run_that_took_no_time_shows_dashes_not_none() -> None:
    # A step far below the clock's resolution: the run's duration is 0 and its rates are undefined.
    gpu = GPU(
        key="fast",
        name="fast",
        dense_flops_per_s={"bf16": 1e21},
        memory_bandwidth_bytes_per_s=1e18,
        memory_capacity_bytes=80e9,
        source="test",
    )
    from calculators import custom_dense_model, make_setup

    setup = make_setup(custom_dense_model(params_billion=1e-6), gpu)
    result = simulate(
        trace_workload([[1e8, 1, 1]]), setup, memory=MemoryConfig(capacity_tokens=1000), timeline_steps=0
    )
    text = command_line.summary_text(result, "heading")
    assert "None" not in text
    assert result.summary["throughput_rps"] is None
    assert " - requests/s, - tokens/s out" in text


# --- the trace file: bounded by bytes before parsing, by rows while reading ---------------------------------
def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_a_trace_file_larger_than_the_limit_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(command_line, "MAX_TRACE_BYTES", 1000)
    trace = tmp_path / "big.csv"
    trace.write_text("arrival_s,prompt_tokens,output_tokens\n" + "0,10,2\n" * 200, encoding="utf-8")
    code, out, _ = _cli(["--json", "simulate", "--trace", str(trace)])
    assert code == 2
    assert "is larger than 0 MiB" in json.loads(out)["error"]


def test_a_deeply_nested_json_trace_gets_a_message_not_a_recursion_error(tmp_path: Path) -> None:
    trace = tmp_path / "deep.json"
    trace.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    code, out, err = _cli(["--json", "simulate", "--trace", str(trace)])
    assert code == 2
    assert "nested too deeply" in json.loads(out)["error"]
    assert "Traceback" not in err


def test_a_trace_is_read_only_up_to_the_row_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workload, "MAX_REQUESTS", 10)
    read = []

    def rows() -> Iterator[list[Any]]:
        for i in range(10**6):
            read.append(i)
            yield [0, 10, 2]

    assert "more than 10 rows" in _message(lambda: trace_workload(rows()))
    assert len(read) == 11  # it stopped at the first row past the limit
