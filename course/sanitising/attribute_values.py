"""The values a lesson may give ``class``, ``id`` and ``name``: allow-lists, so it cannot pass for the site.

The site's own furniture is recognised by its classes and names: Material's ``md-*`` (the header, the search
box, a banner), our ``rp-*`` blocks (the red problems box, a quiz's verdict) and Material's ``__md_scope``
global. A lesson that wrote ``class="md-banner"`` or ``{: .rp-problems }`` drew a message that looked like the
site's own; ``<a name="__md_scope">`` replaced a global that Material's script reads (a named element becomes
a property of ``window``). So:

- :data:`LESSON_CLASSES`: the only classes a lesson may write itself (attribute lists, HTML, admonition and
  details types): Material's admonition types and our ``deeper`` box;
- :func:`kept_classes`: what the sanitiser keeps of a ``class`` value, which also holds the classes the
  Markdown extensions of mkdocs.yml write for a lesson's content (:data:`MARKDOWN_CLASSES`, highlighted
  code's token classes, ``language-*``);
- :func:`reserved_name`: an ``id`` or ``name`` that starts like the site's own.
"""

from __future__ import annotations

import re

RESERVED_PREFIXES = ("__", "rp-", "widget-")  # Material's own (#__config, __md_scope) and our blocks' names
NAMING_ATTRIBUTES = frozenset({"id", "name"})  # both name an element for scripts (window.name, #fragment)

ADMONITION_TYPES: frozenset[str] = frozenset(
    {
        *("note", "abstract", "summary", "tldr", "info", "todo", "tip", "hint", "important", "success"),
        *("check", "done", "question", "help", "faq", "warning", "caution", "attention", "failure", "fail"),
        *("missing", "danger", "error", "bug", "example", "quote", "cite"),
    }
)
"""Material's admonition types (``!!! note``, ``??? tip``): a lesson's callouts, styled by the theme."""

LESSON_CLASSES: frozenset[str] = ADMONITION_TYPES | {"deeper", "inline", "end"}
"""Classes a lesson may write: the admonition types, our ``??? deeper`` box, Material's inline placement."""

MARKDOWN_CLASSES: frozenset[str] = frozenset(
    {
        *("admonition", "admonition-title", "footnote", "footnote-ref", "footnote-backref", "headerlink"),
        *("toc", "highlight", "highlighttable", "linenos", "linenodiv", "filename"),
        *("takeaways", "rp-cite", "rp-references", "rp-references__id", "rp-table"),
    }
)
"""Classes the Markdown extensions of mkdocs.yml write around a lesson's own content, which the sanitiser
sees with the lesson's HTML: admonitions, footnotes, headings' anchors, highlighted code, and our Key
takeaways box, citations and tables' boxes (read from a build of the course: every class the page
sanitiser saw)."""

TOKEN_CLASS_RE = re.compile(r"^[a-z]{1,2}[a-z0-9]?(?:-[A-Z][A-Za-z]*)*$")
"""Pygments' token classes in code (``nn``, ``s2``, ``l-Scalar-Plain``), never ``md-*`` or ``rp-*``."""
LANGUAGE_CLASS_RE = re.compile(r"^language-[a-z0-9+#-]{1,30}$")  # a fenced block's language, for highlighting

FIX_CLASS = (
    "remove the class: a lesson's look comes from the theme; callouts are admonitions "
    "(!!! note, ??? deeper ...), allowed classes: {classes}"
)


def class_problem(value: str) -> str | None:
    """Why a lesson may not write ``class="value"`` (or ``.value``); ``None`` when every class is allowed."""
    refused = [name for name in value.split() if name not in LESSON_CLASSES]
    if not refused:
        return None
    return (
        f"uses the class {refused[0]!r}, which lessons may not write (the site's own furniture, md-* and "
        "rp-*, is recognised by its classes)"
    )


def lesson_classes_fix() -> str:
    return FIX_CLASS.format(classes=", ".join(sorted(LESSON_CLASSES)))


def kept_classes(value: str) -> str | None:
    """The classes of ``value`` the sanitiser keeps (``None`` when none is left): an allow-list of what a
    lesson writes and what Markdown writes for it."""
    kept = [
        name
        for name in value.split()
        if name in LESSON_CLASSES
        or name in MARKDOWN_CLASSES
        or TOKEN_CLASS_RE.match(name)
        or LANGUAGE_CLASS_RE.match(name)
    ]
    return " ".join(kept) if kept else None


def reserved_name(attribute: str, value: str) -> bool:
    """Whether ``attribute="value"`` names an element as the site names its own (``id``, ``name``)."""
    return attribute.lower() in NAMING_ATTRIBUTES and value.strip().startswith(RESERVED_PREFIXES)
