"""The Content-Security-Policy of every page: a ``<meta>`` first in ``<head>``, and the ``_headers`` file.

Sanitising removes what a lesson should not contain; the policy is the second wall, enforced by the reader's
browser, and it must hold even if the sanitiser let something through: only this site's own scripts run,
nothing loads from another host, ``<base>`` cannot move the page, no plugin objects, forms post only here.

Inline scripts: the only ones allowed are the theme's, each by its SHA-256, and those hashes are computed from
the theme's templates (:func:`theme_script_hashes`: every inline ``<script>`` in Material's and our templates,
rendered for each relative ``base_url`` the site's pages can have), before any lesson is read. Nothing found
in a finished page is hashed, so a script that reaches a page is refused by the browser whatever it says. The
one exception is ``404.html``, a theme template rendered with no page at all (see
:func:`not_found_script_hashes`).

Pyodide compiles WebAssembly, hence ``'wasm-unsafe-eval'`` (not ``'unsafe-eval'``: Vega runs with its
expression interpreter).

``style-src 'unsafe-inline'``, decided: Material needs none of it (its templates carry no ``style`` attribute
or ``<style>`` element, and its scripts set styles through the CSSOM, which the policy does not govern). What
needs it: vega-embed inserts its stylesheet as a ``<style id="vega-embed-style">`` element each time a chart
is drawn in the browser (``defaultStyle``), and vega-tooltip inserts another for its tooltips, whose text
depends on the tooltip theme; a worked notebook's tables carry cell ``text-align`` attributes (its page
no longer carries mkdocs-jupyter's ``<style>`` blocks: the site's ``notebooks.css`` styles it). Styles run
no script, and with ``img-src``, ``font-src`` and ``connect-src`` limited to this site CSS cannot send
anything elsewhere; what a lesson could do with CSS (a page-wide overlay) is the sanitiser's to stop: it
drops every ``style`` attribute and ``<style>`` a lesson or formula writes (a table cell's ``text-align``
excepted).

The ``<meta>`` works on any static host; ``_headers`` (read by Netlify, Cloudflare Pages and others) adds
``frame-ancestors``, which a ``<meta>`` cannot carry, and covers the widget worker, which a page's ``<meta>``
does not reach. GitHub Pages ignores ``_headers``; the ``<meta>`` is what protects readers there."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("default-src", "'self'"),
    ("script-src", "'self' 'wasm-unsafe-eval'"),
    ("style-src", "'self' 'unsafe-inline'"),
    ("img-src", "'self' data:"),  # Material's icons are data: SVGs in its stylesheet
    ("font-src", "'self'"),
    ("connect-src", "'self'"),
    ("worker-src", "'self'"),
    ("frame-src", "'none'"),
    ("object-src", "'none'"),
    ("base-uri", "'self'"),
    ("form-action", "'self'"),
)
HEADER_ONLY: tuple[tuple[str, str], ...] = (("frame-ancestors", "'self'"),)
HEADERS_FILE = "_headers"

# Inline scripts that run: no type, or a JavaScript type (JSON data blocks are not scripts).
_INLINE_SCRIPT_RE = re.compile(
    r"<script(?P<attrs>(?:\s+(?!src\b)[\w-]+(?:=(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?)*)\s*>(?P<body>.*?)</script>",
    re.DOTALL | re.IGNORECASE,
)
_TYPE_RE = re.compile(r"\btype\s*=\s*[\"']?([^\"'\s>]+)", re.IGNORECASE)
_SCRIPT_TYPES = {"", "text/javascript", "application/javascript", "module"}
_HEAD_RE = re.compile(r"<head\b[^>]*>", re.IGNORECASE)

IMMUTABLE = "public, max-age=31536000, immutable"
# A content hash in the name: Material's "bundle.a5f9d56c.min.js", ours "vega-runtime-3425bd951a44.js".
# A chart's wide drawing is named by its SHA-256 alone: "<64 hex>.svg" (course/charts/markup.py).
_HASHED_NAME_RE = re.compile(
    r"(?:\.[0-9a-f]{8}\.min\.(?:css|js)|-[0-9a-f]{12,}\.(?:js|zip)|^[0-9a-f]{64}\.svg)$"
)


def script_hash(body: str) -> str:
    """The policy's ``'sha256-...'`` source for an inline script whose text is ``body``."""
    return f"'sha256-{base64.b64encode(hashlib.sha256(body.encode('utf-8')).digest()).decode()}'"


def inline_scripts(html: str) -> list[str]:
    """The text of each inline script in ``html`` that runs (no ``src``; no type, or a JavaScript type)."""
    bodies = []
    for match in _INLINE_SCRIPT_RE.finditer(html):
        kind = _TYPE_RE.search(match.group("attrs") or "")
        if (kind.group(1).lower() if kind else "") in _SCRIPT_TYPES:
            bodies.append(match.group("body"))
    return bodies


def script_hashes(html: str) -> list[str]:
    """``'sha256-...'`` of each inline script in ``html``, in order, without repeats.

    For templates and for the 404 page only: the pages' policy never takes a hash from a page.
    """
    return list(dict.fromkeys(script_hash(body) for body in inline_scripts(html)))


def relative_base_urls(page_urls: Iterable[str]) -> list[str]:
    """Every ``base_url`` MkDocs gives the pages at ``page_urls`` (``.``, ``..``, ``../..``...)."""
    depths = {len([part for part in url.split("/") if part]) for url in page_urls} | {0}
    return ["/".join([".."] * depth) or "." for depth in range(max(depths) + 1)]


