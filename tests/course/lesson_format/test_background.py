"""Under dev.py serve, slow results missing from the caches are computed by worker processes (issue 23).

What matters: the page says a figure is pending instead of waiting for it; the value a worker computes is the
value the build computes itself, bit for bit; a failure in a worker reads as it does without workers; the
server is told to rebuild once everything it waited for is done; and without dev.py serve nothing changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from calculators.expressions import ExpressionError
from calculators.setting import site_setting
from course.lesson_format import background
from course.numbers import extension as numbers
from course.numbers import value_cache
from course.numbers.value_cache import CACHE_ENV, number_under, runs_the_simulator

# Simulator experiments that run in well under a second: a figure and a claim built on them.
SIMULATED = "prefill_stall(4000, 32).stall_steps"
CHEAP = "Scenario().decode().time_s"
CLAIM = f'"stalls longer" holds prefill_stall(8000, 32).stall_steps > {SIMULATED}'


@pytest.fixture
def serving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Workers on, as under dev.py serve, with an empty number cache and a marker of our own."""
    monkeypatch.setenv(background.ENV, "1")
    monkeypatch.setenv(background.SERVING_ENV, "1")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "numbers"))
    monkeypatch.setattr(background, "marker_path", lambda: tmp_path / "marker")
    monkeypatch.setattr(background, "_JOBS", {})
    monkeypatch.setattr(value_cache, "_OPEN", {})
    numbers._compute.cache_clear()
    background.start_build()
    try:
        yield tmp_path
    finally:
        numbers._compute.cache_clear()
        background.end_build()


