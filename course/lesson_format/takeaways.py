"""The "Key takeaways" box, built from a lesson's ``takeaways`` front matter.

The sentences live in front matter (so the PDF, the track index and tests can read them) and the box is placed
in the lesson where the writer puts a line ``<!-- takeaways -->``, else just before the "Check your
understanding" heading, else at the end. It is Markdown (a ``takeaways`` admonition), so the sentences may use
inline Markdown and quoted numbers like the rest of the lesson.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MARKER_RE = re.compile(r"^[ \t]*<!--\s*takeaways\s*-->[ \t]*$", re.MULTILINE)
QUIZ_HEADING_RE = re.compile(r"^#{2,3}[ \t]+Check your understanding\b.*$", re.MULTILINE | re.IGNORECASE)


def takeaways_markdown(takeaways: Sequence[str]) -> str:
    """The box as Markdown: an admonition titled "Key takeaways" holding a bullet list."""
    items = "\n".join(f"    - {sentence}" for sentence in takeaways)
    return f'!!! takeaways "Key takeaways"\n\n{items}\n'


def insert_takeaways(markdown: str, takeaways: Sequence[str]) -> str:
    """``markdown`` with the box at the marker, before the quiz heading, or at the end."""
    if not takeaways:
        return MARKER_RE.sub("", markdown)
    box = takeaways_markdown(takeaways)
    if MARKER_RE.search(markdown):
        return MARKER_RE.sub(lambda _: "\n" + box, markdown, count=1)
    heading = QUIZ_HEADING_RE.search(markdown)
    if heading:
        return f"{markdown[: heading.start()]}{box}\n{markdown[heading.start() :]}"
    return f"{markdown.rstrip()}\n\n{box}"
