"""A takeaway that compares must be a checked claim: a comparative word outside checked figures is a problem.

A lesson's takeaways are what a reader remembers, so a conclusion there that the course's own model
contradicts in one of its modes does the most harm (issue 26: "the split wins when the per-token objective
is tight" held only with KV-cache reads left out). Every takeaway that compares or orders things is written
as a ``holds`` claim (``{{ "is memory-bound" holds A > B }}``), which the build evaluates calibrated and at
spec peaks, or quotes a checked figure (``{{ "about 61" == expr | number | within 2% }}``, or one printed
with its ``| bound``).

The rule is deliberately plain, an allow-list of words that in this course always compare (``faster``,
``more than``, ``grows with``, ``is memory-bound`` ...), looked for in the takeaway's own words, with its
figures, citations, code and maths blanked, so an author can predict it. A takeaway with one such word and
no ``holds`` claim, checked figure or bound is reported; one that has any of them is taken as backed (the
claim's text says which comparison it checks). Words that also describe without comparing ("more",
"less", "larger" alone) are left out; a definition that needs a listed word ("below the ridge, work is
memory-bound") quotes a checked figure beside it, as the memory wall lesson's takeaway does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from course.lesson_format.problems import Problem

COMPARATIVE_RE = re.compile(
    r"\b(?:faster|slower|beats?|wins?|outweighs?|overtakes?|dominates?|doubles|halves|cheaper|pays"
    r"|(?:more|less|fewer|longer|shorter|larger|smaller|higher|lower|greater) than"
    r"|grows? with|shrinks?|levels? off|falls?|climbs?|drops?"
    r"|(?:memory|compute|bandwidth|latency)-bound)\b",
    re.IGNORECASE,
)
FIGURE_RE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_HOLDS_RE = re.compile(r"""^\s*(["']).*?\1\s+holds\s""", re.DOTALL)
_CHECKED_RE = re.compile(r"""^\s*(["']).*?\1\s*==""", re.DOTALL)  # "about 61" == expr | ... | within 2%
_BOUND_RE = re.compile(r"\|\s*bound\s*$")
_NOT_WORDS_RE = re.compile(r"\[@[^\]]*\]|`[^`]*`|\$[^$]*\$")  # citations, code, maths
EXAMPLE_CLAIM = (
    '{{ "is memory-bound" holds Scenario().decode().memory_time_s > Scenario().decode().compute_time_s }}'
)


def backs_a_comparison(figure: str) -> bool:
    """Whether a figure's inside is checked: a ``holds`` claim, an ``==`` figure or a ``| bound``."""
    return bool(_HOLDS_RE.match(figure) or _CHECKED_RE.match(figure) or _BOUND_RE.search(figure.strip()))


def unclaimed_comparatives(takeaway: str) -> list[str]:
    """The comparative words of ``takeaway`` when nothing in it is checked; empty when it is backed."""
    if any(backs_a_comparison(figure) for figure in FIGURE_RE.findall(takeaway)):
        return []
    words = _NOT_WORDS_RE.sub(" ", FIGURE_RE.sub(" ", takeaway))
    return [match.group(0) for match in COMPARATIVE_RE.finditer(words)]


def takeaway_problems(path: str, takeaways: Sequence[str], line: int | None = None) -> list[Problem]:
    """One problem for each takeaway of the lesson at ``path`` that compares without a checked claim."""
    problems = []
    for number, takeaway in enumerate(takeaways, start=1):
        words = unclaimed_comparatives(takeaway)
        if not words:
            continue
        quoted = ", ".join(f"{word!r}" for word in dict.fromkeys(w.lower() for w in words))
        problems.append(
            Problem(
                path,
                f"takeaways item {number}",
                f"compares ({quoted}) but holds no checked claim, so nothing checks that it is true both "
                "calibrated and at spec peaks",
                f"write the comparison as a claim, e.g. {EXAMPLE_CLAIM}, or quote a checked figure "
                '("about 61" == expr | number | within 2%, or | bound)',
                line,
            )
        )
    return problems


def course_takeaway_problems(
    lessons: Iterable[tuple[str, Sequence[str]]], key_lines: Mapping[str, Mapping[str, int]]
) -> list[Problem]:
    """:func:`takeaway_problems` of each ``(path, takeaways)``, at the line of the lesson's ``takeaways``."""
    return [
        problem
        for path, takeaways in lessons
        for problem in takeaway_problems(path, takeaways, key_lines.get(path, {}).get("takeaways"))
    ]
