"""The "Key takeaways" box, built from a lesson's ``takeaways`` front matter.

The sentences live in front matter (so the PDF, the track index and tests can read them) and the box is placed
in the lesson where the writer puts a line ``<!-- takeaways -->``, else just before the "Check your
understanding" heading, else at the end. It is Markdown (a ``takeaways`` admonition), so the sentences may use
inline Markdown and quoted numbers like the rest of the lesson.

The box is placed by :class:`TakeawaysExtension` (``course.lesson_format.takeaways`` in mkdocs.yml), a
Python-Markdown extension, so any builder that runs the lesson extensions produces it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from markdown import Markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor

from course.lesson_format.lessons import FRONT_MATTER_RE, TRACKS_FILE, load_course

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


# ----------------------------------------------------------------------------------------- Markdown extension
# The box is placed by a Markdown extension, so that every builder that runs Python-Markdown extensions
# (MkDocs, and Zensical, which runs no hooks) produces it. Builders hand an extension the page's body without
# its front matter and without saying which file it is, so the extension finds the lesson whose file body is
# the text it converts, and takes the sentences from that lesson's front matter.


def _normalised(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def _file_body(text: str) -> str:
    """``text`` after its front matter, as builders hand it to Python-Markdown."""
    match = FRONT_MATTER_RE.match(text)
    return _normalised(text[match.end() :] if match else text)


_COURSE_CACHE: dict[str, tuple[tuple[tuple[str, int], ...], dict[str, tuple[str, ...]]]] = {}


def _docs_signature(docs: Path) -> tuple[tuple[str, int], ...]:
    files = [docs / TRACKS_FILE, *sorted(docs.rglob("*.md"))]
    return tuple((str(f), f.stat().st_mtime_ns) for f in files if f.is_file())


def takeaways_by_body(docs_dir: str | Path) -> dict[str, tuple[str, ...]]:
    """Each lesson's normalised body mapped to its takeaways; read again only when a file under docs/ changed.

    Every page of a build asks, so the course is loaded once per build (and per edit under ``serve``), not
    once per page.
    """
    docs = Path(docs_dir)
    signature = _docs_signature(docs)
    cached = _COURSE_CACHE.get(str(docs))
    if cached is not None and cached[0] == signature:
        return cached[1]
    course = load_course(docs)
    found: dict[str, tuple[str, ...]] = {}
    for lesson in course.lessons:
        try:
            text = (docs / lesson.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # reported by the lesson checks
        found.setdefault(_file_body(text), lesson.takeaways)
    _COURSE_CACHE[str(docs)] = (signature, found)
    return found


class TakeawaysPreprocessor(Preprocessor):
    """Inserts the box into a lesson's body; other pages pass through, with a stray marker removed."""

    def __init__(self, md: Markdown, docs_dir: str) -> None:
        super().__init__(md)
        self.docs_dir = docs_dir

    def run(self, lines: list[str]) -> list[str]:
        markdown = "\n".join(lines)
        takeaways = takeaways_by_body(self.docs_dir).get(_normalised(markdown), ())
        if not takeaways and not MARKER_RE.search(markdown):
            return lines
        return insert_takeaways(markdown, takeaways).split("\n")


class TakeawaysExtension(Extension):
    def __init__(self, **kwargs: Any) -> None:
        self.config = {"docs_dir": ["docs", "Folder holding tracks.yml and the lessons"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        # After the lesson checks (40), so that their line numbers are the file's; before every block's own
        # preprocessor (the highest of theirs is 30), so that the box's sentences are read like the lesson.
        md.preprocessors.register(
            TakeawaysPreprocessor(md, str(self.getConfig("docs_dir"))), "rp_takeaways", 35
        )


def makeExtension(**kwargs: Any) -> TakeawaysExtension:
    return TakeawaysExtension(**kwargs)
