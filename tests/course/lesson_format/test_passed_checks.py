"""A warm build does not run a page check again that passed on the same text with the same code.

:class:`~course.lesson_format.validation.PassedChecks` keeps passes only: a page with a problem is checked,
and shows its problem, on every build.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course.lesson_format import background
from course.lesson_format.problems import Problem
from course.lesson_format.validation import PassedChecks, validate_page

PAGE = "---\ntitle: A page\n---\n\nSome prose.\n"


class Counted:
    """A block check that counts its runs and finds a problem where the page says ``BAD``."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self, markdown: str, path: str) -> list[Problem]:
        self.runs += 1
        return [Problem(path, "block", "BAD found", "remove it")] if "BAD" in markdown else []


class ReadsDocs(Counted):
    def __call__(self, markdown: str, path: str, docs_dir: str = "docs") -> list[Problem]:  # type: ignore[override]
        return super().__call__(markdown, path)


def _build(docs: Path, cache: Path, check: Counted, text: str = PAGE) -> list[Problem]:
    """One build's check of one page: a new PassedChecks, as each build makes."""
    return validate_page(text, "a.md", [("course.fixture.extension", check)], docs, PassedChecks(cache, docs))


def test_a_check_that_passed_is_not_run_again_on_the_same_text(tmp_path: Path) -> None:
    check = Counted()
    for _ in range(3):
        assert _build(tmp_path / "docs", tmp_path / "cache", check) == []
    assert check.runs == 1
    assert _build(tmp_path / "docs", tmp_path / "cache", check, PAGE + "More.\n") == []  # edited: runs
    assert check.runs == 2


def test_a_problem_is_found_and_reported_on_every_build(tmp_path: Path) -> None:
    check = Counted()
    for _ in range(2):
        problems = _build(tmp_path / "docs", tmp_path / "cache", check, PAGE + "BAD\n")
        assert [p.message for p in problems] == ["BAD found"]
    assert check.runs == 2


def test_a_check_that_reads_the_docs_runs_again_when_another_file_changed(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "references.yml").write_text("a: 1\n", encoding="utf-8")
    reads, alone = ReadsDocs(), Counted()

    def build() -> None:
        checks = [("course.reads.extension", reads), ("course.alone.extension", alone)]
        assert validate_page(PAGE, "a.md", checks, docs, PassedChecks(tmp_path / "cache", docs)) == []

    build()
    build()
    assert (reads.runs, alone.runs) == (1, 1)
    (docs / "references.yml").write_text("a: 2\n", encoding="utf-8")  # another file than the page
    build()
    assert (reads.runs, alone.runs) == (2, 1)


def test_passes_while_serve_computes_in_the_background_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check passes a figure still being computed (pending): that pass says nothing for the next build."""
    check = Counted()
    monkeypatch.setattr(background, "enabled", lambda: True)
    _build(tmp_path / "docs", tmp_path / "cache", check)
    monkeypatch.setattr(background, "enabled", lambda: False)
    _build(tmp_path / "docs", tmp_path / "cache", check)
    _build(tmp_path / "docs", tmp_path / "cache", check)
    assert check.runs == 2


def test_without_passed_checks_every_check_runs(tmp_path: Path) -> None:
    check = Counted()
    for _ in range(2):
        validate_page(PAGE, "a.md", [("course.fixture.extension", check)], tmp_path)
    assert check.runs == 2
