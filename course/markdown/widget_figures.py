"""The widgets' charts: Vega-Lite specs (made with Altair) whose data the browser replaces as inputs move.

Each chart reads only named datasets (``timeline``, ``roofline``, ``points``) whose rows come from
``calculators.browser`` (the same rows at build time and in the worker). At build the spec is rendered to a
static SVG with vl-convert, and the spec itself is embedded beside it, so the live widget can swap rows
into a Vega view
(``view.data(name, rows)``) instead of recomputing anything in JavaScript.

This module exists because the course's chart builders (``calculators.charts``) were not there yet when the
widgets were written; once they offer named-data builders for these charts, the widgets should use those.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

import altair as alt
import vl_convert

WIDTH, HEIGHT = 340, 220
# Mid greys read on Material's light and dark (slate) backgrounds alike; the background stays transparent.
THEME = {
    "background": "transparent",
    "view": {"stroke": None},
    "axis": {"labelColor": "#8a8a8a", "titleColor": "#8a8a8a", "gridColor": "#8a8a8a33",
             "domainColor": "#8a8a8a", "tickColor": "#8a8a8a", "labelFontSize": 11, "titleFontSize": 11},
    "legend": {"labelColor": "#8a8a8a", "titleColor": "#8a8a8a", "orient": "bottom", "columns": 2},
    "title": {"color": "#8a8a8a"},
}  # fmt: skip
PHASE_COLOURS = alt.Scale(domain=["prefill", "decode"], range=["#e8590c", "#4c6ef5"])


def _data(name: str, rows: list[dict[str, Any]]) -> alt.Data:
    return alt.Data(values=rows, name=name)


def timeline_spec(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One request as two bars on a time axis: prefill, then all decode steps."""
    chart = (
        alt.Chart(_data("timeline", rows), width=WIDTH, height=70, title="One request, start to finish")
        .transform_calculate(start_ms="datum.start_s * 1000", end_ms="datum.end_s * 1000")
        .mark_bar(height=26)
        .encode(
            x=alt.X("start_ms:Q", title="time (ms)"),
            x2="end_ms:Q",
            color=alt.Color("phase:N", scale=PHASE_COLOURS, title=None),
            tooltip=[alt.Tooltip("phase:N"), alt.Tooltip("tokens:Q", title="tokens"),
                     alt.Tooltip("start_ms:Q", format=",.2f", title="from (ms)"),
                     alt.Tooltip("end_ms:Q", format=",.2f", title="to (ms)")],
        )
    )  # fmt: skip
    return chart.configure(**THEME).to_dict()


def _roofline_layers(
    lines: list[dict[str, Any]], points: list[dict[str, Any]], colour: str
) -> alt.LayerChart:
    x = alt.X("intensity:Q", scale=alt.Scale(type="log"), title="arithmetic intensity (FLOP/byte)")
    y = alt.Y("tflops:Q", scale=alt.Scale(type="log"), title="attainable TFLOP/s")
    by_phase = colour == "phase"  # one GPU, two phases: a grey roofline and coloured points
    line_colour = alt.value("#8a8a8a") if by_phase else alt.Color("gpu:N", title=None)
    point_colour = (
        alt.Color("phase:N", scale=PHASE_COLOURS, title=None) if by_phase else alt.Color("gpu:N", title=None)
    )
    line = (
        alt.Chart(_data("roofline", lines))
        .transform_calculate(tflops="datum.flops_per_s / 1e12")
        .mark_line(clip=True)
        .encode(x=x, y=y, color=line_colour, detail="gpu:N", tooltip=[alt.Tooltip("gpu:N", title="GPU")])
    )
    dots = (
        alt.Chart(_data("points", points))
        .transform_calculate(tflops="datum.flops_per_s / 1e12")
        .mark_point(filled=True, size=90, opacity=1, stroke="white", strokeWidth=1)
        .encode(x=x, y=y, color=point_colour,
                tooltip=[alt.Tooltip("label:N"), alt.Tooltip("intensity:Q", format=",.1f", title="FLOP/byte"),
                         alt.Tooltip("tflops:Q", format=",.1f", title="TFLOP/s")])
    )  # fmt: skip
    return alt.layer(line, dots)


def roofline_spec(
    lines: list[dict[str, Any]], points: list[dict[str, Any]], *, colour: str, title: str
) -> dict[str, Any]:
    """Rooflines (one line per GPU) with operations placed as points; log-log axes."""
    chart = _roofline_layers(lines, points, colour).properties(width=WIDTH, height=HEIGHT, title=title)
    return chart.configure(**THEME).to_dict()


def figure(chart: str, spec: dict[str, Any], caption: str) -> str:
    """A figure holding the static SVG and the spec the live widget re-renders from."""
    svg = vl_convert.vegalite_to_svg(spec)
    spec_json = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")
    return (
        f'<figure class="rp-widget__figure" data-chart="{escape(chart)}">'
        f'<div class="rp-widget__chart" role="img" aria-label="{escape(caption)}">{svg}</div>'
        f'<script type="application/json" class="rp-widget__spec">{spec_json}</script>'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


def prefill_decode_figures(result: dict[str, Any]) -> str:
    charts = result["charts"]
    return figure(
        "timeline",
        timeline_spec(charts["timeline"]),
        "Timeline of one request: prefill, then one decode step per token.",
    ) + figure(
        "roofline",
        roofline_spec(
            charts["roofline"], charts["points"], colour="phase", title="Prefill and decode on the roofline"
        ),
        "The GPU's roofline with the prefill pass and one decode step placed by their arithmetic intensity.",
    )


def roofline_explorer_figures(result: dict[str, Any]) -> str:
    charts = result["charts"]
    return figure(
        "roofline",
        roofline_spec(
            charts["roofline"], charts["points"], colour="gpu", title="Rooflines and the operation"
        ),
        "Each GPU's roofline; the points mark the operation's intensity and the FLOP/s each GPU "
        "can reach there.",
    )
