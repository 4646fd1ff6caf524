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


def folder_digest(folder: Path | str) -> str:
    """The SHA-256 (hex) of every file under ``folder``: its path relative to the folder and its bytes (a
    symbolic link: the path it points to)."""
    root = Path(folder)
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*")):
        if file.is_symlink():  # by its target's name: a link to /proc or a huge file is never read (and
            digest.update(file.relative_to(root).as_posix().encode() + b"\0@")  # the build refuses links)
            digest.update(os.readlink(file).encode())
        elif file.is_file() and "__pycache__" not in file.parts:
            digest.update(file.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()
