"""Every chart's wide and narrow Vega-Lite spec is valid against the schema Altair ships.

Builds do not validate (issue 23: Altair's validation was a quarter of a cold build), so this is where a chart
that breaks the schema fails: each chart of :data:`calculators.charts.CHARTS`, with its snapshot case's
parameters (test_charts.py), both widths, as the pages get them (:func:`course_spec`).
"""

from __future__ import annotations

import copy
from typing import Any

import altair as alt
import jsonschema
import pytest

from calculators.charts import CHARTS, chart_data
from calculators.charts.specs import course_spec
from tests.calculators.charts.test_charts import CASES


def schema_errors(spec: dict[str, Any]) -> list[str]:
    """Where ``spec`` breaks the Vega-Lite schema (any top-level form: single, layered, concatenated)."""
    try:
        alt.TopLevelSpec.validate(spec)
    except jsonschema.ValidationError as error:
        return [f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message[:200]}"]
    return []


def test_the_cases_cover_every_chart() -> None:
    assert {name for name, _ in CASES.values()} == set(CHARTS)


@pytest.mark.parametrize("case", CASES)
def test_wide_and_narrow_specs_are_valid(case: str) -> None:
    name, params = CASES[case]
    data = chart_data(name, **params)
    for narrow in (False, True):
        spec = course_spec(data, narrow=narrow)
        assert schema_errors(spec) == [], f"{case} ({'narrow' if narrow else 'wide'}) breaks the schema"


def test_an_invalid_spec_is_caught() -> None:
    # A real chart's spec with one mark made unknown to Vega-Lite: the check must name the problem.
    spec = copy.deepcopy(course_spec(chart_data("ridge-points")))
    marks = [spec] if "mark" in spec else [layer for layer in spec.get("layer", []) if "mark" in layer]
    assert marks, "ridge-points has a mark to break"
    marks[0]["mark"] = {"type": "not-a-mark"}
    assert schema_errors(spec) != []
