"""Quizzes in real Chromium: feedback, retries, keyboard, storage, reset, instant navigation, no-JS, print.

Most tests use a small fixture site (tests/fixtures/quiz_site) whose answers are known, so they do not change
when a lesson's questions do; the last ones check the two lessons of the course itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from calculators import Scenario, ridge_point
from tests.conftest import TESTS, serve_build, start_material

pytestmark = pytest.mark.browser

FIXTURE_CONFIG = TESTS / "fixtures" / "quiz_site" / "mkdocs.yml"
RIDGE = ridge_point("h100-sxm")  # ≈ 295 FLOP/byte, accepted within 5%
STEP_MS = Scenario(mode="peak").decode().time_s * 1e3  # the fixture's spec-peak step, ≈ 4.78 ms, within ±0.5


@pytest.fixture(scope="module")
def quiz_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The quiz fixture site, built with --strict and served on 127.0.0.1."""
    with serve_build(tmp_path_factory.mktemp("quiz_site"), FIXTURE_CONFIG) as url:
        yield url


def _question(page: Any, ident: str) -> Any:
    return page.locator(f"#quiz-{ident}")


def _check(page: Any, ident: str) -> str:
    question = _question(page, ident)
    question.get_by_role("button", name="Check answer").click()
    return question.locator(".rp-quiz__feedback").inner_text()


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(".rp-quiz--enhanced")


def test_single_choice_wrong_then_right(page: Any, quiz_url: str) -> None:
    _open(page, quiz_url)
    question = _question(page, "prefill-bound")
    feedback = question.locator(".rp-quiz__feedback")
    assert feedback.get_attribute("aria-live") == "polite"
    assert feedback.get_attribute("role") == "status"
    assert question.locator(".rp-quiz__answer").is_hidden()  # the script's feedback replaces the <details>

    question.get_by_label("Memory bandwidth").check()
    text = _check(page, "prefill-bound")
    assert "Not quite" in text
    assert "A. Wrong." in text  # shuffled by the question's id: bandwidth is shown first, compute third
    assert "Bandwidth limits a decode step" in text
    assert "Each weight read is reused" not in text  # only the chosen option's explanation
    assert question.locator(".rp-quiz__option--wrong").get_attribute("data-option") == "1"

    question.get_by_label("The maths units (compute)").check()  # retry
    assert question.locator(".rp-quiz__option--wrong").count() == 0  # old marks go with a new choice
    text = _check(page, "prefill-bound")
    assert text.startswith("Right.")
    assert "C. Right. Each weight read is reused" in text
    assert "rp-quiz__question--right" in (question.get_attribute("class") or "")


def test_multiple_choice_needs_every_right_option(page: Any, quiz_url: str) -> None:
    _open(page, quiz_url)
    question = _question(page, "phases")
    question.get_by_label("Prefill is compute-bound").check()
    text = _check(page, "phases")
    assert "Not quite: 1 of your choices are right, and 2 options are right in all" in text
    question.get_by_label("Decode at batch size 1 is memory-bound").check()
    text = _check(page, "phases")
    assert "Right: all 2 right options." in text
    assert "about one FLOP per byte" in text


def test_numeric_answers_are_checked_against_the_computed_value(page: Any, quiz_url: str) -> None:
    _open(page, quiz_url)
    question = _question(page, "ridge")
    field = question.get_by_label("Your answer (in FLOP/byte)")
    field.fill(f"{RIDGE * 1.06:.0f}")
    assert "too high" in _check(page, "ridge")
    field.fill(f"{RIDGE * 0.94:.0f}")
    assert "too low" in _check(page, "ridge")
    field.fill(f"{RIDGE * 1.04:.0f}")  # inside the 5% tolerance
    text = _check(page, "ridge")
    assert text.startswith("Right.")
    assert "Answer: 295 FLOP/byte" in text
    assert "Peak compute divided by memory bandwidth." in text

    step = _question(page, "step").get_by_label("Your answer (in ms)")
    step.fill(f"{STEP_MS + 0.6:.2f}")  # just outside the absolute tolerance of 0.5 ms
    assert "too high" in _check(page, "step")


