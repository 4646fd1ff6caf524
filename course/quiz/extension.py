"""The ```` ```quiz ```` block: a lesson's "Check your understanding" questions, checked at build time.

The block's YAML is read by :mod:`course.quiz.model` (numeric answers are calculator expressions, so the key
cannot drift from the lesson) and rendered by :mod:`course.quiz.html`. The fence is registered with
pymdownx.superfences from here, so mkdocs.yml needs no ``custom_fences`` entry and other fences (charts,
widgets) register theirs the same way without touching a shared list.

A broken quiz renders its problems in the page instead of the quiz, and :func:`find_problems` (called by the
site's build hook) reports the same problems with file lines and fails the build.
"""

from __future__ import annotations

from typing import Any

from markdown import Extension, Markdown

from course.quiz.html import render_issues, render_quiz
from course.quiz.model import find_problems, parse_quiz
from course.sanitising.trusted import store_trusted

__all__ = ["QuizExtension", "find_problems", "format_quiz", "makeExtension"]

FENCE_NAME = "quiz"


def format_quiz(
    source: str, language: str, class_name: str, options: dict[str, Any], md: Markdown, **kwargs: Any
) -> str:
    """Superfences formatter: the quiz's HTML, or the list of its problems."""
    parsed = parse_quiz(source)
    if parsed.quiz is None:
        return render_issues(parsed.issues)
    return render_quiz(parsed.quiz)


def _accept_no_options(
    language: str, inputs: dict[str, str], options: dict[str, Any], attrs: dict[str, Any], md: Markdown
) -> bool:
    """Superfences validator: a quiz fence takes no header options."""
    return not inputs


class QuizExtension(Extension):
    """Registers the ``quiz`` fence with pymdownx.superfences (loading superfences if the site did not)."""

    def extendMarkdown(self, md: Markdown) -> None:
        if "fenced_code_block" not in md.preprocessors or not hasattr(
            md.preprocessors["fenced_code_block"], "extension"
        ):
            md.registerExtensions(["pymdownx.superfences"], {})
        fences: Any = md.preprocessors["fenced_code_block"]  # pymdownx.superfences' preprocessor
        superfences = fences.extension
        superfences.extend_super_fences(
            FENCE_NAME,
            _formatter,
            _accept_no_options,
            None,
        )


def _formatter(
    src: str = "",
    language: str = "",
    options: dict[str, Any] | None = None,
    md: Markdown | None = None,
    **kwargs: Any,
) -> str:
    # Superfences calls formatters with keywords only; this adapts them to format_quiz's plain signature.
    assert md is not None
    return store_trusted(md, format_quiz(src, language, FENCE_NAME, options or {}, md, **kwargs))


def makeExtension(**kwargs: Any) -> QuizExtension:
    return QuizExtension(**kwargs)
