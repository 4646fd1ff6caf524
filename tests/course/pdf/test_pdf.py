"""The course PDF: made once per run (site built with mkdocs-pdf.yml, printed by Chromium), read with pypdf.

What a reader of the PDF relies on: every lesson, takeaway and quiz answer is in it; charts are vector
drawings, never an error message; the outline and the links lead to the lessons; the pages are neither blank
nor absurdly many. The expectations come from the lessons' front matter and from the built site, so a new
lesson is covered without editing this file. The combining step also has fast tests without a browser.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from pypdf import PdfReader
from pypdf.generic import ContentStream

from course.lesson_format.lessons import load_course
from course.pdf.combine import (
    COVER_PAGE,
    PRINT_DESCRIPTION,
    PRINT_PAGE,
    Chapter,
    NavPage,
    NavSection,
    SiteInfo,
    adapt_page,
    inline_wide_drawings,
    plan_chapters,
    without_prefixes,
)
from course.pdf.render import ERROR_MARKERS, FAILURE_TEXT, PdfError, print_course
from tests.conftest import ROOT, build_site

pytestmark = pytest.mark.pdf

DOCS = ROOT / "docs"
A4_POINTS = (595, 842)
DRAWING_OPERATORS = {b"m", b"l", b"c", b"v", b"y", b"re", b"h"}


@dataclass
class CoursePdf:
    """The PDF made for this run, what pypdf reads in it, and the built site it was made from."""

    path: Path
    reader: PdfReader
    site: Path
    description: dict[str, Any]
    page_texts: list[str]  # normalised text of each page (index 0 is the cover)

    @property
    def text(self) -> str:
        """The pages' text as one reading: each page's running header and footer left out.

        A paragraph that a page break splits reads on across the break, as a reader reads it; with the
        furniture left in, a test looking for a whole paragraph depended on where the breaks fell.
        """
        info = self.description["info"]
        header = re.escape(normalise(f"{info['name']} {info['description']}"))
        footer = re.escape(normalise(f"{info['name']} {info['version']}")) + r" \d+ / \d+"
        furniture = re.compile(rf"\s*(?:{header}|{footer})\s*")
        return " ".join(" ".join(furniture.sub(" ", text).split()) for text in self.page_texts)


def normalise(text: str) -> str:
    """Text as compared: NFKC (ligatures apart), hyphens as "-", whitespace collapsed (none in brackets).

    A line that ends in a word's hyphen ("2,000-" then "token") is joined back, as the reader reads it.
    """
    text = unicodedata.normalize("NFKC", text).replace("\u2010", "-").replace("\u2011", "-")
    text = " ".join(re.sub(r"(?<=\w)-\s*\n\s*", "-", text).split())
    # get_text(" ") puts a space between a link and its full stop, or a citation's link and its brackets; the
    # PDF's text puts one inside a formula's ceiling brackets: no space inside brackets or before punctuation.
    return re.sub(r" (?=[.,;:!?)\]⌉⌋])|(?<=[(\[⌈⌊]) ", "", text)


@pytest.fixture(scope="session")
def pdf_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with mkdocs-pdf.yml (--strict), holding the combined print page and its cover."""
    destination = tmp_path_factory.mktemp("pdf-site")
    result = build_site(destination, ROOT / "mkdocs-pdf.yml")
    if result.returncode != 0:
        pytest.fail(f"mkdocs build -f mkdocs-pdf.yml --strict failed:\n{result.stdout}\n{result.stderr}")
    return destination


@pytest.fixture(scope="session")
def course_pdf(pdf_site: Path, browser: Any, tmp_path_factory: pytest.TempPathFactory) -> CoursePdf:
    """The course printed once per run (A4), with the test suite's Chromium."""
    path = tmp_path_factory.mktemp("pdf") / "course.pdf"
    try:
        print_course(pdf_site, path, paper="a4", browser=browser)
    except PdfError as error:
        pytest.fail(str(error))
    reader = PdfReader(path)
    description = json.loads((pdf_site / PRINT_DESCRIPTION).read_text(encoding="utf-8"))
    texts = [normalise(page.extract_text() or "") for page in reader.pages]
    return CoursePdf(path, reader, pdf_site, description, texts)


def built_lesson_pages(course: CoursePdf) -> dict[str, BeautifulSoup]:
    """Each lesson's built page (from the PDF's site), by lesson path."""
    lessons = load_course(str(DOCS)).lessons
    assert lessons, "no lessons found in docs/"
    return {
        lesson.path: BeautifulSoup(
            (course.site / lesson.path.removesuffix(".md") / "index.html").read_text(encoding="utf-8"),
            "html.parser",
        )
        for lesson in lessons
    }


