"""Tables for the worked notebooks: rows of calculator results shown as a Markdown table.

The notebooks compare presets side by side; a Markdown output renders as a plain HTML table on the site, in
the PDF and in any Jupyter front end, with no pandas (which the course does not otherwise need). Numbers are
rounded the way the lessons print them, by :func:`calculators.units.format_value`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from calculators.units import format_value

MISSING = "n/a"


def format_cell(value: Any, digits: int = 3) -> str:
    """One table cell: floats to ``digits`` significant figures, with thousands separators; ints as given."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return format_value(value, "number", digits=digits)
    return str(value).replace("|", "\\|").replace("\n", " ")


def table_markdown(rows: Sequence[Mapping[str, Any]], digits: int = 3) -> str:
    """A Markdown table of ``rows`` (dicts sharing their keys; the first row's keys are the columns)."""
    if not rows:
        raise ValueError("a table needs at least one row")
    columns = list(rows[0])
    for number, row in enumerate(rows, start=1):
        if list(row) != columns:
            raise ValueError(f"row {number} has columns {list(row)}, expected {columns} as in the first row")
    numeric = [all(isinstance(row[c], int | float) or row[c] is None for row in rows) for c in columns]
    lines = [
        "| " + " | ".join(format_cell(c) for c in columns) + " |",
        "| " + " | ".join("---:" if n else "---" for n in numeric) + " |",
    ]
    lines += ["| " + " | ".join(format_cell(row[c], digits) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def markdown_table(rows: Sequence[Mapping[str, Any]], digits: int = 3) -> Any:
    """The table as an IPython ``Markdown`` object: the last expression of a cell displays it."""
    from IPython.display import Markdown

    return Markdown(table_markdown(rows, digits))  # type: ignore[no-untyped-call]
