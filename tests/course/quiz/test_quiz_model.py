"""Quiz parsing, validation and rendering, as plain functions of text (no site build)."""

from __future__ import annotations

import collections
import dataclasses
import re
import textwrap

import markdown
import pytest

from calculators import Scenario, ridge_point
from calculators.setting import site_setting, using
from course.quiz.extension import find_problems
from course.quiz.html import (
    _numeric_answer_text,
    accepted_range,
    display_order,
    inline_renderer,
    render_quiz,
)
from course.quiz.model import (
    ChoiceQuestion,
    NumericQuestion,
    Tolerance,
    find_quiz_fences,
    parse_quiz,
)
from tests.conftest import ROOT

GOOD = textwrap.dedent(
    """\
    questions:
      - id: prefill-bound
        kind: single
        prompt: What limits prefill of a 2,000-token prompt on an H100?
        options:
          - text: Compute
            correct: true
            explain: Each weight is used for all 2,000 tokens.
          - text: Memory bandwidth
            explain: That limits decode.
      - id: phases
        kind: multiple
        prompt: Which are true?
        options:
          - text: Prefill is compute-bound
            correct: true
            explain: Its intensity is far above the ridge point.
          - text: Decode is memory-bound
            correct: true
            explain: Its intensity is about one FLOP per byte.
          - text: Both are bound by capacity
            explain: Capacity decides what fits, not how fast.
      - id: ridge
        kind: numeric
        prompt: What is the ridge point of an H100 SXM in BF16?
        answer: ridge_point("h100-sxm")
        tolerance: 5%
        unit: FLOP/byte
        explain: 989.4 TFLOP/s over 3.35 TB/s.
      - id: step
        kind: numeric
        prompt: How long is one decode step, in milliseconds?
        answer: Scenario().decode().time_s
        tolerance: 0.5
        unit: ms
        explain: The weights' bytes over the bandwidth.
    """
)


def test_good_quiz_parses_into_questions() -> None:
    parsed = parse_quiz(GOOD)
    assert parsed.issues == ()
    assert parsed.quiz is not None
    single, multiple, *_numeric = parsed.quiz.questions
    assert isinstance(single, ChoiceQuestion)
    assert single.kind == "single"
    assert [o.correct for o in single.options] == [True, False]
    assert isinstance(multiple, ChoiceQuestion)
    assert [o.correct for o in multiple.options] == [True, True, False]
    assert single.line == 2
    assert multiple.line == 11


def test_numeric_answer_is_computed_by_the_calculators_in_the_display_unit() -> None:
    quiz = parse_quiz(GOOD).quiz
    assert quiz is not None
    ridge, step = quiz.questions[2], quiz.questions[3]
    assert isinstance(ridge, NumericQuestion)
    assert isinstance(step, NumericQuestion)
    assert ridge.value == pytest.approx(ridge_point("h100-sxm"))
    assert ridge.tolerance == Tolerance(0.05, relative=True)
    with using(site_setting()):  # a quiz's answer is computed in the site's model setting, as its prose is
        step_s = Scenario().decode().time_s  # calibrated, 6.68 ms (the spec-peak bound: 4.78 ms)
    assert step.value == pytest.approx(step_s * 1e3)  # seconds shown as ms
    assert step.tolerance == Tolerance(0.5, relative=False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5%", Tolerance(0.05, True)),
        (" 12.5 % ", Tolerance(0.125, True)),
        (0.5, Tolerance(0.5, False)),
        (2, Tolerance(2.0, False)),
        ("1,000", Tolerance(1000.0, False)),
    ],
)
def test_tolerance_forms(text: object, expected: Tolerance) -> None:
    source = GOOD.replace(
        "tolerance: 5%", f"tolerance: {text!r}" if not isinstance(text, str) else f"tolerance: '{text}'"
    )
    quiz = parse_quiz(source).quiz
    assert quiz is not None
    assert quiz.questions[2].tolerance == expected  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", ["0", "-1", "0%", "100%", "'5 percent'", "true", ".nan", ".inf"])
def test_bad_tolerances_are_refused(bad: str) -> None:
    parsed = parse_quiz(GOOD.replace("tolerance: 5%", f"tolerance: {bad}"))
    assert parsed.quiz is None
    assert [issue.field for issue in parsed.issues] == ["question 'ridge' field 'tolerance'"]
    assert parsed.issues[0].line == 27


