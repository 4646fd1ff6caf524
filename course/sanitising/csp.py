"""The Content-Security-Policy of every page: a ``<meta>`` first in ``<head>``, and the ``_headers`` file.

Sanitising removes what a lesson should not contain; the policy is the second wall, enforced by the reader's
browser: only this site's own scripts run (no inline script but the theme's, each allowed by its SHA-256),
nothing loads from another host, ``<base>`` cannot move the page, no plugin objects, forms post only here.
Pyodide compiles WebAssembly, hence ``'wasm-unsafe-eval'`` (not ``'unsafe-eval'``: Vega runs with its
expression interpreter). Styles may be inline (Material and Vega set them; CSS runs no script and, with
``img-src``/``font-src``/``connect-src`` limited to this site, cannot send anything elsewhere).

The ``<meta>`` works on any static host; ``_headers`` (read by Netlify, Cloudflare Pages and others) adds
``frame-ancestors``, which a ``<meta>`` cannot carry, and covers the widget worker, which a page's ``<meta>``
does not reach. GitHub Pages ignores ``_headers``; the ``<meta>`` is what protects readers there.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

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


def script_hashes(page: str) -> list[str]:
    """``'sha256-...'`` of each inline script ``page`` runs, in order, without repeats.

    Only called on finished pages, whose content was sanitised: the scripts left are the theme's.
    """
    hashes: list[str] = []
    for match in _INLINE_SCRIPT_RE.finditer(page):
        kind = _TYPE_RE.search(match.group("attrs") or "")
        if (kind.group(1).lower() if kind else "") not in _SCRIPT_TYPES:
            continue
        digest = base64.b64encode(hashlib.sha256(match.group("body").encode("utf-8")).digest()).decode()
        token = f"'sha256-{digest}'"
        if token not in hashes:
            hashes.append(token)
    return hashes


def policy(hashes: Iterable[str] = (), *, header: bool = False) -> str:
    """The policy, with ``hashes`` in ``script-src`` (``header``: add what a meta cannot hold)."""
    extra = " ".join(hashes)
    parts = [
        f"{name} {value} {extra}".strip() if name == "script-src" else f"{name} {value}"
        for name, value in (*DIRECTIVES, *(HEADER_ONLY if header else ()))
    ]
    return "; ".join(parts)


def with_policy(page: str) -> tuple[str, list[str]]:
    """``page`` with its policy ``<meta>`` first in ``<head>``, and the script hashes it allows."""
    hashes = script_hashes(page)
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(hashes)}">'
    head = _HEAD_RE.search(page)
    if head is None:
        return page, hashes
    return page[: head.end()] + meta + page[head.end() :], hashes


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
    """Write ``_headers``: the policy (with every page's script hashes), a few safe defaults, and a year's
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
