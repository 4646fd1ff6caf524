"""A small interpreter for the calculator expressions that lessons and quizzes write.

A lesson quotes a number as an expression such as ``Scenario("dense-8b", "h100-sxm").decode().time_s``;
a quiz's numeric answer is one too. Lessons are untrusted input (they arrive by pull request), so this is not
Python's ``eval``: the expression is parsed into an AST and each node is interpreted here, from an allow-list.

- Names come from :data:`NAMESPACE` (the calculators' public API) and the scenarios a lesson defines; every
  name is looked up by :func:`lookup_name`, the one place that knows them.
- Attributes are read only from the calculators' own result objects (:data:`RESULT_TYPES`), never from
  strings or numbers (so no ``"{0.__class__}".format``), and never a name starting with ``_``.
- Calls go only to functions of :data:`NAMESPACE` and to public methods of the result objects.
- Integers stay within :data:`MAX_INT_BITS` bits, strings within :data:`MAX_STRING` characters, an expression
  within :data:`MAX_SOURCE` characters and :data:`MAX_STEPS` interpreted nodes, and evaluation within
  :data:`TIME_LIMIT_S` seconds of CPU time, so that no lesson can hang the build or flood its log. A function
  of :data:`NAMESPACE` whose work is bounded but long (a simulator experiment that runs many simulations of
  capped size) says so in its own ``time_limit_s`` attribute; an expression naming it gets that limit. The
  limit comes from the calculators' code, never from the lesson.
- Many expressions together stay within the :class:`TimeBudget` they are charged to (:func:`spending`): one
  page's and one build's, so that a lesson quoting a slow experiment many times (each call within its own
  limit) cannot make a build take hours. The budgets are set by the site layer
  (:mod:`course.lesson_format.expression_budget`), which knows what a page and a build are.

Errors are :class:`ExpressionError`; each carries a ``fix`` that the callers (which know the file and line)
print beside it.
"""

from __future__ import annotations

import ast
import math
import operator
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from calculators.expert_parallel import ExpertLoad, expert_load
from calculators.gemm import Gemm, critical_tokens, gemm
from calculators.gpu_anatomy import Anatomy
from calculators.hardware import GPU, GPUS, get_gpu
from calculators.interconnect import Interconnect
from calculators.memory import MemoryPlan
from calculators.models import MODELS, MLAShape, Model, MoEShape, get_model
from calculators.passes import PassResult, Setup
from calculators.precision import NumberFormat, Precision, get_format, get_precision
from calculators.quantization import crossover_batch
from calculators.roofline import RooflineTime, attainable_flops_per_s, ridge_point
from calculators.scenario import Scenario
from calculators.serving import MemoryFootprint, RequestTiming
from calculators.simulator.experiments import (
    Handoff,
    Pipelined,
    Stall,
    chunk_step_s,
    kv_handoff,
    max_good_rate,
    pipeline_step,
    prefill_stall,
)
from calculators.simulator.named import Served, Stats, served
from calculators.speculative import SpeculativeResult, acceptance_for_tokens
from calculators.suggestions import attribute_hint, did_you_mean
from calculators.utilisation import Utilisation

NAMESPACE: Mapping[str, Any] = {
    "Scenario": Scenario,
    "gpu": get_gpu,
    "model": get_model,
    "ridge_point": ridge_point,
    "precision": get_precision,
    "number_format": get_format,
    "served": served,
    "attainable_flops_per_s": attainable_flops_per_s,
    "gemm": gemm,
    "critical_tokens": critical_tokens,
    "min": min,
    "max": max,
    "abs": abs,
    # quantisation: the decode batch from which one recipe steps faster than another
    "crossover_batch": crossover_batch,
    # speculative decoding: the acceptance rate that gives a published mean accepted length
    "acceptance_for_tokens": acceptance_for_tokens,
    # mixture of experts: experts touched and the busiest GPU of expert parallelism
    "expert_load": expert_load,
    # simulator experiments (calculators.simulator.experiments): cached runs with plain-number arguments
    "prefill_stall": prefill_stall,
    "chunk_step_s": chunk_step_s,
    "max_good_rate": max_good_rate,
    "kv_handoff": kv_handoff,
    # pipeline parallelism: one step micro-batched through the stages, as the simulator times it
    "pipeline_step": pipeline_step,
}
"""The functions an expression may call by name: the calculators' public API for lessons."""