def test_tolerance_accepts_the_boundary_and_rejects_beyond() -> None:
    relative = Tolerance(0.05, relative=True)
    assert relative.accepts(105, 100)
    assert relative.accepts(95, 100)
    assert not relative.accepts(105.01, 100)
    absolute = Tolerance(0.5, relative=False)
    assert absolute.accepts(4.3, 4.78)
    assert not absolute.accepts(4.2, 4.78)


def test_relative_tolerance_of_a_zero_answer_is_refused() -> None:
    parsed = parse_quiz(
        GOOD.replace('answer: ridge_point("h100-sxm")', 'answer: ridge_point("h100-sxm") * 0')
    )
    assert parsed.quiz is None
    assert "accepts only 0 exactly" in parsed.issues[0].message


@pytest.mark.parametrize("answer", ["350", "295.3", "989 / 3.35", "'350'", "1e3"])
def test_a_number_typed_by_hand_is_refused_as_an_answer(answer: str) -> None:
    # The right answer is 295; a literal 350 used to pass check and build, and the site marked 350 correct.
    parsed = parse_quiz(GOOD.replace('answer: ridge_point("h100-sxm")', f"answer: {answer}"))
    assert parsed.quiz is None
    (issue,) = parsed.issues
    assert issue.field.endswith("field 'answer'")
    assert "typed by hand" in issue.message
    assert 'answer: ridge_point("h100-sxm")' in issue.fix


def test_yaml_booleans_in_text_are_refused_with_a_quoting_fix() -> None:
    parsed = parse_quiz(GOOD.replace("text: Memory bandwidth", "text: Yes"))
    assert parsed.quiz is None
    (issue,) = parsed.issues
    assert issue.field == "question 'prefill-bound' option 2 field 'text'"
    assert "quotes" in issue.fix


def test_numbers_in_text_are_kept_as_written() -> None:
    quiz = parse_quiz(GOOD.replace("text: Memory bandwidth", "text: 295")).quiz
    assert quiz is not None
    assert quiz.questions[0].options[1].text == "295"  # type: ignore[union-attr]


def test_every_mistake_of_a_block_is_reported_at_once() -> None:
    source = GOOD.replace("kind: multiple", "kind: several").replace("tolerance: 0.5", "tolerance: -2")
    source = source.replace("id: ridge", "id: Ridge Point")
    fields = [issue.field for issue in parse_quiz(source).issues]
    assert fields == [
        "question 'phases' field 'kind'",
        "question 'Ridge Point' field 'id'",
        "question 'step' field 'tolerance'",
    ]


def test_questions_need_a_list() -> None:
    for source in ("", "questions: []", "questions: hello", "- id: x"):
        parsed = parse_quiz(source)
        assert parsed.quiz is None
        assert parsed.issues[0].field == "quiz"


def test_duplicate_yaml_keys_are_reported() -> None:
    parsed = parse_quiz(GOOD.replace("    unit: ms\n", "    unit: ms\n    unit: s\n"))
    assert [i.message for i in parsed.issues] == ["is given twice"]


def test_fences_are_found_with_file_lines_and_quoted_examples_skipped() -> None:
    page = textwrap.dedent(
        """\
        # Title

        ````markdown
        ```quiz
        questions: []
        ```
        ````

        !!! note

            ```quiz
            questions:
              - id: a
            ```

        ~~~ quiz
        questions: 2
        ~~~
        """
    )
    fences = find_quiz_fences(page, first_line=5)
    assert [(f.first_line, f.source) for f in fences] == [
        (5 + 11, "questions:\n  - id: a"),
        (5 + 16, "questions: 2"),
    ]


def test_find_problems_on_a_good_page_finds_none() -> None:
    page = "# Lesson\n\n## Check your understanding\n\n```quiz\n" + GOOD + "```\n"
    assert find_problems(page, "inference/lesson.md") == []


def test_inline_markdown_formats_but_never_injects_html() -> None:
    render = inline_renderer()
    assert render("the `ridge` point, *roughly*") == "the <code>ridge</code> point, <em>roughly</em>"
    assert "<script>" not in render("<script>alert(1)</script> & more")
    assert "&lt;script&gt;" in render("<script>alert(1)</script>")


