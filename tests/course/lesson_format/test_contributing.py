"""Contributing a lesson: the scaffold, the lesson check and the guide (the author reference has its own).

The broken-lesson and broken-quiz expectations are imported from their own tests, so
``course.lesson_format.check`` is held to exactly the messages the site build gives.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from course.lesson_format import check as course_check
from course.lesson_format.lessons import load_course, parse_tracks
from course.lesson_format.navigation import build_nav, reading_order
from course.lesson_format.problems import docs_prefix
from course.lesson_format.scaffold import TEMPLATE, ScaffoldError, create_lesson, lesson_id_from_title
from course.lesson_format.site_config import write_derived_config
from course.lesson_format.validation import DEFAULT_BLOCK_MODULES, block_validators, validate_page
from tests.conftest import ROOT, build_site
from tests.course.lesson_format.test_site_broken_lessons import CHART_FIXTURES
from tests.course.lesson_format.test_site_broken_lessons import EXPECTED as LESSON_EXPECTED
from tests.course.lesson_format.test_site_broken_lessons import FIXTURES as LESSON_FIXTURES
from tests.course.quiz.test_quiz_fixtures import EXPECTED as QUIZ_EXPECTED
from tests.course.quiz.test_quiz_fixtures import FIXTURES as QUIZ_FIXTURES

SETTINGS = course_check.read_settings(ROOT / "mkdocs.yml")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A copy of the course's docs/ to scaffold into."""
    copy = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", copy)
    return copy


def _check(paths: list[Path], docs_dir: Path) -> list[str]:
    problems, _ = course_check.check(paths, course_check.Settings(docs_dir, SETTINGS.block_modules))
    return [str(p) for p in problems]


# ------------------------------------------------------------------------------------------------ scaffold
def test_scaffold_writes_a_lesson_that_passes_every_check_and_shows_each_block(docs: Path) -> None:
    lesson = create_lesson("Batching: why servers decode together", "serving", docs)
    assert lesson.path == docs / "serving" / "batching-why-servers-decode-together.md"
    assert _check([], docs) == []
    text = lesson.path.read_text(encoding="utf-8")
    for block in (
        "```chart",
        "```quiz",
        '{{ "about',
        "| ms | .1f }}",
        '??? deeper "',
        "$$",
        "<!-- takeaways -->",
        "```widget",
    ):
        assert block in text
    assert "--8<--" not in text  # the guide's section markers are not the author's business
    assert 'title: "Batching: why servers decode together"' in text
    # ... and its worked notebook, which every lesson has: named after the lesson, naming it in its header
    assert lesson.notebook == docs / "serving" / "notebooks" / "batching-why-servers-decode-together.py"
    notebook = lesson.notebook.read_text(encoding="utf-8")
    assert "#     lesson: batching-why-servers-decode-together\n" in notebook
    assert "# # Batching: why servers decode together, worked through in Python\n" in notebook


