"""'Did you mean' for misspelt names in calculator expressions: functions and attributes."""

from __future__ import annotations

import pytest

from calculators.expressions import ExpressionError, evaluate_number
from calculators.suggestions import did_you_mean


def test_closest_public_name_or_nothing() -> None:
    assert did_you_mean("ridge_pont", ["ridge_point", "Scenario", "_ridge"]) == " Did you mean 'ridge_point'?"
    assert did_you_mean("_ridge", ["_ridge"]) == ""  # private names are never suggested
    assert did_you_mean("zzz", ["ridge_point"]) == ""


@pytest.mark.parametrize(
    ("expression", "suggestion"),
    [
        ('ridge_pont("h100-sxm")', "Did you mean 'ridge_point'?"),
        ("Scenario().decod().time_s", "Did you mean 'decode'?"),
        ("Scenario().decode().time_sec", "Did you mean 'time_s'?"),
    ],
)
def test_misspelt_function_or_attribute_gets_the_closest_name(expression: str, suggestion: str) -> None:
    with pytest.raises(ExpressionError) as error:
        evaluate_number(expression)
    assert suggestion in str(error.value)