def test_rendered_quiz_carries_controls_answers_and_the_key() -> None:
    quiz = parse_quiz(GOOD).quiz
    assert quiz is not None
    html = render_quiz(quiz)
    assert html.count('type="radio" name="quiz-prefill-bound"') == 2
    assert html.count('type="checkbox" name="quiz-phases"') == 3
    assert 'id="quiz-ridge-input" type="text" inputmode="decimal"' in html
    # Numeric answers travel as computed figures, never as expressions.
    ridge = float(re.search(r'data-question="ridge"[^>]*data-answer="([^"]+)"', html).group(1))  # type: ignore[union-attr]
    allowed = float(re.search(r'data-question="ridge"[^>]*data-allowed-error="([^"]+)"', html).group(1))  # type: ignore[union-attr]
    assert ridge == pytest.approx(ridge_point("h100-sxm"))
    assert allowed == pytest.approx(0.05 * ridge)
    assert "ridge_point(" not in html
    # No-JS: each question's answer sits in a collapsed <details>; print: one key entry per question.
    assert html.count('<details class="rp-quiz__answer" data-search-exclude>') == 4
    assert "<details open" not in html
    key = html.split('class="rp-quiz__key"', 1)[1]
    assert key.count("<li value=") == 4
    assert "Answer: B." in key  # options shuffled by the question's id: the right one is shown second
    assert "Answers: A, B." in key
    assert "Answer: 295 FLOP/byte" in key
    assert "within 5%: 281 to 310 FLOP/byte" in key
    assert 'data-low="281.0" data-high="310.0"' in html  # accepted exactly as stated, both ends included
    assert "Answer: 6.68 ms" in key  # the course's calibrated step (the spec-peak bound: 4.78 ms)


def test_extension_renders_the_fence_inside_a_page() -> None:
    page = "Intro.\n\n```quiz\n" + GOOD + "```\n\n```python\nprint(1)\n```\n"
    html = markdown.markdown(page, extensions=["pymdownx.superfences", "course.quiz.extension"])
    assert html.count('class="rp-quiz"') == 1
    assert "print" in html  # other fences are untouched


def test_extension_loads_superfences_itself_when_missing() -> None:
    html = markdown.markdown("```quiz\n" + GOOD + "```\n", extensions=["course.quiz.extension"])
    assert 'class="rp-quiz"' in html


@pytest.mark.parametrize(
    ("unit", "fix"), [("flop/byte", "unit: FLOP/byte"), ("fortnights", "unit: ms, for example")]
)
def test_unit_fix_is_the_near_miss_or_a_plain_example(unit: str, fix: str) -> None:
    parsed = parse_quiz(GOOD.replace("unit: FLOP/byte", f"unit: {unit}"))
    (issue,) = parsed.issues
    assert issue.fix.startswith(fix)


def test_options_are_shuffled_by_a_seed_from_the_question_id() -> None:
    quiz = parse_quiz(GOOD).quiz
    assert quiz is not None
    first = quiz.questions[1]
    assert isinstance(first, ChoiceQuestion)
    order = display_order(first)
    assert sorted(order) == [0, 1, 2]
    assert display_order(first) == order  # stable: the same id gives the same order, build after build
    orders = {tuple(display_order(dataclasses.replace(first, id=f"q-{n}"))) for n in range(30)}
    assert len(orders) >= 4, "the id must actually drive the shuffle"


def _course_choice_questions() -> list[ChoiceQuestion]:
    questions = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for fence in find_quiz_fences(page.read_text(encoding="utf-8")):
            quiz = parse_quiz(fence.source).quiz
            assert quiz is not None, page
            questions += [q for q in quiz.questions if isinstance(q, ChoiceQuestion)]
    return questions


def test_right_answers_are_spread_over_the_positions_across_all_quizzes() -> None:
    """Guessing one letter must not pass the course's quizzes: every position holds some right answers, and
    no position holds more than half of the single-choice answers (8 lesson questions once all sat at A)."""
    questions = _course_choice_questions()
    assert len(questions) >= 8
    positions: collections.Counter[int] = collections.Counter()
    singles: collections.Counter[int] = collections.Counter()
    for question in questions:
        for position, index in enumerate(display_order(question)):
            if question.options[index].correct:
                positions[position] += 1
                if question.kind == "single":
                    singles[position] += 1
    widest = max(len(q.options) for q in questions)
    assert set(positions) == set(range(widest)), positions
    assert max(singles.values()) <= sum(singles.values()) / 2, singles


