"""Safe evaluation of the small calculator expressions that lessons and quizzes write.

A lesson quotes a number as an expression such as ``Scenario("dense-8b", "h100-sxm").decode().time_s``;
a quiz's numeric answer is one too. Lessons are content, not code, so this is not Python's ``eval``: only
names from :data:`NAMESPACE`, numbers, strings, arithmetic, calls and public attributes are allowed.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from typing import Any

from calculators.hardware import GPUS, get_gpu
from calculators.models import MODELS, get_model
from calculators.roofline import attainable_flops_per_s, ridge_point
from calculators.scenario import Scenario
from calculators.simulator.experiments import chunk_step_s, kv_handoff, max_good_rate, prefill_stall, serve

NAMESPACE: Mapping[str, Any] = {
    "Scenario": Scenario,
    "gpu": get_gpu,
    "model": get_model,
    "ridge_point": ridge_point,
    "attainable_flops_per_s": attainable_flops_per_s,
    # simulator experiments (calculators.simulator.experiments): cached runs with plain-number arguments
    "prefill_stall": prefill_stall,
    "chunk_step_s": chunk_step_s,
    "serve": serve,
    "max_good_rate": max_good_rate,
    "kv_handoff": kv_handoff,
    "min": min,
    "max": max,
    "abs": abs,
}

_ALLOWED_NODES = (
    ast.Expression,
    ast.Call,
    ast.Name,
    ast.Attribute,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.keyword,
    ast.Load,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Pow,
    ast.USub,
    ast.UAdd,
)


class ExpressionError(ValueError):
    """An expression that is not allowed, or that the calculators rejected; the message says which part."""


def _small_exponent(node: ast.expr) -> bool:
    """A power's exponent must be a plain number up to 100, so that no expression can hang the build."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
        and abs(node.value) <= 100
    )


def check_expression(source: str, names: Mapping[str, Any] | None = None) -> ast.Expression:
    """Parse ``source`` and reject anything beyond the calculator mini-language."""
    scope = {**NAMESPACE, **(names or {})}
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as error:
        raise ExpressionError(f"not a valid expression: {source!r} ({error.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise ExpressionError(
                f"{type(node).__name__} is not allowed in a calculator expression: {source!r}"
            )
        if isinstance(node, ast.Name) and node.id not in scope:
            known = ", ".join(sorted(scope))
            raise ExpressionError(f"unknown name {node.id!r} in {source!r}; known names: {known}")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ExpressionError(f"private attribute {node.attr!r} is not allowed in {source!r}")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Constant):
            # "{0.__class__}".format(x) would reach private attributes through a format string
            raise ExpressionError(f"attributes of a constant are not allowed in {source!r}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and not _small_exponent(node.right):
            raise ExpressionError(f"powers need a constant exponent of at most 100 in {source!r}; write 1e9")
        if isinstance(node, ast.Constant) and not isinstance(node.value, int | float | str | bool):
            raise ExpressionError(f"constant {node.value!r} is not allowed in {source!r}")
    return tree


def evaluate(source: str, names: Mapping[str, Any] | None = None) -> Any:
    """Evaluate a calculator expression; ``names`` adds scenarios a lesson defines in its front matter."""
    tree = check_expression(source, names)
    scope = {"__builtins__": {}, **NAMESPACE, **(names or {})}
    try:
        return eval(
            compile(tree, "<calculator expression>", "eval"), scope
        )  # checked above: only the calculator mini-language
    except ValueError as error:
        raise ExpressionError(f"{source!r}: {error}") from None
    except (TypeError, AttributeError, ZeroDivisionError, OverflowError) as error:
        raise ExpressionError(f"{source!r} could not be computed: {error}") from None


def evaluate_number(source: str, names: Mapping[str, Any] | None = None) -> float:
    """Evaluate an expression that must give a finite number (a quoted figure or a quiz answer)."""
    value = evaluate(source, names)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ExpressionError(f"{source!r} must give a finite number, but gave {value!r}")
    return float(value)


PRESET_NAMES = {"gpus": sorted(GPUS), "models": sorted(MODELS)}
