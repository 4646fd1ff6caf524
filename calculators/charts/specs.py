"""Altair chart builders: each turns a :class:`~calculators.charts.data.ChartData` into a Vega-Lite spec.

Numbers come from :mod:`calculators.charts.data`; this module decides marks, scales, colours and tooltips.
Datasets keep their names in the spec (``{"data": {"name": "operations"}}`` plus top-level ``datasets``), so a
live widget can replace one in the browser with ``view.data("operations", rows)``.

Styling works in light and dark pages and in print without a second render: the background is transparent and
every axis, legend and label uses ``currentColor``, which the page's text colour fills in; the series colours
are mid-luminance hues readable on both white and Material's dark slate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import altair as alt

from calculators.charts.content import ChartData, Row
from calculators.charts.data import chart_data
from calculators.charts.hierarchy import LEVELS
from calculators.charts.palette import (
    FORMAT_PART_COLOURS,
    MEMORY_COLOURS,
    NEUTRAL,
    PHASE_COLOURS,
    PRECISION_COLOURS,
    TENSOR_PARALLEL_COLOURS,
)

# Every chart is drawn for the width it is shown at, so the page never shrinks it (text stays at its size):
# - the wide drawing is WIDE_WIDTH px in all, axes, legends and padding included. charts.css shows it in
#   chart boxes at least that wide: a lesson's content column on a laptop (688 px at a 1280 px window,
#   Material's layout with both sidebars) and a widget's chart box there (646 px);
# - the narrow variant is NARROW_WIDTH px in all: a widget's chart box on a 390 px phone (the narrowest box
#   measured), with larger text. Shown in any narrower box, it shrinks a little: 13 px text stays at 11 CSS
#   px or more down to a 268 px box.
WIDE_WIDTH = 640
NARROW_WIDTH = 316
HEIGHT = 340
PADDING = 20  # each side; see themed()
FONT_SIZE = {False: 12, True: 13}
MARK_FONT_SIZE = {False: 11, True: 13}
NUMBER = ",.7~g"  # 0.1, 30, 1,000,000: SI prefixes (30m) would mislead, and plain ~g writes 1e+2


def gpu_scale(keys: Iterable[str]) -> Any:
    """A colour scale for charts whose category is a GPU's short name (notebooks): each in its course colour.

    ``alt.Color("GPU:N", scale=gpu_scale(["h100-sxm", "b200"]))`` draws the H100 in the blue it has on every
    other chart of the course, whatever the chart's order of GPUs.
    """
    from calculators.charts.content import short_gpu_name
    from calculators.charts.palette import gpu_colour

    keys = list(keys)
    return alt.Scale(domain=[short_gpu_name(k) for k in keys], range=[gpu_colour(k) for k in keys])


def colour_scale(colours: Mapping[str, str], names: Iterable[str] | None = None) -> Any:
    """A colour scale giving each series the colour its name has in ``colours`` (a set of the palette).

    ``names`` (default: all of ``colours``) are the series the chart shows, in legend order. Colours go by
    name, never by position: ``colour_scale(ATTENTION_COLOURS, ["GQA", "MHA"])`` draws GQA in its colour
    whatever else the chart holds.
    """
    names = list(colours if names is None else names)
    return alt.Scale(domain=names, range=[colours[name] for name in names])


def rows_colour(field: str, **options: Any) -> Any:
    """A colour channel on ``field`` whose colours come with the rows (their ``colour``), sorted by name.

    For series whose names change with the parameters ("chunked, budget 512"): a live widget swaps the rows,
    never the scale, so each row names its own colour (from the palette). The domain is sorted because
    Vega-Lite sorts a field range by the domain's field: the two stay in step only so.
    """
    return alt.Color(
        f"{field}:N", sort="ascending", scale=alt.Scale(range=alt.FieldRange(field="colour")), **options
    )


def fitted(chart: Any, width: int) -> Any:
    """A single or layered chart sized to ``width`` px in all (Vega-Lite fits the plot between its axes).

    Concatenated charts cannot be fitted this way (Vega-Lite fits single and layered views only): their
    builders size each part from the same ``width``.
    """
    return chart.properties(width=width, autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


def _plot_width(width: int, axis_room: int) -> int:
    """The plot's width in a concatenated chart ``width`` px wide, when its y axis takes ``axis_room`` px."""
    return width - 2 * PADDING - axis_room


# A label's width estimated in the spec, where Vega cannot measure text: px per character of 13 px text (a
# little over the average of Liberation and DejaVu Sans), for labels placed on whichever side of a point fits.
LABEL_CHAR_PX = 7
MARK_LABEL_CHAR_PX = 6  # the same for the wide drawing's 11 px mark labels


def _narrow(width: int) -> bool:
    return width < WIDE_WIDTH


def _data(name: str) -> Any:
    return alt.Data(name=name)  # type: ignore[no-untyped-call]


def _first_words(end: int) -> str:
    """A Vega expression: where a long legend label breaks, at its last ", " or space before ``end``."""
    head = f"slice(datum.label, 0, {end})"
    return f"(lastindexof({head}, ', ') > 0 ? lastindexof({head}, ', ') + 1 : lastindexof({head}, ' '))"


# On a phone a legend label longer than NARROW_LEGEND_CHARS (about 205 px of 13 px text) is drawn in two
# lines, broken at its last comma or space before that: "disaggregated prefill and decode" ran past the
# drawing's right edge. Labels are otherwise never cut (labelLimit 0).
NARROW_LEGEND_CHARS = 26
_BREAK = _first_words(NARROW_LEGEND_CHARS + 1)
WRAPPED_LEGEND_LABEL = (
    f"length(datum.label) <= {NARROW_LEGEND_CHARS} || {_BREAK} <= 0 ? datum.label"
    f" : [slice(datum.label, 0, {_BREAK}), trim(slice(datum.label, {_BREAK}))]"
)


LEGEND_CHANNELS = ("color", "fill", "stroke", "shape", "strokeDash", "size", "opacity")


