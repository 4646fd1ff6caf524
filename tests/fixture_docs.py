"""A small course of fixture lessons for tests that build or serve one: the good lesson and its tracks.

The rebuild-cache tests and the partial-rebuild tests (tests/course/lesson_format/test_rebuild_caches.py,
test_partial_rebuilds.py) both need a docs folder that builds cleanly and fast; it is made here once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import TESTS

FIXTURES = TESTS / "fixtures" / "broken_lessons"


def good_lesson_docs(destination: Path) -> Path:
    """``destination/docs`` with the home page, both tracks' pages and ``foundations/good-lesson.md``."""
    docs = destination / "docs"
    (docs / "foundations").mkdir(parents=True)
    (docs / "inference").mkdir()
    shutil.copy(FIXTURES / "tracks.yml", docs)
    shutil.copy(FIXTURES / "index.md", docs)
    for name in ("index.md", "good-lesson.md"):
        shutil.copy(FIXTURES / "foundations" / name, docs / "foundations" / name)
    shutil.copy(FIXTURES / "inference" / "index.md", docs / "inference")
    return docs