def outline_titles(reader: PdfReader, items: list[Any] | None = None) -> list[tuple[str, int]]:
    """(title, page index) of every outline item, depth first."""
    out: list[tuple[str, int]] = []
    for item in reader.outline if items is None else items:
        if isinstance(item, list):
            out += outline_titles(reader, item)
        else:
            out.append((normalise(str(item.title)), reader.get_destination_page_number(item)))
    return out


def drawing_operations(reader: PdfReader, page: Any) -> tuple[int, int]:
    """(path-drawing operators, raster images) on a page, counting inside its form XObjects too."""
    paths = images = 0
    pending = [(page.get_contents(), page.get("/Resources"))]
    seen: set[int] = set()
    while pending:
        contents, resources = pending.pop()
        if contents is None:
            continue
        for _operands, operator in ContentStream(contents, reader).operations:
            paths += operator in DRAWING_OPERATORS
        xobjects = (resources or {}).get("/XObject") or {}
        for reference in xobjects.values():
            xobject = reference.get_object()
            if id(xobject) in seen:
                continue
            seen.add(id(xobject))
            if xobject.get("/Subtype") == "/Image":
                images += 1
            elif xobject.get("/Subtype") == "/Form":
                pending.append((xobject, xobject.get("/Resources")))
    return paths, images


# ---- the configuration ----


def test_pdf_config_inherits_the_site_and_keeps_its_hooks() -> None:
    from mkdocs.utils.yaml import yaml_load

    with (ROOT / "mkdocs.yml").open("rb") as site_file, (ROOT / "mkdocs-pdf.yml").open("rb") as pdf_file:
        site, pdf = yaml_load(site_file), yaml_load(pdf_file)
    assert "INHERIT" in (ROOT / "mkdocs-pdf.yml").read_text(encoding="utf-8")
    # A list in mkdocs-pdf.yml replaces the inherited one: hooks must repeat every hook of the site, in order.
    assert pdf["hooks"][: len(site.get("hooks", []))] == site.get("hooks", [])
    assert "course/pdf/mkdocs_hooks.py" in pdf["hooks"]
    for key in ("plugins", "extra_css", "extra_javascript", "markdown_extensions", "theme", "site_url"):
        assert pdf.get(key) == site.get(key), f"mkdocs-pdf.yml must not change {key}"


# ---- combining, without a browser ----


def _page(title: str, url: str, *, index: bool = False) -> NavPage:
    return NavPage(title, url, url + "index.html", index)


def test_chapters_follow_the_navigation_with_tracks_above_lessons() -> None:
    nav = [
        _page("Home", ""),
        NavSection(
            "Inference", (_page("Inference", "inference/", index=True), _page("Decode", "inference/decode/"))
        ),
        NavSection("Extra", (_page("Notes", "extra/notes/"),)),
    ]
    chapters = plan_chapters(nav)
    assert [(c.key, c.level, c.title) for c in chapters] == [
        ("page-home", 1, "Home"),
        ("page-inference", 1, "Inference"),
        ("page-inference-decode", 2, "Decode"),
        ("part-extra", 1, "Extra"),
        ("page-extra-notes", 2, "Notes"),
    ]
    assert chapters[3].page is None


def test_excluded_prefixes_drop_their_pages_and_emptied_sections() -> None:
    nav = [
        _page("Home", ""),
        NavSection("Inference", (_page("Decode", "inference/decode/"),)),
        NavSection("Contributing", (_page("Write a lesson", "contributing/", index=True),)),
    ]
    assert without_prefixes(nav, ["contributing/"]) == tuple(nav[:2])
    assert without_prefixes(nav, []) == tuple(nav)


def test_contributor_pages_are_left_to_the_site(course_pdf: CoursePdf) -> None:
    urls = [c["url"] for c in course_pdf.description["chapters"] if c.get("url") is not None]
    assert urls, "the description lists chapter URLs"
    assert not [url for url in urls if url.startswith("contributing/")]
    assert "Write a lesson" not in course_pdf.page_texts[1]


def _adapt(html: str, targets: dict[str, str] | None = None) -> BeautifulSoup:
    article = BeautifulSoup(f"<article>{html}</article>", "html.parser")
    chapter = Chapter("page-inference-decode", "Decode", 2, _page("Decode", "inference/decode/"))
    info = SiteInfo("Course", site_url="https://example.org/course/")
    adapt_page(article.article, chapter, targets or {"inference/prefill/": "page-inference-prefill"}, info)
    return article


