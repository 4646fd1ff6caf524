"""Front-matter and tracks.yml strings are plain text: checked here, escaped wherever a page prints them.

Material prints a page's ``title``, ``subtitle``, ``description`` and ``status`` (and the navigation prints
track titles) into the navigation and ``<head>`` without escaping; an ``<img onerror>`` title ran on every
page. These fields may therefore not hold markup characters (:func:`front_matter_problems`, run by the check
and the build), and the build escapes them anyway (:func:`escape_meta`) in case a check is skipped.
Summaries and takeaways are Markdown, rendered and sanitised with the page they appear on.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, MutableMapping
from typing import Any

from course.lesson_format.problems import Problem

PLAIN_TEXT_FIELDS = ("title", "subtitle", "description", "status")
STATUSES = ("new", "deprecated")  # Material's built-in page statuses
MARKUP_RE = re.compile(r"[<>\"`]")
FIX = 'write plain text: no < > " or ` (use words, or typographic quotes “ ”), e.g. title: The memory wall'


def plain_text_problem(value: object) -> str | None:
    """Why ``value`` is not a one-line plain-text string, or ``None``."""
    if not isinstance(value, str):
        return f"expected text, got {type(value).__name__}"
    if "\n" in value.strip():
        return "must be a single line"
    found = MARKUP_RE.search(value)
    if found:
        return (
            f"is plain text and may not contain {found.group(0)!r} (the site prints it into <head> and menus)"
        )
    return None


def front_matter_problems(data: Mapping[str, Any], path: str, lines: Mapping[str, int]) -> list[Problem]:
    """The plain-text fields of one page's front matter that hold markup, or that Material would misuse."""
    problems: list[Problem] = []
    for name in PLAIN_TEXT_FIELDS:
        if name in data and (message := plain_text_problem(data[name])):
            problems.append(Problem(path, name, message, FIX, line=lines.get(name)))
    if "status" in data and data["status"] not in STATUSES:
        problems.append(
            Problem(
                path,
                "status",
                f"is {data['status']!r}; expected one of {', '.join(STATUSES)}",
                "status: new",
                line=lines.get("status"),
            )
        )
    return problems


def escape_text(value: str) -> str:
    """``value`` safe in element text and double-quoted attributes (apostrophes stay as they are)."""
    return html.escape(value, quote=False).replace('"', "&quot;")


def escape_meta(meta: MutableMapping[str, Any]) -> None:
    """Escape a page's plain-text fields in place, before any template prints them."""
    for name in PLAIN_TEXT_FIELDS:
        if name in meta:
            meta[name] = escape_text(str(meta[name]))
