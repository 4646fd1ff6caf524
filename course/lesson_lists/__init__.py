"""Lesson-list blocks: the Markdown extension that lists a track's lessons (:mod:`.extension`)."""
