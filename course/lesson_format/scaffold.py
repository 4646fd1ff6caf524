"""``python -m course.lesson_format.scaffold "My title" --track serving``: start a lesson that builds.

The new file is ``course/lesson_format/templates/lesson.md`` with its front matter filled in: the title, the
track, the next free ``order`` in that track (so it lands at the end of the track, in the navigation and
previous/next) and the track's last lesson as prerequisite. Its body shows every block in use (inserted and
checked numbers, a chart, a formula, a "Go deeper" section, the takeaways marker and a quiz) for the author to
replace. The same template file is what the "Write a lesson" page quotes for its examples, so the guide, the
scaffold and the checks cannot drift apart. The scaffold refuses to overwrite a file or reuse a lesson id, and
checks the file it wrote with :mod:`course.lesson_format.check` before it reports success.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import html
import json
import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from course.lesson_format.lessons import LESSON_ID_RE, TRACKS_FILE, Track, parse_tracks, split_front_matter
from course.sanitising.front_matter import FIX, plain_text_problem

TEMPLATE = Path(__file__).parent / "templates" / "lesson.md"
# The lesson's worked notebook (jupytext percent format); its header names the lesson, its heading the title.
NOTEBOOK_TEMPLATE = Path(__file__).parent / "templates" / "notebook.py"
NOTEBOOK_FOLDER = "notebooks"  # docs/<track>/notebooks/, as course.notebooks expects
SECTION_MARKER_RE = re.compile(
    r"^.*--8<-- \[(?P<kind>start|end):(?P<name>[a-z][-_0-9a-z]*)\].*\n?", re.MULTILINE
)
MAX_ID_LENGTH = 60


class ScaffoldError(ValueError):
    """The lesson cannot be created; the message says why and what to do instead."""


@dataclass(frozen=True)
class NewLesson:
    """Where the scaffold put a lesson and how it placed it."""

    path: Path
    lesson_id: str
    track: Track
    order: int
    previous: str | None  # id of the lesson it comes after (its prerequisite), if the track had one
    notebook: Path  # its worked notebook, docs/<track>/notebooks/<id>.py


def lesson_id_from_title(title: str) -> str:
    """The file stem for ``title``: ASCII lowercase words joined by ``-`` ("Decode!" -> decode)."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_title.lower())
    lesson_id = ""
    for word in words:
        candidate = f"{lesson_id}-{word}" if lesson_id else word
        if len(candidate) > MAX_ID_LENGTH and lesson_id:
            break
        lesson_id = candidate
    return lesson_id


def read_tracks(docs_dir: Path) -> list[Track]:
    tracks_file = docs_dir / TRACKS_FILE
    if not tracks_file.exists():
        raise ScaffoldError(f"{tracks_file} not found; run the scaffold from the repository root")
    tracks, problems = parse_tracks(tracks_file.read_text(encoding="utf-8"), str(tracks_file))
    if problems:
        raise ScaffoldError(f"{tracks_file} has problems: " + "; ".join(str(p) for p in problems))
    return tracks


def choose_track(tracks: list[Track], key: str) -> Track:
    """The track called ``key``; an unknown key names the tracks there are and how to add one."""
    for track in tracks:
        if track.key == key:
            return track
    keys = [t.key for t in tracks]
    close = difflib.get_close_matches(key, keys, n=1)
    hint = f" Did you mean --track {close[0]}?" if close else ""
    listing = "\n".join(f"  {t.key:<14} {t.title}" for t in tracks)
    raise ScaffoldError(
        f"unknown track {key!r}.{hint}\nThe tracks are (docs/tracks.yml):\n{listing}\n"
        "A new track is a new entry in docs/tracks.yml (key, title, summary, order) and a folder "
        "docs/<key>/ with an index.md; propose it in the pull request."
    )


