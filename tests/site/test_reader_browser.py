"""The built course as readers meet it: every page, light and dark, on a 1280 px screen and a 390 px phone.

One module fixture loads each page of the built site (the session's one build) once per scheme and width and
runs every probe there, so the suite costs 4 x pages loads, not one per check; the tests then read its
findings. Each probe measures what a reader gets (rendered boxes, computed sizes and colours, axe-core's
audit), never a source file, and waits for conditions (load, fonts), never for time.

- Phones: no element wider than the viewport (a wide table scrolls in its own box), 16 px text in fields
  (smaller makes iOS zoom on focus), 24 px checkboxes and radios (WCAG 2.2 target size).
- Charts: every text at 11 CSS px or more as drawn and none cut by its drawing's edge; no two texts of a
  course chart overlap (a notebook's own chart places its labels as its author wrote them); on the kinds in
  LINES_CLEAR_OF_TEXT no line or rule is drawn through a text, and on the others only behind a label whose
  rim of background keeps it off the letters; each GPU has one colour on every chart of the site.
- axe-core (pinned in package-lock.json, injected from node_modules): no serious or critical violation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from calculators.charts.content import short_gpu_name
from calculators.charts.palette import GPU_COLOURS, PHASE_COLOURS
from tests.conftest import NEXT_FRAME, ROOT, PageWatch, start_material

pytestmark = pytest.mark.browser

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
CONFIGS = [(scheme, width) for scheme in ("light", "dark") for width in (1280, 390)]
CONFIG_IDS = [f"{scheme}-{width}px" for scheme, width in CONFIGS]

PROBE = """() => {
  const vw = document.documentElement.clientWidth;
  const scrolls = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (/(auto|scroll|hidden|clip)/.test(getComputedStyle(a).overflowX)) return true;
    }
    return false;
  };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (typeof el.className === "string" && el.className ? "." + el.className.split(" ")[0] : "");
  const out = { pageOverflow: document.documentElement.scrollWidth - vw, wide: [], smallFields: [],
    smallBoxes: [], smallText: [], overlaps: [], clipped: [], legends: [], crossings: [] };
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.width && r.right > vw + 1 && !scrolls(el)) {
      out.wide.push(`${name(el)} ends at ${Math.round(r.right)}`);
    }
  }
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const fields = "input:not([type=checkbox]):not([type=radio]):not([type=range]):not([type=hidden]), " +
    "select, textarea";
  for (const el of document.querySelectorAll(fields)) {
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (visible(el) && size < 16) out.smallFields.push(`${name(el)}: ${size} px`);
  }
  for (const el of document.querySelectorAll("input[type=checkbox], input[type=radio]")) {
    const r = el.getBoundingClientRect();
    // 0x0: the theme's hidden toggles
    if (visible(el) && r.width * r.height > 0 && (r.width < 24 || r.height < 24)) {
      out.smallBoxes.push(`${name(el)}: ${r.width}x${r.height}`);
    }
  }
  for (const figure of document.querySelectorAll("figure.rp-chart")) {
    const chart = figure.dataset.rpChart;
    const course = chart !== "altair"; // a notebook's own chart: its author places its labels
    for (const svg of figure.querySelectorAll(".rp-chart__view svg")) {
      const frame = svg.getBoundingClientRect();
      if (!frame.width) continue; // the variant not shown at this width
      const boxes = [];
      for (const text of svg.querySelectorAll("text")) {
        const words = text.textContent.trim();
        const r = text.getBoundingClientRect();
        if (!words || !r.height || getComputedStyle(text).opacity === "0") continue; // hidden by Vega
        const matrix = text.getScreenCTM();
        const scale = matrix ? Math.hypot(matrix.a, matrix.b) : 1;
        const px = parseFloat(getComputedStyle(text).fontSize) * scale;
        if (px < 11) out.smallText.push(`${chart}: "${words}" at ${px.toFixed(1)} px`);
        if (r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || r.top < frame.top - 0.5 ||
            r.bottom > frame.bottom + 0.5) out.clipped.push(`${chart}: "${words}"`);
        boxes.push([r, words, text]);
      }
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, one] = boxes[i];
          const [b, other] = boxes[j];
          const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (course && w > 1 && h > 1) out.overlaps.push(`${chart}: "${one}" and "${other}"`);
        }
      }
      // A line or rule mark drawn through a text: its centre line sampled every pixel, against each text's
      // box less a pixel's margin (a box holds room above and below the letters). Rimmed: the text is a mark
      // label drawn after the line, with a rim of the background behind the chart round its letters
      // (charts.css), so the line stops short of them.
      let ground = "rgb(255, 255, 255)";
      for (let a = figure; a; a = a.parentElement) {
        const colour = getComputedStyle(a).backgroundColor;
        if (colour !== "rgba(0, 0, 0, 0)" && colour !== "transparent") { ground = colour; break; }
      }
      const rimmed = (text, mark) => {
        const style = getComputedStyle(text);
        return !!text.closest(".mark-text.role-mark") && style.paintOrder.startsWith("stroke") &&
          style.stroke === ground && parseFloat(style.strokeWidth) >= 4 &&
          !!(mark.compareDocumentPosition(text) & Node.DOCUMENT_POSITION_FOLLOWING);
      };
      const lines = ".mark-line.role-mark path, .mark-rule.role-mark line";
      const marks = course ? svg.querySelectorAll(lines) : [];
      for (const mark of marks) {
        const matrix = mark.getScreenCTM();
        const length = mark.getTotalLength();
        const crossed = new Map();
        for (let at = 0; matrix && at <= length; at += 1) {
          const p = mark.getPointAtLength(at);
          const x = matrix.a * p.x + matrix.c * p.y + matrix.e;
          const y = matrix.b * p.x + matrix.d * p.y + matrix.f;
          for (const [r, words, text] of boxes) {
            if (x > r.left + 1 && x < r.right - 1 && y > r.top + 2 && y < r.bottom - 2) {
              crossed.set(words, rimmed(text, mark));
            }
          }
        }
        for (const [words, rim] of crossed) out.crossings.push([chart, words, rim]);
      }
      for (const legend of svg.querySelectorAll(".role-legend")) {
        const symbols = [...legend.querySelectorAll(".role-legend-symbol path")];
        const labels = [...legend.querySelectorAll(".role-legend-label text")];
        labels.forEach((label, i) => symbols[i] && out.legends.push(
          [chart, label.textContent, symbols[i].getAttribute("fill") || symbols[i].getAttribute("stroke")]));
      }
    }
  }
  out.chartGaps = [...document.querySelectorAll(".rp-widget")].map((widget) => {
    const above = [".rp-widget__form", ".rp-widget__start", ".rp-widget__error"]
      .map((part) => widget.querySelector(part)).filter((el) => el && el.getClientRects().length)
      .map((el) => el.getBoundingClientRect().bottom);
    const charts = widget.querySelector(".rp-widget__figures").getBoundingClientRect();
    return Math.round(charts.top - Math.max(...above));
  });
  return out;
}"""

# A wide chart box shows the wide drawing once charts.js has fetched it, after the page's load.
CHARTS_DRAWN = """() => [...document.querySelectorAll("figure.rp-chart[data-rp-wide]")].every((figure) =>
  figure.classList.contains("rp-chart--wide") || figure.querySelector(".rp-chart__view").clientWidth < 640)"""

DRAW_EVERYTHING = "* { content-visibility: visible !important; }"
AXE_RUN = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes): ${v.help}; ` +
      v.nodes.slice(0, 6).map((n) => `${n.target} ${(n.any[0] && n.any[0].message) || ""}`).join(" / "));
}"""


