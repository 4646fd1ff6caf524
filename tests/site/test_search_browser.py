"""Site search as a reader meets it: the index downloads when the reader first acts, and search then works.

Material requests the search index as its bundle starts, and its bundle starts at the reader's first key,
pointer, touch, wheel or focus event (overrides/assets/ridgepoint/material-on-demand.js), so the index (and
its indexing in a worker) stays out of the lesson's first paint (issues 16 and 23, page speed). The first key
may be the search shortcut itself: the box opens at once, and what is typed next is searched.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

INDEX = "search/search_index.json"


def test_search_index_waits_for_the_reader_and_search_then_finds_lessons_and_notebooks(
    page: Any, site_url: str
) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(site_url + "serving/prefill-vs-decode/")
    page.wait_for_load_state("networkidle")
    assert not [url for url in requested if url.endswith(INDEX)], "index loaded before any action"
    page.keyboard.press("/")  # Material's shortcut: opens search and focuses its box
    page.keyboard.type("ridge point")
    page.wait_for_selector(".md-search-result__item", timeout=15000)
    assert [url for url in requested if url.endswith(INDEX)]
    results = page.locator(".md-search-result__item").all_inner_texts()
    assert any("Ridge points and the roofline, worked through in Python" in text for text in results), results


def test_a_page_opened_from_a_search_result_gets_the_index_at_once(page: Any, site_url: str) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(site_url + "serving/prefill-vs-decode/?h=decode")  # how Material links a result
    page.wait_for_load_state("networkidle")
    assert [url for url in requested if url.endswith(INDEX)], "search highlighting needs the index"
