"""Material's bundle starts at the reader's first act, not while the lesson first paints (issue 23).

overrides/main.html renders the bundle inert and overrides/assets/ridgepoint/material-on-demand.js starts it.
Until then the page must be whole (our blocks work without Material), and once it starts nothing on the page
may move, and the reader's first key is not lost.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import NEXT_FRAME, start_material

pytestmark = pytest.mark.browser

BUNDLE = "/assets/javascripts/bundle."
PHONE = {"width": 390, "height": 844}
TOPS = "() => [...document.querySelectorAll('article > *')].map((element) => element.offsetTop)"


def test_the_lesson_is_whole_before_material_and_nothing_moves_when_it_starts(
    page: Any, site_url: str
) -> None:
    page.set_viewport_size(PHONE)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(site_url + "gpu/number-formats/")  # top-level tables, a widget, charts, a quiz
    page.wait_for_load_state("networkidle")
    page.evaluate(NEXT_FRAME)
    assert not [url for url in requested if BUNDLE in url], "Material's bundle loaded before the reader acted"
    assert page.evaluate("() => typeof window.document$") == "undefined"
    # Our blocks do not wait for Material.
    page.wait_for_selector(".rp-quiz--enhanced")
    assert page.locator(".rp-widget[data-rp-bound]").count() >= 1
    assert page.locator("figure.rp-chart[data-rp-ready]").count() >= 1
    before = page.evaluate(TOPS)

    start_material(page)
    page.wait_for_selector("article > .rp-table > .md-typeset__scrollwrap")  # Material has wrapped the tables
    page.evaluate(NEXT_FRAME)
    after = page.evaluate(TOPS)
    assert [url for url in requested if BUNDLE in url]
    pairs = enumerate(zip(before, after, strict=True))
    moved = [(index, old, new) for index, (old, new) in pairs if old != new]
    assert not moved, f"blocks of the article moved when Material started (index, before, after): {moved}"


def test_a_first_key_that_turns_the_page_is_not_lost(page: Any, site_url: str) -> None:
    page.goto(site_url + "serving/prefill-vs-decode/", wait_until="load")
    following = page.get_attribute("link[rel=next]", "href")
    assert following
    page.keyboard.press("n")  # Material's shortcut for the next page, pressed before Material has started
    page.wait_for_url(lambda url: url.rstrip("/").endswith(following.strip("./").rstrip("/")), timeout=15_000)
