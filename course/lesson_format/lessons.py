"""The lesson format: tracks (docs/tracks.yml) and each lesson's front matter, parsed into typed records.

Navigation, track index pages, previous/next and the "Key takeaways" box are all derived from these records,
so a mistake in front matter would silently misplace a lesson. Parsing therefore never raises: it returns what
it could read plus every :class:`~course.lesson_format.problems.Problem` found, each naming file, line,
field, what was expected and an example fix, so that a build can report all of them together.

A lesson is a Markdown file ``docs/<track>/<lesson-id>.md`` (not ``index.md``); its id is the file stem.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from course.folder_digest import folder_digest
from course.lesson_format.comparatives import course_takeaway_problems
from course.lesson_format.problems import Problem
from course.sanitising.front_matter import FIX as PLAIN_TEXT_FIX
from course.sanitising.front_matter import plain_text_problem
from course.sanitising.source_files import (
    MAX_YAML_FILE_CHARS,
    compose_yaml,
    load_yaml,
    read_source,
    yaml_problem,
)
from course.sanitising.source_tree import docs_tree_problems, is_plain_file, markdown_sources

TRACKS_FILE = "tracks.yml"
MAX_TAKEAWAYS = 6
FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
LESSON_ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

REQUIRED_FIELDS: Mapping[str, str] = {
    "title": 'title: "The memory wall"',
    "summary": "summary: Why a GPU spends most of its time waiting for memory.",
    "track": "track: foundations",
    "order": "order: 1",
    "takeaways": "takeaways:\n  - Decode reads every weight once per step, so bandwidth sets its speed.",
}
OPTIONAL_FIELDS: Mapping[str, str] = {
    "prerequisites": "prerequisites: [memory-wall]",
}
# Keys MkDocs or Material understand on any page; allowed in lessons without being part of our schema.
# Not ``template`` or ``icon``: a lesson does not choose which theme file renders it.
PASSTHROUGH_FIELDS = frozenset({"hide", "search", "status", "description", "subtitle"})


@dataclass(frozen=True)
class PlannedLesson:
    """A lesson a track will hold but nobody has written yet: listed as planned, never linked."""

    id: str
    title: str
    summary: str


@dataclass(frozen=True)
class Track:
    """A group of lessons read in order; one entry of docs/tracks.yml. ``order`` is the track's number."""

    key: str
    title: str
    summary: str
    order: int
    # Whether each lesson of the track must have a worked notebook (``notebooks: required``, the default;
    # ``notebooks: optional`` for a track of drafts or test fixtures). The scaffold always writes one.
    notebook_required: bool = True
    planned: tuple[PlannedLesson, ...] = ()


@dataclass(frozen=True)
class Lesson:
    """One lesson's validated front matter, with where it lives."""

    id: str  # the file stem, e.g. "prefill-vs-decode"
    path: str  # relative to docs/, with forward slashes, e.g. "serving/prefill-vs-decode.md"
    title: str
    summary: str
    track: str
    order: int
    takeaways: tuple[str, ...]
    prerequisites: tuple[str, ...] = ()


@dataclass
class Course:
    """Everything the site layer needs: tracks, lessons, other pages, and the problems found reading them."""

    tracks: list[Track]
    lessons: list[Lesson]
    problems: list[Problem] = field(default_factory=list)

    def track(self, key: str) -> Track | None:
        return next((t for t in self.tracks if t.key == key), None)

    def lessons_in(self, track: str) -> list[Lesson]:
        """The track's lessons in reading order (order, then id so that the result is stable)."""
        return sorted(
            (lesson for lesson in self.lessons if lesson.track == track), key=lambda x: (x.order, x.id)
        )

    def lesson_by_path(self, path: str) -> Lesson | None:
        return next((lesson for lesson in self.lessons if lesson.path == path), None)

    def lesson_by_id(self, lesson_id: str) -> Lesson | None:
        return next((lesson for lesson in self.lessons if lesson.id == lesson_id), None)

    def planned_in(self, track: str) -> list[PlannedLesson]:
        """The track's planned lessons still unwritten.

        A lesson with a planned id replaces the entry, so whoever writes it need not edit docs/tracks.yml (and
        parallel branches do not collide there).
        """
        found = self.track(track)
        written = {lesson.id for lesson in self.lessons}
        return [p for p in found.planned if p.id not in written] if found else []


