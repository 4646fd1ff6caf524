"""Old addresses of moved pages: read docs/redirects.yml, check it, write a small page at each old address.

A reader's bookmark or another site's link to ``inference/prefill-vs-decode/`` must keep working after the
lesson moves to ``serving/``. MkDocs has no redirects of its own, and a static host has no server rules we can
rely on, so each old address gets an HTML page that sends the browser on with ``<meta http-equiv="refresh">``
(no script: the site's pages carry no inline script) and shows a plain link for anyone whose browser does not
follow it.

The file maps an old page to its new one, both as paths of Markdown (or notebook) sources relative to docs/::

    inference/prefill-vs-decode.md: serving/prefill-vs-decode.md

Checks, shared by the build and ``course.lesson_format.check``: both are page sources inside docs/ (an
allow-list of path segments: no absolute path, ``..``, scheme, host, escape or backslash), the new page
exists, no page is published at the old one's address (else the redirect page would overwrite it), and no
redirect leads to another redirect. Only redirects without a problem are ever written.
"""

from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from course.lesson_format.problems import Problem, printable
from course.sanitising.csp import with_policy
from course.sanitising.source_files import read_yaml_file
from course.sanitising.source_tree import page_address, page_sources

REDIRECTS_FILE = "redirects.yml"
PAGE_SUFFIXES = (".md", ".py", ".ipynb")  # lessons, and the worked notebooks mkdocs-jupyter turns into pages
EXAMPLE = "inference/prefill-vs-decode.md: serving/prefill-vs-decode.md"


@dataclass(frozen=True)
class Redirect:
    """One moved page: its old and new sources, relative to docs/."""

    old: str
    new: str


def page_url(source: str) -> str:
    """The directory URL MkDocs gives a source: ``serving/x.md`` -> ``serving/x/``, ``serving/index.md`` ->
    ``serving/``, ``index.md`` -> ``""`` (one rule: :func:`course.sanitising.source_tree.page_address`)."""
    return page_address(source)


SEGMENT_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
PATH_FIX = (
    "write both as page sources relative to docs/, folders joined by /, e.g. " + EXAMPLE + " (no leading /, "
    "no .., no scheme or host: a redirect never leaves the site)"
)


def path_problem(value: object) -> str | None:
    """Why ``value`` is not a page source inside docs/ that a redirect may name, or ``None``.

    By allow-list: segments of letters, digits, ``.``, ``_`` and ``-`` (no ``..``, no ``/`` in front, no
    ``\\``, ``%``, ``:`` or other characters), ending in a page's suffix. An absolute or ``../`` old path
    wrote outside the site folder, and a target under a folder named ``https:`` became an off-site redirect.
    """
    if not isinstance(value, str):
        return f"expected a page source (text), got {type(value).__name__}"
    shown = printable(value)
    if value.startswith(("/", "\\")):
        return f"'{shown}' is an absolute path; redirects name pages relative to docs/"
    for segment in value.split("/"):
        if segment in ("", ".", ".."):
            return f"'{shown}' has an empty, '.' or '..' segment; redirects stay inside docs/"
        if not SEGMENT_RE.match(segment):
            return (
                f"'{shown}' has the segment '{printable(segment)}', with characters other than letters, "
                "digits, '.', '_' and '-' (a scheme, a host, an escape or a backslash)"
            )
    if not value.endswith(PAGE_SUFFIXES):
        return f"'{shown}' is not a page; redirects name page sources ({', '.join(PAGE_SUFFIXES)})"
    return None


def load_redirects(docs_dir: Path | str) -> tuple[list[Redirect], list[Problem]]:
    """The valid redirects in ``docs_dir``/redirects.yml (none when the file is absent) and every problem.

    Only redirects without a problem are returned, so that a build that goes on despite problems (``serve``)
    never writes one outside the site or over a page.
    """
    docs = Path(docs_dir)
    file = docs / REDIRECTS_FILE
    if not file.exists():
        return [], []
    data, problems = read_yaml_file(file, REDIRECTS_FILE, EXAMPLE)  # the one bounded reader
    if problems:
        return [], problems
    if data is None:
        return [], []
    if not isinstance(data, dict):
        return [], [Problem(REDIRECTS_FILE, "redirects", "expected a mapping of old page: new page", EXAMPLE)]
    pages = page_sources(docs)
    redirects: list[Redirect] = []
    for old, new in data.items():
        where = f"redirect {printable(str(old))!r}"
        found = [
            Problem(REDIRECTS_FILE, where, f"{side} page: {message}", PATH_FIX)
            for side, value in (("old", old), ("new", new))
            if (message := path_problem(value)) is not None
        ]
        if found:
            problems += found
            continue
        assert isinstance(old, str)
        assert isinstance(new, str)
        if page_url(old) in pages:
            problems.append(
                Problem(
                    REDIRECTS_FILE,
                    where,
                    f"docs/{pages[page_url(old)]} still exists at {page_url(old) or 'the home page'}, "
                    "and its page would be replaced by the redirect",
                    "remove the redirect, or the old file if the page has moved",
                )
            )
            continue
        if not (docs / new).is_file():
            found.append(
                Problem(
                    REDIRECTS_FILE,
                    where,
                    f"leads to docs/{new}, which does not exist",
                    "point it at the page's current source, e.g. " + EXAMPLE.split(": ")[1],
                )
            )
        if new in data:
            found.append(
                Problem(REDIRECTS_FILE, where, f"leads to {new!r}, itself redirected", f"{old}: {data[new]}")
            )
        problems += found
        if not found:
            redirects.append(Redirect(old, new))
    return redirects, problems


def redirect_problems(docs_dir: Path | str) -> list[Problem]:
    """Problems of docs/redirects.yml, for the build and the lesson check."""
    return load_redirects(docs_dir)[1]


def redirect_html(old: str, new: str) -> str:
    """The page left at ``old``'s address: a refresh to ``new``'s, relative so it works under any base URL."""
    target = posixpath.relpath(page_url(new) or ".", page_url(old) or ".") + "/"
    href = html.escape(target, quote=True)
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>Moved to {html.escape(page_url(new) or 'the home page')}</title>\n"
        f'<meta http-equiv="refresh" content="0; url={href}">\n'
        f'<link rel="canonical" href="{href}">\n'
        '<meta name="robots" content="noindex">\n'
        # An icon of its own: without one Chromium asks for /favicon.ico, a 404 on most hosts.
        '<link rel="icon" href="data:,">\n'
        "</head>\n<body>\n"
        f'<p>This page has moved to <a href="{href}">its new address</a>.</p>\n'
        "</body>\n</html>\n"
    )


def write_redirect_pages(docs_dir: Path | str, site_dir: Path | str) -> list[Path]:
    """Write a redirect page at each old address in ``site_dir`` (directory URLs, as the site uses)."""
    redirects, _ = load_redirects(docs_dir)
    written: list[Path] = []
    for redirect in redirects:
        page = Path(site_dir) / page_url(redirect.old) / "index.html"
        if page.exists():  # a page of the site (checked above too): never overwritten
            continue
        page.parent.mkdir(parents=True, exist_ok=True)
        # The same Content-Security-Policy as every other page of the site, first in <head>.
        page.write_text(with_policy(redirect_html(redirect.old, redirect.new), ()), encoding="utf-8")
        written.append(page)
    return written
