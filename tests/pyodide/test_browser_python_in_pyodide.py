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
        "state": {"model": "deepseek-v3", "gpu": "h200", "gpus": "8", "precision": "fp8", "context": "1e5"},
    },
    {"run": "from calculators import Scenario\nScenario().decode().time_s"},
    {"run": "Scenario('dense-8b', 'h100-sxm').prefill(-1)"},
]


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
    else:
        assert got == expected