def test_ids_get_the_page_prefix_and_every_reference_follows() -> None:
    article = _adapt(
        '<h2 id="why">Why</h2><a href="#why">again</a><label for="x">x</label><input id="x">'
        '<svg><clipPath id="clip1"></clipPath><g clip-path="url(#clip1)"></g><use href="#clip1"/></svg>'
    )
    assert article.find("h3")["id"] == "page-inference-decode--why"  # h2 moves down one level in a lesson
    assert "rp-h2" in article.find("h3")["class"]
    assert article.find("a")["href"] == "#page-inference-decode--why"
    assert article.find("label")["for"] == "page-inference-decode--x"
    assert article.find("g")["clip-path"] == "url(#page-inference-decode--clip1)"
    assert article.find("use")["href"] == "#page-inference-decode--clip1"


def test_the_print_page_holds_each_charts_wide_drawing(tmp_path: Path) -> None:
    """A page holds a chart's narrow drawing and fetches the wide one with a script; the print page runs
    none, so the combining step puts the site's file in, beside the narrow one (print.css picks)."""
    digest = "a" * 64
    drawings = tmp_path / "assets/ridgepoint/charts"
    drawings.mkdir(parents=True)
    (drawings / f"{digest}.svg").write_text('<svg width="640" height="300"><g id="w"></g></svg>', "utf-8")
    figure = (
        '<figure class="rp-chart" data-rp-wide="{}"><div class="rp-chart__view"><svg class="rp-chart__frame">'
        '</svg><div class="rp-chart__svg rp-chart__svg--narrow"><svg width="316"></svg></div></div></figure>'
    )
    article = BeautifulSoup(
        f"<article>{figure.format(digest)}{figure.format('b' * 64)}</article>", "html.parser"
    )
    problems = inline_wide_drawings(article.article, tmp_path, "lesson/index.html")
    first, second = article.select("figure")
    assert "rp-chart--wide" in first["class"]
    assert first.select_one(".rp-chart__svg--wide svg")["width"] == "640"
    assert first.select_one(".rp-chart__svg--narrow svg") is not None
    assert second.select_one(".rp-chart__svg--wide") is None
    assert problems == [f"lesson/index.html: a chart's wide drawing {'b' * 64}.svg is missing from the site"]


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("../prefill/", "#page-inference-prefill"),
        ("../prefill/#batching", "#page-inference-prefill--batching"),
        ("../prefill/index.html", "#page-inference-prefill"),
        ("../../downloads/notes.zip", "https://example.org/course/downloads/notes.zip"),
        ("https://arxiv.org/abs/1", "https://arxiv.org/abs/1"),
        ("mailto:a@example.org", "mailto:a@example.org"),
    ],
)
def test_links_between_pages_stay_inside_the_document(href: str, expected: str) -> None:
    assert _adapt(f'<a href="{href}">x</a>').find("a")["href"] == expected


def test_go_deeper_opens_and_components_keep_their_own_print_look() -> None:
    article = _adapt(
        '<details class="deeper"><summary>Go deeper</summary><p>more</p></details>'
        '<section class="rp-widget" id="widget-w"><details class="rp-widget__python"><summary>Code</summary>'
        "</details></section>"
    )
    deeper, widget_panel = article.find_all("details")
    assert deeper.has_attr("open")
    assert not widget_panel.has_attr("open")
    caption = article.select_one(".rp-print-live a")
    assert caption["href"] == "https://example.org/course/inference/decode/#widget-w"


# ---- the PDF itself ----


def test_cover_metadata_and_page_size(course_pdf: CoursePdf) -> None:
    info = course_pdf.description["info"]
    cover = course_pdf.page_texts[0]
    for fact in (info["name"], info["version"], info["build_date"], info["repo_url"]):
        assert fact
        assert fact in cover
    metadata = course_pdf.reader.metadata
    assert metadata is not None
    assert info["name"] in str(metadata.title)
    assert course_pdf.reader.page_labels[:2] == ["Cover", "1"]
    for page in course_pdf.reader.pages:
        size = (float(page.mediabox.width), float(page.mediabox.height))
        assert size == pytest.approx(A4_POINTS, abs=1.5)


def test_every_lesson_title_and_takeaway_is_printed(course_pdf: CoursePdf) -> None:
    for lesson in load_course(str(DOCS)).lessons:
        assert normalise(lesson.title) in course_pdf.text, lesson.path
    for path, page in built_lesson_pages(course_pdf).items():
        lesson = load_course(str(DOCS)).lesson_by_path(path)
        assert lesson is not None
        items = page.select(".admonition.takeaways li")
        assert len(items) == len(lesson.takeaways), f"{path}: takeaways box"
        for item in items:
            assert normalise(item.get_text(" ")) in course_pdf.text, f"{path}: takeaway missing from the PDF"


