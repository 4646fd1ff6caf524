"""The edit-to-reload figure's bookkeeping: edits alternate between the sides, the printout is the median.

The timings themselves belong to the benchmark session (``python -m course.benchmarks.edit_reload``); nothing
here runs a server or asserts a time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course.benchmarks import edit_reload
from course.benchmarks.edit_reload import Served, figures, interleaved, summary


class _Recorded(Served):
    """A side that records when it was edited instead of editing a file."""

    log: list[str]

    def time_edit(self) -> float:
        self.log.append(self.name)
        return 0.0


def test_edits_alternate_which_side_goes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edit_reload, "SETTLE_S", 0)
    log: list[str] = []
    course, plain = (_Recorded(name, Path("x.md"), "http://h/p/") for name in ("course", "plain"))
    course.log = plain.log = log
    interleaved([course, plain], 3)
    # A burst of load on the machine lands on both sides alike, not always on the second.
    assert log == ["course", "plain", "plain", "course", "course", "plain"]


def test_the_printout_is_median_range_and_the_ratio_of_medians() -> None:
    course = Served("course", Path("x.md"), "http://127.0.0.1:1/foundations/memory-wall/", [3.0, 9.0, 4.0])
    plain = Served("plain", Path("y.md"), "http://127.0.0.1:2/foundations/memory-wall/", [2.0, 2.0, 4.0])
    assert summary(course.seconds) == "4.00 s (3.00-9.00, n=3)"  # median of 3, 4, 9
    rows = dict(figures(course, plain))
    # medians 4.0 / 2.0; round by round 3/2 = 1.5, 9/2 = 4.5, 4/4 = 1.0
    assert rows["course / plain, ratio of medians (target <= 1.3x)"] == "2.00x (round by round 1.00-4.50x)"
    assert "foundations/memory-wall/: course, median (range)" in rows
