"""The ```` ```chart ```` block: a chart from :mod:`calculators.charts`, drawn at build time.

A lesson names a chart and its parameters in YAML::

    ```chart
    name: roofline
    caption: The H100's roofline, with prefill and decode placed on it.
    gpus: [h100-sxm]
    ```

The block becomes a figure (see :mod:`course.charts.markup`): the static SVG rendered by vl-convert (cached
on disk by content hash, so an unchanged chart costs a file read), the caption, and the data as a collapsed
table. The fence is registered with pymdownx.superfences from here, so mkdocs.yml needs no ``custom_fences``
entry and the extension works wherever Python-Markdown runs (MkDocs, Zensical, a test).

A bad block renders its message in the page, and :func:`find_problems` (run on every page by the site's
validation) reports it with file and line, which fails the build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import yaml
from markdown import Extension, Markdown

from calculators.charts import CHARTS, ChartError, chart_kind
from calculators.charts.render import render_chart_data
from course.charts.markup import figure_html
from course.charts.stored_data import stored_chart_data
from course.lesson_format.background import BeingComputed, placeholder_box
from course.lesson_format.problems import Problem
from course.sanitising.source_files import load_yaml
from course.sanitising.trusted import store_trusted

__all__ = ["ChartBlock", "ChartsExtension", "find_problems", "makeExtension", "parse_block", "render_block"]

FENCE_NAME = "chart"
_OPENING = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*?)[ \t]*$")


@dataclass(frozen=True)
class ChartBlock:
    """A parsed chart block: the chart's name, its caption, and the parameters passed to its builder."""

    name: str
    caption: str
    params: dict[str, Any]


def parse_block(source: str) -> ChartBlock:
    """Read a chart block's YAML; raises :class:`ChartError` naming the field and a fix."""
    try:
        body = load_yaml(source)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        where = f" at line {line} of the block" if line is not None else ""
        raise ChartError(
            "?",
            "(block)",
            f"not valid YAML{where}: {getattr(error, 'problem', error)}",
            "write one `key: value` per line, lists as [a, b]",
            line,
        ) from None
    if not isinstance(body, dict):
        raise ChartError(
            "?",
            "(block)",
            f"expected `key: value` lines, got {type(body).__name__}",
            "start with `name: roofline` and `caption: ...`",
        )
    params = dict(body)
    if "name" not in params:
        raise ChartError("?", "name", f"missing; known charts: {', '.join(CHARTS)}", "add `name: roofline`")
    name = chart_kind(params.pop("name")).name
    caption = params.pop("caption", None)
    if not isinstance(caption, str) or not caption.strip():
        raise ChartError(
            name,
            "caption",
            "a chart needs a caption: one sentence saying what it shows",
            "add `caption: The H100's roofline, with prefill and decode placed on it.`",
        )
    return ChartBlock(name, " ".join(caption.split()), params)


def render_block(source: str, cache_dir: Path | None = None) -> str:
    """The HTML for one chart block: the figure, or a visible error box naming the problem and the fix."""
    try:
        block = parse_block(source)
        data = stored_chart_data(block.name, block.params, cache_dir)
        rendered = render_chart_data(data, cache_dir)
    except BeingComputed:  # under dev.py serve: a worker is computing and drawing it
        return placeholder_box("chart")
    except ChartError as error:
        return (
            '<div class="admonition failure rp-chart-error"><p class="admonition-title">This chart cannot be '
            f"drawn</p><p>{escape(str(error))}</p></div>"
        )
    return figure_html(
        rendered, caption=block.caption, columns=data.table_columns, rows=data.table_rows, chart=block.name
    )


