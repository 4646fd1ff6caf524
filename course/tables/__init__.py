"""Lesson tables: each top-level table in a box of its own (:mod:`.extension`)."""
