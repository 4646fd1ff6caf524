"""Worked notebooks are contributed code: the build executes each one isolated, or not at all.

:func:`execute_notebook` takes a notebook and returns it executed. The execution (nbclient and the Jupyter
kernel it starts) runs in new user, mount, PID, network, IPC and host-name namespaces made by util-linux's
``unshare``, which needs no root and no extra package on Debian (:mod:`.sandbox_init` builds the inside,
:mod:`.sandbox_runner` executes there). The notebook goes in and the executed notebook comes out through a
pipe each; nothing else joins the two sides. Inside, a notebook has:

- no network: a network namespace of its own, whose only interface (loopback) is down;
- no environment of the builder's: :func:`kernel_environment` is all it gets, and ``/proc`` shows only the
  sandbox's own processes (or there is no ``/proc`` at all, where the kernel refuses a new one);
- a read-only view of the system's program folders, the Python environment and the project's code
  (``calculators/``, ``course/``) and nothing else: not the rest of the checkout (``.git``, ``docs/``,
  ``site/``), not the builder's home, not the files beside the repository;
- writable scratch folders in memory (``/sandbox``, ``/tmp``), each with a size limit, gone afterwards;
- no capability (it cannot remount, mount or unshare its way out);
- a time limit per cell (:data:`CELL_TIME_LIMIT_S`), per notebook (:data:`NOTEBOOK_TIME_LIMIT_S`) and for
  all the notebooks of a build together (:data:`BUILD_TIME_LIMIT_S`);
- and an end: when the execution returns, or at a limit, every process it started is killed with its PID
  namespace, so nothing a notebook started outlives it.

Only the outputs of the executed notebook are taken back, onto the notebook as read from the docs (a
notebook cannot change the code the page shows), and they are sanitised as every notebook's are
(:func:`course.notebooks.lesson_notebooks.finish_notebook_page`). So are the specs and drawings its charts
made, which the site serves to its interactive charts: the specs only if they hash to their names, the
drawings apart from the lessons' (:func:`store_chart_specs`, :func:`store_chart_drawings`).

Where the machine allows no user namespaces (Ubuntu 24.04 restricts them by default, Docker's seccomp
profile refuses them), :func:`isolation_problem` says why and :func:`execute_notebook` refuses to run the
notebook, with the fix. The build then shows a notebook only from mkdocs-jupyter's cache (executed in a
sandbox before); any other notebook fails the build with that message. It never runs one open.

:func:`configure_kernel_sandbox` makes mkdocs-jupyter (nbconvert) use :func:`execute_notebook`.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from course.notebooks import sandbox_init, sandbox_runner

# Wall-clock guards against a notebook that hangs, not speed targets. The course's slowest cell (the
# disaggregated notebook's rate searches) takes about 15 s of CPU but ran 100 s on a 2-core machine shared
# with eight other builds, so each limit leaves such a machine about three times room; a notebook in a loop
# still stops within minutes.
CELL_TIME_LIMIT_S = 300
NOTEBOOK_TIME_LIMIT_S = 600
BUILD_TIME_LIMIT_S = 1800  # from the first notebook a build executes; all of them take a few minutes of CPU
RESULT_LIMIT_BYTES = 64 * 1024 * 1024  # the executed notebook as JSON; the course's largest is under 2 MB
ERROR_TAIL_BYTES = 8 * 1024  # of the sandbox's standard error, quoted when it gives no result
PROJECT_CODE = ("calculators", "course")  # what of the checkout a notebook sees (read-only)
# Of /etc, only what the dynamic linker, fonts and Python's standard library read.
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/fonts",
    "/etc/localtime",
    "/etc/mime.types",
)
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
WRITABLE = {"/sandbox": "512m", "/tmp": "256m", "/dev/shm": "64m"}
HOME = "/sandbox/home"
CHART_CACHE = sandbox_runner.CHART_CACHE  # never the build's chart cache, which lessons use (see below)
CHART_SPEC_KEY = re.compile(r"[0-9a-f]{24}")  # calculators.charts.render.spec_key
CHART_SPECS_MOST = 200
UNSHARE = "unshare"
# user ns first: the others are made by the mapped "root" of it. --kill-child: killing unshare (at a time
# limit) kills the sandbox's PID 1, and with it every process in the PID namespace.
NAMESPACES = ("--user", "--map-root-user", "--mount", "--pid", "--net", "--ipc", "--uts")
_LAUNCH_ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


class NotebookNotExecuted(RuntimeError):
    """A notebook was not executed, or not to its end; the message names it, the reason and the fix."""


# ------------------------------------------------------------------------------------------- the inside
def kernel_environment(project_root: str | Path) -> dict[str, str]:
    """All the environment the execution gets inside the sandbox (nbclient, then the kernel)."""
    from calculators.charts.render import CACHE_ENV

    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": HOME,
        "IPYTHONDIR": f"{HOME}/.ipython",
        "JUPYTER_RUNTIME_DIR": f"{HOME}/runtime",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(Path(project_root).resolve()),
        "PYTHONDONTWRITEBYTECODE": "1",
        CACHE_ENV: CHART_CACHE,
    }


def _python_folders(project_root: Path) -> list[str]:
    """The interpreter's and the environment's folders that Python imports from (its prefixes and any
    other ``site-packages``), never the checkout (seen only through PROJECT_CODE, and a virtual environment
    in it) nor a folder holding it."""
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    candidates.add(str(Path(sys.executable).resolve().parent.parent))
    candidates.update(
        entry
        for entry in sys.path
        if Path(entry).name in ("site-packages", "dist-packages") and Path(entry).is_dir()
    )
    folders: list[str] = []
    for candidate in sorted({str(Path(c).resolve()) for c in candidates}, key=len):
        path = Path(candidate)
        if path == project_root or path in project_root.parents or path == Path(path.anchor):
            continue
        if project_root in path.parents and not _is_environment(path):
            continue
        if any(Path(folder) == path or Path(folder) in path.parents for folder in folders):
            continue
        if any(path == Path(system) or Path(system) in path.parents for system in SYSTEM_FOLDERS):
            continue
        folders.append(candidate)
    return folders


def _is_environment(path: Path) -> bool:
    """Whether ``path`` is (inside) the running virtual environment, which may live in the checkout."""
    prefix = Path(sys.prefix).resolve()
    return path == prefix or prefix in path.parents


def sandbox_layout(project_root: str | Path, command: list[str], scratch: Path) -> dict[str, Any]:
    """The configuration :mod:`.sandbox_init` builds the sandbox from (its root is mounted at ``scratch``)."""
    root = Path(project_root).resolve()
    symlinks = {name: os.readlink(name) for name in SYSTEM_FOLDERS if os.path.islink(name)}
    system = [name for name in SYSTEM_FOLDERS if os.path.isdir(name) and name not in symlinks]
    code = [str(root / name) for name in PROJECT_CODE]
    return {
        "root": str(scratch),
        "symlinks": symlinks,
        "read_only": system + list(ETC_FILES) + _python_folders(root) + code,
        "writable": WRITABLE,
        "folders": [HOME, CHART_CACHE, sandbox_runner.SCRATCH],
        "environment": kernel_environment(root),
        "cwd": sandbox_runner.SCRATCH,
        "command": command,
    }


def sandbox_command(layout: dict[str, Any]) -> list[str]:
    """The command line that runs ``layout``'s command in the sandbox."""
    unshare = shutil.which(UNSHARE, path="/usr/bin:/bin:/usr/sbin:/sbin") or UNSHARE
    init = [sys.executable, "-I", "-S", sandbox_init.__file__, json.dumps(layout)]
    return [unshare, *NAMESPACES, "--fork", "--kill-child", "--", *init]


