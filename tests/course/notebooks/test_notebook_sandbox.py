"""Worked notebooks execute isolated: a hostile notebook finds no secret, no network, no source file to
write, no moment after its execution, and no end-less run; where isolation is impossible it is not run.

Each hostile notebook is built here in a temporary folder and executed through
:func:`course.notebooks.sandbox.execute_notebook` (the function the build uses), or built into a fixture
site. The canaries (a fake secret in the builder's environment, in a file beside the repository and in a
file in a temporary folder) must appear nowhere in what comes back.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from course.notebooks import sandbox
from course.notebooks.sandbox import NotebookNotExecuted, execute_notebook, isolation_problem
from tests.conftest import BUILD_ENV, ROOT, TESTS

SECRET = "ridgepoint-canary-" + uuid.uuid4().hex  # in the builder's environment and in files
SECRET_VARIABLE = "RIDGEPOINT_FAKE_DEPLOY_TOKEN"
NO_ISOLATION = isolation_problem(ROOT)
needs_isolation = pytest.mark.skipif(NO_ISOLATION is not None, reason=f"no sandbox here: {NO_ISOLATION}")

# What a hostile notebook reads, wherever a secret of the builder's could be: every process's environment
# it can see (/proc/1 and its parent's included), its own, and the canary files named in CANARY_FILES.
READ_EVERYTHING = """
import glob, os
found = {"environ": dict(os.environ)}
for path in ["/proc/1/environ", f"/proc/{os.getppid()}/environ", *glob.glob("/proc/*/environ")]:
    try:
        found[path] = open(path, "rb").read().decode("utf-8", "replace")
    except OSError as error:
        found[path] = repr(error)
for path in CANARY_FILES:
    try:
        found[path] = open(path, encoding="utf-8").read()
    except OSError as error:
        found[path] = repr(error)
print("read:", found)
"""


def _notebook(*cells: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in cells])


def _text(notebook: nbformat.NotebookNode) -> str:
    """Everything the executed notebook holds, as one text (to look for a secret in)."""
    return json.dumps(notebook)


def _printed(notebook: nbformat.NotebookNode) -> str:
    """What the notebook's cells printed."""
    return "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))


def _processes_with(marker: str) -> list[int]:
    """The processes of this machine whose command line holds ``marker`` (this test's own left out)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.fixture
def canary_files(tmp_path: Path) -> Iterator[list[Path]]:
    """The secret in a file beside the repository and in one in a temporary folder, removed afterwards."""
    beside = ROOT.parent / f"ridgepoint-canary-{uuid.uuid4().hex}.txt"
    elsewhere = tmp_path / "deploy-key.txt"
    for file in (beside, elsewhere):
        file.write_text(SECRET, encoding="utf-8")
    try:
        yield [beside, elsewhere]
    finally:
        beside.unlink(missing_ok=True)


@needs_isolation
def test_a_notebook_finds_no_secret_of_the_builder(
    monkeypatch: pytest.MonkeyPatch, canary_files: list[Path]
) -> None:
    monkeypatch.setenv(SECRET_VARIABLE, SECRET)
    code = f"CANARY_FILES = {[str(file) for file in canary_files]!r}\n" + READ_EVERYTHING
    executed = execute_notebook(
        _notebook(code, f"print(os.environ.get({SECRET_VARIABLE!r}))"), "hostile", ROOT
    )
    text = _text(executed)
    assert "read:" in _printed(executed)  # it ran
    assert "/proc/1/environ" in text  # and read what it could
    assert SECRET not in text


@needs_isolation
def test_a_notebook_sees_only_its_own_processes_and_has_no_capability() -> None:
    code = (
        "import os\n"
        "pids = [p for p in os.listdir('/proc') if p.isdigit()] if os.path.isdir('/proc') else []\n"
        "print('commands:', [open(f'/proc/{p}/cmdline', 'rb').read() for p in pids])\n"
        "print(*[line for line in open('/proc/self/status') if line.startswith('CapEff')])"
    )
    printed = _printed(execute_notebook(_notebook(code), "hostile", ROOT))
    assert "commands:" in printed
    assert "pytest" not in printed  # this test's process, among others, is out of sight
    assert "CapEff:\t0000000000000000" in printed  # no capability, even as the namespace's "root"


@needs_isolation
def test_a_notebook_reaches_no_network() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    code = (
        "import socket\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5)\n    print('connected')\n"
        "except OSError as error:\n    print('refused:', error)"
    )
    try:
        printed = _printed(execute_notebook(_notebook(code), "hostile", ROOT))
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected to the builder's loopback
    finally:
        listener.close()
    assert "refused:" in printed


@needs_isolation
def test_a_notebook_writes_nothing_outside_its_scratch_folder(tmp_path: Path) -> None:
    name = f"hostile-{uuid.uuid4().hex}"
    site = tmp_path / "site"
    site.mkdir()
    targets = [
        ROOT / "course" / f"{name}.py",  # the source tree
        ROOT / "docs" / f"{name}.md",
        ROOT / "overrides" / "assets" / "ridgepoint" / f"{name}.js",  # what MkDocs copies into the site
        site / "index.html",  # the site being built
        ROOT / f"{name}.txt",
    ]
    code = (
        f"import os\nfor path in {[str(t) for t in targets]!r}:\n"
        "    try:\n        open(path, 'w').write('<script>alert(1)</script>')\n        print('wrote', path)\n"
        "    except OSError as error:\n        print('refused', path, error)\n"
        "open('scratch.txt', 'w').write('a notebook may write its own scratch folder')\n"
        "print(open('scratch.txt').read())"
    )
    try:
        printed = _printed(execute_notebook(_notebook(code), "hostile", ROOT))
        assert "a notebook may write its own scratch folder" in printed
        assert [target for target in targets if target.exists()] == []
    finally:
        for target in targets:
            target.unlink(missing_ok=True)


@needs_isolation
def test_nothing_a_notebook_started_outlives_its_execution(tmp_path: Path) -> None:
    marker = f"ridgepoint-late-writer-{uuid.uuid4().hex}"
    late = tmp_path / "late.html"
    writer = f"import time; time.sleep(30); open({str(late)!r}, 'w').write('late')  # {marker}"
    code = (
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', {writer!r}], start_new_session=True)\n"
        "print('started')"
    )
    try:
        assert "started" in _printed(execute_notebook(_notebook(code), "hostile", ROOT))
        assert _processes_with(marker) == []  # ended with the sandbox, though it left its session
    finally:
        for pid in _processes_with(marker):
            os.kill(pid, 9)


def _wait_until(condition: Any, limit_s: float) -> bool:
    """Whether ``condition()`` became true within ``limit_s`` (checked five times a second)."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


