"""Material's search entries for a page, kept between builds while what they are made from is unchanged.

Material's search plugin reads every page's HTML with ``html.parser`` on every build (``SearchIndex.
add_entry_from_context``), even with the parts it skips set aside (:mod:`course.search_index.excluded_parts`):
0.5 s of a warm build. The entries it adds for a page are a function of what that method reads: the page's
HTML, table of contents, address, title and front matter (its ``search`` and ``tags``), and Material's version
(its parser). So they are kept under a key naming all of those, and added again without reading the page.

Two parts of the HTML change from build to build and never reach an entry: the comments that mark our
blocks and the set-aside parts carry the building process's random nonce, and the parser ignores comments.
The key names the HTML with those nonces replaced by a stand-in. Anything else, an entry the plugin records
differently, a page excluded, is the plugin's own doing on a miss.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from course.folder_digest import installed_versions
from course.stored_results import StoredResults, text_key

STORE = "search-entries"
FORMAT = "entries-1"  # changes when what is stored does


def keep_plugin_entries(plugin: Any, stored: StoredResults, nonces: Iterable[str]) -> bool:
    """:func:`keep_entries` for the index of Material's search ``plugin`` (after its ``on_config``); False,
    and nothing changed, where the plugin is another's (MkDocs' own keeps its entries elsewhere) or off."""
    index = getattr(plugin, "search_index", None)
    if not type(index).__module__.startswith("material.") or not isinstance(
        getattr(index, "entries", None), list
    ):
        return False
    keep_entries(index, stored, nonces)
    return True


def keep_entries(index: Any, stored: StoredResults, nonces: Iterable[str]) -> None:
    """Make Material's ``index`` (a ``SearchIndex``) add a page's entries from ``stored`` where an earlier
    build stored them for the same inputs, and store them where it reads the page."""
    add = index.add_entry_from_context
    nonces = tuple(nonces)
    version = installed_versions(("mkdocs-material", "jieba"))  # the parser; Chinese text is segmented

    def add_or_reuse(page: Any) -> None:
        key = entries_key(page, nonces, version)
        found = stored.get(key)
        if found is not None:
            try:
                entries = json.loads(found)
            except ValueError:
                entries = None
            if isinstance(entries, list):
                index.entries.extend(entries)
                return
        first = len(index.entries)
        add(page)
        stored.put(key, json.dumps(index.entries[first:]))

    index.add_entry_from_context = add_or_reuse


def entries_key(page: Any, nonces: Iterable[str], version: str) -> str:
    """What Material's indexer reads of ``page``, with the builds' nonces in the HTML made alike."""
    html = page.content
    for nonce in nonces:
        html = html.replace(nonce, "rpNonce")
    toc = json.dumps(_toc(page.toc))
    meta = json.dumps(page.meta, sort_keys=True, default=repr)
    return text_key(FORMAT, version, page.url, str(page.title), meta, toc, html)


def _toc(items: Iterable[Any]) -> list[Any]:
    return [[item.id, item.url, item.title, _toc(item.children)] for item in items]
