"""MkDocs hook: a thin dispatcher from MkDocs events to plain functions in ``course``.

No logic lives here, so leaving MkDocs (for Zensical, which runs Markdown extensions but not hooks) costs little.
MkDocs restores ``sys.path`` after loading this file, so the project package is imported inside each event.
"""

from __future__ import annotations

from typing import Any


def on_config(config: Any) -> Any:
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return markdown


def on_post_build(config: Any) -> None:
    return None
