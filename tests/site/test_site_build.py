"""The built course (``built_site``, built with --strict): numbers, takeaways, go-deeper, nav, offline."""

from __future__ import annotations

import html
import json
import posixpath
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from calculators import UNITS, evaluate_number, format_value
from calculators.setting import BOTH_MODES, COURSE_SETTING, SPEC_PEAK, site_setting, using
from course.lesson_format.lessons import load_course
from course.lesson_format.navigation import build_nav, reading_order
from course.numbers.comparisons import parse_comparison
from course.numbers.extension import Tolerance, stated_value
from course.sanitising.external_loads import html_loads
from tests.conftest import ROOT

pytestmark = pytest.mark.site
COURSE = load_course(ROOT / "docs")


class _Spans(HTMLParser):
    """Collects the computed numbers of a page: attributes and shown text of each ``span.rp-number``."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: list[tuple[dict[str, str], str]] = []
        self._open: dict[str, str] | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "span" and "rp-number" in values.get("class", "").split():
            self._open, self._text = values, ""

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._open is not None:
            self.numbers.append((self._open, self._text))
            self._open = None


def _page(site: Path, source: str) -> str:
    target = (
        "index.html"
        if source == "index.md"
        else source.removesuffix(".md").removesuffix("index")
        + ("" if source.endswith("index.md") else "/")
        + "index.html"
    )
    return (site / target).read_text(encoding="utf-8")


def _all_pages(site: Path) -> list[Path]:
    return [p for p in site.rglob("*.html") if "assets" not in p.parts]


def test_every_quoted_number_equals_the_calculators(built_site: Path) -> None:
    checked = 0
    for path in _all_pages(built_site):
        spans = _Spans()
        spans.feed(path.read_text(encoding="utf-8"))
        for attrs, shown in spans.numbers:
            where = f"{path.relative_to(built_site)}: {shown!r}"
            assert "rp-number--error" not in attrs["class"], where
            with using(site_setting()):  # the setting the site computes under
                value = evaluate_number(attrs["data-expr"])
            assert float(attrs["data-value"]) == pytest.approx(value, rel=1e-12), where
            unit = attrs["data-unit"]
            shown, _, bound = shown.partition(" (bound ")  # `| bound`: the spec-peak figure in brackets
            if bound:
                with using(SPEC_PEAK):
                    peak = evaluate_number(attrs["data-expr"])
                fmt = attrs.get("data-format", "")  # a claim's bound is printed with the unit's default
                assert bound.removesuffix(")") == format_value(
                    peak,
                    unit,
                    digits=int(fmt[0]) if fmt.endswith("sig") else None,
                    decimals=int(fmt[1]) if fmt.endswith("f") else None,
                ), where
            if "data-tolerance" in attrs:  # a claim written as the lesson rounds it
                text = attrs["data-tolerance"]
                tolerance = Tolerance(float(text.rstrip("%")), relative=text.endswith("%"))
                stated = stated_value(shown)
                assert stated is not None, where
                assert tolerance.allows(stated, value / UNITS[unit].scale), where
            else:
                fmt = attrs["data-format"]
                decimals = int(fmt[1]) if fmt.endswith("f") else None
                digits = int(fmt[0]) if fmt.endswith("sig") else None
                assert shown == format_value(value, unit, digits=digits, decimals=decimals), where
            checked += 1
    if any(COURSE.lessons):
        assert checked > 0, "the lessons quote no computed number at all"


def test_the_built_site_computes_in_the_course_setting(built_site: Path) -> None:
    """The switch is thrown (issue 26): the lessons' figures are the calibrated estimate with the KV-cache
    reads counted, not the spec-peak bound; this fails if SITE_SETTING is set back to None."""
    assert site_setting() == COURSE_SETTING
    with using(COURSE_SETTING):
        step = evaluate_number("Scenario().decode().time_s")  # 6.68 ms calibrated; the bound is 4.78 ms
    page = _page(built_site, "serving/prefill-vs-decode.md")
    assert f'data-expr="Scenario().decode().time_s" data-unit="ms" data-value="{step!r}"' in page
    assert "(bound " in page  # figures print their spec-peak bound beside them where the gap matters
    assert "Times in the course&#x27;s model setting: calibrated" in page  # the widget says which setting


def test_every_comparative_claim_shown_holds_in_both_modes(built_site: Path) -> None:
    pattern = re.compile(r'<span class="rp-comparison([^"]*)" data-expr="([^"]+)"')
    checked = 0
    for path in _all_pages(built_site):
        for classes, source in pattern.findall(path.read_text(encoding="utf-8")):
            where = f"{path.relative_to(built_site)}: {source!r}"
            assert "error" not in classes, where
            comparison = parse_comparison(f'"x" holds {html.unescape(source)}')
            for mode in BOTH_MODES:
                with using(mode):
                    left, right = evaluate_number(comparison.left), evaluate_number(comparison.right)
                assert comparison.test(left, right), f"{where} fails {mode.name}: {left} vs {right}"
            checked += 1
    if any(COURSE.lessons):
        assert checked > 0, "no lesson states a comparison checked in both modes"


@pytest.mark.parametrize("lesson", COURSE.lessons, ids=lambda lesson: lesson.id)
def test_lessons_have_takeaways_and_go_deeper(built_site: Path, lesson) -> None:  # type: ignore[no-untyped-def]
    page = _page(built_site, lesson.path)
    box = re.search(r'<div class="admonition takeaways">(.*?)</div>', page, re.DOTALL)
    assert box, f"{lesson.path} has no Key takeaways box"
    assert "Key takeaways" in box.group(1)
    assert box.group(1).count("<li>") == len(lesson.takeaways)
    assert re.search(r'<details class="deeper"', page), f"{lesson.path} has no Go deeper section"
    assert "rp-math--error" not in page


def test_nav_and_previous_next_follow_front_matter(built_site: Path) -> None:
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")]
    order = [p for p in reading_order(build_nav(COURSE, pages)) if not p.startswith(("http", "/"))]
    lesson_order = [p for p in order if COURSE.lesson_by_path(p)]
    expected = [lesson.path for track in COURSE.tracks for lesson in COURSE.lessons_in(track.key)]
    assert lesson_order == expected
    for track in COURSE.tracks:
        index = _page(built_site, f"{track.key}/index.md")
        positions = [index.find(f'href="{lesson.id}/"') for lesson in COURSE.lessons_in(track.key)]
        assert all(p > 0 for p in positions), f"{track.key} index misses a lesson"
        assert positions == sorted(positions)
    for current in lesson_order:
        html = _page(built_site, current)
        footer = re.search(r'<a href="([^"]+)" class="md-footer__link md-footer__link--prev"', html)
        assert footer, current
        # Previous of a lesson is the page before it in the nav: its track index or the lesson before it
        # (or that lesson's worked notebook, which the notebooks layer places right after its lesson).
        target = posixpath.normpath(posixpath.join(_url(current), footer.group(1))) + "/"
        expected = _url(order[order.index(current) - 1])
        assert target == expected or "/notebooks/" in target, (current, target, expected)


def _url(source: str) -> str:
    """The directory URL MkDocs gives a page (``inference/index.md`` -> ``inference/``)."""
    stem = source.removesuffix(".md")
    return "./" if stem == "index" else stem.removesuffix("/index") + "/"


@pytest.mark.browser
def test_no_page_requests_another_host(built_site: Path, site_url: str, page: Any) -> None:
    """Every built page, loaded in Chromium: the ``page`` fixture fails on a request off loopback or a console
    error (a Content-Security-Policy violation is one). This, not a scan of the files, is the proof."""
    for path in sorted(_all_pages(built_site)):
        relative = path.relative_to(built_site).as_posix()
        page.goto(site_url + relative.removesuffix("index.html"), wait_until="load")
        page.wait_for_load_state("networkidle")


def test_every_page_has_the_content_security_policy_first_in_head(built_site: Path) -> None:
    for path in _all_pages(built_site):
        html = path.read_text(encoding="utf-8")
        head = re.search(r"<head>\s*<meta http-equiv=\"Content-Security-Policy\" content=\"([^\"]+)\">", html)
        assert head, f"{path}: no policy first in <head>"
        policy = dict(d.strip().split(" ", 1) for d in head.group(1).split(";"))
        assert policy["script-src"].startswith("'self' 'wasm-unsafe-eval'")
        assert "'unsafe-inline'" not in policy["script-src"]
        assert "'unsafe-eval'" not in policy["script-src"]
        assert policy["object-src"] == "'none'"
        assert policy["base-uri"] == "'self'"
        assert policy["form-action"] == "'self'"
        assert policy["default-src"] == "'self'"
        assert html.find('<meta charset="utf-8">') < 1024  # the charset stays where browsers look for it
    headers = (built_site / "_headers").read_text(encoding="utf-8")
    assert "Content-Security-Policy:" in headers
    assert "frame-ancestors 'self'" in headers


def test_material_bundle_external_urls_stay_dormant(built_site: Path) -> None:
    """Material's script knows a few outside URLs; each is only used when a feature we do not use is on."""
    bundle = next((built_site / "assets" / "javascripts").glob("bundle.*.min.js")).read_text(encoding="utf-8")
    urls = set(re.findall(r"https://[a-z0-9.-]+", bundle))
    assert urls <= {"https://api.github.com", "https://unpkg.com", "https://clipboardjs.com"}, urls
    for path in _all_pages(built_site):
        html = path.read_text(encoding="utf-8")
        assert 'data-md-component="source"' not in html, f"{path}: the repo widget would call api.github.com"
        assert 'class="mermaid"' not in html, f"{path}: Mermaid would be fetched from unpkg.com"
        assert "fonts.googleapis" not in html
        assert "fonts.gstatic" not in html


