"""Redirects: a moved lesson keeps its old address (docs/redirects.yml -> a refresh page at build)."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.redirects.pages import load_redirects, page_url, redirect_html, write_redirect_pages


@pytest.mark.parametrize(
    ("source", "url"),
    [
        ("index.md", ""),
        ("serving/index.md", "serving/"),
        ("serving/prefill-vs-decode.md", "serving/prefill-vs-decode/"),
        ("serving/notebooks/derivation.py", "serving/notebooks/derivation/"),
    ],
)
def test_page_url_is_the_directory_url_mkdocs_gives(source: str, url: str) -> None:
    assert page_url(source) == url


def _docs(tmp_path: Path, redirects: str, pages: tuple[str, ...] = ("serving/x.md",)) -> Path:
    docs = tmp_path / "docs"
    for page in pages:
        (docs / page).parent.mkdir(parents=True, exist_ok=True)
        (docs / page).write_text("# Page\n", encoding="utf-8")
    (docs / "redirects.yml").write_text(redirects, encoding="utf-8")
    return docs


def test_old_address_gets_a_relative_refresh_page_without_script(tmp_path: Path) -> None:
    docs = _docs(tmp_path, "inference/x.md: serving/x.md\n")
    site = tmp_path / "site"
    [page] = write_redirect_pages(docs, site)
    assert page == site / "inference" / "x" / "index.html"
    html = page.read_text(encoding="utf-8")
    # inference/x/ -> ../../serving/x/: relative, so it works under any base path (a project site, a copy)
    assert '<meta http-equiv="refresh" content="0; url=../../serving/x/">' in html
    assert '<a href="../../serving/x/">' in html  # for browsers that do not follow the refresh
    assert "<script" not in html


def test_a_track_index_redirect_lands_on_the_new_track() -> None:
    assert 'url=../serving/"' in redirect_html("inference/index.md", "serving/index.md")


@pytest.mark.parametrize(
    ("redirects", "pages", "message"),
    [
        ("inference/x.md: serving/y.md\n", ("serving/x.md",), "docs/serving/y.md, which does not exist"),
        ("serving/x.md: serving/z.md\n", ("serving/x.md", "serving/z.md"), "still exists"),
        ("a/x.md: b/x.md\nb/x.md: serving/x.md\n", ("serving/x.md",), "itself redirected"),
        ("- inference/x.md\n", ("serving/x.md",), "mapping of old page: new page"),
        ("inference/x: serving/x.md\n", ("serving/x.md",), "page sources"),
    ],
)
def test_bad_redirects_are_reported_with_a_fix(
    tmp_path: Path, redirects: str, pages: tuple[str, ...], message: str
) -> None:
    _, problems = load_redirects(_docs(tmp_path, redirects, pages))
    assert any(message in p.message for p in problems), problems
    assert all(p.file == "redirects.yml" and p.fix for p in problems)


def test_the_course_redirects_are_valid_and_cover_the_moved_lesson() -> None:
    redirects, problems = load_redirects("docs")
    assert problems == []
    assert ("inference/prefill-vs-decode.md", "serving/prefill-vs-decode.md") in {
        (r.old, r.new) for r in redirects
    }
