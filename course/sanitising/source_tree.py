"""What may be in the folders a build reads from contributors: docs/, overrides/ and the snippet paths.

A symbolic link under docs/ to ``/proc/self/environ`` or ``../.git/config`` published the builder's
environment and the checkout's git configuration (its token, in CI), and a linked folder published ``.html``,
``.js`` and ``.svg`` files on the site's origin: MkDocs follows links (``os.walk(followlinks=True)``) and
copies what they point at. Two sources of one address (``x.md`` and ``x/index.md``) overwrote each other
silently. So, by allow-list, each entry of those folders must be:

- a directory or a regular file, never a symbolic link (to a file or a folder), a hard link (a second name
  of a file elsewhere), a pipe, a socket or a device (reading a pipe hangs the build);
- named with letters, digits, ``.``, ``_`` and ``-`` only (a name is part of a page's address, of navigation
  titles and of the build's messages: a newline in one started a CI log command, ``https:`` an off-site link);
- under docs/, of a kind lessons use (:func:`~course.sanitising.source_files.docs_file_problem`, judged on
  the entry itself, which, with no links allowed, is its real path), and the only source of its address.

Every problem is a ``file`` problem (:data:`~course.sanitising.source_files.SOURCE_FIELD`): the build stops
before MkDocs reads or copies anything, and ``check`` reports the same.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from course.lesson_format.problems import Problem, printable
from course.sanitising.source_files import SOURCE_FIELD, docs_file_problem

NAME_RE = re.compile(r"^\.?[A-Za-z0-9_][A-Za-z0-9._-]*$")
NAME_FIX = "rename it with letters, digits, '.', '_' and '-' only, e.g. kv-cache-sizes.png"
LINK_FIX = (
    "replace the link with the file itself (a copy), or remove it: the build publishes what a link points at"
)
PAGE_SUFFIX = ".md"
NOTEBOOK_PATTERN = "*/notebooks/*.py"  # the worked notebooks, which mkdocs-jupyter makes pages of


def _entry_problem(entry: Path, shown_as: str) -> Problem | None:
    """Why one entry may not be read: its name, or what it is (a link, a pipe...); ``None`` when it may."""
    if not NAME_RE.match(entry.name):
        return Problem(
            shown_as,
            SOURCE_FIELD,
            f"its name '{printable(entry.name)}' has characters other than letters, digits, '.', '_' and '-' "
            "(a name becomes part of an address, a title and the build's messages)",
            NAME_FIX,
        )
    info = entry.lstat()
    if stat.S_ISLNK(info.st_mode):
        target = printable(os.readlink(entry))
        return Problem(
            shown_as,
            SOURCE_FIELD,
            f"is a symbolic link (to '{target}'); links are refused under docs/, overrides/ and the "
            "snippet folders, whatever they point at",
            LINK_FIX,
        )
    if stat.S_ISDIR(info.st_mode):
        return None
    if not stat.S_ISREG(info.st_mode):
        return Problem(
            shown_as,
            SOURCE_FIELD,
            "is not a regular file (a pipe, socket or device: reading it would hang or leak the build)",
            "remove it",
        )
    if info.st_nlink > 1:
        return Problem(
            shown_as,
            SOURCE_FIELD,
            f"is a hard link ({info.st_nlink} names for one file, the others possibly outside the folder)",
            "replace it with a copy of its own (cp --no-preserve=links), or remove it",
        )
    return None


def _walk(folder: Path) -> Iterable[tuple[Path, str]]:
    """Every entry under ``folder`` with its path relative to it, not entering linked folders."""
    for parent, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        for name in [*dirnames, *sorted(filenames)]:
            entry = Path(parent) / name
            yield entry, entry.relative_to(folder).as_posix()


def tree_problems(folder: Path | str, shown_prefix: str = "") -> list[Problem]:
    """Links, odd files and odd names under ``folder`` (overrides/, a snippet folder or file).

    ``shown_prefix`` is put before each relative path in problems (``../overrides/``: problems are named
    relative to docs/ when they are printed).
    """
    root = Path(folder)
    shown_root = shown_prefix.rstrip("/") or root.name
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        problem = _entry_problem(root, shown_root)
        return [problem] if problem else []
    found: list[Problem] = []
    for entry, relative in _walk(root) if root.is_dir() else ():
        problem = _entry_problem(entry, shown_prefix + relative)
        if problem is not None:
            found.append(problem)
    return found


def docs_tree_problems(docs_dir: Path | str) -> list[Problem]:
    """Everything under docs/ a build may not read: :func:`tree_problems`, file kinds, duplicate addresses."""
    docs = Path(docs_dir)
    found: list[Problem] = []
    if docs.is_symlink():
        found.append(Problem(".", SOURCE_FIELD, "the docs folder itself is a symbolic link", LINK_FIX))
        return found
    for entry, relative in _walk(docs):
        problem = _entry_problem(entry, relative)
        if problem is None and entry.is_file() and not _hidden(relative):
            problem = docs_file_problem(relative)
        if problem is not None:
            found.append(problem)
    for address, sources in sorted(_pages(docs).items()):
        for source in sources[1:]:
            found.append(
                Problem(
                    source,
                    SOURCE_FIELD,
                    f"is published at the same address as {sources[0]} ({address or 'the home page'}), "
                    "and one would overwrite the other",
                    "rename or remove one of the two files",
                )
            )
    return found


def _pages(docs: Path) -> dict[str, list[str]]:
    """The page sources under docs/ (Markdown, worked notebooks) that may be read, by their address."""
    pages: dict[str, list[str]] = {}
    for entry, relative in _walk(docs):
        readable = _entry_problem(entry, "") is None and entry.is_file()
        if _is_page(relative) and not _hidden(relative) and readable:
            pages.setdefault(page_address(relative), []).append(relative)
    for sources in pages.values():  # MkDocs itself prefers a folder's index.md to its README.md
        if {PurePosixPath(source).name for source in sources} == {"index.md", "README.md"}:
            sources.sort(key=lambda source: PurePosixPath(source).stem != "index")
            del sources[1:]
    return pages


def page_sources(docs_dir: Path | str) -> dict[str, str]:
    """Each address the pages under docs/ are published at, with its (first) source."""
    docs = Path(docs_dir)
    return {address: sources[0] for address, sources in _pages(docs).items()} if docs.is_dir() else {}


def markdown_sources(docs_dir: Path | str) -> list[Path]:
    """The Markdown files under docs/ that may be read: regular files, reached without a link, sorted."""
    docs = Path(docs_dir)
    if docs.is_symlink() or not docs.is_dir():
        return []
    return [
        entry
        for entry, _ in _walk(docs)
        if entry.suffix == PAGE_SUFFIX and _entry_problem(entry, "") is None and entry.is_file()
    ]


def is_plain_file(file: Path, root: Path) -> bool:
    """Whether ``file`` is a regular file reached from ``root`` without a link: what may be read."""
    if file.is_symlink() or not file.is_file():
        return False
    return not any((root / parent).is_symlink() for parent in file.relative_to(root).parents)


def page_address(source: str) -> str:
    """The directory URL MkDocs gives a page source: ``a/x.md`` and ``a/x/index.md`` -> ``a/x/``.

    ``README.md`` is a folder's index page too, as MkDocs reads it.
    """
    path = PurePosixPath(source)
    if path.stem in ("index", "README"):
        parent = path.parent.as_posix()
        return "" if parent == "." else parent + "/"
    return path.with_suffix("").as_posix() + "/"


def _is_page(relative: str) -> bool:
    return relative.endswith(PAGE_SUFFIX) or (
        PurePosixPath(relative).match(NOTEBOOK_PATTERN) and len(PurePosixPath(relative).parts) == 3
    )


def _hidden(relative: str) -> bool:
    """Hidden entries (``.gitkeep``) are never published (MkDocs leaves them out), so any kind may be one."""
    return any(part.startswith(".") for part in relative.split("/"))


def shown_path(folder: Path | str) -> str:
    """How a folder outside docs/ is named in problems: ``./overrides/`` from the working directory."""
    absolute = Path(folder).absolute()
    try:
        return "./" + absolute.relative_to(Path.cwd()).as_posix() + ("/" if absolute.is_dir() else "")
    except ValueError:
        return absolute.as_posix() + ("/" if absolute.is_dir() else "")


def build_input_folders(theme_dir: str | None, markdown_configs: dict[str, dict[str, object]]) -> list[str]:
    """The folders (and files) besides docs/ a build reads: the theme's overrides and the snippet paths."""
    folders = [theme_dir] if theme_dir else []
    base = markdown_configs.get("pymdownx.snippets", {}).get("base_path", [])
    if isinstance(base, str):
        folders.append(base)
    elif isinstance(base, list):
        folders += [str(b) for b in base if b]
    return folders


def build_input_problems(folders: Iterable[str | Path]) -> list[Problem]:
    """:func:`tree_problems` of each of ``folders`` (overrides/, the snippet paths), named from the cwd."""
    found: list[Problem] = []
    for folder in folders:
        found += tree_problems(folder, shown_path(folder))
    return found