def test_scanner_would_catch_a_cdn_load() -> None:
    page = (
        '<link rel="stylesheet" href="https://cdn.example/x.css"><link rel="canonical" href="https://x.org/">'
        '<script src="//cdn.example/v.js"></script><a href="https://example.org">a link</a>'
    )
    assert [url for _, url in html_loads(page)] == ["https://cdn.example/x.css", "//cdn.example/v.js"]


def test_scanner_reads_inline_scripts_but_not_json_data() -> None:
    page = (
        '<script type="module">const m = await import("https://unpkg.com/mermaid.mjs");</script>'
        '<script type="application/json">{"source": "https://huggingface.co/x"}</script>'
    )
    assert html_loads(page) == [("<script>", "https://unpkg.com/mermaid.mjs")]


def test_site_has_search_index_and_edit_links(built_site: Path) -> None:
    assert (built_site / "search" / "search_index.json").stat().st_size > 1000
    for lesson in COURSE.lessons:
        assert f"/edit/main/docs/{lesson.path}" in _page(built_site, lesson.path)


def test_search_index_leaves_out_quiz_answers_and_chart_data(built_site: Path) -> None:
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    text = " ".join(doc["text"] for doc in index["docs"])
    assert "Answer key" not in text, "a search would give quiz answers away"
    assert "Answer and explanation" not in text
    assert "Data behind the chart" not in text
    assert "Check your understanding" in " ".join(doc["title"] for doc in index["docs"])


