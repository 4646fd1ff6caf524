"""``python -m course.benchmarks``: build the sites once, print every registered figure (never asserted)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import course.benchmarks.edit_reload
import course.benchmarks.simulator
import course.notebooks.benchmark
import course.widgets.benchmark  # noqa: F401 - each registers its figures with the harness
from course.benchmarks.harness import FIGURES, build_all


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="ridgepoint-bench-") as folder:
        sites = build_all(Path(folder))
        for name, figure in FIGURES.items():
            print(f"\n{name}")
            for label, value in figure(sites):
                print(f"  {label:<52} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
