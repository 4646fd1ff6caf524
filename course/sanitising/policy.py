"""What author-written HTML may contain: an allow-list of tags, attributes and URL schemes, applied with nh3.

A deny-list of dangerous things (``<script>``, ``on*=``, ``javascript:``) was bypassed at least eleven ways
(upper case, entities, SVG animation, ``srcdoc``, ``data:`` frames...). An allow-list is bypassed only by
something we chose to allow, so this module names what a lesson may write and drops everything else:

- tags for prose, tables, figures and disclosure (no SVG, frames, objects, forms, media, ``<base>``,
  ``<meta>``, ``<style>``, ``<link>``), and the MathML that formulas become (:data:`MATHML_TAGS`, with
  MathML's own attributes only: formulas are sanitised with the page, never trusted);
- attributes for structure and accessibility (no event handlers, no ``style`` except a table cell's
  ``text-align``, and no ``data-*``: our blocks' configuration is written by our code only);
- links to ``http``, ``https`` and ``mailto`` or within the site; images from the site only (a relative
  address: nothing a lesson shows loads from another host).

The sanitiser, :func:`sanitise_html`, is the net under every page (:mod:`course.sanitising.extension`);
:func:`html_problems` reads a lesson's HTML against the same lists: ``dev.py check`` names what it drops.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser

import nh3
from markdown.extensions.attr_list import get_attrs_and_remainder, sanitize_name

from course.sanitising.attribute_values import (
    RESERVED_PREFIXES,
    class_problem,
    kept_classes,
    lesson_classes_fix,
    reserved_name,
)

TAGS: frozenset[str] = frozenset(
    {
        *("a", "abbr", "b", "blockquote", "br", "cite", "code", "dd", "del", "details", "dfn", "div"),
        *("dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img"),
        *("ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong"),
        *("sub", "summary", "sup", "u", "ul", "var", "wbr", "time", "section", "aside", "article"),
        *("table", "caption", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "th", "td"),
    }
)
"""Tags a lesson may write (and Markdown may produce from it)."""

DROPPED_WITH_CONTENT: frozenset[str] = frozenset({"script", "style", "template", "noscript", "title", "xmp"})
"""Tags removed together with what they hold: their text is code or markup, not prose."""

GLOBAL_ATTRIBUTES: frozenset[str] = frozenset({"id", "class", "title", "lang", "dir"})
ATTRIBUTES: dict[str, frozenset[str]] = {
    "*": GLOBAL_ATTRIBUTES,
    "a": frozenset({"href", "name"}),
    "img": frozenset({"src", "alt", "width", "height", "loading"}),
    "td": frozenset({"colspan", "rowspan", "align", "style"}),
    "th": frozenset({"colspan", "rowspan", "align", "scope", "style"}),
    "ol": frozenset({"start", "reversed", "type"}),
    "details": frozenset({"open"}),
    "col": frozenset({"span"}),
    "colgroup": frozenset({"span"}),
    "time": frozenset({"datetime"}),
}
"""Attributes per tag (``*``: on any allowed tag)."""
ANY_TAG_ATTRIBUTES: frozenset[str] = frozenset().union(*ATTRIBUTES.values())  # for {: attribute lists }

# ------------------------------------------------------------------------------------------------ MathML
# Formulas reach the page as MathML (course.math), converted from the lesson's LaTeX, and are sanitised with
# the page like everything else: a converter copies ``\text{...}`` through, and turns ``\style``, ``\href``
# and ``\class`` into attributes. So MathML has its own allow-list: presentation elements, and per element
# only the layout attributes that MathML defines, each checked by value; no href, no style, no class or id
# (a formula cannot restyle the page or dress up as the site), and nothing that embeds other markup
# (``annotation-xml``, ``semantics``, ``maction``, ``mglyph``).
MATHML_TAGS: frozenset[str] = frozenset(
    {
        *("math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup", "mfrac"),
        *("msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded"),
        *("mphantom", "menclose", "merror", "mmultiscripts", "mprescripts", "none"),
    }
)
_LENGTH = r"-?\d{1,2}(?:\.\d+)?(?:em|ex|mu)?|(?:negative)?(?:very){0,2}(?:thin|medium|thick)mathspace|0"
_MATHML_VALUES: dict[str, str] = {
    "display": r"block|inline",
    "mathvariant": r"normal|bold|italic|bold-italic|double-struck|bold-fraktur|script|bold-script|fraktur"
    r"|sans-serif|bold-sans-serif|sans-serif-italic|sans-serif-bold-italic|monospace",
    **dict.fromkeys(
        ("stretchy", "fence", "separator", "accent", "accentunder", "largeop", "movablelimits", "symmetric"),
        r"true|false",
    ),
    **dict.fromkeys(("displaystyle",), r"true|false"),
    "form": r"prefix|infix|postfix",
    "scriptlevel": r"[+-]?[0-3]",
    **dict.fromkeys(
        ("width", "height", "depth", "lspace", "rspace", "voffset", "minsize", "maxsize"), _LENGTH
    ),
    "linethickness": _LENGTH + r"|thin|medium|thick",
    **dict.fromkeys(("columnalign", "rowalign"), r"(?:left|center|right|top|bottom|baseline|axis)(?: \w+)*"),
    **dict.fromkeys(("columnspacing", "rowspacing"), r"(?:" + _LENGTH + r")(?: (?:" + _LENGTH + r"))*"),
    **dict.fromkeys(
        ("columnlines", "rowlines", "frame"), r"(?:none|solid|dashed)(?: (?:none|solid|dashed))*"
    ),
    **dict.fromkeys(("columnspan", "rowspan"), r"[1-9]\d?"),
    "notation": r"(?:longdiv|actuarial|radical|box|roundedbox|circle|left|right|top|bottom|updiagonalstrike"
    r"|downdiagonalstrike|verticalstrike|horizontalstrike)(?: \w+)*",
}
MATHML_ATTRIBUTES: dict[str, frozenset[str]] = {
    "math": frozenset({"display"}),
    **{tag: frozenset({"mathvariant"}) for tag in ("mi", "mn", "ms", "mtext")},
    "mo": frozenset(
        {"mathvariant", "stretchy", "fence", "separator", "accent", "largeop", "movablelimits", "symmetric"}
        | {"form", "lspace", "rspace", "minsize", "maxsize"}
    ),
    "mspace": frozenset({"width", "height", "depth"}),
    "mpadded": frozenset({"width", "height", "depth", "lspace", "voffset"}),
    "mfrac": frozenset({"linethickness"}),
    "mover": frozenset({"accent"}),
    "munder": frozenset({"accentunder"}),
    "munderover": frozenset({"accent", "accentunder"}),
    "mstyle": frozenset({"displaystyle", "scriptlevel"}),
    "mtable": frozenset({"columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines"})
    | {"frame"},
    "mtr": frozenset({"columnalign", "rowalign"}),
    "mtd": frozenset({"columnalign", "rowalign", "columnspan", "rowspan"}),
    "menclose": frozenset({"notation"}),
}
"""MathML's own attributes per element (nothing global: no class, id, style or href on MathML)."""
_MATHML_VALUE_RES = {name: re.compile(rf"^(?:{pattern})$") for name, pattern in _MATHML_VALUES.items()}


