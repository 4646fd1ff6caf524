"""The ``lessons`` block: a track's lesson list from front matter, so no index page keeps one by hand.

````markdown
```lessons
track: foundations
```
````

With ``track`` the list links relative to the track's folder (on ``docs/<track>/index.md``); without it,
every track is listed with links relative to the top of docs/ (use it on the home page). It is a
Python-Markdown preprocessor (it emits Markdown), so it works under any builder that runs Markdown extensions;
``docs_dir`` says where docs/tracks.yml and the lessons are (the MkDocs hook passes MkDocs' own).
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

from course.lesson_format.lessons import load_course
from course.lesson_format.navigation import lesson_list_markdown
from course.lesson_format.problems import Problem
from course.sanitising.source_files import load_yaml

FENCE_RE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[ \t]*lessons[ \t]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL
)


def parse_block(body: str) -> str | None:
    """The track named by a block's YAML body (None: all tracks); raises ValueError with the reason."""
    data = load_yaml(body) if body.strip() else {}
    if not isinstance(data, dict) or set(data) - {"track"}:
        raise ValueError("the lessons block takes only `track: <key>` (or nothing, for every track)")
    track = data.get("track")
    if track is not None and not isinstance(track, str):
        raise ValueError(f"track must be a track key, got {track!r}")
    return track


def find_problems(markdown: str, path: str, docs_dir: str = "docs") -> list[Problem]:
    """Problems of the ``lessons`` blocks in one page (bad YAML, unknown track)."""
    problems: list[Problem] = []
    for match in FENCE_RE.finditer(markdown):
        line = markdown.count("\n", 0, match.start()) + 1
        try:
            track = parse_block(match.group("body"))
        except (ValueError, yaml.YAMLError) as error:
            problems.append(Problem(path, "lessons block", str(error), "track: foundations", line=line))
            continue
        if track is not None:
            keys = [t.key for t in load_course(docs_dir).tracks]
            if track not in keys:
                problems.append(
                    Problem(
                        path,
                        "lessons block",
                        f"unknown track {track!r}; expected one of {', '.join(keys)}",
                        f"track: {keys[0] if keys else 'foundations'}",
                        line=line,
                    )
                )
    return problems


class LessonListPreprocessor(Preprocessor):
    """Replaces each ``lessons`` fence with the generated Markdown list."""

    def __init__(self, md: Markdown, docs_dir: str) -> None:
        super().__init__(md)
        self.docs_dir = docs_dir

    def run(self, lines: list[str]) -> list[str]:
        text = "\n".join(lines)
        if "lessons" not in text:
            return lines
        course = None

        def replace(match: re.Match[str]) -> str:
            nonlocal course
            try:
                track = parse_block(match.group("body"))
            except (ValueError, yaml.YAMLError) as error:
                return f'!!! failure "Lesson list"\n\n    {error}\n'
            course = course or load_course(self.docs_dir)
            return lesson_list_markdown(course, track, from_track_folder=track is not None)

        return FENCE_RE.sub(replace, text).split("\n")


class LessonListExtension(Extension):
    def __init__(self, **kwargs: Any) -> None:
        self.config = {"docs_dir": ["docs", "Folder holding tracks.yml and the lessons"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        # After whitespace normalisation (30), before fenced code blocks are stashed (25).
        md.preprocessors.register(
            LessonListPreprocessor(md, str(self.getConfig("docs_dir"))), "rp_lessons", 28
        )


def makeExtension(**kwargs: Any) -> Extension:
    return LessonListExtension(**kwargs)
