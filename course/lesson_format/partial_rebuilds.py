"""Which pages a ``dev.py serve`` rebuild writes again: the edited ones alone, unless what they share changed.

``dev.py serve`` runs ``mkdocs serve --dirty``, which reads and writes only the pages whose source is newer
than their output (issue 17, part 2: writing all 25 pages, eight of them 750 kB notebook pages, after a
one-line edit made the edit loop 3.7 times plain Material's). MkDocs warns that this can leave the other
pages stale; here it cannot. What one page shows of another is the other's front matter (titles in the
navigation and the footer, the track lists, the notebook pages' links back). Everything else a page is made
from is shared by all pages: the other files of docs/ (tracks, references, redirects, the notebooks), the
theme overrides, the config and the project's code. :func:`prepare_rebuild` empties the site folder, so that
MkDocs writes every page again, whenever one of those changed since the last build, or the last build had
problems (every page shows them in its panel), or it did not finish.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from mkdocs.utils import clean_directory

from course.lesson_format.lessons import front_matter_source

# Site folder -> what its last finished build with no problems was made from. A serve rebuild that imports
# the project afresh (course.lesson_format.pages) forgets this too, and the rebuild is then a full one.
_FINISHED: dict[str, str] = {}
# Page source -> its (modification time, size) when MkDocs last read it. MkDocs takes a page for edited when
# its source is newer than its output; a save that lands while a build runs, after the page was read and
# before it was written, would then never be shown. Comparing with what was read leaves no such gap.
_READ: dict[str, tuple[int, int]] = {}
# Site folder -> the inline scripts' hashes of every page written since its last full build (for _headers).
_SCRIPT_HASHES: dict[str, set[str]] = {}
DIRTY_BUILD_WARNING = "A 'dirty' build is being performed"  # MkDocs' warning, logged on every --dirty build


def shared_inputs(docs_dir: str | Path, config_file: str | Path | None, theme_dir: str | Path | None) -> str:
    """The SHA-256 (hex) of what every page is made from, short of the project's code.

    Each page of ``docs_dir`` counts by its path and front matter (its body shows on its own page only),
    every other file by its path and bytes, and so does an ``index.md``: its address starts every address
    of its section, and Material's search, when one page was written again, replaces every entry under that
    page's address (editing the home page's body alone would leave the home page alone in the index). Then
    the config file and the theme's custom folder. Hidden files (an editor's swap file) are left out, as
    MkDocs leaves them out of the site.
    """
    digest = hashlib.sha256()
    for root, label in ((docs_dir, "docs"), (theme_dir, "theme")):
        if root is None:
            continue
        folder = Path(root)
        for file in sorted(folder.rglob("*")):
            relative = file.relative_to(folder)
            if not file.is_file() or any(part.startswith(".") for part in relative.parts):
                continue
            content = file.read_bytes()
            if label == "docs" and file.suffix == ".md" and file.name != "index.md":
                content = front_matter_source(content.decode("utf-8", "replace")).encode()
            digest.update(f"{label}/{relative.as_posix()}\0".encode())
            digest.update(hashlib.sha256(content).digest())
    if config_file is not None and Path(config_file).is_file():
        digest.update(b"config\0" + hashlib.sha256(Path(config_file).read_bytes()).digest())
    return digest.hexdigest()


def prepare_rebuild(site_dir: str | Path, inputs: str, *, code_changed: bool) -> bool:
    """Empty ``site_dir`` unless its last build finished with no problems from the same ``inputs`` and the
    code is the same; True when emptied, so that every page is written again.

    Outside ``--dirty`` MkDocs empties the folder itself a moment later, so this changes nothing there.
    """
    key = str(Path(site_dir).resolve())
    previous = _FINISHED.pop(key, None)
    if previous == inputs and not code_changed:
        return False
    clean_directory(str(site_dir))
    _SCRIPT_HASHES.pop(key, None)
    _READ.clear()
    return True


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def page_read(source: str) -> None:
    """Record the state of a page's source file as MkDocs is about to read it (``on_pre_page``)."""
    if (stamp := _stamp(source)) is not None:
        _READ[source] = stamp


def write_edited_pages_again(pages: Iterable[tuple[str, str]]) -> list[str]:
    """Delete the output of each page (``(source, output)`` paths) whose source changed since it was last
    read, so that ``--dirty`` writes it again whatever the clocks say; returns the outputs deleted."""
    deleted = []
    for source, output in pages:
        if _READ.get(source) != _stamp(source) and os.path.isfile(output):
            os.unlink(output)
            deleted.append(output)
    return deleted


def finish_build(site_dir: str | Path, inputs: str, *, had_problems: bool) -> None:
    """Record that the build of ``site_dir`` from ``inputs`` finished; the next may then be a partial one."""
    if not had_problems:
        _FINISHED[str(Path(site_dir).resolve())] = inputs


def forget_build(site_dir: str | Path) -> None:
    """The build of ``site_dir`` failed after all (``strict`` aborts after the last event): the next is a
    full one."""
    _FINISHED.pop(str(Path(site_dir).resolve()), None)


def script_hashes(site_dir: str | Path, written: Iterable[str]) -> set[str]:
    """The inline scripts' hashes of every page in ``site_dir``: those of the pages written by this build and
    those kept from the builds before it since the last full one (their pages were not written again)."""
    kept = _SCRIPT_HASHES.setdefault(str(Path(site_dir).resolve()), set())
    kept.update(written)
    return set(kept)


class _DirtyBuildWarning(logging.Filter):
    """Drops MkDocs' warning that a dirty build may leave links stale: :func:`prepare_rebuild` writes every
    page whenever they could be, and under the config's ``strict: true`` the warning would abort each build.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(DIRTY_BUILD_WARNING)


def quiet_dirty_build_warning() -> None:
    """Install the filter on the logger MkDocs warns through, once per process (by name: a rebuild that
    imports the project afresh makes a new class)."""
    logger = logging.getLogger("mkdocs.commands.build")
    if not any(type(f).__name__ == _DirtyBuildWarning.__name__ for f in logger.filters):
        logger.addFilter(_DirtyBuildWarning())


# How dev.py serve runs `mkdocs serve` (noxfile.py), and so the edit-to-reload benchmark and the serve tests.
SERVE_FLAGS = ("--dirty",)
