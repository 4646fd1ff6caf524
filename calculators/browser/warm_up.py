"""Run the calculators' module bodies once more after a widget starts from the kept copy of Python's memory.

Why: a widget that starts from Pyodide's memory snapshot (widget-worker.js) skips the calculators' imports,
and the first twenty or so moves of its slider then took far longer in Python than the later ones. A start
from scratch, which runs the imports, shows little of that. The tail is V8's: it compiles Python's
interpreter (WebAssembly) again as new kinds of work reach it, and a snapshot start has run almost none yet
(course/widgets/benchmark.py has the traces and the flags that take it away). Running the module bodies again
(each one's source compiled and executed) gives V8 the import's kinds of work before the reader moves. Of
the warm-ups tried it moved the tail most: those that repeated the widget's own requests moved Python's share
less, and the slider's time not beyond the spread (benchmark.py has the figures of each).

Nothing the widgets use changes. Each body runs into a namespace of its own, never into its module, so the
modules, their constants and their caches stay the ones the snapshot held, and the new namespace is dropped
(tests/calculators/browser/test_warm_up.py holds every widget's answers to those computed without). The
worker runs one module per task, and only while no widget is asking, so a reader's request waits for at most
one module.
"""

from __future__ import annotations

import json
import sys

PACKAGE = "calculators"


def _ours(name: str) -> bool:
    return name == PACKAGE or name.startswith(PACKAGE + ".")


def _source(module: object) -> str:
    return getattr(module, "__file__", None) or ""


def module_names() -> str:
    """The loaded modules of the calculators that have a source file, sorted, as JSON text (the worker reads
    JSON, not Pyodide's proxies)."""
    names = [name for name, module in list(sys.modules.items()) if _ours(name) and _source(module)]
    return json.dumps(sorted(names))


def rerun(name: str) -> bool:
    """Compile module ``name``'s source and execute it into a new namespace; False where it is not a loaded
    module of the calculators, has no readable source, or its body fails (then it is skipped: a warm-up is
    never worth an error)."""
    module = sys.modules.get(name) if _ours(name) else None
    path = _source(module)
    if module is None or not path:
        return False
    # The loaded module's own name: dataclasses look a class's module up by it, and find the loaded one.
    namespace = {"__name__": name, "__package__": module.__package__, "__file__": path}
    try:
        with open(path, encoding="utf-8") as source:
            exec(compile(source.read(), path, "exec"), namespace)
    except Exception:
        return False
    return True