@needs_isolation
def test_a_killed_build_leaves_no_notebook_running() -> None:
    marker = f"ridgepoint-orphan-{uuid.uuid4().hex}"
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)  # {marker}'])\n"
        "while True:\n    time.sleep(1)"
    )
    build = (
        "import nbformat, sys\n"
        "from course.notebooks.sandbox import execute_notebook\n"
        f"notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell({code!r})])\n"
        f"execute_notebook(notebook, 'endless', {str(ROOT)!r})"
    )
    builder = subprocess.Popen([sys.executable, "-c", build], cwd=ROOT)
    try:
        assert _wait_until(lambda: _processes_with(marker), 120), "the notebook never started"
        builder.kill()  # as a build killed by its CI job's timeout, or by the out-of-memory killer
        builder.wait()
        assert _wait_until(lambda: not _processes_with(marker), 60), "the notebook outlived its build"
    finally:
        builder.kill()
        builder.wait()
        for pid in _processes_with(marker):
            os.kill(pid, 9)


@needs_isolation
def test_a_notebook_that_never_ends_is_stopped_at_the_notebook_limit() -> None:
    marker = f"ridgepoint-endless-{uuid.uuid4().hex}"
    code = (
        f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'while True: pass  # {marker}'])\n"
    )
    with pytest.raises(NotebookNotExecuted) as stopped:
        execute_notebook(
            _notebook(code + "while True:\n    pass"), "docs/x/notebooks/endless.py", ROOT, notebook_limit_s=4
        )
    assert str(stopped.value).startswith(
        "docs/x/notebooks/endless.py was stopped after 4 s, the limit for one"
    )
    assert _processes_with(marker) == []


@needs_isolation
def test_a_cell_that_never_ends_is_stopped_at_the_cell_limit() -> None:
    with pytest.raises(NotebookNotExecuted) as stopped:
        execute_notebook(_notebook("while True:\n    pass"), "endless", ROOT, cell_limit_s=2)
    assert "endless: a code cell ran longer than 2 s, the limit for one cell" in str(stopped.value)


