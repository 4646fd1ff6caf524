"""A warm build adds a page's search entries without reading the page, and reads it again when anything
Material's indexer reads of it changed.

Each "build" is a new Material ``SearchIndex`` wrapped by :func:`keep_entries`, as the hook wraps the search
plugin's at ``on_config``, given a page; the entries must equal what Material itself adds, and its parser's
runs are counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from material.plugins.search import plugin as search
from mkdocs.structure.toc import get_toc

from course.search_index.excluded_parts import set_aside
from course.search_index.kept_entries import KeptEntries, keep_plugin_entries
from course.stored_results import StoredResults

HTML = '<h1 id="a">A lesson</h1><p>Batching<!--rpT{nonce}:1--> grows.</p><h2 id="b">More</h2><p>Text.</p>'
TOC = [
    {
        "level": 1,
        "id": "a",
        "name": "A lesson",
        "children": [{"level": 2, "id": "b", "name": "More", "children": []}],
    }
]


class FakeFile:
    src_uri = "serving/batching.md"


class FakePage:
    """The parts of MkDocs' Page that Material's indexer reads."""

    def __init__(self, html: str, meta: dict[str, Any] | None = None, toc: Any = TOC) -> None:
        self.file = FakeFile()
        self.content = html
        self.meta = meta or {}
        self.toc = get_toc(toc)
        self.url = "serving/batching/"
        self.title = "A lesson"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pages Material's parser read."""
    read: list[str] = []
    feed = search.Parser.feed

    def counted(self: Any, data: str) -> None:
        read.append(data)
        feed(self, data)

    monkeypatch.setattr(search.Parser, "feed", counted)
    return read


def entries(cache: Path, page: FakePage, nonce: str = "1" * 16) -> list[dict[str, Any]]:
    index = search.SearchIndex(lang=["en"], separator="", pipeline=[], fields={})
    KeptEntries(index, StoredResults(cache), [nonce])
    index.add_entry_from_context(page)
    return index.entries


def material(page: FakePage) -> list[dict[str, Any]]:
    index = search.SearchIndex(lang=["en"], separator="", pipeline=[], fields={})
    index.add_entry_from_context(page)
    return index.entries


def test_the_same_page_is_indexed_from_the_store_as_material_indexes_it(
    tmp_path: Path, reads: list[str]
) -> None:
    first = entries(tmp_path, FakePage(HTML.format(nonce="1" * 16)))
    # A later build: its nonce differs, in a comment the parser ignores.
    again = entries(tmp_path, FakePage(HTML.format(nonce="2" * 16)), nonce="2" * 16)
    assert len(reads) == 1
    assert first == again == material(FakePage(HTML.format(nonce="1" * 16)))
    assert [e["location"] for e in first] == ["serving/batching/", "serving/batching/#b"]


@pytest.mark.parametrize(
    "changed",
    [
        FakePage(HTML.format(nonce="1" * 16).replace("Text.", "Other text.")),
        FakePage(HTML.format(nonce="1" * 16), meta={"tags": ["serving"]}),
        FakePage(HTML.format(nonce="1" * 16), meta={"search": {"exclude": True}}),
        FakePage(HTML.format(nonce="1" * 16), toc=[{**TOC[0], "id": "c"}]),
    ],
    ids=["text", "tags", "excluded", "toc"],
)
def test_a_change_that_material_reads_indexes_the_page_again(
    tmp_path: Path, reads: list[str], changed: FakePage
) -> None:
    expected = material(changed)
    reads.clear()
    entries(tmp_path, FakePage(HTML.format(nonce="1" * 16)))
    assert entries(tmp_path, changed) == expected  # read again
    assert entries(tmp_path, changed) == expected  # and its new entries kept in turn
    assert len(reads) == (1 if changed.meta.get("search") else 2)  # an excluded page is not read at all


def test_only_an_enabled_material_search_index_is_wrapped(tmp_path: Path) -> None:
    """With search off, Material's plugin has no index; MkDocs' own plugin keeps its entries elsewhere."""
    from mkdocs.contrib.search import SearchPlugin as MkDocsSearch

    off = search.SearchPlugin()
    off.load_config({"enabled": False})
    off.on_config(None)
    plain = MkDocsSearch()
    plain.search_index = object()
    on = search.SearchPlugin()
    on.search_index = search.SearchIndex(lang=["en"], separator="", pipeline=[], fields={})
    stored = StoredResults(tmp_path)
    assert [keep_plugin_entries(p, stored, []) is not None for p in (off, plain, on)] == [False, False, True]


def test_a_page_whose_entries_are_kept_is_neither_set_aside_nor_read(
    tmp_path: Path, reads: list[str]
) -> None:
    """As the hook does it: ``known`` on the whole HTML; on a miss the parts are set aside and the index reads
    the page; the next build finds the page known, and the index adds what it added, reading nothing."""
    whole = HTML.format(nonce="1" * 16).replace(
        "<p>Text.</p>", "<p>Text.</p><div data-search-exclude><svg><text>p99</text></svg></div>"
    )

    def build() -> tuple[bool, list[dict[str, Any]]]:
        index = search.SearchIndex(lang=["en"], separator="", pipeline=[], fields={})
        kept = KeptEntries(index, StoredResults(tmp_path), ["1" * 16])
        page = FakePage(whole)
        known = kept.known(page, whole)
        if not known:
            page.content = set_aside(whole).html
        index.add_entry_from_context(page)
        return known, index.entries

    first, again = build(), build()
    assert first == (False, material(FakePage(whole)))
    assert again == (True, first[1])
    assert len(reads) == 2  # the first build's, and material()'s
