"""Main-thread long tasks in headless Chromium: what a reader feels as a freeze, and whose work it was.

One module for the widget benchmark and the browser test, two views of the same tasks:

- :data:`LONG_TASK_OBSERVER`, a ``PerformanceObserver`` the page runs: each long task's wall-clock
  duration, as the page sees it. On an idle machine that is what a reader feels; the benchmark prints it.
- :func:`trace_main_thread`, a DevTools trace of the renderer's main thread: each task's wall time, its CPU
  time (the thread's own time) and what ran inside it (each script by file, style, layout, paint, garbage
  collection). CPU time is the work a task holds the thread for, whatever else the machine runs: on a busy
  machine a task of 20 ms of work can take 200 ms of wall time while the OS runs other processes, but its
  thread time stays near 20 ms. A 50 ms budget on it is a check of our work, not of the machine's load.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

LONG_TASK_BUDGET_MS = 50.0  # the RAIL / Long Tasks API threshold: above it, input waits visibly

# Records every long task's wall-clock duration in window.__longTasks (read with splice(0) to take them).
LONG_TASK_OBSERVER = (Path(__file__).with_name("long_tasks.js")).read_text(encoding="utf-8")

# Trace categories with the main thread's tasks (and their thread time) and what runs inside them.
TRACE_CATEGORIES = [
    "toplevel",
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "v8.execute",
]
TASK_EVENT = "ThreadControllerImpl::RunTask"
SCRIPT_EVENTS = {"EvaluateScript", "FunctionCall", "v8.compile", "v8.compileModule", "v8.evaluateModule"}
# Added to TRACE_CATEGORIES where a test needs to know why the page was restyled: each change that marks
# elements for restyling, with the element and the reason (a class, an attribute, the colour scheme...).
INVALIDATION_CATEGORY = "disabled-by-default-devtools.timeline.invalidationTracking"
RENDERING_EVENTS = {
    "UpdateLayoutTree": "style",
    "Layout": "layout",
    "PrePaint": "paint",
    "Paint": "paint",
    "Layerize": "paint",
    "MajorGC": "garbage collection",
    "MinorGC": "garbage collection",
    "ParseHTML": "parse HTML",
    "ParseAuthorStyleSheet": "parse CSS",
    "RunMicrotasks": "promise callbacks",  # an async function's continuations (the trace names no script)
}


@dataclass
class Task:
    """One task of the renderer's main thread: when, how long, and the CPU time of what ran in it.

    ``work`` maps a script's file name (``script charts.js``) or a kind of browser work (``style``,
    ``layout``...) to its CPU milliseconds. Nested work counts once, in the outermost entry: a layout that a
    script forces is part of that script's time (the script asked for it).
    """

    start_ms: float
    wall_ms: float
    cpu_ms: float
    work: dict[str, float] = field(default_factory=dict)

    def scripts(self) -> set[str]:
        return {name.removeprefix("script ") for name in self.work if name.startswith("script ")}

    def describe(self) -> str:
        parts = ", ".join(f"{name} {ms:.0f} ms" for name, ms in Counter(self.work).most_common(4) if ms >= 1)
        return f"{self.cpu_ms:.0f} ms of CPU ({self.wall_ms:.0f} ms wall): {parts or 'browser internals'}"


def _data(event: dict[str, Any]) -> dict[str, Any]:
    """A trace event's ``args.data`` (empty where it has none)."""
    data: dict[str, Any] = event.get("args", {}).get("data") or {}
    return data


def _script_name(event: dict[str, Any]) -> str:
    data = _data(event)
    url = str(data.get("url") or data.get("scriptName") or event.get("args", {}).get("fileName") or "")
    return "script " + (url.rstrip("/").rsplit("/", 1)[-1] or "(inline)")


def main_thread_tasks(trace: bytes | str) -> list[Task]:
    """The tasks of every renderer main thread in a Chromium trace (JSON), in time order."""
    events = json.loads(trace)["traceEvents"]
    mains = {
        (event["pid"], event["tid"])
        for event in events
        if event.get("ph") == "M"
        and event.get("name") == "thread_name"
        and event.get("args", {}).get("name") == "CrRendererMain"
    }
    spans = sorted(
        (e for e in events if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) in mains and "dur" in e),
        key=lambda e: (e["pid"], e["tid"], e["ts"], -e["dur"]),
    )
    tasks: list[Task] = []
    current: Task | None = None
    end = 0.0
    covered = 0.0  # the end of the last span counted, so nested spans count once
    for event in spans:
        if event["name"] == TASK_EVENT:
            if current is not None and event["ts"] < end:
                continue  # a task nested in a task (a nested run loop): part of the outer one
            current = Task(event["ts"] / 1000, event["dur"] / 1000, event.get("tdur", event["dur"]) / 1000)
            end = event["ts"] + event["dur"]
            covered = event["ts"]
            tasks.append(current)
            continue
        if current is None or event["ts"] >= end or event["ts"] < covered:
            continue
        if event["name"] in SCRIPT_EVENTS:
            kind = _script_name(event)
        elif event["name"] in RENDERING_EVENTS:
            kind = RENDERING_EVENTS[event["name"]]
        else:
            continue
        current.work[kind] = current.work.get(kind, 0.0) + event.get("tdur", event["dur"]) / 1000
        covered = event["ts"] + event["dur"]
    return sorted(tasks, key=lambda task: task.start_ms)


