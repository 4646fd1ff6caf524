"""Every command the README, CONTRIBUTING.md and the contributor guide show is one that works.

A newcomer copies these lines first; one that fails (a renamed flag, a session that no longer exists, an
example that exits 2) is the worst possible welcome. The commands are read from the documents themselves,
so a new example is covered the day it is written:

- ``python3 -m calculators ...`` runs in-process and must exit 0 (with ``--json``, print valid JSON);
- ``python3 dev.py SESSION -- ARGS`` must name a nox session of ``noxfile.py``; where the session hands its
  arguments to one of our modules (``new_lesson``, ``check``, ``cli``), that module runs them, against a copy
  of docs/ where it writes; where they go to pytest, every ``-m`` marker must be registered.

Building, serving and the PDF are what the site, browser and PDF tests already run; here only their
session names are checked, so this file stays fast.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import shutil
import tomllib
from pathlib import Path

import pytest

from calculators.cli import main as calculators_main
from course.lesson_format.check import main as check_main
from course.lesson_format.scaffold import main as scaffold_main
from tests.conftest import ROOT

DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    *sorted((ROOT / "docs" / "contributing").glob("*.md")),
]
# A command in backticks or after a console prompt; placeholders in <angle brackets> get an example value.
COMMAND_RE = re.compile(r"`(python3 [^`]+)`|^\$ (python3 .+?)(?:\s+#.*)?$", re.MULTILINE)
PLACEHOLDERS = {"<lesson-id>": "memory-wall", "<name>": "example"}


def documented_commands() -> list[tuple[str, list[str]]]:
    """``(where, argv)`` of every command shown, deduplicated, in document order."""
    found: dict[str, str] = {}
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in COMMAND_RE.finditer(text):
            command = match.group(1) or match.group(2)
            line = text.count("\n", 0, match.start()) + 1
            found.setdefault(command.strip(), f"{document.relative_to(ROOT)}:{line}")
    commands = []
    for command, where in found.items():
        for placeholder, value in PLACEHOLDERS.items():
            command = command.replace(placeholder, value)
        commands.append((where, shlex.split(command)))
    return commands


def nox_sessions() -> dict[str, str | None]:
    """Each session of noxfile.py, and the module it runs as ``python -m MODULE *session.posargs``, if any."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    sessions: dict[str, str | None] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not any(
            "session" in ast.unparse(d) for d in node.decorator_list
        ):
            continue
        module = None
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and ast.unparse(call.func) == "session.run":
                values = [a.value for a in call.args if isinstance(a, ast.Constant)]
                if values[:2] == ["python", "-m"] and "session.posargs" in ast.unparse(call):
                    module = str(values[2])
        sessions[node.name] = module
    return sessions


def pytest_markers() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {line.split(":")[0] for line in config["tool"]["pytest"]["ini_options"]["markers"]}


COMMANDS = documented_commands()
CALCULATOR_COMMANDS = [(w, argv[3:]) for w, argv in COMMANDS if argv[:3] == ["python3", "-m", "calculators"]]
DEV_COMMANDS = [(w, argv[2:]) for w, argv in COMMANDS if argv[:2] == ["python3", "dev.py"]]


def test_the_documents_show_the_commands_this_file_checks() -> None:
    assert len(CALCULATOR_COMMANDS) >= 4, CALCULATOR_COMMANDS  # the README's terminal examples
    assert {"serve", "check", "new_lesson", "tests", "build", "pdf"} <= {a[0] for _, a in DEV_COMMANDS if a}
    others = [
        (w, argv)
        for w, argv in COMMANDS
        if argv[:2] != ["python3", "dev.py"] and argv[:3] != ["python3", "-m", "calculators"]
    ]
    assert others == [], "a documented command this test does not know how to run"


@pytest.mark.parametrize(
    ("where", "argv"), CALCULATOR_COMMANDS, ids=[shlex.join(a) for _, a in CALCULATOR_COMMANDS]
)
def test_documented_calculator_command_runs(
    where: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status = calculators_main(argv)
    captured = capsys.readouterr()
    assert status == 0, f"{where}: python3 -m calculators {shlex.join(argv)}\n{captured.err}"
    if "--json" in argv:
        json.loads(captured.out)


@pytest.mark.parametrize(
    ("where", "argv"), DEV_COMMANDS, ids=[shlex.join(a) or "dev.py" for _, a in DEV_COMMANDS]
)
def test_documented_dev_command_names_a_session_that_takes_its_arguments(
    where: str,
    argv: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sessions = nox_sessions()
    if not argv or argv[0].startswith("-"):  # python3 dev.py, python3 dev.py --list: nox's own options
        assert argv in ([], ["--list"]), f"{where}: unknown option {argv}"
        return
    session, rest = argv[0], argv[1:]
    assert session in sessions, f"{where}: no nox session {session!r} (sessions: {', '.join(sessions)})"
    if rest:
        assert rest[0] == "--", f"{where}: arguments for the session go after --"
    posargs = rest[1:]
    if session == "tests":
        markers = {posargs[i + 1].split()[-1] for i, a in enumerate(posargs[:-1]) if a == "-m"}
        assert markers <= pytest_markers(), f"{where}: unregistered marker in {posargs}"
        return
    module = sessions[session]
    if not posargs and module == "course.lesson_format.scaffold":
        return  # named in prose ("`python3 dev.py new_lesson` writes one"); its examples have arguments
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    monkeypatch.chdir(ROOT)
    if module == "course.lesson_format.scaffold":
        status = scaffold_main([*posargs, "--docs", str(docs)])
    elif module == "course.lesson_format.check":
        status = check_main(posargs)
    elif module == "calculators":
        status = calculators_main(posargs)
    else:
        return  # builds, serves, the PDF and the benchmark: run by their own tests and by CI
    assert status == 0, f"{where}: python3 dev.py {shlex.join(argv)}\n{capsys.readouterr()}"
