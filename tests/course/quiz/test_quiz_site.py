"""The quizzes in the built course: markup for screen and print, and answers that match the calculators."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from calculators.units import UNITS
from course.quiz.model import NumericQuestion, find_quiz_fences, parse_quiz
from tests.conftest import ROOT, TESTS, build_site

pytestmark = pytest.mark.site

DOCS = ROOT / "docs"
# (questions, numeric)
LESSONS = {"serving/prefill-vs-decode": (7, 3), "foundations/memory-wall": (4, 0), "model/kv-cache": (7, 4)}


class _QuizPage(HTMLParser):
    """The quiz facts of one built page: questions with their kinds and data, and the answer key's entries."""

    def __init__(self) -> None:
        super().__init__()
        self.questions: list[dict[str, str | None]] = []
        self.details = 0
        self.key_entries = 0
        self.in_key = False
        self.depth = 0
        self.key_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if self.in_key:
            self.depth += tag not in ("input", "br", "img")
            if tag == "li" and "value" in found:
                self.key_entries += 1
        if "rp-quiz__question" in classes:
            self.questions.append(found)
        if tag == "details" and "rp-quiz__answer" in classes:
            self.details += 1
            assert "open" not in found
        if "rp-quiz__key" in classes:
            self.in_key, self.depth = True, 1

    def handle_endtag(self, tag: str) -> None:
        if self.in_key:
            self.depth -= 1
            self.in_key = self.depth > 0

    def handle_data(self, data: str) -> None:
        if self.in_key:
            self.key_text.append(data)


def _page(built_site: Path, lesson: str) -> _QuizPage:
    parser = _QuizPage()
    parser.feed((built_site / lesson / "index.html").read_text(encoding="utf-8"))
    return parser


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_lesson_ends_with_a_quiz_of_enough_questions(built_site: Path, lesson: str) -> None:
    page = _page(built_site, lesson)
    questions, numeric = LESSONS[lesson]
    assert len(page.questions) >= questions
    assert sum(q["data-kind"] == "numeric" for q in page.questions) >= numeric
    # Every question keeps its answer in a collapsed <details> and has one entry in the print answer key.
    assert page.details == len(page.questions)
    assert page.key_entries == len(page.questions)
    assert "Answer key" in "".join(page.key_text)


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_numeric_answers_in_the_page_are_the_calculators_values(built_site: Path, lesson: str) -> None:
    expected = {}
    for fence in find_quiz_fences((DOCS / f"{lesson}.md").read_text(encoding="utf-8")):
        quiz = parse_quiz(fence.source).quiz
        assert quiz is not None
        expected.update({q.id: q for q in quiz.questions if isinstance(q, NumericQuestion)})
    page = _page(built_site, lesson)
    shown = {q["data-question"]: q for q in page.questions if q["data-kind"] == "numeric"}
    assert shown.keys() == expected.keys()
    for ident, question in expected.items():
        assert float(shown[ident]["data-answer"] or "nan") == pytest.approx(question.value, rel=1e-12)
        allowed = question.tolerance.allowed_error(question.value)
        assert float(shown[ident]["data-allowed-error"] or "nan") == pytest.approx(allowed, rel=1e-12)
        assert question.unit in UNITS


def test_quiz_assets_are_in_the_site_and_linked(built_site: Path) -> None:
    html = (built_site / "serving/prefill-vs-decode/index.html").read_text(encoding="utf-8")
    assert (built_site / "assets/ridgepoint/quiz.js").is_file()
    assert re.search(r'src="[./]*assets/ridgepoint/quiz\.js"', html)
    # quiz.css reaches pages inside our one stylesheet bundle (course/page_assets).
    bundle = re.search(r'href="[./]*(assets/ridgepoint/ridgepoint\.[0-9a-f]{8}\.min\.css)"', html)
    assert bundle is not None
    css = (built_site / bundle.group(1)).read_text(encoding="utf-8")
    parts = re.split(r"/\* ([\w-]+\.css) \*/\n", css)[1:]  # each file follows its name
    css = dict(zip(parts[::2], parts[1::2], strict=True))["quiz.css"]
    # Screen hides the key; print shows it and hides the controls and the <details>.
    screen, _, printed = css.partition("@media print")
    assert re.search(r"\.rp-quiz__key\s*\{\s*display:\s*none", screen)
    assert re.search(r"\.rp-quiz__key\s*\{\s*display:\s*block", printed)
    assert ".rp-quiz__answer" in printed


def test_a_broken_quiz_fails_the_build_naming_file_line_and_question(tmp_path: Path) -> None:
    fixture = TESTS / "fixtures"
    site = tmp_path / "quiz_site"
    shutil.copytree(fixture / "quiz_site", site)
    shutil.copy(fixture / "broken_quizzes" / "single-two-correct.md", site / "docs" / "broken.md")
    config = site / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace("../../..", str(ROOT)), encoding="utf-8")
    result = build_site(tmp_path / "out", config)
    assert result.returncode != 0
    assert (
        "broken.md:8: question 'bound' field 'options': a single-choice question needs exactly one option"
        in result.stdout + result.stderr
    )
