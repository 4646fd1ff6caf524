"""Run the reader's edited "Python behind this" cell, as an interactive prompt would, and capture
what it says.

The code runs in a fresh namespace with the calculators' public names already imported. Printed output is
captured; if the last statement is an expression its value is shown (like a notebook cell); an exception gives
the traceback of the reader's code only, so the calculators' message is the last line the reader sees.
A failure here never reaches the widgets: they keep their own state.
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
import traceback
from typing import Any

CELL_NAME = "<the Python behind this>"


def _namespace() -> dict[str, Any]:
    import calculators

    scope: dict[str, Any] = {"__name__": "__main__"}
    scope.update({name: getattr(calculators, name) for name in calculators.__all__})
    return scope


def run(source: str) -> dict[str, Any]:
    """Execute ``source``; returns ``{"ok", "output", "error"}`` where error is the traceback text or ""."""
    output = io.StringIO()
    scope = _namespace()
    # Let tracebacks quote the reader's lines, as they would for a file.
    linecache.cache[CELL_NAME] = (len(source), None, source.splitlines(keepends=True), CELL_NAME)
    try:
        tree = ast.parse(source, filename=CELL_NAME, mode="exec")
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:
            tree.body.pop()
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            exec(compile(tree, CELL_NAME, "exec"), scope)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), CELL_NAME, "eval"), scope)
                if value is not None:
                    print(repr(value))
    except BaseException as error:  # the reader's code may raise anything, SystemExit included
        if isinstance(error, KeyboardInterrupt):
            raise
        frames = list(traceback.extract_tb(error.__traceback__))
        # Start at the reader's code: the frames of this module (and of ast.parse) are not theirs.
        while frames and frames[0].filename != CELL_NAME:
            frames.pop(0)
        own = frames
        lines = ["Traceback (most recent call last):\n", *traceback.format_list(own)] if own else []
        lines += traceback.format_exception_only(type(error), error)
        return {"ok": False, "output": output.getvalue(), "error": "".join(lines)}
    return {"ok": True, "output": output.getvalue(), "error": ""}