def test_the_build_refuses_to_run_notebooks_where_there_is_no_isolation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sandbox, "UNSHARE", "ridgepoint-no-such-unshare")
    isolation_problem.cache_clear()
    ran = tmp_path / "ran"
    try:
        with pytest.raises(NotebookNotExecuted) as refused:
            execute_notebook(_notebook(f"open({str(ran)!r}, 'w')"), "docs/x/notebooks/n.py", ROOT)
    finally:
        isolation_problem.cache_clear()
    message = str(refused.value)
    assert message.startswith("docs/x/notebooks/n.py was not executed: notebooks are contributed code")
    assert "`unshare` is not installed" in message
    assert "kernel.apparmor_restrict_unprivileged_userns=0" in message  # the fix
    assert not ran.exists()


def test_a_result_cannot_change_the_notebooks_code() -> None:
    notebook = _notebook("print(1)")
    forged = _notebook("import os; os.system('rm -rf /')")
    forged.cells[0].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    merged = sandbox.with_outputs(notebook, json.loads(json.dumps(forged)), "n")
    assert merged.cells[0].source == "print(1)"
    assert merged.cells[0].outputs[0]["text"] == "1\n"
    with pytest.raises(NotebookNotExecuted, match="does not have the notebook's cells"):
        sandbox.with_outputs(notebook, json.loads(json.dumps(_notebook("1", "2"))), "n")


def test_text_from_the_sandbox_cannot_start_a_ci_command_in_the_log() -> None:
    quoted = sandbox._quoted("::add-mask::x\n\x1b[31mred\x1b[0m\n::error::forged")
    assert all(line.startswith("    | ") for line in quoted.splitlines())
    assert "\x1b" not in quoted


# ------------------------------------------------------------------------------------- build-side canaries
HOSTILE_NOTEBOOK = """# ---
# jupyter:
#   ridgepoint:
#     lesson: fixture-lesson
# ---

# %% [markdown]
# # A notebook that looks for the builder's secrets

# %%
CANARY_FILES = {files!r}
{read_everything}

# %%
import subprocess, sys
for path in {targets!r}:
    try:
        with open(path, "a") as stream:
            stream.write("<scr" + "ipt>alert(1)</scr" + "ipt>")  # written so, it passes `check`
    except OSError as error:
        print("refused", path, error)
subprocess.Popen([sys.executable, "-c", {writer!r}], start_new_session=True)
"""


def _fixture_site(destination: Path, notebook: str) -> Path:
    """The notebook fixture site (tests/fixtures/notebook_site) with ``notebook`` as its only notebook."""
    fixture = TESTS / "fixtures" / "notebook_site"
    docs = destination / "docs"
    for source in (fixture / "docs").rglob("*"):
        if source.is_file():
            target = docs / source.relative_to(fixture / "docs")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    (docs / "fixture" / "notebooks" / "broken-cell.py").write_text(notebook, encoding="utf-8")
    config = destination / "mkdocs.yml"
    config.write_text(
        f"INHERIT: {ROOT / 'mkdocs.yml'}\nsite_name: Ridgepoint sandbox fixture\ndocs_dir: docs\n"
        f"theme:\n  custom_dir: {ROOT / 'overrides'}\nhooks:\n  - {ROOT / 'course' / 'mkdocs_hooks.py'}\n"
        f"watch:\n  - {ROOT / 'calculators'}\n",
        encoding="utf-8",
    )
    return config


@pytest.mark.site
@needs_isolation
def test_a_hostile_notebook_publishes_no_secret_and_writes_nothing(
    tmp_path: Path, canary_files: list[Path]
) -> None:
    site = tmp_path / "site"
    marker = f"ridgepoint-late-writer-{uuid.uuid4().hex}"
    scripts = sorted((ROOT / "overrides" / "assets" / "ridgepoint").glob("*.js"))
    before = {script: script.read_bytes() for script in scripts}
    writer = f"import time; time.sleep(30); open({str(site / 'late.html')!r}, 'w').write('late')  # {marker}"
    notebook = HOSTILE_NOTEBOOK.format(
        files=[str(file) for file in canary_files],
        read_everything=READ_EVERYTHING,
        targets=[str(script) for script in scripts] + [str(site / "index.html")],
        writer=writer,
    )
    env = {SECRET_VARIABLE: SECRET, "RIDGEPOINT_NOTEBOOK_CACHE": str(tmp_path / "notebook-cache")}
    try:
        result = _build(site, _fixture_site(tmp_path / "project", notebook), env)
        assert result.returncode == 0, result.stdout + result.stderr
        page = (site / "fixture" / "notebooks" / "broken-cell" / "index.html").read_text(encoding="utf-8")
        assert "/proc/1/environ" in page  # the notebook ran and its outputs are on the page
        published = [
            path for path in site.rglob("*") if path.is_file() and SECRET.encode() in path.read_bytes()
        ]
        assert published == []
        assert {script: script.read_bytes() for script in scripts} == before
        assert _processes_with(marker) == []
        assert not (site / "late.html").exists()
    finally:
        for pid in _processes_with(marker):
            os.kill(pid, 9)


