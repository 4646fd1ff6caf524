"""What the search index leaves out of a page, set aside while Material's search plugin reads the page.

Material's indexer (``material/plugins/search``) reads each page with Python's ``html.parser`` and drops the
text of an element marked ``data-search-exclude``, but it still walks every tag inside. Most of the course's
tags are in such parts: the charts' drawings and data tables, and the worked notebooks' code cells (53,000
of 76,000 tags of the built pages' articles). Walking them cost 0.9 s of a 7 s warm build.

:func:`set_aside` takes the inside of those parts out of a page, leaving a comment, which the indexer ignores;
:func:`put_back` returns it once the page is indexed, before the theme writes the page. A part is set aside
only where taking it out cannot change what the indexer records. Its rules are these:

- while an element of tag T marked ``data-search-exclude`` is open, text is skipped, and the skipping ends at
  the first end of any T element, ``</T>`` or ``<T/>`` (the indexer compares elements by tag name alone). So
  what is set aside is the inside of the innermost T element before that end;
- a heading starts a section even where text is skipped, and ``script``, ``style`` and ``object`` are
  skipped for good: a part holding any of them stays;
- a part whose tags are not all closed in order, that holds a tag whose skipping is in force there (its end
  tag would end that skipping), a "<" that starts no tag, or a ``data-search-`` attribute with a value (the
  plugin removes those from the page it writes) stays.

The tests read random pages and the built course with Material's own parser, with and without this, and
require the same index. Builders that do not run the MkDocs hook (Zensical) read the whole page.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field

MARK_NONCE = secrets.token_hex(8)  # the page's own comments are gone by now; a mark cannot be written ahead
_MARK_RE = re.compile(rf"<!--rpS{MARK_NONCE}:(\d+)-->")

_ATTR_CHARACTER = r"(?:[^>\"']|\"[^\"]*\"|'[^']*')"  # in a tag's attributes: values may hold ">" in quotes
_ATTRS = rf"{_ATTR_CHARACTER}*"
_TAG_RE = re.compile(rf"<(?P<name>[A-Za-z][^\s/>]*)(?P<attrs>{_ATTRS})>")
_ATTR_NAME_RE = re.compile(r"([^\s=/>\"']+)(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]*))?")
# Tags as (end slash, name, self-closing slash); a comment gives three empty strings.
_TOKEN_RE = re.compile(rf"<!--.*?-->|<(/?)([A-Za-z][^\s/>]*){_ATTR_CHARACTER}*?(/?)>", re.DOTALL)
_STRAY_RE = re.compile(r"<(?!/?[A-Za-z]|!--)")  # a "<" that starts no tag or comment
_RAW_TEXT_RE = re.compile(r"<(?:script|style)(?=[\s/>])", re.IGNORECASE)
# Headings, object (skipped for good) and a data-search- attribute with a value; script and style, skipped for
# good too, already fail _closed_in_order (_RAW_TEXT_RE).
_STAYS_RE = re.compile(r"<(?:h[1-6]|object)(?=[\s/>])|data-search-\w+=\"[^\"]", re.IGNORECASE)
_EXCLUDE_MARK = "data-search-exclude"
# The tags the indexer does not nest (its ``void`` list); any other tag written "<x/>" opens and closes.
_VOID = frozenset(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param"])
_VOID |= {"source", "track", "wbr"}


@dataclass
class SetAside:
    """A page's HTML with parts taken out, and the parts, to give back with :func:`put_back`."""

    html: str
    parts: list[str] = field(default_factory=list)


def set_aside(html: str) -> SetAside:
    """``html`` with the inside of its search-excluded parts replaced by marks (see the module's rules)."""
    parts: list[str] = []
    pieces: list[str] = []
    position = 0
    for start, end in _stretches(html):
        pieces.append(html[position:start])
        pieces.append(f"<!--rpS{MARK_NONCE}:{len(parts)}-->")
        parts.append(html[start:end])
        position = end
    if not parts:
        return SetAside(html)
    pieces.append(html[position:])
    return SetAside("".join(pieces), parts)


def put_back(html: str, parts: list[str]) -> str:
    """``html`` (as :func:`set_aside` gave it, after the indexer) with its parts back in their places."""
    if not parts:
        return html
    found = 0

    def part(match: re.Match[str]) -> str:
        nonlocal found
        found += 1
        return parts[int(match.group(1))]

    restored = _MARK_RE.sub(part, html)
    if found != len(parts):  # something between the two events changed the page: it must not go out broken
        raise RuntimeError(f"{len(parts) - found} of {len(parts)} parts set aside from the search were lost")
    return restored


