"""Citations in lessons: ``[@key]`` (or ``[@a; @b]``, or with a locator ``[@key, section 3.2]``) links to the
page's reference list, which ends the page.

A lesson writes ``Sarathi-Serve splits long prompts [@sarathi-serve].`` and the reader sees ``[Agrawal et al.,
2024]`` linking to the entry in the "References" section appended at the end of the page, listed in the order
first cited. The entries come from docs/references.yml (:mod:`course.references.bibliography`), so each
identifier is written once for the whole course; the PDF is built from the pages and carries the same lists.
An unknown key fails the build (and ``check``) with the closest key, and so does a bracket opening with ``[@``
that is not a citation in that form (it would reach readers as written: the pipeline lesson's
``[@gpipe, section 2.3]``, before locators were read, showed its brackets and left GPipe off the list).

The reference list is built as an element tree (no raw HTML is stored), so every title and name is escaped by
Python-Markdown's serialiser."""

from __future__ import annotations

import difflib
import re
import xml.etree.ElementTree as etree
from collections.abc import Iterator
from typing import Any

from markdown import Extension, Markdown
from markdown.inlinepatterns import InlineProcessor
from markdown.treeprocessors import Treeprocessor

from course.lesson_format.problems import Problem
from course.references.bibliography import Reference, load_bibliography

# One cited work: its key, then optionally a comma and where in it (section, page, table), as Pandoc writes.
CITED = r"@[a-z0-9][a-z0-9.-]*(?:,[ \t]*[^\[\];@\n]*[^\[\];@\s])?"
CITATION_RE = rf"\[(?P<items>{CITED}(?:\s*;\s*{CITED})*)\]"
ITEMS_SPLIT_RE = re.compile(r"\s*;\s*(?=@)")
FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
CODE_SPAN_RE = re.compile(r"(`+).+?\1")
HEADING = "References"
ANCHOR_PREFIX = "ref-"


def cited_items(items: str) -> list[tuple[str, str]]:
    """``"@a, section 2; @b"`` -> ``[("a", "section 2"), ("b", "")]``: each key of one citation, with its
    locator ("" for none)."""
    cited = []
    for item in ITEMS_SPLIT_RE.split(items.strip()):
        key, _, locator = item.removeprefix("@").partition(",")
        cited.append((key.strip(), locator.strip()))
    return cited


def _prose_lines(markdown: str) -> Iterator[tuple[int, str]]:
    """Each line (1-based) outside fenced code, with its code spans taken out: where citations are read."""
    fence: str | None = None
    for number, line in enumerate(markdown.split("\n"), start=1):
        opening = FENCE_RE.match(line)
        if opening:
            marker = opening.group(1)
            if fence is None:
                fence = marker
            elif marker.startswith(fence[0]) and len(marker) >= len(fence):
                fence = None
            continue
        if fence is None:
            yield number, CODE_SPAN_RE.sub("", line)


def find_citations(markdown: str) -> list[tuple[int, str]]:
    """Every cited key with its 1-based line, outside fenced code and code spans."""
    return [
        (number, key)
        for number, line in _prose_lines(markdown)
        for match in re.finditer(CITATION_RE, line)
        for key, _ in cited_items(match.group("items"))
    ]


def find_unread_citations(markdown: str) -> list[tuple[int, str]]:
    """Each ``[@...`` in prose that is not a citation in a form :data:`CITATION_RE` reads, and its line."""
    return [
        (number, unread.group(0))
        for number, line in _prose_lines(markdown)
        for unread in re.finditer(r"\[@[^\]\n]{0,60}\]?", re.sub(CITATION_RE, "", line))
    ]


def find_problems(markdown: str, path: str, docs_dir: str = "docs") -> list[Problem]:
    """A citation of a key that docs/references.yml does not hold, with the closest key as the fix."""
    entries, _ = load_bibliography(docs_dir)
    problems: list[Problem] = []
    for line, key in find_citations(markdown):
        if key in entries:
            continue
        close = difflib.get_close_matches(key, list(entries), n=1, cutoff=0.5)
        fix = (
            f"did you mean [@{close[0]}]?"
            if close
            else f"add an entry {key}: to docs/references.yml (authors, title, venue, year, arxiv/doi/url)"
        )
        problems.append(Problem(path, "citation", f"no reference has the key {key!r}", fix, line=line))
    for line, written in find_unread_citations(markdown):
        problems.append(
            Problem(
                path,
                "citation",
                f"{written!r} is not a citation this course reads, so readers would see it as written",
                "write [@key], [@key, section 3.2] or [@a; @b], keys in lower case",
                line=line,
            )
        )
    return problems


