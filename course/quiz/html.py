"""The HTML of a quiz: readable without JavaScript, interactive with it, and an answer key for print.

Three readers get the same markup. Without JavaScript, each question shows its options as ordinary form
controls and keeps the answer with every explanation in a collapsed ``<details>``. With JavaScript
(``quiz.js``) the reader checks answers, gets feedback and retries; the script only compares numbers that were
computed here (the answer and the allowed error), so no formula exists in the page. In print, the stylesheet
hides the controls and the ``<details>`` and shows the answer key that follows the questions.
"""

from __future__ import annotations

import hashlib
import html
import random
import string
from collections.abc import Callable, Sequence

import markdown

from calculators.units import UNITS, format_value, significant
from course.numbers.extension import fill_figures
from course.quiz.model import ChoiceQuestion, Issue, NumericQuestion, Quiz
from course.sanitising.policy import sanitise_html

LETTERS = string.ascii_uppercase


def inline_renderer() -> Callable[[str], str]:
    """Render a short text's inline Markdown (code, emphasis, links), with raw HTML shown as text, and its
    ``{{ ... }}`` figures computed (the quiz model has checked them).

    Quiz text is content: it may format, never inject markup or scripts; links go through the same
    allow-list as lessons (no ``javascript:``), since the quiz's HTML is inserted as trusted.
    """
    md = markdown.Markdown()
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")

    def render(text: str) -> str:
        md.reset()
        out = sanitise_html(md.convert(fill_figures(text)[0])).strip()
        if out.startswith("<p>") and out.endswith("</p>") and out.count("<p>") == 1:
            out = out[3:-4]
        return out

    return render


def _attr(value: object) -> str:
    return html.escape(str(value), quote=True)


def display_order(question: ChoiceQuestion) -> list[int]:
    """The order in which a question's options are shown: a shuffle seeded by the question's id.

    Authors tend to write the right option first; shown as written, a quiz passes blind. The seed is the id
    (not the time or the build), so a page, its answer key, its PDF and a reader's saved progress all agree
    from one build to the next, and a question keeps its order while its wording is edited.
    """
    seed = int.from_bytes(hashlib.sha256(question.id.encode("utf-8")).digest()[:8], "big")
    order = list(range(len(question.options)))
    random.Random(seed).shuffle(order)
    return order


WHOLE_SHOWN_BELOW = 1e6  # a larger whole number reads better rounded ("3.20e+09" is no answer key)


def accepted_range(question: NumericQuestion) -> tuple[float, float]:
    """The lowest and highest numbers (in the question's unit) that count as right, both included.

    They are the tolerance's ends rounded to the three significant figures the answer text shows, so the
    page accepts exactly the range it states: "within 10%: 6.09 to 7.45 steps" takes 6.09 and 7.45 too.
    """
    error = question.tolerance.allowed_error(question.value)
    low, high = question.value - error, question.value + error
    return significant(low, 3), significant(high, 3)


def _numeric_answer_text(question: NumericQuestion) -> tuple[str, str]:
    """The answer with its unit, and which answers count (``"within 5%: 281 to 310 FLOP/byte"``).

    A whole number is shown whole ("1,024 KiB", "64 sequences"): to three figures it read "1,020 KiB" and
    "64.0" beside explanations that print 1,024 and 64, and a reader who worked it out exactly saw another
    number. Any other answer is shown to three significant figures, as its range is."""
    scale = UNITS[question.unit].scale
    whole = abs(question.value) < WHOLE_SHOWN_BELOW and question.value == round(question.value)
    answer = format_value(question.value * scale, question.unit, decimals=0 if whole else None)
    low, high = accepted_range(question)
    low_text = format_value(low * scale, question.unit).removesuffix(UNITS[question.unit].suffix)
    high_text = format_value(high * scale, question.unit)
    return answer, f"{question.tolerance.describe()}: {low_text} to {high_text}"


def _choice_controls(question: ChoiceQuestion, dom_id: str, inline: Callable[[str], str]) -> str:
    control = "radio" if question.kind == "single" else "checkbox"
    items = []
    for position, index in enumerate(display_order(question)):
        option = question.options[index]
        items.append(
            f'<li class="rp-quiz__option" data-option="{index}">'
            f'<label><input type="{control}" name="{dom_id}" value="{index}"> '
            f'<span class="rp-quiz__letter">{LETTERS[position]}.</span> '
            f'<span class="rp-quiz__text">{inline(option.text)}</span>'
            f'<span class="rp-quiz__mark" data-mark></span></label></li>'
        )
    return f'<ul class="rp-quiz__options">{"".join(items)}</ul>'


