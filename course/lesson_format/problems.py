"""Problems found in lessons, reported all together with file, line, field, expectation and fix.

A contributor fixing a lesson wants every problem of a build at once, each telling where it is, what was
expected and an example fix; raising on the first one would make them rebuild once per mistake.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong in one lesson file."""

    file: str  # path relative to docs/, e.g. "inference/prefill-vs-decode.md"
    field: str  # front-matter field or block, e.g. "track" or "chart 'roofline' parameter 'gpu'"
    message: str  # what is wrong and what was expected
    fix: str  # an example fix
    line: int | None = None  # 1-based line in the file, where known

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.field}: {self.message}. Fix: {self.fix}"


class LessonProblems(Exception):
    """Raised at the end of a build that found problems; its message lists every one."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.field))
        count = len(self.problems)
        listing = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{count} lesson problem{'s' if count != 1 else ''} found:\n{listing}")
