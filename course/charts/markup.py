"""The HTML of a chart on a page: static SVG first, caption and data table always, interactive on demand.

The same markup serves lesson chart blocks, widgets' default state and notebook outputs, so a chart looks and
behaves the same everywhere: readers without JavaScript, and the PDF, get the SVG, the caption and the table;
``charts.js`` turns the figure into a live Vega view (tooltips) when the reader hovers, focuses or taps it,
loading the runtime only then.

A chart drawn at two widths (a course chart: wide, and narrow for a phone) carries one drawing in the page,
the narrow one, which reads at every width (it is never enlarged); the wide drawing is a file of the site
named by its SHA-256 (:func:`wide_drawing_digest`), which ``charts.js`` fetches, checked by that hash, only
where a figure is wide enough to show it, and which the PDF inlines. Every chart drawn twice made the pages
with the most charts the heaviest (issue 23: 36-152 kB of SVG per lesson that no reader sees). An empty
frame the wide drawing's size keeps its place, so that it arrives without moving the page.

Two ways to give the browser the spec: by key (``data-rp-spec``; the file is copied into the site after the
build by :func:`course.charts.assets.copy_into`, so the spec costs no bytes until the reader interacts), or
inline (a ``<script type="application/json">``, for notebook outputs rendered in another process).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from calculators.charts.render import RenderedChart, render_spec

MAX_TABLE_ROWS = 60  # beyond this a data table stops being a useful text alternative
_SIZE_RE = re.compile(r'^<svg\b[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"')


def wide_drawing_digest(svg: str) -> str:
    """The SHA-256 (hex) of a wide drawing: its file's name in the site (``assets/ridgepoint/charts/<digest>
    .svg``, :func:`course.charts.assets.copy_into`), and what the browser checks the file against."""
    return hashlib.sha256(svg.encode("utf-8")).hexdigest()


def _frame(svg: str) -> str:
    """An empty SVG the size of ``svg``: it holds the wide drawing's place until the drawing is fetched."""
    size = _SIZE_RE.match(svg)
    if size is None:
        return ""
    width, height = size.groups()
    return (
        f'<svg class="rp-chart__frame" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'aria-hidden="true"></svg>'
    )


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:,.4g}" if abs(value) < 1e15 else f"{value:.4g}"
    return str(value)