def test_a_lesson_without_its_notebook_is_a_problem_whose_fix_writes_one(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from course.lesson_format.scaffold import main

    lesson = create_lesson("Orphan lesson", "serving", docs)
    lesson.notebook.unlink()
    problems = _check([lesson.path], docs)
    assert len(problems) == 1, problems
    assert "serving/orphan-lesson.md: notebook" in problems[0]
    assert "every lesson of track 'serving' has one" in problems[0]
    assert "new_lesson -- --notebook-for orphan-lesson" in problems[0]
    assert main(["--notebook-for", "orphan-lesson", "--docs", str(docs)]) == 0
    assert "Wrote" in capsys.readouterr().out
    assert _check([], docs) == []
    assert main(["--notebook-for", "orphan-lessen", "--docs", str(docs)]) == 2
    assert "Did you mean orphan-lesson?" in capsys.readouterr().err


def test_a_track_may_make_notebooks_optional_and_nothing_else() -> None:
    tracks, problems = parse_tracks("- {key: drafts, title: D, summary: S, order: 1, notebooks: optional}\n")
    assert problems == []
    assert tracks[0].notebook_required is False
    _, problems = parse_tracks("- {key: drafts, title: D, summary: S, order: 1, notebooks: maybe}\n")
    assert [(p.field, p.fix) for p in problems] == [("track #1 notebooks", "notebooks: required")]


def test_scaffold_places_the_lesson_last_in_its_track_after_the_previous_one(docs: Path) -> None:
    before = [lesson.id for lesson in load_course(docs).lessons_in("serving")]
    lesson = create_lesson("Second lesson", "serving", docs)
    course = load_course(docs)
    assert [x.id for x in course.lessons_in("serving")] == [*before, "second-lesson"]
    assert course.lesson_by_id("second-lesson").prerequisites == (before[-1],)  # type: ignore[union-attr]
    pages = [p.relative_to(docs).as_posix() for p in docs.rglob("*.md")]
    order = reading_order(build_nav(course, pages))
    serving = [p for p in order if p.startswith("serving/") and p != "serving/index.md"]
    assert serving[-1] == lesson.path.relative_to(docs).as_posix()


def test_scaffold_in_an_empty_track_starts_at_order_one_without_prerequisites(docs: Path) -> None:
    tracks = docs / "tracks.yml"
    tracks.write_text(
        tracks.read_text(encoding="utf-8")
        + "- key: queueing\n  title: Queueing\n  summary: Many users.\n  order: 9\n",
        encoding="utf-8",
    )
    lesson = create_lesson("Queues", "queueing", docs)
    assert (lesson.order, lesson.previous) == (1, None)
    assert "prerequisites: []" in lesson.path.read_text(encoding="utf-8")
    assert [p for p in _check([lesson.path], docs) if "queues" in p] == []


def test_scaffold_refuses_to_overwrite_or_reuse_an_id(docs: Path) -> None:
    lesson = create_lesson("Same title", "serving", docs)
    lesson.path.write_text(lesson.path.read_text(encoding="utf-8") + "\nMy own words.\n", encoding="utf-8")
    with pytest.raises(ScaffoldError, match="already exists; the scaffold never overwrites"):
        create_lesson("Same title", "serving", docs)
    assert lesson.path.read_text(encoding="utf-8").endswith("My own words.\n")
    with pytest.raises(ScaffoldError, match=r"already used by .*memory-wall\.md"):
        create_lesson("Memory wall", "serving", docs)


def test_scaffold_names_the_tracks_when_the_track_is_unknown(docs: Path) -> None:
    with pytest.raises(ScaffoldError) as error:
        create_lesson("Anything", "servng", docs)
    message = str(error.value)
    assert "unknown track 'servng'" in message
    assert "Did you mean --track serving?" in message
    assert "foundations" in message
    assert "docs/tracks.yml" in message
    assert not list((docs / "infrence").glob("*")) if (docs / "infrence").exists() else True


def test_scaffold_needs_an_id_it_can_make() -> None:
    assert lesson_id_from_title("Prefill vs decode: the two phases!") == "prefill-vs-decode-the-two-phases"
    assert lesson_id_from_title("Über GPUs") == "uber-gpus"
    assert len(lesson_id_from_title("word " * 40)) <= 60


def test_scaffold_command_line_reports_errors_without_a_traceback(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from course.lesson_format.scaffold import main

    assert main(["???", "--track", "serving", "--docs", str(docs)]) == 2
    assert "give one with --id" in capsys.readouterr().err
    assert main(["A title", "--track", "serving", "--docs", str(docs)]) == 0
    out = capsys.readouterr().out
    assert "Wrote" in out
    assert "http://127.0.0.1:8000/serving/a-title/" in out


def test_the_template_itself_is_a_valid_lesson(docs: Path) -> None:
    target = docs / "serving" / "template-as-is.md"
    shutil.copy(TEMPLATE, target)
    text = TEMPLATE.read_text(encoding="utf-8")
    problems = [p for p in _check([target], docs) if "template-as-is" in p and "notebook" not in p]
    assert problems == [
        p for p in problems if "order" in p
    ]  # order 99 may collide with nothing; nothing else (its notebook is the scaffold's job)
    assert "```widget" in text  # the guide's widget example is checked here
    assert "--8<-- [start:widget]" in text


@pytest.mark.site
def test_scaffolded_lesson_builds_and_renders_each_block(tmp_path: Path, docs: Path) -> None:
    lesson = create_lesson("A built lesson", "serving", docs)
    config = write_derived_config(tmp_path / "mkdocs.yml", docs)
    result = build_site(tmp_path / "site", config)
    assert result.returncode == 0, result.stdout + result.stderr
    page = (tmp_path / "site" / "serving" / lesson.lesson_id / "index.html").read_text(encoding="utf-8")
    for marker in ("rp-number--claim", "<svg", "rp-quiz", "<math", "deeper", "Key takeaways", "rp-widget"):
        assert marker in page
    assert "rp-number--error" not in page
    notebook = tmp_path / "site" / "serving" / "notebooks" / lesson.lesson_id / "index.html"
    assert "4.78 ms" in notebook.read_text(encoding="utf-8")  # executed at build, its output on the page


# ------------------------------------------------------------------------------ course.lesson_format.check
def _output(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = course_check.main(argv)
    return status, capsys.readouterr().out


def test_check_passes_on_the_course(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _output(["--config", str(ROOT / "mkdocs.yml")], capsys)
    assert status == 0, out
    assert "no problems" in out


def test_check_reports_every_broken_lesson_with_line_field_message_and_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"docs_dir: {LESSON_FIXTURES}\n", encoding="utf-8")
    status, out = _output(["--config", str(config)], capsys)
    assert status == 1
    prefix = docs_prefix(LESSON_FIXTURES)  # relative to the working directory, as the build prints it
    for file, (field, line, message_words, fix_words) in LESSON_EXPECTED.items():
        heading = f"{prefix}{file}:{line}: {field}\n" if line else f"{prefix}{file}: {field}\n"
        assert heading in out, f"{heading!r} missing from:\n{out}"
        report = out.split(heading, 1)[1].split("\n\n", 1)[0]
        assert report.startswith("  problem: ")
        assert all(words in report.split("  fix:")[0] for words in message_words), report
        assert all(words in report.split("  fix:")[1] for words in fix_words), report
    for file, words in CHART_FIXTURES.items():
        assert any(w in out.split(f"{prefix}{file}:", 1)[1].split("\n\n", 1)[0] for w in words)
    assert re.search(r"course\.lesson_format\.check: \d+ problems in \d+ files", out)


def test_check_reports_every_broken_quiz_with_its_line_and_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    files = [QUIZ_FIXTURES / name for name in sorted(QUIZ_EXPECTED)]
    status, out = _output([str(f) for f in files], capsys)
    assert status == 1
    for name, expected in QUIZ_EXPECTED.items():
        for line, field, message in expected:
            heading = f"{QUIZ_FIXTURES / name}:{line}: {field}\n"
            assert heading in out, f"{heading!r} missing"
            assert message in out.split(heading, 1)[1].split("\n\n", 1)[0]


def test_check_of_one_file_still_sees_the_other_lessons(docs: Path) -> None:
    lesson = create_lesson("Clash", "serving", docs)
    text = lesson.path.read_text(encoding="utf-8")
    lesson.path.write_text(re.sub(r"^order: \d+", "order: 1", text, flags=re.M), encoding="utf-8")
    found = _check([lesson.path], docs)
    assert any(
        "serving/clash.md:" in p and "also the order of serving/prefill-vs-decode.md" in p for p in found
    )
    assert all(p.startswith("serving/clash.md") for p in found)  # only the file asked about


def test_check_uses_the_extensions_mkdocs_enables() -> None:
    assert set(DEFAULT_BLOCK_MODULES) <= set(SETTINGS.block_modules)
    assert "course.author_reference.extension" in SETTINGS.block_modules
    assert SETTINGS.docs_dir == ROOT / "docs"


# ------------------------------------------------------------------------------------------------- guide
@pytest.mark.site
def test_guide_shows_each_example_as_source_and_rendered(built_site: Path) -> None:
    page = (built_site / "contributing" / "index.html").read_text(encoding="utf-8")
    assert "{{ Scenario().decode().time_s | ms | .1f }}" in page  # the source, shown as code
    assert "```quiz" in page
    assert "```chart" in page
    assert "```widget" in page
    for rendered in (
        "rp-number--claim",
        "rp-quiz",
        "<svg",
        "<math",
        'class="rp-widget"',
        "From idea to merged",
    ):
        assert rendered in page
    for broken in ("rp-number--error", "rp-math--error", "cannot be drawn", "--8&lt;--"):
        assert broken not in page
    nav = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'href="contributing/"' in nav
    assert 'href="contributing/reference/"' in nav


def _markdown_examples(text: str) -> list[str]:
    """The ```markdown examples of CONTRIBUTING.md (3 or 4 backticks), with their nested fences."""
    return [m.group(2) for m in re.finditer(r"^(`{3,4})markdown\n(.*?)^\1$", text, re.M | re.S)]


def test_contributing_examples_pass_the_lesson_checks() -> None:
    examples = _markdown_examples((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    validators = block_validators(SETTINGS.block_modules)
    joined = "\n".join(examples)
    for block in ("```chart", "```quiz", "```widget", '{{ "', "| .1f }}", "??? deeper", "$I ="):
        assert block in joined
    for example in examples:
        assert validate_page(example, "CONTRIBUTING.md", validators, ROOT / "docs") == [], example


def test_contributing_sections_quoted_by_the_guide_exist() -> None:
    guide = (ROOT / "docs" / "contributing" / "index.md").read_text(encoding="utf-8")
    sources = {"CONTRIBUTING.md": ROOT / "CONTRIBUTING.md", "lesson.md": TEMPLATE}
    quoted = re.findall(r'--8<-- "([^":]+):([a-z-]+)"', guide)
    assert {name for _, name in quoted} >= {"front-matter", "number-insert", "number-claim", "chart", "quiz"}
    for file, section in quoted:
        text = sources[file].read_text(encoding="utf-8")
        assert f"--8<-- [start:{section}]" in text
        assert f"--8<-- [end:{section}]" in text
