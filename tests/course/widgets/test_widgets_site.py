"""The real course site in Chromium: every page loads cleanly; the lessons' widgets go live and match CPython.

The page walk follows sitemap.xml, so a page added to the course is covered without editing this file. The two
widget lessons run in one browser context with full page loads: the second lesson's worker takes Pyodide from
Cache Storage (its wasm from the HTTP cache), so the runtime is downloaded once (as for a reader). Instant
navigation between the lessons is tested in tests/site/test_instant_navigation.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from calculators.browser import compute

pytestmark = pytest.mark.browser

LIVE_TIMEOUT_MS = 90_000  # one Pyodide start on a busy 2-core runner
LESSONS = {
    "serving/prefill-vs-decode/": "#widget-prefill-decode",
    "foundations/memory-wall/": "#widget-roofline-explorer",
    "model/kv-cache/": "#widget-kv-cache",
    "model/tokens-parameters-and-flops/": "#widget-parameter-counter",
}


def site_pages(site_dir: Path) -> list[str]:
    """The site-relative path of every page in sitemap.xml ("" for the home page)."""
    sitemap = (site_dir / "sitemap.xml").read_text(encoding="utf-8")
    paths = [urlparse(loc.strip()).path for loc in re.findall(r"<loc>([^<]+)</loc>", sitemap)]
    home = min(paths, key=len)  # the site_url's own path: "/" here, "/ridgepoint/" when published
    return [path.removeprefix(home) for path in paths]


def test_sitemap_lists_the_widget_lessons(built_site: Path) -> None:
    pages = site_pages(built_site)
    assert set(LESSONS) <= set(pages)
    assert "" in pages
    for page in pages:
        assert (built_site / page / "index.html").is_file(), f"sitemap page {page!r} was not built"


def test_every_page_loads_without_console_errors_or_foreign_requests(
    page: Any, site_url: str, built_site: Path
) -> None:
    """The ``page`` fixture fails the test afterwards on any console error or request off the host."""
    for path in site_pages(built_site):
        response = page.goto(site_url + path, wait_until="networkidle")
        assert response is not None, path
        assert response.ok, f"{path}: HTTP {response.status}"
        # Reach for every chart as a reader would (charts.js loads the pinned Vega runtime on first reach).
        for figure in page.locator("figure.rp-chart").all()[:2]:
            figure.dispatch_event("focusin")
        page.wait_for_load_state("networkidle")
        assert not page.watch.console_errors, f"{path}: {page.watch.console_errors}"
        assert not page.watch.external_requests, f"{path}: {page.watch.external_requests}"


def _defaults(page: Any, widget: str) -> dict[str, Any]:
    return json.loads(page.get_attribute(widget, "data-defaults"))


def _wait_rendered(page: Any, widget: str, action: Any) -> None:
    page.evaluate(
        """(widget) => { window.__rendered = false;
        document.querySelector(widget).addEventListener('ridgepoint:rendered',
          () => { window.__rendered = true; }, { once: true }); }""",
        widget,
    )
    action()
    page.wait_for_function("() => window.__rendered === true", timeout=20_000)


def _go_live(page: Any, widget: str) -> None:
    page.locator(f"{widget} .rp-widget__start-button").click()
    page.wait_for_selector(f'{widget}[data-rp-state="live"]', timeout=LIVE_TIMEOUT_MS)


def test_lesson_widgets_go_live_and_match_cpython(
    page: Any, site_url: str, site_served: list[tuple[str, int]]
) -> None:
    lesson, widget = "serving/prefill-vs-decode/", LESSONS["serving/prefill-vs-decode/"]
    page.goto(site_url + lesson)
    _go_live(page, widget)
    _wait_rendered(page, widget, lambda: page.fill(f"{widget}-prompt", "8000"))
    expected = compute("prefill-decode", {**_defaults(page, widget), "prompt": "8000"})
    shown = page.eval_on_selector_all(
        f"{widget} [data-shown]", "els => Object.fromEntries(els.map(e => [e.dataset.shown, e.textContent]))"
    )
    assert shown == {key: expected["shown"][key] for key in shown}
    caption = page.text_content(f'{widget} [data-widget-chart="timeline"] .rp-chart__caption')
    assert caption == expected["charts"]["timeline"]["caption"]

    # The other lesson, in the same context: its worker starts from the browser's caches, with no download.
    lesson, widget = "foundations/memory-wall/", LESSONS["foundations/memory-wall/"]
    page.goto(site_url + lesson)
    _go_live(page, widget)
    _wait_rendered(page, widget, lambda: page.fill(f"{widget}-intensity", "400"))
    chosen = page.eval_on_selector_all(
        f'{widget} input[name="gpus"]:checked', "boxes => boxes.map(b => b.value)"
    )
    assert sorted(chosen) == sorted(_defaults(page, widget)["gpus"])
    expected = compute("roofline-explorer", {**_defaults(page, widget), "gpus": chosen, "intensity": "400"})
    rows = page.eval_on_selector_all(
        f'{widget} [data-table="gpus"] tbody tr',
        "trs => trs.map(tr => [...tr.children].map(c => c.textContent))",
    )
    assert rows == [
        [row["name"], *(row["shown"][key] for key in ("peak", "ridge_point", "attainable", "bound"))]
        for row in expected["gpus"]
    ]

    # The KV-cache calculator: every named control reaches the calculators as the page sends it.
    lesson, widget = "model/kv-cache/", LESSONS["model/kv-cache/"]
    page.goto(site_url + lesson)
    _go_live(page, widget)
    _wait_rendered(page, widget, lambda: page.select_option(f"{widget}-kv_format", "fp8"))
    expected = compute("kv-cache", {**_defaults(page, widget), "kv_format": "fp8"})
    shown = page.eval_on_selector_all(
        f"{widget} [data-shown]", "els => Object.fromEntries(els.map(e => [e.dataset.shown, e.textContent]))"
    )
    assert shown == {key: expected["shown"][key] for key in shown}
    assert shown["kv_bytes_per_token"] == "64.0 KiB (65,536 bytes)"

    # The parameter counter: typed shapes and the tied switch reach the calculators as the page sends them.
    lesson, widget = "model/tokens-parameters-and-flops/", LESSONS["model/tokens-parameters-and-flops/"]
    page.goto(site_url + lesson)
    _go_live(page, widget)
    _wait_rendered(page, widget, lambda: page.fill(f"{widget}-layers", "80"))
    _wait_rendered(page, widget, lambda: page.check(f"{widget}-tied"))
    expected = compute("parameter-counter", {**_defaults(page, widget), "layers": "80", "tied": True})
    shown = page.eval_on_selector_all(
        f"{widget} [data-shown]", "els => Object.fromEntries(els.map(e => [e.dataset.shown, e.textContent]))"
    )
    assert shown == {key: expected["shown"][key] for key in shown}
    assert shown["output_layer"] == "none (tied to the embedding)"
    # Downloaded once: the later lessons take it from the HTTP cache without asking the server again.
    wasm = [(path, status) for path, status in site_served if path.endswith(".wasm")]
    assert [status for _, status in wasm] == [200], f"Pyodide's wasm was served {len(wasm)} times: {wasm}"
