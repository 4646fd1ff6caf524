"""The navigation from ``docs/tracks.yml``, generated into mkdocs.yml's ``nav:`` so that any builder reads it.

The MkDocs hook builds the same navigation at every build; Zensical runs no hooks but reads ``nav:`` from
mkdocs.yml. The block between the two marker lines is written by ``python -m course.lesson_format.nav_file``
(``python3 dev.py nav``); a test fails while it is not current (after a lesson is added, moved or retitled).
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from course.lesson_format.lessons import load_course
from course.lesson_format.navigation import NavItem, build_nav

BEGIN = (
    "# BEGIN generated navigation: python3 dev.py nav (from docs/tracks.yml and the lessons' front matter)"
)
END = "# END generated navigation"
# mkdocs.yml's exclude_docs: not pages
EXCLUDED = ("tracks.yml", "redirects.yml", "references.yml", "glossary.yml")


def course_nav(docs_dir: str | Path) -> list[NavItem]:
    """The navigation the hook builds: tracks, lessons and notebooks in reading order, then other pages."""
    from course.notebooks.lesson_notebooks import load_notebooks, nav_companions

    docs = Path(docs_dir)
    course = load_course(docs)
    notebooks, _ = load_notebooks(docs, course)
    pages = [f.relative_to(docs).as_posix() for f in docs.rglob("*.md")] + [n.path for n in notebooks]
    return build_nav(course, pages, nav_companions(notebooks, course))


def nav_block(docs_dir: str | Path) -> str:
    body = yaml.safe_dump({"nav": course_nav(docs_dir)}, allow_unicode=True, sort_keys=False, width=1000)
    return f"{BEGIN}\n{body}{END}\n"


def with_nav(config_text: str, block: str) -> str:
    """``config_text`` (mkdocs.yml) with the generated block replaced, or appended when there is none."""
    if BEGIN in config_text and END in config_text:
        start = config_text.index(BEGIN)
        end = config_text.index(END) + len(END)
        return config_text[:start] + block.rstrip("\n") + config_text[end:]
    return config_text.rstrip("\n") + "\n\n" + block


def regenerate(config: Path, docs_dir: str | Path) -> bool:
    """Rewrite ``config``'s navigation from ``docs_dir``; whether it changed."""
    text = config.read_text(encoding="utf-8")
    updated = with_nav(text, nav_block(docs_dir))
    if updated != text:
        config.write_text(updated, encoding="utf-8")
    return updated != text


def main(argv: list[str] | None = None) -> int:
    """Rewrite mkdocs.yml's navigation; with ``--check``, exit 1 if it is not current."""
    args = sys.argv[1:] if argv is None else argv
    config = Path("mkdocs.yml")
    if "--check" in args:
        text = config.read_text(encoding="utf-8")
        if with_nav(text, nav_block("docs")) != text:
            print("mkdocs.yml: the navigation is not current; run `python3 dev.py nav`", file=sys.stderr)
            return 1
        return 0
    if regenerate(config, "docs"):
        print("mkdocs.yml: navigation regenerated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
