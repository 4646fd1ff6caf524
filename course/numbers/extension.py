"""Numbers in prose: quantities inserted from the calculators, and rounded claims checked against them.

A lesson never types a computed figure by hand. It either inserts one::

    {{ Scenario().decode().time_s | ms | .1f }}          ->  6.7 ms

or writes the figure the way prose rounds it, and states how far that rounding may be from the truth::

    {{ "about 7 ms" == Scenario().decode().time_s | ms | within 10% }}   ->  about 7 ms

(computed in the site's model setting, :mod:`calculators.setting`). Change a preset so that "about 7 ms" is no
longer true, and the build fails naming lesson, claim, stated and
computed values. The pure functions here (:func:`find_numbers`, :func:`parse_number`,
:func:`evaluate_reference`, :func:`find_problems`) serve both the Markdown extension and the validation.
"""

from __future__ import annotations

import contextlib
import difflib
import html
import math
import re
import xml.etree.ElementTree as etree
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from markdown import Extension, Markdown
from markdown.inlinepatterns import InlineProcessor
from markdown.preprocessors import Preprocessor
from markdown.util import ETX, STX, AtomicString

from calculators.expressions import ExpressionError
from calculators.setting import SPEC_PEAK
from calculators.units import UNITS, format_value, with_bound
from course.lesson_format import background
from course.lesson_format.background import BeingComputed
from course.lesson_format.problems import Problem
from course.numbers.comparisons import (
    EXAMPLE_COMPARISON,
    FIX_COMPARISON,
    ComparisonSyntaxError,
    evaluate_comparison,
    is_comparison,
    parse_comparison,
)
from course.numbers.departures import unnamed_departure
from course.numbers.value_cache import computed_number
from course.sanitising.trusted import store_trusted

