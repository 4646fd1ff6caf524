"""The ``reference`` block: a section of the lesson author's reference, generated from the calculators.

````markdown
```reference
section: gpu-presets
```
````

The block is replaced by the Markdown that :func:`course.author_reference.sections.section_markdown` writes
(tables of quantities, units, charts, widgets and presets with their sources), so the reference page holds
prose and section blocks only and is rebuilt from the code on every build. It is a preprocessor emitting
Markdown, like the ``lessons`` block, so it works under any builder that runs Python-Markdown extensions.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

from course.author_reference.sections import SECTIONS, section_markdown
from course.lesson_format.problems import Problem
from course.sanitising.source_files import load_yaml

FENCE_RE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[ \t]*reference[ \t]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL
)
EXAMPLE = "section: gpu-presets"


def parse_block(body: str) -> str:
    """The section a block names; raises ValueError saying what is expected."""
    try:
        data = load_yaml(body)
    except yaml.YAMLError as error:
        raise ValueError(f"not valid YAML ({getattr(error, 'problem', error)})") from None
    if not isinstance(data, dict) or set(data) != {"section"}:
        raise ValueError(
            f"a reference block takes exactly one key, `section`; sections: {', '.join(SECTIONS)}"
        )
    section = data["section"]
    if section not in SECTIONS:
        raise ValueError(f"unknown section {section!r}; expected one of {', '.join(SECTIONS)}")
    return str(section)


def find_problems(markdown: str, path: str) -> list[Problem]:
    """Blocks naming no known section, and sections the calculators can no longer generate."""
    problems: list[Problem] = []
    for match in FENCE_RE.finditer(markdown):
        line = markdown.count("\n", 0, match.start()) + 1
        try:
            section_markdown(parse_block(match.group("body")))
        except Exception as error:  # a section that cannot be generated must name itself, not crash the build
            problems.append(Problem(path, "reference block", str(error), EXAMPLE, line=line))
    return problems


class ReferencePreprocessor(Preprocessor):
    """Replaces each ``reference`` fence with its generated Markdown (or a visible failure box)."""

    def run(self, lines: list[str]) -> list[str]:
        text = "\n".join(lines)
        if "reference" not in text:
            return lines

        def replace(match: re.Match[str]) -> str:
            try:
                return section_markdown(parse_block(match.group("body")))
            except Exception as error:
                return f'!!! failure "Reference"\n\n    {error}\n'

        return FENCE_RE.sub(replace, text).split("\n")


class AuthorReferenceExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # Before fenced code blocks are stashed (25), so the generated tables are ordinary Markdown.
        md.preprocessors.register(ReferencePreprocessor(md), "rp_author_reference", 29)


def makeExtension(**kwargs: Any) -> Extension:
    return AuthorReferenceExtension(**kwargs)
