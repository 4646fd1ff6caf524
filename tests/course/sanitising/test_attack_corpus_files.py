"""The files corpus (attack_corpus_files.py): hostile files are refused by ``check`` and by a strict
build, and nothing they point at or name reaches the site.

Two small fixture projects, each built in a temporary folder: the ``early`` payloads (links, pipes, hard
links, odd names, duplicate addresses, YAML over its bounds) must stop the build before MkDocs reads or
copies anything; the ``late`` ones (redirect paths, deep blocks, attribute names and classes) fail a strict
build with the other lesson problems and, built with the checks skipped, leave nothing behind: no redirect
written outside
the site or over a page, no reserved name, class or handler in a page. A canary secret lives in a file beside
the project, in its ``.git/config`` and in the builder's environment; it must not appear in site/.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from course.lesson_format.check import Settings, check, format_problem
from course.lesson_format.problems import Problem, printable
from course.lesson_format.site_config import read_site_config, write_derived_config
from course.lesson_format.validation import DEFAULT_BLOCK_MODULES
from course.sanitising.source_files import SOURCE_FIELD
from tests.conftest import BUILD_ENV, ROOT
from tests.course.sanitising.attack_corpus_files import (
    OUTSIDE,
    PAYLOADS,
    SECRET,
    SECRET_FILE,
    FilePayload,
    pipe_and_link_files,
)
from tests.fixture_docs import good_lesson_docs

EARLY = [p for p in PAYLOADS if p.stage == "early"]
LATE = [p for p in PAYLOADS if p.stage == "late"]
CANARY_ENV = {"RIDGEPOINT_FILES_CANARY": SECRET}


def make_project(folder: Path, payloads: list[FilePayload]) -> Path:
    """A fixture project in ``folder``/project (the good lesson, the real overrides, a snippet folder, a
    ``.git/config`` holding the canary) with ``payloads`` planted, and the canary file beside it."""
    project = folder / "project"
    good_lesson_docs(project)
    shutil.copytree(ROOT / "overrides", project / "overrides")
    (project / "snippets").mkdir()
    (project / "snippets" / "note.md").write_text("A snippet.\n", encoding="utf-8")
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text(f"[http]\n\textraheader = basic {SECRET}\n", encoding="utf-8")
    (folder / SECRET_FILE).write_text(SECRET, encoding="utf-8")
    for plant in dict.fromkeys(payload.plant for payload in payloads):
        plant(project)
    return project


def settings(project: Path) -> Settings:
    return Settings(project / "docs", DEFAULT_BLOCK_MODULES, (project / "overrides", project / "snippets"))


def build(project: Path, *, strict: bool = True, unchecked: bool = False) -> subprocess.CompletedProcess[str]:
    """``mkdocs build`` of the project with its own overrides and snippet folder, the canary in the env."""
    extensions = []
    for entry in read_site_config()["markdown_extensions"]:
        if isinstance(entry, dict) and "pymdownx.snippets" in entry:
            entry = {"pymdownx.snippets": {"base_path": [str(project / "snippets")], "check_paths": True}}
        extensions.append(entry)
    config = write_derived_config(
        project / "mkdocs.yml",
        project / "docs",
        strict=strict,
        theme={"name": "material", "custom_dir": str(project / "overrides")},
        markdown_extensions=extensions,
    )
    env = {**BUILD_ENV, **CANARY_ENV, **({"RIDGEPOINT_UNCHECKED_BUILD": "1"} if unchecked else {})}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(config), "-d", str(project / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,  # a pipe read by the build would wait for ever: fail instead of hanging the suite
    )


def unmatched(payloads: list[FilePayload], problems: list[Problem]) -> list[str]:
    """The payloads no problem is about, with what was found for their file."""
    missing = []
    for payload in payloads:
        if not any(payload.matches(p.file, p.field, str(p)) for p in problems):
            found = [str(p) for p in problems if p.file.endswith(payload.file)]
            missing.append(f"{payload.id}: expected {payload.message!r} for {payload.file!r}, got {found}")
    return missing


def assert_no_canary(folder: Path) -> None:
    """No file under ``folder`` holds the canary secret (nor its environment's spelling)."""
    leaked = [
        path
        for path in folder.rglob("*")
        if path.is_file() and not path.is_symlink() and SECRET.encode() in path.read_bytes()
    ]
    assert not leaked, f"the canary secret reached {leaked}"


@pytest.fixture(scope="module")
def early_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("early"), EARLY)


@pytest.fixture(scope="module")
def late_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    shutil.rmtree(OUTSIDE, ignore_errors=True)
    yield make_project(tmp_path_factory.mktemp("late"), LATE)
    shutil.rmtree(OUTSIDE, ignore_errors=True)


def test_the_files_corpus_covers_each_family() -> None:
    assert len(PAYLOADS) >= 25
    assert len({p.id for p in PAYLOADS}) == len(PAYLOADS)
    by_family: dict[str, int] = {}
    for payload in PAYLOADS:
        by_family[payload.family] = by_family.get(payload.family, 0) + 1
    assert len(by_family) == 4
    assert min(by_family.values()) >= 5, by_family