def with_encodings(spec: Any, rewrite: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """``spec`` (a Vega-Lite dict) with every ``encoding`` in it, at any depth (layers, concats), rewritten.

    ``rewrite`` gets a copy of one encoding and returns it changed; the narrow variants' label and title
    wrapping both go through here, so they reach the same marks.
    """
    if isinstance(spec, list):
        return [with_encodings(item, rewrite) for item in spec]
    if not isinstance(spec, dict):
        return spec
    out = {key: with_encodings(value, rewrite) for key, value in spec.items()}
    if isinstance(out.get("encoding"), dict):
        out["encoding"] = rewrite(dict(out["encoding"]))
    return out


def wrapped_legend_labels(spec: Any) -> Any:
    """``spec`` (a Vega-Lite dict) with :data:`WRAPPED_LEGEND_LABEL` on every legend that sets no labels.

    Vega-Lite's legend config takes no label expression, so each legend gets it: the narrow variants'.
    """

    def wrap(encoding: dict[str, Any]) -> dict[str, Any]:
        for channel in LEGEND_CHANNELS:
            field = encoding.get(channel)
            if not isinstance(field, dict) or "field" not in field:
                continue
            legend = field.get("legend", {})
            if isinstance(legend, dict) and "labelExpr" not in legend:
                encoding[channel] = {**field, "legend": {**legend, "labelExpr": WRAPPED_LEGEND_LABEL}}
        return encoding

    return with_encodings(spec, wrap)


def themed(chart: Any, *, narrow: bool = False) -> Any:
    """Apply the course's chart style (transparent, ``currentColor`` text and rules) to any Altair chart.

    ``narrow`` sets the text sizes and legend layout of the narrow variant (see :data:`NARROW_WIDTH`).
    """
    ink = "currentColor"
    size = FONT_SIZE[narrow]
    return chart.configure(
        background="transparent",
        # Room at the edges: Vega sizes the drawing from estimated text widths, and the browser's font may be
        # wider, which cut "B200 (HGX, 1000 W)" at the left and "prefill, 2,000 tokens" at the right.
        padding={"left": PADDING, "right": PADDING, "top": 6, "bottom": 6},
        aria=False,  # the figure's caption and table are the text alternative; mark labels bloat the SVG
        font="sans-serif",
        axis={
            "labelColor": ink,
            "titleColor": ink,
            "domainColor": ink,
            "tickColor": ink,
            "gridColor": ink,
            "gridOpacity": 0.14,
            "domainOpacity": 0.5,
            "tickOpacity": 0.5,
            "labelFontSize": size,
            "titleFontSize": size,
            "titleFontWeight": "normal",
            "labelOverlap": "greedy",  # a label that would touch its neighbour is left out ("1,200"/"1,300")
            "labelSeparation": 6,
            "labelFlush": True,  # end labels stay inside the plot's width instead of poking out of the SVG
        },
        # The y title clears its tick labels even where the reader's font is wider than the one Vega measured
        # with ("300,000" ran into "KV cache (tokens)" in DejaVu Sans, about 12% wider than Liberation Sans).
        axisY={"titlePadding": 10},
        legend={
            "labelColor": ink,
            "titleColor": ink,
            "labelFontSize": size,
            "titleFontSize": size,
            "titleFontWeight": "normal",
            "orient": "bottom",
            "direction": "horizontal",
            "columns": 1 if narrow else 2,
            # A label drawn in a wider font than Vega measured must not reach the next entry's symbol.
            "columnPadding": 24,
            "labelLimit": 0,  # no truncation: "B200 (HGX, 1000 W), ridge 281" must read whole
        },
        title={"color": ink},
        view={"stroke": None},
    ).configure_text(color=ink, fontSize=MARK_FONT_SIZE[narrow])


def _with_datasets(chart: Any, datasets: Mapping[str, list[Row]]) -> Any:
    return chart.properties(datasets={name: rows for name, rows in datasets.items()})


def decades(values: Iterable[float]) -> list[float]:
    """Powers of ten spanning ``values``: the only ticks a log axis needs (fewer bytes, less noise)."""
    numbers = [v for v in values if v > 0]
    low, high = math.floor(math.log10(min(numbers))), math.ceil(math.log10(max(numbers)))
    return [10.0**k for k in range(low, high + 1)]


def _crowded(ticks: list[float], plot_width: int) -> bool:
    """Whether the last two decade labels of an x axis ``plot_width`` px long would touch.

    The last label ends at the axis' end (labelFlush), half its width nearer its neighbour than a centred
    one, and Vega's overlap check misses that: "10,000" ran into "100,000" on a phone. Labels are taken at
    8 px a character (13 px text in a wide font such as DejaVu Sans), and must keep 12 px apart.
    """
    if len(ticks) < 2:
        return False
    last, before = (len(f"{tick:,.7g}") * 8 for tick in ticks[-1:-3:-1])  # as NUMBER writes it
    return plot_width / (len(ticks) - 1) - last - before / 2 < 12


def _log_axis(
    field: str, title: str, values: Iterable[float], headroom: float = 1.0, plot_width: int | None = None
) -> dict[str, Any]:
    """A log axis from the decade below the data to the data's top times ``headroom``.

    ``plot_width``, for an x axis: the plot's width, so that decade labels too close to read apart thin out.
    """
    values = list(values)
    ticks = decades(values)
    top = max(values) * headroom
    ticks = [t for t in ticks if t <= top] if headroom > 1 else ticks
    domain = [ticks[0], top if headroom > 1 else ticks[-1]]
    # Over more than five decades ("0.01" to "1,000,000"), or where labels would touch, every decade keeps
    # its grid line and every other one its label.
    every_other = "round(log(datum.value) / LN10) % 2 == 0 ? datum.label : ''"
    crowded = len(ticks) > 6 or (plot_width is not None and _crowded(ticks, plot_width))
    axis = alt.Axis(format=NUMBER, values=ticks, labelExpr=every_other) if crowded else None
    return {
        "field": field,
        "type": "quantitative",
        "title": title,
        "scale": alt.Scale(type="log", domain=domain, nice=False),
        "axis": axis or alt.Axis(format=NUMBER, values=ticks),
    }


def roofline_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Log-log rooflines, each ridge point marked (dot, dotted drop line), the lesson's passes placed."""
    # The axes reach the rooflines' ends, and the undrawn "frame" corners when the chart has them (span: all).
    lines_rows = [*data.datasets["rooflines"], *data.datasets.get("frame", [])]
    x = alt.X(
        **_log_axis("intensity", "Arithmetic intensity (FLOP per byte)", [r["intensity"] for r in lines_rows])
    )
    y = alt.Y(**_log_axis("tflops", "Attainable TFLOP/s", [r["tflops"] for r in lines_rows], headroom=1.6))
    # Each GPU's colour comes with its rows (calculators.charts.palette), so it is the same on every chart.
    series = rows_colour("series", title=None)
    line_tip = [
        alt.Tooltip("gpu:N", title="GPU"),
        alt.Tooltip("intensity:Q", title="FLOP/byte", format=",.3~g"),
        alt.Tooltip("tflops:Q", title="TFLOP/s", format=",.3~g"),
    ]
    lines = alt.Chart(_data("rooflines")).mark_line(strokeWidth=2.5).encode(x, y, series, tooltip=line_tip)
    ridge_tip = [
        alt.Tooltip("gpu:N", title="GPU"),
        alt.Tooltip("intensity:Q", title="ridge point (FLOP/byte)", format=",.0f"),
        alt.Tooltip("tflops:Q", title="peak TFLOP/s", format=",.1f"),
    ]
    drops = (
        alt.Chart(_data("ridges"))
        .mark_rule(strokeDash=[2, 3], strokeWidth=1.25)
        .encode(x, y, alt.Y2(datum=decades(r["tflops"] for r in lines_rows)[0]), series)
    )
    ridges = (
        alt.Chart(_data("ridges"))
        .mark_point(filled=True, size=70, opacity=1)
        .encode(x, y, series, tooltip=ridge_tip)
    )
    layers = [lines, drops, ridges]
    if len(data.datasets["ridges"]) == 1:  # with several GPUs the legend names each ridge instead
        layers.append(
            alt.Chart(_data("ridges")).mark_text(align="right", dx=-7, dy=-9).encode(x, y, text="label:N")
        )
    op_tip = [
        alt.Tooltip("label:N", title="pass"),
        alt.Tooltip("gpu:N", title="GPU"),
        alt.Tooltip("intensity:Q", title="FLOP/byte", format=",.3~g"),
        alt.Tooltip("tflops:Q", title="TFLOP/s reached", format=",.3~g"),
        alt.Tooltip("time_ms:Q", title="time (ms)", format=",.3~g"),
        alt.Tooltip("bound:N", title=""),
    ]
    if "operation" not in {row["phase"] for row in data.datasets["operations"]}:
        op_tip += [  # a pass at spec peaks sits on its roof: its bound beside what it reaches
            alt.Tooltip("peak_tflops:Q", title="at spec peaks, its bound (TFLOP/s)", format=",.3~g"),
            alt.Tooltip("peak_time_ms:Q", title="at spec peaks, its bound (ms)", format=",.3~g"),
        ]
    shapes = {"prefill": "diamond", "decode": "square", "operation": "circle"}
    phases = {row["phase"] for row in data.datasets["operations"]} or {"prefill", "decode"}
    shown = [phase for phase in shapes if phase in phases]
    shape_scale = alt.Scale(domain=shown, range=[shapes[phase] for phase in shown])
    if "operation" in phases:  # an operation placed by its intensity (the roofline explorer): no passes
        shape = alt.Shape("phase:N", scale=shape_scale, legend=None)
    else:
        # Above the plot: beside the GPUs' legend it ran into their labels ("ridge 295" into "Pass").
        shape = alt.Shape("phase:N", title="Pass", scale=shape_scale, legend=alt.Legend(orient="top"))
    layers.append(
        alt.Chart(_data("operations"))
        .mark_point(filled=True, size=110, color="currentColor", opacity=1)
        .encode(x, y, shape, tooltip=op_tip)
    )
    if "operation" not in phases:
        # Passes are labelled on the chart. An operation sits on every chosen GPU's roof at one intensity, so
        # its labels would pile up; the table and the caption beside the explorer name each point instead.
        # Prefill sits far right (high intensity) and is labelled to its left; decode, to the left, to its
        # right, unless the label would run out of the plot there (a large batch on a phone's narrow plot):
        # then to its left too. Each label's width is estimated from its characters: one room for the longest
        # label sent "decode, batch 8" left of its point on a phone, over the axis's "10".
        near_end = f"scale('x', datum.intensity) + 9 + {LABEL_CHAR_PX} * length(datum.label) > width"
        placements: tuple[tuple[str, Any, Any], ...] = (
            ("prefill", "right", -9),
            ("decode", alt.expr(f"{near_end} ? 'right' : 'left'"), alt.expr(f"{near_end} ? -9 : 9")),
        )
        for phase, align, dx in placements:
            layers.append(
                alt.Chart(_data("operations"))
                .transform_filter(f"datum.phase == '{phase}'")
                .mark_text(align=align, dx=dx, dy=14)
                .encode(x, y, text="label:N")
            )
    chart = alt.layer(*layers).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def prefill_vs_decode_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Prefill cost in decode steps against prompt length, log-log; break-even and chosen prompt marked."""
    curve_rows = data.datasets["curve"]
    x = alt.X(
        **_log_axis("prompt_tokens", "Prompt length (tokens)", [r["prompt_tokens"] for r in curve_rows])
    )
    steps = [r["decode_steps"] for r in curve_rows]
    y = alt.Y(**_log_axis("decode_steps", "Prefill time, in decode steps", steps, headroom=1.6))
    tip = [
        alt.Tooltip("prompt_tokens:Q", title="prompt tokens", format=",.0f"),
        alt.Tooltip("decode_steps:Q", title="prefill in decode steps", format=",.3~g"),
        alt.Tooltip("prefill_ms:Q", title="prefill (ms)", format=",.3~g"),
        alt.Tooltip("decode_step_ms:Q", title="one decode step (ms)", format=",.3~g"),
        alt.Tooltip("bound:N", title="prefill is"),
    ]
    series = list(dict.fromkeys(row["series"] for row in curve_rows if "series" in row))
    # The curve is the prefill's cost, drawn in the prefill's colour; the weights-only line beside it is grey.
    if series:  # with attention counted: that curve and the weights-only line, told apart by colour and dash
        colours = [PHASE_COLOURS["prefill"], NEUTRAL][: len(series)]
        # Below the plot: inside it, in the empty bottom right, the curve ran through "with attention over
        # the prompt" at the lesson's setting, and on a phone's narrow plot the break-even's label into it.
        legend = alt.Legend(orient="bottom", labelLimit=0 if _narrow(width) else 360)
        colour = alt.Color("series:N", title=None, sort=series, scale=alt.Scale(domain=series, range=colours),
                           legend=legend)  # fmt: skip
        dash = alt.StrokeDash("series:N", sort=series, legend=None,
                              scale=alt.Scale(domain=series, range=[[1, 0], [6, 4]]))  # fmt: skip
        curve = (
            alt.Chart(_data("curve")).mark_line(strokeWidth=2.5).encode(x, y, colour, dash, tooltip=[*tip])
        )
    else:
        curve = (
            alt.Chart(_data("curve"))
            .mark_line(strokeWidth=2.5, color=PHASE_COLOURS["prefill"])
            .encode(x, y, tooltip=tip)
        )
    hover = alt.Chart(_data("curve")).mark_point(size=40, opacity=0).encode(x, y, tooltip=tip)
    marks = (
        alt.Chart(_data("marks"))
        .mark_point(filled=True, size=80, color="currentColor", opacity=1)
        .encode(x, y, tooltip=tip)
    )
    # Two lines ("2,000 tokens ≈" / "6.8 decode steps"), so a label left of its point clears the y axis.
    labels = (
        alt.Chart(_data("marks"))
        .transform_calculate(shown="replace(datum.label, ' ≈ ', ' ≈\\n')")
        .mark_text(align="right", dx=-8, dy=-22, lineBreak="\n")
        .encode(x, y, text="shown:N")
    )
    chart = alt.layer(curve, hover, marks, labels).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def ridge_points_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Horizontal bars, GPUs sorted by ridge point, one bar per precision, value written at each bar's end."""
    precisions = list(data.params["precisions"])
    order = list(dict.fromkeys(row["gpu"] for row in data.datasets["ridges"]))
    narrow = _narrow(width)
    # On a phone the names take at most 110 px (a long one ends in "…"), leaving the bars room.
    y = alt.Y("gpu:N", title=None, sort=order, axis=alt.Axis(labelLimit=110) if narrow else alt.Axis())
    tip = [
        alt.Tooltip("gpu:N", title="GPU"),
        alt.Tooltip("precision:N", title="precision"),
        alt.Tooltip("ridge:Q", title="ridge point (FLOP/byte)", format=",.0f"),
        alt.Tooltip("peak_tflops:Q", title="peak TFLOP/s", format=",.1f"),
        alt.Tooltip("bandwidth_tb_s:Q", title="memory TB/s", format=",.3~g"),
    ]
    colour = alt.Color(
        "precision:N",
        title="Precision",
        sort=[p.upper() for p in precisions],
        scale=alt.Scale(
            domain=[p.upper() for p in precisions], range=[PRECISION_COLOURS[p.upper()] for p in precisions]
        ),
        legend=None if len(precisions) == 1 else alt.Legend(),
    )
    offset = alt.YOffset("precision:N", sort=[p.upper() for p in precisions])
    # Under a phone's short plot the title ends at the plot's right end, reaching left under the names.
    x_axis = alt.Axis(format=NUMBER, titleAnchor="end") if narrow else alt.Axis(format=NUMBER)
    x = alt.X("ridge:Q", title="Ridge point (FLOP per byte)", axis=x_axis)
    bars = alt.Chart(_data("ridges")).mark_bar(cornerRadiusEnd=2).encode(x, y, offset, colour, tooltip=tip)
    values = (
        alt.Chart(_data("ridges"))
        .mark_text(align="left", dx=4)
        .encode(x, y, offset, text=alt.Text("ridge:Q", format=",.0f"))
    )
    step = (14 if len(precisions) == 1 else 11) if not narrow else (16 if len(precisions) == 1 else 15)
    chart = alt.layer(bars, values).properties(height=alt.Step(step))
    return _with_datasets(fitted(chart, width), data.datasets)


def format_bits_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Horizontal stacked bars, one per format in the order given: the value's own bits, then the scale's
    share; the total written at each bar's end."""
    rows = data.datasets["bits"]
    order = list(dict.fromkeys(row["format"] for row in rows))
    parts = list(dict.fromkeys(row["part"] for row in rows))
    narrow = _narrow(width)
    y = alt.Y("format:N", title=None, sort=order, axis=alt.Axis(labelLimit=110) if narrow else alt.Axis())
    x = alt.X("bits:Q", title="Bits per value", stack="zero", axis=alt.Axis(format=NUMBER))
    colour = alt.Color(
        "part:N",
        title=None,
        sort=parts,
        scale=alt.Scale(domain=parts, range=[FORMAT_PART_COLOURS[part] for part in parts]),
        legend=alt.Legend(orient="bottom"),
    )
    tip = [
        alt.Tooltip("format:N", title="format"),
        alt.Tooltip("part:N", title="part"),
        alt.Tooltip("bits:Q", title="bits per value", format=",.3~g"),
        alt.Tooltip("total:Q", title="total bits per value", format=",.3~g"),
    ]
    bars = (
        alt.Chart(_data("bits"))
        .mark_bar(cornerRadiusEnd=2)
        .encode(x, y, colour, alt.Order("order:Q"), tooltip=tip)
    )
    totals = (
        alt.Chart(_data("bits"))
        .transform_filter(alt.datum.part == parts[0])
        .mark_text(align="left", dx=4)
        .encode(alt.X("total:Q"), y, text=alt.Text("total:Q", format=",.3~g"))
    )
    chart = alt.layer(bars, totals).properties(height=alt.Step(22 if not narrow else 24))
    return _with_datasets(fitted(chart, width), data.datasets)


def memory_hierarchy_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Log-axis bars from 1 MB, one per memory level and GPU, each with its capacity written at its end."""
    rows = data.datasets["levels"]
    gpus = list(dict.fromkeys(row["gpu"] for row in rows))
    colours = [next(row["colour"] for row in rows if row["gpu"] == gpu) for gpu in gpus]
    narrow = _narrow(width)
    axis = alt.Axis(labelLimit=110) if narrow else alt.Axis()
    y = alt.Y("level:N", title=None, sort=list(LEVELS), axis=axis)
    offset = alt.YOffset("gpu:N", sort=gpus)
    top = max(row["capacity_mb"] for row in rows)
    x = alt.X(
        "capacity_mb:Q",
        title="Capacity (MB, log scale)",
        scale=alt.Scale(type="log", domain=[1, top * (40 if narrow else 6)], nice=False),
        axis=alt.Axis(format=NUMBER, titleAnchor="end") if narrow else alt.Axis(format=NUMBER),
    )
    colour = alt.Color("gpu:N", title="GPU", sort=gpus, scale=alt.Scale(domain=gpus, range=colours))
    tip = [
        alt.Tooltip("gpu:N", title="GPU"),
        alt.Tooltip("level:N", title="memory"),
        alt.Tooltip("capacity:N", title="capacity"),
        alt.Tooltip("bandwidth:N", title="bandwidth"),
    ]
    bars = (
        alt.Chart(_data("levels"))
        .mark_bar(cornerRadiusEnd=2)
        .encode(x, alt.X2("base_mb:Q"), y, offset, colour, tooltip=tip)
    )
    values = alt.Chart(_data("levels")).mark_text(align="left", dx=4).encode(x, y, offset, text="capacity:N")
    chart = alt.layer(bars, values).properties(height=alt.Step(16 if narrow else 14))
    return _with_datasets(fitted(chart, width), data.datasets)


def request_timeline_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Bars on a time axis: the prefill, then a bar per decode step; rules at first and last token."""
    x = alt.X("start_ms:Q", title="Time since the request arrived (ms)", axis=alt.Axis(format=NUMBER))
    y = alt.Y("phase:N", title=None, sort=["prefill", "decode"])
    colour = alt.Color(
        "phase:N",
        legend=None,
        scale=alt.Scale(domain=list(PHASE_COLOURS), range=list(PHASE_COLOURS.values())),
    )
    tip = [
        alt.Tooltip("label:N", title="what"),
        alt.Tooltip("token:Q", title="token produced"),
        alt.Tooltip("start_ms:Q", title="starts (ms)", format=",.2f"),
        alt.Tooltip("duration_ms:Q", title="takes (ms)", format=",.2f"),
        alt.Tooltip("peak_ms:Q", title="at spec peaks, its bound (ms)", format=",.2f"),
        alt.Tooltip("bound:N", title=""),
    ]
    segments = (
        alt.Chart(_data("segments"))
        .mark_bar(stroke="white", strokeWidth=0.75, height=26)
        .encode(x, x2="end_ms:Q", y=y, color=colour, tooltip=tip)
    )
    # The same request at spec peaks, a grey line over each bar: the bound beside the estimate, grey as
    # bound-vs-calibrated draws it, over the bar since "token N" is written under the decode bar. In a
    # spec-peak setting it spans the bar's own extent.
    peaks = (
        alt.Chart(_data("segments"))
        .mark_rule(color=NEUTRAL, strokeWidth=2.5, yOffset=-15.5)
        .encode(alt.X("peak_start_ms:Q"), x2="peak_end_ms:Q", y=y, tooltip=tip)
    )
    rule_x = alt.X("time_ms:Q")
    rules = alt.Chart(_data("events")).mark_rule(strokeDash=[4, 3], color="currentColor").encode(rule_x)
    # Both label layers read every event and blank the ones they do not place: a filtered-out layer would be
    # empty when the request has one output token, and Vega warns "Infinite extent" for an empty field.
    first = "datum.kind == 'first'"
    after = (
        alt.Chart(_data("events"))
        .mark_text(align="left", baseline="top", dx=4, y=2)
        .encode(rule_x, text=alt.condition(first, alt.Text("label:N"), alt.value("")))
    )
    before = (
        alt.Chart(_data("events"))
        .mark_text(align="right", baseline="bottom", dx=-4, y=118)
        .encode(rule_x, text=alt.condition(first, alt.value(""), alt.Text("label:N")))
    )
    chart = alt.layer(segments, peaks, rules, after, before).properties(height=120)
    return _with_datasets(fitted(chart, width), data.datasets)


def kv_cache_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """KV-cache GB against context, a line per attention layout, the memory left for it as a dashed rule.

    Both axes follow the rows (the data cuts a line at twice that memory), so a live widget that swaps the
    rows gets fitting axes; each line's value at the chosen context is marked and labelled.

    No text sits where a line can pass (tests/site/test_reader_browser.py checks every course page). Every
    line rises from the origin, steeply or not, and a rising line crosses any fixed place inside the plot at
    some setting: the layouts' legend in the plot's top left was crossed by the multi-head line, the rule's
    label at its right end by the grouped-query line (the lesson "Attention's roofline and FlashAttention",
    Llama-3.1 8B at 32,000 tokens). So both legends sit outside the plot: the rule's above it, the layouts'
    below. A point's label goes where neither its own line nor the rule is (:func:`_kv_label_placement`).
    """
    x = alt.X(
        "context:Q",
        title="Context per sequence (tokens)",
        axis=alt.Axis(format=",.0f"),
        scale=alt.Scale(zero=True, nice=False),
    )
    y = alt.Y("gb:Q", title="KV cache of the batch (GB)", axis=alt.Axis(format=",.0f"))
    narrow = _narrow(width)
    # Each line in its attention layout's colour, carried by the rows (calculators.charts.palette).
    colour = rows_colour("series", title=None, legend=_kv_cache_legend(narrow))
    tip = [
        alt.Tooltip("series:N", title="attention"),
        alt.Tooltip("context:Q", title="context (tokens)", format=",.0f"),
        alt.Tooltip("gb:Q", title="KV cache (GB)", format=",.3~g"),
    ]
    drawn = alt.Chart(_data("lines")).mark_line(strokeWidth=2.5).encode(x, y, colour, tooltip=tip)
    hover = alt.Chart(_data("lines")).mark_point(size=40, opacity=0, clip=True).encode(x, y, tooltip=tip)
    marks = (
        alt.Chart(_data("marks"))
        .mark_point(filled=True, size=70, clip=True)
        .encode(x, y, colour, tooltip=tip)
    )
    dash = alt.StrokeDash(
        "label:N",
        title=None,
        scale=alt.Scale(range=[[6, 4]]),
        legend=alt.Legend(
            orient="top",
            symbolType="stroke",
            symbolSize=300,
            symbolStrokeColor="currentColor",
            labelLimit=0,
        ),
    )
    rule = alt.Chart(_data("budget")).mark_rule(color="currentColor").encode(alt.Y("gb:Q"), dash)
    labels = (
        alt.Chart(_data("marks"))
        .transform_calculate(**_kv_label_lines(narrow))
        .mark_text(**_kv_label_placement(narrow))
        .encode(x, y, text="shown:N")
    )
    chart = alt.layer(drawn, hover, rule, marks, labels).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def _kv_label_lines(narrow: bool) -> dict[str, str]:
    """A point label's lines (``shown``) and its longest line's characters (``longest``), as Vega fields.

    On a phone each label takes two lines ("83.9 GB," / "does not fit").
    """
    if not narrow:
        return {"shown": "[datum.label]", "longest": "length(datum.label)"}
    return {
        "shown": "split(replace(datum.label, ', ', ',|'), '|')",
        "longest": "max(length(split(datum.label, ', ')[0]) + 1, length(peek(split(datum.label, ', '))))",
    }


def _kv_label_placement(narrow: bool) -> dict[str, Any]:
    """Where a point's label goes: the first of four corners around the point that the label fits in, clear
    of the memory-left rule and of the lines.

    Vega cannot measure text in a spec, so the label's box is estimated from its characters and lines. Every
    line rises from the origin and the lines never cross (a multi-head twin's cache is a multiple of its
    model's at every context). A point's own line is clear of its label below and right of the point or
    above and left of it, and in the other two corners only where the line is steep enough to pass beside
    the label or flat enough to pass under it; the label of the upper point tries above its line first (the
    other line is below), the lower point's below. The rule is a horizontal line across the whole plot: a
    corner it runs through is taken only where no other is left.
    """
    char_px = LABEL_CHAR_PX if narrow else MARK_LABEL_CHAR_PX
    line_px = MARK_FONT_SIZE[narrow] + 2  # Vega's line height for a label of several lines
    px, py, rule = "scale('x', datum.context)", "scale('y', datum.gb)", "scale('y', datum.rule)"
    w, h = f"({char_px} * datum.longest)", f"({line_px} * length(datum.shown))"
    gap = 8  # from the point's centre to the label's near corner, each way
    right = f"{px} + {gap} + {w} <= width"
    left = f"{px} - {gap} - {w} >= 0"
    # A corner fits above or below if the plot has room there and the rule does not run through it.
    room_below, room_above = f"{py} + {gap} + {h} <= height", f"{py} - {gap} - {h} >= 0"
    below = f"{room_below} && !({rule} > {py} + 4 && {rule} < {py} + {gap} + {h} + 2)"
    above = f"{room_above} && !({rule} < {py} - 4 && {rule} > {py} - {gap} - {h} - 2)"
    slope = f"((height - {py}) / max({px}, 1))"  # pixels the line rises per pixel to the right
    beside = f"({slope} > ({gap} + {h}) / {gap} || {slope} < {gap} / ({gap} + {w}))"
    corners = {
        "br": f"{below} && {right}",
        "al": f"{above} && {left}",
        "ar": f"{above} && {right} && {beside}",
        "bl": f"{below} && {left} && {beside}",
    }
    # Where no corner is clear of everything, the dashed rule may cross the label (never its line, the
    # plot's edge or the axes): a point close above or below the rule, with no room on its line's free side.
    loose = {"br": f"{room_below} && {right}", "al": f"{room_above} && {left}"}

    def first_fitting(order: tuple[str, ...]) -> str:
        strict = "".join(f"({corners[name]}) ? '{name}' : " for name in order)
        return strict + "".join(f"({loose[name]}) ? '{name}' : " for name in order if name in loose) + "'br'"

    above_first = first_fitting(("al", "ar", "br", "bl"))
    below_first = first_fitting(("br", "bl", "al", "ar"))
    corner = f"(datum.upper ? {above_first} : {below_first})"
    on_right = f"indexof(['br', 'ar'], {corner}) >= 0"
    on_top = f"indexof(['al', 'ar'], {corner}) >= 0"
    # Vega sets a label's first line at the anchor and the next ones below it, whatever its baseline.
    return {
        "align": alt.expr(f"{on_right} ? 'left' : 'right'"),
        "baseline": alt.expr(f"{on_top} ? 'bottom' : 'top'"),
        "dx": alt.expr(f"{on_right} ? {gap} : -{gap}"),
        "dy": alt.expr(f"{on_top} ? -{gap} - {line_px} * (length(datum.shown) - 1) : {gap}"),
    }


def _kv_cache_legend(narrow: bool) -> Any:
    """One layout per line, below the plot; on a phone each label wrapped.

    The labels are long ("Llama-3.1 8B with multi-head attention (MHA), 512 KiB per token"): two to a row
    ran into each other, and on a phone one is wider than the plot. There each breaks before "with" and
    after its comma, a line of its own each part.
    """
    if not narrow:
        return alt.Legend(orient="bottom", direction="vertical", columns=1, labelLimit=0)
    wrapped = "split(replace(replace(datum.label, ' with ', '|with '), ', ', '|'), '|')"
    return alt.Legend(orient="bottom", direction="vertical", columns=1, labelLimit=0, labelExpr=wrapped)


def prefill_stall_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Each token's gap from the one before, over time, one line per scheduler; the arrival marked."""
    x = alt.X("time_ms:Q", title="Time since the run started (ms)", axis=alt.Axis(format=NUMBER))
    gaps = [r["gap_ms"] for r in data.datasets["gaps"]]
    y = alt.Y(**_log_axis("gap_ms", "Gap before this token (ms)", gaps, headroom=1.6))
    colour = rows_colour("series", title=None)  # each run in its scheduler's colour
    tip = [
        alt.Tooltip("series:N", title="scheduler"),
        alt.Tooltip("time_ms:Q", title="token at (ms)", format=",.1f"),
        alt.Tooltip("gap_ms:Q", title="gap (ms)", format=",.3~g"),
    ]
    lines = (
        alt.Chart(_data("gaps"))
        .mark_line(strokeWidth=2, interpolate="step-before", point=alt.OverlayMarkDef(size=18))
        .encode(x, y, colour, tooltip=tip)
    )
    rule_x = alt.X("time_ms:Q")
    rules = alt.Chart(_data("events")).mark_rule(strokeDash=[4, 3], color="currentColor").encode(rule_x)
    labels = (
        alt.Chart(_data("events"))
        .mark_text(align="left", baseline="top", dx=4, y=2)
        .encode(rule_x, text="label:N")
    )
    chart = alt.layer(lines, rules, labels).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


LATENCY_METRICS = ["TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99"]
LATENCY_COLOURS = {
    metric: PHASE_COLOURS["prefill" if metric.startswith("TTFT") else "decode"] for metric in LATENCY_METRICS
}


def latency_vs_rate_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """TTFT and TPOT percentiles against arrival rate, log time axis; the SLO bounds as dotted rules."""
    x = alt.X("rate:Q", title="Arrival rate (requests per second)", axis=alt.Axis(format=NUMBER))
    values = [r["ms"] for r in data.datasets["points"]] + [r["ms"] for r in data.datasets["bounds"]]
    y = alt.Y(**_log_axis("ms", "Latency (ms)", values, headroom=1.6))
    # TTFT is the wait for the prefill, TPOT a decode step: each in its phase's colour, p50 dashed, p99
    # solid. Colour and dash share the field, so Vega-Lite draws one legend of both.
    colour = alt.Color("metric:N", title=None, sort=LATENCY_METRICS, scale=colour_scale(LATENCY_COLOURS))
    dash = alt.StrokeDash(
        "metric:N",
        title=None,
        sort=LATENCY_METRICS,
        scale=alt.Scale(domain=LATENCY_METRICS, range=[[6, 3], [1, 0], [6, 3], [1, 0]]),
    )
    tip = [
        alt.Tooltip("metric:N", title=""),
        alt.Tooltip("rate:Q", title="requests/s", format=",.3~g"),
        alt.Tooltip("ms:Q", title="ms", format=",.3~g"),
    ]
    lines = (
        alt.Chart(_data("points"))
        .mark_line(strokeWidth=2.5, point=alt.OverlayMarkDef(size=30))
        .encode(x, y, colour, dash, tooltip=tip)
    )
    rules = (
        alt.Chart(_data("bounds"))
        .mark_rule(strokeDash=[2, 3], color="currentColor")
        .encode(alt.Y("ms:Q"), tooltip=[alt.Tooltip("label:N", title=""), alt.Tooltip("ms:Q", title="ms")])
    )
    labels = (
        alt.Chart(_data("bounds"))
        .mark_text(align="left", baseline="bottom", x=4, dy=-2)
        .encode(alt.Y("ms:Q"), text="label:N")
    )
    chart = alt.layer(lines, rules, labels).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def goodput_vs_rate_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Goodput against offered rate, one line per system; the diagonal is every request meeting the SLO."""
    rows = data.datasets["points"]
    top = max(r["rate"] for r in rows)
    x = alt.X("rate:Q", title="Arrival rate (requests per second)", axis=alt.Axis(format=NUMBER))
    y = alt.Y(
        "goodput:Q", title="Goodput (requests per second meeting the SLO)", axis=alt.Axis(format=NUMBER)
    )
    colour = rows_colour("system", title=None)  # each system in its scheduler's colour
    tip = [
        alt.Tooltip("system:N", title=""),
        alt.Tooltip("rate:Q", title="arrival rate (req/s)", format=",.3~g"),
        alt.Tooltip("goodput:Q", title="goodput (req/s)", format=",.3~g"),
        alt.Tooltip("attainment:Q", title="meet the SLO (%)", format=",.3~g"),
        alt.Tooltip("ttft_p99_ms:Q", title="TTFT p99 (ms)", format=",.3~g"),
        alt.Tooltip("tpot_p99_ms:Q", title="TPOT p99 (ms)", format=",.3~g"),
    ]
    diagonal = (
        alt.Chart(alt.Data(values=[{"rate": 0, "goodput": 0}, {"rate": top, "goodput": top}]))  # type: ignore[no-untyped-call]
        .mark_line(strokeDash=[2, 3], color="currentColor", opacity=0.6)
        .encode(x, y)
    )
    lines = (
        alt.Chart(_data("points"))
        .mark_line(strokeWidth=2.5, point=alt.OverlayMarkDef(size=30))
        .encode(x, y, colour, tooltip=tip)
    )
    chart = alt.layer(diagonal, lines).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


# The phases in the course's one palette (calculators/charts/palette.py), so prefill and decode look the
# same on every chart; waiting in a neutral grey. Memory is in the memory states' colours, not the phases'.
SERVING_PHASES = {"queued": NEUTRAL, "prefill": PHASE_COLOURS["prefill"], "decode": PHASE_COLOURS["decode"]}
STEP_KINDS = {"decoding": PHASE_COLOURS["decode"], "prefilling": PHASE_COLOURS["prefill"]}
MEMORY_PARTS = {
    "filled": MEMORY_COLOURS["filled"],
    "reserved, empty": MEMORY_COLOURS["reserved"],
    "free": MEMORY_COLOURS["free"],
}


def serving_timeline_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Top: a row per request, bars while it queues, prefills or decodes. Bottom: each step's requests."""
    x_title = "Time since the run started (ms)"
    x = alt.X("start_ms:Q", title=x_title, axis=alt.Axis(format=NUMBER))
    phase = alt.Color(
        "phase:N",
        title=None,
        scale=colour_scale(SERVING_PHASES),
    )
    rows = [row["request"] for row in sorted(data.datasets["spans"], key=lambda r: r["row"])]
    plot = _plot_width(width, 72 if _narrow(width) else 62)  # for "request 16", "Requests in the step"
    span_tip = [
        alt.Tooltip("request:N", title="request"),
        alt.Tooltip("phase:N", title="doing"),
        alt.Tooltip("start_ms:Q", title="from (ms)", format=",.1f"),
        alt.Tooltip("end_ms:Q", title="to (ms)", format=",.1f"),
        alt.Tooltip("tokens:Q", title="tokens"),
    ]
    spans = (
        alt.Chart(_data("spans"))
        .mark_bar(height=9)
        .encode(
            x,
            alt.X2("end_ms:Q"),
            alt.Y("request:N", title=None, sort=list(dict.fromkeys(rows))),
            phase,
            tooltip=span_tip,
        )
        .properties(width=plot, height=alt.Step(12))
    )
    kind = alt.Color("what:N", title=None, scale=colour_scale(STEP_KINDS))
    step_tip = [
        alt.Tooltip("step:Q", title="step"),
        alt.Tooltip("what:N", title=""),
        alt.Tooltip("requests:Q", title="requests"),
        alt.Tooltip("tokens:Q", title="tokens"),
        alt.Tooltip("start_ms:Q", title="starts (ms)", format=",.1f"),
    ]
    steps = (
        alt.Chart(_data("steps"))
        .mark_bar()
        .encode(
            alt.X("start_ms:Q", title=x_title, axis=alt.Axis(format=NUMBER)),
            alt.X2("end_ms:Q"),
            alt.Y("requests:Q", title="Requests in the step", stack="zero"),
            kind,
            tooltip=step_tip,
        )
        .properties(width=plot, height=110)
    )
    chart = alt.vconcat(spans, steps, spacing=12).resolve_scale(x="shared", color="independent")
    return _with_datasets(chart, data.datasets)


def kv_memory_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Top: reserved and filled KV tokens over time, the pool as a dashed rule. Bottom: the pool's map."""
    tip = [
        alt.Tooltip("time_s:Q", title="time (s)", format=",.3f"),
        alt.Tooltip("what:N", title=""),
        alt.Tooltip("tokens:Q", title="tokens", format=",.0f"),
    ]
    colour = alt.Color("what:N", title=None, scale=colour_scale(MEMORY_COLOURS, ["reserved", "filled"]))
    y = alt.Y("tokens:Q", title="KV cache (tokens)", axis=alt.Axis(format=NUMBER))
    lines = (
        alt.Chart(_data("over_time"))
        .mark_line(strokeWidth=2, interpolate="step-before")
        .encode(alt.X("time_s:Q", title="Time (s)", axis=alt.Axis(format=NUMBER)), y, colour, tooltip=tip)
    )
    pool = (
        alt.Chart(_data("capacity"))
        .mark_rule(strokeDash=[5, 4], color="currentColor")
        .encode(alt.Y("tokens:Q"))
    )
    plot = _plot_width(width, 80 if _narrow(width) else 78)  # for "400,000" and "KV cache (tokens)"
    top = alt.layer(lines, pool).properties(width=plot, height=200)
    part = alt.Color(
        "part:N",
        title="At the fullest step",
        scale=colour_scale(MEMORY_PARTS),
    )
    map_tip = [
        alt.Tooltip("request:Q", title="request id"),
        alt.Tooltip("part:N", title=""),
        alt.Tooltip("start:Q", title="from token", format=",.0f"),
        alt.Tooltip("end:Q", title="to token", format=",.0f"),
    ]
    bottom = (
        alt.Chart(_data("map"))
        .mark_bar(height=30, stroke="white", strokeWidth=0.5)
        .encode(
            alt.X("start:Q", title="Position in the KV pool (tokens)", axis=alt.Axis(format=NUMBER)),
            alt.X2("end:Q"),
            part,
            tooltip=map_tip,
        )
        .properties(width=plot, height=40)
    )
    chart = alt.vconcat(top, bottom, spacing=14).resolve_scale(color="independent")
    return _with_datasets(chart, data.datasets)


def serving_latency_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Bars of TTFT and TPOT percentiles side by side, per scheduler, the SLO dashed; then output tokens/s.

    Wide, the three panels stand in a row; narrow, they are stacked, each as wide as the phone allows.
    """
    schedulers = list(dict.fromkeys(row["scheduler"] for row in data.datasets["throughput"]))
    colour = rows_colour("scheduler", title=None)  # each in its scheduler's colour, carried by the rows
    tip = [
        alt.Tooltip("scheduler:N", title=""),
        alt.Tooltip("metric:N", title=""),
        alt.Tooltip("percentile:N", title="percentile"),
        alt.Tooltip("ms:Q", title="ms", format=",.3~g"),
    ]
    stacked = _narrow(width)
    spacing = 28
    # Each panel has its own y axis (labels up to "20,000" and a title): about 55-65 px beside its plot.
    if stacked:
        panel_width = output_width = _plot_width(width, 66)
        height = 150
    else:
        room = _plot_width(width, 3 * 56) - 2 * spacing
        output_width = room // 5
        panel_width = (room - output_width) // 2
        height = 200
    panels = []
    for metric, short in (("Time to first token", "TTFT"), ("Time per output token", "TPOT")):
        title = f"{short if stacked else metric} (ms)"  # stacked panels are shorter than the long titles
        bars = (
            alt.Chart(_data("percentiles"))
            .transform_filter(alt.datum.metric == metric)
            .mark_bar()
            .encode(
                alt.X("percentile:N", title=None, sort=["p50", "p90", "p99"], axis=alt.Axis(labelAngle=0)),
                alt.XOffset("scheduler:N", sort=schedulers),
                alt.Y("ms:Q", title=title, axis=alt.Axis(format=NUMBER)),
                colour,
                tooltip=tip,
            )
        )
        # The same run at spec peaks: a grey tick across each bar at its bound (as bound-vs-calibrated draws
        # the bound grey); outside a calibrated setting it marks the bar's own top.
        peaks = (
            alt.Chart(_data("percentiles"))
            .transform_filter(alt.datum.metric == metric)
            .mark_tick(color=NEUTRAL, thickness=3)
            .encode(
                alt.X("percentile:N", sort=["p50", "p90", "p99"]),
                alt.XOffset("scheduler:N", sort=schedulers),
                alt.Y("peak_ms:Q"),
                tooltip=[
                    *tip,
                    alt.Tooltip("peak_ms:Q", title="at spec peaks, its bound (ms)", format=",.3~g"),
                ],
            )
        )
        slo = (
            alt.Chart(_data("slo"))
            .transform_filter(alt.datum.metric == metric)
            .mark_rule(strokeDash=[5, 4], color="currentColor")
            .encode(alt.Y("ms:Q"))
        )
        panels.append(alt.layer(bars, peaks, slo).properties(width=panel_width, height=height))
    output_x = alt.X("scheduler:N", title=None, sort=schedulers, axis=alt.Axis(labels=False, ticks=False))
    output_tip = [
        alt.Tooltip("scheduler:N", title=""),
        alt.Tooltip("tokens_per_s:Q", title="tokens/s", format=",.0f"),
        alt.Tooltip("peak_tokens_per_s:Q", title="at spec peaks, its bound", format=",.0f"),
        alt.Tooltip("slo_attainment:Q", title="meets the SLO", format=".0%"),
    ]
    output_bars = (
        alt.Chart(_data("throughput"))
        .mark_bar()
        .encode(
            output_x,
            alt.Y("tokens_per_s:Q", title="Output tokens/s", axis=alt.Axis(format=NUMBER)),
            colour,
            tooltip=output_tip,
        )
    )
    output_peaks = (
        alt.Chart(_data("throughput"))
        .mark_tick(color=NEUTRAL, thickness=3)
        .encode(output_x, alt.Y("peak_tokens_per_s:Q"), tooltip=output_tip)
    )
    output = alt.layer(output_bars, output_peaks).properties(width=output_width, height=height)
    chart: Any = (
        alt.vconcat(*panels, output, spacing=18) if stacked else alt.hconcat(*panels, output, spacing=spacing)
    )
    return _with_datasets(chart, data.datasets)


# Batch labels under the first curve (weights only), over the second.
BATCH_LABEL_PLACES: tuple[Literal["top", "bottom"], ...] = ("top", "bottom")


def batch_tradeoff_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Time per output token against output tokens/s, one point per batch size; hollow where it cannot fit."""
    series = list(dict.fromkeys(row["series"] for row in data.datasets["points"]))
    # The legend draws each series as its line: a point symbol took the fill of "fits" (the page's ink).
    # The baseline grey, the curve that reads the KV cache in the decode's colour: carried by the rows.
    colour = rows_colour("series", title=None, legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2.5))
    rows = data.datasets["points"]
    x = alt.X(
        **_log_axis(
            "tokens_per_s",
            "GPU output (tokens/s, log scale)",
            [r["tokens_per_s"] for r in rows],
            plot_width=_plot_width(width, 60),  # the y axis: "50" and its title
        )
    )
    y = alt.Y("tpot_ms:Q", title="Time per output token (ms)", axis=alt.Axis(format=NUMBER))
    tip = [
        alt.Tooltip("series:N", title=""),
        alt.Tooltip("batch:Q", title="batch"),
        alt.Tooltip("tpot_ms:Q", title="ms per token", format=",.3~g"),
        alt.Tooltip("tokens_per_s:Q", title="tokens/s", format=",.0f"),
        alt.Tooltip("bound:N", title=""),
        alt.Tooltip("fits:N", title="memory"),
    ]
    line = alt.Chart(_data("points")).mark_line(strokeWidth=2).encode(x, y, colour, alt.Order("batch:Q"))
    fill = alt.Fill(
        "fits:N", scale=alt.Scale(domain=["fits", "does not fit"], range=["currentColor", "transparent"]),
        legend=None,
    )  # fmt: skip
    points = (
        alt.Chart(_data("points"))
        .mark_point(size=45, opacity=1, filled=False, strokeWidth=1.5)
        .encode(x, y, colour, fill, tooltip=tip)
    )
    # The weights-only curve lies below the other: its batches are labelled under it, the other's above it,
    # so that the two "batch 1" labels, where the curves start together, do not run into each other.
    # On a phone's plot "batch 64" ran into "batch 256": past its first, a curve's labels are the bare sizes.
    shown = (
        "datum.batch == 1 ? datum.label : replace(datum.label, 'batch ', '')"
        if _narrow(width)
        else "datum.label"
    )
    labels = [
        alt.Chart(_data("points"))
        .transform_filter(alt.datum.series == name)
        .transform_calculate(shown=shown)
        .mark_text(align="left", baseline=baseline, dx=6, dy=dy)
        .encode(x, y, text="shown:N")
        for name, baseline, dy in zip(series, BATCH_LABEL_PLACES, (6, -6), strict=False)
    ]
    chart = alt.layer(line, points, *labels).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def gemm_efficiency_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Share of peak FLOP/s against tokens (log), one line per figure; the critical batch as a dotted rule."""
    rows = data.datasets["points"]
    # Below the plot: in its top left corner, on a phone's narrow plot, the lines that reach the peak ran
    # through the legend's labels.
    colour = rows_colour("series", title=None, legend=alt.Legend(orient="bottom", symbolType="stroke"))
    x = alt.X(
        **_log_axis(
            "tokens", "Tokens through the weight (log scale)", [r["tokens"] for r in rows],
            plot_width=_plot_width(width, 60),
        )
    )  # fmt: skip
    y = alt.Y(
        "share:Q", title="Share of peak FLOP/s", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])
    )
    tip = [
        alt.Tooltip("series:N", title=""),
        alt.Tooltip("tokens:Q", title="tokens", format=",.0f"),
        alt.Tooltip("share:Q", title="share of peak", format=".1%"),
        alt.Tooltip("waves:Q", title="waves", format=",.0f"),
        alt.Tooltip("bound:N", title="roofline"),
    ]
    line = alt.Chart(_data("points")).mark_line(strokeWidth=2).encode(x, y, colour, alt.Order("tokens:Q"))
    hover = alt.Chart(_data("points")).mark_point(size=30, opacity=0).encode(x, y, tooltip=tip)
    rule = alt.Chart(_data("marks")).mark_rule(strokeDash=[3, 3], color="currentColor").encode(x)
    label = (
        alt.Chart(_data("marks"))
        .mark_text(align="right", dx=-4, y=8, color="currentColor")
        .encode(x, text="label:N")
    )
    chart = alt.layer(line, hover, rule, label).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def attention_share_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Attention's share of a token's FLOPs against context (log x), a line per model, 50% as a dashed rule.

    The colours come with the rows (models ordered by size), so a widget that swaps rows keeps them; each
    line's value at the chosen context is marked and labelled.
    """
    lines = data.datasets["lines"]
    x = alt.X(
        **_log_axis(
            "context", "Tokens attended to (context)", [r["context"] for r in lines],
            plot_width=_plot_width(width, 50),
        )
    )  # fmt: skip
    y = alt.Y(
        "share_pct:Q",
        title="Attention's share of the token's FLOPs (%)",
        scale=alt.Scale(domain=[0, 100]),
        axis=alt.Axis(format=",.0f"),
    )
    legend = alt.Legend(
        orient="bottom" if _narrow(width) else "top-left", direction="vertical", columns=1, labelLimit=0
    )
    colour = rows_colour("series", title=None, legend=legend)
    tip = [
        alt.Tooltip("series:N", title="model"),
        alt.Tooltip("context:Q", title="context (tokens)", format=",.0f"),
        alt.Tooltip("weights_gflop:Q", title="weight products (GFLOP)", format=",.3~g"),
        alt.Tooltip("attention_gflop:Q", title="attention (GFLOP)", format=",.3~g"),
        alt.Tooltip("share_pct:Q", title="attention's share (%)", format=",.1f"),
    ]
    drawn = alt.Chart(_data("lines")).mark_line(strokeWidth=2.5).encode(x, y, colour, tooltip=tip)
    hover = alt.Chart(_data("lines")).mark_point(size=40, opacity=0).encode(x, y, tooltip=tip)
    even = alt.Y("share_pct:Q")
    rule = alt.Chart(_data("even")).mark_rule(strokeDash=[6, 4], color="currentColor").encode(y=even)
    rule_label = (
        alt.Chart(_data("even"))
        .mark_text(align="right", baseline="bottom", dx=-4, dy=-4, x="width")
        .encode(y=even, text="label:N")
    )
    marks = alt.Chart(_data("marks")).mark_point(filled=True, size=70).encode(x, y, colour, tooltip=tip)
    labels = alt.Chart(_data("marks")).mark_text(align="right", dx=-8, dy=-8).encode(x, y, text="label:N")
    chart = alt.layer(drawn, hover, rule, rule_label, marks, labels).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def _speedup_by_batch_chart(
    data: ChartData, width: int, y_title: str, extra_tips: list[Any], limit: str | None = None
) -> Any:
    """Speed-up against the batch (log axis), a line per series, a dashed rule at 1 (no gain), hollow
    points where the batch does not fit in memory: the drawing the speculative-decoding and quantization
    charts share. ``limit`` names a dataset of at most one row (``batch``, ``label``): a dotted vertical
    rule, labelled, where the baseline itself stops fitting."""
    colour = rows_colour("series", title=None, legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2.5))
    rows = data.datasets["points"]
    x = alt.X(
        **_log_axis(
            "batch", "Batch (sequences, log scale)", [r["batch"] for r in rows],
            plot_width=_plot_width(width, 50),
        )
    )  # fmt: skip
    y = alt.Y("speedup:Q", title=y_title, axis=alt.Axis(format=NUMBER))
    tip = [
        alt.Tooltip("series:N", title=""),
        alt.Tooltip("batch:Q", title="batch"),
        alt.Tooltip("speedup:Q", title="speed-up", format=".2f"),
        *extra_tips,
        alt.Tooltip("fits:N", title="memory"),
    ]
    line = alt.Chart(_data("points")).mark_line(strokeWidth=2).encode(x, y, colour, alt.Order("batch:Q"))
    fill = alt.Fill(
        "fits:N", scale=alt.Scale(domain=["fits", "does not fit"], range=["currentColor", "transparent"]),
        legend=None,
    )  # fmt: skip
    points = (
        alt.Chart(_data("points"))
        .mark_point(size=40, opacity=1, filled=False, strokeWidth=1.5)
        .encode(x, y, colour, fill, tooltip=tip)
    )
    even = (
        alt.Chart(alt.Data(values=[{"speedup": 1.0}]))  # type: ignore[no-untyped-call]
        .mark_rule(strokeDash=[4, 4], color=NEUTRAL)
        .encode(y=alt.Y("speedup:Q"))
    )
    layers = [even, line, points]
    if limit is not None:  # drawn even when empty: widgets update the dataset by name
        rule = alt.Chart(_data(limit)).mark_rule(strokeDash=[1, 3], strokeWidth=1.5, color=NEUTRAL)
        layers.insert(1, rule.encode(x))
        label = alt.Chart(_data(limit)).mark_text(align="right", baseline="top", dx=-4, dy=4, color=NEUTRAL)
        layers.append(label.encode(x, alt.YValue(0), text="label:N"))  # type: ignore[no-untyped-call]
    chart = alt.layer(*layers).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def speculative_speedup_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Speed-up against the batch (log axis), one line per acceptance rate, a rule at break-even (1)."""
    tips = [
        alt.Tooltip("tokens_per_step:Q", title="tokens per step", format=".2f"),
        alt.Tooltip("verify:N", title=""),
    ]
    return _speedup_by_batch_chart(data, width, "Speed-up over plain decoding", tips)


def tensor_parallel_decode_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Vertical stacked bars, one per tensor-parallel degree: the all-reduces at the bottom, each GPU's own
    work above; the step's total written on top; degrees that do not fit in memory pale."""
    rows = data.datasets["bars"]
    parts = list(dict.fromkeys(row["part"] for row in rows))
    degrees = sorted({row["gpus"] for row in rows})
    x = alt.X("gpus:O", title="Tensor-parallel degree (GPUs)", sort=degrees,
              axis=alt.Axis(labelAngle=0))  # fmt: skip
    y = alt.Y("ms:Q", title="Decode step (ms)", stack="zero", axis=alt.Axis(format=NUMBER))
    colour = alt.Color(
        "part:N",
        title=None,
        sort=parts,
        scale=alt.Scale(domain=parts, range=[TENSOR_PARALLEL_COLOURS[part] for part in parts]),
        legend=alt.Legend(orient="bottom"),
    )
    opacity = alt.Opacity(
        "fits:N", scale=alt.Scale(domain=["fits", "does not fit"], range=[1.0, 0.35]), legend=None
    )
    tip = [
        alt.Tooltip("gpus:O", title="GPUs"),
        alt.Tooltip("part:N", title="part"),
        alt.Tooltip("ms:Q", title="ms", format=".2f"),
        alt.Tooltip("step_ms:Q", title="step (ms)", format=".2f"),
        alt.Tooltip("share_pct:Q", title="all-reduces (%)", format=".0f"),
        alt.Tooltip("fits:N", title="memory"),
    ]
    bars = (
        alt.Chart(_data("bars"))
        .mark_bar(cornerRadiusEnd=2)
        .encode(x, y, colour, opacity, alt.Order("order:Q"), tooltip=tip)
    )
    totals = (
        alt.Chart(_data("bars"))
        .transform_filter(alt.datum.order == 0)
        .mark_text(dy=-6, baseline="bottom")
        .encode(x, alt.Y("step_ms:Q"), text=alt.Text("step_ms:Q", format=".1f"))
    )
    chart = alt.layer(bars, totals).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def pipeline_micro_batches_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Tokens per second against the micro-batches (1, 2, 4, ... on a log axis), one line per number of
    pipeline stages in the ordered shades, the colours coming with the rows."""
    rows = data.datasets["points"]
    counts = sorted({row["micro_batches"] for row in rows})
    x = alt.X(
        "micro_batches:Q",
        title="Micro-batches per step",
        scale=alt.Scale(type="log", base=2, domain=[counts[0], counts[-1]], nice=False),
        axis=alt.Axis(values=counts, format="d"),
    )
    y = alt.Y("tokens_per_s:Q", title="Tokens per second", axis=alt.Axis(format=NUMBER))
    colour = rows_colour("series", title=None, legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2.5))
    tip = [
        alt.Tooltip("series:N", title=""),
        alt.Tooltip("micro_batches:Q", title="micro-batches"),
        alt.Tooltip("step_ms:Q", title="step (ms)", format=",.0f"),
        alt.Tooltip("tokens_per_s:Q", title="tokens/s", format=",.0f"),
        alt.Tooltip("speedup:Q", title="against one pass", format=".2f"),
        alt.Tooltip("bubble_pct:Q", title="bubble (%)", format=".0f"),
    ]
    line = (
        alt.Chart(_data("points"))
        .mark_line(strokeWidth=2.5)
        .encode(x, y, colour, alt.Order("micro_batches:Q"))
    )
    points = (
        alt.Chart(_data("points"))
        .mark_point(size=50, filled=True, opacity=1)
        .encode(x, y, colour, tooltip=tip)
    )
    chart = alt.layer(line, points).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def quantization_speedup_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Speed-up over BF16 against the batch (log axis), one line per recipe, a rule at 1 (buys nothing);
    hollow points where the batch does not fit in that recipe's memory."""
    tips = [
        alt.Tooltip("tokens_per_s:Q", title="tokens/s", format=",.0f"),
        alt.Tooltip("bf16_tokens_per_s:Q", title="BF16 tokens/s", format=",.0f"),
        alt.Tooltip("bf16_fits:N", title="BF16's memory"),
        alt.Tooltip("bound:N", title="step"),
    ]
    return _speedup_by_batch_chart(data, width, "Decode speed-up over BF16", tips, limit="bf16_limit")