def site_pages(built_site: Path) -> list[str]:
    """Every page of the built site, as paths under its root ("" is the home page).

    Not the redirect pages left at moved lessons' old addresses: they only send the reader on.
    """
    pages = [
        p.parent.relative_to(built_site).as_posix()
        for p in built_site.rglob("index.html")
        if 'http-equiv="refresh"' not in p.read_text(encoding="utf-8")
    ]
    return sorted("" if page == "." else page + "/" for page in pages if not page.startswith("search"))


@pytest.fixture(scope="module")
def findings(browser: Any, built_site: Path, site_url: str) -> dict[tuple[str, int], dict[str, Any]]:
    """What the probes and axe found on every page, per (scheme, width): lists of readable problems."""
    pages = site_pages(built_site)
    assert len(pages) >= 9, pages
    results: dict[tuple[str, int], dict[str, Any]] = {}
    for scheme, width in CONFIGS:
        context = browser.new_context(
            viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True
        )
        page = context.new_page()
        watch = PageWatch(page)
        found: dict[str, Any] = {"pages": {}, "axe": {}}
        for path in pages:
            page.goto(site_url + path)
            page.wait_for_load_state("load")
            page.evaluate("document.fonts.ready.then(() => true)")
            page.wait_for_function(CHARTS_DRAWN)  # each chart as wide as its box allows (charts.js)
            expected = "slate" if scheme == "dark" else "default"
            assert page.get_attribute("body", "data-md-color-scheme") == expected, path
            found["pages"][path] = page.evaluate(PROBE)
            # axe samples the colours the page paints; a chart or question off screen is not painted until
            # the reader scrolls to it (content-visibility), so axe sees each as the reader will: drawn.
            page.add_style_tag(content=DRAW_EVERYTHING)
            page.add_script_tag(path=str(AXE))
            found["axe"][path] = page.evaluate(AXE_RUN)
        context.close()
        watch.check()
        results[(scheme, width)] = found
    return results


