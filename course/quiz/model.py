"""Quizzes as data: the ```` ```quiz ```` block's YAML parsed into checked questions, or into problems.

A quiz is content that makes claims ("the ridge point is about 295 FLOP per byte"), so it is checked like the
prose: a numeric answer is a calculator expression evaluated at build time, never a number typed by hand, and
every mistake in a block is reported at once with the file, the question, the line and an example fix.
Everything here is a plain function of text, so the Markdown extension and the build hook share it and the
tests need no site.
"""

from __future__ import annotations

import ast
import difflib
import functools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from calculators.expressions import ExpressionError
from calculators.units import UNITS
from course.lesson_format import background
from course.lesson_format.problems import Problem
from course.numbers.extension import fill_figures
from course.numbers.value_cache import computed_number
from course.sanitising.source_files import MAX_YAML_CHARS, BoundedLoader

Kind = Literal["single", "multiple", "numeric"]
KINDS: tuple[Kind, ...] = ("single", "multiple", "numeric")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")

QUIZ_KEYS = ("questions",)
CHOICE_KEYS = ("id", "kind", "prompt", "options")
NUMERIC_KEYS = ("id", "kind", "prompt", "answer", "tolerance", "unit", "explain")
OPTION_KEYS = ("text", "correct", "explain")

EXAMPLE_CHOICE = (
    "kind: single, with options: [{text: ..., correct: true, explain: ...}, {text: ..., explain: ...}]"
)


@dataclass(frozen=True)
class Option:
    """One choice of a single- or multiple-choice question, with why it is right or wrong."""

    text: str
    correct: bool
    explain: str


@dataclass(frozen=True)
class Tolerance:
    """How far a reader's number may be from the answer: relative (``5%``) or absolute (in the unit)."""

    amount: float
    relative: bool

    def accepts(self, guess: float, answer: float) -> bool:
        """Whether ``guess`` counts as right; the page's script applies this rule to the embedded figures."""
        return abs(guess - answer) <= self.allowed_error(answer)

    def allowed_error(self, answer: float) -> float:
        return self.amount * abs(answer) if self.relative else self.amount

    def describe(self) -> str:
        """``"within 5%"`` or ``"within ±0.5"``, for the answer text."""
        return f"within {self.amount * 100:g}%" if self.relative else f"within ±{self.amount:g}"


@dataclass(frozen=True)
class ChoiceQuestion:
    """A single-choice (exactly one correct option) or multiple-choice (one or more) question."""

    id: str
    kind: Literal["single", "multiple"]
    prompt: str
    options: tuple[Option, ...]
    line: int


@dataclass(frozen=True)
class NumericQuestion:
    """A question answered with a number; ``value`` is the expression's result converted to ``unit``."""

    id: str
    prompt: str
    answer: str  # the calculator expression, kept for the record
    value: float  # in ``unit``, as the reader types it
    tolerance: Tolerance
    unit: str  # a key of calculators.units.UNITS
    explain: str
    line: int
    kind: Literal["numeric"] = "numeric"


Question = ChoiceQuestion | NumericQuestion


@dataclass(frozen=True)
class Quiz:
    """The questions of one quiz block, in order."""

    questions: tuple[Question, ...]


@dataclass(frozen=True)
class Issue:
    """A problem inside one quiz block; ``line`` counts from 1 at the block's first YAML line."""

    field: str
    message: str
    fix: str
    line: int | None = None


@dataclass(frozen=True)
class ParsedQuiz:
    """The outcome of reading a block: the quiz when it is sound, and every issue found either way."""

    quiz: Quiz | None
    issues: tuple[Issue, ...]


@dataclass(frozen=True)
class QuizFence:
    """A ```` ```quiz ```` block found in a page: its YAML and the file line of its first YAML line."""

    source: str
    first_line: int


class _LocatedDict(dict[Any, Any]):
    """A YAML mapping that remembers its own line and each key's line, so problems can point at them."""

    line: int = 0
    key_lines: dict[Any, int]
    duplicate_keys: list[tuple[Any, int]]


class _LocatingLoader(BoundedLoader):
    """Alias-free SafeLoader whose mappings are :class:`_LocatedDict` (PyYAML drops positions, duplicates)."""