def expert_load_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Experts touched per GPU against the batch (log axis): the busiest and the average GPU, and a dashed
    rule at the experts each GPU holds."""
    colour = rows_colour("series", title=None, legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2.5))
    rows = data.datasets["points"]
    x = alt.X(
        **_log_axis(
            "batch", "Batch (tokens in the step, log scale)", [r["batch"] for r in rows],
            plot_width=_plot_width(width, 50),
        )
    )  # fmt: skip
    y = alt.Y("experts:Q", title="Routed experts touched per GPU", axis=alt.Axis(format=NUMBER))
    tip = [
        alt.Tooltip("series:N", title=""),
        alt.Tooltip("batch:Q", title="batch"),
        alt.Tooltip("experts:Q", title="experts touched", format=".2f"),
        alt.Tooltip("share_pct:Q", title="% of the GPU's experts", format=".0f"),
    ]
    line = alt.Chart(_data("points")).mark_line(strokeWidth=2).encode(x, y, colour, alt.Order("batch:Q"))
    points = alt.Chart(_data("points")).mark_point(size=40, filled=True).encode(x, y, colour, tooltip=tip)
    held = alt.Chart(_data("held")).mark_rule(strokeDash=[4, 4], color=NEUTRAL).encode(y=alt.Y("experts:Q"))
    chart = alt.layer(held, line, points).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def prefix_caching_ttft_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """p90 TTFT (log axis) against the arrival rate, one line per run, points with their hit rate."""
    colour = rows_colour("series", title=None, legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2.5))
    rows = data.datasets["points"]
    x = alt.X("rate:Q", title="Arrival rate (requests per second)", axis=alt.Axis(format=NUMBER))
    y = alt.Y(
        **_log_axis(
            "ttft_p90_ms", "Time to first token, p90 (ms, log scale)", [r["ttft_p90_ms"] for r in rows], 1.6
        )
    )
    tip = [
        alt.Tooltip("series:N", title=""),
        alt.Tooltip("rate:Q", title="requests/s"),
        alt.Tooltip("ttft_p90_ms:Q", title="TTFT p90 (ms)", format=",.0f"),
        alt.Tooltip("hit_rate:Q", title="hit rate", format=".0%"),
        alt.Tooltip("slo:Q", title="within the SLO", format=".0%"),
    ]
    line = alt.Chart(_data("points")).mark_line(strokeWidth=2).encode(x, y, colour, alt.Order("rate:Q"))
    points = alt.Chart(_data("points")).mark_point(size=40, filled=True).encode(x, y, colour, tooltip=tip)
    chart = alt.layer(line, points).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


def attention_vs_weights_chart(data: ChartData, width: int = WIDE_WIDTH) -> Any:
    """Time per token against context, log-log: a phase's colour for its two lines, attention solid and the
    weight products dashed; where attention passes the weights, a point and its label."""
    rows = data.datasets["lines"]
    x = alt.X(
        **_log_axis(
            "context",
            "Context (tokens)",
            [r["context"] for r in rows],
            headroom=1.2,
            plot_width=_plot_width(width, 60),
        )
    )
    y = alt.Y(**_log_axis("us_per_token", "Time per token (µs)", [r["us_per_token"] for r in rows], 1.6))
    colour = alt.Color(
        "phase:N",
        title=None,
        sort=list(PHASE_COLOURS),
        scale=colour_scale(PHASE_COLOURS),
        legend=alt.Legend(orient="bottom", direction="horizontal"),
    )
    dash = alt.StrokeDash(
        "part:N",
        title=None,
        sort=["attention", "weight products"],
        scale=alt.Scale(domain=["attention", "weight products"], range=[[1, 0], [6, 4]]),
        legend=alt.Legend(orient="bottom", direction="horizontal", symbolStrokeColor="currentColor"),
    )
    tip = [
        alt.Tooltip("series:N", title="what"),
        alt.Tooltip("context:Q", title="context (tokens)", format=",.0f"),
        alt.Tooltip("us_per_token:Q", title="time per token (µs)", format=",.3~g"),
    ]
    drawn = alt.Chart(_data("lines")).mark_line(strokeWidth=2.5).encode(x, y, colour, dash, tooltip=tip)
    hover = alt.Chart(_data("lines")).mark_point(size=40, opacity=0).encode(x, y, tooltip=tip)
    marks = (
        alt.Chart(_data("marks"))
        .mark_point(filled=True, size=80, color="currentColor", opacity=1)
        .encode(x, y, tooltip=[alt.Tooltip("label:N", title="where")])
    )
    # Above and left of the point, where neither line runs (the dashed one is level with it, the solid one
    # comes from the lower left); on a phone in two lines ("attention passes" / "at 14,346 tokens").
    labels = (
        alt.Chart(_data("marks"))
        .transform_calculate(
            shown="replace(datum.label, ' at ', '\\nat ')" if _narrow(width) else "datum.label"
        )
        .mark_text(align="right", baseline="bottom", dx=-4, dy=-26 if _narrow(width) else -10, lineBreak="\n")
        .encode(x, y, text="shown:N")
    )
    chart = alt.layer(drawn, hover, marks, labels).properties(height=HEIGHT)
    return _with_datasets(fitted(chart, width), data.datasets)


BUILDERS: Mapping[str, Callable[[ChartData, int], Any]] = {
    "roofline": roofline_chart,
    "prefill-vs-decode": prefill_vs_decode_chart,
    "ridge-points": ridge_points_chart,
    "request-timeline": request_timeline_chart,
    "kv-cache": kv_cache_chart,
    "prefill-stall": prefill_stall_chart,
    "latency-vs-rate": latency_vs_rate_chart,
    "goodput-vs-rate": goodput_vs_rate_chart,
    "serving-timeline": serving_timeline_chart,
    "kv-memory": kv_memory_chart,
    "serving-latency": serving_latency_chart,
    "batch-tradeoff": batch_tradeoff_chart,
    "bound-vs-calibrated": batch_tradeoff_chart,  # the same fields, three series
    "format-bits": format_bits_chart,
    "attention-share": attention_share_chart,
    "speculative-speedup": speculative_speedup_chart,
    "prefix-caching-ttft": prefix_caching_ttft_chart,
    "quantization-speedup": quantization_speedup_chart,
    "expert-load": expert_load_chart,
    "attention-vs-weights": attention_vs_weights_chart,
    "memory-hierarchy": memory_hierarchy_chart,
    "gemm-efficiency": gemm_efficiency_chart,
    "tensor-parallel-decode": tensor_parallel_decode_chart,
    "pipeline-micro-batches": pipeline_micro_batches_chart,
}

# Where a course chart shown in a notebook keeps its narrow variant for the notebook renderer
# (course.notebooks.renderer), which takes it out before drawing: Vega-Lite ignores ``usermeta``.
NARROW_USERMETA = "ridgepoint_narrow"


@dataclass(frozen=True)
class BuiltChart:
    """A chart ready to render: the Altair chart, its Vega-Lite spec, the data behind it.

    ``chart`` (the wide drawing, or the narrow one when built with ``narrow=True``) carries the narrow
    variant's spec in its ``usermeta``, so that a notebook showing it gets both, as a lesson page does.
    """

    data: ChartData
    chart: Any  # altair.TopLevelMixin

    @property
    def spec(self) -> dict[str, Any]:
        """The Vega-Lite spec (without the narrow variant); the tests validate every chart's against the
        schema (see :func:`course_chart`)."""
        spec: dict[str, Any] = self.chart.to_dict(validate=False)
        spec.pop("usermeta", None)
        return spec

    @property
    def caption(self) -> str:
        return self.data.caption


def course_chart(data: ChartData, *, narrow: bool = False) -> Any:
    """The Altair chart of a course chart's data, drawn for the wide width (the default) or the narrow one.

    Built without Altair's schema validation: validating every object as it is made and every spec as it is
    written took a quarter of a cold build (issue 23: 55 of 318 s under the profiler), for specs that only
    change with this module. The tests validate each chart's wide and narrow spec against the Vega-Lite
    schema instead (tests/calculators/charts/test_chart_schema.py), so a chart that breaks it fails there.
    """
    with alt.utils.schemapi.debug_mode(False):  # no validation of each object at its creation
        chart = _drawn(data, narrow=narrow)
        if narrow:
            chart = type(chart).from_dict(_narrow_spec(chart), validate=False)
    return chart


def _drawn(data: ChartData, *, narrow: bool) -> Any:
    return themed(BUILDERS[data.chart](data, NARROW_WIDTH if narrow else WIDE_WIDTH), narrow=narrow)


def _narrow_spec(drawn: Any) -> dict[str, Any]:
    spec: dict[str, Any] = wrapped_legend_labels(drawn.to_dict(validate=False))
    return spec


def course_spec(data: ChartData, *, narrow: bool = False) -> dict[str, Any]:
    """The Vega-Lite spec of a course chart's data, wide (the default) or its narrow variant; not validated
    at build (see :func:`course_chart`)."""
    with alt.utils.schemapi.debug_mode(False):
        drawn = _drawn(data, narrow=narrow)
        # The narrow spec is the drawing's, its legend labels wrapped: no round trip through Altair's objects.
        spec: dict[str, Any] = _narrow_spec(drawn) if narrow else drawn.to_dict(validate=False)
    return spec


def build_chart(name: str, *, narrow: bool = False, **params: Any) -> BuiltChart:
    """Build the chart ``name`` (see :data:`calculators.charts.data.CHARTS`) with validated ``params``."""
    data = chart_data(name, **params)
    chart = course_chart(data, narrow=narrow)
    if not narrow:
        chart = chart.properties(usermeta={NARROW_USERMETA: course_spec(data, narrow=True)})
    return BuiltChart(data, chart)