def test_every_quiz_answer_is_printed(course_pdf: CoursePdf) -> None:
    answers = 0
    for path, page in built_lesson_pages(course_pdf).items():
        for answer in page.select(".rp-quiz__key-list > li"):
            solution = answer.select_one(".rp-quiz__solution")
            assert solution is not None, f"{path}: an answer without its solution line"
            expected = [solution, *answer.select('[data-correct="true"]')]
            for part in expected:
                text = normalise(part.get_text(" "))
                assert text in course_pdf.text, f"{path}: quiz answer {text!r} missing from the PDF"
            answers += 1
    assert answers > 0, "no quiz answer key found in the built lessons"


def test_go_deeper_sections_are_printed_open(course_pdf: CoursePdf) -> None:
    checked = 0
    for path, page in built_lesson_pages(course_pdf).items():
        for deeper in page.select("details.deeper"):
            paragraphs = [
                p for p in deeper.find_all("p") if not p.find(["math", "svg"]) and len(p.get_text()) > 40
            ]
            assert paragraphs, f"{path}: a Go deeper section without plain text to look for"
            text = normalise(paragraphs[-1].get_text(" "))
            # pypdf reads a section's summary line where Chromium drew it in the page's content stream,
            # which can be after the page's last line of body text: read past it as past the furniture.
            label = normalise(deeper.summary.get_text(" ")) if deeper.summary else ""
            reading = " ".join(course_pdf.text.replace(label, " ").split()) if label else course_pdf.text
            assert text in reading, f"{path}: Go deeper text {text[:60]!r} missing from the PDF"
            checked += 1
    assert checked > 0, "no Go deeper section found in the built lessons"


def test_charts_are_vector_drawings_without_error_text(course_pdf: CoursePdf) -> None:
    captions = [
        normalise(caption.get_text(" "))
        for page in built_lesson_pages(course_pdf).values()
        for caption in page.select("figure.rp-chart figcaption, figure.rp-chart .rp-chart__caption")
    ]
    assert captions, "no chart found in the built lessons"
    for caption in captions:
        start = caption[:60]
        pages = [i for i, text in enumerate(course_pdf.page_texts) if start in text]
        assert pages, f"chart {start!r} is not in the PDF"
        paths, images = drawing_operations(course_pdf.reader, course_pdf.reader.pages[pages[0]])
        assert paths >= 20, f"chart {start!r}: only {paths} path operators on its page"
        assert images == 0, f"chart {start!r}: its page holds a raster image"
        assert not ERROR_MARKERS.search(course_pdf.page_texts[pages[0]])


def test_no_renderer_error_text_anywhere(course_pdf: CoursePdf) -> None:
    # The printing step already refused error text in prose; code may quote "{{ }}", never a failure.
    found = [m.group(0) for m in FAILURE_TEXT.finditer(course_pdf.text)]
    assert not found


def test_outline_lists_every_track_and_lesson_at_its_page(course_pdf: CoursePdf) -> None:
    outline = outline_titles(course_pdf.reader)
    titles = {title for title, _ in outline}
    for lesson in load_course(str(DOCS)).lessons:
        title = normalise(lesson.title)
        assert title in titles, f"outline lacks {lesson.path}"
        page = next(page for name, page in outline if name == title)
        assert title in course_pdf.page_texts[page], f"outline entry of {lesson.path} leads to the wrong page"
    for track in load_course(str(DOCS)).tracks:  # a track page is headed with its number, as lessons cite it
        assert normalise(f"Track {track.order}: {track.title}") in titles


def test_contents_list_every_page_with_the_page_it_starts_on(course_pdf: CoursePdf) -> None:
    first_page = course_pdf.page_texts[1]
    assert first_page.startswith("Contents") or " Contents " in first_page
    # The contents run on until the first chapter's page (two pages since Track 6 has lessons).
    first_title = normalise(course_pdf.description["chapters"][0]["title"])
    first = re.search(re.escape(first_title) + r" (\d+)", first_page)
    assert first, f"contents lack {first_title!r} or its page number"
    contents = " ".join(course_pdf.page_texts[1 : int(first.group(1))])
    for chapter in course_pdf.description["chapters"]:
        title = normalise(chapter["title"])
        assert title not in ("", "None"), chapter
        number = re.search(re.escape(title) + r" (\d+)", contents)
        assert number, f"contents lack {title!r} or its page number"
        # The body's page n is the PDF's page n + 1 (the cover comes first).
        assert title in course_pdf.page_texts[int(number.group(1))] or chapter["level"] == 1


