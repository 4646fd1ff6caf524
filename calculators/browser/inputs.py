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


def _shown(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"


def describe_range(low: float, high: float) -> str:
    """A control's allowed range as its hint shows it: ``"1 to 131,072"``, ``"0.1 to 100,000"``."""
    return f"{_shown(low)} to {_shown(high)}"


def in_range(label: str, value: Any, low: float, high: float, *, whole: bool = False) -> Any:
    """``value`` if it is a number from ``low`` to ``high`` (both included), else a reader's message.

    The message speaks the lesson's words (the control's label, not the calculators' argument name) and
    states the same range the control's hint does, so what the page says is allowed is what is accepted.
    """
    kind = "a whole number" if whole else "a number"
    wanted = f"{label}: type {kind} from {describe_range(low, high)}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        typed = str(value).strip()
        raise ValueError(f"{wanted}; “{typed}” is not a number." if typed else f"{wanted}.")
    if not math.isfinite(value) or not low <= value <= high or (whole and not float(value).is_integer()):
        raise ValueError(f"{wanted}; {_shown(value) if math.isfinite(value) else value} is not.")
    return int(value) if whole else value


def one_of(label: str, value: str, known: dict[str, str]) -> str:
    """``value`` if it is a key of ``known`` (key -> display name), else a message naming the choices."""
    if value in known:
        return value
    typed = f"“{value}”" if value else "an empty choice"
    raise ValueError(f"{label}: {typed} is not one of this widget's choices ({', '.join(known.values())}).")
