"""How much calculator time the lessons' expressions may take: per page and per build.

Lessons are untrusted input and must not hang the build. Each expression already has its own time limit
(:data:`calculators.expressions.TIME_LIMIT_S`, longer for a slow experiment that declares ``time_limit_s``),
but a lesson could quote such an experiment many times with different arguments, each call within its limit.
So every page's expressions share :data:`PAGE_LIMIT_S`, and all the expressions of one build share
:data:`BUILD_LIMIT_S`; a page past either gets a problem naming the file and the expression.

Measured on the course as it is (December 2026, ``validate_page`` per page in build order, a shared 2-core
machine): the slowest page, serving/disaggregated-serving.md, spends 13.3 s; the whole course 30 s. A slow
experiment's result is cached (``calculators.simulator.experiments``, ``course.numbers``), so quoting the same
call twice costs once. The limits leave the lessons about ten and twenty times room: a page may still quote
one experiment at its own longest limit (``max_good_rate``: 120 s).
"""

from __future__ import annotations

from calculators.expressions import TimeBudget, spend_from_now_on

PAGE_LIMIT_S = 120.0  # one page's expressions together; the longest single limit (max_good_rate) fits
BUILD_LIMIT_S = 600.0  # every page's together, the rendering of all pages included


def build_budget() -> TimeBudget:
    """The budget that every expression of one build (or one check of the course) shares."""
    return TimeBudget("this build of the course", BUILD_LIMIT_S)


def start_build() -> TimeBudget:
    """A new build's budget, charged for every expression evaluated from now on in this thread.

    For the MkDocs build, whose pages are also rendered outside any call of ours (a check that can be
    scoped uses ``with spending(build_budget())`` instead).
    """
    budget = build_budget()
    spend_from_now_on(budget)
    return budget


def page_budget(path: str) -> TimeBudget:
    """The budget that the expressions of the page ``path`` share (charge them with ``spending``)."""
    return TimeBudget(f"the page {path}", PAGE_LIMIT_S)
