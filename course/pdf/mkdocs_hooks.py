"""MkDocs hook of ``mkdocs-pdf.yml``: after the build, write the combined print page and its cover.

A thin dispatcher, like ``course/mkdocs_hooks.py``: it keeps the navigation MkDocs built (after the course's
own hook has made it from the lessons' front matter) and hands it to :func:`course.pdf.combine.write`. MkDocs
restores ``sys.path`` after loading a hook file, so the package is imported inside the events."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.ridgepoint.pdf")
_nav: list[Any] = []  # MkDocs' navigation items; read after the build, when every page knows its title


def on_nav(nav: Any, config: Any, files: Any) -> Any:
    _nav[:] = nav.items
    return nav


def on_post_build(config: Any) -> None:
    from course.pdf.combine import without_prefixes, write
    from course.pdf.from_mkdocs import nav_items, site_info

    excluded = config["extra"].get("pdf_exclude", [])
    nav = without_prefixes(nav_items(_nav), excluded)
    combined = write(Path(config["site_dir"]), nav, site_info(config))
    for problem in combined.problems:
        log.warning("PDF print page: %s", problem)
