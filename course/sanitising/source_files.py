"""Reading what a contributor sends, with bounds: file kinds, sizes, encodings and YAML.

A 526-byte YAML alias bomb in front matter expanded to 312 MB, and any ``.html``, ``.js`` or upper-case
``.MD`` file under docs/ was copied to the site unchecked. So:

- :func:`docs_file_problem`: only the kinds of file lessons use may live under docs/ (:data:`ALLOWED_FILES`);
- :func:`read_source`: a lesson file is at most :data:`MAX_LESSON_BYTES`, UTF-8, without a byte-order mark;
- :func:`load_yaml`: YAML (front matter, tracks.yml, blocks) is parsed without aliases and within a size.

Each refusal is a :class:`~course.lesson_format.problems.Problem` naming the file and the fix, or (for YAML)
a :class:`yaml.YAMLError` whose message the callers already turn into one.
"""

from __future__ import annotations

import codecs
import copy
import functools
import re
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from yaml.events import AliasEvent

from course.lesson_format.problems import Problem

MAX_LESSON_BYTES = 256 * 1024  # the longest lesson today is about 20 KB
MAX_YAML_CHARS = 32 * 1024  # front matter or one block; tracks.yml too

ALLOWED_FILES: tuple[tuple[str, str], ...] = (
    ("*.md", "a page or lesson"),
    ("tracks.yml", "the tracks"),
    ("references.yml", "the bibliography"),
    ("redirects.yml", "moved pages"),
    ("glossary.yml", "the terms and the lessons that define them"),
    ("*/notebooks/*.py", "a worked notebook"),
    *((f"*.{kind}", "an image") for kind in ("png", "jpg", "jpeg", "gif", "webp", "avif")),
)
"""Patterns (relative to docs/, matched from the right; root files are matched whole) and what each is."""
_ROOT_ONLY = frozenset({"tracks.yml", "references.yml", "redirects.yml", "glossary.yml"})
SOURCE_FIELD = "file"  # the field of problems that stop a build before MkDocs reads the file
FIX_ALIAS = "write each value out in full (no &anchors and *aliases)"


def docs_file_problem(path: str) -> Problem | None:
    """Why ``path`` (relative to docs/) may not be under docs/, or ``None`` for a kind lessons use."""
    posix = PurePosixPath(path)
    for pattern, _ in ALLOWED_FILES:
        if pattern in _ROOT_ONLY:
            if path == pattern:
                return None
        elif posix.match(pattern) and (pattern != "*/notebooks/*.py" or len(posix.parts) == 3):
            return None
    kinds = "; ".join(f"{pattern} ({what})" for pattern, what in ALLOWED_FILES)
    return Problem(
        path,
        SOURCE_FIELD,
        "is not a kind of file lessons use, so the site will not publish it "
        "(scripts, HTML, SVG and upper-case extensions are refused)",
        f"remove it, or rename it to one of: {kinds}",
    )


def read_source(file: Path, shown_as: str) -> tuple[str | None, list[Problem]]:
    """The text of a lesson file, or ``None`` and the problem: too large, not UTF-8, or with a BOM."""
    size = file.stat().st_size
    if size > MAX_LESSON_BYTES:
        return None, [
            Problem(
                shown_as,
                SOURCE_FIELD,
                f"is {size:,} bytes; a lesson file may be at most {MAX_LESSON_BYTES:,}",
                "split the lesson in two, or move long data into a chart or a notebook",
            )
        ]
    data = file.read_bytes()
    if data.startswith(codecs.BOM_UTF8) or data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None, [
            Problem(
                shown_as,
                SOURCE_FIELD,
                "starts with a byte-order mark",
                "save it as UTF-8 without BOM (most editors: 'UTF-8', not 'UTF-8 with BOM')",
                line=1,
            )
        ]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        return None, [
            Problem(
                shown_as,
                SOURCE_FIELD,
                f"is not UTF-8 text (byte {data[error.start]:#04x} at offset {error.start})",
                "save it as UTF-8 (in most editors: File > Save with encoding > UTF-8)",
                line=line,
            )
        ]
    return (text, []) if (problem := _front_matter_bomb(text, shown_as)) is None else (None, [problem])


_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def _front_matter_bomb(text: str, shown_as: str) -> Problem | None:
    """A front matter that MkDocs's own YAML reading would expand: aliases, or over the size limit.

    MkDocs parses every page's front matter itself, before any check of ours could report it, so such a
    file stops the build before MkDocs reads it.
    """
    match = _FRONT_MATTER_RE.match(text)
    if match is None:
        return None
    try:
        compose_yaml(match.group(1) or "")
    except yaml.composer.ComposerError as error:
        if "aliases" not in str(error):
            return None  # other YAML mistakes are reported, with their line, by the front-matter check
        line = 2 + error.problem_mark.line if error.problem_mark else 1
        return Problem(shown_as, SOURCE_FIELD, f"front matter: {error.problem}", FIX_ALIAS, line=line)
    except yaml.YAMLError as error:
        if "at most" not in str(error):
            return None
        return Problem(shown_as, SOURCE_FIELD, f"front matter: {error}", "keep front matter short", line=1)
    return None


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases: an anchor used twice can no longer multiply a document."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None,
                None,
                f"YAML aliases (*{event.anchor}) are not allowed; write the value out in full",
                event.start_mark,
            )
        return super().compose_node(parent, index)


def load_yaml(text: str, limit: int = MAX_YAML_CHARS) -> Any:
    """Parse YAML like ``yaml.safe_load``, refusing aliases and texts longer than ``limit`` characters.

    Each text is parsed once per process and handed out as a fresh copy (callers may change what they get):
    a build reads the same front matter and blocks from several places, and ``serve`` reads every page again
    on each edit, while PyYAML's pure-Python parser was a tenth of a rebuild.
    """
    return copy.deepcopy(_load_yaml(text, limit))


@functools.lru_cache(maxsize=1024)
def _load_yaml(text: str, limit: int) -> Any:
    if len(text) > limit:
        raise yaml.YAMLError(f"the YAML is {len(text):,} characters; at most {limit:,} are read")
    return yaml.load(text, Loader=BoundedLoader)


@functools.lru_cache(maxsize=1024)
def compose_yaml(text: str, limit: int = MAX_YAML_CHARS) -> Any:
    """The node tree of ``text`` (for line numbers), with the same bounds as :func:`load_yaml`.

    Parsed once per text (see :func:`load_yaml`); the tree is shared, read it without changing it.
    """
    if len(text) > limit:
        raise yaml.YAMLError(f"the YAML is {len(text):,} characters; at most {limit:,} are read")
    return yaml.compose(text, Loader=BoundedLoader)
