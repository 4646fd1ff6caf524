"""A warm build reuses a page's render made from the same inputs, and renders again when any of them changed.

Each "build" here is what MkDocs does for one page: a new Page read from docs/, the hook's
:func:`~course.lesson_format.rendered_pages.keep_render`, then ``page.render``. Markdown's conversions are
counted, so a reuse that still renders, or a change that does not, fails.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import markdown
import pytest
from mkdocs.config import load_config
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from course.lesson_format import rendered_pages
from course.lesson_format.rendered_pages import NONCE_STAND_IN, keep_render
from course.stored_results import StoredResults

LESSON = """# A lesson

Intro, linking [the other page](b.md#second).

## Second

Text.
"""


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Markdown texts converted, in order."""
    converted: list[str] = []
    convert = markdown.Markdown.convert

    def counted(self: markdown.Markdown, source: str) -> str:
        converted.append(source)
        return convert(self, source)

    monkeypatch.setattr(markdown.Markdown, "convert", counted)
    return converted


@pytest.fixture
def site(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(LESSON, encoding="utf-8")
    (docs / "b.md").write_text("# B\n\n## Second\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: Test\nmarkdown_extensions:\n  - toc:\n      permalink: true\n", encoding="utf-8"
    )
    return tmp_path


def build(site: Path, shared: str = "shared", **settings: Any) -> Page:
    """One build of a.md with a cache in ``site``/cache: what the page holds after MkDocs rendered it."""
    config = load_config(config_file=str(site / "mkdocs.yml"), **settings)
    docs = config.docs_dir
    files = Files([File(name, docs, config.site_dir, config.use_directory_urls) for name in ("a.md", "b.md")])
    page = Page(None, files.get_file_from_path("a.md"), config)
    page.read_source(config)
    source = (site / "docs" / "a.md").read_text(encoding="utf-8")
    keep_render(page, source, shared, StoredResults(site / "cache"))
    page.render(config, files)
    return page


def rendered(page: Page) -> tuple[Any, ...]:
    links = {file.src_uri: anchors for file, anchors in (page.links_to_anchors or {}).items()}
    toc = [(item.title, item.id, item.level, [c.id for c in item.children]) for item in page.toc]
    first_active = getattr(page.toc.items[0], "active", None)  # MkDocs marks the first entry
    return page.content, toc, page.title, page.present_anchor_ids, links, first_active


def test_the_same_inputs_reuse_the_render_whole(site: Path, conversions: list[str]) -> None:
    first = build(site)
    again = build(site)
    assert len(conversions) == 1
    assert rendered(again) == rendered(first)
    assert rendered(first)[4]["b.md"] == {"second": "b.md#second"}  # the links MkDocs checks after
    assert "Intro" in first.content
    assert first.title == "A lesson"


def test_an_edit_of_the_page_or_of_what_pages_share_renders_again(site: Path, conversions: list[str]) -> None:
    build(site)
    (site / "docs" / "a.md").write_text(LESSON.replace("Text.", "Other text."), encoding="utf-8")
    assert "Other text." in build(site).content
    build(site, shared="another front matter or code")
    build(site, use_directory_urls=False)  # the command line changes how links are written
    assert len(conversions) == 4
    build(site, use_directory_urls=False)
    assert len(conversions) == 4


def test_a_render_that_warned_is_not_kept(site: Path, conversions: list[str], caplog: Any) -> None:
    """Strict mode fails on a warning (here a link to a missing page): it must be logged on every build."""
    (site / "docs" / "a.md").write_text(LESSON.replace("b.md#second", "missing.md"), encoding="utf-8")
    for _ in range(2):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            build(site)
        assert any("missing.md" in record.getMessage() for record in caplog.records)
    assert len(conversions) == 2


def test_our_blocks_carry_the_reusing_builds_nonce(
    site: Path, conversions: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The final sanitiser trusts only blocks marked with the running build's nonce: a reused render must
    carry it where the stored one carried its own, and nowhere else."""
    monkeypatch.setattr(rendered_pages, "BUILD_NONCE", "1" * 32)
    (site / "docs" / "a.md").write_text(LESSON + "\n<!--rpT" + "1" * 32 + ":1-->\n", encoding="utf-8")
    page = build(site)
    assert "1" * 32 in page.content  # stands here for a block of ours (Markdown passes the comment on)
    monkeypatch.setattr(rendered_pages, "BUILD_NONCE", "2" * 32)
    page = build(site)
    assert len(conversions) == 1
    assert "2" * 32 in page.content
    assert "1" * 32 not in page.content


def test_a_render_holding_the_stand_in_is_not_kept(site: Path, conversions: list[str]) -> None:
    """A lesson that writes the stand-in must not have a later build put its nonce there."""
    (site / "docs" / "a.md").write_text(LESSON + f"\n{NONCE_STAND_IN}\n", encoding="utf-8")
    build(site)
    page = build(site)
    assert len(conversions) == 2
    assert rendered_pages.BUILD_NONCE not in page.content


def test_a_render_at_debug_level_is_not_kept(site: Path, conversions: list[str]) -> None:
    """At debug level MkDocs records no links to check for anchors: a render kept then would have a later
    build check none of this page's links."""
    logger = logging.getLogger("mkdocs.structure.pages")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        build(site)
    finally:
        logger.setLevel(level)
    page = build(site)
    assert len(conversions) == 2
    assert page.links_to_anchors is not None
