"""One hash of a folder's files, names and contents: how the rebuild caches tell that a folder changed.

The course reading (docs/) and the stored figures (calculators/) are both kept while their folder is the
same. Contents, not modification times: a test (or an editor) may rewrite a file within the clock's
resolution. Byte code is left out, since it follows the sources and Python rewrites it on its own.
Caches of computed results (executed notebooks, chart data) keep one folder per fingerprint of their
sources, :func:`fingerprint_folder`, and drop the others.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path


def fingerprint_folder(cache_root: str | Path, fingerprint: str) -> Path:
    """The cache folder for this fingerprint under ``cache_root``; folders of other fingerprints (results of
    sources as they were before) are removed."""
    root = Path(cache_root)
    if root.is_dir():
        for stale in root.iterdir():
            if stale.is_dir() and stale.name != fingerprint:
                shutil.rmtree(stale, ignore_errors=True)
    return root / fingerprint


def installed_versions(distributions: Iterable[str]) -> str:
    """``name==version`` of each distribution, run together (``absent`` where it is not installed): what a
    cache's fingerprint adds for the libraries whose behaviour its results depend on."""
    found = []
    for name in distributions:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "absent"
        found.append(f"{name}=={version}")
    return "".join(found)


def folder_digest(folder: Path | str) -> str:
    """The SHA-256 (hex) of every file under ``folder``: its path relative to the folder and its bytes (a
    symbolic link: the path it points to, and never followed)."""
    root = Path(folder)
    skip_files = "__pycache__" in root.parts
    digest = hashlib.sha256()
    for parts, path, is_link in sorted(_entries(os.fspath(root), ()) if root.is_dir() else []):
        name = "/".join(parts).encode()
        if is_link:  # by its target's name: a link to /proc or a huge file is never read (and
            digest.update(name + b"\0@")  # the build refuses links)
            digest.update(os.readlink(path).encode())
        elif not skip_files and "__pycache__" not in parts:
            with open(path, "rb") as stream:
                digest.update(name + b"\0")
                digest.update(hashlib.sha256(stream.read()).digest())
    return digest.hexdigest()


def _entries(directory: str, parts: tuple[str, ...]) -> list[tuple[tuple[str, ...], str, bool]]:
    """(parts relative to the root, path, whether a link) of each file and link under ``directory``.

    The files ``Path.rglob("*")`` finds, in the same order once sorted by parts, without its cost per path
    (a build takes the digest of docs/ a hundred times, :func:`course.lesson_format.lessons.load_course`):
    links are listed and not followed, other files neither plain nor a folder are left out, and a folder
    that cannot be read is skipped.
    """
    found: list[tuple[tuple[str, ...], str, bool]] = []
    try:
        with os.scandir(directory) as listing:
            entries = list(listing)
    except PermissionError:
        return found
    for entry in entries:
        here = (*parts, entry.name)
        if entry.is_symlink():
            found.append((here, entry.path, True))
        elif entry.is_dir():
            found += _entries(entry.path, here)
        elif entry.is_file():
            found.append((here, entry.path, False))
    return found
