"""The combined print page: every page of the navigation, in order, as one HTML document, and its cover.

Chromium prints one document, so the pages of the built site are joined into one: each page's article is taken
from its built HTML (so whatever the theme and the hooks added is there), its ids get the page's key as prefix
(two lessons may both have a ``#check-your-understanding``, and two charts a ``clip1``), and its links are
rewritten: a link to another page of the course becomes a link inside the document, a link to a file of the
site becomes its online address, and an outside link stays as it is. Headings move down one level per
navigation level, so that Chromium's document outline reads track > lesson > section. Collapsed blocks ("Go
deeper") are opened, and every live widget gets a caption with the address of its live version.

Everything here works on strings and paths, so it is tested without MkDocs or a browser.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Comment, Tag

PRINT_PAGE = "print-course.html"
COVER_PAGE = "print-cover.html"
PRINT_DESCRIPTION = "print-course.json"
PRINT_CSS = "assets/ridgepoint/print.css"

# A widget's build-time snapshot is printed with this caption added (its live version needs a browser).
WIDGET_SELECTOR = "[data-rp-widget], .rp-widget"
# Collapsed blocks inside these stay as built and print.css hides them: quiz answers go to the answer key, a
# widget's code editor is of no use on paper, and a chart's data table repeats the chart printed above it.
_COMPONENTS_WITH_OWN_PRINT_LOOK = ("rp-widget", "rp-quiz", "rp-chart")
# Attributes whose value is a list of ids of the same page.
_IDREF_ATTRIBUTES = (
    "for",
    "headers",
    "list",
    "form",
    "aria-labelledby",
    "aria-describedby",
    "aria-controls",
    "aria-owns",
    "aria-details",
    "aria-errormessage",
    "aria-flowto",
    "aria-activedescendant",
)
_URL_ATTRIBUTES = ("src", "poster", "data")
_FRAGMENT_REFERENCE = re.compile(r"url\(\s*(['\"]?)#([^)'\"]+)\1\s*\)")
_HEADING = re.compile(r"^h([1-6])$")
# Placeholder origin for resolving relative links; never printed.
_SITE = "https://site.invalid/"


@dataclass(frozen=True)
class NavPage:
    """A page of the navigation: its title, its URL in the site and the built file that holds it."""

    title: str
    url: str  # e.g. "" for the home page, "serving/prefill-vs-decode/"
    dest: str  # e.g. "index.html", "serving/prefill-vs-decode/index.html"
    is_index: bool = False


@dataclass(frozen=True)
class NavSection:
    """A section of the navigation (a track): its title and what it holds, in order."""

    title: str
    children: tuple[NavPage | NavSection, ...]


NavItem = NavPage | NavSection


@dataclass(frozen=True)
class Chapter:
    """One entry of the combined document: a page, or the title of a section that has no index page."""

    key: str  # the id of the chapter in the document; ids inside it get "<key>--" as prefix
    title: str
    level: int  # 1 for a track or a top-level page, 2 for a lesson in a track, ...
    page: NavPage | None  # None: a section title alone


@dataclass(frozen=True)
class SiteInfo:
    """What the cover and the captions say about the course."""

    name: str
    description: str = ""
    site_url: str = ""  # the online site, e.g. "https://ridgepoint-course.github.io/ridgepoint/"
    repo_url: str = ""
    copyright: str = ""
    version: str = ""
    build_date: str = ""  # ISO date
    commit: str = ""
    authors: str = ""


@dataclass
class Combined:
    """The combined document and what was found while making it."""

    html: str
    chapters: list[Chapter]
    stylesheets: str  # the theme's stylesheets, for the cover
    body_attributes: str  # the theme's colour scheme, for the cover
    problems: list[str] = field(default_factory=list)


def without_prefixes(nav: Sequence[NavItem], prefixes: Sequence[str]) -> tuple[NavItem, ...]:
    """``nav`` less the pages whose URL starts with one of ``prefixes``, and the sections left empty.

    The PDF is the course a teacher prints; pages for contributors (``contributing/``) are left to the site.
    """
    kept: list[NavItem] = []
    for item in nav:
        if isinstance(item, NavPage):
            if not item.url.startswith(tuple(prefixes)) or not prefixes:
                kept.append(item)
            continue
        children = without_prefixes(item.children, prefixes)
        if children:
            kept.append(NavSection(item.title, children))
    return tuple(kept)


def plan_chapters(nav: Sequence[NavItem]) -> list[Chapter]:
    """The chapters of the document, in navigation order, each with its heading level.

    A section whose first child is its index page is represented by that page (its title heads the track);
    a section without one gets a chapter holding only its title.
    """
    chapters: list[Chapter] = []
    used: set[str] = set()

    def unique(base: str) -> str:
        key, number = base, 2
        while key in used:
            key, number = f"{base}-{number}", number + 1
        used.add(key)
        return key

    def walk(items: Sequence[NavItem], level: int) -> None:
        for item in items:
            if isinstance(item, NavPage):
                chapters.append(Chapter(unique(page_key(item.url)), item.title, level, item))
                continue
            children = list(item.children)
            head = (
                children[0]
                if children and isinstance(children[0], NavPage) and children[0].is_index
                else None
            )
            if head is not None:
                chapters.append(Chapter(unique(page_key(head.url)), item.title, level, head))
                children = children[1:]
            else:
                chapters.append(Chapter(unique("part-" + _slug(item.title)), item.title, level, None))
            walk(children, level + 1)

    walk(nav, 1)
    return chapters


def page_key(url: str) -> str:
    """A chapter's id: ``serving/prefill-vs-decode/`` -> ``page-inference-prefill-vs-decode``."""
    stem = url.strip("/").removesuffix(".html").removesuffix("/index")
    return "page-" + (_slug(stem) or "home")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def combine(site_dir: Path, nav: Sequence[NavItem], info: SiteInfo) -> Combined:
    """The combined print page of the built site in ``site_dir``, whose navigation is ``nav``."""
    chapters = plan_chapters(nav)
    targets = _link_targets(chapters)
    problems: list[str] = []
    head = ""
    body_attributes = ""
    parts: list[str] = []
    for chapter in chapters:
        if chapter.page is None:
            parts.append(
                f'<section class="rp-print-chapter rp-print-part rp-print-level-{chapter.level}" '
                f'id="{chapter.key}"><h{min(chapter.level, 6)} class="rp-h1">{html.escape(chapter.title)}'
                f"</h{min(chapter.level, 6)}></section>"
            )
            continue
        built = site_dir / chapter.page.dest
        if not built.is_file():
            problems.append(f"{chapter.page.dest}: the built page is missing, so it is not in the PDF")
            continue
        soup = BeautifulSoup(built.read_text(encoding="utf-8"), "html.parser")
        if not head:
            head = _stylesheets(soup, chapter.page.url)
            body_attributes = _body_attributes(soup)
        article = soup.select_one("article.md-content__inner") or soup.select_one("main") or soup.body
        if article is None:
            problems.append(f"{chapter.page.dest}: no article found in the built page")
            continue
        problems.extend(inline_wide_drawings(article, site_dir, chapter.page.dest))
        adapt_page(article, chapter, targets, info)
        inner = article.decode_contents()
        parts.append(
            f'<section class="rp-print-chapter rp-print-level-{chapter.level}" id="{chapter.key}" '
            f'data-url="{html.escape(chapter.page.url)}">{inner}</section>'
        )
    document = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(info.name)}</title>{_with_print_css(head)}</head>"
        f'<body{body_attributes}><div class="md-typeset rp-print">'
        f"{table_of_contents(chapters)}{''.join(parts)}</div></body></html>\n"
    )
    return Combined(document, chapters, head, body_attributes, problems)


