"""What the PDF needs from a MkDocs build: its navigation as plain data, and the facts the cover prints.

Kept apart from :mod:`course.pdf.combine` so that the combining works on plain data and is tested without
MkDocs; these two functions only read MkDocs objects (duck-typed: navigation items and the config mapping)."""

from __future__ import annotations

import datetime
import os
import subprocess
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from course.pdf.combine import NavItem, NavPage, NavSection, SiteInfo
from course.sanitising.titles import text_of_html


def nav_items(items: Iterable[Any]) -> tuple[NavItem, ...]:
    """MkDocs navigation items (pages and sections; links to elsewhere are skipped) as plain data."""
    out: list[NavItem] = []
    for item in items:
        if getattr(item, "is_section", False):
            out.append(NavSection(text_of_html(str(item.title)), nav_items(item.children)))
        elif getattr(item, "is_page", False):
            out.append(
                NavPage(
                    text_of_html(str(item.title or item.url or "Home")),  # escaped once by combine
                    str(item.url),
                    str(item.file.dest_uri),
                    bool(getattr(item, "is_index", False)),
                )
            )
    return tuple(out)


def site_info(config: Mapping[str, Any]) -> SiteInfo:
    """The course's name, addresses, version (from pyproject.toml next to the config) and build date."""
    root = Path(str(config["config_file_path"])).resolve().parent
    pyproject = root / "pyproject.toml"
    return SiteInfo(
        name=str(config.get("site_name") or ""),
        description=str(config.get("site_description") or ""),
        site_url=str(config.get("site_url") or ""),
        repo_url=str(config.get("repo_url") or ""),
        copyright=str(config.get("copyright") or ""),
        version=project_version(pyproject),
        build_date=build_date().isoformat(),
        commit=git_commit(root),
        authors=project_authors(pyproject),
    )


def _project(pyproject: Path) -> dict[str, Any]:
    try:
        return dict(tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def project_version(pyproject: Path) -> str:
    """The version in ``pyproject.toml`` (the source of truth; installed metadata may be stale)."""
    return str(_project(pyproject).get("version", ""))


def project_authors(pyproject: Path) -> str:
    """The authors' names in ``pyproject.toml``, joined with commas (the PDF's Author field)."""
    return ", ".join(str(a.get("name", "")) for a in _project(pyproject).get("authors", []) if a.get("name"))


def build_date() -> datetime.date:
    """Today (UTC), or the date of ``SOURCE_DATE_EPOCH``, so a rebuild of the same sources prints the same."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = (
        datetime.datetime.fromtimestamp(int(epoch), datetime.UTC)
        if epoch and epoch.isdigit()
        else datetime.datetime.now(datetime.UTC)
    )
    return moment.date()


def git_commit(root: Path) -> str:
    """The short commit the PDF is made from, ``+changes`` when the working tree differs; "" outside git."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return ""
    return commit + ("+changes" if dirty else "")
