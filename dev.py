#!/usr/bin/env python3
"""Run a nox session on a machine that has only Python: ``python3 dev.py serve`` or ``python3 dev.py tests``.

Every workflow of the project is a nox session (``python3 dev.py --list`` lists them with their docstrings).
This script exists so that a newcomer needs nothing but Python 3.11+: the first time, it makes ``.venv-nox``
with nox and uv installed from ``tools/requirements.txt`` (pinned, with hashes); afterwards it only hands over
to nox, whose sessions install the project's locked dependencies (``uv.lock``) with uv. It uses the standard
library alone.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
TOOL_ENV = ROOT / ".venv-nox"
# nox and uv, pinned with hashes; `python3 dev.py lock` re-locks them with the project (see noxfile.py).
TOOL_REQUIREMENTS = ROOT / "tools" / "requirements.txt"


def _python_in(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_tools() -> Path:
    """Create the tool environment once (or again when tools/requirements.txt changed) and return its python.

    pip installs exactly the files whose hashes the requirements list (``--require-hashes``); the session
    environments are then made by uv from uv.lock, each in seconds once uv's cache is warm.
    """
    python = _python_in(TOOL_ENV)
    marker = TOOL_ENV / "requirements.sha256"
    wanted = hashlib.sha256(TOOL_REQUIREMENTS.read_bytes()).hexdigest()
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    print(f"dev.py: installing nox and uv into {TOOL_ENV.name}/ (first run only)", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(TOOL_ENV)
    install = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*install, "--require-hashes", "--no-deps", "-r", str(TOOL_REQUIREMENTS)], check=True)
    marker.write_text(wanted)
    return python


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may be started by any python3
        print("dev.py: Ridgepoint needs Python 3.11 or newer", file=sys.stderr)
        return 2
    python = ensure_tools()
    args = argv if not argv or argv[0].startswith("-") else ["-s", argv[0], *argv[1:]]
    if "--" not in args and len(args) > 2 and args[0] == "-s":
        # Extra words go to the session (pytest arguments, a lesson title).
        args = [*args[:2], "--", *args[2:]]
    os.chdir(ROOT)
    return subprocess.call([str(python), "-m", "nox", *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