def track_lessons(docs_dir: Path, track: Track) -> list[tuple[int, str]]:
    """``(order, id)`` of the lessons in the track's folder, read leniently (a draft may be broken)."""
    found: list[tuple[int, str]] = []
    for file in sorted((docs_dir / track.key).glob("*.md")):
        if file.name == "index.md":
            continue
        front, _ = split_front_matter(file.read_text(encoding="utf-8"), file.name)
        order = front.data.get("order") if front else None
        if isinstance(order, int) and not isinstance(order, bool):
            found.append((order, file.stem))
    return sorted(found)


def _field_line(field: str, value: str, _: re.Match[str]) -> str:
    return f"{field}: {value}"


def render_lesson(template: str, *, title: str, track: str, order: int, prerequisites: list[str]) -> str:
    """The template with its front matter filled in and the guide's section markers removed."""
    template = SECTION_MARKER_RE.sub("", template)
    values = {
        "title": json.dumps(title, ensure_ascii=False),  # a JSON string is a valid double-quoted YAML string
        "track": track,
        "order": str(order),
        "prerequisites": "[" + ", ".join(prerequisites) + "]",
    }
    for field, value in values.items():
        template, count = re.subn(
            rf"^{field}:.*$", functools.partial(_field_line, field, value), template, count=1, flags=re.M
        )
        if count != 1:
            raise ScaffoldError(f"the template {TEMPLATE} has no `{field}:` line; restore it")
    return template


def create_lesson(
    title: str, track_key: str, docs_dir: Path = Path("docs"), lesson_id: str | None = None
) -> NewLesson:
    """Write ``docs/<track>/<id>.md`` from the template, placed last in its track; never overwrites."""
    if not title.strip():
        raise ScaffoldError(
            'give the lesson a title, e.g. "Batching: why servers decode many requests at once"'
        )
    if "\n" in title:
        raise ScaffoldError("the title must be a single line")
    if problem := plain_text_problem(title.strip()):
        raise ScaffoldError(f"the title {problem}; {FIX.split(': ', 1)[1]}")
    track = choose_track(read_tracks(docs_dir), track_key)
    lesson_id = lesson_id or lesson_id_from_title(title)
    if not LESSON_ID_RE.match(lesson_id):
        raise ScaffoldError(
            f"cannot make a lesson id from {lesson_id or title!r}: an id is lowercase ASCII words joined "
            "by -; "
            "give one with --id, e.g. --id kv-cache"
        )
    path = docs_dir / track.key / f"{lesson_id}.md"
    if path.exists():
        raise ScaffoldError(
            f"{path} already exists; the scaffold never overwrites. Pick another title or --id"
        )
    same_id = [p for p in docs_dir.rglob(f"{lesson_id}.md") if p.parent.parent == docs_dir]
    if same_id:
        raise ScaffoldError(
            f"the lesson id {lesson_id!r} is already used by {same_id[0]} (ids are unique across tracks); "
            "give another with --id"
        )
    existing = track_lessons(docs_dir, track)
    order = max((o for o, _ in existing), default=0) + 1
    previous = existing[-1][1] if existing else None
    text = render_lesson(
        TEMPLATE.read_text(encoding="utf-8"),
        title=title.strip(),
        track=track.key,
        order=order,
        prerequisites=[previous] if previous else [],
    )
    notebook = notebook_path(docs_dir, track.key, lesson_id)
    if notebook.exists():
        raise ScaffoldError(f"{notebook} already exists; the scaffold never overwrites. Pick another --id")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as handle:  # "x": fail rather than overwrite, even in a race
        handle.write(text)
    write_notebook(notebook, lesson_id, title.strip())
    return NewLesson(path, lesson_id, track, order, previous, notebook)


def notebook_path(docs_dir: Path, track_key: str, lesson_id: str) -> Path:
    return docs_dir / track_key / NOTEBOOK_FOLDER / f"{lesson_id}.py"


