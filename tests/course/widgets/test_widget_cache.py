"""A widget's default state is kept on disk between builds (course.widgets.computed); behaviour only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from calculators.browser import kv_cache
from course.numbers.value_cache import CACHE_ENV
from course.widgets import computed
from course.widgets import extension as widgets

BLOCK = "name: kv-cache\nbatch: 8\ncontext: 4000"


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty number cache in ``tmp_path``, nothing held in memory (a new build)."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(computed, "_OPEN", {})
    return tmp_path


def _html(block: str = BLOCK) -> str:
    name, defaults = widgets.parse_block(block)
    return widgets.render_widget(name, defaults)


def test_a_stored_widget_draws_the_same_page_without_computing_it(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    def counting(raw: dict[str, Any]) -> dict[str, Any]:
        calls.append(raw)
        return kv_cache.compute(raw)

    monkeypatch.setitem(widgets.COMPUTE, kv_cache.NAME, counting)
    first = _html()
    assert len(calls) == 1  # computed once, in this build
    assert list(fresh_cache.glob("widgets/*/results.json"))  # and kept for the next
    monkeypatch.setattr(computed, "_OPEN", {})  # the next build: only the disk remembers
    monkeypatch.setitem(widgets.COMPUTE, kv_cache.NAME, lambda _: pytest.fail("computed again"))
    assert _html() == first  # byte for byte, keys in their order (the page's data-defaults shows them)
    assert widgets.find_problems(f"```widget\n{BLOCK}\n```\n", "lesson.md") == []  # the check reads it too


def test_other_defaults_or_another_setting_are_computed_not_served_from_the_store(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from calculators import setting

    _html()
    calls: list[dict[str, Any]] = []

    def counting(raw: dict[str, Any]) -> dict[str, Any]:
        calls.append(raw)
        return kv_cache.compute(raw)

    monkeypatch.setitem(widgets.COMPUTE, kv_cache.NAME, counting)
    _html("name: kv-cache\nbatch: 16\ncontext: 4000")  # other defaults
    assert len(calls) == 1
    monkeypatch.setattr(setting, "SITE_SETTING", None)  # the calculators' own defaults: spec peaks
    _html()
    assert len(calls) == 2


def test_results_json_cannot_give_back_exactly_are_not_stored(fresh_cache: Path) -> None:
    calls = []

    def with_a_tuple(raw: dict[str, Any]) -> dict[str, Any]:
        calls.append(raw)
        return {"pair": (1, 2)}  # JSON would give back a list

    assert computed.computed_widget("probe", {}, with_a_tuple) == {"pair": (1, 2)}
    assert computed.computed_widget("probe", {}, with_a_tuple) == {"pair": (1, 2)}
    assert len(calls) == 2


def test_rejected_defaults_are_not_stored(fresh_cache: Path) -> None:
    problems = widgets.find_problems("```widget\nname: kv-cache\nbatch: -3\n```\n", "lesson.md")
    assert [p.field for p in problems] == ["widget defaults"]
    assert widgets.find_problems("```widget\nname: kv-cache\nbatch: -3\n```\n", "lesson.md") == problems
