"""Which pages a ``dev.py serve`` rebuild writes again: the edited one alone, unless what pages share changed.

``dev.py serve`` runs ``mkdocs serve --dirty``, which reads and writes only the pages whose source is newer
than their output (issue 17, part 2: writing all 25 pages, eight of them 750 kB notebook pages, after a
one-line edit made the edit loop 3.7 times plain Material's). MkDocs warns that this can leave the other
pages stale; here it cannot. What one page shows of another is its title (in the navigation and the
footer; from its front matter, or its first heading) and, for a lesson, its front matter (the track lists,
the notebook pages' links back). Everything else a page is made from is shared by all pages: the other
files of docs/ (tracks, references, redirects, the notebooks), the theme overrides, the files pages include,
the config and the project's code. :func:`prepare_rebuild` empties the site folder, so that MkDocs writes
every page again, whenever one of those changed since the last build, more than one page was saved, the
last build had problems (every page shows them in its panel) or it did not finish. A problem found by a
partial rebuild shows on the edited page at once and on the others from the next save.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mkdocs.utils import clean_directory

from course.lesson_format.lessons import front_matter_source

# Site folder -> what its last finished build with no problems was made from. A serve rebuild that imports
# the project afresh (course.lesson_format.pages) forgets this too, and the rebuild is then a full one.
_FINISHED: dict[str, str] = {}
# Page source -> its (modification time, size) when MkDocs last read it. MkDocs takes a page for edited when
# its source is newer than its output; a save that lands while a build runs, after the page was read and
# before it was written, would then never be shown. Comparing with what was read leaves no such gap.
_READ: dict[str, tuple[int, int]] = {}
TITLE_KEY_RE = re.compile(r"^title\s*:", re.MULTILINE)
DIRTY_ENV = "RIDGEPOINT_DIRTY_SERVE"  # set by the hook when MkDocs serves with --dirty (it says so once)
DIRTY_BUILD_WARNING = "A 'dirty' build is being performed"  # MkDocs' warning, logged on every --dirty build


def shared_inputs(
    docs_dir: str | Path, config_file: str | Path | None, watched: Iterable[str | Path] = ()
) -> str:
    """The SHA-256 (hex) of what every page is made from.

    A page of ``docs_dir`` whose front matter gives its title counts by its path and front matter (its body
    shows on its own page only). Every other file counts by its path and bytes, and so do two kinds of page:
    one titled by its first heading (another page's navigation shows that heading), and an ``index.md``,
    whose address starts every address of its section (Material's search, when one page was written
    again, replaces every entry under that page's address: the home page's body alone would have left the
    home page alone in the index). Then the config file and the ``watched`` files and folders (the theme's
    overrides, the code, files a page includes). Hidden files (an editor's swap file) and byte code are
    left out, as MkDocs leaves them out of the site.
    """
    digest = hashlib.sha256()
    roots = [("docs", Path(docs_dir))] + [(f"watched{n}", Path(w)) for n, w in enumerate(watched)]
    if config_file is not None:
        roots.append(("config", Path(config_file)))
    for label, root in roots:
        files = [root] if root.is_file() else sorted(root.rglob("*"))
        for file in files:
            relative = file.relative_to(root) if file != root else Path(file.name)
            linked = file.is_symlink()  # counted by its target's name, never read (the build refuses it)
            if not (linked or file.is_file()) or any(
                p.startswith(".") or p == "__pycache__" for p in relative.parts
            ):
                continue
            content = os.readlink(file).encode() if linked else file.read_bytes()
            if label == "docs" and file.suffix == ".md" and file.name != "index.md":
                front_matter = front_matter_source(content.decode("utf-8", "replace"))
                if TITLE_KEY_RE.search(front_matter):
                    content = front_matter.encode()
            digest.update(f"{label}/{relative.as_posix()}\0".encode())
            digest.update(hashlib.sha256(content).digest())
    return digest.hexdigest()


def prepare_rebuild(site_dir: str | Path, inputs: str, *, code_changed: bool, dirty: bool = True) -> bool:
    """Empty ``site_dir`` unless its last build finished with no problems from the same ``inputs``, the code
    is the same, and at most one page was saved since, a lesson; True when emptied, so that every page is
    written again.

    One page at most: Material's search, after a partial rebuild, replaces the old entries of the first page
    it indexed only (a search-and-replace over several lessons would leave the others' old entries in the
    index). A lesson: a notebook saved without a change (the same inputs) would otherwise be executed again
    with the notebooks' cache off (see :func:`course.notebooks.lesson_notebooks.configure_execution_cache`).
    Outside ``--dirty`` (``dirty`` False: a plain ``mkdocs serve`` or ``build``) every build is a full one;
    MkDocs empties the folder itself a moment later, so emptying it here changes nothing.
    """
    key = str(Path(site_dir).resolve())
    previous = _FINISHED.pop(key, None)
    saved = [source for source, stamp in _READ.items() if _stamp(source) != stamp]
    one_lesson = len(saved) <= 1 and all(source.endswith(".md") for source in saved)
    if dirty and previous == inputs and not code_changed and one_lesson:
        return False
    clean_directory(str(site_dir))
    _READ.clear()
    return True


def read_untitled_pages(pages: Iterable[Any], config: Any) -> list[Any]:
    """Read the source of each page the navigation does not title (MkDocs ``on_nav``), so that its title
    (front matter, else its first heading) is known to the other pages' navigation even when the page itself
    is not written again: MkDocs leaves an unread page's title empty, and Material prints it "None"."""
    read = []
    for page in pages:
        if page is not None and page.title is None:
            page.read_source(config)
            read.append(page)
    return read


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
