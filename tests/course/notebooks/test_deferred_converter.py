"""mkdocs-jupyter's converter loads at its first use, never before the kernel sandbox's patch is in place.

Each check runs in a new Python process (what is imported is the point), as MkDocs does it: the Markdown
extension first, then the plugin, then the hook's sandbox configuration, then a notebook's conversion.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.conftest import ROOT


def _run(script: str) -> dict[str, object]:
    """Run ``script`` in a new process at the project's root; it prints one JSON object, returned here."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_build_that_converts_nothing_loads_neither_nbconvert_nor_jupytext() -> None:
    seen = _run("""
        import json, sys
        from markdown import Markdown
        Markdown(extensions=["course.notebooks.deferred_converter"])  # as MkDocs reads its config
        import mkdocs_jupyter.plugin  # MkDocs loads the plugin
        from course.notebooks.sandbox import configure_kernel_sandbox
        configure_kernel_sandbox(".")  # the hook's on_config
        loaded = sorted(n for n in ("nbconvert", "jupytext.jupytext") if n in sys.modules)
        print(json.dumps({"loaded": loaded}))
    """)
    assert seen == {"loaded": []}


def test_the_first_conversion_finds_the_converter_patched() -> None:
    """The plugin holds the stand-in it imported; its first call loads the converter and the sandbox's patch
    first, so the call reaches the patched function, and nbconvert runs only our isolated executor."""
    seen = _run("""
        import json, sys
        from markdown import Markdown
        Markdown(extensions=["course.notebooks.deferred_converter"])
        import mkdocs_jupyter.plugin as plugin
        from course.notebooks.sandbox import configure_kernel_sandbox
        configure_kernel_sandbox(".")
        converter = plugin.convert.nb2html  # what the plugin calls to convert a notebook
        from mkdocs_jupyter import nbconvert2
        from nbconvert.exporters.html import HTMLExporter
        app = nbconvert2.get_nbconvert_app(execute=True, allow_errors=False)
        executors = [type(p).__name__ for p in HTMLExporter(config=app.config)._preprocessors
                     if p.enabled and "Execute" in type(p).__name__]
        print(json.dumps({"patched": hasattr(converter, "__wrapped__"), "executors": executors,
                          "real": type(sys.modules["mkdocs_jupyter.convert"]).__name__}))
    """)
    assert seen == {"patched": True, "executors": ["IsolatedExecutePreprocessor"], "real": "module"}


def test_without_the_extension_the_patch_is_applied_at_once() -> None:
    """Another config (or a builder) without the extension: the sandbox patches as it always did."""
    seen = _run("""
        import json, sys
        import mkdocs_jupyter.plugin as plugin
        from course.notebooks.sandbox import configure_kernel_sandbox
        configure_kernel_sandbox(".")
        print(json.dumps({"patched": hasattr(sys.modules["mkdocs_jupyter.convert"].nb2html, "__wrapped__")}))
    """)
    assert seen == {"patched": True}