# ---------------------------------------------------------------------------------------------- front matter
@dataclass(frozen=True)
class FrontMatter:
    """A file's raw front matter: its mapping, the line of each top-level key, where the body starts."""

    data: dict[str, Any]
    key_lines: dict[str, int]
    start_line: int  # 1-based line of the opening ---
    body_line: int  # 1-based line where the Markdown body starts


def split_front_matter(text: str, path: str) -> tuple[FrontMatter | None, list[Problem]]:
    """Read the YAML front matter at the top of ``text``; ``None`` (and no problem) when there is none."""
    match = FRONT_MATTER_RE.match(text)
    if not match:
        if text.startswith("---"):
            return None, [
                Problem(
                    path,
                    "front matter",
                    "the front matter opened with --- is never closed",
                    "end the front matter with a line holding only ---",
                    line=1,
                )
            ]
        return None, []
    source = match.group(1) or ""
    body_line = text.count("\n", 0, match.end()) + 1 + (0 if text[: match.end()].endswith("\n") else 1)
    try:
        node = compose_yaml(source)
        data = load_yaml(source)
    except yaml.YAMLError as error:
        fix = (
            'quote values that contain ": " or start with [ { * & ! | > \' " % @, e.g. '
            'title: "Prefill vs decode: the two phases"'
        )
        problem = yaml_problem(error, path, "front matter", fix, first_line=2)
        return None, [problem if problem.line else replace(problem, line=1)]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None, [
            Problem(
                path,
                "front matter",
                f"must be a mapping of fields, got a {type(data).__name__}",
                "write one `field: value` per line, e.g. title: The memory wall",
                line=2,
            )
        ]
    key_lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            key_lines[str(key_node.value)] = 2 + key_node.start_mark.line
    return FrontMatter({str(k): v for k, v in data.items()}, key_lines, 1, body_line), []


def blank_front_matter(text: str) -> str:
    """``text`` with its front matter lines emptied, so that line numbers found in the body match the file."""
    match = FRONT_MATTER_RE.match(text)
    if not match:
        return text
    return "\n" * text.count("\n", 0, match.end()) + text[match.end() :]


PROSE_KEY_RE = re.compile(r"^(?:summary|takeaways)\s*:")
LIST_ITEM_RE = re.compile(r"^\s+-\s|^-\s")


def front_matter_prose_only(text: str) -> str:
    """``text`` with its front matter emptied except the prose readers see: ``summary`` and ``takeaways``.

    Those sentences are rendered as Markdown (the track list, the Key takeaways box), so a figure in them is
    checked like one in the body; keeping them on their own lines keeps line numbers true to the file.
    """
    match = FRONT_MATTER_RE.match(text)
    if not match:
        return text
    kept: list[str] = []
    in_takeaways = False
    for line in text[: match.end()].split("\n"):
        if PROSE_KEY_RE.match(line):
            in_takeaways = line.startswith("takeaways")
            kept.append(line.split(":", 1)[1])  # a one-line list (takeaways: [...]) is prose too
        elif in_takeaways and (LIST_ITEM_RE.match(line) or line.startswith((" ", "\t"))):
            kept.append(line)
        else:
            in_takeaways = False
            kept.append("")
    return "\n".join(kept) + text[match.end() :]


# -------------------------------------------------------------------------------------------------- tracks
NOTEBOOK_RULES = ("required", "optional")  # the values of a track's ``notebooks`` key


