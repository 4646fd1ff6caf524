#!/usr/bin/env python3
"""Run a nox session on a machine that has only Python: ``python3 dev.py serve`` or ``python3 dev.py tests``.

Every workflow of the project is a nox session (``python3 dev.py --list`` lists them with their docstrings).
This script exists so that a newcomer needs nothing but Python 3.11+: the first time, it makes ``.venv-nox``
with a pinned nox in it; afterwards it only hands over to nox. It uses the standard library alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

NOX_REQUIREMENT = "nox==2026.10.20"
ROOT = Path(__file__).resolve().parent
TOOL_ENV = ROOT / ".venv-nox"


def _python_in(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_nox() -> Path:
    """Create the nox environment once, or repair it if the pinned nox is missing."""
    python = _python_in(TOOL_ENV)
    marker = TOOL_ENV / "nox-requirement.txt"
    if python.exists() and marker.exists() and marker.read_text() == NOX_REQUIREMENT:
        return python
    print(f"dev.py: installing {NOX_REQUIREMENT} into {TOOL_ENV.name}/ (first run only)", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(TOOL_ENV)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", NOX_REQUIREMENT], check=True)
    marker.write_text(NOX_REQUIREMENT)
    return python


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may be started by any python3
        print("dev.py: Ridgepoint needs Python 3.11 or newer", file=sys.stderr)
        return 2
    python = ensure_nox()
    args = argv if not argv or argv[0].startswith("-") else ["-s", argv[0], *argv[1:]]
    if "--" not in args and len(args) > 2 and args[0] == "-s":
        # Extra words go to the session (pytest arguments, a lesson title).
        args = [*args[:2], "--", *args[2:]]
    os.chdir(ROOT)
    return subprocess.call([str(python), "-m", "nox", *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
