"""The light/dark toggle in the header: ours, in place of Material's palette component (issue 23).

Material's component restyled the whole page twice as its bundle started (a colour-scheme <meta> appended,
then filled in); overrides/partials/javascripts/palette.html applies the scheme where the header is parsed.
What a reader relied on must still hold: the system's scheme until they choose, their choice kept across
pages and visits (where and as Material kept it), the keyboard, the viewport's scrollbars in the scheme,
the browser's toolbar in the header's colour, transitions back after a switch, and instant navigation.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import NEXT_FRAME, PageWatch, start_material

pytestmark = pytest.mark.browser  # the page fixture (tests/conftest.py) fails on a console error afterwards

LESSON = "serving/batching/"
SCHEMES = {"light": "default", "dark": "slate"}

# The body's scheme at the moment the parser reaches Material's bundle (before it runs), and the label shown.
SCHEME_BEFORE_THE_BUNDLE = """
new MutationObserver((changes, observer) => {
  if (!document.querySelector('script[src*="javascripts/bundle."]')) return;
  window.__schemeBeforeBundle = document.body.dataset.mdColorScheme;
  observer.disconnect();
}).observe(document, { childList: true, subtree: true });
"""
STATE = """() => ({
  scheme: document.body.dataset.mdColorScheme,
  root: getComputedStyle(document.documentElement).colorScheme,
  label: document.querySelector("form[data-rp-palette] label:not([hidden])")?.title,
  checked: document.querySelector("form[data-rp-palette] input:checked")?.id,
  switching: document.body.hasAttribute("data-md-color-switching"),
})"""

# Each change of the body's scheme and of its switching attribute, in order.
WATCH_SWITCHING = """() => {
  window.__changes = [];
  new MutationObserver((records) => {
    for (const record of records) {
      const now = document.body.getAttribute(record.attributeName);
      const change = record.oldValue === null ? "added" : now === null ? "removed" : "changed";
      window.__changes.push([record.attributeName, change]);
    }
  }).observe(document.body, {
    attributes: true,
    attributeOldValue: true,
    attributeFilter: ["data-md-color-switching", "data-md-color-scheme"],
  });
}"""


@pytest.mark.parametrize("system", ["light", "dark"])
def test_before_choosing_a_reader_sees_their_systems_scheme_from_the_first_frame(
    browser: Any, site_url: str, system: str
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme=system)
    context.add_init_script(SCHEME_BEFORE_THE_BUNDLE)
    page = context.new_page()
    watch = PageWatch(page)
    page.goto(site_url + LESSON, wait_until="load")
    state = page.evaluate(STATE)
    before_bundle = page.evaluate("() => window.__schemeBeforeBundle")
    page.wait_for_function("() => document.querySelector('meta[name=theme-color]')?.content")
    toolbar, header = page.evaluate(
        """() => [document.querySelector('meta[name=theme-color]').content,
                  getComputedStyle(document.querySelector('.md-header')).backgroundColor]"""
    )
    color_scheme_metas = page.evaluate("() => document.querySelectorAll('meta[name=color-scheme]').length")
    context.close()
    watch.check()
    assert before_bundle == SCHEMES[system]  # applied as the header was parsed, not by Material's bundle
    assert state["scheme"] == SCHEMES[system]
    # The viewport's scrollbars follow: ridgepoint.css tells the root, no <meta> (each one a whole restyle).
    assert state["root"] == ("dark" if system == "dark" else "normal")
    assert color_scheme_metas == 0
    # The label shown offers the other scheme; its option is the one checked (a screen reader's state).
    assert state["label"] == ("Switch to light mode" if system == "dark" else "Switch to dark mode")
    assert state["checked"] == ("__palette_1" if system == "dark" else "__palette_0")
    assert toolbar == header  # the browser's toolbar takes the header's colour, as Material's did


def test_the_toggle_switches_the_scheme_and_the_choice_holds_across_visits_and_pages(
    page: Any, site_url: str
) -> None:
    page.goto(site_url + LESSON, wait_until="load")
    page.evaluate(WATCH_SWITCHING)
    page.locator("form[data-rp-palette] label:visible").click()
    switched = page.evaluate(STATE)
    page.evaluate(NEXT_FRAME)
    page.evaluate(NEXT_FRAME)
    settled = page.evaluate(STATE)
    changes = page.evaluate("() => window.__changes")
    # Kept where and as Material keeps it, so a choice made on an older build of the site still holds.
    saved = page.evaluate("() => __md_get('__palette')")
    page.reload(wait_until="load")
    reloaded = page.evaluate(STATE)
    page.emulate_media(color_scheme="light")  # the system changes after the reader chose: the choice holds
    page.evaluate(NEXT_FRAME)
    kept = page.evaluate(STATE)
    # Instant navigation swaps the content under the same header: the choice and the toggle carry over.
    start_material(page)
    page.evaluate("window.__sameDocument = true")
    page.locator(".md-footer__link--next").click()
    page.wait_for_url("**/notebooks/**")
    page.wait_for_load_state("load")
    same_document = page.evaluate("() => window.__sameDocument === true")
    after_navigation = page.evaluate(STATE)
    page.locator("form[data-rp-palette] label:visible").click()
    switched_back = page.evaluate(STATE)
    assert switched["scheme"] == "slate"
    assert switched["root"] == "dark"
    assert switched["label"] == "Switch to light mode"
    # Transitions off while the scheme changes (Material's rule for data-md-color-switching), on after.
    assert changes[0] == ["data-md-color-switching", "added"], changes
    assert ["data-md-color-scheme", "changed"] in changes
    assert changes[-1] == ["data-md-color-switching", "removed"], changes
    assert not settled["switching"]
    assert saved["index"] == 1
    assert saved["color"] == {"media": "(prefers-color-scheme: dark)", "scheme": "slate", "primary": "indigo",
                              "accent": "deep-orange"}  # fmt: skip
    assert reloaded["scheme"] == kept["scheme"] == "slate"
    assert same_document, "the footer link reloaded the page: instant navigation is off"
    assert after_navigation["scheme"] == "slate"
    assert switched_back["scheme"] == "default"
    assert switched_back["label"] == "Switch to dark mode"


def test_until_the_reader_chooses_the_page_follows_the_systems_scheme(page: Any, site_url: str) -> None:
    page.goto(site_url + LESSON, wait_until="load")
    before = page.evaluate(STATE)
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("() => document.body.dataset.mdColorScheme === 'slate'")
    after = page.evaluate(STATE)
    saved = page.evaluate("() => __md_get('__palette')")
    assert before["scheme"] == "default"
    assert after["label"] == "Switch to light mode"
    assert saved is None  # following the system is not a choice: nothing is stored


def test_enter_and_the_arrow_keys_switch_the_scheme_from_the_keyboard(page: Any, site_url: str) -> None:
    page.goto(site_url + LESSON, wait_until="load")
    page.focus("#__palette_0")
    page.keyboard.press("Enter")  # as in Material: the next option
    by_enter = page.evaluate(STATE)
    focused = page.evaluate("() => document.activeElement.id")
    page.keyboard.press("ArrowDown")  # a group of radio buttons: the browser moves the choice
    by_arrow = page.evaluate(STATE)
    assert by_enter["scheme"] == "slate"
    assert focused == "__palette_1"
    assert by_arrow["scheme"] == "default"
    assert by_arrow["checked"] == "__palette_0"
