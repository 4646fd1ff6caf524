"""Lessons are untrusted input: the extension that refuses scripts, event handlers and ``javascript:`` URLs in
lessons (:mod:`.extension`), and the scan of a built site for loads from other hosts (:mod:`.external_loads`).
"""
