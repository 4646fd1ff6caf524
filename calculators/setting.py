"""The model setting a figure is computed under: which cost model, which calibration, KV-cache reads or not.

The calculators' own defaults are the spec-peak roofline without KV-cache reads (``Setup``'s defaults): a
bound, simple enough to derive by hand. The course teaches what engines do, so every figure of the site
(prose, quiz answers, charts, widgets) is computed under one declared setting, :data:`COURSE_SETTING`: the
calibrated mode with the "current" calibration (a CUDA-graph engine of today) and attention's reads of the KV
cache counted. :data:`SPEC_PEAK` is the same setting at spec-sheet peaks, the lower bound printed beside a
figure and the second mode every comparative claim must hold in.

A setting fills only what a caller left unsaid: ``make_setup`` takes ``mode``, ``calibration`` and
``kv_traffic`` from the active setting unless they are given, so an expression that names one of them is a
what-if (the lesson must say so; see ``course.numbers.departures``). Where the setting cannot apply it is left
out rather than raising: KV reads need the model's layer shapes, and the calibrated mode sets kernels'
efficiencies itself, so a setup given explicit efficiencies stays at (scaled) peaks.

The active setting is a context variable (:func:`using`), so results cached by argument must include it in
their key: :func:`cache_per_setting`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, ParamSpec, TypeVar


@dataclass(frozen=True)
class ModelSetting:
    """One way of computing every figure: ``mode`` and ``calibration`` of the cost model, KV reads or not."""

    name: str  # how the build names it in messages ("calibrated", "spec peak")
    mode: str  # "peak" or "calibrated" (calculators.calibration.MODES)
    calibration: str  # "as-published" or "current" (calculators.calibration.CALIBRATIONS)
    kv_traffic: bool  # attention's reads of the KV cache counted

    @property
    def key(self) -> str:
        """A short stable text for cache keys."""
        return f"{self.mode}/{self.calibration}/{'kv' if self.kv_traffic else 'nokv'}"


COURSE_SETTING = ModelSetting("calibrated", "calibrated", "current", kv_traffic=True)
"""The course's one setting: what a well-run engine of today measures, with KV-cache reads counted."""

SPEC_PEAK = ModelSetting("spec peak", "peak", "current", kv_traffic=True)
"""The same model at spec-sheet peaks: the lower bound beside a figure, and the other mode claims hold in."""

BOTH_MODES = (COURSE_SETTING, SPEC_PEAK)
"""The settings a comparative claim is checked under."""

SITE_SETTING: ModelSetting | None = COURSE_SETTING
"""The setting the site computes its figures under (prose, quizzes, charts, widgets, the reference page): the
one place to switch.

It is :data:`COURSE_SETTING`: every lesson's rates, objectives and conclusions were rewritten for it when it
was thrown (the serving lessons' workloads had been sized for spec-peak steps and overloaded one GPU under
it). Setting it back to None would compute each expression with the calculators' own defaults (spec peaks,
no KV reads) and silence the what-if check (``course.numbers.departures``): the lessons' prose would then
contradict their figures. Comparative claims are checked under :data:`BOTH_MODES` either way.
"""

P = ParamSpec("P")
R = TypeVar("R")

_ACTIVE: ContextVar[ModelSetting | None] = ContextVar("model_setting", default=None)


def active_setting() -> ModelSetting | None:
    """The setting figures are computed under now; None outside any (the calculators' own defaults)."""
    return _ACTIVE.get()


@contextmanager
def using(setting: ModelSetting | None) -> Iterator[None]:
    """Compute everything inside the block under ``setting`` (None: the calculators' own defaults)."""
    token = _ACTIVE.set(setting)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def bound_setting() -> ModelSetting | None:
    """The active setting at spec peaks, where a figure's bound is computed; None where it is already there.

    Under :data:`COURSE_SETTING` it is :data:`SPEC_PEAK`, the setting of the lessons' ``| bound`` figures;
    outside any setting (the calculators' own defaults, spec peaks) and in a peak setting there is no
    separate bound, each figure being its own.
    """
    setting = active_setting()
    if setting is None or setting.mode == SPEC_PEAK.mode:
        return None
    return replace(setting, name=SPEC_PEAK.name, mode=SPEC_PEAK.mode)


def at_spec_peak(compute: Callable[[], R]) -> R | None:
    """``compute()`` again under :func:`bound_setting`, or None where there is no separate bound.

    Whatever reads the setting must be made inside ``compute`` (``Scenario`` reads it when built).
    """
    setting = bound_setting()
    if setting is None:
        return None
    with using(setting):
        return compute()


def site_setting() -> ModelSetting | None:
    """:data:`SITE_SETTING`, read when called (so a test may set it for one build)."""
    return SITE_SETTING


def describe(setting: ModelSetting | None) -> str:
    """One sentence naming the setting figures are computed in, for a widget's stated assumptions."""
    if setting is None:
        return "Times at spec-sheet peaks (the calculators' own defaults); KV-cache reads where switched on."
    reads = "attention's reads of the KV cache counted" if setting.kv_traffic else "KV-cache reads left out"
    if setting.mode == "peak":
        return f"Times at spec-sheet peaks (dense FLOP/s, full memory bandwidth), {reads}."
    engine = "a CUDA-graph engine of today" if setting.calibration == "current" else "the engines of 2023-24"
    return (
        f"Times in the course's model setting: calibrated to what {engine} measures (kernel curves fitted to "
        f"published profiles, a per-step overhead), {reads}."
    )


def setting_key(setting: ModelSetting | None) -> str:
    """:attr:`ModelSetting.key`, or "defaults" for none (the calculators' own defaults)."""
    return setting.key if setting is not None else "defaults"


def cache_per_setting(maxsize: int) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``functools.lru_cache`` whose key includes the active setting, so one run is never served for another.

    The wrapped function keeps its attributes (``time_limit_s`` is read from it by the expression
    interpreter) and gains ``cache_clear``.
    """

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.lru_cache(maxsize=maxsize)
        def cached(setting: ModelSetting | None, args: tuple[Any, ...], kwargs: tuple[Any, ...]) -> R:
            return function(*args, **dict(kwargs))

        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            return cached(active_setting(), args, tuple(sorted(kwargs.items())))

        wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        return wrapper

    return decorate


def setup_options(options: dict[str, object], *, shapes_known: bool, tuned: bool) -> dict[str, object]:
    """``options`` (``make_setup``'s Setup fields) with what the active setting fills in.

    ``shapes_known``: the model has layer shapes (KV reads need them); ``tuned``: the caller set efficiencies
    (the calibrated mode would refuse them, so the setting's mode is not applied).
    """
    setting = active_setting()
    if setting is None:
        return options
    filled = dict(options)
    if "mode" not in filled and not tuned:
        filled["mode"] = setting.mode
    if "calibration" not in filled:
        filled["calibration"] = setting.calibration
    if "kv_traffic" not in filled and shapes_known:
        filled["kv_traffic"] = setting.kv_traffic
    return filled
