"""Comparative claims ("A beats B", "grows with", "levels off"), which the build checks in both modes.

A figure is checked against its tolerance; a conclusion that compares or orders figures is checked too::

    {{ "serves more" holds max_good_rate("chunked", gpus=3) > max_good_rate("continuous", gpus=3) }}

The quoted text is what the page shows. Both sides are calculator expressions, compared with ``<``, ``<=``,
``>`` or ``>=`` (a ratio against a number says "levels off": ``A / B < 1.05``). The comparison is evaluated
under every setting of :data:`calculators.setting.BOTH_MODES` (the course's calibrated setting and the same
model at spec peaks), and the claim fails unless it holds in each: a conclusion the cost model's own
uncertainty can reverse is not one a lesson may state. The message names the claim and both sides in each
mode.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from calculators.expressions import ExpressionError, check_expression
from calculators.setting import BOTH_MODES, ModelSetting
from course.lesson_format.background import BeingComputed
from course.numbers.value_cache import computed_number

COMPARISON_RE = re.compile(r"""^\s*(?P<q>["'])(?P<text>.*?)(?P=q)\s+holds\s+(?P<rest>.+)$""", re.DOTALL)
EXAMPLE_COMPARISON = (
    '{{ "more than a decode step" holds Scenario().prefill(2000).time_s > Scenario().decode().time_s }}'
)
OPERATORS: dict[type[ast.cmpop], tuple[str, Callable[[float, float], bool]]] = {
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
}


class ComparisonSyntaxError(ValueError):
    """A ``"text" holds ...`` that is not one comparison of two expressions."""


@dataclass(frozen=True)
class Comparison:
    """``"text" holds left OP right``: shown as ``text``, true in every mode or the build fails."""

    text: str
    left: str
    symbol: str
    right: str
    test: Callable[[float, float], bool]

    @property
    def source(self) -> str:
        return f"{self.left} {self.symbol} {self.right}"


@dataclass(frozen=True)
class ModeValues:
    """Both sides of a comparison under one setting, and whether it held there."""

    setting: ModelSetting
    left: float
    right: float
    holds: bool

    def __str__(self) -> str:
        verdict = "holds" if self.holds else "fails"
        return f"{self.setting.name}: {self.left:.4g} vs {self.right:.4g} ({verdict})"


def is_comparison(source: str) -> bool:
    return COMPARISON_RE.match(source.strip()) is not None


def parse_comparison(source: str) -> Comparison:
    """Parse the inside of ``{{ "text" holds LEFT OP RIGHT }}``; raises :class:`ComparisonSyntaxError`."""
    match = COMPARISON_RE.match(source.strip())
    if match is None:
        raise ComparisonSyntaxError(f'expected "text" holds LEFT OP RIGHT, e.g. {EXAMPLE_COMPARISON}')
    rest = match.group("rest").strip()
    try:
        tree = check_expression(rest)
    except ExpressionError as error:
        raise ComparisonSyntaxError(str(error)) from None
    body = tree.body
    if not isinstance(body, ast.Compare) or len(body.ops) != 1 or type(body.ops[0]) not in OPERATORS:
        raise ComparisonSyntaxError(
            f"after `holds`, write one comparison with <, <=, > or >= of two calculator expressions, got "
            f"{rest!r}"
        )
    symbol, test = OPERATORS[type(body.ops[0])]
    return Comparison(
        match.group("text"), ast.unparse(body.left), symbol, ast.unparse(body.comparators[0]), test
    )


def evaluate_comparison(comparison: Comparison) -> tuple[list[ModeValues], str | None]:
    """The comparison in each mode, and what is wrong (None when it holds in all of them).

    Raises :class:`~calculators.expressions.ExpressionError` when a side cannot be computed, and under
    ``dev.py serve`` :class:`~course.lesson_format.background.BeingComputed` while any side is.
    """
    values: dict[tuple[str, ModelSetting | None], float] = {}
    pending: BeingComputed | None = None
    for setting in BOTH_MODES:
        for side in (comparison.left, comparison.right):
            try:
                values[side, setting] = computed_number(side, setting)
            except BeingComputed as waiting:  # dev.py serve: every side goes to the workers at once
                pending = waiting
    if pending is not None:
        raise pending
    rows = []
    for setting in BOTH_MODES:
        left, right = values[comparison.left, setting], values[comparison.right, setting]
        rows.append(ModeValues(setting, left, right, comparison.test(left, right)))
    if all(row.holds for row in rows):
        return rows, None
    held = [row.setting.name for row in rows if row.holds]
    where = f"holds {', '.join(held)} but not in every mode" if held else "holds in no mode"
    return rows, (
        f'"{comparison.text}" ({comparison.source}) {where}: ' + "; ".join(str(row) for row in rows)
    )


FIX_COMPARISON = (
    "write the conclusion the calculators support in both modes, or name the mode it depends on and quote "
    "each mode's figures"
)