def _build(site: Path, config: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)]
    environment: dict[str, Any] = {**BUILD_ENV, **env}
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=environment, check=False)


def test_the_build_executes_notebooks_only_through_the_sandbox() -> None:
    from mkdocs_jupyter import nbconvert2
    from nbconvert.exporters.html import HTMLExporter
    from nbconvert.preprocessors import ExecutePreprocessor

    sandbox.configure_kernel_sandbox(ROOT)
    app = nbconvert2.get_nbconvert_app(execute=True, allow_errors=False)  # as mkdocs-jupyter asks for it
    enabled = [p for p in HTMLExporter(config=app.config)._preprocessors if p.enabled]
    assert not [p for p in enabled if isinstance(p, ExecutePreprocessor)]  # nbconvert's, in this process
    assert [type(p).__name__ for p in enabled if "Execute" in type(p).__name__] == [
        "IsolatedExecutePreprocessor"
    ]


def test_a_forged_result_is_refused_with_a_message_not_a_traceback() -> None:
    notebook = _notebook("print(1)")
    for stdout in (b"[" * 100_000, b'{"notebook": {"cells": [{"cell_type": "code", "outputs": 3}]}}'):
        with pytest.raises(NotebookNotExecuted, match=r"^n: "):
            sandbox._executed(notebook, "n", 0, stdout, "", 120)


def test_only_chart_specs_that_hash_to_their_key_reach_the_builds_chart_cache(tmp_path: Path) -> None:
    import altair as alt

    from calculators.charts.render import served_spec, spec_key

    spec = alt.Chart(alt.Data(values=[{"x": 1}])).mark_point().encode(x="x:Q").to_dict()  # type: ignore[no-untyped-call]
    key = spec_key(spec)
    assert sandbox.store_chart_specs({key: served_spec(spec)}, "n", tmp_path) == [key]
    assert json.loads((tmp_path / f"{key}.vl.json").read_text(encoding="utf-8"))["mark"] == {"type": "point"}
    lesson_key = "0" * 24  # a lesson chart's key, say: another spec under it is refused
    for forged in ({lesson_key: served_spec(spec)}, {"../../x": served_spec(spec)}, {key: "[" * 100_000}):
        with pytest.raises(NotebookNotExecuted, match="does not match its name"):
            sandbox.store_chart_specs(forged, "n", tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == [f"{key}.vl.json"]


def test_a_notebooks_drawings_never_replace_a_lessons_and_are_served_only_by_their_hash(
    tmp_path: Path,
) -> None:
    import hashlib

    from course.charts.assets import wide_drawing

    key = "0" * 24  # a lesson chart's key, whose drawing the lessons inline as our own markup
    lesson = '<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0"/></svg>'
    (tmp_path / f"{key}.svg").write_text(lesson, encoding="utf-8")
    forged = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'
    [digest] = sandbox.store_chart_drawings({key: forged}, "n", tmp_path)
    assert (tmp_path / f"{key}.svg").read_text(encoding="utf-8") == lesson
    assert digest == hashlib.sha256(forged.encode()).hexdigest()
    assert wide_drawing(digest, key, tmp_path) == forged.encode()  # only to a page that names its hash
    lesson_digest = hashlib.sha256(lesson.encode()).hexdigest()
    assert wide_drawing(lesson_digest, key, tmp_path) == lesson.encode()


def test_a_checkout_under_tmp_stays_visible_in_the_sandbox(tmp_path: Path) -> None:
    """A checkout (and its environment) under /tmp, as a fresh clone in a temporary folder has it, is bound
    onto the sandbox's own /tmp: the scratch /tmp mounted after the binds hid it and no notebook ran."""
    assert str(tmp_path.resolve()).startswith("/tmp/")  # pytest's folders are where such a clone would be
    code = tmp_path / "code"
    code.mkdir()
    (code / "marker.txt").write_text("visible", encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="ridgepoint-sandbox-") as scratch:
        layout = sandbox.sandbox_layout(ROOT, [], Path(scratch))
        read = f"print(open({str(code / 'marker.txt')!r}).read())"
        layout["command"] = [sys.executable, "-I", "-S", "-c", read]
        layout["read_only"] = [*layout["read_only"], str(code)]
        command = sandbox.sandbox_command(layout)
        environment = sandbox._LAUNCH_ENVIRONMENT
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=environment)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "visible"
