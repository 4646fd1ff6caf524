"""The one function the widgets' Web Worker calls: a JSON request in, a JSON answer out.

Requests: ``{"widget": NAME, "state": {...}}`` computes a widget, ``{"run": SOURCE}`` runs a code cell.
Answers: ``{"ok": true, "result": {...}}`` or ``{"ok": false, "error": MESSAGE}``. A ``ValueError`` from the
calculators becomes the error message as it is (it names the field and what is allowed); any other exception
becomes an error too, so the worker never throws and the page's console stays clean.
JSON text crosses the JavaScript boundary instead of proxies, so no Pyodide FFI API (which differs between
pyodide-py 0.25 and Pyodide 314) is needed at all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from calculators.browser import (
    code_cell,
    kv_cache,
    parameter_counter,
    prefill_decode,
    roofline_explorer,
    serving_simulator,
)
from calculators.passes import memoised
from calculators.setting import site_setting, using

WIDGETS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    prefill_decode.NAME: prefill_decode.compute,
    roofline_explorer.NAME: roofline_explorer.compute,
    kv_cache.NAME: kv_cache.compute,
    serving_simulator.NAME: serving_simulator.compute,
    parameter_counter.NAME: parameter_counter.compute,
}


def compute(widget: str, state: dict[str, Any]) -> dict[str, Any]:
    """Compute widget ``widget`` for ``state``; raises ``ValueError`` for an unknown widget or bad input."""
    try:
        function = WIDGETS[widget]
    except KeyError:
        raise ValueError(f"unknown widget {widget!r}; known widgets: {', '.join(sorted(WIDGETS))}") from None
    # One slider move computes the same setups and passes for its numbers and for each chart: each once.
    with using(site_setting()), memoised():  # the course's model setting, like every figure of the lessons
        return function(state)


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity; replace them by None rather than emit invalid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def handle(request_json: str) -> str:
    """Answer one worker request (see the module docstring); never raises."""
    try:
        request = json.loads(request_json)
        if "run" in request:
            with using(site_setting()):  # a reader's code computes what the lesson beside it does
                answer: dict[str, Any] = {"ok": True, "result": code_cell.run(str(request["run"]))}
        else:
            answer = {
                "ok": True,
                "result": compute(str(request.get("widget")), dict(request.get("state") or {})),
            }
    except ValueError as error:
        answer = {"ok": False, "error": str(error)}
    except Exception as error:  # a defect, not bad input: still reported inline, never thrown into the page
        answer = {"ok": False, "error": f"{type(error).__name__}: {error}"}
    return _json(answer)


def _json(answer: dict[str, Any]) -> str:
    """``answer`` as JSON text; only an answer holding NaN or infinity is walked to replace them by None."""
    try:
        return json.dumps(answer, allow_nan=False)
    except ValueError:  # a non-finite float somewhere: the rare answer that needs the walk
        return json.dumps(_finite(answer), allow_nan=False)