def _construct_located_map(loader: _LocatingLoader, node: yaml.MappingNode) -> Iterator[_LocatedDict]:
    data = _LocatedDict()
    data.line = node.start_mark.line + 1
    data.key_lines = {}
    data.duplicate_keys = []
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=False)
        line = key_node.start_mark.line + 1
        if key in data.key_lines:
            data.duplicate_keys.append((key, line))
        data.key_lines[key] = line
        data[key] = loader.construct_object(value_node, deep=False)


_LocatingLoader.add_constructor("tag:yaml.org,2002:map", _construct_located_map)


def _closest(word: str, known: tuple[str, ...]) -> str | None:
    """The known name ``word`` most looks like, ignoring case (``flop/byte`` is ``FLOP/byte``)."""
    by_lower = {name.lower(): name for name in known}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1)
    return by_lower[close[0]] if close else None


def _suggest(word: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(word), known, n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def _unit_fix(unit: object) -> str:
    """``unit: FLOP/byte`` for a near miss; otherwise an example, with what a unit does."""
    close = _closest(str(unit), tuple(UNITS))
    if close:
        return f"unit: {close}"
    return (
        "unit: ms, for example (the answer expression gives base units: seconds, bytes, FLOP; the unit "
        "converts it to what the reader types)"
    )


class _Checker:
    """Collects issues while reading one block, so one build reports every mistake of the block."""

    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def add(self, field: str, message: str, fix: str, line: int | None) -> None:
        self.issues.append(Issue(field, message, fix, line))

    def keys(self, data: _LocatedDict, allowed: tuple[str, ...], where: str) -> None:
        for key, line in data.duplicate_keys:
            self.add(f"{where} field {key!r}", "is given twice", "keep one of the two lines", line)
        for key in data:
            if key not in allowed:
                self.add(
                    f"{where} field {key!r}",
                    f"is not a known field ({', '.join(allowed)})",
                    f"{_suggest(key, allowed)}remove or rename it",
                    data.key_lines.get(key, data.line),
                )

    def figures(self, text: str, field: str, line: int | None) -> None:
        """Each ``{{ ... }}`` quoted in a piece of quiz text must compute, like the prose's figures."""
        for source, problem, fix in fill_figures(text)[1]:
            self.add(f"{field}: number {{{{{source}}}}}", problem, fix, line)

    def text(self, data: _LocatedDict, key: str, where: str, fix: str) -> str:
        """A required, non-empty piece of text; YAML numbers are taken as written, other types are refused.

        It may quote computed figures (``{{ ... }}``), which are checked here and filled in when rendered.
        """
        line = data.key_lines.get(key, data.line)
        value = data.get(key)
        if value is None:
            self.add(f"{where} field {key!r}", "is missing or empty", fix, line)
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.add(
                f"{where} field {key!r}",
                f"must be text, got {value!r} (YAML read it as {type(value).__name__})",
                f'put the text in quotes so YAML keeps it as written: {key}: "..."'
                if isinstance(value, bool)
                else fix,
                line,
            )
            return ""
        text = str(value).strip()
        if not text:
            self.add(f"{where} field {key!r}", "is empty", fix, line)
        self.figures(text, f"{where} field {key!r}", line)
        return text


def _where(index: int, question_id: object) -> str:
    return (
        f"question {question_id!r}"
        if isinstance(question_id, str) and question_id
        else f"question {index + 1}"
    )


def _parse_tolerance(value: object) -> Tolerance | str:
    """A :class:`Tolerance`, or the reason ``value`` is not one."""
    if isinstance(value, bool) or value is None:
        return f"must be a percentage like 5% or an absolute number like 0.5, got {value!r}"
    relative = False
    if isinstance(value, str):
        text = value.strip()
        relative = text.endswith("%")
        text = text.removesuffix("%").strip()
        try:
            amount = float(text.replace(",", ""))
        except ValueError:
            return f"must be a percentage like 5% or an absolute number like 0.5, got {value!r}"
    elif isinstance(value, int | float):
        amount = float(value)
    else:
        return f"must be a percentage like 5% or an absolute number like 0.5, got {value!r}"
    if not math.isfinite(amount) or amount <= 0:
        return f"must be a finite number greater than 0, got {value!r}"
    if relative:
        if amount >= 100:
            return f"must be under 100% (it would accept almost anything), got {value!r}"
        amount /= 100
    return Tolerance(amount, relative)


def _parse_options(check: _Checker, question: _LocatedDict, kind: str, where: str) -> tuple[Option, ...]:
    raw = question.get("options")
    line = question.key_lines.get("options", question.line)
    if not isinstance(raw, list) or len(raw) < 2:
        check.add(
            f"{where} field 'options'",
            f"a {kind}-choice question needs a list of at least two options",
            "options: [{text: ..., correct: true, explain: ...}, {text: ..., explain: ...}]",
            line,
        )
        return ()
    options: list[Option] = []
    for number, entry in enumerate(raw, start=1):
        place = f"{where} option {number}"
        if not isinstance(entry, _LocatedDict):
            check.add(
                place,
                f"must be a mapping with text, explain and maybe correct, got {entry!r}",
                "- text: Memory bandwidth\n    explain: Why it is (or is not) the answer.",
                line,
            )
            continue
        check.keys(entry, OPTION_KEYS, place)
        text = check.text(entry, "text", place, "give the option's text: text: Memory bandwidth")
        explain = check.text(
            entry, "explain", place, "say why it is right or wrong: explain: That limits decode, not prefill."
        )
        correct = entry.get("correct", False)
        if not isinstance(correct, bool):
            check.add(
                f"{place} field 'correct'",
                f"must be true or false, got {correct!r}",
                "correct: true (or leave it out for a wrong option)",
                entry.key_lines.get("correct", entry.line),
            )
            correct = False
        options.append(Option(text, correct, explain))
        seen = [o.text for o in options[:-1]]
        if text and text in seen:
            check.add(
                f"{place} field 'text'",
                f"repeats option {seen.index(text) + 1}",
                "make every option different",
                entry.key_lines.get("text", entry.line),
            )
    correct_count = sum(option.correct for option in options)
    if kind == "single" and correct_count != 1 and len(options) == len(raw):
        check.add(
            f"{where} field 'options'",
            f"a single-choice question needs exactly one option with correct: true, found {correct_count}",
            "mark the one right option with correct: true, or use kind: multiple",
            line,
        )
    if kind == "multiple" and correct_count == 0 and len(options) == len(raw):
        check.add(
            f"{where} field 'options'",
            "a multiple-choice question needs at least one option with correct: true, found none",
            "mark each right option with correct: true",
            line,
        )
    return tuple(options)


def typed_by_hand(answer: str | int | float) -> bool:
    """Whether an answer is a literal (``350``, ``"989 / 3.35"``): numbers and operators, no calculator name.

    Such an answer passes every other check and the site would mark it correct, yet nothing ties it to the
    calculators: a preset corrected later would leave the quiz disagreeing with the lesson above it.
    """
    if not isinstance(answer, str):
        return True
    try:
        tree = ast.parse(answer.strip(), mode="eval")
    except SyntaxError:
        return False  # not Python at all: the expression's own error says what is wrong
    return not any(isinstance(node, ast.Name | ast.Attribute | ast.Call) for node in ast.walk(tree))


def _parse_numeric(
    check: _Checker, question: _LocatedDict, where: str, ident: str, prompt: str
) -> NumericQuestion:
    lines = question.key_lines
    unit = question.get("unit", "number")
    if not isinstance(unit, str) or unit not in UNITS:
        check.add(
            f"{where} field 'unit'",
            f"must be one of {', '.join(UNITS)}, got {unit!r}",
            _unit_fix(unit),
            lines.get("unit", question.line),
        )
        unit = "number"
    value = math.nan
    expression = question.get("answer")
    if (
        isinstance(expression, bool)
        or not isinstance(expression, str | int | float)
        or str(expression).strip() == ""
    ):
        check.add(
            f"{where} field 'answer'",
            "must be a calculator expression",
            'answer: ridge_point("h100-sxm")',
            lines.get("answer", question.line),
        )
        expression = ""
    elif typed_by_hand(expression):
        check.add(
            f"{where} field 'answer'",
            f"is a number typed by hand ({expression}); a numeric answer is a calculator expression, so "
            "that it cannot drift from the lesson's figures and presets",
            'the quantity the question asks about, e.g. answer: ridge_point("h100-sxm") '
            "(the reference for lesson authors lists them)",
            lines.get("answer", question.line),
        )
        expression = str(expression).strip()
    else:
        expression = str(expression).strip()
        try:
            with background.here():  # the page marks the reader's answer with it: never pending
                value = computed_number(expression) / UNITS[unit].scale
        except ExpressionError as error:
            check.add(
                f"{where} field 'answer'",
                str(error),
                "write an expression that gives a number, e.g. answer: Scenario().decode().time_s",
                lines.get("answer", question.line),
            )
    tolerance = _parse_tolerance(question.get("tolerance"))
    if isinstance(tolerance, str):
        check.add(
            f"{where} field 'tolerance'",
            tolerance,
            "tolerance: 5% (relative) or tolerance: 0.5 (in the unit)",
            lines.get("tolerance", question.line),
        )
        tolerance = Tolerance(0.05, relative=True)
    elif tolerance.relative and value == 0:
        check.add(
            f"{where} field 'tolerance'",
            "a relative tolerance of an answer of 0 accepts only 0 exactly",
            "give an absolute tolerance, e.g. tolerance: 0.5",
            lines.get("tolerance", question.line),
        )
    explain = check.text(
        question, "explain", where, "explain the answer: explain: 989 TFLOP/s / 3.35 TB/s ≈ 295."
    )
    return NumericQuestion(ident, prompt, expression, value, tolerance, unit, explain, question.line)


@functools.lru_cache(maxsize=256)
def parse_quiz(source: str) -> ParsedQuiz:
    """Read one quiz block's YAML; never raises on bad content, it returns every issue instead.

    Read once per block text (the result is frozen): the page check and the page both read it, and ``serve``
    reads every page again on each edit. Numeric answers come from the calculators, whose edit makes
    ``serve`` import this module afresh.
    """
    check = _Checker()
    try:
        if len(source) > MAX_YAML_CHARS:
            raise yaml.YAMLError(
                f"the quiz is {len(source):,} characters; at most {MAX_YAML_CHARS:,} are read"
            )
        data = yaml.load(source, Loader=_LocatingLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        check.add(
            "quiz YAML",
            f"cannot be read: {error.problem or error}",
            "fix the indentation or quoting there",
            mark.line + 1 if mark else None,
        )
        return ParsedQuiz(None, tuple(check.issues))
    except yaml.YAMLError as error:
        check.add("quiz YAML", f"cannot be read: {error}", "fix the YAML", None)
        return ParsedQuiz(None, tuple(check.issues))
    if (
        not isinstance(data, _LocatedDict)
        or not isinstance(data.get("questions"), list)
        or not data["questions"]
    ):
        check.add(
            "quiz",
            "needs a non-empty list under 'questions'",
            "questions:\n  - id: prefill-bound\n    kind: single\n    prompt: ...",
            1,
        )
        return ParsedQuiz(None, tuple(check.issues))
    check.keys(data, QUIZ_KEYS, "quiz")

    questions: list[Question] = []
    seen_ids: dict[str, int] = {}
    for index, raw in enumerate(data["questions"]):
        if not isinstance(raw, _LocatedDict):
            check.add(
                f"question {index + 1}",
                f"must be a mapping with id, kind and prompt, got {raw!r}",
                f"- id: my-question\n    {EXAMPLE_CHOICE}",
                data.key_lines["questions"],
            )
            continue
        where = _where(index, raw.get("id"))
        ident = raw.get("id")
        id_line = raw.key_lines.get("id", raw.line)
        if not isinstance(ident, str) or not ID_PATTERN.match(ident):
            check.add(
                f"{where} field 'id'",
                f"must be lower-case letters, digits and hyphens, got {ident!r}",
                "id: prefill-bound (unique within the page)",
                id_line,
            )
            ident = f"question-{index + 1}"
        elif ident in seen_ids:
            check.add(
                f"{where} field 'id'",
                f"repeats the id of the question on line {seen_ids[ident]}",
                "give every question of the page its own id",
                id_line,
            )
        else:
            seen_ids[ident] = id_line
        kind = raw.get("kind")
        if kind not in KINDS:
            check.add(
                f"{where} field 'kind'",
                f"must be one of {', '.join(KINDS)}, got {kind!r}",
                f"kind: {_closest(str(kind), KINDS) or 'single'}",
                raw.key_lines.get("kind", raw.line),
            )
            continue
        check.keys(raw, NUMERIC_KEYS if kind == "numeric" else CHOICE_KEYS, where)
        prompt = check.text(raw, "prompt", where, "ask the question: prompt: What limits prefill on an H100?")
        if kind == "numeric":
            questions.append(_parse_numeric(check, raw, where, ident, prompt))
        else:
            options = _parse_options(check, raw, kind, where)
            questions.append(ChoiceQuestion(ident, kind, prompt, options, raw.line))
    if check.issues:
        return ParsedQuiz(None, tuple(check.issues))
    return ParsedQuiz(Quiz(tuple(questions)), ())


_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)$")


def find_quiz_fences(markdown: str, first_line: int = 1) -> list[QuizFence]:
    """Every top-level ```` ```quiz ```` block of a page, skipping quizzes quoted inside other fences.

    ``first_line`` is the file line of ``markdown``'s first line (MkDocs hands hooks the page without its
    front matter, so the caller adds the front matter's length to keep line numbers true to the file).
    """
    lines = markdown.splitlines()
    fences: list[QuizFence] = []
    index = 0
    while index < len(lines):
        opening = _FENCE_OPEN.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        info = opening["info"].strip().lstrip(".").strip("{} ").split()
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = index + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        if info and info[0].lstrip(".") == "quiz":
            body = [
                line[len(indent) :] if line.startswith(indent) else line.lstrip()
                for line in lines[index + 1 : end]
            ]
            fences.append(QuizFence("\n".join(body), first_line + index + 1))
        index = end + 1
    return fences


LONGEST_CORRECT_SHARE = 1 / 3
"""The most single-choice questions of a page whose right option may be the longest one.

Writers tend to qualify the right answer until it is the most careful, and so the longest, option; a reader
who has learnt nothing then scores well by picking the longest. A third is what chance gives with three or
four options, so above it length starts to give the key away (shuffling the options hides their order, not
their length)."""


def correct_is_longest(question: ChoiceQuestion) -> bool:
    """Whether the one right option of a single-choice question is strictly longer than every other."""
    right = [option for option in question.options if option.correct]
    if question.kind != "single" or len(right) != 1:
        return False
    others = [len(option.text) for option in question.options if not option.correct]
    return bool(others) and len(right[0].text) > max(others)


def _longest_correct_problem(singles: list[tuple[ChoiceQuestion, int]], path: str) -> Problem | None:
    """One problem naming every single-choice question whose right option is longest, when too many are.

    ``singles`` holds a page's single-choice questions with their file lines; a page passes while at most
    a third of them (rounded down) have the right option as the longest.
    """
    flagged = [(question, line) for question, line in singles if correct_is_longest(question)]
    allowed = int(len(singles) * LONGEST_CORRECT_SHARE)
    if len(flagged) <= allowed:
        return None
    named = ", ".join(f"{question.id!r} (line {line})" for question, line in flagged)
    return Problem(
        path,
        "quiz options",
        f"the right option is the longest in {len(flagged)} of the page's {len(singles)} single-choice "
        f"questions ({named}); at most {allowed} may be, or a reader can pick the longest option and pass",
        f"in {len(flagged) - allowed} of them, shorten the right option (keep its detail for its explain) "
        "or give a wrong option the same care and length",
        flagged[0][1],
    )


def find_problems(markdown: str, path: str, *, first_line: int = 1) -> list[Problem]:
    """Every problem of every quiz in a page, with file lines; also ids repeated across a page's quizzes,
    and a right option that is the longest in too many of the page's single-choice questions.

    ``path`` is the page's path relative to docs/ (e.g. ``inference/prefill-vs-decode.md``); ``first_line``
    is the file line where ``markdown`` starts (see :func:`find_quiz_fences`).
    """
    problems: list[Problem] = []
    seen_ids: dict[str, int] = {}
    singles: list[tuple[ChoiceQuestion, int]] = []
    for fence in find_quiz_fences(markdown, first_line):
        parsed = parse_quiz(fence.source)
        for issue in parsed.issues:
            line = fence.first_line + issue.line - 1 if issue.line else fence.first_line - 1
            problems.append(Problem(path, issue.field, issue.message, issue.fix, line))
        if parsed.quiz is None:
            continue
        for question in parsed.quiz.questions:
            line = fence.first_line + question.line - 1
            if isinstance(question, ChoiceQuestion) and question.kind == "single":
                singles.append((question, line))
            if question.id in seen_ids:
                problems.append(
                    Problem(
                        path,
                        f"question {question.id!r} field 'id'",
                        f"repeats the id of the question on line {seen_ids[question.id]}",
                        "give every question of the page its own id",
                        line,
                    )
                )
            else:
                seen_ids[question.id] = line
    longest = _longest_correct_problem(singles, path)
    if longest is not None:
        problems.append(longest)
    return problems
