// Record every long task (over 50 ms of wall time) the page's main thread runs, from the start of the page:
// window.__longTasks holds their durations in milliseconds; read them with window.__longTasks.splice(0).
// Run before the page's own scripts (Playwright's add_init_script). Shared by the widget benchmark and the
// main-thread checks (course/benchmarks/main_thread.py).
(() => {
  window.__longTasks = [];
  new PerformanceObserver((list) => window.__longTasks.push(...list.getEntries().map((entry) => entry.duration)))
    .observe({ type: "longtask", buffered: true });
})();