def test_moved_lessons_keep_their_old_address(built_site: Path) -> None:
    old = (built_site / "inference" / "prefill-vs-decode" / "index.html").read_text(encoding="utf-8")
    assert 'http-equiv="refresh" content="0; url=../../serving/prefill-vs-decode/"' in old
    assert (built_site / "serving" / "prefill-vs-decode" / "index.html").exists()


def test_track_pages_link_written_lessons_in_place_of_their_plans(built_site: Path) -> None:
    # Every lesson docs/tracks.yml plans is written now, so each track page links it and names none as
    # planned (how a planned lesson is shown, without a link, is tested on a small course in
    # tests/course/lesson_format/test_lesson_format.py).
    serving = _page(built_site, "serving/index.md")
    assert "Track 4: Serving" in serving
    assert 'href="batching/"' in serving
    beyond = _page(built_site, "multi-gpu/index.md")
    for lesson in ("tensor-parallelism", "pipeline-parallelism", "mixture-of-experts"):
        assert f'href="{lesson}/"' in beyond
    for track in ("model", "gpu", "foundations", "serving", "cheaper-tokens", "multi-gpu"):
        assert "<em>(planned)</em>" not in _page(built_site, f"{track}/index.md")


def test_every_page_holds_materials_bundle_inert_for_the_loader(built_site: Path) -> None:
    """Material's bundle starts at the reader's first act (overrides/assets/ridgepoint/material-on-demand.js):
    every page names it once, inert (``type="text/plain"``, which the browser neither fetches nor runs),
    after the loader, and no page runs it as it loads (the redirects at moved addresses have no theme)."""
    bundle = re.compile(r"<script\b[^>]*\bsrc=\"[^\"]*assets/javascripts/bundle\.[0-9a-f]+\.min\.js\"[^>]*>")
    loader = re.compile(r"<script\b[^>]*\bsrc=\"[^\"]*assets/ridgepoint/material-on-demand\.js\"")
    problems = []
    for path in _all_pages(built_site):
        text = path.read_text(encoding="utf-8")
        if 'http-equiv="refresh"' in text:
            continue
        tags = bundle.findall(text)
        found = loader.search(text)
        if len(tags) != 1 or 'type="text/plain"' not in tags[0] or "data-rp-on-demand" not in tags[0]:
            problems.append(f"{path.relative_to(built_site)}: {tags}")
        elif not found or found.start() > text.index(tags[0]):
            problems.append(f"{path.relative_to(built_site)}: no material-on-demand.js before the bundle")
    assert not problems, problems
