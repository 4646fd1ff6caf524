"""What the MkDocs hook does around the pages: import edited project modules afresh on each serve rebuild.

``mkdocs serve`` rebuilds in one process. Dropping every project module on each rebuild (as this once did)
also dropped everything they had computed: each edit of a lesson re-ran every simulator experiment the
course quotes, most of a rebuild. :func:`purge_changed_project_modules` drops them only when a file of the
project's packages changed since the last rebuild, so an edit of a lesson keeps the computed figures and an
edit of a preset still shows the new numbers.

The takeaways box is placed by a Markdown extension (:mod:`course.lesson_format.takeaways`) and the blocks are
validated by :func:`course.lesson_format.validation.validate_page`, so that builders without the hook do both.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

PROJECT_PACKAGES = ("calculators", "course")
SourceStamps = tuple[tuple[str, int, int], ...]
# The project's files as they were when its modules were last (re)imported, per project root. This module
# keeps itself through a purge, so that this survives the rebuilds it compares.
_LAST_STAMPS: dict[str, SourceStamps] = {}


def purge_project_modules(packages: Sequence[str] = PROJECT_PACKAGES, keep: Sequence[str] = ()) -> list[str]:
    """Forget imported project modules so that the next build imports edited calculators and extensions.

    ``mkdocs serve`` rebuilds in the same process; ``importlib.reload`` would keep stale references between
    modules, so the modules are dropped from ``sys.modules`` and imported afresh on first use. The modules
    named in ``keep`` stay.
    """
    names = [n for n in _project_module_names(packages) if n not in keep]
    for name in names:
        del sys.modules[name]
    return names


def source_stamps(project_root: str | Path, packages: Sequence[str] = PROJECT_PACKAGES) -> SourceStamps:
    """Every file of the project's packages (not byte code) with its modification time and size.

    Data files count as well as modules: a module may read one (a lock file, a template) when imported.
    """
    root = Path(project_root)
    stamps = []
    for package in packages:
        for file in sorted((root / package).rglob("*")):
            if "__pycache__" in file.parts or not file.is_file():
                continue
            stat = file.stat()
            stamps.append((file.relative_to(root).as_posix(), stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


def purge_changed_project_modules(
    project_root: str | Path, packages: Sequence[str] = PROJECT_PACKAGES
) -> list[str]:
    """Forget the project's modules if any file of ``packages`` under ``project_root`` changed since the last
    call; returns the names forgotten, none when nothing changed.

    A file added, removed, rewritten or touched counts as a change. The first call forgets only modules
    imported from elsewhere (another checkout earlier on ``sys.path``), so a build does not import the whole
    project twice. Edits to this module itself take effect at the next start of the server.
    """
    root = Path(project_root).resolve()
    stamps = source_stamps(root, packages)
    previous = _LAST_STAMPS.get(str(root))
    _LAST_STAMPS[str(root)] = stamps
    if previous == stamps:
        return []
    if previous is None:  # the first build: keep what MkDocs imported from here a moment ago
        keep = [n for n in _project_module_names(packages) if _comes_from(sys.modules[n], root)]
        return purge_project_modules(packages, keep=[__name__, *keep])
    return purge_project_modules(packages, keep=(__name__,))


def _project_module_names(packages: Sequence[str]) -> list[str]:
    """The imported modules of ``packages``, by name."""
    prefixes = tuple(f"{p}." for p in packages)
    return [name for name in list(sys.modules) if name in packages or name.startswith(prefixes)]


def _comes_from(module: object, root: Path) -> bool:
    """Whether ``module`` was imported from a file under ``root`` (not another checkout on the path)."""
    file = getattr(module, "__file__", None)
    return file is not None and Path(file).resolve().is_relative_to(root)
