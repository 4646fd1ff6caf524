"""Validation of a whole course: front matter, then every block of every page, all problems together.

Each of the course's Markdown extensions (``course.<feature>.extension``) that checks its blocks exposes
``find_problems(markdown, path)`` (optionally also taking ``docs_dir``) returning
:class:`~course.lesson_format.problems.Problem` records. This module finds
those functions by module name, so adding a block means writing its ``find_problems`` and nothing here.
The MkDocs hook calls :func:`validate_page` per page; tests and pre-commit call :func:`validate_docs`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from calculators.expressions import spending
from course.lesson_format.expression_budget import build_budget, page_budget
from course.lesson_format.lessons import front_matter_prose_only, load_course, split_front_matter
from course.lesson_format.problems import Problem
from course.sanitising.front_matter import front_matter_problems
from course.sanitising.source_files import read_source
from course.sanitising.source_tree import markdown_sources

Validator = Callable[..., list[Problem]]
# The course's own extensions; third-party ones (pymdownx, toc, ...) have no find_problems to look for.
COURSE_PREFIX = "course."

# The lesson blocks, in the order their problems are most useful to read.
DEFAULT_BLOCK_MODULES: tuple[str, ...] = (
    "course.sanitising.extension",
    "course.numbers.extension",
    "course.math.extension",
    "course.charts.extension",
    "course.quiz.extension",
    "course.widgets.extension",
    "course.lesson_lists.extension",
)


def block_validators(module_names: Iterable[str]) -> list[tuple[str, Validator]]:
    """``find_problems`` of each named ``course.*`` module that has one (others are skipped)."""
    found: list[tuple[str, Validator]] = []
    for name in module_names:
        if not name.startswith(COURSE_PREFIX):
            continue
        function = getattr(importlib.import_module(name), "find_problems", None)
        if callable(function):
            found.append((name, function))
    return found


def validate_page(
    text: str, path: str, validators: Sequence[tuple[str, Validator]], docs_dir: str | Path = "docs"
) -> list[Problem]:
    """Run every block validator on one page's full text.

    The front matter is blanked, so that line numbers match the file, except its summary and takeaways: they
    are prose the reader sees, and a figure quoted there is checked like any other. The page's expressions
    share one :func:`~course.lesson_format.expression_budget.page_budget`.
    """
    source = front_matter_prose_only(text)
    front, problems = split_front_matter(text, path)
    if front is not None:
        problems += front_matter_problems(front.data, path, front.key_lines)
    budget = page_budget(path)
    for name, function in validators:
        keywords = {"docs_dir": str(docs_dir)} if "docs_dir" in inspect.signature(function).parameters else {}
        try:
            with spending(budget):
                problems.extend(function(source, path, **keywords))
        except Exception as error:  # a validator's own bug must not hide the other problems of the build
            problems.append(
                Problem(
                    path,
                    name,
                    f"the validator crashed: {type(error).__name__}: {error}",
                    "report this as a bug in Ridgepoint, with the lesson attached",
                )
            )
    return problems


def validate_docs(docs_dir: str | Path, module_names: Iterable[str] = DEFAULT_BLOCK_MODULES) -> list[Problem]:
    """Every problem of a docs tree: tracks, front matter, cross-lesson checks, every block of every page."""
    with spending(build_budget()):
        return _validate_docs(Path(docs_dir), module_names)


def _validate_docs(docs: Path, module_names: Iterable[str]) -> list[Problem]:
    course = load_course(docs)
    problems = list(course.problems)
    validators = block_validators(module_names)
    for file in markdown_sources(docs):
        path = file.relative_to(docs).as_posix()
        text, _ = read_source(file, path)  # a file that cannot be read is already among the course's problems
        if text is not None:
            problems.extend(validate_page(text, path, validators, docs))
    return sorted(problems, key=lambda p: (p.file, p.line or 0, p.field))
