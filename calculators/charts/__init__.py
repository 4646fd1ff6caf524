"""The course's charts: which calculator numbers each chart shows, and how it is drawn.

- :mod:`calculators.charts.params` and :mod:`calculators.charts.data`: standard library only. They
  validate a chart's parameters and compute its rows from the calculators, so the browser glue
  can run them under Pyodide.
- :mod:`calculators.charts.specs`: Altair builders turning those rows into Vega-Lite specs.
- :mod:`calculators.charts.render`: vl-convert renders a spec to a static SVG, cached by content hash.

The core (``calculators`` outside this subpackage) never imports it. Altair and vl-convert are imported
only by ``specs`` and ``render``, so importing this package (or ``data``) costs nothing in the browser.

>>> chart_data("prefill-vs-decode").table_columns[0]
'Prompt'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from calculators.charts.content import ChartData
from calculators.charts.data import CHARTS, ChartKind, chart_data, chart_kind
from calculators.charts.params import ChartError

if TYPE_CHECKING:
    from calculators.charts.specs import BuiltChart

__all__ = [
    "CHARTS",
    "BuiltChart",
    "ChartData",
    "ChartError",
    "ChartKind",
    "build_chart",
    "chart_data",
    "chart_kind",
]


def build_chart(name: str, **params: Any) -> BuiltChart:
    """Build the chart ``name`` with Altair (imported here, on first use); see :func:`specs.build_chart`."""
    from calculators.charts.specs import build_chart as build

    return build(name, **params)
