"""Make the built 404 page load nothing that can fail, wherever the host serves it from.

MkDocs renders ``404.html`` with root-absolute URLs under site_url's path (``/ridgepoint/assets/...``),
because the page is served at any depth. Deployed under another base path, every one of those requests
fails and the page is unstyled. After the build (when our stylesheet bundle exists) this step rewrites
the page:

* each ``<link rel="stylesheet">`` becomes a ``<style>`` with the file's text (``media`` kept), so the page
  is styled with no request, with or without JavaScript;
* the icon becomes a ``data:`` URL (the policy's ``img-src`` allows ``data:``);
* links under site_url's path point at the published course (``site_url``); the page's script turns them
  into local ones when it finds where the site lives on this host (``overrides/404.html``).

The theme's scripts are left in their ``<template>``, untouched: the page's own script loads them. No inline
script is added or changed here, so the policy's hashes, computed when the page was rendered, still hold.
"""

from __future__ import annotations

import base64
import html
import mimetypes
import re
from pathlib import Path
from urllib.parse import urlsplit

PAGE = "404.html"
_LINK_RE = re.compile(r"<link\b[^>]*>", re.IGNORECASE)
_ATTR_RE = re.compile(r'([\w-]+)="([^"]*)"')
_ANCHOR_HREF_RE = re.compile(r'(<a\b[^>]*?\shref=")([^"]*)(")', re.IGNORECASE)


class NotFoundPageError(RuntimeError):
    """The 404 page links a file the built site does not have."""


def _site_file(site_dir: Path, href: str, prefix: str) -> Path:
    path = html.unescape(href)
    if not path.startswith(prefix):
        raise NotFoundPageError(
            f"{PAGE} links {path}, outside the site ({prefix}); Fix: link it with the url filter"
        )
    target = site_dir / path[len(prefix) :]
    if not target.is_file():
        raise NotFoundPageError(f"{PAGE} links {path}, which the built site does not have ({target})")
    return target


def self_contained(page: str, site_dir: Path, site_url: str) -> str:
    """``page`` with its stylesheets inlined, its icon a data: URL and its links to the published site."""
    prefix = urlsplit(site_url).path.rstrip("/") + "/"

    def link(match: re.Match[str]) -> str:
        attrs = dict(_ATTR_RE.findall(match.group()))
        rel, href = attrs.get("rel", "").split(), attrs.get("href", "")
        if "stylesheet" in rel:
            text = _site_file(site_dir, href, prefix).read_text(encoding="utf-8")
            text = re.sub(r"/\*# sourceMappingURL=[^*]*\*/", "", text).replace("</style", "<\\/style")
            media = f' media="{attrs["media"]}"' if "media" in attrs else ""
            return f"<style{media}>{text}</style>"
        if "icon" in rel and not href.startswith("data:"):
            icon = _site_file(site_dir, href, prefix)
            kind = mimetypes.guess_type(icon.name)[0] or "image/png"
            data = base64.b64encode(icon.read_bytes()).decode("ascii")
            return match.group().replace(f'href="{href}"', f'href="data:{kind};base64,{data}"')
        return match.group()

    def anchor(match: re.Match[str]) -> str:
        href = match.group(2)
        if href.startswith(prefix):
            rest = href[len(prefix) :]
            href = site_url.rstrip("/") + "/" + ("" if rest == "." else rest)
        return match.group(1) + href + match.group(3)

    return _ANCHOR_HREF_RE.sub(anchor, _LINK_RE.sub(link, page))


def finish_not_found_page(site_dir: str | Path, site_url: str | None) -> Path | None:
    """Rewrite the built ``404.html`` in place (see the module's docstring); None when there is none."""
    site = Path(site_dir)
    target = site / PAGE
    if not target.is_file() or not site_url:
        return None
    target.write_text(self_contained(target.read_text(encoding="utf-8"), site, site_url), encoding="utf-8")
    return target
