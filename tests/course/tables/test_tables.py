"""Each top-level table of a page in a box of its own (course/tables/extension.py)."""

from __future__ import annotations

import markdown

from course.tables.extension import BOX_CLASS

TABLE = "| a | b |\n|---|---|\n| 1 | 2 |\n"


def render(text: str) -> str:
    return markdown.markdown(text, extensions=["tables", "admonition", "course.tables.extension"])


def test_a_table_at_the_top_level_is_boxed_where_it_stood() -> None:
    html = render(f"Before.\n\n{TABLE}\nAfter.\n")
    assert html.replace("\n", "").startswith(
        f'<p>Before.</p><div class="{BOX_CLASS}"><table><thead><tr><th>a</th>'
    ), html
    # The paragraph after the table follows the box, not the table inside it.
    assert html.replace("\n", "").endswith("</table></div><p>After.</p>"), html


def test_every_top_level_table_is_boxed_once() -> None:
    html = render(f"{TABLE}\nBetween.\n\n{TABLE}")
    assert html.count(f'<div class="{BOX_CLASS}"><table>') == 2, html
    assert html.count("<div") == 2, html


def test_a_table_inside_a_section_stays_where_it_is() -> None:
    # Restyling a section's table restyles the section only; boxing it would change its margins
    # (Material's ``details > :last-child`` rules), so it is left alone.
    indented = "\n".join(f"    {line}" for line in TABLE.splitlines())
    html = render(f'!!! note "A note"\n\n{indented}\n')
    assert BOX_CLASS not in html, html
    assert "<table>" in html, html


def test_a_page_without_tables_is_unchanged() -> None:
    text = "# Title\n\nA paragraph.\n\n- a list\n"
    assert render(text) == markdown.markdown(text, extensions=["tables", "admonition"])
