"""Display units and number formatting for prose, tables and widgets.

Quantities are computed in base SI units (seconds, bytes, FLOP, FLOP/s). A unit here is only a way to show
one: a scale and a suffix. Units are decimal (1 GB = 1e9 bytes), as on GPU spec sheets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators.validation import choice, count

HUGE = 1e15  # from here on, numbers are shown in scientific notation
MAX_DIGITS = 17  # a float holds 17 significant digits; more would only print noise (and 1e9 would hang)


def _finite(field: str, value: object) -> float:
    """``value`` as a float if it is a finite number, else a ``ValueError`` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{field} must be a finite number to format, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Unit:
    """How to display a base-unit value: divide by ``scale`` and append ``suffix``."""

    name: str
    scale: float
    suffix: str


UNITS: dict[str, Unit] = {
    unit.name: unit
    for unit in (
        Unit("s", 1.0, " s"),
        Unit("ms", 1e-3, " ms"),
        Unit("us", 1e-6, " µs"),
        Unit("bytes", 1.0, " bytes"),
        Unit("KiB", 1024.0, " KiB"),  # binary, for sizes that are powers of two (128 KiB of KV per token)
        Unit("MiB", 1024.0**2, " MiB"),  # binary, as NVIDIA prints on-chip sizes (a "50 MB" L2 is 50 MiB)
        Unit("MB", 1e6, " MB"),
        Unit("GB", 1e9, " GB"),
        Unit("TB", 1e12, " TB"),
        Unit("GB/s", 1e9, " GB/s"),
        Unit("TB/s", 1e12, " TB/s"),
        Unit("TFLOP/s", 1e12, " TFLOP/s"),
        Unit("GHz", 1e9, " GHz"),  # clocks
        Unit("W", 1.0, " W"),  # power limits
        Unit("GFLOP", 1e9, " GFLOP"),
        Unit("TFLOP", 1e12, " TFLOP"),
        Unit("FLOP/byte", 1.0, " FLOP/byte"),
        Unit("B", 1e9, " billion"),
        Unit("tokens", 1.0, " tokens"),
        Unit("tokens/s", 1.0, " tokens/s"),
        Unit("steps", 1.0, " steps"),
        Unit("x", 1.0, "×"),
        Unit("%", 0.01, "%"),
        Unit("number", 1.0, ""),
    )
}


def get_unit(name: str) -> Unit:
    """Return the display unit called ``name``."""
    return UNITS[choice("unit", name, UNITS)]


def significant(value: float, digits: int = 3) -> float:
    """Round ``value`` to ``digits`` significant figures (4.776 -> 4.78)."""
    value = _finite("value", value)
    digits = count("digits", digits, maximum=MAX_DIGITS)
    if value == 0:
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def format_value(
    value: float, unit: str = "number", *, digits: int | None = None, decimals: int | None = None
) -> str:
    """Format a base-unit value for prose: ``format_value(0.004776, "ms")`` -> ``"4.78 ms"``.

    Give ``decimals`` for fixed decimal places, else ``digits`` significant figures (3 by default).
    Thousands are separated by commas, as in English prose.
    """
    chosen = get_unit(unit)
    shown = _finite("value", value) / chosen.scale
    if abs(shown) >= HUGE:  # "1.00e+17": a thousand digits with commas would be no help to a reader
        places = (3 if digits is None else count("digits", digits, maximum=MAX_DIGITS)) - 1
        text = f"{shown:.{places}e}"
    elif decimals is not None:
        text = f"{shown:,.{count('decimals', decimals, minimum=0, maximum=MAX_DIGITS)}f}"
    elif shown == 0:
        text = f"{shown:g}"
    else:
        digits = 3 if digits is None else digits
        rounded = significant(shown, digits)
        places = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
        text = f"{rounded:,.{places}f}"
    return text + chosen.suffix


def with_bound(text: str, bound: str | None, *, estimate: str | None = None) -> str:
    """A figure with its spec-peak bound beside it, as the course prints both: ``"6.7 ms (bound 4.8 ms)"``.

    The one place this wording is written: the lessons' ``| bound`` filter and the widgets both call it.
    ``bound`` is the bound already formatted (None: there is none to show). A figure that is its own bound
    (the bound reads the same as ``estimate``, ``text`` unless given: a claim's quoted words are not the
    computed figure) is printed once.
    """
    if bound is None or bound == (text if estimate is None else estimate):
        return text
    return f"{text} (bound {bound})"


def format_duration(seconds: float, *, digits: int = 3) -> str:
    """A time in the unit a reader expects for its size: ``"480 µs"``, ``"4.78 ms"``, ``"2.59 s"``.

    Widgets show times that range from a decode step to a whole long request; "2,590 ms" reads worse than
    "2.59 s". Rounding happens before the unit is chosen, so 0.9996 s shows as "1.00 s", not "1,000 ms".
    """
    seconds = _finite("seconds", seconds)
    for unit in ("us", "ms"):
        shown = significant(seconds / UNITS[unit].scale, digits)
        if abs(shown) < 1000:
            return format_value(seconds, unit, digits=digits)
    return format_value(seconds, "s", digits=digits)