def test_links_lead_inside_the_pdf_or_online(course_pdf: CoursePdf) -> None:
    reader = course_pdf.reader
    destinations = set(reader.named_destinations)
    internal = 0
    for page in reader.pages:
        for annotation in page.get("/Annots") or []:
            link = annotation.get_object()
            if "/Dest" in link:
                assert link["/Dest"] in destinations or not isinstance(link["/Dest"], str)
                internal += 1
            uri = str(link.get("/A", {}).get("/URI", ""))
            # A file of the site must have become its online address, never a path on the printing machine.
            assert not uri or uri.startswith(("https://", "http://", "mailto:")), uri
    assert internal > 0
    # Lessons link to each other: at least one link lands on another lesson's first page.
    lesson_keys = {c["key"] for c in course_pdf.description["chapters"] if c["level"] > 1}
    assert any("/" + key in destinations for key in lesson_keys)


def test_widgets_carry_the_address_of_their_live_version(course_pdf: CoursePdf) -> None:
    site_url = course_pdf.description["info"]["site_url"]
    for path, page in built_lesson_pages(course_pdf).items():
        for widget in page.select("[data-widget]"):
            address = f"{site_url}{path.removesuffix('.md')}/#{widget['id']}"
            assert address in course_pdf.text.replace(" ", ""), f"{path}: no live address for {widget['id']}"


def test_pages_are_neither_blank_nor_too_many(course_pdf: CoursePdf) -> None:
    info = course_pdf.description["info"]
    chapters = course_pdf.description["chapters"]
    pages = len(course_pdf.reader.pages)
    assert len(chapters) + 2 <= pages <= 12 * len(chapters) + 2
    furniture = re.compile(
        "|".join(re.escape(normalise(s)) for s in (info["description"], f"{info['name']} {info['version']}"))
        + r"|\b\d+ / \d+\b|"
        + re.escape(info["name"])
    )
    for number, text in enumerate(course_pdf.page_texts):
        assert furniture.sub("", text).strip(), f"page {number + 1} is blank apart from header and footer"


def test_unknown_paper_is_refused(pdf_site: Path, tmp_path: Path) -> None:
    with pytest.raises(PdfError, match="letter"):
        print_course(pdf_site, tmp_path / "x.pdf", paper="a5")


def test_each_lesson_ends_with_its_references_in_the_pdf(course_pdf: CoursePdf) -> None:
    assert "arXiv:2403.02310" in course_pdf.text  # Sarathi-Serve, cited by key in prefill-vs-decode
    assert "2403.02369" not in course_pdf.text  # the wrong identifier the lesson used to link


def test_prose_may_name_nan_but_a_figure_that_did_not_compute_is_refused(
    tmp_path: Path, browser: Any
) -> None:
    # The number-formats lesson says FP8 keeps one bit pattern for NaN: prose, not a failed figure. A computed
    # figure printing "nan", or one the build marked as failed, is what the check is for.
    chapter = (
        '<section class="rp-print-chapter" data-url="gpu/number-formats/"><h1>Formats</h1>'
        "<p>E4M3 keeps only the all-ones pattern for NaN, and none for infinities.</p>{figure}</section>"
    )
    page = '<!doctype html><html><body><div class="md-typeset rp-print">{body}</div></body></html>'
    (tmp_path / COVER_PAGE).write_text("<!doctype html><html><body><p>Cover</p></body></html>")
    (tmp_path / PRINT_DESCRIPTION).write_text(json.dumps({"info": {"name": "Ridgepoint"}, "chapters": []}))
    cases = {
        '<p>Its largest value is <span class="rp-number">448</span>.</p>': [],
        '<p>Its largest value is <span class="rp-number">nan</span>.</p>': ["gpu/number-formats/"],
        '<p>It is <span class="rp-number rp-number--error">{{ bad }}</span>.</p>': ["gpu/number-formats/"],
    }
    for figure, expected in cases.items():
        (tmp_path / PRINT_PAGE).write_text(page.format(body=chapter.format(figure=figure)))
        report = print_course(tmp_path, tmp_path / "out.pdf", browser=browser, strict=False)
        failed = [p.split(":")[0] for p in report.problems if "did not compute" in p]
        assert failed == expected, report.problems
        if not expected:
            assert report.problems == []  # the prose's NaN is not a failure
