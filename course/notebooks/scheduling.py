"""When the worked notebooks are executed: side by side, ahead of their pages, and under ``serve`` after it.

Executing the eight notebooks was 71% of a cold build (issue 23: 124 of 175 s), one after another, each while
MkDocs waited on its page; a newcomer's first ``dev.py serve`` answered after all of it (140 s here). Now, as
soon as a build knows its pages (MkDocs ``on_nav``), every notebook whose executed page is not in
mkdocs-jupyter's cache is executed in a worker thread, as many at once as the machine has cores (a kernel is a
process of its own, so the threads run the notebooks' code side by side), at a lower priority than the build's
own work, which therefore finishes as soon as it would without notebooks. The plugin's own rendering runs
there, for a copy of the page, so it executes the notebook exactly as it would have (the kernel sandbox
included: :mod:`course.notebooks.sandbox`) and leaves its cache entry; the page then reads that entry.

- ``mkdocs build`` waits for a notebook's execution when it reaches the notebook's page.
- Under ``serve``, the executions are queued at ``on_nav`` but begin when the first build has written its
  pages (:func:`pages_written`): their rendering runs in threads of the server and slowed that build.
- Under ``serve``, a notebook page whose execution has not finished says so (:func:`placeholder_html`) and
  the build goes on, so the server answers while the notebooks run. When they have all run, the scheduler
  writes a marker file that the server watches (:func:`marker_path`; the hook adds it to ``watch``): the
  rebuild that follows is a full one (the marker is among the shared inputs of
  :mod:`course.lesson_format.partial_rebuilds`) and shows every notebook from the cache.

Only the scheduling is here: how each notebook's process is isolated is the sandbox's business.
"""

from __future__ import annotations

import contextlib
import copy
import os
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from course.notebooks.lesson_notebooks import CACHE_ENV, CACHE_ROOT, JUPYTER_PLUGIN, Notebook

# Cache entry (the file mkdocs-jupyter reads) -> its execution, for this process: a ``serve`` rebuild finds
# the executions an earlier build started (the project's modules stay imported unless their code changed).
_RUNS: dict[Path, Future[None]] = {}
_LOCK = threading.Lock()
MARKER_NAME = "executed"
WORKER_NICENESS = 10  # how much lower the notebook workers' priority is than the build's


def worker_count(pending: int) -> int:
    """How many notebooks run at once: one per core, as many as are waiting, at least one."""
    return max(1, min(pending, os.cpu_count() or 1))