# ---------------------------------------------------------------------------------- is isolation possible
FIX = (
    "Fix: allow unprivileged user namespaces (Ubuntu 24.04: `sudo sysctl -w "
    "kernel.apparmor_restrict_unprivileged_userns=0`; Debian 10: `sudo sysctl -w "
    "kernel.unprivileged_userns_clone=1`; a Docker container: `--security-opt seccomp=unconfined "
    "--security-opt apparmor=unconfined`), or build on a machine that allows them"
)


@functools.cache
def isolation_problem(project_root: str | Path = ".") -> str | None:
    """Why notebooks cannot be executed isolated on this machine, or None if they can (asked once)."""
    if sys.platform != "linux":
        return f"the sandbox needs Linux namespaces, and this is {sys.platform}"
    if shutil.which(UNSHARE, path="/usr/bin:/bin:/usr/sbin:/sbin") is None:
        return "util-linux's `unshare` is not installed (`apt-get install util-linux`)"
    with tempfile.TemporaryDirectory(prefix="ridgepoint-sandbox-") as scratch:
        layout = sandbox_layout(project_root, [sys.executable, "-I", "-S", "-c", "pass"], Path(scratch))
        try:
            probe = subprocess.run(
                sandbox_command(layout),
                capture_output=True,
                text=True,
                env=_LAUNCH_ENVIRONMENT,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"the sandbox did not start ({error})"
    if probe.returncode != 0:
        said = " ".join(probe.stderr.split())[-300:] or f"exit status {probe.returncode}"
        return f"the sandbox did not start ({said})"
    return None


# ------------------------------------------------------------------------------------------- one notebook
def execute_notebook(
    notebook: Any,
    name: str,
    project_root: str | Path,
    *,
    options: dict[str, Any] | None = None,
    cell_limit_s: float = CELL_TIME_LIMIT_S,
    notebook_limit_s: float = NOTEBOOK_TIME_LIMIT_S,
    deadline: float | None = None,
) -> Any:
    """``notebook`` (nbformat v4) executed in the sandbox: a copy with each code cell's outputs.

    ``name`` says which notebook it is in messages (e.g. its path under docs/). ``options``: nbclient's
    ``kernel_name``, ``allow_errors`` and ``store_widget_state``. ``deadline``: a ``time.monotonic()`` by
    which it must have ended (the build's limit). Raises nbclient's ``CellExecutionError`` when a cell
    fails (as an execution in the build's process would) and :class:`NotebookNotExecuted` otherwise.
    """
    problem = isolation_problem(project_root)
    if problem is not None:
        raise NotebookNotExecuted(
            f"{name} was not executed: notebooks are contributed code, which the build runs only isolated "
            f"(user, mount, PID and network namespaces through util-linux's unshare), and {problem}. {FIX}. "
            "A notebook executed before (mkdocs-jupyter's cache) is still shown without running it."
        )
    limit_s, limit_name = float(notebook_limit_s), f"{notebook_limit_s:g} s, the limit for one notebook"
    if deadline is not None and deadline - time.monotonic() < limit_s:
        limit_s = deadline - time.monotonic()
        limit_name = f"the {BUILD_TIME_LIMIT_S:g} s that all the notebooks of one build may take together"
    if limit_s <= 0:
        raise NotebookNotExecuted(f"{name} was not executed: the build's notebooks already ran {limit_name}")
    request = {
        "notebook": notebook,
        "options": {**(options or {}), "timeout": int(cell_limit_s)},
    }
    with tempfile.TemporaryDirectory(prefix="ridgepoint-sandbox-") as scratch:
        command = [sys.executable, "-m", "course.notebooks.sandbox_runner"]
        layout = sandbox_layout(project_root, command, Path(scratch))
        returncode, stdout, stderr, timed_out = _run(sandbox_command(layout), json.dumps(request), limit_s)
    if timed_out:
        raise NotebookNotExecuted(
            f"{name} was stopped after {limit_name}, with every process it started. Fix: make it faster "
            "(the course's notebooks each take seconds); a notebook shows a derivation, it runs no experiment"
        )
    return _executed(notebook, name, returncode, stdout, stderr, cell_limit_s)


def _executed(
    notebook: Any, name: str, returncode: int, stdout: bytes, stderr: str, cell_limit_s: float
) -> Any:
    """The original notebook with the outputs of the sandbox's result, or the error it reports."""
    from nbclient.exceptions import CellExecutionError

    if len(stdout) > RESULT_LIMIT_BYTES:
        raise NotebookNotExecuted(
            f"{name}: its executed notebook is larger than {RESULT_LIMIT_BYTES // 2**20} MB, so it was "
            "dropped. Fix: print less (a summary table, a chart)"
        )
    try:
        result = json.loads(stdout)
    except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than Python's stack
        raise NotebookNotExecuted(
            f"{name}: the sandbox gave no result (exit status {returncode}).\n{_quoted(stderr)}"
        ) from None
    error = result.get("error") if isinstance(result, dict) else None
    if isinstance(error, dict) and error.get("kind") == "cell":
        raise CellExecutionError(
            str(error.get("traceback")), str(error.get("ename")), str(error.get("evalue"))
        )
    if isinstance(error, dict) and error.get("kind") == "cell-timeout":
        raise NotebookNotExecuted(
            f"{name}: a code cell ran longer than {cell_limit_s:g} s, the limit for one cell, and was "
            f"stopped with the notebook. Fix: make it faster.\n{_quoted(str(error.get('message')))}"
        )
    if error is not None or not isinstance(result, dict) or not isinstance(result.get("notebook"), dict):
        said = error.get("message") if isinstance(error, dict) else "no notebook"
        raise NotebookNotExecuted(f"{name}: the execution failed: {said}.\n{_quoted(stderr)}")
    executed = with_outputs(notebook, result["notebook"], name)
    store_chart_specs(result.get("chart_specs"), name)
    store_chart_drawings(result.get("chart_drawings"), name)
    return executed


def store_chart_drawings(drawings: Any, name: str, cache_dir: Path | None = None) -> list[str]:
    """Keep the SVG drawings a notebook's charts made, for the wide drawings its page fetches; returns
    their SHA-256.

    They go apart from the lessons' drawings, named by their SHA-256
    (:data:`course.charts.assets.NOTEBOOK_DRAWINGS`), so no lesson reads one and a page gets one only by
    naming its hash; the page and the drawing both come from the notebook, as any notebook output does.
    """
    import hashlib

    from calculators.charts.render import default_cache_dir, write_atomically
    from course.charts.assets import NOTEBOOK_DRAWINGS

    if drawings is None:
        return []
    valid = isinstance(drawings, dict) and len(drawings) <= CHART_SPECS_MOST
    if not valid or not all(isinstance(svg, str) for svg in drawings.values()):
        raise NotebookNotExecuted(f"{name}: the sandbox returned chart drawings that are not drawings")
    folder = (cache_dir if cache_dir is not None else default_cache_dir()) / NOTEBOOK_DRAWINGS
    kept = []
    for svg in drawings.values():
        digest = hashlib.sha256(svg.encode("utf-8")).hexdigest()
        target = folder / f"{digest}.svg"
        if not target.exists():
            write_atomically(target, svg)
        kept.append(digest)
    return kept


def store_chart_specs(specs: Any, name: str, cache_dir: Path | None = None) -> list[str]:
    """Keep the Vega-Lite specs a notebook's charts wrote in the build's chart cache; returns their keys.

    A notebook's chart fetches its spec from the site when it turns interactive, and the build copies each
    referenced spec from its chart cache (``course.charts.assets.copy_into``). The sandbox's cache is its
    own, so its specs come back with the result. They are content-addressed: a spec is kept only if it
    hashes to its key (:func:`calculators.charts.render.spec_key`, with or without Altair's ``$schema``,
    which the stored spec leaves out), so a notebook cannot put another chart's spec under a lesson
    chart's key; and an existing entry is never written again.
    """
    import altair

    from calculators.charts.render import default_cache_dir, served_spec, spec_key, write_atomically

    if specs is None:
        return []
    if not isinstance(specs, dict) or len(specs) > CHART_SPECS_MOST:
        raise NotebookNotExecuted(f"{name}: the sandbox returned more chart specs than charts can make")
    folder = cache_dir if cache_dir is not None else default_cache_dir()
    kept = []
    for key, text in specs.items():
        spec = _json_object(text)
        try:
            hashes = (spec_key(spec), spec_key({**spec, "$schema": altair.SCHEMA_URL})) if spec else ()
        except ValueError:  # NaN, which JSON for the browser cannot hold
            hashes = ()
        if not isinstance(text, str) or not CHART_SPEC_KEY.fullmatch(str(key)) or key not in hashes:
            raise NotebookNotExecuted(
                f"{name}: the sandbox returned a chart spec whose content does not match its name "
                f"{str(key)[:40]!r}; a notebook's charts are drawn by enable_course_charts, not by hand"
            )
        target = folder / f"{key}.vl.json"
        if spec and not target.exists():
            write_atomically(target, served_spec(spec))
        kept.append(key)
    return kept


def with_outputs(notebook: Any, executed: Any, name: str) -> Any:
    """A copy of ``notebook`` with the outputs and execution counts of ``executed``, cell by cell.

    The code, the Markdown and the metadata stay those read from the docs: the sandbox's answer is trusted
    for outputs only, which are sanitised like any notebook's.
    """
    import nbformat

    cells = executed.get("cells")
    if not isinstance(cells, list) or len(cells) != len(notebook.cells):
        raise NotebookNotExecuted(f"{name}: the executed notebook does not have the notebook's cells")
    merged = copy.deepcopy(notebook)
    for cell, done in zip(merged.cells, cells, strict=True):
        if not isinstance(done, dict) or done.get("cell_type") != cell.cell_type:
            raise NotebookNotExecuted(f"{name}: the executed notebook does not have the notebook's cells")
        if cell.cell_type == "code":
            outputs = done.get("outputs", [])
            if not isinstance(outputs, list) or not all(isinstance(output, dict) for output in outputs):
                raise NotebookNotExecuted(f"{name}: the executed notebook's outputs are not outputs")
            cell.outputs = [nbformat.from_dict(output) for output in outputs]  # type: ignore[no-untyped-call]
            count = done.get("execution_count")
            cell.execution_count = count if isinstance(count, int) else None
    try:
        nbformat.validate(merged)
    except nbformat.ValidationError as error:
        raise NotebookNotExecuted(f"{name}: the executed notebook is not valid ({error.message})") from None
    except RecursionError:
        raise NotebookNotExecuted(f"{name}: the executed notebook's outputs are nested too deep") from None
    return merged


def _json_object(text: Any) -> dict[str, Any] | None:
    """``text`` parsed, if it is a JSON object."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _quoted(text: str) -> str:
    """Text from inside the sandbox, fit for a build log: printable, each line indented (so no line can
    start a CI runner's command, such as GitHub's ``::``)."""
    printable = re.sub(r"[^\S\n]|[\x00-\x08\x0b-\x1f\x7f]", " ", text)
    return "\n".join(f"    | {line}" for line in printable.strip().splitlines()[-40:])


def _run(command: list[str], request: str, limit_s: float) -> tuple[int, bytes, str, bool]:
    """Run the sandbox: send ``request``, read its result (bounded) and the end of its standard error."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_LAUNCH_ENVIRONMENT,
        start_new_session=True,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    stdout: list[bytes] = []
    stderr: list[bytes] = []
    readers = [
        threading.Thread(target=_send, args=(process.stdin, request.encode() + b"\n"), daemon=True),
        threading.Thread(
            target=_read, args=(process.stdout, stdout, RESULT_LIMIT_BYTES + 1, False), daemon=True
        ),
        threading.Thread(target=_read, args=(process.stderr, stderr, ERROR_TAIL_BYTES, True), daemon=True),
    ]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        process.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        if process.poll() is None:
            _end(process)
    for reader in readers:
        reader.join(timeout=10)
    for stream in (process.stdin, process.stdout, process.stderr):
        with contextlib.suppress(OSError):  # stdin's unsent rest, if the sandbox ended before reading it
            stream.close()
    output = b"".join(stdout)
    return process.returncode, output, b"".join(stderr).decode("utf-8", "replace"), timed_out


def _end(process: subprocess.Popen[bytes]) -> None:
    """Kill the sandbox and return once every process in it has ended.

    Killed, the sandbox's PID 1 takes every process of its PID namespace with it, and only then can
    ``unshare`` (which waits for it) end. Killing ``unshare`` instead would also end them (``--kill-child``),
    but a moment after this function returned.
    """
    for init in _children(process.pid):
        with contextlib.suppress(OSError):
            os.kill(init, signal.SIGKILL)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:  # after "pid (comm) state": the parent
                children.append(int(entry.name))
    return children


def _send(stream: IO[bytes], data: bytes) -> None:
    """Write ``data`` and keep the pipe open: the sandbox ends itself if it closes before its end (the
    build died: see :func:`.sandbox_runner.end_with_the_build`)."""
    try:
        stream.write(data)
        stream.flush()
    except OSError:
        pass  # the sandbox ended before reading it all; its exit status says why


def _read(stream: IO[bytes], into: list[bytes], most: int, keep_end: bool) -> None:
    """Read ``stream`` to its end, keeping at most ``most`` bytes: the first ones, or the last ones."""
    kept = 0
    while chunk := stream.read1(65536):  # type: ignore[attr-defined]
        if keep_end:
            into.append(chunk)
            kept += len(chunk)
            while kept - len(into[0]) >= most:
                kept -= len(into.pop(0))
        elif kept < most:
            into.append(chunk[: most - kept])
            kept += len(into[-1])


# --------------------------------------------------------------------------------------- one build's limit
_BUILD: dict[str, float | None] = {"started": None}  # the build's first execution (time.monotonic())
_BUILD_LOCK = threading.Lock()


def start_build() -> None:
    """A new build: its notebooks share :data:`BUILD_TIME_LIMIT_S` from the first one executed."""
    with _BUILD_LOCK:
        _BUILD["started"] = None


def build_deadline() -> float:
    """When the current build's notebooks must all have ended (starting the clock at the first call)."""
    with _BUILD_LOCK:
        started = _BUILD["started"]
        if started is None:
            started = _BUILD["started"] = time.monotonic()
    return started + BUILD_TIME_LIMIT_S


# --------------------------------------------------------------------------------- mkdocs-jupyter's wiring
_NOTEBOOK_NAME: contextvars.ContextVar[str] = contextvars.ContextVar("notebook_name", default="a notebook")


@contextmanager
def naming(name: str) -> Iterator[None]:
    """Name the notebook that executions in this context belong to (for messages)."""
    token = _NOTEBOOK_NAME.set(name)
    try:
        yield
    finally:
        _NOTEBOOK_NAME.reset(token)


def isolated_execute_preprocessor(project_root: str | Path) -> type:
    """An nbconvert preprocessor that executes the notebook with :func:`execute_notebook`."""
    from mkdocs.exceptions import PluginError
    from nbconvert.preprocessors import Preprocessor
    from traitlets import Bool, Unicode

    class IsolatedExecutePreprocessor(Preprocessor):
        kernel_name = Unicode("").tag(config=True)
        allow_errors = Bool(False).tag(config=True)

        def preprocess(self, nb: Any, resources: Any) -> tuple[Any, Any]:
            options = {"kernel_name": self.kernel_name, "allow_errors": self.allow_errors}
            try:
                executed = execute_notebook(
                    nb, _NOTEBOOK_NAME.get(), project_root, options=options, deadline=build_deadline()
                )
            except NotebookNotExecuted as error:
                raise PluginError(str(error)) from None
            return executed, resources

    return IsolatedExecutePreprocessor


STOCK_EXECUTOR = "nbconvert.preprocessors.ExecutePreprocessor"


def configure_kernel_sandbox(project_root: str | Path) -> None:
    """Make mkdocs-jupyter execute notebooks with :func:`execute_notebook`, never in the build's process.

    mkdocs-jupyter enables nbconvert's ``ExecutePreprocessor`` in the configuration it builds for each
    notebook; that one stays disabled, and the exporter's default preprocessors list ours in its place, with
    its settings. The converter is patched as it is loaded, before any use
    (:mod:`course.notebooks.deferred_converter`: a warm build converts nothing, and loads none of it). Also
    starts a new build's time limit (:func:`start_build`).
    """
    from course.notebooks.deferred_converter import when_loaded

    start_build()
    root = Path(project_root).resolve()
    when_loaded("kernel sandbox", lambda: _patch_converter(root))


def _patch_converter(root: Path) -> None:
    """Patch mkdocs-jupyter's converter to execute with :func:`execute_notebook` (see above)."""
    from mkdocs_jupyter import convert, nbconvert2
    from nbconvert.exporters import Exporter
    from traitlets.config import Config

    original_app = getattr(nbconvert2.get_nbconvert_app, "__wrapped__", nbconvert2.get_nbconvert_app)
    original_html = getattr(convert.nb2html, "__wrapped__", convert.nb2html)
    preprocessor = isolated_execute_preprocessor(root)
    defaults = Exporter.class_traits()["default_preprocessors"].default() or []
    preprocessors = [preprocessor if entry == STOCK_EXECUTOR else entry for entry in defaults]

    def get_nbconvert_app(*args: Any, **kwargs: Any) -> Any:
        app = original_app(*args, **kwargs)
        stock = app.config["ExecutePreprocessor"]  # mkdocs-jupyter set it as a plain dict
        app.config["IsolatedExecutePreprocessor"] = Config(
            enabled=bool(stock.get("enabled")),
            kernel_name=stock.get("kernel_name") or "",
            allow_errors=bool(stock.get("allow_errors")),
        )
        stock["enabled"] = False  # never executes anything in the build's process
        app.config["Exporter"] = Config(app.config.get("Exporter", {}), default_preprocessors=preprocessors)
        return app

    def nb2html(nb_path: str, *args: Any, **kwargs: Any) -> Any:
        path = Path(nb_path).resolve()
        with naming(str(path.relative_to(root)) if root in path.parents else str(nb_path)):
            return original_html(nb_path, *args, **kwargs)

    get_nbconvert_app.__wrapped__ = original_app  # type: ignore[attr-defined]
    nb2html.__wrapped__ = original_html  # type: ignore[attr-defined]
    nbconvert2.get_nbconvert_app = get_nbconvert_app
    convert.nb2html = nb2html  # the plugin calls convert.nb2html (nbconvert2's, imported with *)
