"""The worked notebooks' Altair renderer: the course's chart style and markup for any chart a notebook shows.

Altair's own renderers load Vega from a CDN, which shows an error offline and prints it into the PDF. This one
returns :func:`course.charts.markup.altair_renderer`'s markup (static SVG, caption, data table, interactive on
demand with the self-hosted runtime), after giving the chart the course's look from
:func:`calculators.charts.specs.themed` (transparent background, ``currentColor`` text: right in light and
dark pages and in print). A notebook enables it in its first cell with :func:`enable_course_charts`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

RENDERER_NAME = "ridgepoint"


# What a notebook's own charts get besides the course's style. A category axis shows every name (Vega's
# overlap check hid "RTX 4090 24GB" between bars 20 px apart). On a phone, names take at most 110 px (a
# long one ends in "…") so the bars keep room, and the x title ends at the plot's right end, reaching left
# under the names: centred under a short plot it ran past both edges of the drawing.
NOTEBOOK_CONFIG: dict[bool, dict[str, Any]] = {
    False: {"axisBand": {"labelOverlap": False}},
    True: {
        "axisBand": {"labelOverlap": False},
        "axisY": {"labelLimit": 110},
        "axisX": {"titleAnchor": "end"},
    },
}


@cache
def course_chart_config(narrow: bool = False) -> dict[str, Any]:
    """The course's chart style as a Vega-Lite ``config`` block, as ``charts.specs.themed`` applies it,
    with :data:`NOTEBOOK_CONFIG`."""
    import altair as alt

    from calculators.charts.specs import themed

    data = alt.Data(values=[])  # type: ignore[no-untyped-call]  # Altair's generated classes are untyped
    config: dict[str, Any] = themed(alt.Chart(data).mark_point(), narrow=narrow).to_dict()["config"]
    for key, value in NOTEBOOK_CONFIG[narrow].items():
        config[key] = {**config.get(key, {}), **value}
    return config


def with_course_style(spec: dict[str, Any], *, narrow: bool = False) -> dict[str, Any]:
    """``spec`` with the course's config under its own (a chart's explicit ``configure_*`` still wins)."""
    own = spec.get("config") or {}
    base_config = course_chart_config(narrow)
    merged = {key: value for key, value in base_config.items() if key not in own}
    for key, value in own.items():
        base = base_config.get(key)
        merged[key] = {**base, **value} if isinstance(base, dict) and isinstance(value, dict) else value
    return {**spec, "config": merged}


def _sized(spec: dict[str, Any], width: int) -> dict[str, Any]:
    """A single or layered chart drawn ``width`` px wide in all, as the course's own charts are."""
    return {**spec, "width": width, "autosize": {"type": "fit-x", "contains": "padding"}}


def _fits(spec: dict[str, Any]) -> bool:
    """Whether Vega-Lite can fit the chart to a width: a single or layered chart that sets a number of
    pixels or no width at all (Altair's default, which a contributor's chart often keeps: left as it is,
    a phone showed its axis labels at 9.5 px). "container" or a step per band keeps its own sizing."""
    concat = any(key in spec for key in ("hconcat", "vconcat", "concat", "facet", "repeat"))
    return not concat and ("width" not in spec or isinstance(spec.get("width"), int | float))


def wide_variant(spec: dict[str, Any]) -> dict[str, Any]:
    """The chart as a wide page shows it: the course's wide width (a notebook's chart sets its own)."""
    from calculators.charts.specs import WIDE_WIDTH

    return with_course_style(_sized(spec, WIDE_WIDTH) if _fits(spec) else spec)


# On a phone an axis title longer than this (about 220 px of 13 px text, the narrow plot's width) is drawn
# in lines of at most this many characters: "arithmetic intensity (FLOP per byte, log)" ran past both edges.
NARROW_TITLE_CHARS = 28


def _lines(title: str, most: int = NARROW_TITLE_CHARS) -> list[str]:
    lines: list[str] = []
    for word in title.split():
        if lines and len(lines[-1]) + 1 + len(word) <= most:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def wrapped_titles(spec: Any) -> Any:
    """``spec`` with every long x or y axis title written in lines (Vega-Lite draws a list as lines)."""
    from calculators.charts.specs import with_encodings

    def wrap(encoding: dict[str, Any]) -> dict[str, Any]:
        for channel in ("x", "y"):
            field = encoding.get(channel)
            if not isinstance(field, dict):
                continue
            title = field.get("title")
            if isinstance(title, str) and len(title) > NARROW_TITLE_CHARS:
                encoding[channel] = {**field, "title": _lines(title)}
        return encoding

    return with_encodings(spec, wrap)


def narrow_variant(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The chart drawn for a phone: the course's narrow width and text sizes, or None if it sets no width."""
    from calculators.charts.specs import NARROW_WIDTH, wrapped_legend_labels

    if not _fits(spec):
        return None
    return with_course_style(wrapped_legend_labels(wrapped_titles(_sized(spec, NARROW_WIDTH))), narrow=True)


def course_chart_renderer(spec: dict[str, Any], **metadata: Any) -> dict[str, str]:
    """Altair renderer: the MIME bundle of the course's chart markup for ``spec`` in the course's style.

    A course chart (:func:`calculators.charts.build_chart`) brings its own narrow variant; a notebook's
    own chart with a width is drawn at the course's wide and narrow widths. Either way it stays readable
    on a laptop and a phone (text >= 11 CSS px, drawn for the width it is shown at).
    """
    from calculators.charts.specs import NARROW_USERMETA
    from course.charts.markup import altair_renderer

    usermeta = dict(spec.get("usermeta") or {})
    course_narrow = usermeta.pop(NARROW_USERMETA, None)
    if course_narrow is not None:
        wide = {key: value for key, value in spec.items() if key != "usermeta"}
        if usermeta:
            wide["usermeta"] = usermeta
        bundle: dict[str, str] = altair_renderer(wide, narrow_spec=course_narrow, **metadata)
        return bundle
    bundle = altair_renderer(wide_variant(spec), narrow_spec=narrow_variant(spec), **metadata)
    return bundle


def enable_course_charts() -> None:
    """Make every Altair chart displayed from now on render as the course's chart markup."""
    import altair as alt

    alt.renderers.register(RENDERER_NAME, course_chart_renderer)
    alt.renderers.enable(RENDERER_NAME)
