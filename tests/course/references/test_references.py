"""The bibliography (docs/references.yml) and citations by key in lessons."""

from __future__ import annotations

from pathlib import Path

import markdown
import pytest

from course.lesson_format import check as course_check
from course.references.bibliography import load_bibliography, parse_bibliography
from course.references.extension import find_citations, find_problems

ENTRY = """\
sarathi-serve:
  authors: [Amey Agrawal, Nitin Kedia, Ashish Panwar]
  title: Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve
  venue: OSDI
  year: 2024
  arxiv: "2403.02310"
mqa:
  authors: [Noam Shazeer]
  title: "Fast Transformer Decoding: One Write-Head is All You Need"
  venue: arXiv preprint
  year: 2019
  arxiv: "1911.02150"
roofline:
  authors: [Samuel Williams, Andrew Waterman, David Patterson]
  title: "Roofline"
  venue: CACM
  year: 2009
  doi: 10.1145/1498765.1498785
"""


def _docs(tmp_path: Path, text: str = ENTRY) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "references.yml").write_text(text, encoding="utf-8")
    return docs


def _render(docs: Path, text: str) -> str:
    return markdown.markdown(
        text,
        extensions=["toc", "course.references.extension"],
        extension_configs={"course.references.extension": {"docs_dir": str(docs)}},
    )


def test_a_citation_links_to_the_page_reference_list_in_order_of_first_citation(tmp_path: Path) -> None:
    html = _render(_docs(tmp_path), "Chunks [@sarathi-serve]. One head [@mqa; @sarathi-serve].\n")
    assert '<a href="#ref-sarathi-serve"' in html
    assert ">Agrawal et al., 2024</a>" in html
    assert '>Shazeer, 2019</a>; <a href="#ref-sarathi-serve"' in html
    listing = html.split('<h2 id="references">References</h2>')[1]
    assert listing.index('id="ref-sarathi-serve"') < listing.index('id="ref-mqa"')  # first cited first
    assert "roofline" not in listing  # only what the page cites
    assert '<a href="https://arxiv.org/abs/2403.02310">' in listing
    assert "arXiv:2403.02310" in listing


def test_a_page_without_citations_gets_no_reference_list(tmp_path: Path) -> None:
    assert "References" not in _render(_docs(tmp_path), "Plain text, and `[@mqa]` in code.\n")


def test_doi_entries_link_to_doi_org(tmp_path: Path) -> None:
    assert 'href="https://doi.org/10.1145/1498765.1498785"' in _render(_docs(tmp_path), "See [@roofline].\n")


