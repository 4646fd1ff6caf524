"""Math in lessons: ``$...$`` inline and ``$$...$$`` display LaTeX, turned into MathML when the site is built.

Browsers render MathML natively, so the "Go deeper" formulas need no JavaScript library and no download: the
page shows them at once, offline, and they print. latex2mathml is lenient (an unknown command becomes a plain
identifier), so :func:`find_problems` also flags unknown commands and unbalanced braces, which a reader would
otherwise see as a garbled formula.

The converter is not trusted: it copies ``\\text{...}`` through as written and turns ``\\style``, ``\\href``
and ``\\class`` into attributes. A formula's box (its class, and a display box's keyboard stop and name) is
ours, but the MathML inside it is marked :func:`~course.sanitising.trusted.untrusted`, so the page's sanitiser
(MathML's own allow-list, :data:`course.sanitising.policy.MATHML_TAGS`) reads it with the rest of the page,
and :func:`find_problems` reports what that allow-list would drop.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from html import escape
from typing import Any

from latex2mathml.converter import convert
from markdown import Extension, Markdown
from markdown.inlinepatterns import InlineProcessor
from markdown.preprocessors import Preprocessor

from course.code_regions import line_of, prose_only
from course.lesson_format.problems import Problem
from course.sanitising.policy import MATHML_TAGS, mathml_attribute_problem
from course.sanitising.trusted import store_trusted, untrusted

DISPLAY_RE = re.compile(r"(?<!\\)\$\$(?P<tex>.+?)(?<!\\)\$\$", re.DOTALL)
# Inline: no space just inside the dollars and no digit right after the closing one, so "$5 or $10" is prose.
INLINE_RE = re.compile(r"(?<![\\$\w])\$(?!\s)(?P<tex>[^$\n]+?)(?<![\s\\])\$(?![\w$])")
TEXT_COMMAND_RE = re.compile(r"\\(?:text|mathrm|operatorname)\{([^{}]*)\}")
UNKNOWN_COMMAND_RE = re.compile(r"<m[io][^>]*>(\\[a-zA-Z]+)</m[io]>")
FIX = r"use standard LaTeX, e.g. $I = \frac{2PN}{2N} = P$"
FIX_SAFE = "write the formula in plain LaTeX (no \\style, \\href, \\class or HTML), e.g. $t = \\frac{B}{W}$"
FIX_NUMBER = "put the number after the formula: $t_{decode}$ = {{ Scenario().decode().time_s | ms }}"


class MathError(ValueError):
    """LaTeX that cannot be turned into a correct formula; the message says why."""


def to_mathml(tex: str, *, display: bool) -> str:
    """MathML for ``tex``; raises :class:`MathError` for unbalanced braces or commands latex2mathml lacks."""
    depth = 0
    for index, char in enumerate(tex):
        if char in "{}" and (index == 0 or tex[index - 1] != "\\"):
            depth += 1 if char == "{" else -1
            if depth < 0:
                raise MathError(f"a closing brace has no opening one in ${tex}$")
    if depth:
        raise MathError(f"{depth} opening brace(s) are never closed in ${tex}$")
    try:
        mathml = str(convert(tex.strip(), display="block" if display else "inline"))
    except Exception as error:  # latex2mathml raises various types for malformed input
        raise MathError(f"cannot read ${tex}$ ({type(error).__name__}: {error})") from None
    unknown = UNKNOWN_COMMAND_RE.findall(mathml)
    if unknown:
        raise MathError(f"unknown LaTeX command {', '.join(sorted(set(unknown)))} in ${tex}$")
    return mathml


def mathml_problem(mathml: str) -> str | None:
    """What the MathML allow-list drops from a converted formula, or ``None`` when it keeps all of it."""
    try:
        root = etree.fromstring(mathml)
    except etree.ParseError:
        return "HTML markup, which is not allowed in formulas"
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag not in MATHML_TAGS:
            return f"the element <{tag}> is not allowed in formulas"
        for name, value in element.attrib.items():
            if tag == "math" and name == "xmlns":
                continue
            if message := mathml_attribute_problem(tag, name, value):
                return message
    return None


def find_formulas(markdown: str) -> list[tuple[int, str, bool]]:
    """Every formula in the prose of a page: ``(line, tex, display)``."""
    prose = prose_only(markdown)
    found = [(line_of(prose, m.start()), m.group("tex"), True) for m in DISPLAY_RE.finditer(prose)]
    without_display = DISPLAY_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), prose)
    found += [(line_of(prose, m.start()), m.group("tex"), False) for m in INLINE_RE.finditer(without_display)]
    return sorted(found)


def without_formulas(prose: str) -> str:
    """``prose`` with every formula blanked (same length, same line breaks), for the checks of the prose.

    A formula is LaTeX, not Markdown: the braces of ``\\sum_{i=1}`` are no attribute list ``{i=1}``, and the
    formula reaches the page as MathML, never as written. Display maths first, as :func:`find_formulas`.
    """

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    return INLINE_RE.sub(blank, DISPLAY_RE.sub(blank, prose))


def find_problems(markdown: str, path: str) -> list[Problem]:
    """Formulas that would not render correctly."""
    problems: list[Problem] = []
    for line, tex, display in find_formulas(markdown):
        if "{{" in tex:
            # A formula reaches the page as MathML, so a {{ ... }} in it is shown as written, never computed.
            problems.append(
                Problem(
                    path, "math", f"a computed number inside the formula ${tex.strip()}$", FIX_NUMBER, line
                )
            )
            continue
        try:
            mathml = to_mathml(tex, display=display)
        except MathError as error:
            problems.append(Problem(path, "math", str(error), FIX, line))
            continue
        if message := mathml_problem(mathml):
            problems.append(Problem(path, "math", f"{message}: ${tex.strip()}$", FIX_SAFE, line))
    return problems


def display_html(tex: str, tag: str) -> str:
    """A display formula in its box: a keyboard stop named by its LaTeX, as the box may scroll sideways.

    A formula wider than its column (a phone, a wide math font, zoom) scrolls inside its box, and a box that
    scrolls must be reachable by keyboard (WCAG 2.1.1; axe's scrollable-region-focusable) and, being a stop,
    must say what it is. Whether it overflows depends on the reader's fonts, so every display box is a stop,
    in the markup, not only the ones a script found overflowing after the fonts it saw had loaded. Its name
    is the LaTeX as written (its words unwrapped), the usual alternative text for a formula; the MathML
    inside reads as maths.
    """
    mathml = to_mathml(tex, display=True)
    words = " ".join(TEXT_COMMAND_RE.sub(r"\1", tex).split())  # \text{ FLOPs} reads "FLOPs"
    name = escape(f"Formula: {words}", quote=True)
    attributes = f'class="rp-math rp-math--display" tabindex="0" role="group" aria-label="{name}"'
    return f"<{tag} {attributes}>{untrusted(mathml)}</{tag}>"


def _error_html(message: str) -> str:
    element = etree.Element("span", {"class": "rp-math rp-math--error", "title": message})
    element.text = message
    return etree.tostring(element, encoding="unicode")


class DisplayMathPreprocessor(Preprocessor):
    """``$$...$$`` (possibly over several lines) becomes a stashed MathML block on its own line."""

    def run(self, lines: list[str]) -> list[str]:
        text = "\n".join(lines)
        if "$$" not in text:
            return lines
        # Matches are found in the prose only (code spans masked), so `$$` shown as code stays code.
        pieces: list[str] = []
        end = 0
        for match in DISPLAY_RE.finditer(prose_only(text)):
            pieces += [text[end : match.start()], self._stash(text, match)]
            end = match.end()
        return "".join([*pieces, text[end:]]).split("\n")

    def _stash(self, text: str, match: re.Match[str]) -> str:
        line_start = text.rfind("\n", 0, match.start()) + 1
        indent = text[line_start : match.start()]
        # A formula that starts its line stands alone in its paragraph (at its indent) and is put back as a
        # block. One written after text on its line stays in that text's paragraph, where a <div> is invalid
        # HTML (browsers close the <p> early, breaking the paragraph's spacing): there it is a <span>, which
        # the stylesheet shows as a block all the same.
        alone = indent.strip() == ""
        try:
            html = display_html(match.group("tex"), "div" if alone else "span")
        except MathError as error:
            html = _error_html(str(error))
        placeholder = store_trusted(
            self.md, html
        )  # the box is ours; the MathML in it is not (see display_html)
        return f"\n\n{indent}{placeholder}\n\n{indent}" if alone else placeholder


class InlineMathProcessor(InlineProcessor):
    """``$...$`` in running text; runs before escapes and emphasis so backslashes and ``_`` reach LaTeX."""

    def handleMatch(  # type: ignore[override]  # InlineProcessor's (m, data); the stubs give Pattern's
        self, m: re.Match[str], data: str
    ) -> tuple[str, int, int]:
        try:
            html = f'<span class="rp-math">{untrusted(to_mathml(m.group("tex"), display=False))}</span>'
        except MathError as error:
            html = _error_html(str(error))
        return store_trusted(self.md, html), m.start(0), m.end(0)  # the box ours, the MathML not


class MathExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # Display math after fences are stashed (25), before raw HTML (20); inline math before escapes (180).
        md.preprocessors.register(DisplayMathPreprocessor(md), "rp_math_display", 24)
        md.inlinePatterns.register(InlineMathProcessor(INLINE_RE.pattern, md), "rp_math_inline", 186)


def makeExtension(**kwargs: Any) -> Extension:
    return MathExtension(**kwargs)
