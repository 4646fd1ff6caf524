"""Print the combined page and its cover with headless Chromium, then join them into the course PDF (pypdf).

Chromium has no CSS ``target-counter()``, so the table of contents gets its page numbers in two passes: the
first print tells (through the named destinations its links create) where every chapter starts, the numbers
are written into the page, and the second print is the one kept. The cover is printed on its own, without the
running header and footer, and put in front. pypdf then keeps the outline to track > lesson > section, sets
the metadata, page labels (the cover, then 1, 2, ... as the footers say) and opens the outline in viewers.

Before printing, the page is laid out for print and checked: nothing wider than the paper (a cut-off chart),
no image that failed to load, no text a renderer writes when it fails. Every request the browser makes is
watched; one that is not a local file is an error: the PDF is made offline."""

from __future__ import annotations

import contextlib
import io
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypdf import PdfReader, PdfWriter
from pypdf.constants import PageLabelStyle
from pypdf.generic import Fit

from course.browser_flags import CHROMIUM, launch_options
from course.pdf.combine import COVER_PAGE, PRINT_DESCRIPTION, PRINT_PAGE

PAPERS = {"a4": ("A4", 210.0), "letter": ("Letter", 215.9)}  # Playwright format, width in mm
MARGIN_MM = {"top": 17.0, "bottom": 15.0, "left": 16.0, "right": 16.0}
OUTLINE_DEPTH = 3  # track > lesson > section
# Text that a renderer prints when it fails (Vega, Python, our own extensions): never in the PDF at all.
FAILURE_TEXT = re.compile(
    r"Traceback \(most recent call last\)|\[object Object\]|Javascript Error|Failed to load"
    r"|This (?:quiz|chart|widget) has problems"
)
# Signs of a failure in prose (outside code, where a page about writing lessons may show "{{ EXPRESSION }}"):
# an expression left unrendered, an error message.
ERROR_MARKERS = re.compile(FAILURE_TEXT.pattern + r"|\bError:|\{\{|\}\}")
# Signs of a number that did not compute, looked for only where the build writes numbers (computed figures and
# charts' drawings): prose may name them, as the number-formats lesson names FP8's NaN.
FIGURE_ERROR_MARKERS = re.compile(r"\bNaN\b|\bnan\b|\binf\b|Infinity|\bundefined\b|\[object Object\]")
_MM_TO_PX = 96 / 25.4
OutlineEntry = tuple[int, str, int, Any, Any]  # depth, title, page index, left, top


class PdfError(Exception):
    """The PDF could not be made, or would be wrong; the message lists every reason."""


@dataclass
class Report:
    """What was made: where, how big, how many pages, how long it took, and any problem found."""

    path: Path
    pages: int
    size_bytes: int
    seconds: float
    problems: list[str] = field(default_factory=list)


def print_course(
    site_dir: Path,
    output: Path,
    *,
    paper: str = "a4",
    browser: Any = None,
    tagged: bool = True,
    strict: bool = True,
) -> Report:
    """Print the combined page in ``site_dir`` (built with ``mkdocs-pdf.yml``) to the PDF ``output``.

    ``browser`` is a running Playwright Chromium to reuse (the test suite has one); without it, Debian's
    Chromium is started here with the offline flags of :mod:`course.browser_flags`.
    Raises :class:`PdfError` on any layout problem, error text or request off the machine; with
    ``strict=False`` the PDF is written anyway (to look at the problem) and the report lists them.
    """
    started = time.perf_counter()
    if paper not in PAPERS:
        raise PdfError(f"paper {paper!r} is not known; use one of: {', '.join(PAPERS)}")
    description = json.loads((site_dir / PRINT_DESCRIPTION).read_text(encoding="utf-8"))
    info = description["info"]
    with _browser(browser) as chromium:
        context = chromium.new_context(viewport={"width": _printable_width_px(paper), "height": 1000})
        try:
            offsite: list[str] = []
            context.on("request", lambda request: _note_offsite(request.url, offsite))
            page = context.new_page()
            body, headings, problems = _print_body(page, site_dir, paper, info, tagged=tagged)
            cover = _print_cover(page, site_dir, paper)
        finally:
            context.close()
    problems += [f"the browser asked for a file off this machine: {url}" for url in offsite]
    if problems and strict:
        raise PdfError("the PDF would be wrong:\n" + "\n".join(f"  - {p}" for p in problems))
    pdf = assemble(cover, body, info, headings)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(pdf)
    pages = len(PdfReader(io.BytesIO(pdf)).pages)
    return Report(output, pages, len(pdf), time.perf_counter() - started, problems)


