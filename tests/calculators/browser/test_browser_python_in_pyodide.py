"""calculators.browser inside real Pyodide (the npm-pinned one the site ships), under Node, without a browser.

One Pyodide boot answers every request; each answer must equal CPython's answer to the same request, so the
widgets show in the browser exactly what the build computed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from calculators.browser import handle
from course.widgets.package import widget_package
from course.widgets.runtime import ROOT, ensure_npm_packages

pytestmark = pytest.mark.pyodide

SIMULATION = """import hashlib, json
def rounded(x):
    if isinstance(x, float):
        return float(f"{x:.10g}")
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [rounded(v) for v in x]
    return x
work = poisson_workload(30, 300, Lengths.lognormal(600, 500), Lengths.lognormal(150, 140), seed=5)
setup = make_setup("llama-3.1-8b", "h100-sxm", level="refined")
for scheduler in (ContinuousBatching(), ChunkedPrefill(256), StaticBatching(8), Disaggregated(1, 1)):
    result = simulate(work, setup, scheduler, memory=MemoryConfig(capacity_tokens=20000))
    data = json.dumps(rounded(result.as_dict(token_latencies=True)), sort_keys=True)
    print(scheduler.name, result.summary["preemptions"], hashlib.sha256(data.encode()).hexdigest())
"""

SPECULATIVE = (
    "memory=MemoryConfig(capacity_tokens=20000), "
    "speculation=Speculation(0.7, 4, acceptance_concentration=8.0, seed=2))"
)

REQUESTS = [
    {"widget": "prefill-decode", "state": {}},
    {
        "widget": "prefill-decode",
        "state": {"model": "mixtral-8x7b", "gpu": "h200", "prompt": "32768", "kv": True},
    },
    {"widget": "prefill-decode", "state": {"model": "deepseek-v3", "gpu": "b200", "kv": "1"}},
    {"widget": "prefill-decode", "state": {"prompt": "abc"}},
    {
        "widget": "roofline-explorer",
        "state": {"gpus": "h100-sxm,mi300x,l4", "precision": "fp8", "intensity": "0.5"},
    },
    {"widget": "roofline-explorer", "state": {"gpus": "a100-sxm-80gb", "precision": "fp8"}},
    {"widget": "kv-cache", "state": {}},
    {
        "widget": "kv-cache",
        "state": {
            "model": "deepseek-v3",
            "gpu": "h200",
            "gpus": "8",
            "precision": "fp8",
            "context": "100000",
        },
    },
    {"widget": "parameter-counter", "state": {}},
    {"widget": "parameter-counter", "state": {"layers": "80", "hidden": "8192", "tied": "1"}},
    {"widget": "parameter-counter", "state": {"kv_heads": "5"}},
    {"run": "from calculators import Scenario\nScenario().decode().time_s"},
    {"run": "Scenario('dense-8b', 'h100-sxm').prefill(-1)"},
    # The serving simulator gives the same result (every latency of every token, to 10 significant digits)
    # in Pyodide's Python as in ours, for each scheduler, with preemptions, at the refined level. Not to the
    # last bit: the cost model adds operator times with the built-in sum, which rounds differently from
    # Python 3.12 on (Pyodide's is newer than ours); math.fsum there would make it bit for bit.
    {"run": SIMULATION},
    # Speculative decoding's draws (uniform, and Beta per request) are the same in Pyodide's Python.
    {
        "run": "from calculators.simulator import Speculation\n"
        + SIMULATION.replace("memory=MemoryConfig(capacity_tokens=20000))", SPECULATIVE).replace(
            ", StaticBatching(8)", ""
        )
    },
    {"run": "simulate(poisson_workload(0, 10))"},
    # The serving simulator widget: every scheduler, both allocators, a pool small enough to preempt.
    {
        "widget": "serving-simulator",
        "state": {"charts": "timeline,memory,latency", "compare": "static,continuous"},
    },
    {
        "widget": "serving-simulator",
        "state": {
            "memory": "contiguous",
            "output_spread": "64",
            "capacity_tokens": "12000",
            "rate": "40",
            "requests": "60",
            "charts": "memory",
        },
    },
    {"widget": "serving-simulator", "state": {"scheduler": "chunked", "token_budget": "256", "rate": "30"}},
    {"widget": "serving-simulator", "state": {"scheduler": "disaggregated", "link": "infiniband-ndr"}},
    {"widget": "serving-simulator", "state": {"rate": "fast"}},
    {
        "widget": "serving-simulator",
        "state": {"speculative": "1", "acceptance": "0.8", "scheduler": "chunked"},
    },
    # Conversations with a share of several system prompts, cached; pipeline stages in micro-batches (the
    # shared description of a run, calculators/simulator/run_options.py, is in the archive).
    {
        "widget": "serving-simulator",
        "state": {
            "turns": "3",
            "think_s": "2",
            "shared_prefix": "1024",
            "prefix_share": "0.5",
            "prefixes": "2",
            "prefix_caching": "1",
            "requests": "60",
        },
    },
    {
        "widget": "serving-simulator",
        "state": {"pipeline_stages": "2", "micro_batches": "4", "charts": "timeline,latency"},
    },
]


def _rounded(value: object) -> object:
    """Floats to 10 significant digits (see SIMULATION above), the rest as it is."""
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


@pytest.fixture(scope="module")
def pyodide_answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    ensure_npm_packages()
    archive = tmp_path_factory.mktemp("pyodide") / "calculators.zip"
    archive.write_bytes(widget_package().data)
    result = subprocess.run(
        [node, str(Path(__file__).with_name("run_requests.mjs")), str(archive)],
        input=json.dumps(REQUESTS),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={"NODE_PATH": str(ROOT / "node_modules"), "PATH": str(Path(node).parent)},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_it_is_the_pinned_pyodide_python(pyodide_answers: dict[str, object]) -> None:
    assert str(pyodide_answers["python"]).startswith("3.")


def test_the_calculators_import_from_the_archives_bytecode(pyodide_answers: dict[str, object]) -> None:
    # Made by this Pyodide at build (course/widgets/bytecode.py): a .pyc its Python accepts beside each
    # source, so the reader's browser does not compile them when a widget starts.
    assert pyodide_answers["compiledOnImport"] == []


@pytest.mark.parametrize("index", range(len(REQUESTS)))
def test_pyodide_answers_equal_cpython_answers(pyodide_answers: dict[str, object], index: int) -> None:
    request = REQUESTS[index]
    expected = json.loads(handle(json.dumps(request)))
    got = pyodide_answers["answers"][index]  # type: ignore[index]
    if "run" in request:
        # Tracebacks name the files where the archive was unpacked; the reader's lines and the message match.
        assert got["result"]["output"] == expected["result"]["output"]
        assert got["result"]["ok"] == expected["result"]["ok"]
        assert got["result"]["error"].splitlines()[-1:] == expected["result"]["error"].splitlines()[-1:]
    elif request.get("widget") == "serving-simulator":
        # The simulator's step times are sums of operator times (see SIMULATION): equal to 10 digits.
        assert _rounded(got) == _rounded(expected)
    else:
        assert got == expected
