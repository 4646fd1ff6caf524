"""The Markdown extension that sanitises every page and then inserts our trusted blocks; and the lesson check.

How a page is made safe, whichever builder runs Markdown (MkDocs, Zensical, a test):

1. Markdown renders the lesson; our blocks stash their HTML with
   :func:`~course.sanitising.trusted.store_trusted`.
2. Before the stash is put back (``raw_html``, priority 30), :class:`HideTrustedBlocks` swaps each trusted
   entry for a token that holds a random per-page nonce, so a lesson cannot forge one.
3. After every other postprocessor, :class:`SanitisePage` runs the allow-list sanitiser over the whole page
   (the author's Markdown and raw HTML alike), then replaces each token with its trusted HTML.

:func:`find_problems` reads the same allow-list back as problems with file, line and fix, so that
``dev.py check`` and the build refuse what the sanitiser would silently drop.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import replace
from typing import Any

from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor

from course.code_regions import line_of, prose_only
from course.lesson_format.problems import Problem
from course.math.extension import without_formulas
from course.sanitising.policy import html_problems, markdown_problems, sanitise_html
from course.sanitising.trusted import is_trusted

QUIZ_FENCE_RE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*quiz[ \t]*\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_BLOCK_LEVEL_RE = re.compile(
    r"^\s*<(?:div|section|figure|table|details|p|ul|ol|pre|math|h[1-6]|aside|form)\b"
)


def find_problems(markdown: str, path: str) -> list[Problem]:
    """Every tag, attribute, URL and attribute list in the prose of a page that the allow-list refuses."""
    prose = prose_only(markdown)
    # Formulas are blanked for Markdown's syntax: `$\sum_{i=1}$` holds braces, not an attribute list.
    # A worked notebook (.py) is mostly Python: its dictionaries are read only if they look like nothing else.
    notebook = path.endswith(".py")
    found = [*html_problems(prose), *markdown_problems(without_formulas(prose), placed_lists=not notebook)]
    # Quiz text is Markdown inside a fence (its raw HTML is shown as text, but its links are links).
    for fence in QUIZ_FENCE_RE.finditer(markdown):
        found += [
            replace(p, offset=p.offset + fence.start("body")) for p in markdown_problems(fence.group("body"))
        ]
    return [Problem(path, p.what, p.message, p.fix, line_of(markdown, p.offset)) for p in found]


class _TrustedTokens:
    """The trusted blocks of the page being converted, under tokens only this conversion knows.

    The table lives for one conversion (:class:`ResetTokens` starts it afresh): the postprocessors also run
    on each heading's text when the table of contents is built, before they run on the page.
    """

    def __init__(self) -> None:
        self.nonce = secrets.token_hex(12)
        self.blocks: dict[str, str] = {}

    def reset(self) -> None:
        self.nonce = secrets.token_hex(12)
        self.blocks.clear()


class ResetTokens(Preprocessor):
    """First step of each conversion: a new nonce and an empty table."""

    def __init__(self, md: Markdown, tokens: _TrustedTokens) -> None:
        super().__init__(md)
        self.tokens = tokens

    def run(self, lines: list[str]) -> list[str]:
        self.tokens.reset()
        return lines


class HideTrustedBlocks(Postprocessor):
    """Swap trusted stash entries for tokens before the stash is put back into the page."""

    def __init__(self, md: Markdown, tokens: _TrustedTokens) -> None:
        super().__init__(md)
        self.tokens = tokens

    def run(self, text: str) -> str:
        stash = self.md.htmlStash.rawHtmlBlocks
        for index, block in enumerate(stash):
            if is_trusted(block):
                token = f"rptrusted{self.tokens.nonce}n{index}x"
                self.tokens.blocks[token] = str(block)
                stash[index] = token
        return text


class SanitisePage(Postprocessor):
    """Sanitise the whole page by allow-list, then put the trusted blocks in."""

    def __init__(self, md: Markdown, tokens: _TrustedTokens) -> None:
        super().__init__(md)
        self.tokens = tokens

    def run(self, text: str) -> str:
        clean = sanitise_html(text)
        if "rptrusted" not in clean:
            return clean
        for token, html in self.tokens.blocks.items():
            if _BLOCK_LEVEL_RE.match(html):
                clean = clean.replace(f"<p>{token}</p>", html)
            clean = clean.replace(token, html)
        return clean


class SanitisingExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        tokens = _TrustedTokens()
        md.preprocessors.register(ResetTokens(md, tokens), "rp_reset_trusted", 1000)
        md.postprocessors.register(HideTrustedBlocks(md, tokens), "rp_hide_trusted", 35)
        # After raw_html (30), footnotes (25) and amp_substitute (20): the page is final HTML here.
        md.postprocessors.register(SanitisePage(md, tokens), "rp_sanitise", 5)


def makeExtension(**kwargs: Any) -> Extension:
    return SanitisingExtension(**kwargs)