def _choice_answer(question: ChoiceQuestion, inline: Callable[[str], str]) -> str:
    order = display_order(question)
    right = [LETTERS[position] for position, index in enumerate(order) if question.options[index].correct]
    label = "Answer" if len(right) == 1 else "Answers"
    items = []
    for position, index in enumerate(order):
        option = question.options[index]
        verdict = "Right" if option.correct else "Wrong"
        items.append(
            f'<li data-option="{index}" data-correct="{str(option.correct).lower()}">'
            f"<strong>{LETTERS[position]}. {verdict}.</strong> {inline(option.explain)}</li>"
        )
    return (
        f'<p class="rp-quiz__solution"><strong>{label}: {", ".join(right)}.</strong></p>'
        f'<ul class="rp-quiz__explanations">{"".join(items)}</ul>'
    )


def _numeric_controls(question: NumericQuestion, dom_id: str) -> str:
    suffix = UNITS[question.unit].suffix.strip()
    unit = f' <span class="rp-quiz__unit">{html.escape(suffix)}</span>' if suffix else ""
    hint = f" (in {html.escape(suffix)})" if suffix else ""
    # A text field, not type="number": Chromium empties a number field holding "6.8 steps" or "6,8", so the
    # script could only say "type a number first"; as text, quiz.js reads units and either decimal mark.
    return (
        f'<p class="rp-quiz__numeric"><label for="{dom_id}-input">Your answer{hint}</label> '
        f'<input id="{dom_id}-input" type="text" inputmode="decimal" autocomplete="off" spellcheck="false" '
        f'name="{dom_id}">{unit}</p>'
    )


def _numeric_answer(question: NumericQuestion, inline: Callable[[str], str]) -> str:
    answer, accepted = _numeric_answer_text(question)
    return (
        f'<p class="rp-quiz__solution"><strong>Answer: {html.escape(answer)}</strong> '
        f"({html.escape(accepted)}).</p>"
        f'<p class="rp-quiz__explanation">{inline(question.explain)}</p>'
    )


def render_quiz(quiz: Quiz) -> str:
    """The whole quiz: questions, a progress bar with a reset button (shown by the script), the answer key."""
    inline = inline_renderer()
    questions = []
    key = []
    for number, question in enumerate(quiz.questions, start=1):
        dom_id = f"quiz-{question.id}"
        if isinstance(question, NumericQuestion):
            controls = _numeric_controls(question, dom_id)
            answer = _numeric_answer(question, inline)
            error = question.tolerance.allowed_error(question.value)
            low, high = accepted_range(question)
            data = (
                f' data-answer="{question.value!r}" data-allowed-error="{error!r}"'
                f' data-low="{low!r}" data-high="{high!r}"'
                f' data-unit="{_attr(UNITS[question.unit].suffix.strip())}"'
            )
        else:
            controls = _choice_controls(question, dom_id, inline)
            answer = _choice_answer(question, inline)
            data = ""
        prompt = inline(question.prompt)
        questions.append(
            f'<div class="rp-quiz__question" id="{_attr(dom_id)}" data-question="{_attr(question.id)}" '
            f'data-kind="{question.kind}"{data}>'
            f'<fieldset><legend class="rp-quiz__prompt"><span class="rp-quiz__number">{number}.</span> '
            f"{prompt}</legend>{controls}</fieldset>"
            f'<div class="rp-quiz__actions" hidden>'
            f'<button type="button" class="md-button md-button--primary" data-action="check">'
            "Check answer</button> "
            f'<button type="button" class="md-button" data-action="reveal">Show answer</button></div>'
            f'<div class="rp-quiz__feedback" role="status" aria-live="polite"></div>'
            # Answers stay out of the search index, so that a search does not give them away.
            f'<details class="rp-quiz__answer" data-search-exclude>'
            f"<summary>Answer and explanation</summary>{answer}</details>"
            f"</div>"
        )
        key.append(f'<li value="{number}">{answer}</li>')
    total = len(quiz.questions)
    label = f"Quiz, {total} question{'' if total == 1 else 's'}"
    return (
        f'<section class="rp-quiz" data-rp-quiz aria-label="{label}">'
        f"{''.join(questions)}"
        f'<div class="rp-quiz__footer" hidden><p class="rp-quiz__progress" aria-live="polite"></p>'
        f'<button type="button" class="md-button" data-action="reset">Reset answers</button></div>'
        f'<div class="rp-quiz__key" data-search-exclude>'
        f'<p class="rp-quiz__key-title"><strong>Answer key</strong></p>'
        f'<ol class="rp-quiz__key-list">{"".join(key)}</ol></div>'
        f"</section>"
    )


def render_issues(issues: Sequence[Issue]) -> str:
    """What a broken quiz shows in the page while the build reports it (the build fails on it too)."""
    items = "".join(
        f"<li>{'line ' + str(issue.line) + ': ' if issue.line else ''}{html.escape(issue.field)}: "
        f"{html.escape(issue.message)}. Fix: {html.escape(issue.fix)}</li>"
        for issue in issues
    )
    return (
        '<div class="admonition failure rp-quiz-error"><p class="admonition-title">This quiz has problems</p>'
        f"<ul>{items}</ul></div>"
    )
