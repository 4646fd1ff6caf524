"""What the MkDocs hook does around the pages: import edited project modules afresh on each serve rebuild.

The takeaways box is placed by a Markdown extension (:mod:`course.lesson_format.takeaways`) and the blocks are
validated by :func:`course.lesson_format.validation.validate_page`, so that builders without the hook do both.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

PROJECT_PACKAGES = ("calculators", "course")


def purge_project_modules(packages: Sequence[str] = PROJECT_PACKAGES) -> list[str]:
    """Forget imported project modules so that the next build imports edited calculators and extensions.

    ``mkdocs serve`` rebuilds in the same process; ``importlib.reload`` would keep stale references between
    modules, so the modules are dropped from ``sys.modules`` and imported afresh on first use.
    """
    names = [n for n in sys.modules if n in packages or n.startswith(tuple(f"{p}." for p in packages))]
    for name in names:
        del sys.modules[name]
    return names