def parse_tracks(text: str, path: str = TRACKS_FILE) -> tuple[list[Track], list[Problem]]:
    """Parse docs/tracks.yml: a list of ``{key, title, summary, order}`` and optionally ``notebooks``."""
    example = "- key: foundations\n  title: The GPU and its memory\n  summary: One line.\n  order: 1"
    try:
        data = load_yaml(text, MAX_YAML_FILE_CHARS)
    except yaml.YAMLError as error:
        return [], [yaml_problem(error, path, "tracks", example)]
    if not isinstance(data, list) or not data:
        return [], [Problem(path, "tracks", "expected a non-empty list of tracks", example)]
    tracks: list[Track] = []
    problems: list[Problem] = []
    for index, entry in enumerate(data, start=1):
        where = f"track #{index}"
        if not isinstance(entry, dict):
            problems.append(
                Problem(path, where, "expected a mapping with key, title, summary, order", example)
            )
            continue
        missing = [name for name in ("key", "title", "summary", "order") if name not in entry]
        if missing:
            problems.append(Problem(path, where, f"is missing {', '.join(missing)}", example))
            continue
        key, order = entry["key"], entry["order"]
        if not isinstance(key, str) or not LESSON_ID_RE.match(key):
            problems.append(
                Problem(
                    path,
                    f"{where} key",
                    f"expected a lowercase-hyphenated name, got {key!r}",
                    "key: foundations",
                )
            )
            continue
        if isinstance(order, bool) or not isinstance(order, int):
            problems.append(
                Problem(path, f"{where} order", f"expected a whole number, got {order!r}", "order: 1")
            )
            continue
        title_problem = plain_text_problem(entry["title"])
        if title_problem:
            problems.append(Problem(path, f"{where} title", title_problem, PLAIN_TEXT_FIX))
            continue
        notebooks = entry.get("notebooks", "required")
        if notebooks not in NOTEBOOK_RULES:
            problems.append(
                Problem(
                    path,
                    f"{where} notebooks",
                    f"expected {' or '.join(NOTEBOOK_RULES)}, got {notebooks!r}",
                    "notebooks: required",
                )
            )
            continue
        planned, planned_problems = _parse_planned(entry.get("planned"), path, f"track {key!r} planned")
        problems.extend(planned_problems)
        tracks.append(
            Track(key, str(entry["title"]), str(entry["summary"]), order, notebooks == "required", planned)
        )
    problems.extend(_duplicate_planned(tracks, path))
    seen: dict[str, Track] = {}
    for track in tracks:
        if track.key in seen:
            problems.append(
                Problem(path, f"track {track.key!r}", "is defined twice", "keep one entry per key")
            )
        seen[track.key] = track
    return sorted(seen.values(), key=lambda t: (t.order, t.key)), problems


PLANNED_EXAMPLE = (
    "planned:\n    - id: batching\n      title: Batching\n"
    "      summary: One read of the weights serves the batch."
)


def _parse_planned(value: object, path: str, where: str) -> tuple[tuple[PlannedLesson, ...], list[Problem]]:
    """A track's ``planned`` list: entries of ``{id, title, summary}``; absent or empty is fine."""
    if value is None:
        return (), []
    if not isinstance(value, list):
        return (), [
            Problem(path, where, f"expected a list of lessons, got {_describe(value)}", PLANNED_EXAMPLE)
        ]
    planned: list[PlannedLesson] = []
    problems: list[Problem] = []
    for index, entry in enumerate(value, start=1):
        if not isinstance(entry, dict) or any(
            not isinstance(entry.get(name), str) or not entry[name].strip()
            for name in ("id", "title", "summary")
        ):
            problems.append(
                Problem(
                    path,
                    f"{where} #{index}",
                    "needs an id, a title and a summary, each one line of text",
                    PLANNED_EXAMPLE,
                )
            )
            continue
        if not LESSON_ID_RE.match(entry["id"]):
            problems.append(
                Problem(
                    path,
                    f"{where} #{index} id",
                    "expected the lesson's future file stem (lowercase words joined by -), "
                    f"got {entry['id']!r}",
                    "id: kv-memory-and-paging",
                )
            )
            continue
        planned.append(PlannedLesson(entry["id"], entry["title"].strip(), entry["summary"].strip()))
    return tuple(planned), problems


