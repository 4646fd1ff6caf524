"""The calculators as the widgets' worker loads them: a zip of the math core and ``calculators.browser``.

The zip is made from the source tree at build time, reproducible (sorted entries, fixed timestamps; the
bytecode beside the sources is cached per source archive, see :mod:`course.widgets.bytecode`), so its SHA-256
names it: the pages carry the name and the digest, a browser that cached an older archive asks for a new URL,
and the worker checks the digest of what it received before running it. Of
``calculators.charts`` only the standard-library modules go in (parameters and data rows, which the worker
computes for the live charts); the Altair specs and the vl-convert renderer stay out, as Pyodide has neither.
"""

from __future__ import annotations

import functools
import hashlib
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

from course.widgets.bytecode import with_bytecode

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = ROOT / "calculators"
# calculators.charts: every module but those that need a package the browser's Pyodide does not carry
# (specs.py needs Altair, render.py vl-convert; notebook_tables.py serves notebooks only). The ones left out
# are named, not the ones kept: a kept-list missed three chart modules that lessons added on one day, and
# every widget failed to start (tests/calculators/browser/test_browser_python_in_pyodide.py catches a module
# that imports what Pyodide lacks).
CHART_MODULES_LEFT_OUT = ("specs.py", "render.py", "notebook_tables.py")
SITE_FOLDER = "ridgepoint/widgets"  # under assets/


@dataclass(frozen=True)
class WidgetPackage:
    """The archive's bytes, its SHA-256 (hex) and its path under the site's ``assets/`` folder."""

    data: bytes
    sha256: str

    @property
    def path(self) -> str:
        return f"{SITE_FOLDER}/calculators-{self.sha256[:16]}.zip"


def package_sources(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """The Python files that go into the archive, sorted: the core, calculators.browser and chart rows."""
    files = []
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir).parts
        if "__pycache__" in parts or (parts[0] == "charts" and parts[-1] in CHART_MODULES_LEFT_OUT):
            continue
        files.append(path)
    return files


def _build(sources: tuple[tuple[Path, int, int], ...], package_dir: Path) -> WidgetPackage:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, _, _ in sources:
            name = (Path(package_dir.name) / path.relative_to(package_dir)).as_posix()
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes())
    data = with_bytecode(buffer.getvalue()) or buffer.getvalue()
    return WidgetPackage(data, hashlib.sha256(data).hexdigest())


_cached_build = functools.lru_cache(maxsize=4)(_build)


def widget_package(package_dir: Path = PACKAGE_DIR) -> WidgetPackage:
    """The archive for the current source tree (rebuilt only when a file's size or mtime changed)."""
    stamps = tuple(
        (path, path.stat().st_mtime_ns, path.stat().st_size) for path in package_sources(package_dir)
    )
    return _cached_build(stamps, package_dir)


def write_package(site_dir: Path, package_dir: Path = PACKAGE_DIR) -> Path:
    """Write the archive into ``site_dir/assets/`` under its hashed name, removing archives of
    older builds."""
    package = widget_package(package_dir)
    target = site_dir / "assets" / package.path
    target.parent.mkdir(parents=True, exist_ok=True)
    for old in target.parent.glob("calculators-*.zip"):
        if old != target:
            old.unlink()
    target.write_bytes(package.data)
    return target