def mathml_attribute_problem(tag: str, attribute: str, value: str) -> str | None:
    """Why ``attribute="value"`` on the MathML element ``tag`` is dropped, or ``None`` when it is kept."""
    if attribute not in MATHML_ATTRIBUTES.get(tag, frozenset()):
        return (
            f"the attribute {attribute} (from \\style, \\href, \\class or similar) is not allowed in formulas"
        )
    if not _MATHML_VALUE_RES[attribute].match(value.strip()):
        return f"{attribute}={value[:40]!r} is not allowed in formulas"
    return None


STYLE_PROPERTIES: frozenset[str] = frozenset({"text-align"})  # Markdown tables align cells with style
URL_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})
LOADING_ATTRIBUTES: frozenset[str] = frozenset({"src"})  # the allowed attributes that make the browser fetch
LINK_ATTRIBUTES: frozenset[str] = frozenset({"href"})
RESERVED_ID_PREFIXES = (
    RESERVED_PREFIXES  # Material's own (#__config, __md_scope) and our blocks' ids and names
)

_SCHEME_RE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
_INVISIBLE_RE = re.compile(r"[\x00-\x20\x7f]+")  # browsers ignore these inside a URL's scheme


def normalised_url(value: str) -> str:
    """``value`` as a browser reads it: entities decoded, whitespace and control characters removed."""
    return _INVISIBLE_RE.sub("", html.unescape(value))


def url_scheme(value: str) -> str | None:
    """The lower-case scheme of a URL (``javascript``), or ``None`` for an address within the site."""
    match = _SCHEME_RE.match(normalised_url(value))
    return match.group(1).lower() if match else None


