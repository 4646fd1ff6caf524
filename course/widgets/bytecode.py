"""The calculators archive with bytecode made by the site's own Pyodide, so the browser need not compile it.

Importing the calculators in the widget worker compiled about 400 kB of Python source: 0.8 s of a 7 s cold
start on a quiet machine (3 s on a busy one), the largest cost after Pyodide's own start. The build's CPython
cannot write that bytecode, since a ``.pyc`` is only used by the Python version that wrote it (its magic
number) and Pyodide's Python is not the build's. So the Pyodide that package-lock.json pins, the one the site
ships, compiles the archive under Node (``compile_bytecode.mjs``), once per source archive: the result is
cached in ``.cache/widget-bytecode/`` (``$RIDGEPOINT_BYTECODE_CACHE``), keyed by the sources, the Pyodide
version and the compile script.

The bytecode is in "checked hash" form beside its source: Python uses it only when the magic number is its own
and the source's hash matches, and otherwise compiles the source as before. It can make the start faster,
never change what runs. Without Node or Pyodide's npm package the source archive ships unchanged.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("compile_bytecode.mjs")
CACHE_ENV = "RIDGEPOINT_BYTECODE_CACHE"
TIMEOUT_S = 600  # Node starts Pyodide once; on a busy runner that takes a while


class BytecodeError(RuntimeError):
    """Pyodide could not compile the calculators; the message has Node's output."""


def cache_dir(root: Path = ROOT) -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else root / ".cache" / "widget-bytecode"


def can_compile(root: Path = ROOT) -> bool:
    """Whether Node and the pinned Pyodide are here (npm ci has run)."""
    return shutil.which("node") is not None and (root / "node_modules" / "pyodide" / "pyodide.mjs").is_file()


def with_bytecode(source_zip: bytes, root: Path = ROOT) -> bytes | None:
    """The archive with each module's bytecode beside it, or None where it cannot be made here."""
    if not can_compile(root):
        return None
    pyodide = (root / "node_modules" / "pyodide" / "package.json").read_bytes()
    key = hashlib.sha256(source_zip + pyodide + SCRIPT.read_bytes()).hexdigest()[:32]
    cached = cache_dir(root) / f"calculators-{key}.zip"
    if cached.is_file():
        return cached.read_bytes()
    with tempfile.TemporaryDirectory(prefix="ridgepoint-bytecode-") as folder:
        source, target = Path(folder) / "source.zip", Path(folder) / "target.zip"
        source.write_bytes(source_zip)
        result = subprocess.run(
            [str(shutil.which("node")), str(SCRIPT), str(source), str(target)],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        if result.returncode != 0 or not target.is_file():
            raise BytecodeError(
                f"Pyodide could not compile the calculators for the widgets ({SCRIPT.name}):\n"
                f"{result.stdout}{result.stderr}"
            )
        data = target.read_bytes()
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(data)
    partial.replace(cached)  # atomic: a parallel build never reads half a file
    return data
