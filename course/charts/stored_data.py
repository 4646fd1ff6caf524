"""Chart data kept on disk between builds, for as long as the calculators' sources stay the same.

A serving lesson's chart is a simulator experiment (a rate sweep runs dozens of simulations), and a build
computed every chart again to check it and to find its drawing in the cache: 2.5 of a warm build's 10 s.
The data of a chart depends on its name, its parameters and the calculators alone, so it is stored like the
figures in prose (:mod:`course.numbers.value_cache`): one JSON file per chart and parameters, in a folder per
fingerprint of calculators/, the folders of other fingerprints removed. Errors are never stored (they are
cheap to find again). The folder is ``data/`` in the charts' cache (``$RIDGEPOINT_CHART_CACHE``), so a fresh
chart cache makes a cold build.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from calculators.charts import ChartData, chart_data
from calculators.charts.render import default_cache_dir, render_chart_data, write_atomically
from calculators.setting import ModelSetting, setting_key, site_setting, using
from course.folder_digest import fingerprint_folder
from course.lesson_format import background
from course.numbers.value_cache import calculators_fingerprint

DATA_FOLDER = "data"


def drawn_chart_data(
    name: str, params: dict[str, Any], setting: ModelSetting | None, folder: Path | None
) -> ChartData:
    """``chart_data(name, **params)`` under ``setting`` (the course's model setting, like every figure of the
    prose); with ``folder`` (in a worker), also drawn into the chart cache there, so that the build that
    shows it finds the drawing too."""
    with using(setting):
        data = chart_data(name, **params)
    if folder is not None:
        render_chart_data(data, folder)
    return data


def encoded(data: ChartData) -> str:
    """``data`` as JSON (tuples become lists; :func:`decoded` turns them back)."""
    return json.dumps(
        {
            "chart": data.chart,
            "params": dict(data.params),
            "datasets": dict(data.datasets),
            "table_columns": data.table_columns,
            "table_rows": data.table_rows,
            "caption": data.caption,
            "notes": data.notes,
        },
        sort_keys=True,
    )


def decoded(text: str) -> ChartData:
    """The :class:`ChartData` that :func:`encoded` wrote; parameters given as lists come back as tuples, as
    the charts' parameter readers return them."""
    raw = json.loads(text)
    return ChartData(
        chart=raw["chart"],
        params={k: tuple(v) if isinstance(v, list) else v for k, v in raw["params"].items()},
        datasets={name: list(rows) for name, rows in raw["datasets"].items()},
        table_columns=tuple(raw["table_columns"]),
        table_rows=tuple(tuple(row) for row in raw["table_rows"]),
        caption=raw["caption"],
        notes=tuple(raw["notes"]),
    )


def _key(name: str, params: dict[str, Any]) -> str:
    keyed = {"chart": name, "params": params, "setting": setting_key(site_setting())}
    canonical = json.dumps(keyed, sort_keys=True, default=repr)
    return hashlib.sha256(canonical.encode()).hexdigest()[:24]


def _folder(cache_dir: Path | None) -> Path:
    """This fingerprint's folder; the first time in a process, the other fingerprints' folders go."""
    root = (cache_dir if cache_dir is not None else default_cache_dir()) / DATA_FOLDER
    return _fingerprint_folder(root.resolve(), calculators_fingerprint())


_fingerprint_folder = lru_cache(maxsize=8)(fingerprint_folder)  # once per process, not once per chart


def stored_chart_data(name: str, params: dict[str, Any], cache_dir: Path | None = None) -> ChartData:
    """``chart_data(name, **params)``, read from the cache when the calculators computed it before.

    Raises :class:`~calculators.charts.params.ChartError` as ``chart_data`` does (never cached).
    """
    key = _key(name, params)
    path = _folder(cache_dir) / f"{key}.json"
    try:
        return decoded(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not stored yet, or unreadable: compute it
    # Under dev.py serve, a worker computes it and draws it (raises BeingComputed until it is done).
    folder = (cache_dir if cache_dir is not None else default_cache_dir()) if background.enabled() else None
    data = background.result(("chart", key), drawn_chart_data, name, params, site_setting(), folder)
    # Another build may be reading it; a full disk, or a build of other calculators that removed the folder,
    # leaves it computed and not stored.
    with contextlib.suppress(OSError):
        write_atomically(path, encoded(data))
    return data