def test_numeric_range_is_inclusive_at_both_stated_ends(page: Any, quiz_url: str) -> None:
    """The key says "within 5%: 281 to 310 FLOP/byte": 281 and 310 count, 280.9 and 310.1 do not."""
    _open(page, quiz_url)
    field = _question(page, "ridge").get_by_label("Your answer (in FLOP/byte)")
    for typed, verdict in [
        ("281", "Right."),
        ("310", "Right."),
        ("280.9", "Not quite"),
        ("310.1", "Not quite"),
    ]:
        field.fill(typed)
        assert _check(page, "ridge").startswith(verdict), typed


def test_numbers_with_units_and_either_decimal_mark(page: Any, quiz_url: str) -> None:
    _open(page, quiz_url)
    field = _question(page, "step").get_by_label("Your answer (in ms)")
    for typed, verdict in [
        ("4.78 ms", "Right."),  # the unit may be typed
        ("4,78", "Right."),  # either decimal mark
        ("4,78 ms", "Right."),
        ("4.78ms", "Right."),
        ("47,8", "Not quite: 47,8 is too high"),  # read as 47.8, never as 478
        ("4.78 s", '"4.78 s" is not a number in ms'),  # a different unit is refused, not misread
        ("4,780", '"4,780" could mean 4780 or 4.780'),  # ambiguous: refused with both readings
        ("four", '"four" is not a number in ms'),
    ]:
        field.fill(typed)
        assert _check(page, "step").startswith(verdict), typed


def test_keyboard_alone_answers_a_question(page: Any, quiz_url: str) -> None:
    _open(page, quiz_url)
    field = _question(page, "step").get_by_label("Your answer (in ms)")
    field.focus()
    page.keyboard.type(f"{STEP_MS:.1f}")
    page.keyboard.press("Enter")
    assert _question(page, "step").locator(".rp-quiz__feedback").inner_text().startswith("Right.")

    first = _question(page, "prefill-bound").get_by_label("The maths units (compute)")
    first.focus()
    page.keyboard.press("ArrowDown")  # radio group: arrow keys move and select
    assert _question(page, "prefill-bound").get_by_label("Memory bandwidth").is_checked()
    page.keyboard.press("Tab")  # leaves the radio group for the Check button
    page.keyboard.press("Enter")
    assert "Not quite" in _question(page, "prefill-bound").locator(".rp-quiz__feedback").inner_text()


def test_show_answer_marks_the_right_options(page: Any, quiz_url: str) -> None:
    _open(page, quiz_url)
    question = _question(page, "phases")
    question.get_by_role("button", name="Show answer").click()
    text = question.locator(".rp-quiz__feedback").inner_text()
    assert "Answers: A, B." in text
    assert question.locator(".rp-quiz__option--answer").count() == 2


def test_progress_survives_a_reload_and_reset_clears_it(page: Any, quiz_url: str) -> None:
    _open(page, quiz_url)
    _question(page, "prefill-bound").get_by_label("The maths units (compute)").check()
    _check(page, "prefill-bound")
    _question(page, "ridge").get_by_label("Your answer (in FLOP/byte)").fill("500")
    _check(page, "ridge")
    progress = page.locator(".rp-quiz__progress")
    assert progress.inner_text() == "1 of 4 answered right."

    page.reload()
    page.wait_for_selector(".rp-quiz--enhanced")
    assert _question(page, "prefill-bound").get_by_label("The maths units (compute)").is_checked()
    assert _question(page, "prefill-bound").locator(".rp-quiz__feedback").inner_text().startswith("Right.")
    assert _question(page, "ridge").get_by_label("Your answer (in FLOP/byte)").input_value() == "500"
    assert "too high" in _question(page, "ridge").locator(".rp-quiz__feedback").inner_text()
    assert progress.inner_text() == "1 of 4 answered right."

    page.get_by_role("button", name="Reset answers").click()
    assert not _question(page, "prefill-bound").get_by_label("The maths units (compute)").is_checked()
    assert _question(page, "ridge").locator(".rp-quiz__feedback").inner_text() == ""
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('ridgepoint:quiz:'))") == []
    page.reload()
    page.wait_for_selector(".rp-quiz--enhanced")
    assert page.locator(".rp-quiz__progress").inner_text() == "0 of 4 answered right."