def _each_page(found: dict[str, Any], key: str) -> dict[str, list[str]]:
    return {path: probe[key] for path, probe in found["pages"].items() if probe[key]}


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_nothing_is_wider_than_the_screen(findings: Any, config: tuple[str, int]) -> None:
    found = findings[config]
    assert {path: p["pageOverflow"] for path, p in found["pages"].items() if p["pageOverflow"] > 0} == {}
    assert _each_page(found, "wide") == {}


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_fields_and_boxes_are_phone_sized(findings: Any, config: tuple[str, int]) -> None:
    assert _each_page(findings[config], "smallFields") == {}
    assert _each_page(findings[config], "smallBoxes") == {}


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_chart_text_is_readable_whole_and_apart(findings: Any, config: tuple[str, int]) -> None:
    found = findings[config]
    # All three kinds at once: asserting them one by one let a clipped title hide an overlap for a whole run.
    faults = {key: _each_page(found, key) for key in ("smallText", "clipped", "overlaps")}
    assert {key: pages for key, pages in faults.items() if pages} == {}


# Chart kinds whose labels and legends are placed where no line of theirs can pass, at any setting a widget
# offers (calculators/charts/specs.py says how for each). On the other kinds a line may pass behind a mark's
# label (a roofline's ridge rule behind "prefill, 2,000 tokens", on a phone's narrow plot), and the label's
# rim of background (charts.css) keeps it off the letters.
LINES_CLEAR_OF_TEXT = {"kv-cache"}


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_no_line_is_drawn_through_a_charts_text(findings: Any, config: tuple[str, int]) -> None:
    """A line through an axis title, a legend or an unrimmed label strikes its words through; through a
    rimmed label drawn after it, it stops short of the letters."""
    pages = findings[config]["pages"]
    struck = {
        path: sorted(
            {
                f"{chart}: {words!r}"
                for chart, words, rimmed in p["crossings"]
                if chart in LINES_CLEAR_OF_TEXT or not rimmed
            }
        )
        for path, p in pages.items()
    }
    assert {path: texts for path, texts in struck.items() if texts} == {}
    seen = {chart for p in pages.values() for chart, _, _ in p["crossings"]}
    assert seen, "the probe found no line crossing any text on any chart: is it still measuring?"


@pytest.mark.parametrize("config", [c for c in CONFIGS if c[1] == 390], ids=["light-390px", "dark-390px"])
def test_on_a_phone_a_widgets_charts_follow_its_controls(findings: Any, config: tuple[str, int]) -> None:
    """Moving a slider shows its effect on screen: the charts come right after the controls (they were
    1,000 px below them), before the list of figures."""
    gaps = {path: p["chartGaps"] for path, p in findings[config]["pages"].items() if p["chartGaps"]}
    assert gaps, "no widget found"
    assert {path: g for path, g in gaps.items() if max(g) > 150} == {}


