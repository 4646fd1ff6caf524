"""Computed figures kept on disk between builds, for as long as the calculators' sources stay the same.

A figure of a lesson is a calculator expression; its value depends on that expression, the model setting it is
computed under (:mod:`calculators.setting`, part of the key) and on the calculators
alone (:func:`calculators.expressions.evaluate_number` takes nothing else). Some are whole simulator
experiments (a rate sweep runs dozens of simulations), and without a cache every build, every ``check`` and
every fresh ``serve`` ran them all again: most of a warm build. So values are stored in one JSON file per
state of the calculators, ``<cache>/<fingerprint>.json``; any change to a file under calculators/ (a preset,
a formula) gives a new fingerprint and so recomputes everything, and the files of other fingerprints are
removed. Only values are stored, never errors: an error is cheap to find again, and one that depends on the
machine (the time limit) must not stick.

:func:`computed_number` is what the numbers in prose and the quizzes' answers call. The cache is
``$RIDGEPOINT_NUMBER_CACHE``, else ``.cache/numbers`` under the working directory (git-ignored),
like the charts' cache: a fresh one makes a cold build.
"""

from __future__ import annotations

import ast
import atexit
import json
import math
import os
import time
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from calculators.charts.render import write_atomically
from calculators.expressions import NAMESPACE, ExpressionError, check_expression, evaluate_number
from calculators.setting import ModelSetting, setting_key, site_setting, using
from course.folder_digest import folder_digest
from course.lesson_format import background

CACHE_ENV = "RIDGEPOINT_NUMBER_CACHE"
CALCULATORS = Path(__file__).resolve().parents[2] / "calculators"


def default_cache_dir() -> Path:
    """``$RIDGEPOINT_NUMBER_CACHE``, else ``.cache/numbers`` under the working directory."""
    return Path(os.environ.get(CACHE_ENV) or Path.cwd() / ".cache" / "numbers")


def sources_fingerprint(folder: Path = CALCULATORS) -> str:
    """A short hash of every file under ``folder`` (names and contents, byte code left out)."""
    return folder_digest(folder)[:16]


def read_json_object(path: Path) -> dict[str, object]:
    """The JSON object stored at ``path``; empty where there is none, or it is unreadable or not an object
    (a cache that cannot be read is a cold one)."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def write_json_object(path: Path, values: Mapping[str, object]) -> None:
    """Store ``values`` at ``path`` through a temporary file, replaced whole: another build reading the cache
    meanwhile sees the old file or the new one, never half of one."""
    write_atomically(path, json.dumps(values, sort_keys=True))


class ValueCache:
    """Expression -> value for one fingerprint of the calculators, read once and written on each new value."""

    def __init__(self, folder: Path, fingerprint: str) -> None:
        self.path = folder / f"{fingerprint}.json"
        stored = read_json_object(self.path)
        self.values = {k: float(v) for k, v in stored.items() if isinstance(v, int | float)}
        self.unwritten = False
        self.written_at = -math.inf  # the first value is written at once
        if folder.is_dir():
            for stale in folder.glob("*.json"):
                if stale != self.path:
                    stale.unlink(missing_ok=True)

    def get(self, expression: str) -> float | None:
        return self.values.get(expression)

    def put(self, expression: str, value: float) -> None:
        """Keep ``value``; the file is replaced whole (another build may be reading it), at most once every
        :data:`WRITE_EVERY_S` seconds: a cold build computes some 1,500 values, and writing the whole file
        for each was 11 of its seconds under the profiler. The rest is written by :func:`flush_caches` (at the
        end of a build, and when the process exits)."""
        if not math.isfinite(value):
            return  # JSON has no infinity; such a figure is rare and cheap
        self.values[expression] = value
        self.unwritten = True
        if time.monotonic() - self.written_at >= WRITE_EVERY_S:
            self.flush()

    def flush(self) -> None:
        """Write the values not written yet."""
        if self.unwritten:
            write_json_object(self.path, self.values)
            self.unwritten = False
            self.written_at = time.monotonic()


_OPEN: dict[tuple[Path, str], ValueCache] = {}
WRITE_EVERY_S = 2.0


@atexit.register
def flush_caches() -> None:
    """Write every open cache's values not written yet (the hook calls it at the end of each build)."""
    for cache in list(_OPEN.values()):
        cache.flush()


def value_cache(folder: Path | None = None) -> ValueCache:
    """The cache for the calculators as they are now (the fingerprint is taken once per import of them)."""
    key = (_resolved(folder or default_cache_dir()), calculators_fingerprint())
    if key not in _OPEN:
        _OPEN[key] = ValueCache(*key)
    return _OPEN[key]


@lru_cache(maxsize=64)
def _resolved(folder: Path) -> Path:
    """``folder`` made absolute, once per path: every figure asks for its cache, a few thousand a build."""
    return folder.resolve()


_FINGERPRINT: list[str] = []


def calculators_fingerprint() -> str:
    """:func:`sources_fingerprint` of the calculators, taken once per import of this module (``serve``
    imports it afresh when a file of the project changes), for every cache of computed results."""
    if not _FINGERPRINT:
        _FINGERPRINT.append(sources_fingerprint())
    return _FINGERPRINT[0]


SITE = "site"  # computed_number's default: the site's setting as it is when called


def computed_number(expression: str, setting: ModelSetting | str | None = SITE) -> float:
    """The value of ``expression`` under ``setting`` (by default :func:`calculators.setting.site_setting`);
    see :func:`_computed_number`."""
    chosen = site_setting() if isinstance(setting, str) else setting
    return _computed_number(expression, chosen)


@lru_cache(maxsize=2048)
def _computed_number(expression: str, setting: ModelSetting | None) -> float:
    """The value of a calculator expression a lesson quotes (a figure, a quiz's answer), computed under
    ``setting`` (the site's, :data:`calculators.setting.SITE_SETTING`, unless a claim asks for another mode).

    Kept in memory for the build (and, under ``serve``, until the calculators change) and on disk between
    builds, per setting: a claim checked in both modes computes each mode once. Raises
    :class:`~calculators.expressions.ExpressionError` like :func:`~calculators.expressions.evaluate_number`.
    """
    cache = value_cache()
    key = f"{setting_key(setting)} {expression}"
    stored = cache.get(key)
    if stored is not None:
        return stored
    if runs_the_simulator(expression):
        # Under dev.py serve, from a worker process (raises BeingComputed until it is done): see background.
        value = background.result(("number", key), number_under, expression, setting)
    else:
        value = number_under(expression, setting)
    cache.put(key, value)
    return value


def number_under(expression: str, setting: ModelSetting | None) -> float:
    """``evaluate_number(expression)`` with ``setting`` active: what a figure is (also in a worker)."""
    with using(setting):
        return evaluate_number(expression)


def _simulator_names() -> frozenset[str]:
    return frozenset(
        name
        for name, function in NAMESPACE.items()
        if getattr(function, "__module__", "").startswith("calculators.simulator")
    )


SIMULATOR_NAMES = _simulator_names()
"""The names an expression may call that run the simulator (its experiments): the slow figures."""


def runs_the_simulator(expression: str) -> bool:
    """Whether ``expression`` names a simulator experiment (False if it does not parse: computed here, where
    its error is raised as usual)."""
    try:
        tree = check_expression(expression)
    except ExpressionError:
        return False
    return any(isinstance(node, ast.Name) and node.id in SIMULATOR_NAMES for node in ast.walk(tree))


computed_number.cache_clear = _computed_number.cache_clear  # type: ignore[attr-defined]  # a new build
