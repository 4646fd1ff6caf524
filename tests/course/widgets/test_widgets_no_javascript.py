"""A widget read without JavaScript: it says its inputs need JavaScript (not that it becomes live), and every
control is disabled, since none would do anything; with JavaScript they all work."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

LESSONS = ("serving/prefill-vs-decode/", "foundations/memory-wall/")
ENABLED = """() => [...document.querySelectorAll('.rp-widget :is(input, select, button, textarea)')]
  .filter((control) => !control.matches(':disabled') && !control.readOnly && !control.closest('[hidden]'))
  .map((control) => control.outerHTML.slice(0, 80))"""


@pytest.mark.parametrize("lesson", LESSONS)
def test_without_javascript_controls_are_disabled(browser: Any, site_url: str, lesson: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_url + lesson)
    status = page.inner_text(".rp-widget__status")
    assert "needs JavaScript" in status
    assert "becomes live" not in status
    assert page.evaluate(ENABLED) == []
    assert page.locator(".rp-widget__run").is_disabled()
    context.close()


@pytest.mark.parametrize("lesson", LESSONS)
def test_with_javascript_controls_work(page: Any, site_url: str, lesson: str) -> None:
    page.goto(site_url + lesson)
    page.wait_for_function("() => !document.querySelector('.rp-widget__run').disabled")
    disabled = page.eval_on_selector_all(
        ".rp-widget :is(input, select, button, textarea)",
        "controls => controls.filter((control) => control.matches(':disabled') || control.readOnly).length",
    )
    assert disabled == 0
    assert "needs JavaScript" not in page.inner_text(".rp-widget__status")