# Material's partials that write a script only when the site's config turns their feature on (``extra.*``):
# their scripts are allowed only then.
_FEATURE_PARTIALS = {
    "partials/integrations/analytics.html": "analytics",
    "partials/integrations/analytics/google.html": "analytics",
    "partials/javascripts/consent.html": "consent",
    "partials/javascripts/outdated.html": "version",
}


def theme_script_hashes(
    env: Any, template_dirs: Iterable[str], base_urls: Iterable[str], config: Any
) -> dict[str, list[str]]:
    """For each of ``base_urls``, the hashes of every inline script the theme's templates can write there.

    Read from the template files themselves (``overrides/``, then Material's: of two templates of one name,
    the first folder's is the one rendered, so only its scripts are allowed), each script's text rendered with
    the theme's Jinja environment ``env`` and the site's ``config``: nothing here comes from a lesson. A
    script whose text needs more than ``config`` and ``base_url`` (one that names the page) is not allowed,
    nor one of a feature the config leaves off. A page gets the list of its own ``base_url`` (a page's
    ``<meta>`` must leave the charset within the first 1024 bytes); ``_headers`` all of them.
    """
    urls = list(base_urls)
    found: dict[str, dict[str, None]] = {url: {} for url in urls}
    extra = config.get("extra") or {} if hasattr(config, "get") else {}
    rendered: set[str] = set()  # a template of an earlier folder hides the later ones of its name
    for folder in template_dirs:
        for template in sorted(Path(folder).rglob("*.html")):
            name = template.relative_to(folder).as_posix()
            if name in rendered:
                continue  # overridden (overrides/ comes before Material): its scripts never reach a page
            rendered.add(name)
            if name == "404.html" or ".icons" in template.parts:
                continue  # 404.html: see not_found_script_hashes
            if name in _FEATURE_PARTIALS and not extra.get(_FEATURE_PARTIALS[name]):
                continue
            for body in inline_scripts(template.read_text(encoding="utf-8")):
                for base_url in urls:
                    text = body
                    if "{{" in body or "{%" in body:
                        try:
                            text = env.from_string(body).render(config=config, base_url=base_url)
                        except Exception:  # needs a page or other context: never allowed
                            break
                    found[base_url][script_hash(text)] = None
    return {url: list(hashes) for url, hashes in found.items()}


def base_url_of(page_url: str) -> str:
    """The ``base_url`` MkDocs gives the page at ``page_url`` (as :func:`relative_base_urls` lists them)."""
    return relative_base_urls([page_url])[-1]


def not_found_script_hashes(page: str) -> list[str]:
    """The hashes of ``404.html``'s scripts, read from that page as the theme rendered it.

    The 404 page is a template rendered without any page: no lesson's text reaches it but the navigation's
    escaped titles and its pages' first path segments (written as JSON by ``tojson``), and its scripts are
    written by overrides/404.html. So its own scripts are read from it; these hashes go in its own policy and
    in ``_headers``, never in a lesson's.
    """
    return script_hashes(page)


def policy(hashes: Iterable[str] = (), *, header: bool = False) -> str:
    """The policy, with ``hashes`` in ``script-src`` (``header``: add what a meta cannot hold)."""
    extra = " ".join(hashes)
    parts = [
        f"{name} {value} {extra}".strip() if name == "script-src" else f"{name} {value}"
        for name, value in (*DIRECTIVES, *(HEADER_ONLY if header else ()))
    ]
    return "; ".join(parts)


def with_policy(page: str, hashes: Iterable[str]) -> str:
    """``page`` with its policy ``<meta>`` first in ``<head>``, allowing the inline scripts of ``hashes``."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(hashes)}">'
    head = _HEAD_RE.search(page)
    if head is None:
        return page
    return page[: head.end()] + meta + page[head.end() :]


def immutable_assets(site_dir: str | Path) -> list[str]:
    """Site paths of the files whose address changes with their content, so a browser may keep them.

    Material's bundles and stylesheets (``main.<hash>.min.css``), the pinned Vega runtime
    (``vega-runtime-<hash>.js``), the calculators archive (``calculators-<sha256>.zip``), the charts' wide
    drawings (``<sha256>.svg``) and Pyodide's versioned folder. Anything else (our own CSS and JS, pages,
    chart specs) keeps the host's default.
    """
    site = Path(site_dir)
    paths = sorted(
        "/" + path.relative_to(site).as_posix()
        for path in (site / "assets").rglob("*")
        if path.is_file() and _HASHED_NAME_RE.search(path.name)
    )
    paths += sorted(f"/{folder.relative_to(site).as_posix()}/*" for folder in site.glob("assets/pyodide/*/"))
    return paths


def write_headers_file(site_dir: str | Path, hashes: Iterable[str]) -> Path:
    """Write ``_headers``: the policy (with the theme's script hashes), a few safe defaults, and a year's
    cache lifetime for the assets whose name carries their content's hash (:func:`immutable_assets`)."""
    target = Path(site_dir) / HEADERS_FILE
    lines = [
        "/*",
        f"  Content-Security-Policy: {policy(sorted(set(hashes)), header=True)}",
        "  X-Content-Type-Options: nosniff",
        "  Referrer-Policy: strict-origin-when-cross-origin",
    ]
    for path in immutable_assets(site_dir):
        lines += [path, f"  Cache-Control: {IMMUTABLE}"]
    target.write_text("\n".join([*lines, ""]), encoding="utf-8")
    return target
