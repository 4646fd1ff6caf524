"""Every broken quiz in tests/fixtures/broken_quizzes/ gives the problem a lesson writer needs to fix it.

Each fixture is a whole page with one mistake; the expectation names the file line, the question and field,
and a piece of the message. A fixture without an expectation fails, so none sits there untested.
"""

from __future__ import annotations

import markdown
import pytest

from course.quiz.extension import find_problems
from tests.conftest import TESTS

FIXTURES = TESTS / "fixtures" / "broken_quizzes"

# file -> [(line, field, part of the message)], in the order find_problems reports them
EXPECTED: dict[str, list[tuple[int, str, str]]] = {
    "single-two-correct.md": [
        (8, "question 'bound' field 'options'", "exactly one option with correct: true, found 2")
    ],
    "single-none-correct.md": [
        (8, "question 'bound' field 'options'", "exactly one option with correct: true, found 0")
    ],
    "multiple-none-correct.md": [
        (8, "question 'latencies' field 'options'", "at least one option with correct: true")
    ],
    "numeric-not-a-number.md": [(8, "question 'ridge' field 'answer'", "must give a finite number")],
    "numeric-infinite.md": [(8, "question 'huge' field 'answer'", "must give a finite number, but gave inf")],
    "numeric-unknown-name.md": [(8, "question 'ridge' field 'answer'", "unknown name 'ridge_pont'")],
    "tolerance-zero.md": [(9, "question 'ridge' field 'tolerance'", "greater than 0, got '0%'")],
    "tolerance-words.md": [(9, "question 'ridge' field 'tolerance'", "must be a percentage like 5%")],
    "empty-option.md": [(12, "question 'bound' option 2 field 'text'", "is empty")],
    "empty-prompt.md": [(7, "question 'bound' field 'prompt'", "is missing or empty")],
    "missing-explain.md": [(12, "question 'bound' option 2 field 'explain'", "is missing or empty")],
    "duplicate-id.md": [(20, "question 'bound' field 'id'", "repeats the id of the question on line 5")],
    "misspelt-field.md": [
        (11, "question 'ridge' field 'explanation'", "is not a known field"),
        (5, "question 'ridge' field 'explain'", "is missing or empty"),
    ],
    "unknown-kind.md": [(6, "question 'bound' field 'kind'", "must be one of single, multiple, numeric")],
    "unknown-unit.md": [(10, "question 'step' field 'unit'", "got 'milliseconds'")],
    "broken-yaml.md": [(11, "quiz YAML", "cannot be read")],
}


def test_every_fixture_has_an_expectation() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.md")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_quiz_is_reported_with_file_line_question_and_message(name: str) -> None:
    path = f"fixtures/{name}"
    problems = find_problems((FIXTURES / name).read_text(encoding="utf-8"), path)
    assert [(p.file, p.line, p.field) for p in problems] == [
        (path, line, field) for line, field, _ in EXPECTED[name]
    ]
    for problem, (_, _, message) in zip(problems, EXPECTED[name], strict=True):
        assert message in problem.message
        assert problem.fix
        assert str(problem).startswith(f"{path}:{problem.line}: {problem.field}: ")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_quiz_page_shows_its_problems_instead_of_a_quiz(name: str) -> None:
    html = markdown.markdown(
        (FIXTURES / name).read_text(encoding="utf-8"),
        extensions=["pymdownx.superfences", "course.quiz.extension"],
    )
    if name == "duplicate-id.md":  # each block is sound alone; only the page-wide check sees the repeat
        assert html.count('class="rp-quiz"') == 2
        return
    assert "rp-quiz-error" in html
    assert "This quiz has problems" in html
    assert 'class="rp-quiz"' not in html
