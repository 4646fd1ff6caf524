"""Validation of a whole course: front matter, then every block of every page, all problems together.

Each of the course's Markdown extensions (``course.<feature>.extension``) that checks its blocks exposes
``find_problems(markdown, path)`` (optionally also taking ``docs_dir``) returning
:class:`~course.lesson_format.problems.Problem` records. This module finds
those functions by module name, so adding a block means writing its ``find_problems`` and nothing here.
The MkDocs hook calls :func:`validate_page` per page, with the :class:`PassedChecks` of earlier builds; tests
and pre-commit call :func:`validate_docs`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from calculators.expressions import spending
from calculators.setting import setting_key, site_setting
from course.folder_digest import folder_digest
from course.lesson_format import background
from course.lesson_format.expression_budget import build_budget, page_budget
from course.lesson_format.lessons import front_matter_prose_only, load_course, split_front_matter
from course.lesson_format.problems import Problem
from course.sanitising.front_matter import front_matter_problems
from course.sanitising.source_files import read_source
from course.sanitising.source_tree import markdown_sources
from course.stored_results import StoredResults, text_key

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


class PassedChecks:
    """Which block checks passed on which page text, kept between builds (:mod:`course.stored_results`).

    A check is a function of the page's text and path, the code (the stored results' fingerprint), the model
    setting, and, for a check that reads other files of the docs (it takes ``docs_dir``: the lesson lists,
    the references), the whole docs folder. Unchanged, it passes again, so a warm build does not run it.
    Passes found while ``dev.py serve`` computes slow results in the background are not kept: a check then
    passes a figure that is still being computed.
    """

    def __init__(self, cache_root: str | Path, docs_dir: str | Path) -> None:
        self.stored = StoredResults(Path(cache_root) / "page-checks")
        self.setting = setting_key(site_setting())
        self.docs_dir = docs_dir
        self._docs_digest = ""

    def key(self, name: str, path: str, source: str, reads_docs: bool) -> str:
        if reads_docs and not self._docs_digest:
            self._docs_digest = folder_digest(self.docs_dir)
        return text_key(name, path, self.setting, self._docs_digest if reads_docs else "", source)

    def passed(self, key: str) -> bool:
        return self.stored.get(key) is not None

    def remember(self, key: str) -> None:
        if not background.enabled():
            self.stored.put(key, "")


def validate_page(
    text: str,
    path: str,
    validators: Sequence[tuple[str, Validator]],
    docs_dir: str | Path = "docs",
    passed: PassedChecks | None = None,
) -> list[Problem]:
    """Run every block validator on one page's full text (except those ``passed`` on this same text before).

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
        reads_docs = "docs_dir" in inspect.signature(function).parameters
        keywords = {"docs_dir": str(docs_dir)} if reads_docs else {}
        key = passed.key(name, path, source, reads_docs) if passed is not None else ""
        if passed is not None and passed.passed(key):
            continue
        try:
            with spending(budget):
                found = function(source, path, **keywords)
            problems.extend(found)
            if passed is not None and not found:
                passed.remember(key)
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
