"""How our own blocks put HTML into a page: :func:`store_trusted`, the one door past the sanitiser.

Every page's HTML is sanitised by allow-list (:mod:`course.sanitising.policy`) after Markdown has run, and
only then are our blocks' HTML (widgets, charts, quizzes, numbers, math) put back in. A block marks its HTML
as ours by storing it with :func:`store_trusted` instead of ``md.htmlStash.store``; that is the whole
change a new block needs::

    placeholder = store_trusted(self.md, html)  # was: self.md.htmlStash.store(html)

Trusted HTML must be built by our code from validated values: any author text inside it is escaped
(:func:`html.escape`) or passed through :func:`course.sanitising.policy.sanitise_html` first.
"""

from __future__ import annotations

from markdown import Markdown


class TrustedHtml(str):
    """HTML written by Ridgepoint's code; only :func:`store_trusted` makes one, so a lesson cannot."""

    __slots__ = ()


def store_trusted(md: Markdown, html: str) -> str:
    """Stash ``html`` as ours and return the placeholder to put in the Markdown (or return from a fence)."""
    return md.htmlStash.store(TrustedHtml(html))


def is_trusted(block: object) -> bool:
    """True for a stash entry that :func:`store_trusted` made."""
    return isinstance(block, TrustedHtml)
