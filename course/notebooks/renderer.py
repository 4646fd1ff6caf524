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


@cache
def course_chart_config() -> dict[str, Any]:
    """The course's chart style as a Vega-Lite ``config`` block, as ``charts.specs.themed`` applies it."""
    import altair as alt

    from calculators.charts.specs import themed

    data = alt.Data(values=[])  # type: ignore[no-untyped-call]  # Altair's generated classes are untyped
    config: dict[str, Any] = themed(alt.Chart(data).mark_point()).to_dict()["config"]
    return config


def with_course_style(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with the course's config under its own (a chart's explicit ``configure_*`` still wins)."""
    own = spec.get("config") or {}
    merged = {key: value for key, value in course_chart_config().items() if key not in own}
    for key, value in own.items():
        base = course_chart_config().get(key)
        merged[key] = {**base, **value} if isinstance(base, dict) and isinstance(value, dict) else value
    return {**spec, "config": merged}


def course_chart_renderer(spec: dict[str, Any], **metadata: Any) -> dict[str, str]:
    """Altair renderer: the MIME bundle of the course's chart markup for ``spec`` in the course's style."""
    from course.charts.markup import altair_renderer

    bundle: dict[str, str] = altair_renderer(with_course_style(spec), **metadata)
    return bundle


def enable_course_charts() -> None:
    """Make every Altair chart displayed from now on render as the course's chart markup."""
    import altair as alt

    alt.renderers.register(RENDERER_NAME, course_chart_renderer)
    alt.renderers.enable(RENDERER_NAME)
