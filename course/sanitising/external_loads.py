"""Find resources a built site would load from another host: the static half of the "no request leaves" rule.

The site must work on an isolated network from any static host, so nothing may be loaded from elsewhere: no
CDN script, stylesheet, font or image. Links a reader may follow (``<a href>``, ``<link rel="canonical">``)
are not loads and are fine. The browser tests catch what only happens at run time; this scan reads every built
HTML, CSS and JS file, so it also covers pages no browser test opens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

ABSOLUTE = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)
CSS_URL_RE = re.compile(r"""url\(\s*(?P<q>["']?)(?P<url>[^"')]+)(?P=q)\s*\)""", re.IGNORECASE)
CSS_IMPORT_RE = re.compile(r"""@import\s+(?:url\()?\s*["']?(?P<url>[^"');\s]+)""", re.IGNORECASE)
# A script loads a URL when an absolute URL literal is the argument of one of these, checked on the text just
# before the literal: finding the rare literals first is ~100x faster than trying the keywords everywhere.
JS_URL_LITERAL_RE = re.compile(r"""(?P<q>["'`])(?P<url>(?:https?:)?//[^"'`\s]+)(?P=q)""")
JS_LOADER_BEFORE_RE = re.compile(
    r"""(?:\bimport\s*\(\s*|\bfrom\s*|\bimport\s+|\bfetch\s*\(\s*|\bimportScripts\s*\(\s*|"""
    r"""\bnew\s+(?:Shared)?Worker\s*\(\s*|\.src\s*=\s*|\bloadScript\s*\(\s*|\bindexURL\s*:\s*)\Z"""
)
# <link rel> values that make the browser fetch or connect (canonical, alternate, edit, license ... do not).
LOADING_RELS = frozenset(
    {
        "stylesheet",
        "icon",
        "shortcut",
        "apple-touch-icon",
        "preload",
        "modulepreload",
        "prefetch",
        "preconnect",
        "dns-prefetch",
        "manifest",
        "mask-icon",
    }
)
SRC_ATTRIBUTES = {
    "script": ("src",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "source": ("src", "srcset"),
    "video": ("src", "poster"),
    "audio": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "track": ("src",),
    "input": ("src",),
    "image": ("href", "xlink:href"),
    "use": ("href", "xlink:href"),
    "frame": ("src",),
}


@dataclass(frozen=True)
class ExternalLoad:
    """One resource loaded from another host, with where it was found."""

    file: str
    what: str
    url: str

    def __str__(self) -> str:
        return f"{self.file}: {self.what} loads {self.url}"


class _LoadFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.loads: list[tuple[str, str]] = []
        self._in_style = False
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name.lower(): value or "" for name, value in attrs}
        if tag == "link":
            rels = set(values.get("rel", "").lower().split())
            if rels & LOADING_RELS and ABSOLUTE.match(values.get("href", "")):
                self.loads.append((f"<link rel={values.get('rel')}>", values["href"]))
        for attribute in SRC_ATTRIBUTES.get(tag, ()):
            for url in re.split(r",\s*", values.get(attribute, "")):
                if ABSOLUTE.match(url):
                    self.loads.append((f"<{tag} {attribute}>", url.split()[0]))
        if "style" in values:
            self.loads.extend((f"<{tag} style>", url) for url in css_loads(values["style"]))
        self._in_style = tag == "style"
        # Inline scripts load too (an inline `import("https://cdn...")` is as much a CDN load as a src);
        # JSON data blocks and other non-script types are data, not code.
        kind = values.get("type", "").lower()
        scripts = ("", "module", "text/javascript", "application/javascript")
        self._in_script = tag == "script" and kind in scripts

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.loads.extend(("<style>", url) for url in css_loads(data))
        if self._in_script:
            self.loads.extend(("<script>", url) for url in js_loads(data))


def css_loads(css: str) -> list[str]:
    """Absolute URLs a stylesheet loads through ``url()`` or ``@import``."""
    urls = [m.group("url") for m in CSS_URL_RE.finditer(css)] + [
        m.group("url") for m in CSS_IMPORT_RE.finditer(css)
    ]
    return [url for url in urls if ABSOLUTE.match(url)]


def js_loads(script: str) -> list[str]:
    """Absolute URLs a script loads as a literal argument of import, fetch, a worker or a script ``src``."""
    return [
        literal.group("url")
        for literal in JS_URL_LITERAL_RE.finditer(script)
        if JS_LOADER_BEFORE_RE.search(script, max(0, literal.start() - 40), literal.start())
    ]


def html_loads(page: str) -> list[tuple[str, str]]:
    """``(what, url)`` for each resource an HTML page loads from an absolute URL."""
    finder = _LoadFinder()
    finder.feed(page)
    return finder.loads


def find_external_loads(site_dir: Path) -> list[ExternalLoad]:
    """Every external load in the built site's HTML, CSS and JavaScript files."""
    found: list[ExternalLoad] = []
    for path in sorted(site_dir.rglob("*")):
        suffix = path.suffix.lower()
        if suffix not in {".html", ".htm", ".css", ".js", ".mjs"} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        name = path.relative_to(site_dir).as_posix()
        if suffix in {".html", ".htm"}:
            found += [ExternalLoad(name, what, url) for what, url in html_loads(text)]
        elif suffix == ".css":
            found += [ExternalLoad(name, "CSS", url) for url in css_loads(text)]
        else:
            found += [ExternalLoad(name, "script", url) for url in js_loads(text)]
    return found
