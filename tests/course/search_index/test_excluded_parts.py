"""Setting aside what the search index skips must not change the index: checked with Material's own parser.

Material's search plugin reads a page with its ``Parser``; each test feeds that parser a page as it is and as
:func:`set_aside` leaves it, and requires the same sections (id, title, text). Random pages (nested,
unbalanced, with headings and scripts inside excluded parts) and the built course's own pages are both read.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from material.plugins.search.plugin import Parser

from course.search_index.excluded_parts import MAX_PARTS, put_back, set_aside

Sections = list[tuple[str | None, str, str, bool]]


def indexed(html: str) -> Sections | str:
    """What Material's search plugin records of ``html``: each section's id, title, text and exclusion (or
    the error it stops with: some broken pages stop it, and must stop it in the same way)."""
    parser = Parser()
    try:
        parser.feed(html)
        parser.close()
    except ValueError as error:
        return repr(error)
    return [(s.id, "".join(s.title), "".join(s.text), s.is_excluded()) for s in parser.data]


def test_drawings_and_tables_inside_an_excluded_part_are_set_aside() -> None:
    drawing = '<svg width="10"><g><path d="M0 0"/><text x="1">p99</text></g></svg>'
    table = "<table><tr><td>12,000</td></tr></table>"
    html = (
        '<h2 id="a">Batching</h2><p>Throughput grows.</p>'
        '<div class="view" data-search-exclude><svg class="frame"></svg>'
        f'<div class="narrow">{drawing}</div></div>'
        f"<details data-search-exclude><summary>Data</summary>{table}</details><p>After.</p>"
    )
    aside = set_aside(html)
    assert aside.parts == [drawing, f"<summary>Data</summary>{table}"]
    assert "p99" not in aside.html
    assert "12,000" not in aside.html
    assert indexed(aside.html) == indexed(html)
    assert put_back(aside.html, aside.parts) == html


@pytest.mark.parametrize(
    "inside",
    [
        '<h2 id="x">Heading</h2>',  # a heading opens a section even where text is skipped
        "<script>var a = 1;</script>",  # skipped for good: its end would not end the skipping
        "<span>a < b</span>",  # a "<" that starts no tag: html.parser reads it otherwise
        "<span>open",  # not closed: the parser's nesting would differ
        "<span></p></span>",  # closed out of order
        '<span data-search-boost="2">x</span>',  # the plugin removes this attribute from the page it writes
    ],
)
def test_a_part_that_could_change_the_index_stays(inside: str) -> None:
    html = f"<p>Before</p><details data-search-exclude>{inside}</details><p>After</p>"
    assert set_aside(html).html == html


def test_a_part_holding_a_tag_whose_skipping_is_in_force_stays() -> None:
    # The outer <section>'s skipping ends at the first </section>, inside the <div>: with the <div>'s inside
    # set aside it would end later, and "y" would leave the index.
    html = (
        "<section data-search-exclude><div data-search-exclude><section></section></div>y</section><p>z</p>"
    )
    assert set_aside(html).html == html
    assert "y" in str(indexed(html))


def test_a_page_too_costly_to_sort_out_is_read_whole() -> None:
    """A hostile lesson cannot make setting aside quadratic: past the bounds, nothing is set aside."""
    nested = "<details data-search-exclude>" * 6_000 + "<span>x</span>" + "</details>" * 6_000
    assert set_aside(nested).html == nested  # without the bound, "<span>x</span>" was set aside (in 36 s)
    many = "<details data-search-exclude><summary>x</summary></details>" * (MAX_PARTS + 1)
    assert set_aside(many).html == many
    fewer = "<details data-search-exclude><summary>x</summary></details>" * 10
    assert set_aside(fewer).html != fewer


def test_put_back_refuses_a_page_that_lost_a_part() -> None:
    aside = set_aside("<details data-search-exclude><summary>x</summary></details>")
    with pytest.raises(RuntimeError, match="1 of 1 parts"):
        put_back(aside.html.replace("<!--", "<!-- changed "), aside.parts)


# Excluding, and looking like it: a longer name, the words in a value.
ATTRIBUTES = [
    "",
    "",
    " data-search-exclude",
    ' data-search-exclude=""',
    " data-search-excluded",
    ' title="a data-search-exclude"',
]
TAGS = ["div", "details", "section", "span", "p", "svg", "g", "code", "pre", "h2", "h3", "script", "br"]


@st.composite
def pages(draw: st.DrawFn, depth: int = 0) -> str:
    """A page of random nesting: excluded parts, headings, scripts, void tags, comments, text with "<" and
    now and then an end tag left out or out of place."""
    out = []
    for _ in range(draw(st.integers(0, 3 if depth < 4 else 0))):
        kind = draw(st.sampled_from(["text", "element", "element", "element", "comment", "stray"]))
        if kind == "text":
            out.append(escape(draw(st.sampled_from(["alpha", "p99", " ", "12,000", "a\nb"]))))
        elif kind == "comment":
            out.append("<!-- note -->")
        elif kind == "stray":
            out.append(
                draw(st.sampled_from(["a < b", "</span>", "<div>", "<g/>", "<div data-search-exclude/>"]))
            )
        else:
            tag = draw(st.sampled_from(TAGS))
            attributes = draw(st.sampled_from(ATTRIBUTES))
            if tag.startswith("h"):
                attributes += f' id="h{draw(st.integers(0, 9))}"'
            if tag == "br":
                out.append(f"<br{attributes}>")
                continue
            inner = draw(pages(depth + 1))
            closing = "" if draw(st.integers(0, 9)) == 0 else f"</{tag}>"
            out.append(f"<{tag}{attributes}>{inner}{closing}")
    return "".join(out)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(html=pages())
def test_random_pages_index_the_same_with_their_parts_set_aside(html: str) -> None:
    aside = set_aside(html)
    assert indexed(aside.html) == indexed(html)
    assert put_back(aside.html, aside.parts) == html


ARTICLE_RE = re.compile(r"<article\b[^>]*>(.*)</article>", re.DOTALL)


@pytest.mark.site
def test_the_course_pages_index_the_same_with_their_parts_set_aside(built_site: Path) -> None:
    """Every built page, read as the plugin read it (the built page keeps the value-less marks), indexes the
    same; and the charts' drawings and the notebooks' code cells, most of the pages' tags, are set aside."""
    tags_before = tags_after = 0
    for page in sorted(built_site.rglob("*.html")):
        match = ARTICLE_RE.search(page.read_text(encoding="utf-8"))
        if match is None:
            continue
        html = match.group(1)
        aside = set_aside(html)
        assert indexed(aside.html) == indexed(html), page
        assert "<!--rpS" not in html, f"{page}: a mark was left in the built page"
        tags_before += html.count("<")
        tags_after += aside.html.count("<")
    assert tags_after < tags_before / 2, (tags_before, tags_after)
