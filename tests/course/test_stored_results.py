"""Results kept between builds: read back by the next build of the same code, forgotten when it changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from course import stored_results
from course.stored_results import StoredResults, code_fingerprint, text_key


def test_a_stored_result_is_read_back_by_the_next_build(tmp_path: Path) -> None:
    StoredResults(tmp_path).put(text_key("page.md", "body"), "<p>body</p>")
    assert StoredResults(tmp_path).get(text_key("page.md", "body")) == "<p>body</p>"  # a later build
    assert StoredResults(tmp_path).get(text_key("page.md", "body edited")) is None


def test_results_of_other_code_are_never_read_and_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    StoredResults(tmp_path).put("key", "made by the code as it was")
    monkeypatch.setattr(stored_results, "code_fingerprint", lambda: "edited-code")
    later = StoredResults(tmp_path)
    assert later.get("key") is None
    assert [p.name for p in tmp_path.iterdir()] == []  # the old folder went; this one is made on a put
    later.put("key", "new")
    assert [p.name for p in tmp_path.iterdir()] == ["edited-code"]


def test_a_new_version_of_a_library_the_steps_call_is_new_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """nh3 sanitises the notebook pages: a stored page sanitised by another nh3 must not be read back."""
    before = code_fingerprint()
    from course import folder_digest

    real_version = folder_digest.metadata.version

    def upgraded(name: str) -> str:
        return "99.0" if name == "nh3" else real_version(name)

    monkeypatch.setattr(folder_digest.metadata, "version", upgraded)
    code_fingerprint.cache_clear()
    try:
        assert code_fingerprint() != before
    finally:
        monkeypatch.undo()
        code_fingerprint.cache_clear()
    assert code_fingerprint() == before


def test_keys_of_different_parts_differ_even_when_their_text_joined_is_the_same() -> None:
    assert text_key("ab", "c") != text_key("a", "bc")
    assert text_key("a", "b") == text_key("a", "b")


def test_a_cache_that_cannot_be_written_is_a_miss_not_an_error(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    stored = StoredResults(blocked)
    stored.put("key", "value")  # nothing raised: the next build is a cold one
    assert stored.get("key") is None
