"""mkdocs-jupyter's converter, imported when a notebook is first converted, not when MkDocs loads the plugin.

mkdocs-jupyter's plugin module imports its converter (nbconvert, which looks through every installed
distribution's entry points for exporters) and jupytext as MkDocs loads it: 0.8 s of every build (issue 23),
a warm build's too, though its notebook pages all come from mkdocs-jupyter's cache and convert nothing.

:func:`defer` puts stand-ins for those two modules in ``sys.modules``. It has to run before MkDocs loads its
plugins, and MkDocs reads the Markdown extensions first: this module is one, listed in mkdocs.yml, and does
nothing to the Markdown. The first use of any name of a stand-in loads the real modules, then runs what was
registered with :func:`when_loaded` (the kernel sandbox's patch,
:func:`course.notebooks.sandbox.configure_kernel_sandbox`), and only then answers. So nothing reaches the
converter before the sandbox is in place, and where nothing was deferred (another config, a test) the
registered function runs at once.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

from markdown import Extension, Markdown

DEFERRED = ("jupytext", "mkdocs_jupyter.convert")  # imported in this order (the converter uses jupytext)
_LOADER = "_rp_loader"  # a stand-in's attribute: the loader it shares with the other


class _Loader:
    """Loads the real modules once, for all the stand-ins, and runs the functions waiting for them."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # notebooks are converted in worker threads
        self.loaded = False
        self.waiting: dict[str, Callable[[], None]] = {}

    def load(self) -> None:
        with self.lock:
            if self.loaded:
                return
            for name in DEFERRED:
                if _loader_of(sys.modules.get(name)) is self:
                    del sys.modules[name]
                    parent, _, child = name.rpartition(".")
                    if parent and _loader_of(getattr(sys.modules.get(parent), child, None)) is self:
                        delattr(sys.modules[parent], child)
            for name in DEFERRED:
                importlib.import_module(name)
            for run in self.waiting.values():
                run()  # if it fails, the next use of a stand-in loads nothing and runs it again
            self.loaded = True


class _StandIn(types.ModuleType):
    """Stands in ``sys.modules`` for a module not loaded yet; loads it when one of its names is first used."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name not in ("__all__", "__path__"):
            raise AttributeError(name)  # the import system's probes (``__spec__`` is the real one's)
        self.__dict__[_LOADER].load()
        return getattr(sys.modules[self.__name__], name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("__") or name == _LOADER:
            super().__setattr__(name, value)  # its own description, as the import system sets a module's
            return
        self.__dict__[_LOADER].load()
        setattr(sys.modules[self.__name__], name, value)  # a patch is meant for the real module


def _loader_of(module: object) -> _Loader | None:
    found = module.__dict__.get(_LOADER) if isinstance(module, types.ModuleType) else None
    return found if isinstance(found, _Loader) else None


def defer() -> bool:
    """Stand in for the converter's modules until their first use; False where any of them is already
    imported (or stood in for), or not installed."""
    if any(name in sys.modules for name in DEFERRED):
        return False
    specs = [importlib.util.find_spec(name) for name in DEFERRED]
    if None in specs:
        return False
    loader = _Loader()
    for name, spec in zip(DEFERRED, specs, strict=True):
        assert spec is not None
        stand_in = _StandIn(name)
        stand_in.__spec__ = spec
        stand_in.__file__ = spec.origin
        stand_in.__loader__ = spec.loader
        setattr(stand_in, _LOADER, loader)
        sys.modules[name] = stand_in
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, stand_in)  # as the import system links a submodule
    return True


def when_loaded(key: str, run: Callable[[], None]) -> None:
    """Run ``run`` once the converter's modules are loaded: now if they are, else just before their first
    use. A later function under the same ``key`` (the next build's, under ``serve``) replaces the earlier."""
    loader = _loader_of(sys.modules.get(DEFERRED[-1]))
    if loader is not None:
        with loader.lock:
            if not loader.loaded:
                loader.waiting[key] = run
                return
    run()


class DeferredConverterExtension(Extension):
    """Defers the converter when MkDocs reads its Markdown extensions; changes no Markdown."""

    def extendMarkdown(self, md: Markdown) -> None:
        pass


def makeExtension(**kwargs: Any) -> DeferredConverterExtension:
    defer()  # MkDocs builds each Markdown extension while it reads its config, before it loads the plugins
    return DeferredConverterExtension(**kwargs)
