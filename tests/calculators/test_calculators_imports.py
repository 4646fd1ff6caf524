"""The calculators' modules depend on each other one way: no import circle, however indirect.

A circle (``memory`` importing ``passes`` importing ``memory``) makes a module's meaning depend on which one
was imported first, and it hides which piece is the lower layer. The graph is read from the source with
``ast``: every ``import`` counts, inside functions and ``if TYPE_CHECKING:`` blocks too, since those are
circles that merely have not bitten yet. ``from package import name`` counts as importing the submodule
``package.name`` where there is one, else the package itself.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from tests.conftest import ROOT


def module_files(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (``__init__`` names its package)."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The package's modules that the module ``name`` (its source at ``path``) imports."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            targets = [sub for sub in submodules if sub in known] or [base]
            if len(targets) < len(submodules) and base not in targets:
                targets.append(base)  # names defined in the module itself, beside its submodules
        else:
            continue
        found.update(target for target in targets if target in known and target != name)
    return found


def import_cycles(package_dir: Path) -> list[list[str]]:
    """Each import circle among the package's modules, as the modules in import order, first repeated last."""
    known = module_files(package_dir)
    graph = {name: sorted(imported_modules(name, path, known)) for name, path in known.items()}
    cycles: list[list[str]] = []
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            cycle = [*trail[trail.index(name) :], name]
            if not any(set(cycle) == set(seen) for seen in cycles):
                cycles.append(cycle)
            return
        if name in done:
            return
        for target in graph[name]:
            visit(target, [*trail, name])
        done.add(name)

    for name in graph:
        visit(name, [])
    return cycles


def test_no_import_circle_inside_calculators() -> None:
    cycles = import_cycles(ROOT / "calculators")
    listed = "\n".join(" -> ".join(cycle) for cycle in cycles)
    assert not cycles, f"import circles in calculators/ (move the shared piece down into both):\n{listed}"


def test_the_check_sees_a_circle_through_a_type_only_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "low.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub.high import Thing\n"
    )
    (package / "sub" / "high.py").write_text("from .. import low\nThing = object\n")
    (package / "alone.py").write_text("import pkg.low\n")
    assert import_cycles(package) == [["pkg.low", "pkg.sub.high", "pkg.low"]]
