"""Each table at the top level of a page gets a box of its own, a plain ``<div class="rp-table">``.

Why: as it sets up a page, Material's bundle moves every ``table:not([class])`` of the article into its
scroll wrapper (``div.md-typeset__scrollwrap > div.md-typeset__table``), taking the table out and putting it
back. Its stylesheet has ``.md-typeset table:not([class]) + *``, a rule on whatever follows a table, and
Chromium cannot tell which elements a change to a sibling of that shape reaches, so it marks the table's
parent and everything in it for restyling. For a table at the top level of a lesson that parent is the
article: on tokens-parameters-and-flops at phone width the handler that runs at ``DOMContentLoaded`` restyled
570 elements instead of 67 (December 2026, traced with Chromium's invalidation tracking), the longest part of
the longest task after the lesson's first paint (issue 23). In a box of its own, the table's parent is the
box, and the restyle stays inside it.

The box has no style: block margins collapse through it, so once Material has wrapped the table the page is
laid out as before. Without JavaScript, Material's rule on whatever follows a table no longer reaches the
box's follower, and ridgepoint.css gives it the same spacing (``.no-js .md-typeset .rp-table + *``). Checked
on the four lessons with top-level tables and the authors' reference, at 1280 and 390 px, with and without
JavaScript: every heading, paragraph and table where it was. Only the page's top level is boxed: a table
inside an admonition or a "Go deeper" section restyles that section only, and a box there would change its
margins (Material's ``details > :last-child`` rules).
"""

from __future__ import annotations

import xml.etree.ElementTree as etree
from typing import Any

from markdown import Extension, Markdown
from markdown.treeprocessors import Treeprocessor

BOX_CLASS = "rp-table"


class TableBoxProcessor(Treeprocessor):
    """Puts each table that is a child of the page's root into a ``div.rp-table`` at the same place."""

    def run(self, root: etree.Element) -> None:
        for index, child in enumerate(list(root)):
            if child.tag != "table":
                continue
            box = etree.Element("div", {"class": BOX_CLASS})
            box.tail, child.tail = child.tail, None
            root[index] = box
            box.append(child)


class TableBoxExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # Any priority works after the block parser, which builds the tables; this is before the table of
        # contents (5).
        md.treeprocessors.register(TableBoxProcessor(md), "rp_table_box", 6)


def makeExtension(**kwargs: Any) -> Extension:
    return TableBoxExtension(**kwargs)
