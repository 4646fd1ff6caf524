"""What a chart carries (:class:`ChartData`, its rows) and the small helpers every chart's rows use.

Both :mod:`calculators.charts.data` and :mod:`calculators.charts.serving` compute chart rows with these; they
live below both so that the catalogue in ``data`` can list the serving charts without ``serving`` importing
``data`` back (an import circle). Standard library only: the browser computes the same rows under Pyodide.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from calculators.charts.params import ChartError
from calculators.hardware import GPUS
from calculators.units import UNITS, format_value

Row = dict[str, Any]


@dataclass(frozen=True)
class ChartData:
    """A chart's content: named datasets for the plot, a table for the text alternative, a default caption."""

    chart: str
    params: Mapping[str, Any]
    datasets: Mapping[str, list[Row]]
    table_columns: tuple[str, ...]
    table_rows: tuple[tuple[str, ...], ...]
    caption: str
    notes: tuple[str, ...] = field(default=())


def _in(unit: str, value: float) -> float:
    """A base-unit value in display ``unit`` (TFLOP/s, ms), for axes; tables format with the unit."""
    return value / UNITS[unit].scale


def short_gpu_name(key: str) -> str:
    """The preset's name without the vendor, so legends stay short ("H100 SXM5 80GB")."""
    name = GPUS[key].name
    for vendor in ("NVIDIA GeForce ", "NVIDIA ", "AMD Instinct ", "AMD "):
        if name.startswith(vendor):
            return name[len(vendor) :]
    return name


def _tokens(n: float) -> str:
    text = format_value(n, "tokens", decimals=0)
    return "1 token" if text == "1 tokens" else text


def _computed(chart: str, parameter: str, fix: str, compute: Callable[[], Any]) -> Any:
    """Run a calculator call, turning its ValueError (e.g. "does not fit in memory") into a chart error."""
    try:
        return compute()
    except ValueError as error:
        raise ChartError(chart, parameter, str(error), fix) from None