def test_unknown_key_is_refused_with_did_you_mean(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    problems = find_problems("Intro.\n\nChunks [@sarathi-srve].\n", "serving/x.md", str(docs))
    assert [(p.file, p.line, p.field) for p in problems] == [("serving/x.md", 3, "citation")]
    assert "'sarathi-srve'" in problems[0].message
    assert problems[0].fix == "did you mean [@sarathi-serve]?"


def test_citations_in_code_are_not_citations() -> None:
    text = "a [@x]\n```\n[@y]\n```\n`[@z]` and [@w; @v]\n"
    assert find_citations(text) == [(1, "x"), (5, "w"), (5, "v")]


def test_a_locator_follows_the_work_it_points_into_and_the_work_joins_the_list(tmp_path: Path) -> None:
    html = _render(
        _docs(tmp_path), "Stages [@sarathi-serve, section 3.2]. Both [@mqa, table 1; @roofline].\n"
    )
    assert ">Agrawal et al., 2024</a>, section 3.2]" in html
    assert '>Shazeer, 2019</a>, table 1; <a href="#ref-roofline"' in html
    listing = html.split('<h2 id="references">References</h2>')[1]
    assert [key in listing for key in ('id="ref-sarathi-serve"', 'id="ref-mqa"', 'id="ref-roofline"')] == [
        True
    ] * 3
    assert "[@" not in html


def test_a_locator_does_not_change_the_keys_found() -> None:
    assert find_citations("[@x, section 2.3] and [@w, p. 4; @v]\n") == [(1, "x"), (1, "w"), (1, "v")]


@pytest.mark.parametrize(
    "written",
    ["[@Sarathi-Serve]", "[@mqa section 3]", "[@mqa; mqa]", "[@ mqa]", "[@mqa,]"],
)
def test_a_bracket_that_opens_like_a_citation_but_is_not_one_is_refused(tmp_path: Path, written: str) -> None:
    """Readers would see it as written and its work would be missing from the list (pipeline lesson)."""
    problems = find_problems(
        f"Intro.\n\nSee {written} here, and `[@code]` is fine.\n", "x.md", str(_docs(tmp_path))
    )
    assert [(p.line, p.field) for p in problems] == [(3, "citation")]
    assert written[:6] in problems[0].message
    assert "[@key, section 3.2]" in problems[0].fix


def test_check_refuses_an_unknown_key(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    (docs / "tracks.yml").write_text(
        "- key: serving\n  title: S\n  summary: S.\n  order: 4\n", encoding="utf-8"
    )
    page = docs / "page.md"
    page.write_text("See [@mqa] and [@mqq].\n", encoding="utf-8")
    settings = course_check.Settings(docs, ("course.references.extension",))
    problems, _ = course_check.check([page], settings)
    assert [p.fix for p in problems] == ["did you mean [@mqa]?"]


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (('arxiv: "2403.02310"', "arxiv: 2403.02310"), "reference 'sarathi-serve' arxiv", "in quotes"),
        (('arxiv: "2403.02310"', 'arxiv: "2403.23"'), "reference 'sarathi-serve' arxiv", "arXiv id"),
        (("year: 2024", "year: soon"), "reference 'sarathi-serve' year", "expected a year"),
        (("  venue: OSDI\n", "  venu: OSDI\n"), "reference 'sarathi-serve' venu", "not a field"),
        (('  arxiv: "1911.02150"\n', ""), "reference 'mqa'", "no arxiv, doi or url"),
    ],
)
def test_bad_entries_name_key_field_and_fix(change: tuple[str, str], field: str, message: str) -> None:
    _, problems = parse_bibliography(ENTRY.replace(*change, 1))
    assert any(p.field == field and message in p.message and p.fix for p in problems), problems


def test_the_course_bibliography_is_valid_and_holds_the_checked_identifiers() -> None:
    """Identifiers checked against each paper's arXiv, DOI or publisher page (December 2026)."""
    entries, problems = load_bibliography("docs")
    assert problems == []
    expected = {
        "sarathi-serve": "2403.02310",  # not 2403.02369, which is another paper
        "sarathi": "2308.16369",
        "vllm": "2309.06180",
        "distserve": "2401.09670",
        "splitwise": "2311.18677",
        "flashattention": "2205.14135",
        "gqa": "2305.13245",
        "mqa": "1911.02150",
        "deepseek-v2": "2405.04434",
        "deepseek-v3": "2412.19437",
        "mistral-7b": "2310.06825",
        "gemma-2": "2408.00118",
    }
    assert {key: entries[key].arxiv for key in expected} == expected
    assert entries["orca"].venue == "OSDI"
    assert entries["orca"].year == 2022
    # the peer-reviewed Mooncake (FAST '25), whose figures differ from its arXiv v1's
    assert (entries["mooncake"].venue, entries["mooncake"].year) == ("USENIX FAST", 2025)
    assert entries["mooncake"].url == "https://www.usenix.org/conference/fast25/presentation/qin"
    assert entries["little"].doi == "10.1287/opre.9.3.383"


def test_entries_that_would_cite_alike_get_year_suffixes() -> None:
    text = ENTRY + (
        'v2:\n  authors: [DeepSeek-AI]\n  title: V2\n  venue: arXiv\n  year: 2024\n  arxiv: "2405.04434"\n'
        'v3:\n  authors: [DeepSeek-AI]\n  title: V3\n  venue: arXiv\n  year: 2024\n  arxiv: "2412.19437"\n'
    )
    entries, problems = parse_bibliography(text)
    assert problems == []
    assert (entries["v2"].label, entries["v3"].label) == ("DeepSeek-AI, 2024a", "DeepSeek-AI, 2024b")
    assert entries["mqa"].label == "Shazeer, 2019"  # unique labels keep no suffix
