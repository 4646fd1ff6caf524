"""Results of a build's slow, pure steps, kept on disk while the code that made them stays the same.

A warm build (the caches of a first one filled, nothing edited) was ten times plain Material's (issue 23:
10.5 s against 1.0 s), and most of the difference was work whose answer could not have changed: checking
each lesson again (2.4 s), sanitising and scanning the twenty notebook pages again (1.1 s), converting the
notebooks' downloads again. Each of those steps is a function of its input text and of the code that runs
it, so its result is kept under a key naming that text, in a folder named by :func:`code_fingerprint`:
any change to the project's code (``course/``, ``calculators/``), to a library that the steps call, or to
Python itself gives a new folder, and the folders of other fingerprints are removed. Only what a step is
sure of is stored (a page check that passed, never a problem: a problem is cheap to find again and may
depend on the machine, as the expressions' time limit does).
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from calculators.charts.render import write_atomically
from course.folder_digest import fingerprint_folder, folder_digest, installed_versions

PROJECT = Path(__file__).resolve().parents[1]
# The libraries whose behaviour a stored result depends on: Markdown and its extensions render the pages that
# are checked, nh3 sanitises, latex2mathml draws formulas, PyYAML reads blocks, Pygments highlights code,
# jupytext converts notebooks.
LIBRARIES = ("markdown", "pymdown-extensions", "nh3", "latex2mathml", "pyyaml", "pygments", "jupytext")


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A short hash of the project's code and the libraries' versions, taken once per import of this module
    (``serve`` imports the project afresh when its code changed: course.lesson_format.pages)."""
    digest = hashlib.sha256(sys.version.encode())
    for folder in ("course", "calculators"):
        digest.update(f"\0{folder}\0{folder_digest(PROJECT / folder)}".encode())
    digest.update(f"\0{installed_versions(LIBRARIES)}".encode())
    return digest.hexdigest()[:16]


def text_key(*parts: str) -> str:
    """One key for several texts (a NUL between them, so that ("ab", "c") and ("a", "bc") differ)."""
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


class StoredResults:
    """Key -> text under ``root``, for the current :func:`code_fingerprint`; a file per key.

    Reading a missing or unreadable file is a miss. Writing goes through a temporary file replaced whole
    (:func:`~calculators.charts.render.write_atomically`), so that two builds sharing the cache (a test run
    beside ``serve``) never read half a result.
    """

    def __init__(self, root: str | Path) -> None:
        self.folder = fingerprint_folder(root, code_fingerprint())

    def get(self, key: str) -> str | None:
        try:
            return (self.folder / key).read_text(encoding="utf-8")
        except (OSError, ValueError):
            return None

    def put(self, key: str, text: str) -> None:
        with contextlib.suppress(OSError):  # a cache that cannot be written makes the next build a cold one
            write_atomically(self.folder / key, text)

    def kept(self, key: str, make: Callable[[], str]) -> str:
        """The result stored under ``key``, else ``make()``, stored for the next build."""
        if (text := self.get(key)) is None:
            self.put(key, text := make())
        return text
