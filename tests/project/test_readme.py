"""Every example in the README runs: each ``$ python3 -m calculators ...`` line and each Python block."""

from __future__ import annotations

import re
import shlex

import pytest

from calculators.cli import main
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = [
    line.split("#", 1)[0].strip()
    for block in re.findall(r"```console\n(.*?)```", README, re.DOTALL)
    for line in block.splitlines()
    if line.startswith("$ python3 -m calculators")
]
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, re.DOTALL)


def test_the_readme_has_examples() -> None:
    assert any(" simulate" in c for c in COMMANDS)
    assert PYTHON_BLOCKS


@pytest.mark.parametrize("command", COMMANDS, ids=[c.removeprefix("$ python3 -m ") for c in COMMANDS])
def test_readme_command_runs(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = shlex.split(command)[4:]  # after "$ python3 -m calculators"
    assert main(argv) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("source", PYTHON_BLOCKS)
def test_readme_python_runs(source: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(source, "README.md", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()
