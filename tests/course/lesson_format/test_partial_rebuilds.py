"""``dev.py serve`` writes only the edited page, and the site it serves is the one a full build writes.

The unit tests pin the rules (what every page shares, when the site folder is emptied, the save that lands
during a build); the site tests build fixture lessons as the server does, edit one, and compare every file
with a full build of the same sources, after checking that the rebuild really wrote one page.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mkdocs.utils import CountHandler

from course.lesson_format import partial_rebuilds
from course.lesson_format.partial_rebuilds import (
    SERVE_FLAGS,
    finish_build,
    forget_build,
    page_read,
    prepare_rebuild,
    quiet_dirty_build_warning,
    shared_inputs,
    write_edited_pages_again,
)
from course.lesson_format.site_config import read_site_config, write_derived_config
from tests.conftest import BUILD_ENV, ROOT
from tests.fixture_docs import good_lesson_docs

LESSON = "foundations/good-lesson.md"
SECOND = "foundations/second-lesson.md"
UNTITLED = "notes/about.md"


def _docs(root: Path) -> Path:
    """Two good fixture lessons in one track, the track pages, the home page and a page titled by its
    heading."""
    docs = good_lesson_docs(root)
    first = (docs / LESSON).read_text(encoding="utf-8")
    second = first.replace("good-lesson", "second-lesson").replace("order: 1", "order: 2")
    (docs / SECOND).write_text(second, encoding="utf-8")
    (docs / "notes").mkdir()  # a page outside the tracks, titled by its heading (as contributing/ is)
    (docs / UNTITLED).write_text("# About these fixtures\n\nTwo lessons in one track.\n", encoding="utf-8")
    return docs


# ------------------------------------------------------------------------------------------------ the rules
def test_a_lesson_body_is_not_shared_but_its_front_matter_and_other_files_are(tmp_path: Path) -> None:
    docs, theme, config = _docs(tmp_path), tmp_path / "theme", tmp_path / "mkdocs.yml"
    theme.mkdir()
    (theme / "main.html").write_text("{% extends 'base.html' %}", encoding="utf-8")
    config.write_text("site_name: x\n", encoding="utf-8")

    def inputs() -> str:
        return shared_inputs(docs, config, [theme])

    start = inputs()
    lesson = docs / LESSON
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nA new sentence.\n", encoding="utf-8")
    assert inputs() == start  # shown on its own page only
    (docs / ".good-lesson.md.swp").write_bytes(b"an editor's swap file")
    assert inputs() == start  # hidden, as MkDocs leaves it out of the site

    changes = {
        "a lesson's title": lambda: lesson.write_text(
            lesson.read_text(encoding="utf-8").replace("title: Fixture", "title: Renamed"), encoding="utf-8"
        ),
        "the tracks": lambda: (docs / "tracks.yml").write_text(
            (docs / "tracks.yml").read_text(encoding="utf-8") + "\n", encoding="utf-8"
        ),
        "a track page's body": lambda: (docs / "foundations" / "index.md").write_text(
            (docs / "foundations" / "index.md").read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8"
        ),
        "a heading that titles its page": lambda: (docs / UNTITLED).write_text(
            "# About the fixtures\n", encoding="utf-8"
        ),
        "a new page": lambda: (docs / "foundations" / "new.md").write_text("# New\n", encoding="utf-8"),
        "a template": lambda: (theme / "main.html").write_text("{# changed #}", encoding="utf-8"),
        "the config": lambda: config.write_text("site_name: y\n", encoding="utf-8"),
    }
    seen = {start}
    for what, change in changes.items():
        change()
        assert inputs() not in seen, f"{what} did not change what every page shares"
        seen.add(inputs())


def test_the_site_is_emptied_unless_the_last_build_finished_cleanly_from_the_same_inputs(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    page = site / "page.html"

    def rebuild(inputs: str = "a", *, code_changed: bool = False) -> bool:
        page.write_text("written", encoding="utf-8")
        emptied = prepare_rebuild(site, inputs, code_changed=code_changed)
        assert emptied is not page.exists()
        return emptied

    assert rebuild()  # the first build of this folder
    finish_build(site, "a", had_problems=False)
    assert not rebuild()  # only a lesson body changed
    finish_build(site, "a", had_problems=False)
    assert rebuild("b")  # something every page shows changed
    finish_build(site, "b", had_problems=False)
    assert rebuild("b", code_changed=True)  # the calculators or the course's code
    finish_build(site, "b", had_problems=True)
    assert rebuild("b")  # every page showed the problems panel
    finish_build(site, "b", had_problems=False)
    forget_build(site)  # strict mode aborted after the last event
    assert rebuild("b")
    assert rebuild("b")  # a build that never finished (no finish_build)


def test_without_dirty_every_build_is_full(tmp_path: Path) -> None:
    """A plain ``mkdocs serve`` writes every page: a rebuild taken for partial turned the notebooks' cache
    off while MkDocs rendered all eight notebooks, executing them on every save (50 s a rebuild)."""
    site = tmp_path / "site"
    site.mkdir()
    prepare_rebuild(site, "a", code_changed=False, dirty=False)
    finish_build(site, "a", had_problems=False)
    assert prepare_rebuild(site, "a", code_changed=False, dirty=False)
    finish_build(site, "a", had_problems=False)
    assert not prepare_rebuild(site, "a", code_changed=False, dirty=True)


def test_only_one_saved_lesson_makes_a_partial_rebuild(tmp_path: Path) -> None:
    site, lesson, other, notebook = tmp_path / "site", tmp_path / "a.md", tmp_path / "b.md", tmp_path / "n.py"
    site.mkdir()

    def built() -> None:
        for source in (lesson, other, notebook):
            source.write_text(source.name, encoding="utf-8") if not source.exists() else None
            page_read(str(source))
        finish_build(site, "a", had_problems=False)

    def saved(*sources: Path) -> bool:
        for source in sources:
            source.write_text(source.read_text(encoding="utf-8") + " saved", encoding="utf-8")
        return not prepare_rebuild(site, "a", code_changed=False)

    prepare_rebuild(site, "a", code_changed=False)
    built()
    assert saved(lesson)
    built()
    assert not saved(lesson, other)  # two pages: search would keep one's old entries
    built()
    assert not saved(notebook)  # a notebook saved without a change: with its cache on, not executed again


def test_a_save_during_a_build_is_written_next_time_whatever_the_clocks_say(tmp_path: Path) -> None:
    source, output = tmp_path / "lesson.md", tmp_path / "site" / "lesson" / "index.html"
    output.parent.mkdir(parents=True)
    source.write_text("read by the build", encoding="utf-8")
    page_read(str(source))
    source.write_text("saved after it was read", encoding="utf-8")
    output.write_text("written from the old text", encoding="utf-8")
    os.utime(source, ns=(1, 1))  # older than the output: MkDocs alone would keep the old page
    assert write_edited_pages_again([(str(source), str(output))]) == [str(output)]
    output.write_text("written again", encoding="utf-8")
    page_read(str(source))
    assert write_edited_pages_again([(str(source), str(output))]) == []  # read as it is now


def test_only_mkdocs_dirty_build_warning_is_dropped_so_strict_serving_goes_on() -> None:
    counter = CountHandler()
    counter.setLevel(logging.WARNING)
    mkdocs_logger = logging.getLogger("mkdocs")
    mkdocs_logger.addHandler(counter)
    try:
        quiet_dirty_build_warning()
        quiet_dirty_build_warning()
        build_logger = logging.getLogger("mkdocs.commands.build")
        assert sum(type(f).__name__ == "_DirtyBuildWarning" for f in build_logger.filters) == 1
        build_logger.warning(partial_rebuilds.DIRTY_BUILD_WARNING + ", this will likely lead to ...")
        assert counter.get_counts() == []
        build_logger.warning("Doc file 'a.md' contains a link 'b.md', but the target is not found.")
        assert counter.get_counts() == [("WARNING", 1)]
    finally:
        mkdocs_logger.removeHandler(counter)


def test_dev_py_serve_runs_mkdocs_with_the_flags_the_benchmark_and_the_serve_tests_use() -> None:
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    (serve,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "serve"]
    runs = [c for c in ast.walk(serve) if isinstance(c, ast.Call) and ast.unparse(c.func) == "session.run"]
    arguments = [a.value for a in runs[-1].args if isinstance(a, ast.Constant)]
    assert arguments[:2] == ["mkdocs", "serve"]
    assert set(SERVE_FLAGS) <= set(arguments[2:])


def test_every_file_a_page_includes_is_watched_so_its_change_writes_every_page() -> None:
    """pymdownx.snippets quotes files from outside docs/ (CONTRIBUTING.md into the contributing page): MkDocs
    rebuilds on their change only if they are watched, and every page is written again only if they count
    among the shared inputs, which include every watched path."""
    settings = read_site_config()
    (snippets,) = [
        e["pymdownx.snippets"] for e in settings["markdown_extensions"] if "pymdownx.snippets" in e
    ]
    watched = [ROOT / path for path in settings["watch"]]
    for included in snippets["base_path"]:
        path = ROOT / included
        assert any(path == w or w in path.parents for w in watched), f"{included} is not watched"


# ---------------------------------------------------------------------------------------- served builds
def _serve_builds(
    config: Path, site: Path, *steps: list[tuple[Path, str]], dirty: bool = True
) -> list[list[str]]:
    """Build as the server does, then once after each step of saves; the HTML files each build wrote."""
    edits = site.parent / f"edits-{site.name}.json"
    edits.write_text(json.dumps([[[str(f), t] for f, t in step] for step in steps]), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "tests.serve_builds", str(config), str(site)]
        + (["--dirty"] if dirty else [])
        + ([str(edits)] if steps else []),
        cwd=ROOT,
        env={**BUILD_ENV, "RIDGEPOINT_NOTEBOOK_CACHE": str(site.parent / "notebook-cache")},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    written: list[list[str]] = json.loads(result.stdout.splitlines()[-1])
    return written


def _same_site(partial: Path, full: Path) -> None:
    """Every file alike, the search index as a set of entries (a partial rebuild appends the page's)."""
    names = sorted(p.relative_to(full).as_posix() for p in full.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(partial).as_posix() for p in partial.rglob("*") if p.is_file())
    for name in names:
        a, b = (partial / name).read_bytes(), (full / name).read_bytes()
        if name == "search/search_index.json":
            index_a, index_b = json.loads(a), json.loads(b)
            key = json.dumps
            assert sorted(map(key, index_a.pop("docs"))) == sorted(map(key, index_b.pop("docs")))
            assert index_a == index_b
        else:
            assert a == b, f"{name} differs from a full build's"


@pytest.mark.site
def test_a_body_edit_writes_one_page_and_the_site_equals_a_full_build(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    config = write_derived_config(tmp_path / "mkdocs.yml", docs)
    lesson = docs / LESSON
    edited = lesson.read_text(encoding="utf-8") + "\nA sentence added while serving.\n"
    first, rebuilt = _serve_builds(config, tmp_path / "partial", [(lesson, edited)])
    assert "foundations/second-lesson/index.html" in first
    assert rebuilt == ["404.html", "foundations/good-lesson/index.html"]  # 404.html: a theme template
    page = (tmp_path / "partial" / rebuilt[1]).read_text("utf-8")
    assert "A sentence added while serving." in page
    assert "About these fixtures" in page  # the navigation titles a page that was not read again
    (full,) = _serve_builds(config, tmp_path / "full", dirty=False)
    assert len(full) == len(first)
    _same_site(tmp_path / "partial", tmp_path / "full")


@pytest.mark.site
def test_a_title_edit_writes_every_page_again(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    config = write_derived_config(tmp_path / "mkdocs.yml", docs)
    lesson = docs / LESSON
    renamed = lesson.read_text(encoding="utf-8").replace("title: Fixture lesson", "title: Renamed lesson")
    first, rebuilt = _serve_builds(config, tmp_path / "partial", [(lesson, renamed)])
    assert rebuilt == first
    other = (tmp_path / "partial" / "foundations/second-lesson/index.html").read_text("utf-8")
    assert "Renamed lesson good-lesson" in other  # its navigation and its footer's Previous link
    _serve_builds(config, tmp_path / "full", dirty=False)
    _same_site(tmp_path / "partial", tmp_path / "full")


@pytest.mark.site
def test_two_pages_saved_before_one_rebuild_write_every_page_again(tmp_path: Path) -> None:
    """Material's search would keep the old entries of all but one of them (a search-and-replace)."""
    docs = _docs(tmp_path)
    config = write_derived_config(tmp_path / "mkdocs.yml", docs)
    saves = [
        (docs / page, (docs / page).read_text(encoding="utf-8") + "\nReplaced everywhere.\n")
        for page in (LESSON, SECOND)
    ]
    first, rebuilt = _serve_builds(config, tmp_path / "partial", saves)
    assert rebuilt == first
    _serve_builds(config, tmp_path / "full", dirty=False)
    _same_site(tmp_path / "partial", tmp_path / "full")
