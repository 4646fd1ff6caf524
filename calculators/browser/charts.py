"""A widget's charts as the course's charts compute them: ``calculators.charts.data`` rows, nothing drawn.

The build renders each widget chart from these very parameters (Altair spec, cached SVG); in the browser the
worker calls the same function and the page swaps the new rows into the live Vega view by dataset name, so
the static figure and the live one can never disagree. Caption and table rows travel too: they are the
chart's text alternative and must follow the numbers.
"""

from __future__ import annotations

from typing import Any

from calculators.charts.data import chart_data


def chart_payload(chart: str, params: dict[str, Any]) -> dict[str, Any]:
    """Rows, caption and table of chart ``chart`` for ``params``; raises the chart's ``ValueError``."""
    data = chart_data(chart, **params)
    return {
        "chart": chart,
        "params": params,
        "datasets": dict(data.datasets),
        "caption": data.caption,
        "columns": list(data.table_columns),
        "rows": [list(row) for row in data.table_rows],
    }