def test_check_refuses_every_early_payload_before_reading_it(early_project: Path) -> None:
    problems, _ = check((), settings(early_project))
    assert not unmatched(EARLY, problems), "\n".join(unmatched(EARLY, problems))
    for payload in EARLY:
        fields = {p.field for p in problems if payload.matches(p.file, p.field, str(p))}
        assert SOURCE_FIELD in fields, f"{payload.id}: {fields}"  # stops the build before MkDocs reads
    assert SECRET not in "\n".join(map(str, problems))


def test_check_prints_file_names_escaped(early_project: Path) -> None:
    """A newline in a file name must not start a line of its own: a CI runner reads ``::error::`` as a
    command. The name is printed with the newline escaped."""
    problems, _ = check((), settings(early_project))
    printed = "\n\n".join(format_problem(p, "docs/") for p in problems)
    assert "x\\n::error::pwned.md" in printed
    commands = [line for line in printed.splitlines() if line.lstrip().startswith("::")]
    assert not commands
    assert all(printable(line) == line for line in printed.splitlines())


@pytest.mark.site
def test_a_strict_build_stops_at_every_early_payload_and_publishes_no_secret(early_project: Path) -> None:
    result = build(early_project)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    for payload in EARLY:
        assert printable(payload.file) in output, payload.id
        assert payload.message in output, payload.id
    assert "Aborted with a BuildError" in output
    site = early_project / "site"
    site.mkdir(exist_ok=True)
    assert not list(site.rglob("*.html"))  # stopped before anything was written
    assert SECRET not in output
    assert_no_canary(site)


def test_check_refuses_every_late_payload(late_project: Path) -> None:
    problems, _ = check((), settings(late_project))
    assert not unmatched(LATE, problems), "\n".join(unmatched(LATE, problems))


@pytest.mark.site
def test_a_strict_build_refuses_every_late_payload(late_project: Path) -> None:
    result = build(late_project)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    for payload in LATE:
        assert payload.message in output, payload.id
    assert not (late_project / "site" / "foundations" / "class-md").exists()
    assert not Path(OUTSIDE).exists()


@pytest.mark.site
def test_late_payloads_are_inert_in_a_build_that_skips_the_checks(late_project: Path) -> None:
    """As under a builder without our hook: redirects with problems are never written (not outside the site,
    not over a page), and no reserved name, furniture class or handler reaches a page."""
    result = build(late_project, strict=False, unchecked=True)
    assert result.returncode == 0, result.stdout + result.stderr
    site = late_project / "site"
    assert not Path(OUTSIDE).exists()
    assert not (late_project.parent / "pwned").exists()
    assert not any((site / name).exists() for name in ("moved-a", "moved-b", "moved-c", "moved-d", "moved-e"))
    lesson_page = (site / "foundations" / "good-lesson" / "index.html").read_text(encoding="utf-8")
    assert "Moved to" not in lesson_page  # the redirect onto an existing address was not written over it
    assert "<article" in (site / "foundations" / "index.html").read_text(encoding="utf-8")
    pages = {
        "name-scope": 'name="__md_scope"',
        "name-rp": 'name="rp-quiz"',
        "class-md": "md-banner",
        "class-rp": 'class="rp-problems"',
        "class-admonition": "md-header",
        "class-details": "rp-quiz",
        "bare-word": "onclick",
        "bare-block": "onmouseover",
    }
    for page, forbidden in pages.items():
        text = (site / "foundations" / page / "index.html").read_text(encoding="utf-8")
        article = text[text.index("<article") : text.index("</article>")]
        assert forbidden not in article, page
    assert_no_canary(site)


def test_a_docs_folder_that_is_itself_a_link_is_refused(tmp_path: Path) -> None:
    """``docs`` replaced by a link (to the repository's parent, say): nothing under it is read."""
    project = make_project(tmp_path, [])
    (project / "docs").rename(project / "real-docs")
    (project / "docs").symlink_to(project / "real-docs")
    problems, _ = check((), settings(project))
    refused = [p for p in problems if p.field == SOURCE_FIELD and "itself is a symbolic link" in p.message]
    assert refused, problems


def test_the_course_files_as_pipes_or_links_are_refused_without_tracks_yml(tmp_path: Path) -> None:
    project = make_project(tmp_path, [])
    pipe_and_link_files(project)
    problems, _ = check((), settings(project))
    refused = {p.file for p in problems if p.field == SOURCE_FIELD}
    assert {"references.yml", "redirects.yml", "glossary.yml", "foundations/memory.png"} <= refused, problems
    assert any(p.file == "tracks.yml" and "does not exist" in p.message for p in problems)
    assert SECRET not in "\n".join(map(str, problems))


@pytest.mark.site
def test_a_build_of_the_course_files_as_pipes_or_links_stops_before_reading_them(tmp_path: Path) -> None:
    project = make_project(tmp_path, [])
    pipe_and_link_files(project)
    result = build(project)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    for name in ("references.yml", "redirects.yml", "glossary.yml", "foundations/memory.png"):
        assert f"{name}: file: " in output, name
    assert SECRET not in output
    (project / "site").mkdir(exist_ok=True)
    assert_no_canary(project / "site")
