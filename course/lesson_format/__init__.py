"""The lesson format: what a lesson file is, and the checks and tools around it.

Front matter and tracks (:mod:`.lessons`), the problems every check reports (:mod:`.problems`), block
validation (:mod:`.validation`), the takeaways box as a Markdown extension (:mod:`.takeaways`), fresh
modules on each serve rebuild (:mod:`.pages`), the navigation built
from ``docs/tracks.yml`` (:mod:`.navigation`), the site configuration the tools share (:mod:`.site_config`),
and the contributor's commands: ``python -m course.lesson_format.check`` and
``python -m course.lesson_format.scaffold`` (which copies ``templates/lesson.md``).
"""
