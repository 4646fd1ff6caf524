"""Terms in reading order: a lesson uses a glossary term after the lesson that defines it, or links there.

``docs/glossary.yml`` names each term the course defines, the lesson that defines it and the forms a lesson
writes it in. A reader who meets "p99" or "SLO" in a lesson placed before the one that explains them is
lost, and nothing in a single page shows the writer that the order is wrong: the glossary makes it a
problem of the page, with the lesson to link as the fix. Reading order is the tracks' order, then each
lesson's ``order`` (the order previous/next walks).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.lesson_format.lessons import load_course
from course.lesson_format.problems import Problem
from course.numbers.extension import NUMBER_RE, prose_lines
from course.sanitising.source_files import read_yaml_file

GLOSSARY_FILE = "glossary.yml"
EXAMPLE_ENTRY = "- term: ridge point\n  lesson: memory-wall\n  forms: [ridge point]"
_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]+)")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$")


@dataclass(frozen=True)
class Term:
    """One glossary entry: the defining lesson and the forms (case-sensitive when written in capitals)."""

    term: str
    lesson: str
    forms: tuple[str, ...]

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        """Whole-word matches of any form; a form with a capital letter (ITL, SLO) matches only as written."""
        parts = [
            rf"(?<!\w){re.escape(form)}(?!\w)"
            if form != form.lower()
            else rf"(?i:(?<!\w){re.escape(form)}(?!\w))"
            for form in self.forms
        ]
        return re.compile("|".join(parts))


def load_glossary(docs_dir: str | Path) -> tuple[list[Term], list[Problem]]:
    """The glossary's terms, and what is wrong with the file (an unknown lesson, a missing field)."""
    path = Path(docs_dir) / GLOSSARY_FILE
    if not path.is_file():
        return [], []
    data: Any
    data, unreadable = read_yaml_file(path, GLOSSARY_FILE, EXAMPLE_ENTRY)  # the one bounded reader
    if unreadable:
        return [], unreadable
    if not isinstance(data, list):
        return [], [Problem(GLOSSARY_FILE, "glossary", "must be a list of terms", EXAMPLE_ENTRY, None)]
    lessons = {lesson.id for lesson in load_course(docs_dir).lessons}
    terms: list[Term] = []
    problems: list[Problem] = []
    for number, entry in enumerate(data, start=1):
        where = f"entry {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("term"), str):
            problems.append(
                Problem(GLOSSARY_FILE, where, "needs a term, a lesson and forms", EXAMPLE_ENTRY, None)
            )
            continue
        lesson = entry.get("lesson")
        forms = entry.get("forms") or [entry["term"]]
        if lesson not in lessons:
            problems.append(
                Problem(
                    GLOSSARY_FILE,
                    f"term {entry['term']!r} field 'lesson'",
                    f"{lesson!r} is not a written lesson's id",
                    "name the lesson that defines the term (a planned lesson cannot be linked yet)",
                    None,
                )
            )
            continue
        if not isinstance(forms, list) or not all(isinstance(f, str) and f.strip() for f in forms):
            problems.append(
                Problem(
                    GLOSSARY_FILE,
                    f"term {entry['term']!r} field 'forms'",
                    "must be a list of words",
                    EXAMPLE_ENTRY,
                    None,
                )
            )
            continue
        terms.append(Term(entry["term"], str(lesson), tuple(f.strip() for f in forms)))
    return terms, problems


def glossary_problems(docs_dir: str | Path) -> list[Problem]:
    """Problems of docs/glossary.yml itself, reported once for the course."""
    return load_glossary(docs_dir)[1]


def _links_to(markdown: str, lesson_id: str) -> bool:
    return any(
        target.split("#")[0].rsplit("/", 1)[-1] == f"{lesson_id}.md"
        for target in _LINK_TARGET.findall(markdown)
    )


def _prose(markdown: str) -> list[tuple[int, str]]:
    """``(line, text)`` of a page's prose outside code; figures, maths and link targets blanked."""
    lines = []
    for index, line in prose_lines(markdown.split("\n")):
        for pattern in (NUMBER_RE, _MATH, _LINK_TARGET):
            line = pattern.sub(lambda m: " " * len(m.group(0)), line)
        lines.append((index + 1, line))
    return lines


def find_problems(markdown: str, path: str, docs_dir: str = "docs") -> list[Problem]:
    """Each glossary term a lesson uses before the lesson that defines it, without linking to that lesson."""
    terms, _ = load_glossary(docs_dir)
    if not terms:
        return []
    course = load_course(docs_dir)
    in_order = [
        lesson
        for track in sorted(course.tracks, key=lambda t: t.order)
        for lesson in course.lessons_in(track.key)
    ]
    order = {lesson.path: place for place, lesson in enumerate(in_order)}
    by_id = {lesson.id: lesson for lesson in course.lessons}
    if path not in order:  # not a lesson (or a builder that does not say which page it converts)
        return []
    prose = _prose(markdown)
    problems: list[Problem] = []
    for term in terms:
        defining = by_id[term.lesson]
        if order[defining.path] <= order[path] or _links_to(markdown, term.lesson):
            continue
        first = next(((line, m.group(0)) for line, text in prose if (m := term.pattern.search(text))), None)
        if first is None:
            continue
        line, written = first
        problems.append(
            Problem(
                path,
                f"term {written!r}",
                f"is defined in the lesson {defining.title!r}, which comes later in the course",
                f"link its first use to where it is defined, e.g. [{written}]"
                f"({_relative(path, defining.path)}), or explain it here",
                line,
            )
        )
    return problems


def _relative(source: str, target: str) -> str:
    """``target``'s path as a link from ``source`` (both relative to docs/)."""
    source_dir = Path(source).parent
    if source_dir == Path(target).parent:
        return Path(target).name
    return str(Path("..") / target) if source_dir != Path(".") else target