def yield_to_the_build() -> None:
    """Lower this worker thread's priority, and so its kernels' (a process started from a thread inherits its
    niceness, on Linux): the build's own work goes first and the notebooks take the processor time it leaves.
    On 2 cores, the lessons' pages were otherwise built no sooner than with the notebooks run one by one."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not allowed: the default priority
        current = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(current + WORKER_NICENESS, 19))


def cache_entry(plugin: Any, source: str) -> Path | None:
    """Where mkdocs-jupyter keeps the executed page of the notebook at ``source``; None if its cache is off.

    The plugin's own key (the notebook's text and its settings), so this is the entry its render reads.
    """
    if not plugin.config["cache"]:
        return None
    from mkdocs_jupyter.plugin import _compute_cache_key, _get_cache_path

    key = _compute_cache_key(source, plugin.config, plugin.config["execute"])
    return Path(_get_cache_path(plugin.config["cache_dir"], key))


def marker_path() -> Path:
    """The file written when a ``serve`` build's notebooks have all run: the server watches it.

    One path for the whole session (the cache folder itself moves with the calculators' state): the
    notebooks' cache root (:func:`course.notebooks.lesson_notebooks.configure_execution_cache`).
    """
    return Path(os.environ.get(CACHE_ENV) or Path.cwd() / CACHE_ROOT) / MARKER_NAME


def prepare_marker(marker: Path | None = None) -> Path:
    """Make sure the marker exists (a watched path must), and return it: the notebooks' by default, or
    ``marker`` (the background results' marker beside it, :mod:`course.lesson_format.background`)."""
    marker = marker or marker_path()
    marker.parent.mkdir(parents=True, exist_ok=True)
    if not marker.exists():
        marker.write_text("none yet\n", encoding="utf-8")
    return marker


def _render_into_cache(page: Any, plugin: Any, config: Any, files: Any) -> None:
    """Execute one notebook as the plugin renders its page, on a copy of the page: the plugin writes its
    cache entry, which the page itself then reads."""
    stand_in = copy.copy(page)
    plugin.on_pre_page(stand_in, config=config, files=files)
    stand_in.render(config, files)


def start(
    pages: Iterable[Any],
    plugin: Any,
    config: Any,
    files: Any,
    *,
    when_done: Callable[[], None] | None = None,
    run: Callable[[Any, Any, Any, Any], None] = _render_into_cache,
    after: threading.Event | None = None,
) -> dict[Path, Future[None]]:
    """Start executing each notebook page's notebook whose executed page is not cached; returns every page's
    execution, started now or by an earlier build, by cache entry. ``when_done`` is called once all those
    started here have finished, whether they succeeded or not. With ``after``, the executions are queued at
    once (their pages show the placeholder) but the workers begin only when it is set."""
    runs: dict[Path, Future[None]] = {}
    waiting: list[tuple[Path, Any]] = []
    with _LOCK:
        for page in pages:
            entry = cache_entry(plugin, page.file.abs_src_path)
            if entry is None or entry.exists():
                continue
            known = _RUNS.get(entry)
            if known is not None and (not known.done() or known.exception() is not None):
                runs[entry] = known  # still running, or failed: the same text would fail again
                continue
            future: Future[None] = Future()
            _RUNS[entry] = runs[entry] = future
            waiting.append((entry, page))
    if not waiting:
        return runs
    queue = list(waiting)
    remaining = [len(waiting)]

    def work() -> None:
        if after is not None:
            after.wait()
        yield_to_the_build()
        while True:
            with _LOCK:
                if not queue:
                    return
                entry, page = queue.pop(0)
            future = _RUNS[entry]
            future.set_running_or_notify_cancel()
            try:
                run(page, plugin, config, files)
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(None)
            with _LOCK:
                remaining[0] -= 1
                last = remaining[0] == 0
            if last and when_done is not None:
                when_done()

    for _ in range(worker_count(len(waiting))):
        # Daemon threads: stopping the server does not wait for a notebook to finish.
        threading.Thread(target=work, name="ridgepoint-notebook", daemon=True).start()
    return runs


def execution(plugin: Any, source: str) -> Future[None] | None:
    """The execution of the notebook at ``source`` for the page about to be rendered, if one was started."""
    entry = cache_entry(plugin, source)
    if entry is None:
        return None
    with _LOCK:
        return _RUNS.get(entry)


def touch_marker(marker: Path) -> None:
    """Write the marker anew, so that the watching server rebuilds."""
    marker.write_text(f"notebooks executed at {time.time_ns()}\n", encoding="utf-8")


def placeholder_html(title: str) -> str:
    """What a notebook's page shows under ``serve`` while its notebook runs."""
    from html import escape

    return (
        f"<h1>{escape(title)}</h1>\n"
        '<div class="admonition info rp-notebook-running">\n'
        '<p class="admonition-title">This notebook is being executed</p>\n'
        "<p>The worked notebooks run in the background while the site is served, so that the lessons answer "
        "at once; this page shows the notebook with its outputs as soon as it has run (a minute or two on a "
        "first run): the server rebuilds then, and the page reloads, or reload it.</p>\n"
        "</div>\n"
    )


def show_placeholder_while_running(page: Any, future: Future[None], title: str) -> bool:
    """Under ``serve``: if the page's notebook is still running, render the page as the placeholder instead
    (the plugin would otherwise execute the notebook a second time, here). True if it did."""
    if future.done():
        return False

    def render(config: Any, files: Any) -> None:
        from mkdocs.structure.toc import get_toc

        page.content = placeholder_html(title)
        page.toc = get_toc([])
        page.title = title

    page.render = render
    return True


def _executing_plugin(config: Any) -> Any:
    """mkdocs-jupyter's plugin instance in this build's config if it executes notebooks, else None."""
    plugin = config.plugins.get(JUPYTER_PLUGIN)
    return plugin if plugin is not None and plugin.config["execute"] else None


# Under serve, set when the first build has written its pages: the notebooks' workers wait for it. Their
# rendering (nbconvert, in threads of the server) holds the interpreter's lock, and on 2 cores it slowed the
# first build, which a newcomer waits for (issue 23); the notebook pages say "being executed" meanwhile.
_PAGES_WRITTEN = threading.Event()


def pages_written() -> None:
    """A ``serve`` build has written its pages (``on_post_build``): the notebooks may start."""
    _PAGES_WRITTEN.set()


def start_notebooks(notebooks: Iterable[Notebook], config: Any, files: Any, *, serving: bool) -> None:
    """Start the executions of a build's notebooks (MkDocs ``on_nav``, when every page exists); under
    ``serve``, queued now and run once the first build has written its pages (:func:`pages_written`)."""
    plugin = _executing_plugin(config)
    if plugin is None:
        return
    pages = []
    for notebook in notebooks:
        file = files.get_file_from_path(notebook.path)
        if file is not None and file.page is not None:
            pages.append(file.page)
    marker = marker_path()
    start(
        pages,
        plugin,
        config,
        files,
        when_done=(lambda: touch_marker(marker)) if serving else None,
        after=_PAGES_WRITTEN if serving else None,
    )


def before_notebook_page(page: Any, notebooks: Iterable[Notebook], config: Any, *, serving: bool) -> None:
    """Just before a page is rendered (``on_page_markdown``): if it is a notebook whose execution started,
    wait for it and raise its error if it failed, or under ``serve`` show the placeholder while it runs."""
    plugin = _executing_plugin(config)
    notebook = next((n for n in notebooks if n.path == page.file.src_uri), None)
    if plugin is None or notebook is None or page.file.abs_src_path is None:
        return
    future = execution(plugin, page.file.abs_src_path)
    if future is None:
        return
    if serving and show_placeholder_while_running(page, future, notebook.title):
        return
    future.result()  # the plugin's render then reads the cache entry the execution wrote
