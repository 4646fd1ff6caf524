"""Chart data read back from disk is the data the calculators compute, computed once per state of them.

Every chart the course draws (its lessons' chart blocks) goes through the store and back and must come out
equal, field by field, to a fresh computation: a chart drawn from stored data must be the chart the
calculators draw.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from calculators.charts import ChartError, chart_data
from calculators.setting import site_setting, using
from course.charts import stored_data
from course.charts.extension import _fence_blocks, parse_block
from course.charts.stored_data import DATA_FOLDER, decoded, encoded, stored_chart_data
from course.widgets import extension as widgets
from tests.conftest import ROOT

COURSE_CHARTS = [
    (page.relative_to(ROOT / "docs").as_posix(), line, parse_block(body))
    for page in sorted((ROOT / "docs").rglob("*.md"))
    for line, body in _fence_blocks(page.read_text(encoding="utf-8"))
]


WIDGET_CHARTS = [
    (page.relative_to(ROOT / "docs").as_posix(), key, payload["chart"], payload["params"])
    for page in sorted((ROOT / "docs").rglob("*.md"))
    for _, _, body in widgets.find_blocks(page.read_text(encoding="utf-8").splitlines())
    for name, defaults in [widgets.parse_block(body)]
    for key, payload in widgets.COMPUTE[name](defaults).get("charts", {}).items()
]


def test_the_course_draws_charts() -> None:
    assert len(COURSE_CHARTS) >= 10
    assert {"goodput-vs-rate", "roofline"} <= {block.name for _, _, block in COURSE_CHARTS}
    assert len(WIDGET_CHARTS) >= 4  # the widgets' charts in their default state


@pytest.mark.parametrize(
    ("chart", "params"), [w[2:] for w in WIDGET_CHARTS], ids=[f"{p}:{k}" for p, k, _, _ in WIDGET_CHARTS]
)
def test_every_widget_chart_comes_back_from_the_store_as_computed(
    chart: str, params: dict[str, object], tmp_path: Path
) -> None:
    computed = chart_data(chart, **params)
    assert decoded(encoded(computed)) == computed


@pytest.mark.parametrize(
    "block", [block for _, _, block in COURSE_CHARTS], ids=[f"{p}:{n}" for p, n, _ in COURSE_CHARTS]
)
def test_every_course_chart_comes_back_from_the_store_as_computed(
    block: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, params = block.name, block.params  # type: ignore[attr-defined]
    with using(site_setting()):  # the site draws its charts in its model setting (course.charts.stored_data)
        computed = chart_data(name, **params)
    assert decoded(encoded(computed)) == computed
    assert stored_chart_data(name, params, tmp_path) == computed  # computed and stored
    monkeypatch.setattr(stored_data, "chart_data", None)  # read back, or it fails
    assert stored_chart_data(name, params, tmp_path) == computed


def test_a_stored_chart_is_not_computed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = stored_chart_data("roofline", {"gpus": ["h200"]}, tmp_path)

    def computing(*args: object, **kwargs: object) -> None:
        raise AssertionError("computed again")

    monkeypatch.setattr(stored_data, "chart_data", computing)
    assert stored_chart_data("roofline", {"gpus": ["h200"]}, tmp_path) == first
    with pytest.raises(AssertionError, match="computed again"):  # other parameters: another entry
        stored_chart_data("roofline", {"gpus": ["h100-sxm"]}, tmp_path)


def test_errors_are_not_stored_and_other_calculators_data_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ChartError):
        stored_chart_data("roofline", {"gpus": ["no-such-gpu"]}, tmp_path)
    folder = tmp_path / DATA_FOLDER
    assert not any(folder.rglob("*.json"))
    stale = folder / "an-older-fingerprint"
    stale.mkdir(parents=True)
    (stale / "chart.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(stored_data, "calculators_fingerprint", lambda: "calculators-as-they-are-now")
    stored_chart_data("roofline", {}, tmp_path)
    assert [p.name for p in folder.iterdir()] == ["calculators-as-they-are-now"]


def test_an_unreadable_entry_is_computed_again(tmp_path: Path) -> None:
    first = stored_chart_data("roofline", {}, tmp_path)
    (entry,) = (tmp_path / DATA_FOLDER).rglob("*.json")
    entry.write_text('{"chart": "roofline"', encoding="utf-8")  # cut short (a full disk)
    assert stored_chart_data("roofline", {}, tmp_path) == first
