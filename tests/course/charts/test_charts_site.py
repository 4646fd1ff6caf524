"""The built site's charts: each figure has its SVG, caption and data table; its spec file is shipped
and valid; the Vega runtime in the site is the pinned one. A browser test then reaches for a chart and
checks that only then Vega loads, from this site, and that the live view shows tooltips.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import vl_convert

from course.charts import assets as chart_assets
from tests.conftest import PageWatch

LESSON = "serving/prefill-vs-decode/"
FIGURE = re.compile(
    r'<figure class="rp-chart" data-rp-chart="([a-z-]+)" data-rp-spec="([0-9a-f]{24})" '
    r'data-rp-spec-narrow="([0-9a-f]{24})" data-rp-wide="([0-9a-f]{64})".*?</figure>',
    re.S,
)


def _figures(site: Path, page: str) -> list[re.Match[str]]:
    return list(FIGURE.finditer((site / page / "index.html").read_text(encoding="utf-8")))


@pytest.mark.site
def test_search_finds_a_charts_caption_but_not_its_drawing_or_table(built_site: Path) -> None:
    # The drawing's ticks and legend ran together ("p50p90p99010,00020,00030,000TTFT (ms)") in the index.
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    docs = index["docs"]
    batching = " ".join(doc["text"] for doc in docs if doc["location"].startswith("serving/batching/"))
    assert "The same 200 requests served by static batching" in batching  # a caption, in words
    assert "p50p90p99" not in batching
    assert "TTFT (ms)" not in batching  # an axis title
    assert "Data behind the chart" not in batching


@pytest.mark.site
@pytest.mark.parametrize(
    ("page", "charts"),
    [(LESSON, ["roofline", "prefill-vs-decode"]), ("foundations/memory-wall/", ["roofline", "ridge-points"])],
)
def test_lesson_charts_have_svg_caption_table_and_spec(
    built_site: Path, page: str, charts: list[str]
) -> None:
    figures = _figures(built_site, page)
    assert [figure.group(1) for figure in figures] == charts
    for figure in figures:
        html = figure.group(0)
        view = r'<div class="rp-chart__view" role="img" aria-label="[^"]+" tabindex="0" data-search-exclude>'
        frame = (
            r'<svg class="rp-chart__frame" width="(\d+)" height="(\d+)" viewBox="0 0 \1 \2" '
            r'aria-hidden="true"></svg>'
        )
        narrow = r'<div class="rp-chart__svg rp-chart__svg--narrow"><svg'
        shown = re.search(view + frame + narrow, html, re.S)
        assert shown, "the narrow drawing, after an empty frame the wide drawing's size"
        assert html.count("<svg") == 2, "one drawing per chart in the page"
        # The wide drawing is a file named by its SHA-256, which charts.js fetches where there is room for it.
        wide_file = built_site / chart_assets.SITE_FOLDER / "charts" / f"{figure.group(4)}.svg"
        wide = wide_file.read_bytes()
        assert hashlib.sha256(wide).hexdigest() == figure.group(4)
        root = wide[: wide.index(b">")].decode()
        assert f'width="{shown.group(1)}" height="{shown.group(2)}"' in root, "the frame is the wide size"
        narrow_file = built_site / chart_assets.SITE_FOLDER / "charts" / f"{figure.group(3)}.json"
        assert narrow_file.is_file()
        assert re.search(r'<figcaption class="rp-chart__caption">[^<]{20,}</figcaption>', html)
        data_table = r'<details class="rp-chart__data" data-search-exclude><summary>.+?<table>.*?<td>'
        assert re.search(data_table, html, re.S)
        spec_file = built_site / chart_assets.SITE_FOLDER / "charts" / f"{figure.group(2)}.json"
        spec = json.loads(spec_file.read_text(encoding="utf-8"))
        # Served compiled to Vega (course/charts/assets.py): vl-convert's Vega renderer draws it.
        assert "<svg" in vl_convert.vega_to_svg(spec), f"{spec_file} is a valid Vega spec"


@pytest.mark.site
def test_site_ships_the_pinned_runtime(built_site: Path) -> None:
    pin = chart_assets.runtime_pin()
    runtime = built_site / chart_assets.SITE_FOLDER / pin.site_path
    assert hashlib.sha256(runtime.read_bytes()).hexdigest() == pin.sha256


@pytest.mark.browser
def test_reaching_for_a_chart_loads_vega_and_shows_tooltips(page: Any, site_url: str) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(site_url + LESSON)
    page.wait_for_load_state("networkidle")
    assert not [url for url in requested if "vega-runtime" in url or url.endswith(".json")], (
        "nothing before reaching"
    )
    figure = page.locator("figure.rp-chart").first
    figure.scroll_into_view_if_needed()
    figure.hover()
    page.wait_for_selector("figure.rp-chart.rp-chart--live .rp-chart__live svg", timeout=15000)
    assert [url for url in requested if "vega-runtime" in url], "the runtime loads on hover"
    assert figure.locator(".rp-chart__view > svg").count() == 0, "the static SVG was replaced"
    # Hover a placed pass (prefill/decode symbol): vega-tooltip shows its numbers.
    symbols = figure.locator(".rp-chart__live .mark-symbol path")
    for index in range(symbols.count()):
        symbols.nth(index).hover(force=True)
        if page.locator("#vg-tooltip-element.visible").count():
            break
    assert "FLOP/byte" in page.locator("#vg-tooltip-element").inner_text()
    # A second chart goes live by keyboard focus, reusing the loaded runtime.
    second = page.locator("figure.rp-chart").nth(1).locator(".rp-chart__view")
    second.focus()
    page.locator("figure.rp-chart").nth(1).locator(".rp-chart__live svg").wait_for(timeout=15000)
    assert sum("vega-runtime" in url for url in requested) == 1


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_the_wide_drawing_is_fetched_only_where_it_fits(browser: Any, site_url: str, width: int) -> None:
    """A chart's page holds its narrow drawing; the wide one comes from the site, checked by its hash, only
    where the figure has the room for it, and takes the place its frame kept without moving the page."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    watch = PageWatch(page)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(site_url + LESSON)
    figures = page.locator("figure.rp-chart")
    heights = "figures => figures.map((f) => f.getBoundingClientRect().height)"
    drawings = [url for url in requested if re.search(r"/charts/[0-9a-f]{64}\.svg$", url)]
    if width >= 1280:
        page.wait_for_function(
            "n => document.querySelectorAll('figure.rp-chart.rp-chart--wide').length === n",
            arg=figures.count(),
        )
        wide = figures.first.locator(".rp-chart__svg--wide svg")
        assert wide.is_visible()
        assert wide.bounding_box()["width"] == 640
        assert not figures.first.locator(".rp-chart__svg--narrow svg").is_visible()
        drawings = [url for url in requested if re.search(r"/charts/[0-9a-f]{64}\.svg$", url)]
        assert len(drawings) == figures.count()
        with_wide = figures.evaluate_all(heights)
        figures.evaluate_all(  # as the page was before the wide drawings came
            "figures => figures.forEach((f) => { f.classList.remove('rp-chart--wide');"
            " f.querySelector('.rp-chart__svg--wide').remove(); })"
        )
        assert figures.evaluate_all(heights) == with_wide, "the wide drawings took the frames' place"
    else:
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(500)
        assert not [url for url in requested if re.search(r"/charts/[0-9a-f]{64}\.svg$", url)]
        narrow = figures.first.locator(".rp-chart__svg--narrow svg")
        assert narrow.is_visible()
        assert narrow.bounding_box()["width"] <= 316
        assert not figures.first.locator(".rp-chart__frame").is_visible()
    assert not drawings or width >= 1280
    context.close()
    watch.check()