class CitationProcessor(InlineProcessor):
    """``[@a; @b]`` -> ``[<a href="#ref-a">Author et al., 2024</a>; ...]``, noting each key as cited."""

    def __init__(self, md: Markdown, extension: ReferencesExtension) -> None:
        super().__init__(CITATION_RE, md)
        self.extension = extension

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[etree.Element, int, int]:  # type: ignore[override]
        entries = self.extension.entries()
        span = etree.Element("span", {"class": "rp-cite"})
        span.text = "["
        last: etree.Element | None = None
        for index, (key, locator) in enumerate(cited_items(m.group("items"))):
            if index:
                if last is None:
                    span.text += "; "
                else:
                    last.tail = (last.tail or "") + "; "
            reference = entries.get(key)
            if reference is None:  # find_problems fails the build; the page still shows what was written
                missing = etree.SubElement(span, "span", {"class": "rp-cite--unknown"})
                missing.text = f"@{key}?"
                last = missing
                continue
            self.extension.cite(key)
            link = etree.SubElement(span, "a", {"href": f"#{ANCHOR_PREFIX}{key}", "title": reference.title})
            link.text = reference.label
            if locator:  # after the link, as part of what is cited: "[Huang et al., 2019, section 2.3]"
                link.tail = f", {locator}"
            last = link
        if last is None:
            span.text += "]"
        else:
            last.tail = (last.tail or "") + "]"
        return span, m.start(0), m.end(0)


class ReferenceListProcessor(Treeprocessor):
    """Appends "References" and the cited entries, in order of first citation, to the end of the page."""

    def __init__(self, md: Markdown, extension: ReferencesExtension) -> None:
        super().__init__(md)
        self.extension = extension

    def run(self, root: etree.Element) -> None:
        cited = self.extension.cited
        if not cited:
            return
        entries = self.extension.entries()
        heading = etree.SubElement(root, "h2", {"id": "references"})
        heading.text = HEADING
        listing = etree.SubElement(root, "ol", {"class": "rp-references"})
        for key in cited:
            listing.append(reference_item(entries[key]))


def reference_item(reference: Reference) -> etree.Element:
    """One entry of a reference list: authors, linked title, venue and year, identifier."""
    item = etree.Element("li", {"id": f"{ANCHOR_PREFIX}{reference.key}"})
    authors = list(reference.authors)
    names = ", ".join(authors[:-1]) + f" and {authors[-1]}" if len(authors) > 1 else authors[0]
    item.text = f"{names}. "
    title = etree.SubElement(item, "a", {"href": reference.link})
    title.text = reference.title
    title.tail = f". {reference.venue}, {reference.year}."
    if reference.identifier:
        title.tail += " "
        identifier = etree.SubElement(item, "span", {"class": "rp-references__id"})
        identifier.text = reference.identifier
    return item


class ReferencesExtension(Extension):
    def __init__(self, **kwargs: Any) -> None:
        self.config = {"docs_dir": ["docs", "Folder holding references.yml"]}
        super().__init__(**kwargs)
        self.cited: list[str] = []

    def entries(self) -> dict[str, Reference]:
        return load_bibliography(str(self.getConfig("docs_dir")))[0]

    def cite(self, key: str) -> None:
        if key not in self.cited:
            self.cited.append(key)

    def reset(self) -> None:
        self.cited = []

    def extendMarkdown(self, md: Markdown) -> None:
        md.registerExtension(self)
        # Above links (160) so that "[@key]" is not read as a reference-style link.
        md.inlinePatterns.register(CitationProcessor(md, self), "rp_citation", 175)
        # After inline patterns (20), before the table of contents (5), so the heading gets its toc entry.
        md.treeprocessors.register(ReferenceListProcessor(md, self), "rp_references", 10)


def makeExtension(**kwargs: Any) -> Extension:
    return ReferencesExtension(**kwargs)
