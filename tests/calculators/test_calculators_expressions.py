"""The expression mini-language lessons and quizzes use: the numbers it gives, and what it refuses."""

from __future__ import annotations

import pytest

from calculators import ExpressionError, Scenario, evaluate, evaluate_number


def test_lesson_expressions_give_the_calculators_numbers() -> None:
    assert evaluate_number('Scenario("dense-8b", "h100-sxm").decode().time_s * 1e3') == pytest.approx(
        4.776, 1e-3
    )
    assert evaluate_number('ridge_point("h100-sxm")') == pytest.approx(295.34, rel=1e-4)
    assert evaluate_number("attainable_flops_per_s(100, 'h100-sxm') / 1e12") == pytest.approx(335)
    assert evaluate_number('gpu("h200").memory_capacity_bytes / 1e9') == 141
    assert evaluate_number("2 ** 10 - max(1, 2)") == 1022
    assert evaluate("Scenario().decode().bound") == "memory"


def test_names_a_lesson_defines_are_usable() -> None:
    names = {"big": Scenario("llama-3.1-70b", "h200", gpus=2)}
    assert evaluate_number("big.decode().time_s", names) == pytest.approx(2 * 70_553_706_496 / 9.6e12)


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ('open("secrets")', ["unknown name 'open'", "Scenario"]),
        ("Scenario()._setup", ["private attribute '_setup'"]),
        ('"{0.__class__}".format(1)', ["attributes of a constant"]),
        # The secret reader: string methods are out, whatever the string.
        ('min("{0.__init__.__globals__}", "~").format(Scenario())', ["attributes of a str"]),
        ("Scenario().decode.__globals__", ["private attribute '__globals__'"]),
        ('gpu("h100-sxm").name.upper()', ["attributes of a str"]),
        ("(((10**100)**100)**100)**100", ["larger than 2**128"]),
        ("3 ** 100", ["larger than 2**128"]),
        ("2 ** 127 * 4", ["integer larger than 2**128"]),
        ('min("a" * 10**8, "b")', ["arithmetic works on numbers only"]),
        ('"' + "a" * 101 + '"', ["longer than 100 characters"]),
        ("1" + " + 1" * 1500, ["longer than 1000 characters"]),
        ("print(1)", ["unknown name 'print'"]),
        ("Scenario()(1)", ["only the calculators' functions and methods"]),
        ("min(*[1, 2])", ["not allowed"]),
        ("[1, 2][0]", ["Subscript is not allowed"]),
        ("(lambda: 1)()", ["Lambda is not allowed"]),
        ("[x for x in 'ab']", ["not allowed"]),
        ("10 ** 10 ** 10", ["exponent of at most 128"]),
        ("1 < 2", ["Compare is not allowed"]),
        ("1 +", ["not a valid expression"]),
        ("Scenario().prefill(0)", ["prompt_tokens", "got 0"]),
        ('Scenario("llama-8b")', ["unknown model 'llama-8b'", "llama-3.1-8b"]),
        ("1 / 0", ["could not be computed", "division by zero"]),
        ("Scenario().nothing", ["could not be computed", "nothing"]),
        ("-" * 900 + "1", ["nested too deeply"]),
    ],
)
def test_refused_expressions_say_why(source: str, words: list[str]) -> None:
    with pytest.raises(ExpressionError) as info:
        evaluate(source)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("source", ["'text'", "Scenario()", "True", "1e400 * 10"])
def test_a_quoted_figure_must_be_a_finite_number(source: str) -> None:
    with pytest.raises(ExpressionError, match="finite number"):
        evaluate_number(source)


def test_expression_errors_are_value_errors() -> None:
    # Callers that catch the calculators' ValueError catch these too.
    assert issubclass(ExpressionError, ValueError)


def test_every_refusal_says_what_to_write_instead() -> None:
    with pytest.raises(ExpressionError) as info:
        evaluate("3 ** 100")
    assert "1e30" in info.value.fix


def test_bounded_arithmetic_still_computes_what_lessons_need() -> None:
    assert evaluate_number("2 ** (3 + 1)") == 16  # 2**4: exponents may be computed, within bounds
    assert evaluate_number("2 ** 127") == 2.0**127
    assert evaluate_number("10 ** -3") == pytest.approx(1e-3)
    assert evaluate_number("7 % 4") == 3


def test_a_slow_expression_stops_at_the_time_limit() -> None:
    # A zero-second limit: the first step already runs past it (no timing is asserted).
    with pytest.raises(ExpressionError, match="took longer than"):
        evaluate("Scenario().decode().time_s", time_limit_s=0.0)


def test_the_time_limit_counts_cpu_time_not_waiting() -> None:
    """On a busy CI machine a figure waits for the CPU; only its own computing counts against the limit.

    Sleeping 0.3 s under a 0.05 s limit uses next to no CPU, so no interrupt comes; with the wall clock
    (the old ITIMER_REAL alarm) it raised, and sound builds failed under load.
    """
    import time

    from calculators.expressions import _time_limit

    with _time_limit(0.05):
        time.sleep(0.3)


def test_expressions_share_the_budget_they_are_charged_to() -> None:
    from calculators.expressions import FIX_BUDGET, TimeBudget, spending

    page = TimeBudget("the page serving/x.md", 60.0)
    with spending(page):
        assert evaluate_number("Scenario().decode().time_s * 2") > 0
    assert page.spent_s > 0  # charged, whatever the machine's speed
    page.spent_s = page.limit_s
    with spending(page), pytest.raises(ExpressionError) as refused:
        evaluate("Scenario().decode().time_s")
    assert "the page serving/x.md has used its 60 s of calculator time" in str(refused.value)
    assert "'Scenario().decode().time_s' was not computed" in str(refused.value)
    assert refused.value.fix == FIX_BUDGET
    assert evaluate_number("Scenario().decode().time_s * 2") > 0  # outside the block, no budget applies


def test_a_budget_stops_a_slow_experiment_within_its_own_time_limit() -> None:
    """max_good_rate may take 120 s on its own; a page with almost nothing left stops it at once."""
    from calculators.expressions import TimeBudget, spending

    page = TimeBudget("the page serving/x.md", 60.0, spent_s=60.0 - 1e-6)
    with spending(page), pytest.raises(ExpressionError, match="has used its 60 s"):
        evaluate('max_good_rate("chunked", gpus=1, ttft_slo=0.123)')