WIDE_DRAWINGS = "assets/ridgepoint/charts"  # course.charts.assets: SITE_FOLDER / SPEC_FOLDER
_WIDE_DIGEST = re.compile(r"^[0-9a-f]{64}$")


def inline_wide_drawings(article: Tag, site_dir: Path, page: str) -> list[str]:
    """Put each chart's wide drawing into its figure (in place), as charts.js does on a wide screen.

    A page holds a chart's narrow drawing only and fetches the wide one (``data-rp-wide``, the file's SHA-256)
    where it has the room; the print page runs no script, so the drawing is read here, and print.css shows the
    variant that fits the paper. Returns a problem for each drawing missing from the site.
    """
    problems: list[str] = []
    for figure in article.select("figure.rp-chart[data-rp-wide]"):
        digest = str(figure.get("data-rp-wide", ""))
        view = figure.select_one(".rp-chart__view")
        if not _WIDE_DIGEST.match(digest) or view is None:
            continue
        drawing = site_dir / WIDE_DRAWINGS / f"{digest}.svg"
        if not drawing.is_file():
            problems.append(f"{page}: a chart's wide drawing {drawing.name} is missing from the site")
            continue
        holder = BeautifulSoup(
            f'<div class="rp-chart__svg rp-chart__svg--wide">{drawing.read_text(encoding="utf-8")}</div>',
            "html.parser",
        )
        view.insert(0, holder)
        figure["class"] = " ".join([*_classes(figure), "rp-chart--wide"])
    return problems


