"""The live widgets' figures for the benchmark session, measured in one run of headless Chromium.

- bare Pyodide boot (a module worker that only calls ``loadPyodide``) against the widget's time from first
  touch to live (worker ready, calculators loaded, first answer painted): the widget's overhead, as a ratio;
- slider-to-repaint latency (input event to the frame after the chart and numbers were updated), p50 and p95;
- main-thread long tasks (over 50 ms) from page load until the widget is live;
- bytes fetched on a first visit and on a repeat visit (Pyodide comes from Cache Storage the second time).
Figures only, never assertions: the targets are printed beside them.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from course.benchmark import Sites, register, serve
from course.frontend_assets import pyodide_site_path

LESSON = "inference/prefill-vs-decode/"
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
  root.querySelector("input[type=text]").focus();
  await rendered;
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  return performance.now() - touched;
}"""

SLIDER_LATENCY = """async ([selector, moves]) => {
  const root = document.querySelector(selector);
  const slider = root.querySelector("input[type=range]");
  const times = [];
  for (let i = 0; i < moves; i++) {
    const rendered = new Promise((resolve) =>
      root.addEventListener("ridgepoint:rendered", resolve, { once: true }));
    slider.value = String(300 + ((i * 37) % 600));
    const t0 = performance.now();
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    await rendered;
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    times.push(performance.now() - t0);
  }
  return times;
}"""

LONG_TASKS = """() => {
  window.__longTasks = [];
  new PerformanceObserver((list) => window.__longTasks.push(...list.getEntries().map((e) => e.duration)))
    .observe({ type: "longtask", buffered: true });
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

        bare = browser.new_context()
        tab = bare.new_page()
        tab.goto(base + "404.html")
        figures["bare_boot_ms"] = tab.evaluate(BARE_BOOT, base + "assets/" + pyodide_site_path())
        bare.close()

        context = browser.new_context(viewport={"width": 1280, "height": 900})
        fetched: list[int] = []
        context.on(
            "requestfinished", lambda request: fetched.append(max(0, request.sizes()["responseBodySize"]))
        )
        tab = context.new_page()
        tab.add_init_script(f"({LONG_TASKS})()")
        tab.goto(base + lesson, wait_until="load")
        figures["touch_to_live_ms"] = tab.evaluate(TOUCH_TO_LIVE, WIDGET)
        figures["long_tasks_ms"] = tab.evaluate("window.__longTasks")
        figures["slider_ms"] = tab.evaluate(SLIDER_LATENCY, [WIDGET, SLIDER_MOVES])
        figures["first_visit_bytes"] = sum(fetched)

        fetched.clear()
        tab.goto(base + lesson, wait_until="load")
        figures["repeat_touch_to_live_ms"] = tab.evaluate(TOUCH_TO_LIVE, WIDGET)
        figures["repeat_visit_bytes"] = sum(fetched)
        context.close()
        browser.close()
    return figures


@register("live widgets (prefill-vs-decode lesson, headless Chromium)")
def widget_figures(sites: Sites) -> list[tuple[str, str]]:
    figures = measure(sites.course_warm.site_dir)
    slider = figures["slider_ms"]
    long_tasks = [duration for duration in figures["long_tasks_ms"] if duration > 50]
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
            f"{statistics.median(slider):.1f} ms / {_percentile(slider, 0.95):.1f} ms ({len(slider)} moves)",
        ),
        (
            "main-thread long tasks > 50 ms until live (target 0)",
            f"{len(long_tasks)}" + (f", longest {max(long_tasks):.0f} ms" if long_tasks else ""),
        ),
        ("bytes fetched, first visit", f"{figures['first_visit_bytes'] / 1e6:,.2f} MB"),
        ("bytes fetched, repeat visit", f"{figures['repeat_visit_bytes'] / 1e6:,.2f} MB"),
    ]
