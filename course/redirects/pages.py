"""Old addresses of moved pages: read docs/redirects.yml, check it, write a small page at each old address.

A reader's bookmark or another site's link to ``inference/prefill-vs-decode/`` must keep working after the
lesson moves to ``serving/``. MkDocs has no redirects of its own, and a static host has no server rules we can
rely on, so each old address gets an HTML page that sends the browser on with ``<meta http-equiv="refresh">``
(no script: the site's pages carry no inline script) and shows a plain link for anyone whose browser does not
follow it.

The file maps an old page to its new one, both as paths of Markdown (or notebook) sources relative to docs/::

    inference/prefill-vs-decode.md: serving/prefill-vs-decode.md

Checks, shared by the build and ``course.lesson_format.check``: the new page exists, the old one does not
(else the redirect page would overwrite it), and no redirect leads to another redirect.
"""

from __future__ import annotations

import html
import posixpath
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from course.lesson_format.problems import Problem
from course.sanitising.csp import with_policy

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
    ``serving/``, ``index.md`` -> ``""``."""
    path = PurePosixPath(source)
    stem = path.with_suffix("").as_posix()
    if path.stem == "index":
        parent = path.parent.as_posix()
        return "" if parent == "." else parent + "/"
    return stem + "/"


def load_redirects(docs_dir: Path | str) -> tuple[list[Redirect], list[Problem]]:
    """The redirects in ``docs_dir``/redirects.yml (none when the file is absent) and their problems."""
    docs = Path(docs_dir)
    file = docs / REDIRECTS_FILE
    if not file.exists():
        return [], []
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        return [], [
            Problem(
                REDIRECTS_FILE,
                "redirects",
                f"is not valid YAML ({error})",
                EXAMPLE,
                line=mark.line + 1 if mark else None,
            )
        ]
    if data is None:
        return [], []
    if not isinstance(data, dict):
        return [], [Problem(REDIRECTS_FILE, "redirects", "expected a mapping of old page: new page", EXAMPLE)]
    redirects: list[Redirect] = []
    problems: list[Problem] = []
    for old, new in data.items():
        where = f"redirect {old!r}"
        if not isinstance(old, str) or not isinstance(new, str) or not old.endswith(PAGE_SUFFIXES):
            problems.append(
                Problem(REDIRECTS_FILE, where, "old and new must be page sources relative to docs/", EXAMPLE)
            )
            continue
        if not new.endswith(PAGE_SUFFIXES):
            problems.append(Problem(REDIRECTS_FILE, where, f"{new!r} is not a page source", EXAMPLE))
            continue
        if (docs / old).exists():
            problems.append(
                Problem(
                    REDIRECTS_FILE,
                    where,
                    f"docs/{old} still exists, and its page would be replaced by the redirect",
                    "remove the redirect, or the old file if the page has moved",
                )
            )
        if not (docs / new).exists():
            problems.append(
                Problem(
                    REDIRECTS_FILE,
                    where,
                    f"leads to docs/{new}, which does not exist",
                    "point it at the page's current source, e.g. " + EXAMPLE.split(": ")[1],
                )
            )
        if new in data:
            problems.append(
                Problem(REDIRECTS_FILE, where, f"leads to {new!r}, itself redirected", f"{old}: {data[new]}")
            )
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
        page.parent.mkdir(parents=True, exist_ok=True)
        # The same Content-Security-Policy as every other page of the site, first in <head>.
        page.write_text(with_policy(redirect_html(redirect.old, redirect.new), ()), encoding="utf-8")
        written.append(page)
    return written
