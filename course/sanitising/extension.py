"""The Markdown extension that sanitises every page and then inserts our trusted blocks; and the lesson check.

How a page is made safe, whichever builder runs Markdown (MkDocs, Zensical, a test):

1. Markdown renders the lesson; our blocks stash their HTML with
   :func:`~course.sanitising.trusted.store_trusted`.
2. Before the stash is put back (``raw_html``, priority 30), :class:`HideTrustedBlocks` swaps each trusted
   entry for a token that holds a random per-page nonce, so a lesson cannot forge one.
3. After every other postprocessor, :class:`SanitisePage` runs the allow-list sanitiser over the whole page
   (the author's Markdown and raw HTML alike, and the formulas' MathML), then replaces each token with its
   trusted HTML.

Under MkDocs the hook sets ``final_pass``: the page is then sanitised once, last, on its final HTML
(:func:`course.sanitising.trusted.sanitise_final_page`, after the notebooks' finishing and the theme), and
this extension only marks the trusted blocks with the build's nonce
(:func:`course.sanitising.trusted.marked`) instead of sanitising here too.

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
from course.sanitising.policy import (
    MATHML_TAGS,
    HtmlProblem,
    browser_html,
    html_problems,
    markdown_problems,
    sanitise_html,
)
from course.sanitising.trusted import (
    is_trusted,
    marked,
    with_holes_sanitised,
    without_trusted_parts,
)

QUIZ_FENCE_RE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*quiz[ \t]*\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_BLOCK_LEVEL_RE = re.compile(
    r"^\s*<(?:div|section|figure|table|details|p|ul|ol|pre|math|h[1-6]|aside|form)\b"
)


# The Markdown of the site (mkdocs.yml) that decides what is HTML and what is code: the check renders a page
# with it, so that a code span or fence Markdown does not close is read as Markdown reads it.
# Not toc: the ids it makes from headings are ours, not the author's ("## Widget fixture" became
# id="widget-fixture", refused as a reserved name the author never wrote); an id an author writes ({#...}) is
# read from the page's text.
RENDERING_EXTENSIONS = (
    *("admonition", "attr_list", "md_in_html", "tables", "footnotes", "pymdownx.details"),
    *("pymdownx.superfences", "course.math.extension"),
)


def rendered_problems(markdown: str) -> list[HtmlProblem]:
    """What the allow-list refuses in the page as Markdown renders it and a browser parses it.

    The page's own text is read too (:func:`find_problems`), with line numbers; this second reading sees what
    that one cannot: Markdown's own decisions (a code span that does not cross paragraphs, a fence never
    closed) and the browser's parsing (:func:`~course.sanitising.policy.browser_html`).
    """
    md = Markdown(extensions=[*RENDERING_EXTENSIONS, SanitisingExtension(final_pass=True)])
    page = without_trusted_parts(md.convert(markdown))  # what the build's final pass reads
    # The converter's MathML (course.math checks formulas), and the classes Markdown itself writes (a lesson's
    # own are read from its text; the sanitiser drops any other).
    mine = {f"HTML <{tag}>" for tag in MATHML_TAGS} | {"class"}
    return [p for p in html_problems(browser_html(page)) if p.what not in mine]


def find_problems(markdown: str, path: str) -> list[Problem]:
    """Every tag, attribute, URL and attribute list in the prose of a page that the allow-list refuses."""
    prose = prose_only(markdown)
    # Formulas are blanked for Markdown's syntax: `$\sum_{i=1}$` holds braces, not an attribute list.
    # A worked notebook (.py) is mostly Python: its dictionaries are read only if they look like nothing else.
    notebook = path.endswith(".py")
    found = [*html_problems(prose), *markdown_problems(without_formulas(prose), placed_lists=not notebook)]
    seen = {problem.what for problem in found}
    lowered = markdown.lower()
    for problem in rendered_problems(markdown) if not notebook else []:
        if problem.what not in seen:  # hidden from the reading of the text: placed at its first mention
            seen.add(problem.what)
            name = problem.what.split()[-1].strip("<>")
            at = lowered.find(name.lower())
            found.append(replace(problem, offset=max(at, 0)))
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
    """Sanitise the whole page by allow-list, then put the trusted blocks in.

    With ``final_pass`` the page is sanitised later, on its final HTML: here each trusted block is only put in
    between the build's marks, and nothing is sanitised twice.
    """

    def __init__(self, md: Markdown, tokens: _TrustedTokens, *, final_pass: bool = False) -> None:
        super().__init__(md)
        self.tokens = tokens
        self.final_pass = final_pass

    def run(self, text: str) -> str:
        clean = text if self.final_pass else sanitise_html(text)
        if "rptrusted" not in clean:
            return clean
        for token, html in self.tokens.blocks.items():
            block = marked(html) if self.final_pass else with_holes_sanitised(html, sanitise_html)
            if _BLOCK_LEVEL_RE.match(html):
                clean = clean.replace(f"<p>{token}</p>", block)
            clean = clean.replace(token, block)
        return clean


class SanitisingExtension(Extension):
    def __init__(self, **kwargs: Any) -> None:
        self.config = {
            "final_pass": [False, "The builder sanitises each page's final HTML (the MkDocs hook does)"]
        }
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        tokens = _TrustedTokens()
        md.preprocessors.register(ResetTokens(md, tokens), "rp_reset_trusted", 1000)
        md.postprocessors.register(HideTrustedBlocks(md, tokens), "rp_hide_trusted", 35)
        # After raw_html (30), footnotes (25) and amp_substitute (20): the page is final HTML here.
        final_pass = bool(self.getConfig("final_pass"))
        md.postprocessors.register(SanitisePage(md, tokens, final_pass=final_pass), "rp_sanitise", 5)


def makeExtension(**kwargs: Any) -> Extension:
    return SanitisingExtension(**kwargs)
