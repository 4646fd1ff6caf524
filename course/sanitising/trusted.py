"""How our own blocks put HTML into a page: :func:`store_trusted`, the one door past the sanitiser.

Every page's HTML is sanitised by allow-list (:mod:`course.sanitising.policy`) after Markdown has run, and
only then are our blocks' HTML (widgets, charts, quizzes, numbers) put back in. A block marks its HTML
as ours by storing it with :func:`store_trusted` instead of ``md.htmlStash.store``; that is the whole
change a new block needs::

    placeholder = store_trusted(self.md, html)  # was: self.md.htmlStash.store(html)

Trusted HTML must be built by our code from validated values: any author text inside it is escaped
(:func:`html.escape`) or passed through :func:`course.sanitising.policy.sanitise_html` first. Formulas are
not trusted: the converter's MathML is sanitised with the page.

Under MkDocs the page is sanitised once more, last, on its final HTML (:func:`sanitise_final_page`, after
every extension, the notebooks' finishing and the theme have run). Our blocks are recognised there by a token
the page cannot forge: a comment holding :data:`BUILD_NONCE`, a random value made when the build's process
starts, which no lesson can know (the Markdown-stage sanitiser also strips every comment a lesson writes).
Nothing is recognised by its shape.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator

from markdown import Markdown

BUILD_NONCE = secrets.token_hex(16)
_COUNTER = [0]
_BLOCK_RE = re.compile(rf"<!--rpT{BUILD_NONCE}:(\d+)-->(.*?)<!--/rpT{BUILD_NONCE}:\1-->", re.DOTALL)
_ANY_BLOCK_MARK_RE = re.compile(rf"<!--/?rpT{BUILD_NONCE}:\d+-->")
_HOLE_RE = re.compile(rf"<!--rpU{BUILD_NONCE}-->(.*?)<!--/rpU{BUILD_NONCE}-->", re.DOTALL)
CONTENT_START = f"<!--rpC{BUILD_NONCE}-->"
CONTENT_END = f"<!--/rpC{BUILD_NONCE}-->"


class TrustedHtml(str):
    """HTML written by Ridgepoint's code; only :func:`store_trusted` makes one, so a lesson cannot."""

    __slots__ = ()


def store_trusted(md: Markdown, html: str) -> str:
    """Stash ``html`` as ours and return the placeholder to put in the Markdown (or return from a fence)."""
    return md.htmlStash.store(TrustedHtml(html))


def is_trusted(block: object) -> bool:
    """True for a stash entry that :func:`store_trusted` made."""
    return isinstance(block, TrustedHtml)


def untrusted(html: str) -> str:
    """``html`` marked, inside one of our blocks, as not ours: the sanitiser reads it with the page.

    A formula's box is ours (its class, a keyboard stop and its name) and its MathML is the converter's copy
    of the lesson's LaTeX: ``f'<div class="rp-math">{untrusted(mathml)}</div>'`` keeps the one and sanitises
    the other, at the final pass (:func:`sanitise_final_page`) or, without it, when the block is put in
    (:func:`with_holes_sanitised`).
    """
    return f"<!--rpU{BUILD_NONCE}-->{html}<!--/rpU{BUILD_NONCE}-->"


def with_holes_sanitised(html: str, sanitise: Callable[[str], str]) -> str:
    """A trusted block's HTML with each :func:`untrusted` part passed through ``sanitise``."""
    return _HOLE_RE.sub(lambda match: sanitise(match.group(1)), html)


def marked(html: str) -> str:
    """``html`` between the build's trusted-block marks, for :func:`sanitise_final_page` to recognise."""
    _COUNTER[0] += 1
    number = _COUNTER[0]
    return f"<!--rpT{BUILD_NONCE}:{number}-->{html}<!--/rpT{BUILD_NONCE}:{number}-->"


def marked_content(html: str) -> str:
    """A page's content between the build's marks, so that the final pass finds it in the theme's page."""
    return f"{CONTENT_START}{html}{CONTENT_END}"


def sanitise_final_page(page: str, sanitise: Callable[[str], str]) -> str:
    """``page`` (the theme's finished HTML) with its content sanitised by ``sanitise`` and our blocks kept.

    The content is what lies between the marks of :func:`marked_content`; a page without them (the 404 page,
    which holds no lesson text) is returned as it is. Each marked block is swapped for a token before the
    sanitiser runs and put back after it, so the sanitiser reads everything else, whatever made it.
    """
    start = page.find(CONTENT_START)
    end = page.find(CONTENT_END, start + len(CONTENT_START))
    if start < 0 or end < 0:
        return page
    content = page[start + len(CONTENT_START) : end]
    blocks: dict[str, str] = {}

    def token_for(html: str) -> str:
        token = f"rptrusted{BUILD_NONCE}b{len(blocks)}x"
        blocks[token] = html
        return token

    def hide(match: re.Match[str]) -> str:
        block = _ANY_BLOCK_MARK_RE.sub("", match.group(2))  # blocks inside blocks are ours too
        # Our parts become tokens; an untrusted part stays in the page, between them, for the sanitiser.
        pieces = _HOLE_RE.split(block)
        return "".join(
            piece if odd else token_for(piece) for odd, piece in zip(_alternate(), pieces, strict=False)
        )

    clean = sanitise(_BLOCK_RE.sub(hide, content))
    for token, html in blocks.items():
        clean = clean.replace(token, html)
    return page[:start] + clean + page[end + len(CONTENT_END) :]


def without_trusted_parts(html: str) -> str:
    """``html`` (with :func:`marked` blocks) less our blocks' own parts: what the final pass sanitises."""

    def hide(match: re.Match[str]) -> str:
        return "".join(_HOLE_RE.findall(_ANY_BLOCK_MARK_RE.sub("", match.group(2))))

    return _BLOCK_RE.sub(hide, html)


def _alternate() -> Iterator[bool]:
    """False, True, False, ...: which pieces of a split by :data:`_HOLE_RE` are the holes."""
    while True:
        yield False
        yield True
