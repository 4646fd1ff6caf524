"""Reading what a contributor sends, with bounds: file kinds, sizes, encodings and YAML.

A 526-byte YAML alias bomb in front matter expanded to 312 MB, and any ``.html``, ``.js`` or upper-case
``.MD`` file under docs/ was copied to the site unchecked; front matter with carriage-return line endings
slipped past the alias guard (282 bytes became 35 MB in MkDocs' own reading), and YAML nested a few thousand
levels deep crashed ``check`` and the build with a RecursionError. So:

- :func:`docs_file_problem`: only the kinds of file lessons use may live under docs/ (:data:`ALLOWED_FILES`);
- :func:`read_source`: a lesson file is at most :data:`MAX_LESSON_BYTES`, UTF-8, without a byte-order mark,
  and its line endings are read as MkDocs and Markdown read them (``\r\n`` and a lone ``\r`` become ``\n``);
- :func:`load_yaml`: the one YAML reader for what contributors write (front matter, tracks.yml, redirects.yml,
  references.yml, notebook headers, blocks): no aliases, at most :data:`MAX_YAML_DEPTH` levels of nesting,
  within a size; :func:`read_yaml_file` reads a whole YAML file with both bounds.

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
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent
from yaml.resolver import Resolver

from course.lesson_format.problems import Problem

MAX_LESSON_BYTES = 256 * 1024  # the longest lesson today is about 20 KB
MAX_YAML_CHARS = 32 * 1024  # front matter or one block; tracks.yml too
MAX_YAML_FILE_CHARS = 128 * 1024  # a whole YAML file of docs/ (references.yml is the longest, about 5 KB)
MAX_YAML_DEPTH = 16  # the deepest YAML of the course (a quiz's options) nests 4 levels

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
    text = normalise_line_endings(text)
    return (text, []) if (problem := _front_matter_bomb(text, shown_as)) is None else (None, [problem])


def normalise_line_endings(text: str) -> str:
    """``text`` with ``\r\n`` and lone ``\r`` as ``\n``: what MkDocs (text mode) and Markdown read.

    Read otherwise, a file with ``\r`` line endings had no front matter for our checks but had one for MkDocs.
    """
    return text.replace("\r\n", "\n").replace("\r", "\n")


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
    except YamlLimitError as error:
        line = 2 + error.problem_mark.line if error.problem_mark else 1
        return Problem(shown_as, SOURCE_FIELD, f"front matter: {error.problem}", error.fix, line=line)
    except yaml.YAMLError:
        return None  # other YAML mistakes are reported, with their line, by the front-matter check
    return None


FIX_DEPTH = f"write the value with at most {MAX_YAML_DEPTH} levels of nesting"
FIX_SIZE = "keep it short: move long data into a chart, a notebook or a file of calculators/"


class YamlLimitError(yaml.composer.ComposerError):
    """YAML refused for a bound (an alias, too deep, too long), not a mistake of syntax; ``fix`` says how."""

    def __init__(self, problem: str, fix: str, mark: Any = None) -> None:
        super().__init__(None, None, problem, mark)
        self.fix = fix


try:
    from yaml._yaml import CParser
except ImportError:  # a PyYAML built without libyaml: all Python
    _SafeLoader: type = yaml.SafeLoader
else:

    class _SafeLoader(Composer, CParser, SafeConstructor, Resolver):  # type: ignore[no-redef]
        """PyYAML's safe loader reading with libyaml's scanner and parser, which PyYAML's wheels carry.

        They are C, ten times the Python ones, which took a tenth of a warm build (a build reads some two
        hundred front matters and blocks). The composer stays PyYAML's Python one, so that
        :class:`BoundedLoader` sees every node it builds (libyaml's own composer would not call it).
        """

        def __init__(self, stream: Any) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            self.text = stream if isinstance(stream, str) else None

        # libyaml refuses nesting past 1,000 levels itself, while scanning ahead of what the composer has
        # seen: that is the composer's refusal too, said as the composer says it (a try in each method, not a
        # shared context manager: these run for every event, 30,000 a build).
        def check_event(self, *choices: Any) -> bool:
            try:
                return bool(CParser.check_event(self, *choices))
            except yaml.MarkedYAMLError as error:
                raise _as_ours(error, self.text) from None

        def peek_event(self) -> Any:
            try:
                return CParser.peek_event(self)
            except yaml.MarkedYAMLError as error:
                raise _as_ours(error, self.text) from None

        def get_event(self) -> Any:
            try:
                return CParser.get_event(self)
            except yaml.MarkedYAMLError as error:
                raise _as_ours(error, self.text) from None


def _as_ours(error: yaml.MarkedYAMLError, text: str | None) -> yaml.MarkedYAMLError:
    """libyaml's error as PyYAML's parser gives it: its refusal of deep nesting as :func:`too_deep`, and a
    mark past the end of a text without a final line break moved back to the end of the last line (libyaml
    starts a line of its own there; a problem would name the line after the block)."""
    mark = error.problem_mark
    if text is not None and mark is not None and mark.line > (last_line := text.count("\n")):
        mark = yaml.Mark(mark.name, len(text), last_line, len(text.rsplit("\n", 1)[-1]), None, 0)
        error.problem_mark = mark
    return too_deep(mark) if "maximum nesting depth" in str(error.problem) else error


def too_deep(mark: Any) -> YamlLimitError:
    """The refusal of YAML nested past :data:`MAX_YAML_DEPTH`, at ``mark``."""
    return YamlLimitError(f"the YAML is nested more than {MAX_YAML_DEPTH} levels deep", FIX_DEPTH, mark)


class BoundedLoader(_SafeLoader):  # type: ignore[misc]
    """PyYAML's safe loader without aliases and with a depth limit.

    An anchor used twice can no longer multiply a document, and nesting is refused at
    :data:`MAX_YAML_DEPTH` levels with a message, before PyYAML's recursive composer (and our deep copies)
    would run out of Python's stack.
    """

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(AliasEvent):
            event = self.peek_event()
            raise YamlLimitError(
                f"YAML aliases (*{event.anchor}) are not allowed; write the value out in full",
                FIX_ALIAS,
                event.start_mark,
            )
        if self.depth >= MAX_YAML_DEPTH:
            raise too_deep(self.peek_event().start_mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def load_yaml(text: str, limit: int = MAX_YAML_CHARS) -> Any:
    """Parse YAML like ``yaml.safe_load``, refusing aliases, deep nesting and texts over ``limit`` characters.

    Each text is parsed once per process and handed out as a fresh copy (callers may change what they get):
    a build reads the same front matter and blocks from several places, and ``serve`` reads every page again
    on each edit, while PyYAML's pure-Python parser was a tenth of a rebuild.
    """
    return copy.deepcopy(_load_yaml(text, limit))


@functools.lru_cache(maxsize=1024)
def _load_yaml(text: str, limit: int) -> Any:
    _check_length(text, limit)
    return yaml.load(normalise_line_endings(text), Loader=BoundedLoader)


def _check_length(text: str, limit: int) -> None:
    if len(text) > limit:
        raise YamlLimitError(f"the YAML is {len(text):,} characters; at most {limit:,} are read", FIX_SIZE)


@functools.lru_cache(maxsize=1024)
def compose_yaml(text: str, limit: int = MAX_YAML_CHARS) -> Any:
    """The node tree of ``text`` (for line numbers), with the same bounds as :func:`load_yaml`.

    Parsed once per text (see :func:`load_yaml`); the tree is shared, read it without changing it.
    """
    _check_length(text, limit)
    return yaml.compose(normalise_line_endings(text), Loader=BoundedLoader)


def read_yaml_file(file: Path, shown_as: str, example: str) -> tuple[Any, list[Problem]]:
    """The data of a contributor's YAML file (tracks.yml, redirects.yml, references.yml), or its problems.

    The file is read like a lesson (:func:`read_source`: size, UTF-8, no BOM, line endings) and parsed by
    :func:`load_yaml` within :data:`MAX_YAML_FILE_CHARS`. A problem names the file, its line where known, and
    ``example`` (what a right entry looks like) unless a bound has a fix of its own.
    """
    if file.is_symlink() or not file.is_file():
        return None, []  # a link or a pipe: refused by the file checks (source_tree), never read
    text, problems = read_source(file, shown_as)
    if text is None:
        return None, problems
    try:
        return load_yaml(text, MAX_YAML_FILE_CHARS), []
    except yaml.YAMLError as error:
        return None, [yaml_problem(error, shown_as, shown_as.removesuffix(".yml"), example)]


def yaml_problem(error: yaml.YAMLError, file: str, field: str, example: str, first_line: int = 1) -> Problem:
    """The problem for YAML that :func:`load_yaml` refused: its reason, its line, and how to fix it.

    ``first_line`` is the file's line of the YAML's first line (2 for front matter after its ``---``).
    """
    mark = getattr(error, "problem_mark", None)
    line = first_line + mark.line if mark is not None else None
    if isinstance(error, YamlLimitError):  # a file that cannot be read within bounds stops the build
        return Problem(file, SOURCE_FIELD, f"{field}: {error.problem}", error.fix, line=line)
    reason = getattr(error, "problem", None) or str(error).splitlines()[0]
    return Problem(file, field, f"is not valid YAML ({reason})", example, line=line)
