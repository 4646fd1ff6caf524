"""Readers move between pages by Material's instant navigation: the content is swapped, the page not reloaded.

Every block must come alive again on the page it lands on: charts blank after instant navigation are a common
complaint about other courses. The test build's site_url is the local server (tests/conftest.py), so Material
takes over the links here exactly as it does for readers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from calculators.browser import compute
from tests.conftest import start_material

pytestmark = pytest.mark.browser

LIVE_TIMEOUT_MS = 90_000  # one Pyodide start on a busy 2-core runner


def _follow_instantly(page: Any, selector: str, url_glob: str) -> None:
    """Click a link and check that Material swapped the page in place (the window's state survives)."""
    start_material(page)  # a reader has moved the pointer before they click
    page.evaluate("window.__sameDocument = true")
    page.locator(selector).first.click()
    page.wait_for_url(url_glob)
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.__sameDocument === true"), (
        "the link caused a full reload, not instant navigation"
    )


def test_charts_quizzes_and_widgets_come_alive_after_instant_navigation(page: Any, site_url: str) -> None:
    page.goto(site_url)
    _follow_instantly(page, 'article a[href*="serving/prefill-vs-decode/"]', "**/serving/prefill-vs-decode/")

    # A chart turns interactive when the reader reaches for it.
    page.locator("figure.rp-chart:not(.rp-chart--widget) .rp-chart__view").first.focus()
    page.wait_for_selector("figure.rp-chart.rp-chart--live", timeout=30_000)

    # The quiz answers.
    page.wait_for_selector(".rp-quiz--enhanced")
    question = page.locator('.rp-quiz__question[data-kind="single"]').first
    wrong = question.locator('.rp-quiz__explanations li[data-correct="false"]').first.get_attribute(
        "data-option"
    )
    question.locator(f'input[value="{wrong}"]').check()
    question.get_by_role("button", name="Check answer").click()
    assert "Not quite" in question.locator(".rp-quiz__feedback").inner_text()

    # The widget goes live and answers as CPython's calculators do.
    widget = "#widget-prefill-decode"
    page.locator(f"{widget} .rp-widget__start-button").click()
    page.wait_for_selector(f'{widget}[data-rp-state="live"]', timeout=LIVE_TIMEOUT_MS)
    page.evaluate(
        """(w) => { window.__rendered = false; document.querySelector(w).addEventListener(
             'ridgepoint:rendered', () => { window.__rendered = true; }, { once: true }); }""",
        widget,
    )
    page.fill(f"{widget}-prompt", "8000")
    page.wait_for_function("() => window.__rendered === true", timeout=20_000)
    defaults = json.loads(page.get_attribute(widget, "data-defaults"))
    expected = compute("prefill-decode", {**defaults, "prompt": "8000"})
    shown = page.eval_on_selector_all(
        f"{widget} [data-shown]", "els => Object.fromEntries(els.map(e => [e.dataset.shown, e.textContent]))"
    )
    assert shown == {key: expected["shown"][key] for key in shown}

    # Straight on to the other lesson, before the address has caught up with the slider: the new page's
    # address must not inherit this widget's state, and its own widget starts.
    page.fill(f"{widget}-prompt", "9000")
    _follow_instantly(page, 'article a[href*="foundations/memory-wall/"]', "**/foundations/memory-wall/")
    page.wait_for_timeout(600)  # past the widget's address-writing delay
    assert "prefill-decode." not in page.url, page.url
    widget = "#widget-roofline-explorer"
    page.locator(widget).scroll_into_view_if_needed()
    page.wait_for_selector(f'{widget}[data-rp-state="live"]', timeout=LIVE_TIMEOUT_MS)
