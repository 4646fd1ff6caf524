"""The spec-peak bound beside a widget's estimate, worded as the lessons print it: "6.73 ms (bound 4.85 ms)".

A widget computes under the page's model setting (:mod:`calculators.setting`); where that setting is not
already at spec peaks, every time, rate or throughput it shows has a second figure, the same calculation at
spec-sheet peaks (:data:`calculators.setting.SPEC_PEAK`: same calibration and KV reads, peak mode), the lower
bound a lesson's ``| bound`` filter prints. The wording is :func:`calculators.units.with_bound`'s, the
filter's own, so a widget and the prose beside it read alike; a figure that is its own bound is shown once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from calculators.setting import at_spec_peak, bound_setting
from calculators.units import with_bound

__all__ = ["NOTE", "NO_BREAK", "at_spec_peak", "bound_setting", "shown_with_bound"]

T = TypeVar("T")

NOTE = (
    "Beside a time or a rate, “(bound …)” is the same calculation at spec-sheet peaks, the limit the lessons "
    "print beside their estimates."
)
"""What a widget's stated assumptions add where its figures carry bounds."""


NO_BREAK = "\u00a0"  # a space a line may not break at


def shown_with_bound(estimate: T, bound: T | None, show: Callable[[T], str]) -> str:
    """``show(estimate)`` with ``show(bound)`` beside it ("X (bound Y)"); once where they read the same.

    A widget's result is a short line in a narrow box (a third of the page, or a phone): it may wrap only
    before the bound, never inside a figure or the bracket ("9.56 ms" then "(bound 5.86 ms)", not "9.56 ms
    (bound 5.86" then "ms)"), so every other space is a no-break space; it reads the same.
    """
    text = show(estimate)
    joined = with_bound(text, None if bound is None else show(bound))
    beside = joined[len(text) :]  # " (bound Y)", or nothing
    return text.replace(" ", NO_BREAK) + beside[:1] + beside[1:].replace(" ", NO_BREAK)