def _duplicate_planned(tracks: list[Track], path: str) -> list[Problem]:
    """Each planned id once in the whole course: it is the lesson id the entry waits for."""
    problems: list[Problem] = []
    owner: dict[str, str] = {}
    for track in tracks:
        for planned in track.planned:
            if planned.id in owner:
                problems.append(
                    Problem(
                        path,
                        f"track {track.key!r} planned",
                        f"{planned.id!r} is also planned in track {owner[planned.id]!r}",
                        "keep one entry per planned lesson",
                    )
                )
            owner.setdefault(planned.id, track.key)
    return problems


# ------------------------------------------------------------------------------------------------- lessons
def is_lesson_path(path: str, track_keys: Iterable[str], text: str = "") -> bool:
    """A lesson is ``<track>/<id>.md`` (not a track index), or any page whose front matter names a track.

    Other pages (the home page, a contributor's guide) are ordinary pages without the lesson schema.
    """
    parts = path.split("/")
    if parts[-1] == "index.md" or not parts[-1].endswith(".md"):
        return False
    if len(parts) == 2 and parts[0] in set(track_keys):
        return True
    return re.search(r"^track\s*:", front_matter_source(text), re.MULTILINE) is not None


def front_matter_source(text: str) -> str:
    """The YAML between a file's opening and closing ``---`` ("" when it has none)."""
    match = FRONT_MATTER_RE.match(text)
    return (match.group(1) or "") if match else ""


def _text_field(data: dict[str, Any], name: str, path: str, line: int | None, problems: list[Problem]) -> str:
    value = data.get(name)
    example = REQUIRED_FIELDS[name]
    if not isinstance(value, str):
        problems.append(Problem(path, name, f"expected text, got {_describe(value)}", example, line=line))
        return ""
    if not value.strip():
        problems.append(Problem(path, name, "must not be empty", example, line=line))
    elif "\n" in value.strip():
        problems.append(Problem(path, name, "must be a single line", example, line=line))
    return value.strip()


def _describe(value: object) -> str:
    if value is None:
        return "nothing (the field is empty)"
    if isinstance(value, list):
        return f"a list ({value!r})"
    if isinstance(value, dict):
        return "a mapping"
    return f"{type(value).__name__} {value!r}"


def _closest(word: object, candidates: list[str]) -> str | None:
    close = difflib.get_close_matches(str(word), candidates, n=1, cutoff=0.75)
    return close[0] if close else None