@contextlib.contextmanager
def _browser(browser: Any) -> Iterator[Any]:
    if browser is not None:
        yield browser
        return
    if not Path(CHROMIUM).exists():
        raise PdfError(
            f"Chromium not found at {CHROMIUM}: install Debian's chromium package (apt-get install chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(**launch_options(playwright.chromium))
        try:
            yield chromium
        finally:
            chromium.close()


def _note_offsite(url: str, offsite: list[str]) -> None:
    if not url.startswith(("file:", "data:", "blob:", "about:")):
        offsite.append(url)


def _printable_width_px(paper: str) -> int:
    return int((PAPERS[paper][1] - MARGIN_MM["left"] - MARGIN_MM["right"]) * _MM_TO_PX)


def _pdf_options(paper: str, info: dict[str, str]) -> dict[str, Any]:
    name = _escape(info.get("name", ""))
    version = _escape(info.get("version", ""))
    style = (
        "font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; font-size: 7.5pt; color: #5f6368;"
        f" width: 100%; margin: 0 {MARGIN_MM['left']}mm; display: flex; justify-content: space-between;"
    )
    return {
        "format": PAPERS[paper][0],
        "margin": {side: f"{mm}mm" for side, mm in MARGIN_MM.items()},
        "print_background": True,
        "display_header_footer": True,
        "header_template": f'<div style="{style}"><span>{name}</span>'
        f"<span>{_escape(info.get('description', ''))}</span></div>",
        "footer_template": f'<div style="{style}"><span>{name} {version}</span>'
        '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>',
    }


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _print_body(
    page: Any, site_dir: Path, paper: str, info: dict[str, str], *, tagged: bool
) -> tuple[bytes, list[str], list[str]]:
    page.goto((site_dir / PRINT_PAGE).as_uri(), wait_until="load")
    page.evaluate("document.fonts.ready.then(() => true)")
    page.emulate_media(media="print")
    problems = list(page.evaluate(_LAYOUT_CHECK))
    text = page.evaluate(_PROSE_TEXT)
    problems += [f"error text in the page: …{_around(text, m)}…" for m in ERROR_MARKERS.finditer(text)]
    problems += [
        f"{where}: a figure that did not compute: {figure!r}"
        for where, figure, failed in page.evaluate(_FIGURE_TEXTS)
        if failed or FIGURE_ERROR_MARKERS.search(figure)
    ]
    options = {**_pdf_options(paper, info), "outline": True, "tagged": tagged}
    numbers: dict[str, int] = {}
    body = b""
    for _ in range(3):  # the numbers settle after one pass: the contents take the same room with them
        body = page.pdf(**options)
        found = chapter_pages(PdfReader(io.BytesIO(body)))
        if found == numbers:
            break
        numbers = found
        page.evaluate(_FILL_CONTENTS, numbers)
    return body, list(page.evaluate(_HEADINGS)), problems


def _around(text: str, match: re.Match[str]) -> str:
    return " ".join(text[max(0, match.start() - 40) : match.end() + 40].split())


def chapter_pages(reader: PdfReader) -> dict[str, int]:
    """The page (1 = first page of the body) where each chapter starts, from the PDF's named destinations."""
    return {
        name.lstrip("/"): (reader.get_destination_page_number(destination) or 0) + 1
        for name, destination in reader.named_destinations.items()
        if name.lstrip("/").startswith(("page-", "part-"))
    }


def _print_cover(page: Any, site_dir: Path, paper: str) -> bytes:
    page.goto((site_dir / COVER_PAGE).as_uri(), wait_until="load")
    page.evaluate("document.fonts.ready.then(() => true)")
    cover: bytes = page.pdf(
        format=PAPERS[paper][0], print_background=True, margin=dict.fromkeys(MARGIN_MM, "0")
    )
    pages = len(PdfReader(io.BytesIO(cover)).pages)
    if pages != 1:
        raise PdfError(f"the cover takes {pages} pages; it must fit on one (see print.css, .rp-cover)")
    return cover


def assemble(cover: bytes, body: bytes, info: dict[str, str], headings: list[str] | None = None) -> bytes:
    """The course PDF: the cover, then the body; outline cut to ``OUTLINE_DEPTH``, metadata, page labels."""
    body_reader = PdfReader(io.BytesIO(body))
    writer = PdfWriter(clone_from=body_reader)
    writer.insert_page(PdfReader(io.BytesIO(cover)).pages[0], 0)
    entries = _with_heading_text(list(_outline_entries(body_reader, body_reader.outline, 1)), headings or [])
    if "/Outlines" in writer.root_object:
        del writer.root_object["/Outlines"]
    parents: dict[int, Any] = {}
    for depth, title, page_number, left, top in entries:
        if depth > OUTLINE_DEPTH:
            continue
        parents[depth] = writer.add_outline_item(
            title=title,
            page_number=page_number + 1,
            parent=parents.get(depth - 1),
            fit=Fit.xyz(left, top),
            is_open=depth < 2,
        )
    writer.add_metadata(
        {
            "/Title": f"{info.get('name', '')}: {info.get('description', '')}".strip(": "),
            "/Author": info.get("authors", ""),
            "/Subject": info.get("description", ""),
            "/Keywords": f"version {info.get('version', '')}, built {info.get('build_date', '')}",
            "/Creator": "Ridgepoint course.pdf (MkDocs, Chromium, pypdf)",
        }
    )
    writer.set_page_label(0, 0, prefix="Cover")
    if len(writer.pages) > 1:
        writer.set_page_label(1, len(writer.pages) - 1, style=PageLabelStyle.DECIMAL, start=1)
    writer.page_mode = "/UseOutlines"
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _with_heading_text(entries: list[OutlineEntry], headings: list[str]) -> list[OutlineEntry]:
    """Outline entries titled with their heading's text as written.

    Chromium titles an entry with the heading's laid-out lines run together, so a heading that wraps loses the
    space at the break ("run on" becomes "runon"). Entries and headings are in the same order; an entry takes
    the next heading whose text matches it once spaces are ignored.
    """
    out, position = [], 0
    for depth, title, page_number, left, top in entries:
        squashed = "".join(title.split())
        for index in range(position, len(headings)):
            if "".join(headings[index].split()) == squashed:
                title, position = headings[index], index + 1
                break
        out.append((depth, title, page_number, left, top))
    return out


def _outline_entries(reader: PdfReader, items: list[Any], depth: int) -> Iterator[OutlineEntry]:
    """(depth, title, page index, left, top) of every outline item, in order, from a nested pypdf outline."""
    for item in items:
        if isinstance(item, list):
            yield from _outline_entries(reader, item, depth + 1)
            continue
        page_number = reader.get_destination_page_number(item)
        if page_number is not None and page_number >= 0:
            yield depth, str(item.title), page_number, item.get("/Left"), item.get("/Top")


# Laid out for print at the printable width: anything reaching past the page's right edge would be cut off,
# and so would an SVG drawn smaller than its width without a viewBox to scale by.
_LAYOUT_CHECK = """
() => {
  const root = document.querySelector('.rp-print');
  const limit = root.getBoundingClientRect().right + 4;  // a few px run into the margin, unclipped
  const where = (el) => {
    const chapter = el.closest('.rp-print-chapter');
    return chapter ? chapter.dataset.url || chapter.id : 'contents';
  };
  const problems = [];
  const note = (el, what) => problems.push(`${where(el)}: ${what}`);
  const media = 'svg, img, table, pre, figure, canvas, iframe, video, math';
  for (const el of root.querySelectorAll(media)) {
    const name = el.tagName.toLowerCase();
    if (name !== 'svg' && el.closest('svg')) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || getComputedStyle(el).display === 'none') continue;
    const over = Math.round(box.right - limit);
    if (over > 0) note(el, `a ${name} reaches ${over} px past the page edge`);
    if (name === 'img' && (!el.complete || el.naturalWidth === 0)) {
      note(el, `an image did not load (${el.getAttribute('src')})`);
    }
    if (name === 'canvas') note(el, 'a canvas would print as a bitmap; print the static SVG');
    const drawn = parseFloat(el.getAttribute('width'));
    if (name === 'svg' && !el.getAttribute('viewBox') && drawn > box.width + 4) {
      note(el, `an SVG ${drawn} px wide, no viewBox, shown ${Math.round(box.width)} px wide: cut off`);
    }
  }
  for (const el of root.querySelectorAll('*')) {
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.overflowX === 'visible' || el.closest('svg')) continue;
    const hidden = el.scrollWidth - el.clientWidth;
    const name = `${el.tagName.toLowerCase()}.${el.className}`;
    if (hidden > 2) note(el, `a ${name} cuts off ${hidden} px of its content`);
  }
  return problems;
}
"""

# The text laid out on the page outside code.
_PROSE_TEXT = """
() => {
  const walker = document.createTreeWalker(document.querySelector('.rp-print'), NodeFilter.SHOW_TEXT);
  const parts = [];
  while (walker.nextNode()) {
    const parent = walker.currentNode.parentElement;
    if (!parent || parent.closest('code, pre, kbd, samp') || !parent.getClientRects().length) continue;
    parts.push(walker.currentNode.data);
  }
  return parts.join(' ');
}
"""

# Where the build wrote a number (a computed figure, a chart's drawing), laid out: (chapter, its text, whether
# the build marked it as failed).
_FIGURE_TEXTS = """
() => [...document.querySelectorAll('.rp-print .rp-number, .rp-print figure.rp-chart svg')]
  .filter((el) => el.getClientRects().length > 0)
  .map((el) => {
    const chapter = el.closest('.rp-print-chapter');
    const where = chapter ? chapter.dataset.url || chapter.id : 'contents';
    return [where, el.textContent.replace(/\\s+/g, ' ').trim(), el.matches('.rp-number--error')];
  })
"""

# The text of every heading that is laid out, in document order, as the outline lists them.
_HEADINGS = """
() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
  .filter((heading) => heading.getClientRects().length > 0)
  .map((heading) => heading.innerText.replace(/\\s+/g, ' ').trim())
"""

_FILL_CONTENTS = """
(numbers) => {
  for (const slot of document.querySelectorAll('.rp-toc-page')) {
    slot.textContent = numbers[slot.dataset.target] ?? '';
  }
}
"""