# Bounds on the work for one page, past which it is read whole (always safe): a lesson is untrusted, and 6,000
# nested excluded parts took 36 s before these. The course's pages have at most a few dozen parts, and their
# insides add up to less than the page.
MAX_PARTS = 1_000
MAX_SCANNED_PER_CHARACTER = 4


def _stretches(html: str) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` offsets, in order and apart, of the insides that can be set aside."""
    # Each excluded element: its tag, where it starts, where the inside that could be set aside starts, and
    # where its skipping ends: at the first end of its tag if the indexer's nesting takes it there (the inside
    # before it is closed in order), else None (it may never end).
    excluded: list[tuple[str, int, int, int | None]] = []
    budget = MAX_SCANNED_PER_CHARACTER * len(html)
    for tag in _excluded_start_tags(html):
        name = tag.group("name").lower()
        if name in _VOID or tag.group("attrs").rstrip().endswith("/"):
            continue  # never skipping (a void tag), or done at once (a tag closing itself)
        end_tag = rf"</{re.escape(name)}\s*>|<{re.escape(name)}(?=[\s/]){_ATTRS}/\s*>"  # "<g/>" ends one too
        closing = re.compile(end_tag, re.IGNORECASE).search(html, tag.end())
        ends = closing.start() if closing else len(html)
        budget -= ends - tag.end()
        if budget < 0 or len(excluded) >= MAX_PARTS:
            return  # nothing set aside: the page is read whole
        inner_tags = re.compile(rf"<{re.escape(name)}(?=[\s/>]){_ATTRS}>", re.IGNORECASE)
        opening = tag.end()
        for inner in inner_tags.finditer(html, tag.end(), ends):
            opening = inner.end()
        ended = closing is not None and _closed_in_order(html[opening:ends])
        excluded.append((name, tag.start(), opening, ends if ended else None))
    after = 0
    for name, begins, opening, skipping_ends in excluded:
        if begins < after or skipping_ends is None or skipping_ends == opening:
            continue  # inside a part set aside, an end that is unclear, or nothing inside
        skipping = {other for other, starts, _, stops in excluded if starts < opening <= (stops or len(html))}
        if _leaves_nothing_behind(html[opening:skipping_ends], skipping | {name}):
            yield opening, skipping_ends
            after = skipping_ends


def _excluded_start_tags(html: str) -> Iterator[re.Match[str]]:
    """Each start tag carrying ``data-search-exclude`` (found by the word, which few tags hold)."""
    position = html.find(_EXCLUDE_MARK)
    while position != -1:
        begins = html.rfind("<", 0, position)
        tag = _TAG_RE.match(html, begins) if begins != -1 else None
        if tag is not None and tag.end() > position and _has_exclude_attribute(tag.group("attrs")):
            yield tag
            position = html.find(_EXCLUDE_MARK, tag.end())
        else:  # the words in text, or inside an attribute's value
            position = html.find(_EXCLUDE_MARK, position + len(_EXCLUDE_MARK))


def _has_exclude_attribute(attrs: str) -> bool:
    """Whether a start tag's attributes name ``data-search-exclude`` (not a longer name, not in a value)."""
    return any(name.lower() == _EXCLUDE_MARK for name in _ATTR_NAME_RE.findall(attrs))


def _closed_in_order(inside: str) -> bool:
    """Whether the indexer reads ``inside`` back to the nesting it began it in: every tag it nests is closed,
    in order, and every "<" starts a tag or a comment (no script or style, whose text holds no tags)."""
    if _STRAY_RE.search(inside) or _RAW_TEXT_RE.search(inside):
        return False
    open_tags: list[str] = []
    for end, tag, self_closing in _TOKEN_RE.findall(inside):
        if end:
            if not open_tags or open_tags.pop() != tag:
                return False
        elif tag and not self_closing and tag.lower() not in _VOID:
            open_tags.append(tag)
    return not open_tags


def _leaves_nothing_behind(inside: str, skipping: set[str]) -> bool:
    """Whether the indexer, reading ``inside`` (closed in order) while ``skipping`` tags, records nothing
    and ends no skipping: no heading, no tag skipped for good, no tag whose skipping is in force."""
    if _STAYS_RE.search(inside):
        return False
    names = "|".join(re.escape(name) for name in sorted(skipping))
    return re.search(rf"</?(?:{names})(?=[\s/>])", inside, re.IGNORECASE) is None
