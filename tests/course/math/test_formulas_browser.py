"""Display formulas laid out under two font sets: the fewest fonts Chromium runs with, and what it recommends.

How wide and tall a formula is depends on the fonts the reader has: Debian's ``chromium`` brings DejaVu Math
TeX Gyre and Liberation (its recommended fonts), a minimal machine has only DejaVu's core, and the same
formula differs by a quarter in width and by pixels in height between the two. A browser test that passes
under one set only is luck, so this one runs the built course's formula pages under both, whichever set the
machine's other tests see: Chromium reads its fonts through fontconfig, and ``FONTCONFIG_FILE`` points it at a
configuration listing only DejaVu's core files, or at the system's with every installed font.

Under each set, at a 1280 px screen and a 390 px phone: every display formula's box is a keyboard stop with a
name (it may scroll sideways wherever a formula is wider than its column), no box scrolls up and down (tall
glyphs stay inside it), no box reaches past the article's column, on a wide screen no formula scrolls at all,
and axe finds no scrollable region that the keyboard cannot reach. A box that scrolls sideways shows it: the
scroll hint's shadows (fixed to the box's edges) under covers that travel with the formula (ridgepoint.css).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from course.browser_flags import launch_options
from tests.conftest import ROOT, PageWatch

pytestmark = pytest.mark.browser

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = (1280, 390)
# fonts-dejavu-core, the set every Debian desktop has (and Chromium's minimum): Sans, Sans Mono, Serif.
CORE_FONTS = frozenset(
    f"DejaVu{family}{style}.ttf" for family in ("Sans", "SansMono", "Serif") for style in ("", "-Bold")
)
# What `apt-get install chromium` brings with its recommended fonts (fonts-dejavu-extra, fonts-liberation).
RECOMMENDED_FAMILIES = ("DejaVu Math TeX Gyre", "Liberation Sans", "Liberation Serif", "Liberation Mono")
FONT_SETS = ("minimal", "recommended")
# Two covers that scroll with the formula, then two shadows fixed to the box's edges (ridgepoint.css).
SCROLL_HINT = {"attachments": "local, local, scroll, scroll", "gradients": 4}

PROBE = """() => {
  const column = document.querySelector("article.md-content__inner").getBoundingClientRect();
  const scrolls = (style, axis) => /(auto|scroll)/.test(style["overflow" + axis]);
  const drawn = (math) => { const range = document.createRange(); range.selectNodeContents(math);
    return range.getBoundingClientRect(); };
  return [...document.querySelectorAll(".rp-math--display")].map((box) => {
    const style = getComputedStyle(box);
    const r = box.getBoundingClientRect();
    return {
      name: box.getAttribute("aria-label"), role: box.getAttribute("role"), tab: box.tabIndex,
      sideways: box.scrollWidth > box.clientWidth + 1 && scrolls(style, "X"),
      upDown: box.scrollHeight > box.clientHeight + 1 && scrolls(style, "Y"),
      outside: r.left < column.left - 1 || r.right > column.right + 1,
      width: drawn(box.querySelector("math")).width, height: drawn(box.querySelector("math")).height,
      hint: {attachments: style.backgroundAttachment,
        gradients: (style.backgroundImage.match(/linear-gradient/g) || []).length},
    };
  });
}"""

AXE_RUN = """async () => {
  const rules = ["scrollable-region-focusable", "aria-prohibited-attr", "aria-allowed-role",
    "nested-interactive"];
  const result = await axe.run(document, { runOnly: { type: "rule", values: rules } });
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(" / ")}`);
}"""


def _fc_list(*arguments: str) -> list[str]:
    listed = subprocess.run(["fc-list", *arguments], capture_output=True, text=True, check=False)
    return [line for line in listed.stdout.splitlines() if line]


def _launch(browser: Any, env: dict[str, str]) -> Any:
    """Another Chromium like the session's, started with ``env`` (its fontconfig file)."""
    return browser.browser_type.launch(**launch_options(browser.browser_type), env=env)


def _missing(what: str) -> None:
    if os.environ.get("RIDGEPOINT_REQUIRE_BROWSER"):
        pytest.fail(f"{what} (CI installs fonts-dejavu-core fonts-dejavu-extra fonts-liberation: .ci/run)")
    pytest.skip(f"{what} (apt-get install fonts-dejavu-core fonts-dejavu-extra fonts-liberation)")


def font_environment(font_set: str, folder: Path) -> dict[str, str]:
    """The environment that starts Chromium under ``font_set``: a fontconfig file naming its fonts."""
    if shutil.which("fc-list") is None:
        _missing("fontconfig's fc-list is missing")
    if font_set == "recommended":
        families = "\n".join(_fc_list(":", "family"))
        lacking = [family for family in RECOMMENDED_FAMILIES if family not in families]
        if lacking:
            _missing(f"Chromium's recommended fonts are not installed: {', '.join(lacking)}")
        return {key: value for key, value in os.environ.items() if key != "FONTCONFIG_FILE"}
    installed = map(Path, _fc_list("--format", "%{file}\n"))
    core = {path.name: path for path in installed if path.name in CORE_FONTS}
    if set(core) != CORE_FONTS:
        _missing(f"DejaVu's core fonts are missing: {', '.join(sorted(CORE_FONTS - set(core)))}")
    fonts = folder / "fonts"
    fonts.mkdir()
    for name, path in core.items():
        (fonts / name).symlink_to(path)
    config = folder / "fonts.conf"
    config.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n'
        f"  <dir>{fonts}</dir>\n  <cachedir>{folder / 'cache'}</cachedir>\n"
        # The system's rules (aliases such as Arial -> a metric twin, hinting), but none of its font folders.
        '  <include ignore_missing="yes">/etc/fonts/conf.d</include>\n</fontconfig>\n',
        encoding="utf-8",
    )
    return {**os.environ, "FONTCONFIG_FILE": str(config)}


def formula_pages(built_site: Path) -> list[str]:
    """Paths of the built pages that show a display formula."""
    return sorted(
        page.parent.relative_to(built_site).as_posix() + "/"
        for page in built_site.rglob("index.html")
        if "rp-math--display" in page.read_text(encoding="utf-8")
    )


Layouts = tuple[str, dict[tuple[int, str], Any]]  # a font set, and (width, page) -> what the page showed


@pytest.fixture(scope="module", params=FONT_SETS)
def layouts(
    request: pytest.FixtureRequest,
    browser: Any,
    built_site: Path,
    site_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Layouts:
    """Under one font set: (width, page) -> the page's formula boxes and axe's findings."""
    font_set: str = request.param
    env = font_environment(font_set, tmp_path_factory.mktemp(f"fonts-{font_set}"))
    pages = formula_pages(built_site)
    assert len(pages) >= 2, pages  # the course and the contributor guide have formulas
    found: dict[tuple[int, str], Any] = {}
    chromium = _launch(browser, env)
    try:
        for width in WIDTHS:
            context = chromium.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)
            page = context.new_page()
            watch = PageWatch(page)
            for path in pages:
                page.goto(site_url + path, wait_until="load")
                page.evaluate("document.fonts.ready.then(() => true)")
                page.add_script_tag(path=str(AXE))
                found[width, path] = {"boxes": page.evaluate(PROBE), "axe": page.evaluate(AXE_RUN)}
            context.close()
            watch.check()
    finally:
        chromium.close()
    return font_set, found


def test_formula_boxes_are_reachable_and_fit_the_column(layouts: Layouts) -> None:
    font_set, found = layouts
    problems = []
    for (width, path), page in found.items():
        problems += [f"{font_set}, {width} px, {path}: axe {violation}" for violation in page["axe"]]
        for index, box in enumerate(page["boxes"]):
            where = f"{font_set}, {width} px, {path} formula {index + 1}"
            if box["tab"] != 0 or box["role"] != "group" or not (box["name"] or "").startswith("Formula: "):
                problems.append(f"{where}: not a named keyboard stop ({box})")
            if box["upDown"]:
                problems.append(f"{where}: its box scrolls up and down (height {box['height']:.0f} px)")
            if box["outside"]:
                problems.append(f"{where}: reaches past the article's column")
            if width >= 1280 and box["sideways"]:
                problems.append(f"{where}: wider than the column on a wide screen ({box['width']:.0f} px)")
            if box["hint"] != SCROLL_HINT:
                problems.append(f"{where}: no scroll hint ({box['hint']})")
    assert any(box["sideways"] for (width, _), page in found.items() if width < 1280 for box in page["boxes"])
    assert problems == []


def test_the_font_sets_lay_formulas_out_differently(
    browser: Any, built_site: Path, site_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The check above means something only if FONTCONFIG_FILE reached Chromium: the sets' widths differ."""
    widths = {}
    for font_set in FONT_SETS:
        env = font_environment(font_set, tmp_path_factory.mktemp(f"widths-{font_set}"))
        chromium = _launch(browser, env)
        try:
            page = chromium.new_page(viewport={"width": 1280, "height": 900})
            watch = PageWatch(page)
            page.goto(site_url + formula_pages(built_site)[0], wait_until="load")
            page.evaluate("document.fonts.ready.then(() => true)")
            widths[font_set] = [round(box["width"]) for box in page.evaluate(PROBE)]
            watch.check()
        finally:
            chromium.close()
    assert widths["minimal"] != widths["recommended"], widths