def test_numeric_range_is_the_stated_range_rounded_as_shown() -> None:
    # 10% around 6.7718 steps is 6.0946 to 7.4490; the page says "6.09 to 7.45" and must accept both.
    question = NumericQuestion(
        "steps", "How many?", "x", 6.771780877299374, Tolerance(0.10, relative=True), "steps", "Why.", 1
    )
    assert accepted_range(question) == (6.09, 7.45)
    assert _numeric_answer_text(question)[1] == "within 10%: 6.09 to 7.45 steps"


def _single(ident: str, right: str, wrong: str) -> str:
    return (
        f"  - id: {ident}\n    kind: single\n    prompt: Which?\n    options:\n"
        f"      - text: {right}\n        correct: true\n        explain: Why it is right.\n"
        f"      - text: {wrong}\n        explain: Why it is wrong.\n"
    )


def _page(*questions: str) -> str:
    return "# Lesson\n\n```quiz\nquestions:\n" + "".join(questions) + "```\n"


def test_a_page_whose_right_options_are_mostly_the_longest_fails_naming_them() -> None:
    page = _page(
        _single("first", "The weights are read once per step for every request", "Compute"),
        _single("second", "Paging hands out fixed-size blocks as a request grows", "Compression"),
        _single("third", "Right", "Wrong, never"),
    )
    problems = [p for p in find_problems(page, "serving/lesson.md") if p.field == "quiz options"]
    assert len(problems) == 1
    problem = problems[0]
    assert problem.file == "serving/lesson.md"
    assert "longest in 2 of the page's 3 single-choice questions" in problem.message
    assert "'first' (line 5)" in problem.message
    assert "'second' (line 14)" in problem.message
    assert "'third'" not in problem.message
    assert problem.line == 5
    assert "shorten the right option" in problem.fix


def test_a_third_of_longest_right_options_passes_and_ties_do_not_count() -> None:
    page = _page(
        _single("first", "The weights are read once per step for every request", "Compute"),
        _single("second", "Blocks", "Slabs of memory"),
        _single("third", "Same size", "Same-size"),  # a tie: length tells nothing
    )
    assert [p for p in find_problems(page, "serving/lesson.md") if p.field == "quiz options"] == []


def test_one_single_choice_question_with_the_longest_right_option_is_too_many() -> None:
    page = _page(_single("only", "Memory bandwidth", "Compute"))
    assert [p.field for p in find_problems(page, "l.md")] == ["quiz options"]


def test_quiz_text_quotes_computed_figures_and_a_broken_one_is_reported() -> None:
    source = GOOD.replace(
        "explain: 989.4 TFLOP/s over 3.35 TB/s.",
        "explain: Peak over bandwidth, {{ ridge_point('h100-sxm') | FLOP/byte | .0f }}.",
    )
    assert "{{" in source
    parsed = parse_quiz(source)
    assert parsed.quiz is not None
    assert "Peak over bandwidth, 295 FLOP/byte." in render_quiz(parsed.quiz)
    broken = parse_quiz(source.replace("{{ ridge_point(", "{{ ridge_pont("))
    assert broken.quiz is None
    assert [issue.field for issue in broken.issues] == [
        "question 'ridge' field 'explain': number {{ ridge_pont('h100-sxm') | FLOP/byte | .0f }}"
    ]
    assert "ridge_pont" in broken.issues[0].message


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (32 * 16384 * 2 / 1024, "KiB", "1,024 KiB"),  # the pipeline lesson's key read "1,020 KiB"
        (64, "number", "64"),  # a count of sequences read "64.0"
        (1_234_567, "number", "1,230,000"),  # past a million, three figures, as before
        (6.771780877299374, "steps", "6.77 steps"),  # not whole: three figures
    ],
)
def test_a_whole_answer_is_shown_whole(value: float, unit: str, shown: str) -> None:
    # A question's value is in its unit (the lesson's expression gives bytes; the key is read in KiB).
    question = NumericQuestion("q", "How many?", "x", value, Tolerance(0.01, relative=True), unit, "Why.", 1)
    assert _numeric_answer_text(question)[0] == shown
