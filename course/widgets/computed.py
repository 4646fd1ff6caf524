"""Widgets' default states kept on disk between builds, for as long as the calculators' sources stay the same.

A widget block is drawn in its default state, computed by the function the browser runs
(``calculators.browser``); the serving simulator's runs a whole simulation at the site's setting and again at
spec peaks, with its charts: a third of a warm build's CPU time. That result depends only on the widget's
name, its defaults, the model setting (part of the key) and the calculators, so it is stored like the lessons'
figures (:mod:`course.numbers.value_cache`): in the number cache (``$RIDGEPOINT_NUMBER_CACHE``, else
``.cache/numbers``), under ``widgets/<fingerprint of calculators/>/results.json``; folders of other
fingerprints are removed.

Only results that JSON gives back exactly are stored (equal, so with the same types: a tuple would come back
a list; keys in their order, which the page's ``data-defaults`` shows); any other is computed each time, as
before. Errors are never stored. Each call returns fresh objects, so a caller may change what it gets.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from calculators.setting import ModelSetting, active_setting, setting_key, using
from course.folder_digest import fingerprint_folder
from course.lesson_format import background
from course.numbers.value_cache import (
    calculators_fingerprint,
    default_cache_dir,
    read_json_object,
    write_json_object,
)

FOLDER = "widgets"
FILE = "results.json"


class WidgetCache:
    """Key -> the JSON text of a widget's result, for one fingerprint of the calculators."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / FILE
        self.texts = {k: v for k, v in read_json_object(self.path).items() if isinstance(v, str)}

    def get(self, key: str) -> Any | None:
        text = self.texts.get(key)
        return None if text is None else json.loads(text)

    def put(self, key: str, text: str) -> None:
        """Keep ``text``; the file is replaced whole (another build may be reading it)."""
        self.texts[key] = text
        write_json_object(self.path, self.texts)


_OPEN: dict[Path, WidgetCache] = {}


def widget_cache(cache_root: Path | None = None) -> WidgetCache:
    """The cache for the calculators as they are now, under ``cache_root`` (default: the number cache)."""
    root = (cache_root or default_cache_dir()).resolve() / FOLDER
    folder = root / calculators_fingerprint()
    if folder not in _OPEN:
        _OPEN[folder] = WidgetCache(fingerprint_folder(root, folder.name))
    return _OPEN[folder]


def _exact_json(value: Any) -> str | None:
    """``value`` as JSON text if reading that text back gives an equal value, else None."""
    try:
        text = json.dumps(value, allow_nan=False, separators=(",", ":"))  # in its order: pages show it
    except (TypeError, ValueError):
        return None
    return text if json.loads(text) == value else None


def computed_widget(
    name: str, defaults: dict[str, Any], compute: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """``compute(defaults)`` (the caller has made the setting active), from the cache where it was stored.

    Raises what ``compute`` raises (``ValueError`` for rejected defaults); nothing is stored then.
    """
    inputs = _exact_json(defaults)
    if inputs is None:  # defaults that JSON cannot hold exactly: not keyed, computed
        return compute(defaults)
    key = f"{setting_key(active_setting())} {name} {inputs}"
    cache = widget_cache()
    stored = cache.get(key)
    if stored is not None:
        return stored  # type: ignore[no-any-return]
    # Under dev.py serve, a worker computes it and draws its charts (raises BeingComputed until it is done).
    result = background.result(
        ("widget", key), widget_result, compute, defaults, active_setting(), background.enabled()
    )
    text = _exact_json(result)
    if text is not None:
        cache.put(key, text)
    return result


def widget_result(
    compute: Callable[[dict[str, Any]], dict[str, Any]],
    defaults: dict[str, Any],
    setting: ModelSetting | None,
    draw_charts: bool,
) -> dict[str, Any]:
    """``compute(defaults)`` with ``setting`` active; with ``draw_charts`` (in a worker), its charts' data
    and drawings are stored too, so that the build that shows the widget finds them all."""
    with using(setting):
        result = compute(defaults)
    if draw_charts:
        from calculators.charts.render import render_chart_data
        from course.charts.stored_data import stored_chart_data

        for payload in result.get("charts", {}).values():
            render_chart_data(stored_chart_data(payload["chart"], payload["params"]))
    return result
