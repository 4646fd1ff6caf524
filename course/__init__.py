"""Ridgepoint's site layer: the lesson format, its Markdown extensions, and the thin MkDocs hook.

Layers point one way:
``calculators`` (math) <- ``calculators.charts`` / ``calculators.browser`` <- ``course``.
One package per feature, each holding its model, its HTML and its Python-Markdown extension
(``course.<feature>.extension``): ``numbers``, ``charts``, ``quiz``, ``widgets``, ``math``,
``lesson_lists``, ``author_reference`` and ``sanitising``; the lesson format (front matter, validation,
navigation, check, scaffold) in ``lesson_format``; ``notebooks``, ``pdf`` and ``benchmarks`` in their own.
Extensions, not hooks, so that the same lessons would build under Zensical, which runs Markdown extensions
but not MkDocs hooks.
``course.mkdocs_hooks`` only wires events to plain functions that have their own tests.
"""
