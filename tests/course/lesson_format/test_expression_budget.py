"""A lesson's expressions share a budget of calculator time per page and per build, so no lesson hangs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from calculators.expressions import FIX_BUDGET
from course.lesson_format import expression_budget
from course.lesson_format.validation import block_validators, validate_docs, validate_page


def test_a_page_past_its_budget_gets_a_problem_naming_file_expression_and_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(expression_budget, "PAGE_LIMIT_S", 0.0)
    lesson = "A decode step takes {{ Scenario().decode().time_s * 3.25 | ms | .1f }}.\n"
    problems = validate_page(lesson, "serving/x.md", block_validators(["course.numbers.extension"]))
    assert [(p.file, p.line) for p in problems] == [("serving/x.md", 1)]
    assert "the page serving/x.md has used its 0 s of calculator time" in problems[0].message
    assert "'Scenario().decode().time_s * 3.25' was not computed" in problems[0].message
    assert problems[0].fix == FIX_BUDGET


def test_the_pages_of_one_build_share_its_budget(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(expression_budget, "BUILD_LIMIT_S", 0.0)
    (tmp_path / "x.md").write_text("It takes {{ Scenario().decode().time_s * 4.25 | ms | .1f }}.\n")
    messages = [p.message for p in validate_docs(tmp_path) if p.file == "x.md"]
    assert any("this build of the course has used its 0 s" in m for m in messages), messages