RESULT_TYPES: tuple[type, ...] = (
    Scenario,
    GPU,
    Anatomy,
    Model,
    MLAShape,
    MoEShape,
    Precision,
    NumberFormat,
    Setup,
    Interconnect,
    PassResult,
    RooflineTime,
    Gemm,
    RequestTiming,
    MemoryFootprint,
    MemoryPlan,
    Stall,
    Served,
    Stats,
    Handoff,
    Pipelined,
    Utilisation,
    SpeculativeResult,
    ExpertLoad,
    Interconnect,
)
"""The objects whose public attributes and methods an expression may use."""

MAX_SOURCE = 1_000  # characters in one expression
MAX_STRING = 100  # characters in any string an expression holds (preset names are short)
MAX_INT_BITS = 128  # integers beyond 2**128 are no figure a lesson quotes
MAX_STEPS = 2_000  # interpreted nodes, calls included
TIME_LIMIT_S = 2.0  # seconds of CPU for one expression, calls into the calculators included
# The evaluating thread's CPU time, not the wall clock: an expression can only compute (no I/O, no sleep),
# and on a busy 2-core machine the same figure took over 2 s of wall time, failing sound builds. (The
# process-wide clock advanced in coarse steps under pytest, so a zero limit or a budget's charge read 0.)
# Pyodide's time module has neither thread_time nor process timers: there the wall clock stands in.
_clock = getattr(time, "thread_time", time.monotonic)

FIX_NAME = "use a name the calculators know, e.g. Scenario().decode().time_s"
FIX_SHAPE = "write a calculator call and arithmetic, e.g. Scenario().decode().time_s * 1e3"
FIX_SIZE = "write large numbers in floating point, e.g. 1e30, and keep expressions short"
FIX_BUDGET = (
    "quote each slow experiment (max_good_rate, served, prefill_stall) with the same arguments everywhere, "
    "so that it is computed once, or quote fewer of them on one page"
)

