"""Numbers in prose: inserts and checked claims, their syntax, tolerances and fixes."""

from __future__ import annotations

import markdown
import pytest

from calculators import Scenario
from calculators.setting import site_setting, using
from course.numbers.extension import (
    NumberSyntaxError,
    Tolerance,
    find_numbers,
    parse_number,
    protect_pipes_in_table_rows,
    stated_value,
)


def test_numbers_parse_inserts_and_claims() -> None:
    insert = parse_number(" Scenario().decode().time_s | ms | .1f ")
    assert (insert.expression, insert.unit, insert.decimals, insert.is_claim) == (
        "Scenario().decode().time_s",
        "ms",
        1,
        False,
    )
    claim = parse_number(' "about 5 ms" == Scenario().decode().time_s | ms | within 10% ')
    assert claim.quoted == "about 5 ms"
    assert claim.tolerance == Tolerance(10, relative=True)
    assert parse_number("x | ms | 2sig").digits == 2
    assert parse_number('"3 ms" == x | ms | within 0.5').tolerance == Tolerance(0.5, relative=False)


@pytest.mark.parametrize(
    "source",
    [
        "Scenario()",
        '"about 5 ms" == Scenario().decode().time_s | ms',
        "x | furlongs",
        "x | ms | .1f | 2sig",
        "x | ms | bold",
    ],
)
def test_numbers_reject_malformed_syntax(source: str) -> None:
    with pytest.raises(NumberSyntaxError):
        parse_number(source)


def test_tolerance_edges() -> None:
    assert Tolerance(10, relative=True).allows(5.0, 4.776)
    assert not Tolerance(10, relative=True).allows(5.5, 5.0 * 0.99)
    assert Tolerance(0.5, relative=False).allows(5.0, 4.5)
    assert not Tolerance(0.5, relative=False).allows(5.0, 4.49)


def test_stated_value_reads_commas_and_decimals() -> None:
    assert stated_value("about 1,200 tokens") == 1200
    assert stated_value("roughly 4.8 ms") == 4.8
    assert stated_value("a few") is None


def test_numbers_in_code_are_not_numbers() -> None:
    text = "A {{ x | ms }}\n\n```\n{{ y | ms }}\n```\nand `{{ z | ms }}` and {{ w | s }}"
    assert find_numbers(text) == [(1, " x | ms "), (6, " w | s ")]


def test_rendered_number_equals_the_calculator() -> None:
    html = markdown.markdown(
        "It takes {{ Scenario().decode().time_s | ms | .1f }}.", extensions=["course.numbers.extension"]
    )
    with using(site_setting()):  # every figure of the site is computed under the site's setting
        expected = f"{Scenario().decode().time_s * 1e3:.1f} ms"
    assert f">{expected}</span>" in html
    assert 'class="rp-number"' in html


SITE_EXTENSIONS = [
    "tables",
    "attr_list",
    "pymdownx.superfences",
    "course.math.extension",
    "course.numbers.extension",
]


def test_a_number_in_a_table_cell_keeps_the_table_whole() -> None:
    # A table splits its rows on "|" before inline patterns run: the number's own pipes must not split it.
    page = (
        "| Phase | Time |\n"
        "|---|---|\n"
        '| decode | {{ Scenario(mode="peak", kv_traffic=False).decode().time_s | ms | .1f }} |\n'
        '| claim | {{ "about 5 ms" == Scenario(mode="peak", kv_traffic=False).decode().time_s | ms | '
        "within 10% }} |\n"
        "| code | `{{ a | b }}` |\n"
    )
    html = markdown.markdown(page, extensions=SITE_EXTENSIONS)
    # 16e9 B of BF16 weights / 3.35e12 B/s = 4.776 ms -> "4.8 ms"; the claim shows its own text
    assert html.count("<tr>") == 4
    assert html.count("<td>") == 6  # two cells a row, none split off
    assert '<td><span class="rp-number" data-expr="Scenario(mode=&quot;peak&quot;, kv_traffic=False)' in html
    assert ">4.8 ms</span></td>" in html
    assert ">about 5 ms</span></td>" in html
    assert "rp-number--error" not in html
    assert "<td><code>{{ a | b }}</code></td>" in html  # code stays code
    # a line that is no table row is left as written
    prose = "It takes {{ Scenario().decode().time_s | ms | .1f }}."
    assert protect_pipes_in_table_rows(prose) == prose
    with using(site_setting()):
        shown = f">{Scenario().decode().time_s * 1e3:.1f} ms</span>."
    assert shown in markdown.markdown(prose, extensions=SITE_EXTENSIONS)


def test_misspelt_unit_gets_the_corrected_reference_as_its_fix() -> None:
    from course.numbers.extension import find_problems

    claim, insert = find_problems(
        '{{ "about 16 GB" == Scenario().weight_bytes | gb | within 5% }}'
        " {{ Scenario().decode().time_s | msec }}",
        "a.md",
    )
    assert "did you mean 'GB'" in claim.message
    assert claim.fix == '{{ "about 16 GB" == Scenario().weight_bytes | GB | within 5% }}'
    assert insert.fix == "{{ Scenario().decode().time_s | ms }}"


def test_a_figure_that_is_not_zero_never_reads_as_zero() -> None:
    from course.numbers.extension import find_problems

    # 131,072 bytes in unit B (billions) reads "0 billion"; in bytes it reads 131,072 and passes.
    (problem,) = find_problems('{{ Scenario("llama-3.1-8b").setup.kv_bytes_per_token | B | .0f }}', "a.md")
    assert "reads '0 billion'" in problem.message
    assert "| bytes" in problem.fix
    assert (
        find_problems('{{ Scenario("llama-3.1-8b").setup.kv_bytes_per_token | bytes | .0f }}', "a.md") == []
    )


def test_figures_in_front_matter_takeaways_are_checked_at_their_line() -> None:
    from course.lesson_format.validation import block_validators, validate_page

    lesson = (
        "---\n"
        "title: T\n"
        "summary: One line.\n"
        "takeaways:\n"
        '  - A 2,000-token prefill costs {{ "about nine" == '
        "Scenario().request(2000).prefill_cost_in_decode_steps | steps | within 5% }} decode steps.\n"
        "---\n"
        "Body.\n"
    )
    problems = validate_page(lesson, "inference/x.md", block_validators(["course.numbers.extension"]))
    assert [(p.line, p.field) for p in problems] == [(5, 'claim "about nine"')]
    assert 'e.g. "about seven"' in problems[0].fix


def test_spelled_out_numbers_are_stated_values() -> None:
    from course.numbers.extension import stated_value

    assert stated_value("roughly seven") == 7
    assert stated_value("Twenty of them") == 20
    assert stated_value("about 1,200 tokens, not seven") == 1200  # digits first
    assert stated_value("someone") is None  # whole words only
