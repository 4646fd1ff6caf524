"""Tables' boxes in real Chromium: the lesson is laid out as Material lays out a table, with and without
JavaScript (course/tables/extension.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import start_material

pytestmark = pytest.mark.browser

LESSON = "model/tokens-parameters-and-flops/"  # a table at its top level
# Each boxed table's follower: its top margin and font size (px), and the gap above it to the box (px).
FOLLOWERS = """() => [...document.querySelectorAll("article > .rp-table + *")].map((element) => {
  const style = getComputedStyle(element);
  const above = element.previousElementSibling.getBoundingClientRect().bottom;
  return { margin: parseFloat(style.marginTop), font: parseFloat(style.fontSize),
           gap: element.getBoundingClientRect().top - above };
})"""


def test_without_javascript_the_text_after_a_table_keeps_materials_spacing(
    browser: Any, site_url: str
) -> None:
    """Without JavaScript Material spaces whatever follows a table by 1.5em (``table:not([class]) + *``);
    in a box, the table has no follower, and ridgepoint.css gives the box's follower that spacing."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_url + LESSON)
    followers = page.evaluate(FOLLOWERS)
    context.close()
    assert followers, f"{LESSON} has no table at its top level: choose a lesson that has one"
    for follower in followers:
        assert follower["margin"] == pytest.approx(1.5 * follower["font"], abs=0.5), follower


def test_with_javascript_material_wraps_the_table_inside_its_box(page: Any, site_url: str) -> None:
    """Material moves the table into its scroll wrapper inside the box, and the box adds no space of its own:
    the gap above the follower is the wrapper's margin (block margins collapse through the box)."""
    page.goto(site_url + LESSON)
    start_material(page)
    page.wait_for_selector("article > .rp-table > .md-typeset__scrollwrap > .md-typeset__table > table")
    followers = page.evaluate(FOLLOWERS)
    wrapper_margin = page.evaluate(
        """() => parseFloat(getComputedStyle(
          document.querySelector("article > .rp-table > .md-typeset__scrollwrap")).marginBottom)"""
    )
    box = page.evaluate(
        """() => { const style = getComputedStyle(document.querySelector("article > .rp-table"));
          return [style.paddingTop, style.paddingBottom, style.borderBottomWidth, style.marginBottom]; }"""
    )
    assert followers
    assert box == ["0px", "0px", "0px", "0px"], box
    first = followers[0]
    # Collapsed margins: the larger of the wrapper's bottom margin and the follower's top margin.
    assert first["gap"] == pytest.approx(max(wrapper_margin, first["margin"]), abs=1), (first, wrapper_margin)
