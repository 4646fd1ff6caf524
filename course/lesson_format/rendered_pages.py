"""A lesson's rendered Markdown, kept between builds while nothing it is made from has changed (issue 23).

Converting the pages' Markdown was most of a warm build's own work: 1.4 s of 4.5 s, drawing every chart,
figure, formula and quiz again from inputs that had not changed. What MkDocs' ``Page.render`` makes (the
HTML, the table of contents, the title found in it, the anchors it holds and links to) is a function of:

- the page's source and the Markdown that the ``page_markdown`` event handed on;
- what every page shares: the other pages' front matter, the config, the theme's overrides and the
  project's code (:func:`~course.lesson_format.partial_rebuilds.shared_inputs`, which a build computes
  anyway);
- the Markdown settings: extensions and their options, ``use_directory_urls`` (which the command line can
  change) and ``site_url`` (which the environment can);
- the libraries that render: the stored results' folder names Markdown's (:mod:`course.stored_results`),
  and the key adds MkDocs, Altair and vl-convert, which draw the charts.

So a render is kept under a key naming all of them. Only a render that logged no warning is kept: in strict
mode a warning (a link to a missing page) fails the build, and it must do so on every build, not only the
first. Nor is one made at debug level, where MkDocs records no links to check for anchors. The events after
the render (sanitising, titles, search) run on every build as before, so a page checked or sanitised
differently is never served from here. Our blocks in the HTML carry the building process's nonce
(:mod:`course.sanitising.trusted`); a stored render carries a stand-in, which the reusing build replaces
with its own. Notebook pages are mkdocs-jupyter's (it keeps its own cache). Under ``serve`` nothing is
kept, as a page may show figures still being computed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from mkdocs.structure.toc import AnchorLink, get_toc

from course.folder_digest import installed_versions
from course.sanitising.trusted import BUILD_NONCE
from course.stored_results import StoredResults, text_key

STORE = "rendered-pages"
# Our blocks are marked by the building process's random nonce (course.sanitising.trusted): a stored render
# holds this in its place, and is given the reusing build's nonce.
NONCE_STAND_IN = "rpStoredRenderNonce"
FORMAT = "render-1"  # changes when what is stored does
# Beyond Markdown's (course.stored_results.LIBRARIES): MkDocs' own treeprocessors, and the charts' drawing.
LIBRARIES = ("mkdocs", "altair", "vl-convert-python")


def render_key(page: Any, source: str, shared_inputs: str, config: Any) -> str:
    """The key of ``page``'s render: its source, the Markdown it is rendered from, what all pages share and
    the Markdown settings."""
    extensions = [
        e if isinstance(e, str) else f"{type(e).__module__}.{type(e).__qualname__}"
        for e in config.markdown_extensions
    ]
    settings = json.dumps(
        {
            "extensions": extensions,
            "options": config.mdx_configs,
            "use_directory_urls": bool(config.use_directory_urls),
            "site_url": config.site_url,  # set from the environment (RIDGEPOINT_SITE_URL)
        },
        sort_keys=True,
        default=repr,
    )
    return text_key(
        FORMAT,
        page.file.src_uri,
        source,
        page.markdown,
        shared_inputs,
        settings,
        _library_versions(),
    )


@lru_cache(maxsize=1)
def _library_versions() -> str:
    """Looked up once per import, as the store's fingerprint is (each lookup reads installed metadata)."""
    return installed_versions(LIBRARIES)


def keep_render(page: Any, source: str, shared_inputs: str, stored: StoredResults) -> None:
    """Make ``page.render`` reuse the render stored for the same inputs, or render and store it.

    Called in the ``page_markdown`` event; the key is taken when MkDocs renders, from the Markdown that
    every plugin's ``page_markdown`` has handed on.
    """
    render = page.render

    def render_or_reuse(config: Any, files: Any) -> None:
        key = render_key(page, source, shared_inputs, config)
        found = stored.get(key)
        if found is not None and (restore := _restorer(found, files)) is not None:
            restore(page)
            return
        with _warnings() as warned:
            render(config, files)
        # MkDocs records the links to check for anchors only when it is not logging at debug level.
        if warned or page.links_to_anchors is None:
            return
        if (text := _without_nonce(json.dumps(_snapshot(page)))) is not None:
            stored.put(key, text)

    page.render = render_or_reuse


def _snapshot(page: Any) -> dict[str, Any]:
    """What ``Page.render`` set, as JSON."""
    links = page.links_to_anchors
    return {
        "content": page.content,
        "toc": [_token(item) for item in page.toc],
        "title": page._title_from_render,
        "anchors": None if page.present_anchor_ids is None else sorted(page.present_anchor_ids),
        "links": {file.src_uri: dict(to) for file, to in links.items()},
    }


def _without_nonce(text: str) -> str | None:
    """``text`` with this build's nonce (which marks our blocks as trusted) replaced by a stand-in, or None
    where the text already holds the stand-in: a later build puts its own nonce wherever the stand-in is, so
    it must stand only where this build's nonce stood, which no lesson can know."""
    if NONCE_STAND_IN in text:
        return None
    return text.replace(BUILD_NONCE, NONCE_STAND_IN)


def _token(item: AnchorLink) -> dict[str, Any]:
    return {
        "name": item.title,
        "id": item.id,
        "level": item.level,
        "children": [_token(child) for child in item.children],
    }


def _restorer(text: str, files: Any) -> Callable[[Any], None] | None:
    """A function that sets a page as its stored render did, or None where the record is unreadable or links
    to a page the build no longer has (rendering again then reports the link as MkDocs does)."""
    try:
        stored = json.loads(text.replace(NONCE_STAND_IN, BUILD_NONCE))
        linked = {files.get_file_from_path(uri): dict(to) for uri, to in stored["links"].items()}
        if None in linked:
            return None
        content, toc, title, anchors = stored["content"], stored["toc"], stored["title"], stored["anchors"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None

    def restore(page: Any) -> None:
        page.content = content
        page.toc = get_toc(toc)
        page._title_from_render = title
        page.present_anchor_ids = None if anchors is None else set(anchors)
        page.links_to_anchors = linked

    return restore


@contextmanager
def _warnings() -> Iterator[list[logging.LogRecord]]:
    """The warnings and errors logged meanwhile: by MkDocs (whose logger does not pass them on) or anyone."""
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Collect(logging.WARNING)
    loggers = [logging.getLogger(), logging.getLogger("mkdocs")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
