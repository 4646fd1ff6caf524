"""Problems found in lessons, reported all together with file, line, field, expectation and fix.

A contributor fixing a lesson wants every problem of a build at once, each telling where it is, what was
expected and an example fix; raising on the first one would make them rebuild once per mistake.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    """One thing wrong in one lesson file."""

    file: str  # path relative to docs/, e.g. "serving/prefill-vs-decode.md"
    field: str  # front-matter field or block, e.g. "track" or "chart 'roofline' parameter 'gpu'"
    message: str  # what is wrong and what was expected
    fix: str  # an example fix
    line: int | None = None  # 1-based line in the file, where known

    def __str__(self) -> str:
        where = f"{printable(self.file)}:{self.line}" if self.line else printable(self.file)
        fix = "\n".join(printable(line) for line in self.fix.split("\n"))
        return log_safe(f"{where}: {printable(self.field)}: {printable(self.message)}. Fix: {fix}")


def printable(text: str) -> str:
    """``text`` with every character that is not printable written as its escape (``\\n``, ``\\x1b``).

    File names, fields and messages quote what contributors wrote; printed raw, a newline in a file name
    started a line of its own in CI logs (``::error ...``, a GitHub Actions workflow command), and an escape
    sequence could rewrite a terminal. Letters of any script are kept.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def log_safe(text: str) -> str:
    """``text`` with no line that a CI runner reads as a workflow command (``::name ...`` after spaces)."""
    lines = text.split("\n")
    return "\n".join("\\" + line if line.lstrip().startswith("::") else line for line in lines)


class LessonProblems(Exception):
    """Raised at the end of a build that found problems; its message lists every one."""

    def __init__(self, problems: Iterable[Problem], docs_prefix: str = "") -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.field))
        count = len(self.problems)
        # With the docs folder in front (docs/inference/x.md), as `check` prints them: one path for both.
        listing = "\n".join(f"  - {'' if p.file.startswith('/') else docs_prefix}{p}" for p in self.problems)
        super().__init__(f"{count} lesson problem{'s' if count != 1 else ''} found:\n{listing}")


# ---------------------------------------------------------------------------------------------- while serving
_CONTENT_STARTS = (re.compile(r'<article class="md-content__inner[^"]*">'), re.compile(r"<body[^>]*>"))


def problems_panel(problems: Iterable[Problem], page_file: str) -> str:
    """The lesson problems as an HTML panel for the top of a page, this page's own problems first.

    Under ``serve`` a build with problems still writes every page, with this panel on top, so that the author
    sees file, line and fix where they are looking, and the server keeps answering: MkDocs' own server holds
    every request after a failed build until one succeeds. ``build`` and CI still fail on any problem.
    """
    ordered = sorted(problems, key=lambda p: (p.file != page_file, p.file, p.line or 0, p.field))
    items = "".join(
        f"<li{' data-this-page' if p.file == page_file else ''}><code>{html.escape(_where(p))}</code> "
        f"<strong>{html.escape(p.field)}</strong>: {html.escape(p.message)}.<br>Fix: "
        f"<code>{html.escape(p.fix)}</code></li>"
        for p in ordered
    )
    count = len(ordered)
    return (
        '<aside class="rp-problems" role="alert" style="border:2px solid #c62828;padding:.6em 1em;'
        'margin:0 0 1.2em;font-size:.75rem;background:rgba(198,40,40,.06)">'
        f"<p><strong>{count} lesson problem{'s' if count != 1 else ''}</strong>: this page is a preview; "
        "<code>python3 dev.py build</code> fails until they are fixed. Save a fix and the page reloads.</p>"
        f"<ul>{items}</ul></aside>"
    )


def with_problems_panel(page_html: str, panel: str) -> str:
    """``page_html`` with ``panel`` at the start of the article (or of the body, on a page without one)."""
    for start in _CONTENT_STARTS:
        if match := start.search(page_html):
            return page_html[: match.end()] + panel + page_html[match.end() :]
    return panel + page_html


def docs_prefix(docs_dir: str | Path) -> str:
    """``"docs/"``: the docs folder as the shell sees it (relative to the working directory if inside)."""
    folder = Path(docs_dir).resolve()
    try:
        shown = folder.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = folder.as_posix()
    return "" if shown in ("", ".") else shown.rstrip("/") + "/"


def _where(problem: Problem) -> str:
    return f"docs/{problem.file}:{problem.line}" if problem.line else f"docs/{problem.file}"