def leaves_the_site(value: str) -> bool:
    """True when a URL names a host: a scheme, ``//host``, or the ``\\\\host`` spellings browsers accept."""
    url = normalised_url(value)
    return url_scheme(url) is not None or url[:2].replace("\\", "/") == "//"


def url_problem(attribute: str, value: str) -> str | None:
    """Why a URL in ``attribute`` is refused, or ``None`` when it is allowed."""
    scheme = url_scheme(value)
    if attribute in LOADING_ATTRIBUTES and leaves_the_site(value):
        return "loads from another host or through a scheme; images come from the site itself"
    if scheme is not None and scheme not in URL_SCHEMES:
        return f"uses the {scheme}: scheme; links may use {', '.join(sorted(URL_SCHEMES))} or a site path"
    return None


def attribute_problem(tag: str, attribute: str, value: str) -> str | None:
    """Why ``attribute="value"`` on ``tag`` is refused, or ``None`` when the allow-list keeps it.

    ``tag`` is ``*`` for a Markdown attribute list, whose element is not known here.
    """
    name = attribute.lower()
    if name.startswith("on"):
        return "is an inline event handler: nothing in a lesson runs script"
    if name.startswith("data-"):
        return "is block configuration, which only our blocks write (use a ```widget or ```chart block)"
    allowed = ANY_TAG_ATTRIBUTES if tag == "*" else ATTRIBUTES["*"] | ATTRIBUTES.get(tag, frozenset())
    if name not in allowed:
        return "is not an attribute lessons may use"
    if reserved_name(name, value):
        prefixes = ", ".join(RESERVED_ID_PREFIXES)
        return f"is reserved for the site's own elements (ids and names starting {prefixes})"
    if name == "class":
        return class_problem(value)
    if name in LOADING_ATTRIBUTES | LINK_ATTRIBUTES:
        return url_problem(name, value)
    return None


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    """nh3's per-attribute filter: the checks its tag and scheme lists cannot express."""
    if tag in MATHML_TAGS:
        return None if mathml_attribute_problem(tag, attribute, value) else value.strip()
    if reserved_name(attribute, value):
        return None
    if attribute in LOADING_ATTRIBUTES and leaves_the_site(value):
        return None
    return value


_ATTRIBUTES_WITH_MATHML = {
    **{tag: set(names) for tag, names in ATTRIBUTES.items()},
    **{tag: set(names) for tag, names in MATHML_ATTRIBUTES.items()},
}


def _keep_lesson_attribute(tag: str, attribute: str, value: str) -> str | None:
    """The filter of a lesson's page: also its classes by allow-list (a notebook's output keeps its own)."""
    if attribute == "class" and tag not in MATHML_TAGS:  # MathML has no class (see _keep_attribute)
        return kept_classes(value)
    return _keep_attribute(tag, attribute, value)


