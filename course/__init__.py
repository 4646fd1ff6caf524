"""Ridgepoint's site layer: the lesson format, its Markdown extensions, and the thin MkDocs hook.

Layers point one way:
``calculators`` (math) <- ``calculators.charts`` / ``calculators.browser`` <- ``course``.
Lesson-facing features are Python-Markdown extensions in ``course.markdown`` so that the same lessons would
build under Zensical, which runs Markdown extensions but not MkDocs hooks.
``course.mkdocs_hooks`` only wires events to plain functions that have their own tests.
"""
