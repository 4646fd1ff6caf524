"""The HTML of a quiz: readable without JavaScript, interactive with it, and an answer key for print.

Three readers get the same markup. Without JavaScript, each question shows its options as ordinary form
controls and keeps the answer with every explanation in a collapsed ``<details>``. With JavaScript
(``quiz.js``) the reader checks answers, gets feedback and retries; the script only compares numbers that were
computed here (the answer and the allowed error), so no formula exists in the page. In print, the stylesheet
hides the controls and the ``<details>`` and shows the answer key that follows the questions.
"""

from __future__ import annotations

import html
import string
from collections.abc import Callable, Sequence

import markdown

from calculators.units import UNITS, format_value
from course.quiz.model import ChoiceQuestion, Issue, NumericQuestion, Quiz
from course.sanitising.policy import sanitise_html

LETTERS = string.ascii_uppercase


def inline_renderer() -> Callable[[str], str]:
    """Render a short text's inline Markdown (code, emphasis, links), with raw HTML shown as text.

    Quiz text is content: it may format, never inject markup or scripts; links go through the same
    allow-list as lessons (no ``javascript:``), since the quiz's HTML is inserted as trusted.
    """
    md = markdown.Markdown()
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")

    def render(text: str) -> str:
        md.reset()
        out = sanitise_html(md.convert(text)).strip()
        if out.startswith("<p>") and out.endswith("</p>") and out.count("<p>") == 1:
            out = out[3:-4]
        return out

    return render


def _attr(value: object) -> str:
    return html.escape(str(value), quote=True)


def _numeric_answer_text(question: NumericQuestion) -> tuple[str, str]:
    """The answer with its unit, and which answers count (``"within 5%: 281 to 310 FLOP/byte"``)."""
    scale = UNITS[question.unit].scale
    error = question.tolerance.allowed_error(question.value)
    answer = format_value(question.value * scale, question.unit)
    low = format_value((question.value - error) * scale, question.unit).removesuffix(
        UNITS[question.unit].suffix
    )
    high = format_value((question.value + error) * scale, question.unit)
    return answer, f"{question.tolerance.describe()}: {low} to {high}"


def _choice_controls(question: ChoiceQuestion, dom_id: str, inline: Callable[[str], str]) -> str:
    control = "radio" if question.kind == "single" else "checkbox"
    items = []
    for index, option in enumerate(question.options):
        items.append(
            f'<li class="rp-quiz__option" data-option="{index}">'
            f'<label><input type="{control}" name="{dom_id}" value="{index}"> '
            f'<span class="rp-quiz__letter">{LETTERS[index]}.</span> '
            f'<span class="rp-quiz__text">{inline(option.text)}</span>'
            f'<span class="rp-quiz__mark" data-mark></span></label></li>'
        )
    return f'<ul class="rp-quiz__options">{"".join(items)}</ul>'


def _choice_answer(question: ChoiceQuestion, inline: Callable[[str], str]) -> str:
    right = [LETTERS[i] for i, option in enumerate(question.options) if option.correct]
    label = "Answer" if len(right) == 1 else "Answers"
    items = []
    for index, option in enumerate(question.options):
        verdict = "Right" if option.correct else "Wrong"
        items.append(
            f'<li data-option="{index}" data-correct="{str(option.correct).lower()}">'
            f"<strong>{LETTERS[index]}. {verdict}.</strong> {inline(option.explain)}</li>"
        )
    return (
        f'<p class="rp-quiz__solution"><strong>{label}: {", ".join(right)}.</strong></p>'
        f'<ul class="rp-quiz__explanations">{"".join(items)}</ul>'
    )


def _numeric_controls(question: NumericQuestion, dom_id: str) -> str:
    suffix = UNITS[question.unit].suffix.strip()
    unit = f' <span class="rp-quiz__unit">{html.escape(suffix)}</span>' if suffix else ""
    hint = f" (in {html.escape(suffix)})" if suffix else ""
    return (
        f'<p class="rp-quiz__numeric"><label for="{dom_id}-input">Your answer{hint}</label> '
        f'<input id="{dom_id}-input" type="number" step="any" inputmode="decimal" name="{dom_id}">{unit}</p>'
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
            data = f' data-answer="{question.value!r}" data-allowed-error="{error!r}"'
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
