"""Input checks shared by every calculator.

Every public function of the core validates its inputs here, so that a bad value (zero, negative, NaN,
infinite, the wrong type) is rejected with one kind of message: the field, the value, and what is allowed.
Widgets show that message inline and the build prints it, so it has to read well on its own.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from types import MappingProxyType


def _describe(value: object) -> str:
    return repr(value)


def positive_number(field: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite number above zero, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{field} must be a number greater than 0, got {_describe(value)}")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{field} must be a finite number greater than 0, got {_describe(value)}")
    return number


def bounded_number(field: str, value: object, maximum: float, minimum: float = 0.0) -> float:
    """Return ``value`` if it is a finite number in [``minimum``, ``maximum``] and above 0.

    Both bounds keep every product and quotient of inputs finite (no overflow to inf, no 1/tiny).
    """
    number = positive_number(field, value)
    if not minimum <= number <= maximum:
        raise ValueError(
            f"{field} must be between {minimum:g} and {maximum:g}, got {_describe(value)}; "
            "use a value in that range"
        )
    return number


def non_negative_number(field: str, value: object, maximum: float = 1e12) -> float:
    """Return ``value`` if it is a finite number in [0, ``maximum``] (an overhead, a reserve)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{field} must be a number >= 0, got {_describe(value)}")
    number = float(value)
    if not math.isfinite(number) or number < 0 or number > maximum:
        raise ValueError(f"{field} must be a finite number between 0 and {maximum:g}, got {_describe(value)}")
    return number


def flag(field: str, value: object) -> bool:
    """Return ``value`` if it is a bool (a switch), else raise naming the field."""
    if not isinstance(value, bool):
        raise ValueError(f"{field} must be True or False, got {_describe(value)}")
    return value


def fraction(field: str, value: object) -> float:
    """Return ``value`` if it lies in (0, 1]: efficiency factors are shares of a peak, never above it.

    Shares below one in a thousand are refused too: no real system is that slow, and dividing by them is how
    a time would overflow to infinity.
    """
    number = positive_number(field, value)
    if not MIN_FRACTION <= number <= 1:
        raise ValueError(
            f"{field} must be in (0, 1] (a share of the peak) and at least {MIN_FRACTION:g}, "
            f"got {_describe(value)}"
        )
    return number


MIN_FRACTION = 1e-3  # the smallest efficiency or utilisation accepted

# The largest count any calculator accepts (tokens, batch, GPUs): a billion keeps every product of counts
# (a prompt squared for causal attention, times layers and heads) far inside a float's range.
MAX_COUNT = 10**9


def count(field: str, value: object, *, minimum: int = 1, maximum: int = MAX_COUNT) -> int:
    """Return ``value`` if it is a whole number in [``minimum``, ``maximum``]: token counts and batches."""
    if isinstance(value, bool):
        raise ValueError(f"{field} must be a whole number >= {minimum}, got {_describe(value)}")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < minimum:
        raise ValueError(f"{field} must be a whole number >= {minimum}, got {_describe(value)}")
    if value > maximum:
        raise ValueError(
            f"{field} must be a whole number <= {maximum:,}, got {_describe(value)}; use a smaller value"
        )
    return value


_LOOKUPS = (dict, MappingProxyType, frozenset, set, tuple, list)  # collections whose ``in`` is a plain lookup


def choice(field: str, value: object, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise naming the allowed values.

    Every pass checks its setup's formats here, so the allowed names are sorted only for the message; a
    name found in a dict, set or tuple returns at once (a widget's answer asks this about a hundred times,
    and the general checks below cost more under Pyodide than the lookup).
    """
    if type(value) is str and type(allowed) in _LOOKUPS and value in allowed:
        return value
    if isinstance(allowed, str) or not isinstance(allowed, Collection):
        allowed = list(allowed)  # a text stands for its letters (not substrings); an iterator is read once
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{field} must be one of {', '.join(sorted(allowed))}; got {_describe(value)}")
    return value


def unknown_name(kind: str, name: str, known: Iterable[str]) -> ValueError:
    """Build the error for an unknown preset, suggesting the closest known names."""
    import difflib  # only on this error path: importing it costs a widget's start ~0.1 s under Pyodide

    names = sorted(known)
    wanted = name.strip().lower()
    # Names that contain what was typed, or are contained in it ("h100" -> "h100-sxm"), come first.
    containing = [n for n in names if wanted and (wanted in n or n in wanted)]
    similar = difflib.get_close_matches(wanted, names, n=3, cutoff=0.4)
    close = list(dict.fromkeys([*containing, *similar]))[:3]
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return ValueError(f"unknown {kind} {name!r}.{hint} Known {kind}s: {', '.join(names)}")