NUMBER_RE = re.compile(r"\{\{(?P<body>.+?)\}\}")
CLAIM_RE = re.compile(r"""^\s*(?P<q>["'])(?P<text>.*?)(?P=q)\s*==\s*(?P<rest>.+)$""", re.DOTALL)
FORMAT_RE = re.compile(r"^(?:\.(?P<decimals>\d)f|(?P<digits>[1-9])sig)$")
TOLERANCE_RE = re.compile(r"^within\s+(?P<amount>\d+(?:\.\d+)?)\s*(?P<percent>%?)$")
STATED_NUMBER_RE = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
# Prose spells small numbers out ("about seven decode steps"); those are checked too.
_UNITS_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty"
)
NUMBER_WORDS = {word: value for value, word in enumerate(_UNITS_WORDS.split(" "))} | {
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
SPELLED = {value: word for word, value in NUMBER_WORDS.items()}
NUMBER_WORD_RE = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
CODE_SPAN_RE = re.compile(r"(`+)(?:.+?)\1")
# A "|" escaped for a table cell, as Python-Markdown's escape pattern leaves it: STX, ord("|"), ETX.
ESCAPED_PIPE_RE = re.compile(re.escape(STX) + str(ord("|")) + re.escape(ETX) + r"|\\\|")
BOUND_OPTION = "bound"
EXAMPLE_INSERT = "{{ Scenario().decode().time_s | ms | .1f }}"
EXAMPLE_CLAIM = '{{ "about 7 ms" == Scenario().decode().time_s | ms | within 10% }}'


class NumberSyntaxError(ValueError):
    """A ``{{ ... }}`` that does not follow the syntax; the message says what was expected.

    ``fix`` is the corrected reference when one can be guessed (a misspelt unit), else empty.
    """

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.fix = fix


@dataclass(frozen=True)
class Tolerance:
    """How far a stated figure may be from the computed one: relative (``10%``) or absolute (in the unit)."""

    amount: float
    relative: bool

    def allows(self, stated: float, computed: float) -> bool:
        allowed = self.amount / 100 * abs(computed) if self.relative else self.amount
        return abs(stated - computed) <= allowed * (1 + 1e-12)

    def __str__(self) -> str:
        return f"{self.amount:g}%" if self.relative else f"{self.amount:g}"


@dataclass(frozen=True)
class NumberReference:
    """One ``{{ ... }}`` of a page: an insertion (``quoted is None``) or a checked claim."""

    source: str  # the text between the braces
    expression: str
    unit: str
    decimals: int | None = None
    digits: int | None = None
    quoted: str | None = None
    tolerance: Tolerance | None = None
    bound: bool = False  # print the spec-peak bound beside the figure: "6.5 ms (bound 4.78 ms)"

    @property
    def is_claim(self) -> bool:
        return self.quoted is not None


@dataclass(frozen=True)
class Evaluated:
    """A reference with its computed value: ``text`` is what the page shows, ``problem`` what is wrong."""

    reference: NumberReference
    value: float | None  # in base units (seconds, bytes, FLOP ...)
    text: str
    problem: str | None = None
    fix: str | None = None
    bound_value: float | None = None  # at spec peaks, for ``| bound``
    pending: bool = False  # under dev.py serve: being computed by a worker (course.lesson_format.background)


def parse_number(source: str) -> NumberReference:
    """Parse the inside of ``{{ ... }}``; raises :class:`NumberSyntaxError` explaining the expected form."""
    body = source.strip()
    quoted: str | None = None
    claim = CLAIM_RE.match(body)
    if claim:
        quoted, body = claim.group("text"), claim.group("rest")
    elif body.startswith(("'", '"')):
        raise NumberSyntaxError(
            f'a quoted claim is written `"text" == EXPRESSION | UNIT | within N%`, e.g. {EXAMPLE_CLAIM}'
        )
    parts = [part.strip() for part in body.split("|")]
    bound = len(parts) > 2 and parts[-1] == BOUND_OPTION
    if bound:
        parts = parts[:-1]
    reference = _parse_parts(source, quoted, parts)
    return replace(reference, bound=True) if bound else reference


def _parse_parts(source: str, quoted: str | None, parts: list[str]) -> NumberReference:
    """:func:`parse_number` once the claim's text and the ``| bound`` option are taken off."""
    if len(parts) < 2 or not parts[0] or not parts[1]:
        example = EXAMPLE_CLAIM if quoted is not None else EXAMPLE_INSERT
        raise NumberSyntaxError(
            f"expected EXPRESSION | UNIT{' | within N%' if quoted is not None else ''}, e.g. {example}"
        )
    expression, unit, options = parts[0], parts[1], parts[2:]
    if unit not in UNITS:
        close = [name for name in UNITS if name.lower() == unit.lower()] or difflib.get_close_matches(
            unit, UNITS, n=1, cutoff=0.6
        )
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        claimed = f'"{quoted}" == ' if quoted is not None else ""
        fix = "{{ " + claimed + " | ".join([expression, close[0], *options]) + " }}" if close else ""
        raise NumberSyntaxError(f"unknown unit {unit!r}{hint}; expected one of {', '.join(UNITS)}", fix)
    if len(options) > 1:
        raise NumberSyntaxError(f"expected at most one option after the unit, got {' | '.join(options)!r}")
    option = options[0] if options else None
    if quoted is not None:
        if option is None:
            raise NumberSyntaxError(
                f"a claim needs a tolerance such as `| within 10%` or `| within 0.5`: {EXAMPLE_CLAIM}"
            )
        tolerance = TOLERANCE_RE.match(option)
        if not tolerance:
            raise NumberSyntaxError(
                f"expected a tolerance `within 10%` (relative) or `within 0.5` (in {unit}), got {option!r}"
            )
        amount = float(tolerance.group("amount"))
        return NumberReference(
            source,
            expression,
            unit,
            quoted=quoted,
            tolerance=Tolerance(amount, relative=bool(tolerance.group("percent"))),
        )
    if option is None:
        return NumberReference(source, expression, unit)
    chosen = FORMAT_RE.match(option)
    if not chosen:
        raise NumberSyntaxError(
            f"expected a format `.1f` (decimals) or `2sig` (significant figures), got {option!r}"
        )
    if chosen.group("decimals") is not None:
        return NumberReference(source, expression, unit, decimals=int(chosen.group("decimals")))
    return NumberReference(source, expression, unit, digits=int(chosen.group("digits")))


def stated_value(text: str) -> float | None:
    """The first number written in ``text`` ("about 1,200 tokens" -> 1200.0, "seven" -> 7.0), else None."""
    match = STATED_NUMBER_RE.search(text)
    if match:
        return float(match.group(0).replace(",", ""))
    word = NUMBER_WORD_RE.search(text)
    return float(NUMBER_WORDS[word.group(1).lower()]) if word else None


_compute = computed_number  # kept in memory and on disk: course.numbers.value_cache


def evaluate_reference(reference: NumberReference) -> Evaluated:
    """Compute a reference under the course's setting and, for a claim, check the stated figure against it;
    with ``| bound``, the same expression at spec peaks is printed beside it ("6.5 ms (bound 4.78 ms)")."""
    result = _evaluate_figure(reference)
    if reference.bound and result.pending:
        # dev.py serve: the bound goes to the workers with the figure, not on the rebuild that follows.
        with contextlib.suppress(BeingComputed, ExpressionError):
            _compute(reference.expression, SPEC_PEAK)
    if not reference.bound or result.problem or result.pending:
        return result
    try:
        bound = _compute(reference.expression, SPEC_PEAK)
    except BeingComputed:
        return _pending(reference)
    except ExpressionError as error:
        return replace(result, problem=f"its bound at spec peaks: {error}", fix=error.fix)
    digits, decimals = reference.digits, reference.decimals
    shown = format_value(bound, reference.unit, digits=digits, decimals=decimals)
    # A figure that is its own bound (a spec-peak setting) is printed once: compared as computed, not quoted.
    estimate = None
    if result.value is not None:
        estimate = format_value(result.value, reference.unit, digits=digits, decimals=decimals)
    return replace(result, text=with_bound(result.text, shown, estimate=estimate), bound_value=bound)


def _evaluate_figure(reference: NumberReference) -> Evaluated:
    """Compute a reference and, for a claim, check the stated figure against it."""
    try:
        value = _compute(reference.expression)
    except BeingComputed:
        return _pending(reference)
    except ExpressionError as error:
        return Evaluated(
            reference,
            None,
            reference.quoted or reference.source.strip(),
            str(error),
            error.fix,
        )
    computed = format_value(value, reference.unit, digits=reference.digits, decimals=reference.decimals)
    if value != 0 and not any(c in "123456789" for c in computed.removesuffix(UNITS[reference.unit].suffix)):
        # "0 billion" for 131,072 bytes: a figure that is not zero must not read as one.
        return Evaluated(
            reference,
            value,
            computed,
            f"{reference.expression} is {value:g} but reads {computed.strip()!r} in unit {reference.unit!r}",
            "use a unit in which it is at least 1 (`| bytes`, not `| B`: billions), or more decimals",
        )
    if not reference.is_claim:
        return Evaluated(reference, value, computed)
    assert reference.quoted is not None
    assert reference.tolerance is not None
    stated = stated_value(reference.quoted)
    if stated is None:
        return Evaluated(
            reference,
            value,
            reference.quoted,
            f'the quoted text "{reference.quoted}" has no number to check',
            f'quote the figure as written in the prose, e.g. "about {computed}"',
        )
    in_unit = value / UNITS[reference.unit].scale
    if not reference.tolerance.allows(stated, in_unit):
        off = abs(stated - in_unit) / abs(in_unit) * 100 if in_unit else math.inf
        return Evaluated(
            reference,
            value,
            reference.quoted,
            f'"{reference.quoted}" states {stated:g} {reference.unit} but {reference.expression} gives '
            f"{computed} ({in_unit:.4g} {reference.unit}), {off:.0f}% off, beyond the tolerance "
            f"{reference.tolerance}",
            f'write the figure the calculators give, e.g. "{_rewrite(reference.quoted, in_unit)}"',
        )
    return Evaluated(reference, value, reference.quoted)


def _pending(reference: NumberReference) -> Evaluated:
    """A figure whose value a worker is computing (serve only): shown as pending, checked when it is done."""
    return Evaluated(reference, None, background.PENDING_TEXT, pending=True)


def _rewrite(quoted: str, value: float) -> str:
    """``quoted`` with its first number replaced by ``value`` rounded like the original (a fix to suggest)."""
    match = STATED_NUMBER_RE.search(quoted)
    if match is None:
        word = NUMBER_WORD_RE.search(quoted)
        assert word is not None
        spelled = {number: name for name, number in NUMBER_WORDS.items()}.get(
            round(value), f"{round(value):,}"
        )
        return quoted[: word.start()] + spelled + quoted[word.end() :]
    original = match.group(0)
    decimals = len(original.split(".")[1]) if "." in original else 0
    figures = len(original.replace(",", "").replace(".", "").lstrip("-+0")) or 1
    rounded = (
        round(value, decimals)
        if decimals
        else round(value, figures - 1 - math.floor(math.log10(abs(value))))
        if value
        else 0
    )
    text = f"{rounded:,.{decimals}f}" if "," in original else f"{rounded:.{decimals}f}"
    return quoted[: match.start()] + text + quoted[match.end() :]


def prose_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """``(index, line with its code spans blanked)`` of each line outside fenced code: where numbers live,
    and where the glossary check looks for terms (course.lesson_format.glossary)."""
    fence: str | None = None
    for index, line in enumerate(lines):
        opening = FENCE_RE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and line.strip().strip(fence[0]) == "":
                fence = None
            continue
        yield index, CODE_SPAN_RE.sub(lambda m: " " * len(m.group(0)), line)


def find_numbers(markdown: str) -> list[tuple[int, str]]:
    """Every ``{{ ... }}`` of a page outside code, with its 1-based line: ``[(line, inside), ...]``."""
    return [
        (index + 1, m.group("body"))
        for index, visible in prose_lines(markdown.split("\n"))
        for m in NUMBER_RE.finditer(visible)
    ]


def protect_pipes_in_table_rows(markdown: str) -> str:
    """Escape the ``|`` of every ``{{ ... }}`` on a line that is a table row, so the table keeps its cells.

    A table splits its rows on ``|`` before any inline pattern runs, so ``| {{ x | ms }} |`` would lose the
    number to three cells. ``\\|`` is a pipe inside a cell; the inline processor reads it back as ``|``.
    A line is a table row when it has a ``|`` outside its numbers and code spans; others stay as written.
    """
    lines = markdown.split("\n")
    for index, visible in list(prose_lines(lines)):
        line = lines[index]
        numbers = list(NUMBER_RE.finditer(visible))
        outside = NUMBER_RE.sub(lambda m: " " * len(m.group(0)), visible)
        if not numbers or "|" not in outside:
            continue
        for match in reversed(numbers):
            escaped = re.sub(r"(?<!\\)\|", r"\\|", line[match.start() : match.end()])
            line = line[: match.start()] + escaped + line[match.end() :]
        lines[index] = line
    return "\n".join(lines)


def find_problems(markdown: str, path: str) -> list[Problem]:
    """Every number of a page that is malformed, cannot be computed, or is a claim beyond its tolerance."""
    problems: list[Problem] = []
    lines = markdown.split("\n")
    for line, source in find_numbers(markdown):
        label = f"number {{{{{source}}}}}"
        departure = unnamed_departure(source, lines[line - 1])
        if departure is not None:
            problems.append(Problem(path, label, departure[0], departure[1], line))
        if is_comparison(source):
            problem = comparison_problem(source)
            if problem is not None:
                problems.append(Problem(path, problem[0], problem[1], problem[2], line))
            continue
        try:
            reference = parse_number(source)
        except NumberSyntaxError as error:
            example = EXAMPLE_CLAIM if "==" in source else EXAMPLE_INSERT
            problems.append(Problem(path, label, str(error), error.fix or example, line))
            continue
        result = evaluate_reference(reference)
        if result.problem:
            field = f'claim "{reference.quoted}"' if reference.is_claim else label
            problems.append(Problem(path, field, result.problem, result.fix or EXAMPLE_INSERT, line))
    return problems


def fill_figures(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """``text`` with each ``{{ ... }}`` replaced by the figure it computes, and what is wrong with any that
    fails, as ``(source, problem, fix)``.

    For short texts outside the prose, such as a quiz's explanations, which another block renders: they quote
    computed figures exactly as the prose does, checked by the same rules.
    """
    problems: list[tuple[str, str, str]] = []

    def figure(match: re.Match[str]) -> str:
        source = match.group("body")
        departure = unnamed_departure(source, text)
        if departure is not None:
            problems.append((source, *departure))
        if is_comparison(source):
            problem = comparison_problem(source)
            if problem is not None:
                problems.append((source, problem[1], problem[2]))
            return comparison_text(source)
        try:
            reference = parse_number(source)
        except NumberSyntaxError as error:
            example = EXAMPLE_CLAIM if "==" in source else EXAMPLE_INSERT
            problems.append((source, str(error), error.fix or example))
            return match.group(0)
        result = evaluate_reference(reference)
        if result.problem:
            problems.append((source, result.problem, result.fix or EXAMPLE_INSERT))
        return result.text

    return NUMBER_RE.sub(figure, text), problems


def render_html(source: str) -> etree.Element:
    """The ``<span>`` a page shows for one ``{{ ... }}``; it carries the value for tests and tooltips."""
    span = etree.Element("span")
    if is_comparison(source):
        return comparison_html(source)
    try:
        reference = parse_number(source)
    except NumberSyntaxError as error:
        span.set("class", "rp-number rp-number--error")
        span.set("title", str(error))
        span.text = AtomicString(f"{{{{{source}}}}}")
        return span
    result = evaluate_reference(reference)
    classes = (
        ["rp-number"]
        + (["rp-number--claim"] if reference.is_claim else [])
        + (["rp-number--error"] if result.problem else [])
        + (["rp-number--pending"] if result.pending else [])
    )
    span.set("class", " ".join(classes))
    span.set("data-expr", reference.expression)
    span.set("data-unit", reference.unit)
    if result.value is not None:
        span.set("data-value", repr(result.value))
        computed = format_value(result.value, reference.unit)
        if reference.is_claim:
            span.set("data-tolerance", str(reference.tolerance))
            span.set(
                "title", f"Computed by the calculators: {computed} (checked within {reference.tolerance})"
            )
        else:
            fmt = (
                f".{reference.decimals}f" if reference.decimals is not None else f"{reference.digits or 3}sig"
            )
            span.set("data-format", fmt)
            span.set("title", f"Computed by the calculators: {reference.expression}")
    if result.problem:
        span.set("title", result.problem)
    if result.pending:
        span.set("title", background.PENDING_TITLE)
    span.text = AtomicString(result.text)
    return span


def comparison_problem(source: str) -> tuple[str, str, str] | None:
    """``(field, problem, fix)`` for a comparative claim that is malformed, fails to compute, or does not hold
    in every mode (:mod:`course.numbers.comparisons`); None when it holds."""
    try:
        comparison = parse_comparison(source)
    except ComparisonSyntaxError as error:
        return f"number {{{{{source}}}}}", str(error), EXAMPLE_COMPARISON
    field = f'claim "{comparison.text}"'
    try:
        _, problem = evaluate_comparison(comparison)
    except BeingComputed:
        return None  # checked on the rebuild that follows, when its sides are computed (serve only)
    except ExpressionError as error:
        return field, str(error), error.fix
    return (field, problem, FIX_COMPARISON) if problem else None


def comparison_text(source: str) -> str:
    """What the page shows for a comparative claim: its quoted text (the source, if it does not parse)."""
    try:
        return parse_comparison(source).text
    except ComparisonSyntaxError:
        return f"{{{{{source}}}}}"


def comparison_html(source: str) -> etree.Element:
    """The ``<span>`` of a comparative claim: its text, with each mode's two sides in the tooltip."""
    span = etree.Element("span")
    span.text = AtomicString(comparison_text(source))
    problem = comparison_problem(source)
    # Not an rp-number: it has no single value; tests/site/test_site_build.py checks it in both modes.
    span.set("class", "rp-comparison" + (" rp-number--error" if problem else ""))
    if problem is not None:
        span.set("title", problem[1])
        return span
    comparison = parse_comparison(source)
    try:
        rows, _ = evaluate_comparison(comparison)
    except BeingComputed:
        span.set("class", "rp-comparison rp-number--pending")
        span.set("title", "Not checked yet: its figures are being computed in the background")
        return span
    span.set("data-expr", comparison.source)
    span.set("title", "Checked in both modes: " + "; ".join(str(row) for row in rows))
    return span


class NumberInlineProcessor(InlineProcessor):
    """Replaces ``{{ ... }}`` in prose (code spans and fences are left alone: they are handled earlier)."""

    def handleMatch(  # type: ignore[override]  # InlineProcessor's (m, data); the stubs give Pattern's
        self, m: re.Match[str], data: str
    ) -> tuple[str, int, int]:
        # A pipe escaped in a table cell reaches here as the escape pattern's placeholder: read it back.
        body = ESCAPED_PIPE_RE.sub("|", self.unescape(m.group("body")))
        span = etree.tostring(render_html(html.unescape(body)), encoding="unicode")
        return store_trusted(self.md, span), m.start(0), m.end(0)


class TableRowNumberPreprocessor(Preprocessor):
    """Escapes the pipes of numbers in table rows before the table splits them (see
    :func:`protect_pipes_in_table_rows`)."""

    def run(self, lines: list[str]) -> list[str]:
        return protect_pipes_in_table_rows("\n".join(lines)).split("\n")


class NumbersExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # After fenced code is stashed (25), long before the table block processor splits rows on "|".
        md.preprocessors.register(TableRowNumberPreprocessor(md), "rp_number_table_pipes", 20)
        # After code spans (190) and escapes (180), before links and emphasis, so `time_s` stays intact.
        md.inlinePatterns.register(NumberInlineProcessor(NUMBER_RE.pattern, md), "rp_number", 175)


def makeExtension(**kwargs: Any) -> Extension:
    return NumbersExtension(**kwargs)
