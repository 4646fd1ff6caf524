"""Under ``dev.py serve``: slow results that no cache holds yet are computed by worker processes while the
server answers (issue 23).

A newcomer's first ``dev.py serve`` answered after the whole cold build: 139 s on 2 cores, most of it the
simulator runs behind lesson figures, ``holds`` claims, chart data and widgets' default states, which later
builds read from their caches (:mod:`course.numbers.value_cache`, :mod:`course.charts.stored_data`,
:mod:`course.widgets.computed`). Under ``dev.py serve`` (which sets :data:`ENV`) such a result, on a cache
miss, is handed to a pool of worker processes (one per core, at a lower priority than the build) and the page
shows that it is being computed: a figure reads "…", a chart or widget is a box that says so, and every page
carries a notice with the count (:func:`notice_html`). When the last one has finished, the workers' results
are where the next build finds them and the server's watched marker file is written (:func:`marker_path`), so
the server rebuilds every page with the real figures, and checks the claims that waited for them.

- Nothing is computed differently: a worker calls the same function with the same arguments and the same
  model setting as the build would have; the build stores the result in its cache as if it had computed it.
  A job that failed in its worker is run again in the build, so its error reads exactly as without workers.
- ``mkdocs build``, ``check`` and the tests never set :data:`ENV`: they compute everything before they answer,
  and a wrong claim fails them as always. Under ``serve`` a wrong claim among the waiting ones is reported on
  the rebuild that follows, as the notice and the log say.
- Expressions are still limited in time each (in the worker, as in the build); the page's and the build's
  shared budgets (:mod:`course.lesson_format.expression_budget`) count only what the build computes itself.
"""

from __future__ import annotations

import contextlib
import html
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar, cast

R = TypeVar("R")
ENV = "RIDGEPOINT_BACKGROUND_RESULTS"  # "1": set by dev.py serve (noxfile.py)
SERVING_ENV = "RIDGEPOINT_SERVING"  # course.lesson_format.problems.SERVING_ENV, set by the hook under serve
MARKER_NAME = "background-results"
WORKER_NICENESS = 5  # below the build that waits on nothing, above the notebooks' kernels (10)
PROJECT = Path(__file__).resolve().parents[2]

PENDING_TEXT = "…"
PENDING_TITLE = "Being computed in the background: the page reloads with the figure when it is done"


class BeingComputed(Exception):
    """The result is being computed by a worker process: show that on the page and go on (serve only)."""


_LOCK = threading.RLock()  # re-entered: a job done before its callback is added runs it at once
_JOBS: dict[Hashable, Future[Any]] = {}
_POOL: list[ProcessPoolExecutor] = []
_SEEN_THIS_BUILD: set[Hashable] = set()


_HERE: ContextVar[bool] = ContextVar("computed_here", default=False)


def enabled() -> bool:
    """Whether slow results go to the workers: under ``dev.py serve`` only, outside :func:`here`."""
    return os.environ.get(ENV) == "1" and os.environ.get(SERVING_ENV) == "1" and not _HERE.get()


@contextmanager
def here() -> Iterator[None]:
    """Compute every result inside the block in this process, never pending (a quiz's answer: the page
    needs its value to mark the reader's answer)."""
    token = _HERE.set(True)
    try:
        yield
    finally:
        _HERE.reset(token)


def marker_path() -> Path:
    """The file written when the workers have finished everything they were given: the server watches it.

    Beside the notebooks' marker, in their cache root (:mod:`course.notebooks.scheduling`)."""
    from course.notebooks.scheduling import marker_path as notebooks_marker

    return notebooks_marker().with_name(MARKER_NAME)


def prepare_marker() -> Path:
    """Make sure the marker exists (a watched path must), and return it."""
    from course.notebooks.scheduling import prepare_marker as prepare

    return prepare(marker_path())


def _start_worker(project: str, niceness: int) -> None:
    if project not in sys.path:
        sys.path.insert(0, project)
    os.environ[ENV] = "0"  # a worker computes what it is given itself
    with contextlib.suppress(OSError):  # not allowed: the default priority
        os.nice(niceness)


def _pool() -> ProcessPoolExecutor:
    if not _POOL:
        # Spawned, not forked: the server has threads (notebooks, the watcher) that a fork would copy.
        _POOL.append(
            ProcessPoolExecutor(
                max_workers=os.cpu_count() or 1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(str(PROJECT), WORKER_NICENESS),
            )
        )
    return _POOL[0]


