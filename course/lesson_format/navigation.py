"""The site's navigation, built from docs/tracks.yml and the lessons' front matter.

Nobody keeps a lesson list by hand: the nav (and so Material's previous/next footer, which follows the nav)
is home page, then each track in its order with its index page and its lessons in their order, then any other
pages grouped by folder. Adding a lesson file with good front matter is enough to place it everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from course.lesson_format.lessons import Course
from course.sanitising.front_matter import escape_text

NavItem = str | dict[str, Any]


def build_nav(
    course: Course, pages: Iterable[str], companions: Mapping[str, list[NavItem]] | None = None
) -> list[NavItem]:
    """MkDocs ``nav`` for ``pages`` (Markdown paths relative to docs/, forward slashes).

    ``companions`` maps a lesson's path to pages placed right after it (its worked notebooks, from
    :func:`course.notebooks.lesson_notebooks.nav_companions`), so previous/next walks from a lesson to its
    notebooks.
    """
    all_pages = sorted(set(pages))
    placed: set[str] = set()
    nav: list[NavItem] = []
    if "index.md" in all_pages:
        nav.append({"Home": "index.md"})
        placed.add("index.md")
    for track in course.tracks:
        section: list[NavItem] = []
        index = f"{track.key}/index.md"
        if index in all_pages:
            # Titled explicitly: its heading comes from the `lessons` block, which MkDocs cannot see when it
            # titles the previous page's "Next" link, so without this the footer would read "Index".
            section.append({track.title: index})
            placed.add(index)
        for lesson in course.lessons_in(track.key):
            if lesson.path in all_pages:
                section.append({lesson.title: lesson.path})
                placed.add(lesson.path)
                for companion in (companions or {}).get(lesson.path, []):
                    if set(reading_order([companion])) <= set(all_pages):
                        section.append(companion)
                        placed.update(reading_order([companion]))
        if section:
            nav.append({track.title: section})
    nav.extend(_other_pages([p for p in all_pages if p not in placed]))
    return _escaped_titles(nav)


def _escaped_titles(items: list[NavItem]) -> list[NavItem]:
    """``items`` with every title escaped: Material prints navigation titles as HTML."""
    escaped: list[NavItem] = []
    for item in items:
        if isinstance(item, dict):
            escaped.append(
                {
                    escape_text(str(k)): _escaped_titles(v) if isinstance(v, list) else v
                    for k, v in item.items()
                }
            )
        else:
            escaped.append(item)
    return escaped


def _other_pages(pages: list[str]) -> list[NavItem]:
    """Pages that are not home, track or lesson: top-level ones as they are, the rest grouped by folder."""
    items: list[NavItem] = []
    groups: dict[str, list[str]] = {}
    for page in pages:
        parts = PurePosixPath(page).parts
        if len(parts) == 1:
            items.append(page)
        else:
            groups.setdefault(parts[0], []).append(page)
    for folder, members in sorted(groups.items()):
        members.sort(key=lambda p: (not p.endswith("/index.md"), p))
        items.append({folder.replace("-", " ").replace("_", " ").capitalize(): list(members)})
    return items


def reading_order(nav: list[NavItem]) -> list[str]:
    """The pages of ``nav`` in the order previous/next walks them."""
    order: list[str] = []

    def walk(items: Iterable[NavItem]) -> None:
        for item in items:
            if isinstance(item, str):
                order.append(item)
                continue
            for value in item.values():
                if isinstance(value, str):
                    order.append(value)
                else:
                    walk(value)

    walk(nav)
    return order


def lesson_list_markdown(course: Course, track_key: str | None, *, from_track_folder: bool) -> str:
    """Markdown listing a track's lessons (or every track's, when ``track_key`` is None) with summaries.

    For one track it starts with the track's title as the page heading and its summary (a track index page).

    Links are relative to a page in the track's folder (its index page) when ``from_track_folder``, else to a
    page at the top of docs/ (the home page).
    """
    tracks = course.tracks if track_key is None else [t for t in course.tracks if t.key == track_key]
    by_id = {lesson.id: lesson for lesson in course.lessons}
    blocks: list[str] = []
    for track in tracks:
        lines: list[str] = []
        heading = f"Track {track.order}: {track.title}"
        if track_key is None:
            lines += [f"### [{heading}]({track.key}/index.md)", "", track.summary, ""]
        else:
            lines += [f"# {heading}", "", track.summary, ""]
        lessons = course.lessons_in(track.key)
        planned = course.planned_in(track.key)
        if not lessons and not planned:
            lines.append("*No lessons in this track yet.*")
        for number, lesson in enumerate(lessons, start=1):
            target = lesson.path.split("/")[-1] if from_track_folder else lesson.path
            lines.append(f"{number}. **[{lesson.title}]({target})**  ")
            lines.append(f"    {lesson.summary}")
            prerequisites = [by_id[p] for p in lesson.prerequisites if p in by_id]
            if prerequisites:
                links = ", ".join(
                    f"[{p.title}]({_relative(lesson.path if from_track_folder else '', p.path)})"
                    for p in prerequisites
                )
                lines.append(f"    *Read first:* {links}")
        if planned:
            # Numbered on from the written lessons, with no link: there is no page to go to yet.
            if lessons:
                lines += ["", "*Planned, not yet written:*", ""]
            for number, entry in enumerate(planned, start=len(lessons) + 1):
                lines.append(f"{number}. {entry.title} *(planned)*  ")
                lines.append(f"    {entry.summary}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _relative(from_page: str, to_page: str) -> str:
    """Link from the folder of ``from_page`` (relative to docs/; '' for the top) to ``to_page``."""
    source = PurePosixPath(from_page).parent.parts if from_page else ()
    target = PurePosixPath(to_page).parts
    common = 0
    while common < min(len(source), len(target) - 1) and source[common] == target[common]:
        common += 1
    return "/".join([".."] * (len(source) - common) + list(target[common:]))