def table_of_contents(chapters: Iterable[Chapter]) -> str:
    """The contents list; each entry links to its chapter and has an empty slot for its page number."""
    items = "".join(
        f'<li class="rp-toc-level-{chapter.level}"><a href="#{chapter.key}">'
        f'<span class="rp-toc-title">{html.escape(chapter.title)}</span>'
        f'<span class="rp-toc-page" data-target="{chapter.key}"></span></a></li>'
        for chapter in chapters
    )
    return (
        '<nav class="rp-print-toc" aria-labelledby="contents"><h1 id="contents" class="rp-h1">Contents</h1>'
        f'<ol class="rp-toc">{items}</ol></nav>'
    )


def adapt_page(article: Tag, chapter: Chapter, targets: dict[str, str], info: SiteInfo) -> None:
    """Make one page's article fit in the combined document (in place); see the module docstring."""
    assert chapter.page is not None
    for junk in article.select("a.headerlink, .md-content__button, form.md-feedback"):
        junk.decompose()
    for comment in article.find_all(string=lambda text: isinstance(text, Comment)):
        comment.extract()
    for script in article.find_all("script"):
        if "json" not in str(script.get("type", "")):
            script.decompose()
    for details in article.find_all("details"):
        if not details.find_parent(class_=_COMPONENTS_WITH_OWN_PRINT_LOOK):
            details["open"] = ""
    shift = chapter.level - 1
    for tag in article.find_all(True):
        match = _HEADING.match(tag.name)
        if match:
            level = int(match.group(1))
            tag.name = f"h{min(level + shift, 6)}"
            tag["class"] = " ".join([*_classes(tag), f"rp-h{level}"])
        if tag.name in ("img", "iframe") and tag.has_attr("loading"):
            del tag["loading"]
        _rewrite_references(tag, chapter, targets, info)
    for widget in article.select(WIDGET_SELECTOR):
        widget.append(_live_caption(widget, chapter, info))


def _classes(tag: Tag) -> list[str]:
    value: Any = tag.get("class") or []
    return value.split() if isinstance(value, str) else [str(name) for name in value]


def _rewrite_references(tag: Tag, chapter: Chapter, targets: dict[str, str], info: SiteInfo) -> None:
    assert chapter.page is not None
    prefix = chapter.key + "--"
    for name in ("id", "name") if tag.name in ("a", "map") else ("id",):
        if tag.get(name):
            tag[name] = prefix + str(tag[name])
    for name in _IDREF_ATTRIBUTES:
        value = tag.get(name)
        if value:
            tokens = value.split() if isinstance(value, str) else list(value)
            tag[name] = " ".join(prefix + token for token in tokens)
    for name, value in list(tag.attrs.items()):
        if isinstance(value, str) and "url(" in value and "#" in value:
            tag[name] = _FRAGMENT_REFERENCE.sub(
                lambda m: f"url({m.group(1)}#{prefix}{m.group(2)}{m.group(1)})", value
            )
    for name in ("href", "xlink:href"):
        value = tag.get(name)
        if isinstance(value, str):
            tag[name] = _rewrite_link(value, chapter, targets, info, is_anchor=tag.name == "a")
    for name in _URL_ATTRIBUTES:
        value = tag.get(name)
        if isinstance(value, str) and name in tag.attrs:
            tag[name] = _site_relative(value, chapter.page.url)
    if isinstance(tag.get("srcset"), str):
        tag["srcset"] = ", ".join(
            " ".join([_site_relative(part.split()[0], chapter.page.url), *part.split()[1:]])
            for part in str(tag["srcset"]).split(",")
            if part.strip()
        )


def _rewrite_link(
    value: str, chapter: Chapter, targets: dict[str, str], info: SiteInfo, *, is_anchor: bool
) -> str:
    """Where a link of ``chapter``'s page points in the combined document (or online, for site files)."""
    assert chapter.page is not None
    if value.startswith("#"):
        return f"#{chapter.key}--{value[1:]}" if len(value) > 1 else f"#{chapter.key}"
    resolved = urljoin(_SITE + chapter.page.url, value)
    if not resolved.startswith(_SITE):
        return value  # another host, mailto:, data: ...
    path, _, fragment = resolved[len(_SITE) :].partition("#")
    path = path.partition("?")[0]
    key = targets.get(path, targets.get(path.removesuffix("index.html")))
    if key is not None:
        return f"#{key}--{fragment}" if fragment else f"#{key}"
    if is_anchor and info.site_url:
        return info.site_url.rstrip("/") + "/" + resolved[len(_SITE) :]
    return resolved[len(_SITE) :]