_BINARY: Mapping[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: Mapping[type[ast.unaryop], Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}


class ExpressionError(ValueError):
    """An expression that is not allowed, or that the calculators rejected; ``fix`` says what to write."""

    def __init__(self, message: str, fix: str = FIX_SHAPE) -> None:
        super().__init__(message)
        self.fix = fix


class _Timeout(Exception):
    """Raised by the alarm when an expression runs past its time limit."""


@dataclass
class TimeBudget:
    """Wall-clock seconds that many expressions share: one page's, or one whole build's.

    Each expression still has its own limit; a budget bounds their sum, which no single limit can.
    ``owner`` names what the budget is for in messages ("the page serving/x.md").
    """

    owner: str
    limit_s: float
    spent_s: float = 0.0

    @property
    def left_s(self) -> float:
        return max(0.0, self.limit_s - self.spent_s)

    def message(self, source: str) -> str:
        return (
            f"{self.owner} has used its {self.limit_s:g} s of calculator time ({self.spent_s:.1f} s spent); "
            f"{source!r} was not computed"
        )


_BUDGETS: ContextVar[tuple[TimeBudget, ...]] = ContextVar("expression_budgets", default=())


@contextmanager
def spending(*budgets: TimeBudget) -> Iterator[None]:
    """Charge every expression evaluated inside the block to ``budgets`` (besides those already charged)."""
    token = _BUDGETS.set(_BUDGETS.get() + budgets)
    try:
        yield
    finally:
        _BUDGETS.reset(token)


def spend_from_now_on(*budgets: TimeBudget) -> None:
    """Charge every later expression of this thread to ``budgets`` alone (a build's, set as it starts)."""
    _BUDGETS.set(budgets)


def lookup_name(name: str, scope: Mapping[str, Any], source: str) -> Any:
    """The value of ``name`` in ``scope``: the only place where an expression's names are resolved."""
    if name in scope:
        return scope[name]
    known = ", ".join(sorted(scope))
    hint = did_you_mean(name, scope)
    raise ExpressionError(f"unknown name {name!r} in {source!r};{hint} known names: {known}", FIX_NAME)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class _Interpreter:
    """Evaluates one parsed expression node by node, counting steps and watching the clock."""

    def __init__(self, source: str, scope: Mapping[str, Any], time_limit_s: float) -> None:
        self.source = source
        self.scope = scope
        self.steps = 0
        self.deadline = _clock() + time_limit_s

    def fail(self, message: str, fix: str = FIX_SHAPE) -> ExpressionError:
        return ExpressionError(f"{message} in {self.source!r}", fix)

    def run(self, node: ast.AST) -> Any:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise self.fail(f"the expression takes more than {MAX_STEPS} steps", FIX_SIZE)
        if _clock() > self.deadline:
            raise _Timeout
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise self.fail(f"{type(node).__name__} is not allowed in a calculator expression")
        return self.checked(method(node))

    def checked(self, value: Any) -> Any:
        """Refuse integers that could flood memory or the log (strings cannot grow: no string arithmetic)."""
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
            raise self.fail(f"an integer larger than 2**{MAX_INT_BITS} appears", FIX_SIZE)
        return value

    def visit_Expression(self, node: ast.Expression) -> Any:
        return self.run(node.body)

    def visit_Constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, str) and len(node.value) > MAX_STRING:
            raise self.fail(f"a string longer than {MAX_STRING} characters appears", FIX_SIZE)
        if isinstance(node.value, bool | int | float | str):
            return node.value
        raise self.fail(f"constant {node.value!r} is not allowed")

    def visit_Name(self, node: ast.Name) -> Any:
        return lookup_name(node.id, self.scope, self.source)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr.startswith("_"):
            raise self.fail(f"private attribute {node.attr!r} is not allowed")
        owner = self.run(node.value)
        if not isinstance(owner, RESULT_TYPES):
            kind = "a constant" if isinstance(node.value, ast.Constant) else f"a {type(owner).__name__}"
            raise self.fail(
                f"attributes of {kind} are not allowed (only of calculator results such as Scenario())"
            )
        try:
            return getattr(owner, node.attr)
        except AttributeError as error:
            raise self.fail(f"could not be computed: {error}.{attribute_hint(error)}", FIX_NAME) from None

    def visit_Call(self, node: ast.Call) -> Any:
        function = self.run(node.func)
        allowed = function in NAMESPACE.values() or (
            callable(function) and isinstance(getattr(function, "__self__", None), RESULT_TYPES)
        )
        if not allowed:
            raise self.fail("only the calculators' functions and methods can be called")
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.fail("* and ** arguments are not allowed")
        args = [self.run(argument) for argument in node.args]
        kwargs = {str(k.arg): self.run(k.value) for k in node.keywords}
        try:
            return function(*args, **kwargs)
        except ExpressionError:
            raise
        except ValueError as error:
            raise ExpressionError(f"{self.source!r}: {error}", "use values the calculators accept") from None
        except (TypeError, ZeroDivisionError, OverflowError) as error:
            raise self.fail(f"could not be computed: {error}") from None

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        operation = _UNARY.get(type(node.op))
        operand = self.run(node.operand)
        if operation is None or not _is_number(operand):
            raise self.fail(f"{type(node.op).__name__} works on numbers only")
        return operation(operand)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        operation = _BINARY.get(type(node.op))
        if operation is None:
            raise self.fail(f"{type(node.op).__name__} is not allowed in a calculator expression")
        left, right = self.run(node.left), self.run(node.right)
        if not (_is_number(left) and _is_number(right)):
            raise self.fail("arithmetic works on numbers only (no text, no objects)")
        if isinstance(node.op, ast.Pow):
            self.check_power(left, right)
        try:
            return operation(left, right)
        except (ZeroDivisionError, OverflowError) as error:
            raise self.fail(f"could not be computed: {error}") from None

    def check_power(self, base: float, exponent: float) -> None:
        """A power is computed only when its size is bounded: ``|exponent| * log2|base|`` within limits."""
        if abs(exponent) > MAX_INT_BITS:
            raise self.fail(f"powers need an exponent of at most {MAX_INT_BITS}", "write 1e9, not 10**9**9")
        whole = isinstance(base, int) and isinstance(exponent, int) and exponent > 0
        if whole and base not in (0, 1, -1) and exponent * math.log2(abs(base)) > MAX_INT_BITS:
            raise self.fail(f"the power is larger than 2**{MAX_INT_BITS}", FIX_SIZE)


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt a long call into the calculators too, where the platform has alarms (the build's thread)."""
    usable = (
        hasattr(signal, "setitimer")
        and hasattr(signal, "ITIMER_PROF")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise _Timeout

    # ITIMER_PROF counts the process's CPU time (user and system), never less than the thread's _clock.
    previous = signal.signal(signal.SIGPROF, interrupt)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def check_expression(source: str) -> ast.Expression:
    """Parse ``source`` into an expression tree, or say why it is not one."""
    if len(source) > MAX_SOURCE:
        raise ExpressionError(f"the expression is longer than {MAX_SOURCE} characters", FIX_SIZE)
    try:
        return ast.parse(source.strip(), mode="eval")
    except SyntaxError as error:
        raise ExpressionError(f"not a valid expression: {source!r} ({error.msg})") from None


def _declared_time_limit(tree: ast.AST) -> float:
    """The longest ``time_limit_s`` declared by a calculators function the expression names (0 if none)."""
    limits = [
        getattr(NAMESPACE[node.id], "time_limit_s", 0.0)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id in NAMESPACE
    ]
    return float(max(limits, default=0.0))


def evaluate(source: str, names: Mapping[str, Any] | None = None, time_limit_s: float = TIME_LIMIT_S) -> Any:
    """Evaluate a calculator expression; ``names`` adds scenarios a lesson defines in its front matter."""
    tree = check_expression(source)
    time_limit_s = max(time_limit_s, _declared_time_limit(tree))
    budgets = _BUDGETS.get()
    tightest = min(budgets, key=lambda budget: budget.left_s, default=None)
    if tightest is not None and tightest.left_s <= 0:
        raise ExpressionError(tightest.message(source), FIX_BUDGET)
    by_budget = tightest is not None and tightest.left_s < time_limit_s
    if tightest is not None:
        time_limit_s = min(time_limit_s, tightest.left_s)
    interpreter = _Interpreter(source, {**NAMESPACE, **(names or {})}, time_limit_s)
    started = _clock()
    try:
        try:
            with _time_limit(time_limit_s):
                return interpreter.run(tree)
        finally:
            for budget in budgets:
                budget.spent_s += _clock() - started
    except _Timeout:
        if by_budget:
            assert tightest is not None
            raise ExpressionError(tightest.message(source), FIX_BUDGET) from None
        raise ExpressionError(
            f"{source!r} took longer than {time_limit_s:g} s to compute", "use smaller values"
        ) from None
    except RecursionError:
        raise ExpressionError(f"{source!r} is nested too deeply", FIX_SIZE) from None


def evaluate_number(source: str, names: Mapping[str, Any] | None = None) -> float:
    """Evaluate an expression that must give a finite number (a quoted figure or a quiz answer)."""
    value = evaluate(source, names)
    if not _is_number(value) or not math.isfinite(value):
        raise ExpressionError(
            f"{source!r} must give a finite number, but gave {value!r}"[: MAX_STRING * 2],
            "end the expression with a number, e.g. .time_s",
        )
    return float(value)


PRESET_NAMES = {"gpus": sorted(GPUS), "models": sorted(MODELS)}