def test_quiz_works_again_after_instant_navigation(page: Any, quiz_url: str) -> None:
    _open(page, quiz_url)
    start_material(page)
    page.locator("article").get_by_role("link", name="Another page").click()
    page.wait_for_url("**/other/")
    page.locator("article").get_by_role("link", name="Back to the quiz").click()
    page.wait_for_selector(".rp-quiz--enhanced")
    assert page.evaluate("typeof document$") == "object"  # navigation stayed instant, no full reload
    _question(page, "prefill-bound").get_by_label("Memory bandwidth").check()
    assert "Not quite" in _check(page, "prefill-bound")


def test_reduced_motion_turns_animation_off(page: Any, quiz_url: str) -> None:
    page.emulate_media(reduced_motion="reduce")
    _open(page, quiz_url)
    _question(page, "ridge").get_by_role("button", name="Show answer").click()
    verdict = _question(page, "ridge").locator(".rp-quiz__verdict")
    assert verdict.evaluate("e => getComputedStyle(e).animationName") == "none"


def test_print_shows_the_answer_key_instead_of_controls(page: Any, quiz_url: str) -> None:
    _open(page, quiz_url)
    key = page.locator(".rp-quiz__key")
    assert key.is_hidden()
    page.emulate_media(media="print")
    assert key.is_visible()
    assert "Answer: 295 FLOP/byte" in key.inner_text()
    assert "A. Wrong. Bandwidth limits a decode step" in key.inner_text()
    assert page.locator(".rp-quiz__actions").first.is_hidden()
    assert page.locator(".rp-quiz__footer").is_hidden()


def test_without_javascript_each_answer_sits_in_a_closed_details(browser: Any, quiz_url: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(quiz_url)
        question = _question(page, "ridge")
        assert question.get_by_text("What is the ridge point of an H100 SXM").is_visible()
        assert question.get_by_label("Your answer (in FLOP/byte)").is_visible()
        assert question.locator(".rp-quiz__actions").is_hidden()  # no buttons that would do nothing
        assert page.locator(".rp-quiz__key").is_hidden()
        explanation = question.get_by_text("Peak compute divided by memory bandwidth.")
        assert explanation.is_hidden()
        question.get_by_text("Answer and explanation").click()
        assert explanation.is_visible()
        assert (
            "Answer: 295 FLOP/byte (within 5%: 281 to 310 FLOP/byte)"
            in question.locator("details").inner_text()
        )
    finally:
        context.close()


@pytest.mark.parametrize(
    "lesson", ["serving/prefill-vs-decode/", "foundations/memory-wall/", "model/kv-cache/"]
)
def test_course_lessons_end_with_working_quizzes(page: Any, site_url: str, lesson: str) -> None:
    _open(page, site_url + lesson)
    question = page.locator('.rp-quiz__question[data-kind="single"]').first
    right = question.locator('.rp-quiz__explanations li[data-correct="true"]').first.get_attribute(
        "data-option"
    )
    wrong = question.locator('.rp-quiz__explanations li[data-correct="false"]').first.get_attribute(
        "data-option"
    )
    question.locator(f'input[value="{wrong}"]').check()
    question.get_by_role("button", name="Check answer").click()
    assert "Not quite" in question.locator(".rp-quiz__feedback").inner_text()
    question.locator(f'input[value="{right}"]').check()
    question.get_by_role("button", name="Check answer").click()
    assert question.locator(".rp-quiz__feedback").inner_text().startswith("Right.")
