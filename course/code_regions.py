"""Where a page's code is, so that checks of lesson prose leave code examples alone.

A lesson (or the "Write a lesson" guide) may show ``<script>`` or ``{{ ... }}`` inside a fence or a code span
as an example; only prose counts. Fences may be indented (inside admonitions and "Go deeper" sections).
"""

from __future__ import annotations

import re

FENCE_OPEN_RE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")
CODE_SPAN_RE = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)


def prose_only(markdown: str) -> str:
    """``markdown`` with fenced code and code spans replaced by spaces (same length, same line breaks)."""
    lines = markdown.split("\n")
    fence: str | None = None
    kept: list[str] = []
    for line in lines:
        opening = FENCE_OPEN_RE.match(line)
        if fence is None and opening:
            fence = opening.group("fence")
            kept.append(" " * len(line))
        elif fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                fence = None
            kept.append(" " * len(line))
        else:
            kept.append(line)
    text = "\n".join(kept)
    return CODE_SPAN_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def line_of(text: str, offset: int) -> int:
    """1-based line number of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1
