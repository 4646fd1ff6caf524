"""The spec-peak bound beside a widget's estimate, worded as the lessons print it: "6.73 ms (bound 4.84 ms)".

A widget computes under the page's model setting (:mod:`calculators.setting`); where that setting is not
already at spec peaks, every time, rate or throughput it shows has a second figure, the same calculation at
spec-sheet peaks (:data:`calculators.setting.SPEC_PEAK`: same calibration and KV reads, peak mode), the lower
bound a lesson's ``| bound`` filter prints. The wording is :func:`calculators.units.with_bound`'s, the
filter's own, so a widget and the prose beside it read alike; a figure that is its own bound is shown once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from calculators.setting import SPEC_PEAK, ModelSetting, active_setting, using
from calculators.units import with_bound

T = TypeVar("T")

NOTE = (
    "Beside a time or a rate, “(bound …)” is the same calculation at spec-sheet peaks, the limit the lessons "
    "print beside their estimates."
)
"""What a widget's stated assumptions add where its figures carry bounds."""


def bound_setting() -> ModelSetting | None:
    """The active setting at spec peaks, or None where it is already there (or outside any setting).

    Under the course's setting this is :data:`SPEC_PEAK`, the setting the lessons' bounds are computed in.
    """
    setting = active_setting()
    if setting is None or setting.mode == SPEC_PEAK.mode:
        return None
    return replace(setting, name=SPEC_PEAK.name, mode=SPEC_PEAK.mode)


def at_spec_peak(compute: Callable[[], T]) -> T | None:
    """``compute()`` again under :func:`bound_setting` (objects that read the setting must be made inside
    ``compute``, as ``Scenario`` reads it when built); None where there is no separate bound."""
    setting = bound_setting()
    if setting is None:
        return None
    with using(setting):
        return compute()


def shown_with_bound(estimate: T, bound: T | None, show: Callable[[T], str]) -> str:
    """``show(estimate)`` with ``show(bound)`` beside it ("X (bound Y)"); once where they read the same."""
    return with_bound(show(estimate), None if bound is None else show(bound))
