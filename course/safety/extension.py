"""Lessons are content, not code: a ``<script>`` tag, an inline event handler or a ``javascript:`` URL in a
lesson is a build error.

Anything a page runs comes from the reviewed front-end assets, never from lesson text; that is what lets a
reviewer merge a lesson without reading it as a program. :func:`find_problems` reports each occurrence in
prose (code examples are fine); the extension also defuses them in the output, so that a builder that does
not run our validation (Zensical, which skips MkDocs hooks) still ships nothing executable from a lesson.
"""

from __future__ import annotations

import re
from typing import Any

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

from course.code_regions import CODE_SPAN_RE, line_of, prose_only
from course.lesson_format.problems import Problem

SCRIPT_RE = re.compile(r"<\s*script\b", re.IGNORECASE)
HANDLER_RE = re.compile(r"(<[a-zA-Z][\w-]*\s(?:[^<>]*?\s)?)(on[a-zA-Z]+)(\s*=)(?=[^<>]*>)", re.DOTALL)
SCRIPT_URL_RE = re.compile(
    r"""(?P<lead>\]\(\s*<?|\]:\s*<?|<|(?:href|src|action|formaction|xlink:href|data)\s*=\s*["']?)\s*"""
    r"(?P<scheme>(?:java|vb)script\s*:)",
    re.IGNORECASE,
)
FIX_SCRIPT = (
    "remove the <script>; interactive parts are blocks (```widget, ```chart, ```quiz) whose code is reviewed"
)
FIX_HANDLER = "remove the {name} attribute; behaviour belongs in overrides/assets/ridgepoint/, not in lessons"
FIX_URL = "link to a page or an https:// address instead, e.g. [the roofline](../foundations/memory-wall.md)"


def find_problems(markdown: str, path: str) -> list[Problem]:
    """Every script tag, inline event handler and script URL in the prose of a page."""
    prose = prose_only(markdown)
    problems = [
        Problem(
            path,
            "HTML <script>",
            "lessons may not contain script tags",
            FIX_SCRIPT,
            line_of(prose, m.start()),
        )
        for m in SCRIPT_RE.finditer(prose)
    ]
    for match in HANDLER_RE.finditer(prose):
        name = match.group(2)
        problems.append(
            Problem(
                path,
                f"HTML attribute {name}",
                "lessons may not contain inline event handlers",
                FIX_HANDLER.format(name=name),
                line_of(prose, match.start(2)),
            )
        )
    for match in SCRIPT_URL_RE.finditer(prose):
        scheme = re.sub(r"\s", "", match.group("scheme")).lower()
        problems.append(
            Problem(
                path,
                f"{scheme} URL",
                f"lessons may not link to {scheme} URLs",
                FIX_URL,
                line_of(prose, match.start("scheme")),
            )
        )
    return problems


def defuse(text: str) -> str:
    """``text`` with script tags shown as text, handlers renamed and script URLs replaced (code untouched)."""
    pieces: list[str] = []
    last = 0
    for span in CODE_SPAN_RE.finditer(text):
        pieces.append(_defuse_prose(text[last : span.start()]))
        pieces.append(span.group(0))
        last = span.end()
    pieces.append(_defuse_prose(text[last:]))
    return "".join(pieces)


def _defuse_prose(text: str) -> str:
    text = SCRIPT_RE.sub(lambda m: "&lt;" + m.group(0)[1:], text)
    text = HANDLER_RE.sub(lambda m: f"{m.group(1)}data-blocked-{m.group(2)}{m.group(3)}", text)
    return SCRIPT_URL_RE.sub(lambda m: f"{m.group('lead')}#blocked-script-url:", text)


class DefusePreprocessor(Preprocessor):
    """Runs after fences are stashed (so code blocks are untouched) and before raw HTML is."""

    def run(self, lines: list[str]) -> list[str]:
        text = "\n".join(lines)
        if not (SCRIPT_RE.search(text) or HANDLER_RE.search(text) or SCRIPT_URL_RE.search(text)):
            return lines
        return defuse(text).split("\n")


class LessonSafetyExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # Fenced code is stashed at 25 (superfences) and raw HTML blocks at 20.
        md.preprocessors.register(DefusePreprocessor(md), "rp_lesson_safety", 22)


def makeExtension(**kwargs: Any) -> Extension:
    return LessonSafetyExtension(**kwargs)
