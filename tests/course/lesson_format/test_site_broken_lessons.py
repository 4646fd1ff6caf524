"""Each kind of broken lesson gets its own clear message, and a build reports all of them together.

The fixtures are a small docs tree (tests/fixtures/broken_lessons/) with one good lesson and one broken lesson
per mistake. Validation runs without MkDocs (fast); one build with the real config shows that MkDocs fails
with every problem listed, and that the problems do not stop other pages from being read.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
from pathlib import Path

import pytest

from course.lesson_format.problems import Problem
from course.lesson_format.site_config import write_derived_config
from course.lesson_format.validation import validate_docs
from tests.conftest import TESTS, build_site

FIXTURES = TESTS / "fixtures" / "broken_lessons"

# file -> (field, line, words the message must contain, words the fix must contain)
EXPECTED: dict[str, tuple[str, int | None, tuple[str, ...], tuple[str, ...]]] = {
    "foundations/missing-title.md": ("title", 1, ("required", "missing"), ("title:",)),
    "foundations/unknown-track.md": (
        "track",
        4,
        ("unknown track 'compute'", "foundations, inference"),
        ("track: foundations",),
    ),
    "inference/bad-prerequisite.md": (
        "prerequisites",
        8,
        ("'the-memory-wall'", "good-lesson"),
        ("prerequisites: [",),
    ),
    "foundations/duplicate-order.md": (
        "order",
        5,
        ("9 is also the order of foundations/claim-off.md",),
        ("order: ",),
    ),
    "foundations/malformed-yaml.md": ("front matter", 2, ("not valid YAML",), ('title: "Prefill vs decode',)),
    "foundations/wrong-type.md": ("order", 5, ("whole number", "'first'"), ("order: ",)),
    "foundations/claim-off.md": (
        'claim "about 9 ms"',
        10,
        ("states 9 ms", "6.68 ms", "tolerance 10%"),  # the course's calibrated step, KV reads counted
        ('"about 7 ms"',),
    ),
    "foundations/unknown-calculator-name.md": (
        "number {{ Scenario().decode().time_s * speedup | ms }}",
        10,
        ("unknown name 'speedup'", "Scenario"),
        ("Scenario()",),
    ),
    "foundations/unknown-unit.md": (
        "number {{ Scenario().decode().time_s | fortnights }}",
        10,
        ("unknown unit 'fortnights'", "ms"),
        ("| ms",),
    ),
    "foundations/script-tag.md": (
        "HTML <script>",
        12,
        ("not a tag lessons may use",),
        ("remove the <script>",),
    ),
    "foundations/inline-onclick.md": ("HTML <button>", 10, ("not a tag lessons may use",), ("Markdown",)),
    "foundations/javascript-url.md": ("javascript: URL", 10, ("javascript: scheme",), ("https://",)),
    "foundations/bad-math.md": ("math", 10, ("never closed",), (r"\frac",)),
    "foundations/no-front-matter.md": ("front matter", 1, ("YAML front matter",), ("title:", "track:")),
    "inference/wrong-folder.md": ("track", 4, ("docs/inference/",), ("move the file to docs/foundations/",)),
    "foundations/unknown-field.md": ("difficulty", 8, ("not a lesson field",), ("remove it",)),
    "foundations/too-many-takeaways.md": ("takeaways", 6, ("1 to 6", "got 7"), ("few ideas",)),
}
# Chart checks belong to course.charts.extension; these fixtures wait for its find_problems.
CHART_FIXTURES = {
    "foundations/unknown-chart.md": ("no-such-chart",),
    "foundations/bad-chart-parameter.md": ("no-such-gpu",),
}


@pytest.fixture(scope="module")
def problems() -> list[Problem]:
    return validate_docs(FIXTURES)


def _problems_of(problems: list[Problem], file: str) -> list[Problem]:
    return [p for p in problems if p.file == file]


@pytest.mark.parametrize("file", sorted(EXPECTED))
def test_each_broken_lesson_gets_its_clear_message(problems: list[Problem], file: str) -> None:
    field, line, message_words, fix_words = EXPECTED[file]
    matching = [p for p in _problems_of(problems, file) if p.field == field]
    assert matching, f"no problem on field {field!r} for {file}; got: {_problems_of(problems, file)}"
    problem = matching[0]
    assert problem.line == line
    for words in message_words:
        assert words in problem.message
    for words in fix_words:
        assert words in problem.fix
    text = str(problem)
    assert text.startswith(f"{file}:{line}: {field}: ")
    assert "Fix: " in text


@pytest.mark.parametrize("file", sorted(CHART_FIXTURES))
def test_broken_charts_get_a_message(problems: list[Problem], file: str) -> None:
    if not callable(getattr(importlib.import_module("course.charts.extension"), "find_problems", None)):
        pytest.skip("course.charts.extension has no find_problems yet")
    found = " ".join(str(p) for p in _problems_of(problems, file))
    for words in CHART_FIXTURES[file]:
        assert words in found


def test_good_lesson_and_pages_have_no_problem(problems: list[Problem]) -> None:
    clean = ["index.md", "foundations/index.md", "inference/index.md", "foundations/good-lesson.md"]
    assert [p for p in problems if p.file in clean] == []


def test_every_fixture_file_is_expected_to_fail(problems: list[Problem]) -> None:
    """A fixture that stopped failing (a check removed by mistake) must not go unnoticed."""
    clean = {
        "README.md",
        "index.md",
        "foundations/index.md",
        "inference/index.md",
        "foundations/good-lesson.md",
    }
    broken = {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.md")} - clean
    assert broken == set(EXPECTED) | set(CHART_FIXTURES)
    failing = {p.file for p in problems}
    assert set(EXPECTED) <= failing


@pytest.mark.site
def test_build_fails_listing_every_problem_together(tmp_path: Path, problems: list[Problem]) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES, docs, ignore=shutil.ignore_patterns("README.md"))
    config = write_derived_config(tmp_path / "mkdocs.yml", docs)
    result: subprocess.CompletedProcess[str] = build_site(tmp_path / "site", config)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"{len(problems)} lesson problems found" in output
    for problem in problems:
        assert str(problem).splitlines()[0] in output
    assert not (tmp_path / "site" / "foundations" / "script-tag" / "index.html").exists()
