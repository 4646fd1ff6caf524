"""The math core stays standard-library only, never imports its glue layers, and its doctests hold.

The core must run unchanged under Pyodide, where only the standard library is certain to exist, so every
module of ``calculators`` except the ``charts`` and ``browser`` subpackages is scanned (by its syntax tree,
so that an import inside a function or behind a condition is caught too).
"""

from __future__ import annotations

import ast
import doctest
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import calculators

PACKAGE = Path(calculators.__file__).resolve().parent
GLUE = ("charts", "browser")  # layers above the core: they import it, never the other way round


def core_modules() -> list[Path]:
    """Every Python file of the core: the package minus its glue subpackages."""
    return sorted(path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] not in GLUE)


def imported_names(source: str, module: str) -> list[str]:
    """Absolute dotted names a module imports (relative imports resolved against ``module``)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: -node.level]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names.append(target)
            # "from calculators import charts" imports a subpackage by name
            names += [f"{target}.{alias.name}" for alias in node.names if target == "calculators"]
    return names


def forbidden_imports(source: str, module: str) -> list[str]:
    """Imports that are neither standard library nor the core itself."""
    bad = []
    for name in imported_names(source, module):
        top = name.split(".")[0]
        if top == "calculators":
            if len(name.split(".")) > 1 and name.split(".")[1] in GLUE:
                bad.append(name)
        elif top not in sys.stdlib_module_names:
            bad.append(name)
    return bad


def module_name(path: Path) -> str:
    parts = ["calculators", *path.relative_to(PACKAGE).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_the_scan_covers_the_core() -> None:
    names = {module_name(p) for p in core_modules()}
    assert {"calculators", "calculators.passes", "calculators.models", "calculators.cli"} <= names
    assert not any(n.startswith(("calculators.charts", "calculators.browser")) for n in names)


@pytest.mark.parametrize("path", core_modules(), ids=lambda p: module_name(p))
def test_core_module_imports_only_stdlib_and_core(path: Path) -> None:
    assert forbidden_imports(path.read_text(encoding="utf-8"), module_name(path)) == []


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("import numpy", ["numpy"]),
        ("def f():\n    import altair.vegalite\n", ["altair.vegalite"]),
        ("try:\n    import yaml\nexcept ImportError:\n    pass\n", ["yaml"]),
        ("from calculators.charts import figures", ["calculators.charts"]),
        ("from calculators import browser", ["calculators.browser"]),
        ("from .charts import x", ["calculators.charts"]),
        ("import math, json\nfrom calculators.models import get_model\nfrom . import units", []),
    ],
)
def test_the_scan_catches_what_it_must(source: str, bad: list[str]) -> None:
    assert forbidden_imports(source, "calculators.passes") == bad


def test_importing_the_core_loads_no_third_party_module() -> None:
    # A fresh interpreter: import every core module, then list what got loaded from outside the stdlib.
    modules = [module_name(p) for p in core_modules() if module_name(p) != "calculators.__main__"]
    script = (
        "import sys\n"
        "before = set(sys.modules)\n"
        f"for name in {modules!r}:\n"
        "    __import__(name)\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(m for m in new if m not in sys.stdlib_module_names and m != 'calculators'))\n"
        "glue = ('calculators.charts', 'calculators.browser')\n"
        "print(sorted(m for m in sys.modules if m.startswith(glue)))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["[]", "[]"]


def test_core_doctests() -> None:
    failed = {}
    for path in core_modules():
        if path.name != "__main__.py":  # importing __main__ would start the CLI
            module = importlib.import_module(module_name(path))
            failed[module.__name__] = doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed
    assert failed == dict.fromkeys(failed, 0)


def test_package_docstring_example_runs() -> None:
    # The example a reader sees first must exist and pass (an empty doctest would pass vacuously).
    result = doctest.testmod(calculators)
    assert result.attempted >= 3
    assert result.failed == 0