def test_each_gpu_has_one_colour_on_every_chart(findings: Any) -> None:
    by_name = {short_gpu_name(key): colour for key, colour in GPU_COLOURS.items()}
    seen: dict[str, set[str]] = {}
    for found in findings.values():
        for probe in found["pages"].values():
            for chart, label, colour in probe["legends"]:
                gpu = re.sub(r", ridge [\d,]+$", "", label)
                if gpu in by_name:
                    seen.setdefault(gpu, set()).add(f"{colour} ({chart})")
    assert seen, "no GPU legend found on any chart"
    wrong = {gpu: found for gpu, found in seen.items() if {c.split()[0] for c in found} != {by_name[gpu]}}
    assert wrong == {}


# Legend labels that genuinely are a phase (see PHASE_SERIES in tests/calculators/charts/test_charts.py). A
# wrapped label's lines come joined without a space, so these are searched for in the label, spaces taken out.
PHASE_LABELS = {
    "prefill": re.compile(r"prefill|TTFT|withattentionovertheprompt"),
    "decode": re.compile(r"decod|TPOT|withtheKVcacheof"),
}


def test_no_legend_gives_a_gpus_or_a_phases_colour_to_another_series(findings: Any) -> None:
    """A scheduler, memory state or rate in the H100's blue or the prefill's orange would read as them."""
    gpu_names = {colour: short_gpu_name(key) for key, colour in GPU_COLOURS.items()}
    phases = {colour: phase for phase, colour in PHASE_COLOURS.items()}
    wrong: set[str] = set()
    for found in findings.values():
        for probe in found["pages"].values():
            for chart, label, colour in probe["legends"]:
                if colour in gpu_names and not label.startswith(gpu_names[colour]):
                    wrong.add(f"{chart}: {label!r} in the {gpu_names[colour]}'s colour")
                if colour in phases and not PHASE_LABELS[phases[colour]].search(re.sub(r"\s+", "", label)):
                    wrong.add(f"{chart}: {label!r} in the {phases[colour]} colour")
    assert wrong == set()


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_axe_finds_nothing_serious(findings: Any, config: tuple[str, int]) -> None:
    assert {path: v for path, v in findings[config]["axe"].items() if v} == {}


LESSON = "serving/prefill-vs-decode/"


def test_computed_numbers_read_as_their_value_and_are_not_tab_stops(page: Any, site_url: str) -> None:
    page.goto(site_url + LESSON)
    page.wait_for_selector(".rp-number[data-tip]")
    numbers = page.eval_on_selector_all(
        ".rp-number",
        """els => els.map(e => ({ text: e.textContent, tab: e.tabIndex, title: e.getAttribute('title'),
                                  description: e.getAttribute('aria-description'), tip: e.dataset.tip }))""",
    )
    assert len(numbers) >= 10
    for number in numbers:
        assert number["text"].strip(), number  # "295 FLOP/byte", or a claim in words ("roughly seven")
        assert number["tab"] == -1, number  # not a tab stop
        assert number["title"] is None, number  # screen readers do not read the Python out
        assert number["description"] is None, number
        assert number["tip"].startswith("Computed by the calculators"), number  # pointers still see it


def test_live_charts_have_a_text_alternative(page: Any, site_url: str) -> None:
    page.goto(site_url + LESSON)
    figures = page.locator("figure.rp-chart:not(.rp-chart--widget)")
    for index in range(figures.count()):
        figures.nth(index).locator(".rp-chart__view").hover()
    page.wait_for_function(
        "n => document.querySelectorAll('figure.rp-chart--live:not(.rp-chart--widget)').length === n",
        arg=figures.count(),
    )
    labels = page.eval_on_selector_all(
        ".rp-chart__live svg", "svgs => svgs.map(s => [s.getAttribute('role'), s.getAttribute('aria-label')])"
    )
    assert labels
    for role, label in labels:
        assert role == "img"
        assert label
        assert len(label) > 20