def _fence_blocks(markdown: str) -> list[tuple[int, str]]:
    """Each chart fence's (1-based line of its opening, body), skipping fences nested in other code blocks."""
    lines = markdown.splitlines()
    blocks: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        opening = _OPENING.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, indent = opening["fence"], opening["indent"]
        closing = re.compile(rf"^{re.escape(indent)}{fence[0]}{{{len(fence)},}}[ \t]*$")
        end = next((j for j in range(index + 1, len(lines)) if closing.match(lines[j])), len(lines))
        if opening["info"].lstrip(".").split(" ")[0] == FENCE_NAME:
            body = "\n".join(line[len(indent) :] for line in lines[index + 1 : end])
            blocks.append((index + 1, body))
        index = end + 1
    return blocks


def _line_of(body: str, key: str) -> int:
    """Offset (1-based) of ``key:`` inside a block body, or 0 when it is not written there."""
    for offset, line in enumerate(body.splitlines(), start=1):
        if re.match(rf"^\s*{re.escape(key)}\s*:", line):
            return offset
    return 0


# What a writer might expect to be rendered in a caption, which is printed as text (course/charts/markup.py):
# HTML's angle brackets, and Markdown's links, code and strong emphasis. A link there showed its brackets and
# its .md target to readers (the memory wall lesson's roofline).
_CAPTION_MARKUP = re.compile(r"[<>]|\[[^\]]*\]\([^)]*\)|`[^`]*`|\*\*[^*]+\*\*|__[^_]+__")


def find_problems(markdown: str, path: str) -> list[Problem]:
    """Every chart block of a page that cannot be drawn: bad YAML, unknown chart or parameter, no caption.

    The line is the offending parameter's own line where it is written, else the fence's opening line.
    """
    problems = []
    for line, body in _fence_blocks(markdown):
        try:
            block = parse_block(body)
            markup = _CAPTION_MARKUP.search(block.caption)
            if markup:
                problems.append(
                    Problem(
                        path,
                        f"chart '{block.name}' caption",
                        f"is plain text: {markup.group(0)!r} would show as written, not as HTML or a link",
                        "say it in words and link from the lesson's prose: "
                        "caption: The H100's roofline, with prefill and decode on it",
                        line + _line_of(body, "caption"),
                    )
                )
            stored_chart_data(block.name, block.params)
        except BeingComputed:
            continue  # under dev.py serve: checked on the rebuild that follows, when it is computed
        except ChartError as error:
            field = f"chart '{error.chart}'" + (
                "" if error.parameter == "(block)" else f" parameter '{error.parameter}'"
            )
            offset = error.line if error.line is not None else _line_of(body, error.parameter)
            problems.append(Problem(path, field, error.problem, error.fix, line + offset))
    return problems


def _accept(
    language: str, inputs: dict[str, str], options: dict[str, Any], attrs: dict[str, Any], md: Any
) -> bool:
    """Superfences validator: a chart fence takes no header options (everything is in its YAML)."""
    return not inputs


class ChartsExtension(Extension):
    """Registers the ``chart`` fence with pymdownx.superfences (loading superfences if the site did not)."""

    def __init__(self, **kwargs: Any) -> None:
        self.config = {
            "cache_dir": [
                "",
                "folder for rendered charts (default: $RIDGEPOINT_CHART_CACHE or "
                ".cache/charts in the working directory)",
            ]
        }
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        preprocessors = md.preprocessors
        if "fenced_code_block" not in preprocessors or not hasattr(
            preprocessors["fenced_code_block"], "extension"
        ):
            md.registerExtensions(["pymdownx.superfences"], {})
        configured = self.getConfig("cache_dir")
        cache_dir = Path(configured) if configured else None

        def formatter(src: str = "", md: Markdown | None = None, **_: Any) -> str:
            assert md is not None  # superfences passes the Markdown instance
            return store_trusted(md, render_block(src, cache_dir))

        fences: Any = md.preprocessors["fenced_code_block"]  # pymdownx.superfences' preprocessor
        fences.extension.extend_super_fences(FENCE_NAME, formatter, _accept, None)


def makeExtension(**kwargs: Any) -> ChartsExtension:
    return ChartsExtension(**kwargs)