def _site_relative(value: str, page_url: str) -> str:
    """A file reference of a page, made relative to the print page at the site's root."""
    resolved = urljoin(_SITE + page_url, value)
    return resolved[len(_SITE) :] if resolved.startswith(_SITE) else value


def _link_targets(chapters: Iterable[Chapter]) -> dict[str, str]:
    """Site paths of the printed pages (each way MkDocs may write them) to their chapter key."""
    targets: dict[str, str] = {}
    for chapter in chapters:
        if chapter.page is None:
            continue
        url, dest = chapter.page.url, chapter.page.dest
        for path in (
            url,
            dest,
            url.removesuffix("/") if url else "",
            url + "index.html" if url.endswith("/") else "",
        ):
            targets.setdefault(path, chapter.key)
    return targets


def _live_caption(widget: Tag, chapter: Chapter, info: SiteInfo) -> Tag:
    assert chapter.page is not None
    original_id = str(widget.get("id", "")).removeprefix(chapter.key + "--")
    address = info.site_url.rstrip("/") + "/" + chapter.page.url + (f"#{original_id}" if original_id else "")
    caption = BeautifulSoup(
        f'<p class="rp-print-live">Printed in its starting state. Try the live version at '
        f'<a href="{html.escape(address)}">{html.escape(address)}</a>.</p>',
        "html.parser",
    ).p
    assert caption is not None
    return caption


def _stylesheets(soup: BeautifulSoup, page_url: str) -> str:
    """The page's stylesheets (and inline styles), with their paths made relative to the site's root."""
    out: list[str] = []
    if soup.head is None:
        return ""
    for tag in soup.head.find_all(["link", "style"]):
        if tag.name == "link" and tag.get("media") == "print":
            continue  # print.css, for paper only on the site: the combined page links it for every medium
        if tag.name == "link" and "stylesheet" in (tag.get("rel") or []):
            out.append(
                f'<link rel="stylesheet" href="{html.escape(_site_relative(str(tag["href"]), page_url))}">'
            )
        elif tag.name == "style":
            out.append(str(tag))
    return "".join(out)


def _with_print_css(stylesheets: str) -> str:
    """``stylesheets`` and print.css last, for every medium (pages link it for print only)."""
    return stylesheets + f'<link rel="stylesheet" href="{PRINT_CSS}">'


def _body_attributes(soup: BeautifulSoup) -> str:
    """The theme's colour-scheme attributes of ``<body>``, which its stylesheets select on."""
    if soup.body is None:
        return ""
    return "".join(
        f' {name}="{html.escape(str(value))}"'
        for name, value in soup.body.attrs.items()
        if name == "dir" or name.startswith("data-md-color")
    )


def cover(info: SiteInfo, stylesheets: str = "", body_attributes: str = "") -> str:
    """The cover: title, what the course is, version, build date, where the sources and the live site are."""
    rows = [
        ("Version", html.escape(info.version)),
        ("Built", html.escape(info.build_date)),
        ("Source", _link(info.repo_url) + (f" (commit {html.escape(info.commit)})" if info.commit else "")),
        ("Online", _link(info.site_url)),
    ]
    details = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows if value)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(info.name)}</title>{_with_print_css(stylesheets)}</head>"
        f"<body{body_attributes}>"
        f'<div class="md-typeset rp-cover"><p class="rp-cover__kicker">The course, for reading offline</p>'
        f'<h1 class="rp-cover__title">{html.escape(info.name)}</h1>'
        f'<p class="rp-cover__subtitle">{html.escape(info.description)}</p>'
        f'<dl class="rp-cover__facts">{details}</dl>'
        f'<p class="rp-cover__licence">{html.escape(info.copyright)}</p></div></body></html>\n'
    )


def _link(address: str) -> str:
    return f'<a href="{html.escape(address)}">{html.escape(address)}</a>' if address else ""


def write(site_dir: Path, nav: Sequence[NavItem], info: SiteInfo) -> Combined:
    """Write the combined print page, its cover and their description into ``site_dir``.

    The description (``print-course.json``: the site facts and the chapters) is what the printing step and the
    tests read, so neither needs MkDocs.
    """
    combined = combine(site_dir, nav, info)
    (site_dir / PRINT_PAGE).write_text(combined.html, encoding="utf-8")
    description = {
        "info": dataclasses.asdict(info),
        "chapters": [
            {"key": c.key, "title": c.title, "level": c.level, "url": None if c.page is None else c.page.url}
            for c in combined.chapters
        ],
    }
    (site_dir / PRINT_DESCRIPTION).write_text(json.dumps(description, indent=1), encoding="utf-8")
    (site_dir / COVER_PAGE).write_text(
        cover(info, combined.stylesheets, combined.body_attributes), encoding="utf-8"
    )
    return combined
