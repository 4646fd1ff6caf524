"""Every chart of the lessons, computed as the site draws it: in each mode the course shows.

A chart that compares series (weights only against the KV cache read, one scheduler against another) says
nothing if two of them are the same curve. The Batching lesson's trade-off chart drew its weights-only
curve from a scenario that left the KV reads unsaid, so the course's setting counted them and both curves
were one, the baseline hidden under the other, while the caption described two.
"""

from __future__ import annotations

from typing import Any

import pytest

from calculators.charts import chart_data
from calculators.setting import COURSE_SETTING, SPEC_PEAK, using
from course.charts.extension import _fence_blocks, parse_block
from tests.conftest import ROOT

DOCS = ROOT / "docs"


def lesson_charts() -> list[tuple[str, int, Any]]:
    """(page, line, block) of every chart fence under docs/."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        for line, body in _fence_blocks(page.read_text(encoding="utf-8")):
            found.append((page.relative_to(DOCS).as_posix(), line, parse_block(body)))
    return found


def _curve(rows: list[dict[str, Any]]) -> list[tuple[tuple[str, float], ...]]:
    """A series' rows by their numbers alone (names, colours and labels differ between series by design)."""
    return [
        tuple(sorted((key, round(value, 9)) for key, value in row.items() if type(value) in (int, float)))
        for row in rows
    ]


def same_curves(datasets: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Each pair of series of one dataset whose rows hold the same numbers, as readable lines."""
    found = []
    for name, rows in datasets.items():
        series: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            if "series" in row:
                series.setdefault(str(row["series"]), []).append(row)
        curves = {label: _curve(rows) for label, rows in series.items() if len(rows) > 1}
        labels = list(curves)
        found += [
            f"{name}: {one!r} and {other!r}"
            for index, one in enumerate(labels)
            for other in labels[index + 1 :]
            if curves[one] == curves[other]
        ]
    return found


def test_the_check_finds_two_series_that_are_one_curve() -> None:
    rows = [
        {"series": s, "batch": b, "tpot_ms": 6.75 + b}
        for s in ("weights only", "with the KV cache")
        for b in (1, 2)
    ]
    assert same_curves({"points": rows}) == ["points: 'weights only' and 'with the KV cache'"]
    rows[0]["tpot_ms"] += 0.1
    assert same_curves({"points": rows}) == []


@pytest.mark.parametrize("setting", [COURSE_SETTING, SPEC_PEAK], ids=["calibrated", "spec-peak"])
def test_no_two_series_of_a_lesson_chart_are_the_same_curve(setting: Any) -> None:
    charts = lesson_charts()
    assert len(charts) >= 30, "the lessons' charts were not found"
    found = {}
    for page, line, block in charts:
        with using(setting):
            data = chart_data(block.name, **block.params)
        if same := same_curves(dict(data.datasets)):
            found[f"{page}:{line} ({block.name})"] = same
    assert found == {}