def _wait_for_jobs(timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while any(not job.done() for job in background._JOBS.values()):
        assert time.monotonic() < deadline, "the workers did not finish"
        time.sleep(0.05)


class HeldPool:
    """A pool whose jobs finish when the test says so (here, in this process)."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = []

    def submit(self, function: Callable[..., Any], *args: Any) -> Future[Any]:
        job: Future[Any] = Future()
        self.jobs.append((job, function, args))
        return job

    def release(self) -> None:
        for job, function, args in self.jobs:
            job.set_result(function(*args))


def test_only_expressions_that_name_a_simulator_experiment_go_to_the_workers() -> None:
    assert runs_the_simulator(SIMULATED)
    assert runs_the_simulator('max_good_rate("chunked", gpus=3) / 2')
    assert not runs_the_simulator(CHEAP)
    assert not runs_the_simulator("not ( an expression")  # computed here, where its error is raised


def test_without_dev_py_serve_everything_is_computed_before_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(background.ENV, raising=False)
    monkeypatch.setenv(background.SERVING_ENV, "1")  # mkdocs serve run by hand, or the serve tests
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(value_cache, "_OPEN", {})
    monkeypatch.setattr(background, "_JOBS", {})
    numbers._compute.cache_clear()
    try:
        span = numbers.render_html(f" {SIMULATED}| number ")
    finally:
        numbers._compute.cache_clear()
    assert "rp-number--pending" not in span.get("class", "")
    assert float(span.get("data-value", "nan")) == number_under(SIMULATED, site_setting())
    assert background._JOBS == {}


def test_a_slow_figure_is_pending_then_exactly_what_the_build_computes(serving: Path) -> None:
    cheap = numbers.render_html(f" {CHEAP} | ms ")
    assert "rp-number--pending" not in cheap.get("class", "")  # computed at once, as before
    first = numbers.render_html(f" {SIMULATED}| number ")
    assert first.text == background.PENDING_TEXT
    assert "rp-number--pending" in first.get("class", "")
    assert background.waiting() == 1
    _wait_for_jobs()
    numbers._compute.cache_clear()  # the rebuild that follows
    background.start_build()
    again = numbers.render_html(f" {SIMULATED}| number ")
    assert "rp-number--pending" not in again.get("class", "")
    # Bit for bit the value computed in this process without workers.
    assert float(again.get("data-value", "nan")) == number_under(SIMULATED, site_setting())
    assert background.waiting() == 0


def test_a_claim_waiting_for_its_figures_is_marked_unchecked_then_checked(serving: Path) -> None:
    assert numbers.comparison_problem(CLAIM) is None  # not reported as wrong, nor as right:
    span = numbers.comparison_html(CLAIM)
    assert "rp-number--pending" in span.get("class", "")
    assert "Not checked yet" in span.get("title", "")
    _wait_for_jobs()
    numbers._compute.cache_clear()
    checked = numbers.comparison_html(CLAIM)
    assert checked.get("title", "").startswith("Checked in both modes")
    wrong = CLAIM.replace(" > ", " < ")
    problem = numbers.comparison_problem(wrong)  # the same values: now a wrong claim is caught
    assert problem is not None
    assert "holds in no mode" in problem[1]


def test_a_job_that_fails_in_a_worker_fails_here_with_its_own_message(
    serving: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = "prefill_stall(-5, 32).stall_steps"
    with pytest.raises(ExpressionError) as without_workers:
        number_under(bad, site_setting())
    pool = HeldPool()  # a warm worker could fail it before the page asks: the test decides when
    monkeypatch.setattr(background, "_pool", lambda: pool)
    pending = numbers.render_html(f" {bad}| number ")
    assert "rp-number--pending" in pending.get("class", "")
    pool.release()
    numbers._compute.cache_clear()
    shown = numbers.render_html(f" {bad}| number ")
    assert "rp-number--error" in shown.get("class", "")
    assert shown.get("title") == str(without_workers.value)


def test_the_server_is_told_to_rebuild_once_when_everything_it_waited_for_is_done(
    serving: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = serving / "marker"
    pool = HeldPool()
    monkeypatch.setattr(background, "_pool", lambda: pool)
    numbers.render_html(f" {SIMULATED}| number ")
    assert background.end_build() == 1  # the build is over with one result pending
    assert not marker.exists()  # not while it is pending
    pool.release()
    assert "done" in marker.read_text(encoding="utf-8")  # the server rebuilds
    written = marker.read_text(encoding="utf-8")
    background.start_build()  # the rebuild: nothing pending any more, so no further marker
    numbers._compute.cache_clear()
    numbers.render_html(f" {SIMULATED}| number ")
    assert background.end_build() == 0
    assert marker.read_text(encoding="utf-8") == written


def test_the_notice_and_the_log_say_how_many_and_what_happens_next() -> None:
    notice = background.notice_html(3)
    assert "3 slow results are being computed" in notice
    assert "rebuilds" in notice
    assert "dev.py build" in notice
    assert "1 slow result is being computed" in background.log_line(1)


def test_a_pool_that_cannot_take_jobs_means_computing_here(
    serving: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Broken:
        def submit(self, *args: Any) -> Future[Any]:
            raise RuntimeError("cannot schedule new futures after shutdown")

    monkeypatch.setattr(background, "_pool", Broken)
    span = numbers.render_html(f" {SIMULATED}| number ")
    assert float(span.get("data-value", "nan")) == number_under(SIMULATED, site_setting())
    assert background.waiting() == 0


def test_stopping_the_server_drops_the_jobs_at_once(serving: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(background, "_POOL", [])  # a pool of this test's own
    for n in range(4):  # more jobs than workers, each far longer than the test may wait
        with pytest.raises(background.BeingComputed):
            background.result(("sleep", n), time.sleep, 600)
    (pool,) = background._POOL
    processes = list(pool._processes.values())  # type: ignore[attr-defined]
    assert processes
    background.shutdown()
    deadline = time.monotonic() + 30
    while any(process.is_alive() for process in processes):
        assert time.monotonic() < deadline, "a worker outlived the server"
        time.sleep(0.05)
    assert background._POOL == []
    assert not (serving / "marker").exists()  # cancelled jobs are not results: the server does not rebuild
