"""``simulate --sweep``: each rate is the single run at that rate, whatever the workload and simulate options;
and the highest rate meeting an SLO, whose every trial is the single run at that rate too.

The test that matters is the equality: for one rate, the sweep's row holds the very figures the single run
(``--rate``, same arguments, same seed) reports in its summary. Every option of a single run is tried, so an
option the sweep dropped or built differently (a workload without its system prompts, a routing left at
round-robin) shows up as a difference.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

import pytest

from calculators import Lengths, make_setup, max_rate_meeting_slo, poisson_workload, simulate, sweep_rates
from calculators.cli import main
from calculators.simulator import SLO, Chats, RunOptions, Speculation
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
        [6],
        24,
        prompt=prompt,
        output=output,
        shared_prefix=shared,
        prefix_caching=True,
        replicas=2,
        routing="least-loaded",
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


# --- the highest rate meeting an SLO: the same description of a run -------------------------------------

GOODPUT_PROMPT, GOODPUT_OUTPUT = Lengths.uniform(100, 600), Lengths.uniform(8, 64)
# A quick search: 4 s of arrivals at each trial rate (at most 400 requests), 5 halvings between 1 and 400/s.
GOODPUT_SEARCH: dict[str, Any] = {
    "slo": SLO(0.1, 0.02),
    "duration_s": 4,
    "max_requests": 400,
    "low_per_s": 1,
    "high_per_s": 400,
    "steps": 5,
}
# Each option set as (workload keywords, simulate keywords): what the search is given, split the way a
# single run takes them, so the test below rebuilds that run without RunOptions.
GOODPUT_OPTIONS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "system prompts, cached": (
        {"shared_prefix": SharedPrefix(512, 0.5, 2)},
        {"prefix_caching": True},
    ),
    "chats, cache-aware routing": (
        {"chats": Chats(3, 1.0)},
        {"prefix_caching": True, "replicas": 2, "routing": "cache-aware"},
    ),
    "least-loaded routing": ({}, {"replicas": 3, "routing": "least-loaded"}),
    "speculative": ({}, {"speculation": Speculation(0.7, 3)}),
    "pipeline, micro-batches": ({}, {"setup": make_setup(pipeline_stages=2), "micro_batches": 2}),
}


@functools.cache
def _plain_goodput() -> dict[str, float | None]:
    return max_rate_meeting_slo(prompt=GOODPUT_PROMPT, output=GOODPUT_OUTPUT, **GOODPUT_SEARCH)


@pytest.mark.parametrize("name", GOODPUT_OPTIONS)
def test_the_goodput_search_serves_every_option_of_a_single_run(name: str) -> None:
    work_options, serve_options = GOODPUT_OPTIONS[name]
    best = max_rate_meeting_slo(
        prompt=GOODPUT_PROMPT, output=GOODPUT_OUTPUT, **GOODPUT_SEARCH, **work_options, **serve_options
    )
    rate = best["rate_per_s"]
    assert rate is not None
    # The row it returns is the single run at that rate with every option: rebuilt here by hand.
    n = min(400, math.ceil(rate * 4))
    work = poisson_workload(rate, n, GOODPUT_PROMPT, GOODPUT_OUTPUT, **work_options)
    single = simulate(work, slo=GOODPUT_SEARCH["slo"], timeline_steps=0, **serve_options).summary
    assert best["slo_attainment"] == single["slo_attainment"] >= 0.9
    assert best["ttft_p99_s"] == single["ttft_s"]["p99"]
    assert best["tpot_p99_s"] == single["tpot_s"]["p99"]
    # And the option changed what the search found: a search that dropped it would return the plain row.
    assert best != _plain_goodput()


def test_prefix_caching_raises_the_goodput_of_a_shared_system_prompt() -> None:
    # 256 new tokens after a 2,048-token system prompt, 32 out, TTFT <= 0.1 s and TPOT <= 20 ms.
    # Uncached, every request prefills 2,304 tokens, nine times the 256 of the same workload without a
    # system prompt, and the rate that keeps TTFT in bounds falls about tenfold. Cached, all but the first
    # request find the 2,048 tokens (128 whole blocks) in the cache and prefill only their own 256: the
    # goodput comes back to that of the workload without a system prompt (the same trial rate of the grid).
    search: dict[str, Any] = {
        "prompt": 256,
        "output": 32,
        "slo": SLO(0.1, 0.02),
        "duration_s": 5,
        "max_requests": 2000,
        "low_per_s": 0.5,
        "high_per_s": 500,
        "steps": 7,
    }
    system = SharedPrefix(2048)
    plain = max_rate_meeting_slo(**search)["rate_per_s"]
    uncached = max_rate_meeting_slo(**search, shared_prefix=system)["rate_per_s"]
    cached_row = max_rate_meeting_slo(**search, shared_prefix=system, prefix_caching=True)
    cached = cached_row["rate_per_s"]
    assert plain is not None
    assert uncached is not None
    assert cached is not None
    assert cached > 5 * uncached
    assert uncached < cached <= plain
    assert (cached_row["prefix_hit_rate"] or 0.0) > 0.85  # 2,048 of 2,304 is 0.89 for every request but one


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: max_rate_meeting_slo(512), "options must be a RunOptions"),  # the old positional prompt
        (lambda: sweep_rates([1], 4, 512), "options must be a RunOptions"),
        (
            lambda: max_rate_meeting_slo(prefix_cachng=True),
            "unknown run option 'prefix_cachng'; known: prompt",
        ),
        (lambda: sweep_rates([1], 4, micro_batch=2), "unknown run option 'micro_batch'"),
        (
            lambda: max_rate_meeting_slo(chats=Chats(2), micro_batches=0),
            "micro_batches must be a whole number",
        ),
    ],
    ids=["search-positional", "sweep-positional", "search-misspelt", "sweep-misspelt", "search-bad-value"],
)
def test_bad_run_options_are_named(call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_run_options_change_one_field_and_keep_the_rest() -> None:
    base = RunOptions(prompt=300, shared_prefix=SharedPrefix(64), replicas=2)
    changed = RunOptions.of(base, replicas=3)
    assert (changed.prompt, changed.shared_prefix, changed.replicas) == (300, SharedPrefix(64), 3)
    assert base.replicas == 2  # frozen: the original is untouched
    with pytest.raises(ValueError, match="chats need arrivals over time"):
        RunOptions(chats=Chats(2)).burst(4)