def parse_lesson(path: str, text: str, track_keys: Iterable[str]) -> tuple[Lesson | None, list[Problem]]:
    """Validate one lesson's front matter against the schema; ``path`` is relative to docs/."""
    keys = list(track_keys)
    front, problems = split_front_matter(text, path)
    if problems:
        return None, problems
    if front is None:
        example = "---\n" + "\n".join(REQUIRED_FIELDS.values()) + "\n---"
        return None, [
            Problem(
                path,
                "front matter",
                "a lesson starts with YAML front matter between --- lines",
                f"begin the file with:\n{example}",
                line=1,
            )
        ]
    data, lines = front.data, front.key_lines
    problems = []
    known = set(REQUIRED_FIELDS) | set(OPTIONAL_FIELDS) | PASSTHROUGH_FIELDS
    # A misspelt field is one problem, not two ("titl" unknown and "title" missing): the unknown key says
    # which field it looks like, and that field is not reported missing as well.
    meant = {name: _closest(name, [f for f in known if f not in data]) for name in data if name not in known}
    for name, example in REQUIRED_FIELDS.items():
        if name not in data and name not in meant.values():
            problems.append(
                Problem(
                    path,
                    name,
                    "is required but missing",
                    f"add `{example.splitlines()[0]}`",
                    line=front.start_line,
                )
            )
    for name, guess in meant.items():
        fields = ", ".join([*REQUIRED_FIELDS, *OPTIONAL_FIELDS])
        hint = f"did you mean {guess!r}? " if guess else ""
        problems.append(
            Problem(
                path,
                name,
                f"{hint}{name!r} is not a lesson field (known: {fields})",
                f"rename it to `{guess}:`" if guess else "remove it or fix its spelling",
                line=lines.get(name),
            )
        )

    title = _text_field(data, "title", path, lines.get("title"), problems) if "title" in data else ""
    summary = _text_field(data, "summary", path, lines.get("summary"), problems) if "summary" in data else ""

    track = data.get("track")
    folder = path.split("/")[0] if "/" in path else ""
    if "track" in data:
        if not isinstance(track, str) or track not in keys:
            problems.append(
                Problem(
                    path,
                    "track",
                    f"unknown track {track!r}; expected one of {', '.join(keys)}",
                    f"track: {folder if folder in keys else keys[0] if keys else 'foundations'}"
                    " (or add the track to docs/tracks.yml)",
                    line=lines.get("track"),
                )
            )
        elif folder and folder != track:
            problems.append(
                Problem(
                    path,
                    "track",
                    f"is {track!r} but the file lives in docs/{folder}/",
                    f"move the file to docs/{track}/ or write track: {folder}",
                    line=lines.get("track"),
                )
            )
    order = data.get("order")
    if "order" in data and (isinstance(order, bool) or not isinstance(order, int) or order < 1):
        problems.append(
            Problem(
                path,
                "order",
                f"expected a whole number from 1, got {_describe(order)}",
                "order: 2",
                line=lines.get("order"),
            )
        )

    takeaways = data.get("takeaways")
    if "takeaways" in data:
        good_list = isinstance(takeaways, list) and all(isinstance(t, str) and t.strip() for t in takeaways)
        if not good_list:
            problems.append(
                Problem(
                    path,
                    "takeaways",
                    f"expected a list of sentences, got {_describe(takeaways)}",
                    REQUIRED_FIELDS["takeaways"],
                    line=lines.get("takeaways"),
                )
            )
        elif isinstance(takeaways, list) and not 1 <= len(takeaways) <= MAX_TAKEAWAYS:
            problems.append(
                Problem(
                    path,
                    "takeaways",
                    f"expected 1 to {MAX_TAKEAWAYS} sentences, got {len(takeaways)}",
                    "keep the few ideas a reader must remember",
                    line=lines.get("takeaways"),
                )
            )

    prerequisites = data.get("prerequisites", [])
    if prerequisites is None:
        prerequisites = []
    if not isinstance(prerequisites, list) or not all(isinstance(p, str) for p in prerequisites):
        problems.append(
            Problem(
                path,
                "prerequisites",
                f"expected a list of lesson ids, got {_describe(prerequisites)}",
                OPTIONAL_FIELDS["prerequisites"],
                line=lines.get("prerequisites"),
            )
        )
        prerequisites = []

    lesson_id = Path(path).stem
    if not LESSON_ID_RE.match(lesson_id):
        problems.append(
            Problem(
                path,
                "file name",
                f"lesson id {lesson_id!r} must be lowercase words joined by -",
                "rename the file, e.g. docs/serving/prefill-vs-decode.md",
                line=None,
            )
        )
    if problems:
        return None, problems
    assert isinstance(track, str)
    assert isinstance(order, int)
    assert isinstance(takeaways, list)
    return Lesson(
        lesson_id,
        path,
        title,
        summary,
        track,
        order,
        tuple(t.strip() for t in takeaways),
        tuple(prerequisites),
    ), []


