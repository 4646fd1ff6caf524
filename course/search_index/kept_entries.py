"""Material's search entries for a page, kept between builds while what they are made from is unchanged.

Material's search plugin reads every page's HTML with ``html.parser`` on every build (``SearchIndex.
add_entry_from_context``), even with the parts it skips set aside (:mod:`course.search_index.excluded_parts`):
0.5 s of a warm build. The entries it adds for a page are a function of what that method reads: the page's
HTML, table of contents, address, title and front matter (its ``search`` and ``tags``), and Material's version
(its parser). So they are kept under a key naming all of those, and added again without reading the page,
or setting its parts aside for reading (another 0.15 s).

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
FORMAT = "entries-2"  # changes when what is stored, or how it is keyed, does


class KeptEntries:
    """Material's search index, made to add a page's entries from ``stored`` where an earlier build stored
    them for the same inputs, and to store them where it reads the page.

    :meth:`known` looks a page up while its HTML is whole (the ``page_content`` event): where its entries
    are kept, its parts need not be set aside for the indexer (:mod:`course.search_index.excluded_parts`),
    which does not read it. The key is taken on the whole HTML either way: what Material records of a page
    with its parts set aside is what it records of the whole page (the set-aside rules).
    """

    def __init__(self, index: Any, stored: StoredResults, nonces: Iterable[str]) -> None:
        self.stored = stored
        self.nonces = tuple(nonces)
        self.version = installed_versions(("mkdocs-material", "jieba"))  # the parser; jieba segments Chinese
        self.pages: dict[str, tuple[str, list[Any] | None]] = {}  # page -> its key and kept entries
        add = index.add_entry_from_context

        def add_or_reuse(page: Any) -> None:
            looked_up = self.pages.pop(page.file.src_uri, None)
            key, entries = looked_up or self._look_up(page, page.content)
            if entries is not None:
                index.entries.extend(entries)
                return
            first = len(index.entries)
            add(page)
            self.stored.put(key, json.dumps(index.entries[first:]))

        index.add_entry_from_context = add_or_reuse

    def known(self, page: Any, html: str) -> bool:
        """True where ``page``, whose whole HTML is ``html``, has its entries kept (and the index will not
        read it); remembered for the index, which reads the page next."""
        found = self.pages[page.file.src_uri] = self._look_up(page, html)
        return found[1] is not None

    def _look_up(self, page: Any, html: str) -> tuple[str, list[Any] | None]:
        key = entries_key(page, html, self.nonces, self.version)
        found = self.stored.get(key)
        try:
            entries = json.loads(found) if found is not None else None
        except ValueError:
            entries = None
        return key, entries if isinstance(entries, list) else None


def keep_plugin_entries(plugin: Any, stored: StoredResults, nonces: Iterable[str]) -> KeptEntries | None:
    """:class:`KeptEntries` for the index of Material's search ``plugin`` (after its ``on_config``); None,
    and nothing changed, where the plugin is another's (MkDocs' own keeps its entries elsewhere) or off."""
    index = getattr(plugin, "search_index", None)
    if not type(index).__module__.startswith("material.") or not isinstance(
        getattr(index, "entries", None), list
    ):
        return None
    return KeptEntries(index, stored, nonces)


def entries_key(page: Any, html: str, nonces: Iterable[str], version: str) -> str:
    """What Material's indexer reads of ``page`` whose HTML is ``html``, the builds' nonces made alike."""
    for nonce in nonces:
        html = html.replace(nonce, "rpNonce")
    toc = json.dumps(_toc(page.toc))
    meta = json.dumps(page.meta, sort_keys=True, default=repr)
    return text_key(FORMAT, version, page.url, str(page.title), meta, toc, html)


def _toc(items: Iterable[Any]) -> list[Any]:
    return [[item.id, item.url, item.title, _toc(item.children)] for item in items]