def sanitise_html(fragment: str) -> str:
    """``fragment`` with only allowed tags, attributes and URLs left; text is kept, dropped markup is not."""
    return nh3.clean(
        fragment,
        tags=set(TAGS | MATHML_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes=_ATTRIBUTES_WITH_MATHML,
        attribute_filter=_keep_lesson_attribute,
        strip_comments=True,
        link_rel=None,
        url_schemes=set(URL_SCHEMES),
        filter_style_properties=set(STYLE_PROPERTIES),
    )


def plain_text(value: object) -> str:
    """An author's string for a place that shows text only (a title, a description), escaped."""
    return html.escape(str(value), quote=True)


# --------------------------------------------------------------------------------- problems, for the check
@dataclass(frozen=True)
class HtmlProblem:
    """One piece of a lesson's HTML that the sanitiser would drop, with its offset in the text read."""

    offset: int
    what: str
    message: str
    fix: str


_TAG_NAME_RE = re.compile(r"^[a-z][a-z0-9-]*$")
FIX_SCRIPT = (
    "remove the <script>; interactive parts are blocks (```widget, ```chart, ```quiz) whose code is reviewed"
)
FIX_TAG = "write it in Markdown, or use an allowed tag ({tags})"
FIX_HANDLER = "remove the {name} attribute; behaviour belongs in overrides/assets/ridgepoint/, not in lessons"
FIX_ATTRIBUTE = "remove the {name} attribute (allowed: {names})"
FIX_URL = "link to a page or an https:// address instead, e.g. [the roofline](../foundations/memory-wall.md)"
FIX_IMAGE = "put the image beside the lesson and write ![what it shows](roofline.png)"


def _problem(offset: int, name: str, value: str, message: str) -> HtmlProblem:
    """The problem record for a refused attribute ``name`` (its field and fix depend on what was wrong)."""
    scheme = url_scheme(value) if name in LOADING_ATTRIBUTES | LINK_ATTRIBUTES else None
    if name in LOADING_ATTRIBUTES and "another host" in message:
        return HtmlProblem(offset, f"image address {value[:40]!r}", message, FIX_IMAGE)
    if scheme is not None:
        return HtmlProblem(offset, f"{scheme}: URL", message, FIX_URL)
    if name.lower() == "class" and "class" in message:
        return HtmlProblem(offset, "class", message, lesson_classes_fix())
    fix = FIX_HANDLER if name.lower().startswith("on") else FIX_ATTRIBUTE
    return HtmlProblem(
        offset,
        f"HTML attribute {name}",
        message,
        fix.format(name=name, names=", ".join(sorted(ANY_TAG_ATTRIBUTES))),
    )


class _HtmlReader(HTMLParser):
    """Reads the tags of a lesson's prose (entities in attribute values are decoded, as browsers do)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[HtmlProblem] = []
        self.line_offsets: list[int] = [0]

    def position(self) -> int:
        line, column = self.getpos()
        return self.line_offsets[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not _TAG_NAME_RE.match(tag):
            return  # an autolink such as <https://example.com> or <me@example.com>, not a tag
        at = self.position()
        if tag not in TAGS:
            fix = FIX_SCRIPT if tag == "script" else FIX_TAG.format(tags=", ".join(sorted(TAGS)))
            self.found.append(HtmlProblem(at, f"HTML <{tag}>", "is not a tag lessons may use", fix))
            return
        for name, value in attrs:
            message = attribute_problem(tag, name, value or "")
            if message:
                self.found.append(_problem(at, name, value or "", message))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)


_EVERY_TAG: frozenset[str] = frozenset(
    TAGS
    | MATHML_TAGS
    | DROPPED_WITH_CONTENT
    | {
        *("iframe", "object", "embed", "form", "input", "button", "textarea", "select", "option", "meta"),
        *("link", "base", "svg", "math", "video", "audio", "source", "track", "frame", "frameset", "applet"),
        *("marquee", "animate", "set", "animateMotion", "animateTransform", "foreignObject", "image", "use"),
        *("feImage", "filter", "body", "html", "head", "isindex", "keygen", "dialog", "portal", "plaintext"),
        *("listing", "noembed", "noframes", "param", "picture", "canvas", "map", "area", "label", "fieldset"),
        *("legend", "output", "datalist", "optgroup", "annotation-xml", "semantics", "annotation"),
        *("maction", "mglyph", "malignmark", "slot", "menu", "object", "a", "script", "style"),
    }
)
_EVERY_ATTRIBUTE_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:")
_EVERY_SCHEME = frozenset(
    {*URL_SCHEMES, "javascript", "vbscript", "data", "file", "ftp", "blob", "filesystem"}
)


def browser_html(html: str) -> str:
    """``html`` as a browser's parser reads it, written back out unambiguously (for the check, never a page).

    Python's HTML parser and a browser disagree on comments (``<!-->``, ``--!>``), CDATA and processing
    instructions, so a tag can hide from one and not the other. html5ever (through nh3, the sanitiser's own
    parser) parses as the HTML standard says, and what it writes back has none of those forms; with nearly
    everything kept, :func:`html_problems` then reads what the browser would build.
    """
    return nh3.clean(
        html,
        tags=set(_EVERY_TAG),
        attributes={},
        generic_attribute_prefixes=set(_EVERY_ATTRIBUTE_START),
        strip_comments=True,
        link_rel=None,
        url_schemes=set(_EVERY_SCHEME),
        clean_content_tags=set(),
    )


def html_problems(prose: str) -> list[HtmlProblem]:
    """Every tag, attribute and URL in ``prose`` (Markdown with code blanked) that the allow-list refuses."""
    reader = _HtmlReader()
    position = 0
    for line in prose.split("\n")[:-1]:
        position += len(line) + 1
        reader.line_offsets.append(position)
    reader.feed(prose)
    reader.close()
    return reader.found


# Markdown's own ways to write a URL or an attribute, outside HTML tags.
_LINK_RE = re.compile(r"(?P<image>!?)\[[^\]\n]*\]\(\s*<?(?P<url>[^)\s>]+)")
_REFERENCE_RE = re.compile(r"^[ ]{0,3}\[[^\]\n]+\]:[ \t]*<?(?P<url>\S+?)>?(?:\s|$)", re.MULTILINE)
_AUTOLINK_RE = re.compile(r"<(?P<url>[a-zA-Z][a-zA-Z0-9+.\-]*:[^\s<>]*)>")
# Attribute lists: anywhere, braces holding only ``#id``, ``.class`` and ``key=value``; and, where
# Python-Markdown applies one (alone on a line, after a space at the end of a heading or table cell, or right
# after an inline element such as **bold** or a link), whatever its own pattern matches, bare words included.
# ``{{ ... }}`` (a computed number) is blanked first; a Python f-string in a notebook is none of these.
_ATTR_LIST_RE = re.compile(
    r"(?<!\{)\{:?[ \t]*(?P<body>(?:[#.][\w\-]+[ \t]*|[\w\-:]+=(?:\"[^\"]*\"|'[^']*'|[^\s}]+)[ \t]*)+)\}(?!\})"
)
_PLACED_ATTR_LIST_RE = re.compile(r"\{\:?[ ]*(?P<body>[^\}\n ][^\n]*)\}")  # Python-Markdown's BASE_RE
_INLINE_ENDS = ("*", "_", "`", ")", "]", ">")  # the last character of an inline element (**b**, [a](b))


def _placed_attribute_lists(text: str) -> Iterator[re.Match[str]]:
    """Each ``{...}`` where Python-Markdown applies an attribute list: alone on its line (a block's last
    line), after a space at the end of a heading or a table row, or right after an inline element."""
    for brace in re.finditer(r"(?<!\{)\{(?!\{)", text):
        match = _PLACED_ATTR_LIST_RE.match(text, brace.start())
        if match is None:
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = len(text) if (end := text.find("\n", match.end())) == -1 else end
        before, after = text[line_start : match.start()], text[match.end() : line_end].strip()
        alone = not before.strip() and not after
        line_end_of_cell = before.endswith((" ", "\t")) and after in ("", "|")
        heading_or_row = before.lstrip().startswith("#") or "|" in before
        if alone or (line_end_of_cell and heading_or_row) or before.endswith(_INLINE_ENDS):
            yield match


_EXPRESSION_RE = re.compile(r"\{\{.*?\}\}")
_ADMONITION_RE = re.compile(r"^[ \t]*(?:!!!|\?\?\?\+?)[ \t]+(?P<types>[^\"\n]*?)[ \t]*(?:\"|$)", re.MULTILINE)


def attribute_list(body: str) -> list[tuple[str, str]]:
    """The attributes of an attribute list's text, read by Python-Markdown's own scanner.

    A bare word is an attribute of its own (``{ hidden onclick=... }`` is two); the regular expression this
    replaced needed every word to be ``key=value``, so one bare word hid the handler beside it.
    """
    pairs, _ = get_attrs_and_remainder(body)
    found = []
    for key, value in pairs:
        if key not in (".", "id") and sanitize_name(key) != key:
            continue  # Python-Markdown writes it as another name (`"a":` as `_a__`): no attribute of HTML's
        if key == ".":
            found.append(("class", value or ""))
        else:
            found.append((key, key if value is None else value))
    return found


def markdown_problems(prose: str, *, placed_lists: bool = True) -> Iterator[HtmlProblem]:
    """Markdown links, images and attribute lists (``{ onclick=... }``) that the allow-list refuses.

    ``placed_lists=False`` reads only braces that hold nothing but attributes: a worked notebook's source is
    mostly Python, whose dictionaries stand where Markdown's attribute lists would.
    """
    for match in _LINK_RE.finditer(prose):
        attribute = "src" if match.group("image") else "href"
        message = url_problem(attribute, match.group("url"))
        if message:
            yield _problem(match.start("url"), attribute, match.group("url"), message)
    for pattern in (_REFERENCE_RE, _AUTOLINK_RE):
        for match in pattern.finditer(prose):
            message = url_problem("href", match.group("url"))
            if message:
                yield _problem(match.start("url"), "href", match.group("url"), message)
    blanked = _EXPRESSION_RE.sub(lambda found: " " * len(found.group(0)), prose)
    found: set[tuple[int, str]] = set()
    placed = _placed_attribute_lists(blanked) if placed_lists else iter(())
    for matches in (_ATTR_LIST_RE.finditer(blanked), placed):
        for match in matches:
            start = match.start("body")
            for key, value in attribute_list(match.group("body")):
                message = attribute_problem("*", key, value)
                if message and (start, key) not in found:
                    found.add((start, key))
                    yield _problem(match.start(), key, value, message)
    for match in _ADMONITION_RE.finditer(blanked):  # !!! type: the types are the box's classes
        message = class_problem(match.group("types"))
        if message:
            yield HtmlProblem(match.start("types"), "class", message, lesson_classes_fix())


# ------------------------------------------------------------------------------------ notebook outputs
SVG_TAGS: frozenset[str] = frozenset(
    {"svg", "g", "path", "line", "rect", "circle", "ellipse", "polyline", "polygon", "text", "tspan"}
    | {"title", "desc", "defs", "clipPath", "linearGradient", "radialGradient", "stop"}
)
"""The drawing part of SVG that static charts use: no scripts, links, animation, filters or foreign HTML."""
SVG_ATTRIBUTES: frozenset[str] = frozenset(
    {"viewBox", "xmlns", "version", "width", "height", "x", "y", "x1", "x2", "y1", "y2", "dx", "dy"}
    | {"cx", "cy", "r", "rx", "ry", "d", "points", "transform", "fill", "fill-opacity", "fill-rule"}
    | {"stroke", "stroke-width", "stroke-opacity", "stroke-dasharray", "stroke-dashoffset", "stroke-linecap"}
    | {"stroke-linejoin", "stroke-miterlimit", "opacity", "font-family", "font-size", "font-weight"}
    | {"font-style", "text-anchor", "dominant-baseline", "clip-path", "offset", "stop-color", "stop-opacity"}
    | {"gradientUnits", "pointer-events", "aria-hidden", "aria-label", "role", "focusable", "id", "class"}
)
NOTEBOOK_ATTRIBUTES: dict[str, frozenset[str]] = {
    **{tag: ATTRIBUTES.get(tag, frozenset()) | {"role", "aria-label", "tabindex", "hidden"} for tag in TAGS},
    **{tag: SVG_ATTRIBUTES for tag in SVG_TAGS},
    # The course's chart figure from the notebooks' renderer: its name, the content hashes of its specs and
    # of its wide drawing, each checked by value in _keep_notebook_attribute (charts.js takes nothing else
    # from a figure).
    "figure": ATTRIBUTES.get("figure", frozenset())
    | {"data-rp-chart", "data-rp-spec", "data-rp-spec-narrow"}
    | {"data-rp-wide"},
    # The chart's data table stays out of the search index, as on lesson pages.
    "details": ATTRIBUTES["details"] | {"data-search-exclude"},
    "*": GLOBAL_ATTRIBUTES,
}
_CHART_VALUE_RE = re.compile(r"^[a-z0-9-]{1,64}$")
_DIGEST_RE = re.compile(r"^[0-9a-f]{64}$")
_CLIP_PATH_RE = re.compile(r"^url\(#[\w-]+\)$")


def _keep_notebook_attribute(tag: str, attribute: str, value: str) -> str | None:
    if attribute == "data-search-exclude":
        return ""
    if attribute in {"data-rp-chart", "data-rp-spec", "data-rp-spec-narrow"}:
        return value if _CHART_VALUE_RE.match(value) else None
    if (
        attribute == "data-rp-wide"
    ):  # the SHA-256 that names the wide drawing's file (course/charts/markup.py)
        return value if _DIGEST_RE.match(value) else None
    if attribute == "clip-path" or (tag in SVG_TAGS and attribute in {"fill", "stroke"} and "url(" in value):
        return value if _CLIP_PATH_RE.match(value) else None  # only references within the figure
    return _keep_attribute(tag, attribute, value)


def sanitise_notebook_html(fragment: str) -> str:
    """A notebook's cells and outputs, sanitised like a lesson plus the static SVG that charts draw."""
    return nh3.clean(
        fragment,
        tags=set(TAGS | SVG_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT - {"title"}),  # an SVG <title> is its label
        attributes={tag: set(names) for tag, names in NOTEBOOK_ATTRIBUTES.items()},
        attribute_filter=_keep_notebook_attribute,
        strip_comments=True,
        link_rel=None,
        url_schemes=set(URL_SCHEMES),
        filter_style_properties=set(STYLE_PROPERTIES),
    )
