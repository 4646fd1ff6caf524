"""Every page's title is plain text, escaped once, wherever the theme prints it.

Material prints ``page.meta.title`` and ``page.title`` as HTML in the header, the navigation, the footer and
the search index, and ``page.title | striptags`` in ``<title>``, where ``striptags`` decodes entities again:
``&lt;/title&gt;&lt;script&gt;`` in a heading became a script in ``<head>``. Titles come from four places,
each of them a contributor's: front matter (checked as plain text and escaped by
:func:`course.sanitising.front_matter.escape_meta`), a page's first heading (MkDocs keeps its HTML, tags
stripped, entities as written), a notebook's first heading (mkdocs-jupyter reads it from the notebook's cells
unsanitised), and a file name (as written). :func:`give_plain_title` turns each into one value, text escaped
once, and puts it where every template looks first (``page.meta['title']``: printed as it is, never through
``striptags``) and in ``page.title`` (the navigation, the footer, the search index); the table of contents'
labels (a heading's HTML, tags stripped by a pattern, not a parser) are made plain text the same way.
"""

from __future__ import annotations

import html
import re
import urllib.parse
from typing import Any

from course.sanitising.front_matter import escape_text

_COMMENT_RE = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_TAG_RE = re.compile(r"<[^>]*(?:>|\Z)")


def text_of_html(value: str) -> str:
    """The plain text of an HTML title: comments and tags removed, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(_TAG_RE.sub("", _COMMENT_RE.sub("", value))).split())


def give_plain_title(page: Any, notebook_title: str | None = None) -> str | None:
    """Give ``page`` its title as plain text escaped once (see the module); returns it.

    ``notebook_title``: the title the course gives a worked notebook (its loader reads the notebook's first
    heading as plain text), used instead of mkdocs-jupyter's. The home page keeps the site's name in
    ``<title>`` (Material's own rule), so only its ``page.title`` is set.
    """
    meta = page.meta if isinstance(page.meta, dict) else {}
    if notebook_title is not None:
        title = escape_text(notebook_title)
    elif "title" in meta:
        title = str(meta["title"])  # front matter, already escaped by escape_meta
    elif "title" in vars(page) and page.title is not None:
        title = str(page.title)  # the navigation's (course.lesson_format.navigation escapes it)
    elif rendered := getattr(page, "_title_from_render", None):
        title = escape_text(text_of_html(rendered))  # the first heading's HTML
    elif page.is_homepage:
        title = "Home"
    else:
        title = escape_text(str(page.title or ""))  # the file name, as MkDocs spells it out
    if not page.is_homepage or "title" in meta:
        meta["title"] = title
        page.meta = meta
    page.title = title
    _plain_toc(getattr(page, "toc", None) or [])
    return title


def _plain_toc(items: Any) -> None:
    """The table of contents' labels (Material prints them as HTML) as plain text escaped once."""
    for item in items:
        item.title = escape_text(text_of_html(str(item.title)))
        _plain_toc(item.children)


def quote_edit_url(page: Any) -> None:
    """The page's "Edit this page" address with its file name percent-encoded, as a URL should be.

    MkDocs joins the file's path to ``edit_uri`` as written and Material prints it into ``href="..."``, so a
    file name holding ``"`` closed the attribute and added a handler on every page's edit button.
    """
    if getattr(page, "edit_url", None):
        page.edit_url = urllib.parse.quote(page.edit_url, safe=":/?#@!$&'()*+,;=%~")


def give_read_page_title(page: Any) -> None:
    """The title of a page read but not rendered (a partial ``serve`` rebuild): from its front matter, else
    its Markdown's first heading, whose text is taken as written, else its file name; escaped once."""
    meta = page.meta if isinstance(page.meta, dict) else {}
    if "title" in meta:
        meta["title"] = escape_text(html.unescape(str(meta["title"])))
        page.title = meta["title"]
    elif page.title is not None:
        page.title = escape_text(text_of_html(str(page.title)))
