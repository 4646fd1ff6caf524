"""Inside the sandbox: execute the notebook read from standard input, write the result to standard output.

:func:`course.notebooks.sandbox.execute_notebook` runs this module as the command of
:mod:`course.notebooks.sandbox_init`, so nbclient and the Jupyter kernel it starts both live in the
sandbox's namespaces, and nothing but two pipes joins them to the build. The kernel listens on Unix sockets
in the sandbox's scratch folder (its network namespace has no usable interface, not even loopback).

Input: one line of JSON, ``{"notebook": <nbformat v4>, "options": {...}}`` (see :data:`OPTIONS`).
Output: one JSON object, ``{"notebook": <the executed notebook>, "chart_specs": {key: spec},
"chart_drawings": {key: svg}}`` (the Vega-Lite specs and SVG drawings its charts wrote to the sandbox's
chart cache: the build serves them to the interactive charts and as the wide drawings' files), or
``{"error": {...}}`` with the kind of failure (``cell``: a cell raised; ``cell-timeout``: a cell ran past
its limit; ``kernel``: the kernel died or never started). The result goes to a copy of standard output
taken before the kernel starts, and the kernel's own standard output is sent to standard error, so what a
notebook prints reaches the build only as a cell's output.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

SCRATCH = "/sandbox/work"
CHART_CACHE = "/sandbox/charts"
SPEC_SUFFIX = ".vl.json"
KERNEL_SOCKETS = "/sandbox/kernel/ipc"
OPTIONS = ("timeout", "kernel_name", "allow_errors", "store_widget_state")


def execute(notebook_json: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """The executed notebook, or the failure, as the JSON object this module writes."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    from traitlets.config import Config

    notebook = nbformat.from_dict(notebook_json)  # type: ignore[no-untyped-call]
    os.makedirs(os.path.dirname(KERNEL_SOCKETS), exist_ok=True)
    config = Config({"KernelManager": {"transport": "ipc", "ip": KERNEL_SOCKETS}})
    settings = {key: value for key, value in options.items() if key in OPTIONS}
    client = NotebookClient(notebook, config=config, resources={"metadata": {"path": SCRATCH}}, **settings)
    try:
        client.execute()
    except CellTimeoutError as error:
        return {"error": {"kind": "cell-timeout", "message": str(error)}}
    except CellExecutionError as error:
        message = {"traceback": str(error), "ename": error.ename, "evalue": error.evalue}
        return {"error": {"kind": "cell", **message}}
    except (DeadKernelError, RuntimeError) as error:
        return {"error": {"kind": "kernel", "message": f"{type(error).__name__}: {error}"}}
    return {
        "notebook": notebook,
        "chart_specs": chart_files(CHART_CACHE, SPEC_SUFFIX),
        "chart_drawings": chart_files(CHART_CACHE, ".svg"),
    }


def chart_files(folder: str, suffix: str) -> dict[str, str]:
    """The files named ``<key><suffix>`` in the chart cache ``folder``, by key (regular files only)."""
    found = {}
    for entry in os.scandir(folder):
        if entry.name.endswith(suffix) and entry.is_file(follow_symlinks=False):
            with open(entry.path, encoding="utf-8", newline="") as stream:  # byte for byte: hashed
                found[entry.name.removesuffix(suffix)] = stream.read()
    return found


def end_with_the_build() -> None:
    """Exit, ending the sandbox, when the build's end of standard input closes: the build has died.

    The build keeps that pipe open until the execution ends; if the build is killed, nobody is left to
    enforce the time limits, so the sandbox ends itself (its PID 1 then ends every process in it).
    """
    while sys.stdin.buffer.read(65536):
        pass
    os._exit(3)


def main() -> int:
    result = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")  # not inherited by the kernel
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    request = json.loads(sys.stdin.buffer.readline())  # one line; the pipe stays open (see below)
    threading.Thread(target=end_with_the_build, daemon=True).start()
    outcome = execute(request["notebook"], request.get("options", {}))
    json.dump(outcome, result)
    result.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