def result(key: Hashable, function: Callable[..., R], *args: Any) -> R:
    """``function(*args)``: here when the workers are off; otherwise from a worker process.

    Raises :class:`BeingComputed` until the worker has finished (the first call submits the job); then
    returns its result, or, if it failed there, runs ``function(*args)`` here so that its error is raised
    as it would have been. ``key`` names the job: the same key is the same result.
    """
    if not enabled():
        return function(*args)
    with _LOCK:
        job = _JOBS.get(key)
        if job is None:
            try:
                job = _pool().submit(_run, function, args)
            except RuntimeError:  # the pool broke (a worker was killed) or is shutting down: compute here
                job = None
            if job is not None:
                _JOBS[key] = job
                job.add_done_callback(_finished)
        if job is not None:
            _SEEN_THIS_BUILD.add(key)
        if job is not None and not job.done():
            _STATE["rebuild_wanted"] = True
            raise BeingComputed(str(key))
    if job is None or job.exception() is not None:
        return function(*args)
    succeeded, value = job.result()
    return cast(R, value) if succeeded else function(*args)  # its error, raised here as without workers


def _run(function: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """In a worker: ``(True, function(*args))``, or ``(False, None)`` if it raised (an exception is not sent
    back: not every one survives pickling, and the build raises it again itself)."""
    try:
        return True, function(*args)
    except Exception:
        return False, None


_STATE = {"building": False, "rebuild_wanted": False}


def start_build() -> None:
    """A build begins (MkDocs ``on_config``): count from now on the results it waits for."""
    with _LOCK:
        _SEEN_THIS_BUILD.clear()
        _STATE.update(building=True, rebuild_wanted=False)


def end_build() -> int:
    """A build has written its pages (``on_post_build``): if it showed results as pending, the server must
    rebuild once they are all done (now, if they already are). Returns how many it still waits for."""
    with _LOCK:
        _STATE["building"] = False
        count = sum(1 for key in _SEEN_THIS_BUILD if not _JOBS[key].done())
    if count:
        print(log_line(count), file=sys.stderr)
    _rebuild_when_done()
    return count


def _finished(_: Future[Any]) -> None:
    _rebuild_when_done()


def _rebuild_when_done() -> None:
    """Write the marker (the server rebuilds) once no build is running, one showed a pending result, and
    every job has finished."""
    with _LOCK:
        if _STATE["building"] or not _STATE["rebuild_wanted"]:
            return
        if any(not job.done() for job in _JOBS.values()):
            return
        _STATE["rebuild_wanted"] = False
    marker = prepare_marker()
    marker.write_text(f"background results done at {time.time_ns()}\n", encoding="utf-8")
    print("INFO    -  The results computed in the background are done: rebuilding.", file=sys.stderr)


def shutdown() -> None:
    """The server stops (MkDocs ``on_shutdown``): drop what the workers have not finished, at once.

    Python would otherwise wait, at exit, for every job still queued (minutes on a first run); nothing is
    lost but cache entries, which the next run computes again."""
    with _LOCK:
        pools = list(_POOL)
        _POOL.clear()
        _STATE["rebuild_wanted"] = False  # the cancelled jobs are not results: no rebuild, no message
    for pool in pools:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()


def waiting() -> int:
    """How many results that this build needed are still being computed."""
    with _LOCK:
        return sum(1 for key in _SEEN_THIS_BUILD if not _JOBS[key].done())


def notice_html(count: int) -> str:
    """The notice on top of every page while ``count`` results of this build are being computed."""
    return (
        '<aside class="rp-being-computed" role="status" style="border:2px solid #1565c0;padding:.6em 1em;'
        'margin:0 0 1.2em;font-size:.75rem;background:rgba(21,101,192,.06)">'
        f"<p><strong>{count} slow result{'s are' if count != 1 else ' is'} being computed</strong> in the "
        "background (simulator runs behind figures, claims, charts and widgets; nothing is cached yet in a "
        f"fresh clone). Figures not computed yet read {html.escape(PENDING_TEXT)}, and the claims that need "
        "them are checked when they are done: the server then rebuilds and the page reloads (a minute or two "
        "on a first run). <code>python3 dev.py build</code> computes and checks everything before it answers."
        "</p></aside>"
    )


def log_line(count: int) -> str:
    """What the server logs after a build that left ``count`` results to the workers."""
    return (
        f"INFO    -  {count} slow result{'s are' if count != 1 else ' is'} being computed in the background "
        "(figures, claims, charts, widgets): the pages show them as pending, and the server rebuilds when "
        "they are done; claims among them are checked then."
    )


def placeholder_box(what: str) -> str:
    """The box a chart or widget shows while its result is being computed."""
    return (
        '<div class="admonition info rp-being-computed"><p class="admonition-title">'
        f"This {html.escape(what)} is being computed</p><p>Its simulator runs go on in the background while "
        "the site is served; the server rebuilds when they are done, and the page reloads.</p></div>"
    )
