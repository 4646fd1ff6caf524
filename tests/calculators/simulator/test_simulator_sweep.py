"""``simulate --sweep``: each rate is the single run at that rate, whatever the workload and simulate options.

The test that matters is the equality: for one rate, the sweep's row holds the very figures the single run
(``--rate``, same arguments, same seed) reports in its summary. Every option of a single run is tried, so an
option the sweep dropped or built differently (a workload without its system prompts, a routing left at
round-robin) shows up as a difference.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from calculators import Lengths, poisson_workload, simulate, sweep_rates
from calculators.cli import main
from calculators.simulator.workload import SharedPrefix

# Small enough to run in a blink, big enough that requests overlap and the options change the figures.
BASE = ["simulate", "--requests", "24", "--prompt", "uniform:200:600", "--output", "uniform:8:40"]
BASE += ["--seed", "3"]

# What each column of a sweep's row is in a single run's summary.
ROW_FIELDS: dict[str, tuple[str, ...]] = {
    "throughput_rps": ("throughput_rps",),
    "output_tokens_per_s": ("output_tokens_per_s",),
    "goodput_rps": ("goodput_rps",),
    "slo_attainment": ("slo_attainment",),
    "queueing_p50_s": ("queueing_s", "p50"),
    "ttft_p50_s": ("ttft_s", "p50"),
    "ttft_p99_s": ("ttft_s", "p99"),
    "tpot_p50_s": ("tpot_s", "p50"),
    "tpot_p99_s": ("tpot_s", "p99"),
    "itl_p99_s": ("itl_s", "p99"),
    "preemptions": ("preemptions",),
    "prefix_hit_rate": ("prefix_cache", "hit_rate"),
    "tokens_per_step": ("speculation", "tokens_per_step"),
}

# Each option set as the command line gives it (split on spaces in the tests).
OPTIONS = {
    "plain": "",
    "system prompts, cached": "--shared-prefix 256 --prefix-share 0.5 --prefixes 2 --prefix-caching",
    "chats, cache-aware routing": "--turns 3 --think-time 2 --prefix-caching --replicas 2 "
    "--routing cache-aware",
    "least-loaded routing": "--replicas 3 --routing least-loaded "
    "--prompt uniform:50:3000 --output uniform:8:400",
    "speculative": "--speculative --acceptance 0.7 --proposed 3 --acceptance-concentration 8",
    "micro-batches": "--pipeline-parallel 2 --micro-batches 2",
    "chunked, system prompts": "--scheduler chunked --shared-prefix 128 --prefix-caching",
}


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> Any:
    assert main(["--json", *argv]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _summary_field(summary: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = summary
    for key in path:
        if value is None:
            return None
        value = value.get(key)
    return value


@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
def test_a_sweeps_row_is_the_single_run_at_that_rate(
    options: str, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = options.split()
    rows = _json(capsys, [*BASE, *flags, "--sweep", "6"])
    summary = _json(capsys, [*BASE, *flags, "--rate", "6"])["summary"]
    assert len(rows) == 1
    (row,) = rows
    assert row["rate_per_s"] == 6.0
    expected = {
        column: _summary_field(summary, path)
        for column, path in ROW_FIELDS.items()
        if column in row or _summary_field(summary, path[:1]) is not None
    }
    assert {k: v for k, v in row.items() if k != "rate_per_s"} == expected
    # The columns of an option appear with it and only with it.
    assert ("prefix_hit_rate" in row) == ("--prefix-caching" in flags)
    assert ("tokens_per_step" in row) == ("--speculative" in flags)


def test_least_loaded_routing_changes_the_figures_the_sweep_is_checked_against() -> None:
    # Without this, the equality above could not tell a sweep that drops --routing from one that keeps it.
    work = poisson_workload(6, 24, Lengths.uniform(50, 3000), Lengths.uniform(8, 400), seed=3)
    rr = simulate(work, replicas=3, routing="round-robin").summary
    ll = simulate(work, replicas=3, routing="least-loaded").summary
    assert rr["ttft_s"] != ll["ttft_s"]


@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
def test_each_option_sweeps_several_rates(options: str, capsys: pytest.CaptureFixture[str]) -> None:
    flags = options.split()
    rows = _json(capsys, [*BASE, *flags, "--sweep", "2,20"])
    assert [r["rate_per_s"] for r in rows] == [2.0, 20.0]
    assert rows[0] != rows[1]  # the load differs, so do the figures
    assert main([*BASE, *flags, "--sweep", "2,20"]) == 0
    text = capsys.readouterr().out
    assert "p99 TTFT" in text
    assert ("prefix hits" in text) == ("--prefix-caching" in flags)
    assert ("tok/step" in text) == ("--speculative" in flags)


def test_sweep_rates_takes_the_workload_and_simulate_options_of_a_single_run() -> None:
    prompt, output, shared = Lengths.uniform(200, 600), Lengths.fixed(16), SharedPrefix(256, 0.5, 2)
    (row,) = sweep_rates(
        [6], 24, prompt, output, shared_prefix=shared, prefix_caching=True, replicas=2, routing="least-loaded"
    )
    work = poisson_workload(6, 24, prompt, output, shared_prefix=shared)
    single = simulate(work, replicas=2, routing="least-loaded", prefix_caching=True).summary
    assert row["prefix_hit_rate"] == single["prefix_cache"]["hit_rate"] > 0
    assert row["ttft_p99_s"] == single["ttft_s"]["p99"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--burst"], "--sweep varies the arrival rate"),
        (["--trace", "requests.csv"], "--sweep varies the arrival rate"),
        (["--turns", "2", "--burst"], "--sweep varies the arrival rate"),
    ],
)
def test_a_sweep_refuses_arrivals_it_cannot_vary(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*BASE, *flags, "--sweep", "1,2"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
