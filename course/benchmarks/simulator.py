"""The serving simulator's speed, in CPython and inside Pyodide: figures for ``python -m course.benchmarks``.

Targets (issue 12): 10,000 requests of a chat-like workload through continuous batching in at most 2 s of
CPython, and 1,000 requests in at most 1 s inside Pyodide, so a widget can rerun a whole simulation on every
input change. The workload is ShareGPT-like (log-normal prompts of mean 161 tokens and outputs of mean 338,
the means the vLLM paper reports) arriving at 20 requests/s on the lesson's setup; the best of three runs,
in wall-clock and in CPU seconds (on a shared machine the CPU figure is the steadier). Printed, never
asserted.
Run alone with ``python -m course.benchmarks.simulator`` (it needs no site build).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course.benchmarks.harness import Sites, register
from course.widgets.package import widget_package
from course.widgets.runtime import ROOT, ensure_npm_packages

WORKLOAD = (
    "poisson_workload(20.0, {count}, Lengths.lognormal(161.31, 160, cap=2048), "
    "Lengths.lognormal(337.99, 330, cap=2048), seed=0)"
)
TIMING = """
import json, time
from calculators import Lengths, poisson_workload, simulate
requests = {workload}
best = cpu = None
for _ in range({repeats}):
    started, started_cpu = time.perf_counter(), time.process_time()
    result = simulate(requests, timeline_steps=0)
    elapsed, elapsed_cpu = time.perf_counter() - started, time.process_time() - started_cpu
    best = elapsed if best is None else min(best, elapsed)
    cpu = elapsed_cpu if cpu is None else min(cpu, elapsed_cpu)
steps = result.summary["steps"]
print(json.dumps({{"seconds": best, "cpu_seconds": cpu, "steps": steps, "requests": {count}}}))
"""


def _code(count: int, repeats: int) -> str:
    return TIMING.format(workload=WORKLOAD.format(count=count), count=count, repeats=repeats)


def cpython_run(count: int = 10_000, repeats: int = 3) -> dict[str, float]:
    """Best of ``repeats`` runs of ``count`` requests in this interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", _code(count, repeats)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def pyodide_run(count: int = 1_000, repeats: int = 3) -> dict[str, float] | None:
    """Best of ``repeats`` runs inside Pyodide under Node (None when Node is missing)."""
    node = shutil.which("node")
    if node is None:
        return None
    ensure_npm_packages()
    with tempfile.TemporaryDirectory(prefix="ridgepoint-sim-") as folder:
        archive = Path(folder) / "calculators.zip"
        archive.write_bytes(widget_package().data)
        out = subprocess.run(
            [node, str(Path(__file__).with_name("simulator_pyodide.mjs")), str(archive)],
            input=_code(count, repeats),
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            timeout=300,
            env={"NODE_PATH": str(ROOT / "node_modules"), "PATH": str(Path(node).parent)},
        )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _rows(label: str, run: dict[str, float] | None, target_s: float) -> list[tuple[str, str]]:
    if run is None:
        return [(label, "not measured (Node.js is not installed)")]
    seconds, steps, requests = run["seconds"], run["steps"], run["requests"]
    return [
        (
            f"{label}: {requests:,.0f} requests (target <= {target_s:g} s)",
            f"{seconds:.3f} s ({run['cpu_seconds']:.3f} s of CPU: a busy machine stretches the first)",
        ),
        (f"{label}: simulated steps per second", f"{steps / seconds:,.0f} ({steps:,.0f} steps)"),
    ]


def measure() -> list[tuple[str, str]]:
    """CPython and Pyodide timings of the simulator, as (label, value) rows."""
    started = time.perf_counter()
    rows = _rows("CPython", cpython_run(), 2.0) + _rows("Pyodide under Node", pyodide_run(), 1.0)
    rows.append(("measured in", f"{time.perf_counter() - started:.1f} s"))
    return rows


@register("serving simulator")
def simulator_figures(sites: Sites) -> list[tuple[str, str]]:
    """The benchmark session's figure: the simulator needs none of the built sites."""
    return measure()


def main() -> int:
    for label, value in measure():
        print(f"  {label:<52} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