def check_lessons(
    lessons: list[Lesson], key_lines: Mapping[str, Mapping[str, int]] | None = None
) -> list[Problem]:
    """Checks across lessons: prerequisites exist, ids are unique, orders are unique within a track."""
    lines = key_lines or {}
    problems: list[Problem] = []
    by_id: dict[str, Lesson] = {}
    for lesson in sorted(lessons, key=lambda x: x.path):
        if lesson.id in by_id:
            problems.append(
                Problem(
                    lesson.path,
                    "file name",
                    f"lesson id {lesson.id!r} is also used by {by_id[lesson.id].path}",
                    "rename one of the two files",
                )
            )
        by_id.setdefault(lesson.id, lesson)
    for lesson in lessons:
        line = lines.get(lesson.path, {}).get("prerequisites")
        for prerequisite in lesson.prerequisites:
            if prerequisite == lesson.id:
                problems.append(
                    Problem(
                        lesson.path,
                        "prerequisites",
                        "a lesson cannot be its own prerequisite",
                        "remove it from the list",
                        line=line,
                    )
                )
            elif prerequisite not in by_id:
                known = ", ".join(sorted(by_id)) or "none yet"
                close = difflib.get_close_matches(prerequisite, list(by_id), n=1)
                problems.append(
                    Problem(
                        lesson.path,
                        "prerequisites",
                        f"no lesson has the id {prerequisite!r} (lesson ids are file stems: {known})",
                        f"prerequisites: [{close[0] if close else 'memory-wall'}]",
                        line=line,
                    )
                )
    slots: dict[tuple[str, int], list[Lesson]] = {}
    for lesson in sorted(lessons, key=lambda x: x.path):
        slots.setdefault((lesson.track, lesson.order), []).append(lesson)
    for (track, order), sharing in slots.items():
        if len(sharing) < 2:
            continue
        free = max(x.order for x in lessons if x.track == track) + 1
        for lesson in sharing:
            others = ", ".join(x.path for x in sharing if x is not lesson)
            problems.append(
                Problem(
                    lesson.path,
                    "order",
                    f"{order} is also the order of {others} in track {track!r} (unique in a track)",
                    f"order: {free} (or renumber the track's lessons)",
                    line=lines.get(lesson.path, {}).get("order"),
                )
            )
    return problems


# One course per docs folder, with the digest of the files it was read from (see load_course).
_LOADED: dict[str, tuple[str, Course]] = {}


def docs_digest(docs_dir: Path | str) -> str:
    """A hash of every file under ``docs_dir``, names and contents: what a course is read from.

    The folder holds text, a few hundred kilobytes, so hashing it costs a millisecond or two.
    """
    return folder_digest(docs_dir)


def load_course(docs_dir: Path | str) -> Course:
    """Read docs/tracks.yml and every lesson's front matter under ``docs_dir``.

    A build asks for the course from several places (the hook, the lesson lists, the takeaways box, the
    block checks), and ``serve`` asks again on every edit; it is read again only when a file under
    ``docs_dir`` changed, else the same :class:`Course` is returned (callers treat it as read-only).
    """
    key = str(Path(docs_dir).resolve())
    digest = docs_digest(docs_dir)
    cached = _LOADED.get(key)
    if cached is not None and cached[0] == digest:
        return cached[1]
    course = _read_course(docs_dir)
    _LOADED[key] = (digest, course)
    return course


def _read_course(docs_dir: Path | str) -> Course:
    docs = Path(docs_dir)
    tree = docs_tree_problems(docs)  # links, pipes, odd names, kinds, duplicate addresses: always checked
    tracks_path = docs / TRACKS_FILE
    if not is_plain_file(tracks_path, docs):  # missing, or a link or a pipe (in ``tree``): never read
        missing = Problem(
            TRACKS_FILE,
            "tracks",
            f"{tracks_path} does not exist",
            "create docs/tracks.yml listing the tracks",
        )
        return Course([], [], tree if tracks_path.exists() or tracks_path.is_symlink() else [missing, *tree])
    tracks_text, problems = read_source(tracks_path, TRACKS_FILE)
    tracks, found = parse_tracks(tracks_text or "")
    problems += found if tracks_text is not None else []
    problems += tree
    keys = [t.key for t in tracks]
    lessons: list[Lesson] = []
    key_lines: dict[str, dict[str, int]] = {}
    for file in markdown_sources(docs):
        path = file.relative_to(docs).as_posix()
        text, found = read_source(file, path)
        problems += found
        if text is None or not is_lesson_path(path, keys, text):
            continue
        lesson, found = parse_lesson(path, text, keys)
        problems.extend(found)
        if lesson is not None:
            lessons.append(lesson)
            front, _ = split_front_matter(text, path)
            key_lines[path] = front.key_lines if front else {}
    problems.extend(check_lessons(lessons, key_lines))
    problems.extend(course_takeaway_problems(((x.path, x.takeaways) for x in lessons), key_lines))
    return Course(tracks, lessons, problems)
