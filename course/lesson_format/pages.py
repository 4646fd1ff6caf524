"""What the site layer does to each page before Markdown runs: validate its blocks, place the takeaways box.

Plain functions, called by the MkDocs hook (and testable without MkDocs).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from course.lesson_format.lessons import Course
from course.lesson_format.problems import Problem
from course.lesson_format.takeaways import insert_takeaways
from course.lesson_format.validation import Validator, validate_page

PROJECT_PACKAGES = ("calculators", "course")


def prepare_page(
    markdown: str,
    path: str,
    source_text: str,
    course: Course,
    validators: Sequence[tuple[str, Validator]],
    docs_dir: str | Path,
) -> tuple[str, list[Problem]]:
    """Validate one page (its whole file, ``source_text``) and return its Markdown with the takeaways box.

    ``markdown`` is the body MkDocs hands over (no front matter); the problems use the file's line numbers.
    """
    problems = validate_page(source_text, path, validators, docs_dir)
    lesson = course.lesson_by_path(path)
    if lesson is not None:
        markdown = insert_takeaways(markdown, lesson.takeaways)
    return markdown, problems


def purge_project_modules(packages: Sequence[str] = PROJECT_PACKAGES) -> list[str]:
    """Forget imported project modules so that the next build imports edited calculators and extensions.

    ``mkdocs serve`` rebuilds in the same process; ``importlib.reload`` would keep stale references between
    modules, so the modules are dropped from ``sys.modules`` and imported afresh on first use.
    """
    names = [n for n in sys.modules if n in packages or n.startswith(tuple(f"{p}." for p in packages))]
    for name in names:
        del sys.modules[name]
    return names
