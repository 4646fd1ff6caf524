"""The live widgets' figures for the benchmark session, measured in one run of headless Chromium.

- bare Pyodide boot (a module worker that only calls ``loadPyodide``) against the widget's time from first
  touch to live (worker ready, calculators loaded, first answer painted): the widget's overhead, as a ratio;
- slider-to-repaint latency, p50 and p95: from a slider's input event until the numbers and the chart are
  updated in the page (worker round trip, DOM, Vega's ``runAsync``), which the browser then paints in its next
  frame; under 16.7 ms, a move is shown one frame later. The time until the next animation frame after the
  update is printed too (it adds the wait for the frame, whatever the widget does). Where the time goes
  (Python in the worker, the round trip, the page's update) comes from the widget's own ``rendered`` event;
- main-thread long tasks (over 50 ms) while the page loads (before any touch: the page's own cost), from the
  first touch until the widget is live, and during the slider moves;
- bytes fetched on a first visit and on a repeat visit (Pyodide comes from Cache Storage the second time).
Figures only, never assertions: the targets are printed beside them.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from course.benchmarks.harness import Sites, register, serve
from course.benchmarks.main_thread import LONG_TASK_OBSERVER
from course.widgets.runtime import pyodide_site_path

LESSON = "serving/prefill-vs-decode/"
WIDGET = "#widget-prefill-decode"
SLIDER_MOVES = 40

BARE_BOOT = """async (pyodideURL) => {
  const source = `import { loadPyodide } from "${pyodideURL}pyodide.mjs";
    const t0 = performance.now();
    await loadPyodide({ indexURL: "${pyodideURL}" });
    postMessage(performance.now() - t0);`;
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const started = performance.now();
  const worker = new Worker(url, { type: "module" });
  await new Promise((resolve) => (worker.onmessage = resolve));
  worker.terminate();
  return performance.now() - started;
}"""

TOUCH_TO_LIVE = """async (selector) => {
  const root = document.querySelector(selector);
  const rendered = new Promise((resolve) =>
      root.addEventListener("ridgepoint:rendered", resolve, { once: true }));
  const touched = performance.now();
  root.querySelector(".rp-widget__start-button").click(); // the reader's explicit start
  await rendered;
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  return performance.now() - touched;
}"""

SLIDER_LATENCY = """async ([selector, moves]) => {
  const root = document.querySelector(selector);
  const slider = root.querySelector("input[type=range]");
  const rows = [];
  for (let i = 0; i < moves; i++) {
    await new Promise((resolve) => setTimeout(resolve, 30)); // a reader's drag, not a flood of events
    const rendered = new Promise((resolve) =>
      root.addEventListener("ridgepoint:rendered", resolve, { once: true }));
    slider.value = String(300 + ((i * 37) % 600));
    const t0 = performance.now();
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    const event = await rendered;
    const updated = performance.now() - t0;
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const timings = (event.detail && event.detail.timings) || {};
    const frame = performance.now() - t0;
    rows.push({ updated, frame, python: timings.python, roundTrip: timings.roundTrip });
  }
  return rows;
}"""


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(site_dir: Path, lesson: str = LESSON) -> dict[str, Any]:
    """Every widget figure, from one Chromium; returns milliseconds, counts and bytes."""
    from playwright.sync_api import sync_playwright

    from course.browser_flags import CHROMIUM, CHROMIUM_ARGS

    figures: dict[str, Any] = {}
    with serve(site_dir) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)

        def bare_boot() -> float:
            bare = browser.new_context()
            tab = bare.new_page()
            tab.goto(base + "404.html")
            boot: float = tab.evaluate(BARE_BOOT, base + "assets/" + pyodide_site_path())
            bare.close()
            return boot

        # Bare boots before and after the widget's start, averaged: the machine's load drifts between them.
        boots = [bare_boot()]

        context = browser.new_context(viewport={"width": 1280, "height": 900})
        fetched: list[int] = []
        context.on(
            "requestfinished", lambda request: fetched.append(max(0, request.sizes()["responseBodySize"]))
        )
        tab = context.new_page()
        tab.add_init_script(LONG_TASK_OBSERVER)
        tab.goto(base + lesson, wait_until="load")
        tab.wait_for_timeout(1000)  # the page's own load (Material, the inline charts) is not the widget's
        figures["page_long_tasks_ms"] = tab.evaluate("window.__longTasks.splice(0)")
        figures["touch_to_live_ms"] = tab.evaluate(TOUCH_TO_LIVE, WIDGET)
        figures["long_tasks_ms"] = tab.evaluate("window.__longTasks.splice(0)")
        tab.wait_for_timeout(3000)  # the reader reads the live widget for a moment (charts load when idle)
        tab.evaluate("window.__longTasks.splice(0)")
        figures["slider_ms"] = tab.evaluate(SLIDER_LATENCY, [WIDGET, SLIDER_MOVES])
        figures["slider_long_tasks_ms"] = tab.evaluate("window.__longTasks.splice(0)")
        figures["first_visit_bytes"] = sum(fetched)

        fetched.clear()
        tab.goto(base + lesson, wait_until="load")
        figures["repeat_touch_to_live_ms"] = tab.evaluate(TOUCH_TO_LIVE, WIDGET)
        figures["repeat_visit_bytes"] = sum(fetched)
        context.close()
        boots.append(bare_boot())
        figures["bare_boot_ms"] = statistics.fmean(boots)
        browser.close()
    return figures


@register("live widgets (prefill-vs-decode lesson, headless Chromium)")
def widget_figures(sites: Sites) -> list[tuple[str, str]]:
    return figure_rows(measure(sites.course_warm.site_dir))


def figure_rows(figures: dict[str, Any]) -> list[tuple[str, str]]:
    """The printout's rows for :func:`measure`'s figures."""
    moves = figures["slider_ms"]
    slider = [move["updated"] for move in moves]
    frames = [move["frame"] for move in moves]
    python = [move["python"] for move in moves if move.get("python") is not None]
    trips = [move["roundTrip"] for move in moves if move.get("roundTrip") is not None]
    long_tasks = [duration for duration in figures["long_tasks_ms"] if duration > 50]
    slider_tasks = [duration for duration in figures["slider_long_tasks_ms"] if duration > 50]
    return [
        ("bare Pyodide boot (module worker)", f"{figures['bare_boot_ms']:,.0f} ms"),
        (
            "widget first touch to live (target <= 1.2x bare)",
            f"{figures['touch_to_live_ms']:,.0f} ms = "
            f"{figures['touch_to_live_ms'] / figures['bare_boot_ms']:.2f}x",
        ),
        ("repeat visit: touch to live", f"{figures['repeat_touch_to_live_ms']:,.0f} ms"),
        (
            "slider to repaint p50 / p95 (target p95 <= 16.7 ms)",
            f"{statistics.median(slider):.1f} ms / {_percentile(slider, 0.95):.1f} ms ({len(slider)} moves, "
            f"max {max(slider):.0f} ms)",
        ),
        (
            "  to the next animation frame p50 / p95",
            f"{statistics.median(frames):.1f} ms / {_percentile(frames, 0.95):.1f} ms",
        ),
        (
            "  of which Python in the worker / round trip p50",
            f"{statistics.median(python):.1f} ms / {statistics.median(trips):.1f} ms" if python else "n/a",
        ),
        (
            "long tasks > 50 ms while the page loads",
            ", ".join(f"{duration:.0f} ms" for duration in figures["page_long_tasks_ms"] if duration > 50)
            or "0",
        ),
        (
            "long tasks > 50 ms, first touch to live (target 0)",
            f"{len(long_tasks)}" + (f", longest {max(long_tasks):.0f} ms" if long_tasks else ""),
        ),
        (
            "long tasks > 50 ms while sliding",
            f"{len(slider_tasks)}" + (f", longest {max(slider_tasks):.0f} ms" if slider_tasks else ""),
        ),
        ("bytes fetched, first visit", f"{figures['first_visit_bytes'] / 1e6:,.2f} MB"),
        ("bytes fetched, repeat visit", f"{figures['repeat_visit_bytes'] / 1e6:,.2f} MB"),
    ]


def main(argv: list[str] | None = None) -> int:
    """``python -m course.widgets.benchmark SITE_DIR``: the widget figures alone, for a built site."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m course.widgets.benchmark SITE_DIR (a site built with mkdocs build)")
        return 2
    for label, value in figure_rows(measure(Path(args[0]))):
        print(f"  {label:<52} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
