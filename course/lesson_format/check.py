"""``python -m course.lesson_format.check [paths]``: check lessons as the site build does, without building.

A contributor (or pre-commit) gets every problem at once in a second or two, instead of waiting for MkDocs to
render charts and notebooks only to fail at the end. Nothing is checked here that the build does not check:
the front matter and cross-lesson checks come from :func:`course.lesson_format.lessons.load_course`, the
worked notebooks' headers from :func:`course.notebooks.lesson_notebooks.load_notebooks`, and every block from
the ``find_problems`` of the Markdown extensions that ``mkdocs.yml`` enables, through
:func:`course.lesson_format.validation.validate_page`. So the check and the build cannot disagree about what
is wrong.

With no paths, everything under the docs folder is checked. With paths (files or folders), only problems in
those files are reported, but the whole course is still read, because a lesson's ``order`` and
``prerequisites`` are only right or wrong relative to the others. A Markdown file outside the docs folder (a
draft, a test fixture) gets the block checks, and the front-matter checks too when it names a ``track``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from calculators.expressions import spending
from course.lesson_format.expression_budget import build_budget
from course.lesson_format.lessons import load_course, parse_tracks, split_front_matter
from course.lesson_format.problems import Problem, docs_prefix, log_safe, printable
from course.lesson_format.validation import (
    COURSE_PREFIX,
    DEFAULT_BLOCK_MODULES,
    Validator,
    block_validators,
    validate_page,
)
from course.sanitising.source_files import read_source
from course.sanitising.source_tree import build_input_folders, build_input_problems, markdown_sources

CONFIG = "mkdocs.yml"
PROG = "course.lesson_format.check"  # as run: python -m course.lesson_format.check


class _TolerantLoader(yaml.SafeLoader):
    """Reads mkdocs.yml without knowing its custom tags (``!ENV``, ``!!python/name:``): they become None."""


_TolerantLoader.add_multi_constructor("", lambda loader, suffix, node: None)
_TolerantLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


@dataclass(frozen=True)
class Settings:
    """What the check needs from the site's configuration: where the lessons are, which blocks they use,
    and the other folders a build reads from contributors (the theme's overrides, the snippet paths)."""

    docs_dir: Path
    block_modules: tuple[str, ...]
    input_folders: tuple[Path, ...] = ()


def read_settings(config: Path) -> Settings:
    """``docs_dir`` and the course's own extensions (``course.*``) in ``config`` (defaults if missing)."""
    data: dict[str, Any] = {}
    if config.is_file():
        loaded = yaml.load(config.read_text(encoding="utf-8"), Loader=_TolerantLoader)
        data = loaded if isinstance(loaded, dict) else {}
    docs_dir = config.parent / str(data.get("docs_dir") or "docs")
    names: list[str] = []
    for entry in data.get("markdown_extensions") or []:
        if isinstance(entry, str):
            names.append(entry)
        elif isinstance(entry, dict):
            names.extend(str(key) for key in entry)
    modules = tuple(name for name in names if name.startswith(COURSE_PREFIX))
    theme = data.get("theme")
    extensions = [e for e in data.get("markdown_extensions") or [] if isinstance(e, dict)]
    configs = {str(k): v for entry in extensions for k, v in entry.items() if isinstance(v, dict)}
    folders = build_input_folders(theme.get("custom_dir") if isinstance(theme, dict) else None, configs)
    inputs = tuple(config.parent / folder for folder in folders)
    return Settings(docs_dir, modules or DEFAULT_BLOCK_MODULES, inputs)


def course_problems(docs_dir: Path, input_folders: Sequence[Path] = ()) -> list[Problem]:
    """Problems of the course as a whole: the files under docs/ (and the overrides and snippet folders),
    tracks.yml, every lesson's front matter, notebook headers, redirects.yml, references.yml and
    glossary.yml."""
    course = load_course(docs_dir)
    problems = list(course.problems) + build_input_problems(input_folders)
    from course.notebooks.lesson_notebooks import (
        load_notebooks,  # the notebooks' own module reads their headers
    )

    problems.extend(load_notebooks(docs_dir, course)[1])
    from course.lesson_format.glossary import glossary_problems
    from course.redirects.pages import redirect_problems
    from course.references.bibliography import bibliography_problems

    problems.extend(redirect_problems(docs_dir) + bibliography_problems(docs_dir))
    problems.extend(glossary_problems(docs_dir))
    return problems


def page_problems(
    file: Path, shown_as: str, validators: Sequence[tuple[str, Validator]], docs_dir: Path
) -> list[Problem]:
    """Every block problem of one Markdown file, reported under the name ``shown_as``."""
    text, problems = read_source(file, shown_as)
    return problems if text is None else validate_page(text, shown_as, validators, docs_dir)


def outside_lesson_problems(file: Path, shown_as: str, docs_dir: Path) -> list[Problem]:
    """Front-matter problems of a file outside docs/ whose front matter names a track (a lesson)."""
    from course.lesson_format.lessons import TRACKS_FILE, parse_lesson

    text, problems = read_source(file, shown_as)
    if text is None:
        return problems
    front, problems = split_front_matter(text, shown_as)
    if problems or front is None or "track" not in front.data:
        return problems
    tracks_file = docs_dir / TRACKS_FILE
    tracks = parse_tracks(tracks_file.read_text(encoding="utf-8"))[0] if tracks_file.exists() else []
    return parse_lesson(shown_as, text, [t.key for t in tracks])[1]


def markdown_files(paths: Iterable[Path]) -> list[Path]:
    """The Markdown files named by ``paths``: files as given, folders searched recursively."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(markdown_sources(path))  # no links followed, no pipe read
        else:
            found.append(path)
    return found


def check(paths: Sequence[Path] = (), settings: Settings | None = None) -> tuple[list[Problem], int]:
    """Every problem of ``paths`` (everything under docs/ when empty), and how many files were checked.

    A problem's ``file`` is relative to docs/ for a page inside it (as in the build's messages), else the
    path as given. The expressions share one build's budget of calculator time, as in the build.
    """
    with spending(build_budget()):
        return _check(paths, settings)


def _check(paths: Sequence[Path], settings: Settings | None) -> tuple[list[Problem], int]:
    settings = settings or read_settings(Path(CONFIG))
    docs = settings.docs_dir
    validators = block_validators(settings.block_modules)
    files = markdown_files(paths) if paths else markdown_sources(docs)
    whole_course = course_problems(docs, settings.input_folders) if docs.is_dir() else []
    problems: list[Problem] = []
    for file in files:
        if not file.is_file():  # missing, or a pipe that reading would wait on
            problems.append(
                Problem(str(file), "file", "does not exist", "give the path of a Markdown file under docs/")
            )
            continue
        inside = _relative_to(file, docs)
        if inside is not None:
            problems.extend(p for p in whole_course if p.file == inside)
            if file.suffix == ".md":  # a worked notebook (.py) has only its header checked, course-wide
                problems.extend(page_problems(file, inside, validators, docs))
        else:
            problems.extend(outside_lesson_problems(file, str(file), docs))
            problems.extend(page_problems(file, str(file), validators, docs))
    if not paths:  # tracks.yml and other files that are not pages
        checked = {_relative_to(file, docs) for file in files}
        problems.extend(p for p in whole_course if p.file not in checked)
    unique = list(dict.fromkeys(problems))
    return sorted(unique, key=lambda p: (p.file, p.line or 0, p.field)), len(files)


def _relative_to(file: Path, folder: Path) -> str | None:
    try:
        return file.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return None


def format_problem(problem: Problem, docs_prefix: str = "") -> str:
    """One problem as a contributor reads it: where, which field, what is wrong, and an example fix.

    The first line is ``path:line: field`` (editors and terminals turn it into a link to the line).
    """
    path = printable(problem.file if problem.file.startswith(("/", ".")) else docs_prefix + problem.file)
    where = f"{path}:{problem.line}" if problem.line else path
    fix = "\n         ".join(printable(line) for line in problem.fix.split("\n"))
    message = printable(problem.message)
    return log_safe(f"{where}: {printable(problem.field)}\n  problem: {message}\n  fix:     {fix}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {PROG}",
        description="Check lessons (front matter, numbers, charts, quizzes, widgets, math, safety) without "
        "building the site. Exit status 1 when a problem is found.",
    )
    parser.add_argument(
        "paths", nargs="*", type=Path, help="Markdown files or folders (default: all of docs/)"
    )
    parser.add_argument("--config", type=Path, default=Path(CONFIG), help="the MkDocs config (mkdocs.yml)")
    args = parser.parse_args(argv)
    settings = read_settings(args.config)
    if not settings.docs_dir.is_dir():
        print(
            f"{PROG}: no docs folder at {settings.docs_dir}; run it from the repository root",
            file=sys.stderr,
        )
        return 2
    problems, count = check(args.paths, settings)
    prefix = docs_prefix(settings.docs_dir)  # as the build prints them
    for problem in problems:
        print(format_problem(problem, prefix), end="\n\n")
    files = len({p.file for p in problems})
    checked = f"{count} file{'s' if count != 1 else ''} checked"
    if problems:
        print(
            f"{PROG}: {len(problems)} problem{'s' if len(problems) != 1 else ''} in {files} "
            f"file{'s' if files != 1 else ''} ({checked}). The site build would fail the same way."
        )
        return 1
    print(f"{PROG}: no problems ({checked}).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