@contextmanager
def trace_main_thread(browser: Any, page: Any) -> Iterator[list[Task]]:
    """Trace ``page`` (Playwright, Chromium) during the ``with`` block; the list gets its tasks at the end."""
    tasks: list[Task] = []
    browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
    try:
        yield tasks
    finally:
        tasks.extend(main_thread_tasks(browser.stop_tracing()))


@dataclass(frozen=True)
class RestyleMark:
    """One element a script marked for restyling: ``reason`` as Chromium names it ("Attribute", "Style rule
    change" for a changed stylesheet, "PlatformColorChange" for the colour scheme...) and whether its whole
    subtree was marked (a change on ``<html>`` or ``<body>`` that rules for any descendant depend on)."""

    element: str
    reason: str
    subtree: bool


def restyle_marks_in_script(trace: bytes | str, file_prefix: str) -> list[RestyleMark]:
    """Each element a script marked for restyling while it was evaluated (the first script whose file name
    starts with ``file_prefix``), in order.

    Read from the trace's invalidation tracking (:data:`INVALIDATION_CATEGORY`), which names each change
    where it is made, not from the restyles themselves: how many restyles a script's changes cost, and
    which of them run inside it, depend on the machine and its load (CI once counted three restyles of the
    whole page in Material's bundle where this machine counts two), while the changes and their reasons
    do not.
    """
    events = json.loads(trace)["traceEvents"]
    return _marks_within(events, _first_evaluation(events, file_prefix))


def restyle_marks_in_event(trace: bytes | str, event_type: str, after_script: str) -> list[RestyleMark]:
    """Each element the handlers of an event (``DOMContentLoaded``) marked for restyling, in order: in every
    dispatch of ``event_type`` on the thread that evaluated the script named ``after_script``*, after that
    evaluation began (the page's own events, not those of a page loaded before it in the trace; a frame's
    document can have its own dispatch of the same event, empty, just before the page's)."""
    events = json.loads(trace)["traceEvents"]
    script = _first_evaluation(events, after_script)
    dispatches = [
        e
        for e in events
        if e.get("ph") == "X"
        and e.get("name") == "EventDispatch"
        and _data(e).get("type") == event_type
        and (e.get("pid"), e.get("tid")) == (script["pid"], script["tid"])
        and e.get("ts", -1) >= script["ts"]
    ]
    if not dispatches:
        raise ValueError(f"the trace has no {event_type} event after {after_script}* was evaluated")
    ordered = sorted(dispatches, key=lambda e: e["ts"])
    return [mark for dispatch in ordered for mark in _marks_within(events, dispatch)]


def stylesheets_applied_in_script(trace: bytes | str, file_prefix: str) -> list[str]:
    """The addresses of the stylesheets that finished loading after the last style update before a script
    (the first whose file name starts with ``file_prefix``) and before it ended.

    The script's first style update applies them, so a "Style rule change" mark on the root falls inside the
    script although the script changed nothing. In about one traced load of batching in ten (4 of 40, then 2
    of 30; December 2026) Material's bundle ran before the page's first style update, with the page's
    stylesheets loaded, and its first read of the scroll position applied them all.
    """
    events = json.loads(trace)["traceEvents"]
    script = _first_evaluation(events, file_prefix)
    thread = (script["pid"], script["tid"])
    updates = [
        e["ts"] + e.get("dur", 0)
        for e in events
        if e.get("name") == "UpdateLayoutTree"
        and (e.get("pid"), e.get("tid")) == thread
        and e.get("ts", 0) + e.get("dur", 0) <= script["ts"]
    ]
    since = max(updates, default=0)
    addresses = {
        _data(e).get("requestId"): str(_data(e).get("url", ""))
        for e in events
        if e.get("name") == "ResourceSendRequest"
    }
    finished = (
        addresses.get(_data(e).get("requestId"), "")
        for e in events
        if e.get("name") == "ResourceFinish" and since <= e.get("ts", -1) < script["ts"] + script["dur"]
    )
    return [address for address in finished if urlsplit(address).path.endswith(".css")]


def _first_evaluation(events: list[dict[str, Any]], file_prefix: str) -> dict[str, Any]:
    """The first evaluation of a script whose file name starts with ``file_prefix``; ValueError if none."""
    for event in events:
        if (
            event.get("ph") == "X"
            and event.get("name") == "EvaluateScript"
            and _script_name(event).startswith(f"script {file_prefix}")
        ):
            return event
    raise ValueError(f"the trace has no evaluation of a script named {file_prefix}*")


def _marks_within(events: list[dict[str, Any]], span: dict[str, Any]) -> list[RestyleMark]:
    """The restyle marks made on ``span``'s thread while it ran, in order."""
    marks = []
    for e in sorted(events, key=lambda e: e.get("ts", 0)):
        data = _data(e)
        if (
            e.get("name") == "StyleRecalcInvalidationTracking"
            and (e.get("pid"), e.get("tid")) == (span["pid"], span["tid"])
            and span["ts"] <= e.get("ts", -1) < span["ts"] + span["dur"]
        ):
            element = str(data.get("nodeName", "")).split(" ", 1)[0]
            marks.append(RestyleMark(element, str(data.get("reason", "")), bool(data.get("subtree"))))
    return marks


def long_tasks(tasks: list[Task], budget_ms: float = LONG_TASK_BUDGET_MS) -> list[Task]:
    """The tasks whose CPU time is over the budget."""
    return [task for task in tasks if task.cpu_ms > budget_ms]
