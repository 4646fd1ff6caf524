"""Lesson safety: scripts, handlers and javascript: URLs are defused in prose, code is left alone."""

from __future__ import annotations

from course.safety.extension import defuse


def test_lesson_safety_defuses_but_leaves_code_alone() -> None:
    text = 'A <b onclick="x()">b</b> [l](javascript:go()) `<script>` and <script>y</script>'
    out = defuse(text)
    assert "onclick=" not in out.replace("data-blocked-onclick=", "")
    assert "javascript:" not in out
    assert "`<script>`" in out
    assert "&lt;script>y" in out