def render_notebook(template: str, *, lesson_id: str, title: str) -> str:
    """The notebook template naming ``lesson_id`` in its header and ``title`` in its heading.

    The heading is Markdown and the title plain text: its ``&`` (and any ``<``) are escaped, so that a title
    such as "KV &amp; paging" is shown as written, never decoded into other characters or markup.
    """
    heading = html.escape(" ".join(title.split()), quote=False)
    return template.replace("LESSON_ID", lesson_id).replace("LESSON_TITLE", heading)


def write_notebook(path: Path, lesson_id: str, title: str) -> None:
    text = render_notebook(NOTEBOOK_TEMPLATE.read_text(encoding="utf-8"), lesson_id=lesson_id, title=title)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)


def create_notebook_for(lesson_id: str, docs_dir: Path = Path("docs")) -> Path:
    """Write the worked notebook of an existing lesson (one written before the scaffold made notebooks)."""
    from course.lesson_format.lessons import load_course

    course = load_course(docs_dir)
    lesson = course.lesson_by_id(lesson_id)
    if lesson is None:
        known = [x.id for x in course.lessons]
        close = difflib.get_close_matches(lesson_id, known, n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        raise ScaffoldError(
            f"no lesson has the id {lesson_id!r}.{hint} (the id is the file name without .md)"
        )
    path = notebook_path(docs_dir, lesson.track, lesson.id)
    if path.exists():
        raise ScaffoldError(f"{path} already exists; the scaffold never overwrites")
    write_notebook(path, lesson.id, lesson.title)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 dev.py new_lesson --",
        description="Start a new lesson from the template, placed at the end of its track.",
    )
    parser.add_argument(
        "title", nargs="?", help='the lesson title, quoted: "Batching: why servers decode together"'
    )
    parser.add_argument("--track", help="a track key from docs/tracks.yml, e.g. serving")
    parser.add_argument("--id", dest="lesson_id", help="the file name without .md (default: from the title)")
    parser.add_argument(
        "--notebook-for",
        metavar="LESSON_ID",
        help="write only the worked notebook of an existing lesson, from the template",
    )
    parser.add_argument("--docs", type=Path, default=Path("docs"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.notebook_for:
        try:
            notebook = create_notebook_for(args.notebook_for, args.docs)
        except ScaffoldError as error:
            print(f"new_lesson: {error}", file=sys.stderr)
            return 2
        print(f"Wrote {notebook}. Replace its example with the lesson's own figures; the build runs it.")
        return 0
    if args.title is None or args.track is None:
        parser.error('give a title and a track: new_lesson -- "My title" --track serving')
    try:
        lesson = create_lesson(args.title, args.track, args.docs, args.lesson_id)
    except ScaffoldError as error:
        print(f"new_lesson: {error}", file=sys.stderr)
        return 2
    from course.lesson_format.nav_file import regenerate

    config = args.docs.parent / "mkdocs.yml"
    if config.is_file():  # the generated navigation that builders without our hook read
        regenerate(config, args.docs)
    from course.lesson_format.check import Settings, check, format_problem, read_settings

    settings = read_settings(Path("mkdocs.yml"))
    problems, _ = check([lesson.path, lesson.notebook], Settings(args.docs, settings.block_modules))
    for problem in problems:
        print(format_problem(problem, args.docs.as_posix().rstrip("/") + "/"), file=sys.stderr)
    after = f", after {lesson.previous!r}" if lesson.previous else ""
    print(
        f"Wrote {lesson.path} (track {lesson.track.key!r}, order {lesson.order}{after})\n"
        f"  and its worked notebook {lesson.notebook}, and updated the navigation in mkdocs.yml.\n"
        "Next:\n"
        f"  1. Edit both: replace each example with your own (the guide: docs/contributing/index.md).\n"
        f"  2. Preview: python3 dev.py serve, then open "
        f"http://127.0.0.1:8000/{lesson.track.key}/{lesson.lesson_id}/\n"
        "  3. Check:   python3 dev.py check (every problem at once, with file, line and a fix)."
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
