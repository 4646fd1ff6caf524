"""The digest the rebuild caches key on: files by name and bytes, links by their target, never followed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from course.folder_digest import folder_digest


def _expected(entries: list[tuple[str, bytes, bool]]) -> str:
    """The digest written out: per entry in path order, its name, then its SHA-256 (a link: its target)."""
    digest = hashlib.sha256()
    for name, data, is_link in entries:
        if is_link:
            digest.update(name.encode() + b"\0@" + data)
        else:
            digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def test_the_digest_reads_names_and_bytes_in_path_order_and_never_follows_a_link(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.md").write_bytes(b"inner")
    (tmp_path / "a.md").write_bytes(b"outer")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.pyc").write_bytes(b"byte code")  # follows the sources: left out
    (tmp_path / "to-a").symlink_to(tmp_path / "a")  # by the name it points to, not what it holds
    os.mkfifo(tmp_path / "pipe")  # neither a file nor a folder: left out (reading it would block)
    # Path order compares name by name: "a" < "a.md", so a/b.md comes before a.md.
    assert folder_digest(tmp_path) == _expected(
        [("a/b.md", b"inner", False), ("a.md", b"outer", False), ("to-a", str(tmp_path / "a").encode(), True)]
    )
    before = folder_digest(tmp_path)
    (tmp_path / "a" / "b.md").write_bytes(b"INNER")  # same size, maybe the same time stamp: contents count
    assert folder_digest(tmp_path) != before


def test_a_missing_folder_has_the_digest_of_nothing(tmp_path: Path) -> None:
    assert folder_digest(tmp_path / "missing") == hashlib.sha256().hexdigest()
