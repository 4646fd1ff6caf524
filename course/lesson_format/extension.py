"""The lesson checks as a Markdown extension: a page with a wrong claim or a broken block fails any build.

Under MkDocs the hook runs every block's ``find_problems`` on every page and reports all problems of the
course together at the end (and, under ``serve``, on the pages). A builder that runs Python-Markdown
extensions but not MkDocs hooks (Zensical) would otherwise build such a page with exit status 0, showing
the error markers the blocks render. This extension runs the same validators on the page it converts and
raises :class:`~course.lesson_format.problems.LessonProblems`, which fails that builder's build.

The hook configures it with ``collect: true``, so that under MkDocs it checks nothing twice. Line numbers
are counted from the Markdown the builder hands over, after its front matter, where a builder strips it.
"""

from __future__ import annotations

from typing import Any

from markdown import Markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor

from course.lesson_format.glossary import find_problems as find_problems  # the page check of terms' order
from course.lesson_format.problems import LessonProblems
from course.lesson_format.validation import DEFAULT_BLOCK_MODULES, block_validators, validate_page
from course.sanitising.source_tree import docs_tree_problems

PAGE = "this page"  # Python-Markdown does not say which file it converts; the builder's error names it


class LessonCheckPreprocessor(Preprocessor):
    """Raises on the first page with a problem, listing every problem of that page."""

    def __init__(self, md: Markdown, docs_dir: str) -> None:
        super().__init__(md)
        self.docs_dir = docs_dir

    def run(self, lines: list[str]) -> list[str]:
        validators = block_validators(DEFAULT_BLOCK_MODULES)
        # Links, pipes, odd names and duplicate addresses under docs/ fail a build without our hook too.
        problems = docs_tree_problems(self.docs_dir)
        problems += validate_page("\n".join(lines), PAGE, validators, self.docs_dir)
        if problems:
            raise LessonProblems(problems)
        return lines


class LessonCheckExtension(Extension):
    def __init__(self, **kwargs: Any) -> None:
        self.config = {
            "collect": [
                False,
                "True where a build collects and reports the problems itself (the MkDocs hook)",
            ],
            "docs_dir": ["docs", "Folder holding tracks.yml and the lessons"],
        }
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        if self.getConfig("collect"):
            return
        # Before every block's own preprocessor (the highest of theirs is 30), so that it reads the source.
        md.preprocessors.register(
            LessonCheckPreprocessor(md, str(self.getConfig("docs_dir"))), "rp_check", 40
        )


def makeExtension(**kwargs: Any) -> LessonCheckExtension:
    return LessonCheckExtension(**kwargs)
