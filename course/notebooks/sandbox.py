"""Worked notebooks run with an empty environment and a time limit per cell.

A notebook is contributed code that the build executes. It used to inherit the builder's environment (tokens
and secrets included) and could run for ever. :func:`configure_kernel_sandbox` makes mkdocs-jupyter start
each kernel with :func:`kernel_environment` only (no variable of the builder's is passed on, except the
chart cache folder the course itself sets) and stop any cell that runs longer than :data:`CELL_TIME_LIMIT_S`.
The kernel is still an ordinary process: this keeps secrets out of reach of a notebook and stops a runaway
cell, and the reviewer still reads notebooks as code (CONTRIBUTING says so).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

CELL_TIME_LIMIT_S = 120
_HOME = Path(tempfile.gettempdir()) / "ridgepoint-notebook-home"


def kernel_environment(project_root: str | Path) -> dict[str, str]:
    """All the environment a notebook kernel gets: a plain PATH, a scratch home, the project on its path."""
    from calculators.charts.render import CACHE_ENV, default_cache_dir

    _HOME.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(_HOME),
        "IPYTHONDIR": str(_HOME / ".ipython"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(Path(project_root).resolve()),
        "PYTHONDONTWRITEBYTECODE": "1",
        CACHE_ENV: str(default_cache_dir().resolve()),
    }


def sandboxed_kernel_manager(project_root: str | Path) -> type:
    """A jupyter_client kernel manager class that launches kernels with :func:`kernel_environment` only."""
    from jupyter_client.manager import AsyncKernelManager

    class SandboxedKernelManager(AsyncKernelManager):
        async def _async_pre_start_kernel(self, **kw: Any) -> Any:
            kw["env"] = kernel_environment(project_root)
            if self.transport == "ipc":
                # jupyter_client's default is "kernel-ipc-N" in the current folder, so two builds of one
                # checkout at once (a test run beside `dev.py serve`) would share sockets and read each
                # other's signed messages ("Invalid Signature"). A fresh folder per kernel keeps them apart.
                self.ip = str(Path(tempfile.mkdtemp(prefix="ridgepoint-kernel-")) / "kernel-ipc")
            return await super()._async_pre_start_kernel(**kw)

    return SandboxedKernelManager


def configure_kernel_sandbox(project_root: str | Path, time_limit_s: int = CELL_TIME_LIMIT_S) -> None:
    """Make mkdocs-jupyter's executions use the sandboxed kernel manager and a per-cell time limit."""
    from mkdocs_jupyter import nbconvert2

    original = getattr(nbconvert2.get_nbconvert_app, "__wrapped__", nbconvert2.get_nbconvert_app)
    manager = sandboxed_kernel_manager(project_root)

    def get_nbconvert_app(*args: Any, **kwargs: Any) -> Any:
        app = original(*args, **kwargs)
        execute = app.config["ExecutePreprocessor"]  # mkdocs-jupyter set it as a plain dict
        execute.update({"kernel_manager_class": manager, "timeout": time_limit_s})
        return app

    get_nbconvert_app.__wrapped__ = original  # type: ignore[attr-defined]
    nbconvert2.get_nbconvert_app = get_nbconvert_app
