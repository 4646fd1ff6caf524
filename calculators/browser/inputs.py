"""Raw control values (strings from forms and URLs) into the values the calculators take.

Deliberately lenient: a value that reads as a number becomes one, anything else is passed on
unchanged, so that
"abc", "" or "-3" reach the calculators and are rejected there with their own message naming the field.
"""

from __future__ import annotations

import math
from typing import Any


def number(value: Any) -> Any:
    """``"2000"`` -> 2000, ``"2.5e3"`` -> 2500, ``"0.5"`` -> 0.5; non-numbers are returned unchanged."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return value
    if isinstance(value, str):
        text = value.strip().replace(",", "").replace("_", "")
        try:
            value = float(text)
        except ValueError:
            return value.strip()
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def flag(value: Any) -> bool:
    """A switch: true for True, "1", "true", "on", "yes" (any case); false otherwise."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "on", "yes")


def names(value: Any) -> list[str]:
    """A list of preset keys from a list or a comma-separated string (URL form): "h100-sxm,h200"."""
    if isinstance(value, list | tuple):
        return [str(item).strip() for item in value if str(item).strip()]
    return [part.strip() for part in str(value).split(",") if part.strip()]
