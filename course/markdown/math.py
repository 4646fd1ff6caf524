"""Placeholder for the math extension; its owner replaces this module."""

from markdown import Extension


class PlaceholderExtension(Extension):
    """Does nothing yet."""

    def extendMarkdown(self, md):  # noqa: N802
        pass


def makeExtension(**kwargs: object) -> Extension:  # noqa: N802 - Python-Markdown's entry point name
    return PlaceholderExtension(**kwargs)
