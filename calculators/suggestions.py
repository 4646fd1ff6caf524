"""'Did you mean ...?' for names a lesson author misspells: functions, presets' attributes, quantities.

Kept apart from the expression language so that its interpreter can change without losing the hints: the
interpreter reports an unknown name or attribute, and asks here for the closest known one.
"""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``" Did you mean 'ridge_point'?"`` for the closest candidate, or ``""`` when none is close."""
    import difflib  # only when a name is wrong: importing it costs a widget's start ~0.1 s under Pyodide

    public = sorted({name for name in candidates if not name.startswith("_")})
    close = difflib.get_close_matches(word, public, n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def attribute_hint(error: AttributeError) -> str:
    """The closest public attribute of the object an ``AttributeError`` was raised on (set since 3.10)."""
    name, obj = getattr(error, "name", None), getattr(error, "obj", None)
    if not isinstance(name, str) or obj is None:
        return ""
    return did_you_mean(name, dir(obj))