def test_print_from_dark_mode_gives_white_paper_inputs_with_results_and_no_controls(
    browser: Any, site_url: str
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(site_url + LESSON)
        assert page.get_attribute("body", "data-md-color-scheme") == "slate"
        page.emulate_media(media="print")
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), background
        html_background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        assert html_background in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), html_background
        widget = page.locator(".rp-widget").first
        for hidden in (".rp-widget__python", ".rp-widget__start", ".rp-widget__status", ".rp-widget__hint"):
            assert widget.locator(hidden).first.is_hidden(), hidden
        assert page.locator(".rp-quiz__actions").first.is_hidden()
        # The inputs print beside the results they explain.
        assert widget.locator("input[name=prompt]").is_visible()
        assert widget.locator("[data-shown=prefill_time_s]").is_visible()
    finally:
        context.close()


# Whether each chart's drawing or quiz question has its contents drawn (the browser skips them otherwise).
RENDERED = """(selector) => [...document.querySelectorAll(selector)]
  .map((box) => [...box.children].some((child) => child.checkVisibility({ contentVisibilityAuto: true })))"""


def test_charts_and_questions_below_the_fold_are_drawn_when_the_reader_nears_them(
    page: Any, site_url: str
) -> None:
    # Issue 23: the browser styled and laid out every chart's drawing while the page loaded; a lesson has
    # 1,000-1,500 of those elements, most of them screens below.
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(site_url + "serving/batching/", wait_until="load")
    page.evaluate(NEXT_FRAME)
    charts, questions = (
        page.evaluate(RENDERED, ".rp-chart__view"),
        page.evaluate(RENDERED, ".rp-quiz__question"),
    )
    assert len(charts) >= 3, charts
    assert len(questions) >= 3, questions
    assert charts[-1] is False, charts
    assert questions[-1] is False, questions
    last = page.locator(".rp-quiz__question").last
    last.scroll_into_view_if_needed()
    last.wait_for(state="visible")
    page.wait_for_function(f"() => ({RENDERED})('.rp-quiz__question').at(-1) === true")
    # On paper every chart and question is drawn.
    page.emulate_media(media="print")
    page.evaluate(NEXT_FRAME)  # the skipped state follows the media at the next rendering update
    assert all(page.evaluate(RENDERED, ".rp-chart__view")), "a chart is left out of the printed page"
    assert all(page.evaluate(RENDERED, ".rp-quiz__question")), "a question is left out of the printed page"


def test_a_wide_box_is_a_tab_stop_once_its_section_is_open(page: Any, site_url: str) -> None:
    # A table wider than a phone scrolls in its own box, which keyboard users reach by Tab: the table itself
    # until Material starts (at the reader's first act), Material's wrapper after; boxes in a closed "Data
    # behind the chart" are measured when it opens, not while the page loads.
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(site_url + "gpu/number-formats/", wait_until="load")
    shown = """(selector) => [...document.querySelectorAll(selector)]
      .filter((box) => !box.closest('details:not([open])') && box.scrollWidth > box.clientWidth + 1)
      .map((box) => box.getAttribute('tabindex'))"""
    every_stop = f"(css) => ({shown})(css).length > 0 && ({shown})(css).every((tab) => tab === '0')"
    page.wait_for_function(every_stop, arg="article table")
    assert page.evaluate("() => document.querySelectorAll('.md-typeset__scrollwrap').length") == 0
    start_material(page)
    page.wait_for_function(every_stop, arg=".md-typeset__scrollwrap")
    assert page.evaluate(f"() => ({shown})('article table')") == []  # the wrapper scrolls now, not the table
    stops = "() => [...document.querySelectorAll('article table')].filter((t) => t.hasAttribute('tabindex'))"
    assert page.evaluate(f"() => ({stops})().length") == 0
    data = page.locator("details.rp-chart__data").first
    assert data.evaluate("(details) => !details.open")
    data.locator("summary").click()
    page.wait_for_function(
        "(details) => [...details.querySelectorAll('.md-typeset__scrollwrap')]"
        ".some((box) => box.scrollWidth > box.clientWidth + 1 && box.getAttribute('tabindex') === '0')",
        arg=data.element_handle(),
    )