def table_html(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain HTML table (Material styles and scroll-wraps it)."""
    head = "".join(f"<th>{escape(str(column))}</th>" for column in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(_cell(cell))}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure_html(
    rendered: RenderedChart,
    *,
    caption: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    chart: str = "altair",
    inline_spec: bool = False,
    note: str = "",
) -> str:
    """The figure for one rendered chart. ``chart`` names it (CSS, tests); ``note`` follows the table."""
    label = escape(caption, quote=True)
    spec = ""
    if inline_spec:
        for variant, suffix in ((rendered, ""), (rendered.narrow, " rp-chart__spec--narrow")):
            if variant is not None:
                escaped = variant.spec_json.replace("</", "<\\/")
                spec += f'<script type="application/json" class="rp-chart__spec{suffix}">{escaped}</script>'
    extra = f"<p>{escape(note)}</p>" if note else ""
    inline_flag = "data-rp-spec-inline " if inline_spec else ""
    drawing = rendered.svg
    narrow_flag = ""
    if rendered.narrow is not None:
        # The narrow drawing is in the page; the wide one is fetched by charts.js where the figure is wide
        # enough for it (charts.css then shows it, a container query), so no chart is ever shrunk below
        # readable text, and charts.js goes live with the variant of the same width.
        narrow = rendered.narrow.svg
        drawing = f'{_frame(rendered.svg)}<div class="rp-chart__svg rp-chart__svg--narrow">{narrow}</div>'
        narrow_flag = (
            f'data-rp-spec-narrow="{rendered.narrow.key}" data-rp-wide="{wide_drawing_digest(rendered.svg)}" '
        )
    return (
        f'<figure class="rp-chart" data-rp-chart="{escape(chart, quote=True)}" data-rp-spec="{rendered.key}" '
        f"{narrow_flag}{inline_flag}>"
        # The drawing and the table are left out of the search index: their axis ticks, legend and figures
        # ("p50p90p99010,00020,000TTFT (ms)") matched queries and helped none. The caption says it in words.
        f'<div class="rp-chart__view" role="img" aria-label="{label}" tabindex="0" data-search-exclude>'
        f"{drawing}</div>"
        f'<figcaption class="rp-chart__caption">{escape(caption)}</figcaption>'
        f'<details class="rp-chart__data" data-search-exclude><summary>Data behind the chart</summary>'
        f"{table_html(columns, rows)}"
        f"{extra}</details>{spec}</figure>"
    )


def _table_from_spec(spec: dict[str, Any]) -> tuple[list[str], list[list[Any]], str]:
    """The largest dataset of a spec (Altair puts inline data in ``datasets``) as a table, and a note."""
    candidates = list((spec.get("datasets") or {}).values())
    values = (spec.get("data") or {}).get("values")
    if isinstance(values, list):
        candidates.append(values)
    records: list[dict[str, Any]] = max(
        (c for c in candidates if c and isinstance(c[0], dict)), key=len, default=[]
    )
    columns = list(dict.fromkeys(key for record in records for key in record))
    rows = [[record.get(column, "") for column in columns] for record in records[:MAX_TABLE_ROWS]]
    note = f"First {MAX_TABLE_ROWS} of {len(records)} rows." if len(records) > MAX_TABLE_ROWS else ""
    return columns, rows, note


def altair_chart_html(
    chart: Any,
    *,
    caption: str | None = None,
    columns: Sequence[str] | None = None,
    rows: Sequence[Sequence[Any]] | None = None,
    cache_dir: Path | None = None,
    inline_spec: bool = True,
    narrow_spec: dict[str, Any] | None = None,
) -> str:
    """Our chart markup for any Altair chart (or Vega-Lite spec dict), for notebooks and widgets.

    Without ``columns``/``rows`` the table shows the chart's largest dataset; without ``caption`` the chart's
    title or description is used. The spec is inlined by default: a notebook kernel's files are not copied.
    """
    spec: dict[str, Any] = chart if isinstance(chart, dict) else chart.to_dict()
    if columns is None or rows is None:
        columns, rows, note = _table_from_spec(spec)
    else:
        note = ""
    if caption is None:
        title = spec.get("title")
        title = title.get("text") if isinstance(title, dict) else title
        caption = str(title or spec.get("description") or "Chart")
    rendered = render_spec(spec, cache_dir)
    if narrow_spec is not None:
        narrow = render_spec(narrow_spec, cache_dir)
        rendered = RenderedChart(rendered.key, rendered.spec_json, rendered.svg, narrow)
    return figure_html(
        rendered, caption=caption, columns=columns, rows=rows, inline_spec=inline_spec, note=note
    )


def altair_renderer(spec: dict[str, Any], **metadata: Any) -> dict[str, str]:
    """An Altair renderer (``alt.renderers.register("ridgepoint", altair_renderer)``): no CDN, works offline.

    Returns a MIME bundle whose HTML is our chart markup; ``text/plain`` is for text-only front ends.
    """
    html = altair_chart_html(spec, caption=metadata.get("caption"), narrow_spec=metadata.get("narrow_spec"))
    return {"text/html": html, "text/plain": f"<chart: {json.dumps(spec.get('title', 'untitled'))}>"}


def enable_altair_renderer() -> None:
    """Register and enable :func:`altair_renderer` as Altair's renderer "ridgepoint"."""
    import altair as alt

    alt.renderers.register("ridgepoint", altair_renderer)
    alt.renderers.enable("ridgepoint")
