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
        ("[1, 2][0]", ["Subscript is not allowed"]),
        ("(lambda: 1)()", ["Lambda is not allowed"]),
        ("[x for x in 'ab']", ["not allowed"]),
        ("10 ** 10 ** 10", ["constant exponent"]),
        ("2 ** (3 + 1)", ["constant exponent"]),
        ("1 +", ["not a valid expression"]),
        ("Scenario().prefill(0)", ["prompt_tokens", "got 0"]),
        ('Scenario("llama-8b")', ["unknown model 'llama-8b'", "llama-3.1-8b"]),
        ("1 / 0", ["could not be computed", "division by zero"]),
        ("Scenario().nothing", ["could not be computed", "nothing"]),
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
