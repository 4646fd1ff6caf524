// Ridgepoint widgets: make the build-time widget figures live, with the calculators running under Pyodide.
//
// The page already shows each widget complete in its default state (rendered at build). This script only
// reads controls, asks the worker (widget-worker.js, one per page, shared by every widget) for results, and puts
// the answers into the page: numbers, the screen-reader summary, chart rows and the code cell. It does no maths.
// The worker starts only when the reader asks: the Start button, or a first change to a control. Scrolling
// past a widget never downloads Python (the home page promises it starts "when you use one").
// Results never disagree with the inputs beside them: while the shown numbers are not those of the inputs
// (a shared link's state, an input changed before Python is ready), the results are hidden.
// Charts are the course's chart figures: charts.js turns them into Vega views (the site's one pinned runtime)
// and this script only replaces their named datasets with the rows the worker computed.
// Speed: at most one request is in flight per widget; inputs arriving meanwhile are coalesced and only the
// latest state is sent when the answer comes back, so the reply to a slider move paints in the next frame.
(() => {
  "use strict";
  const here = document.currentScript ? document.currentScript.src : location.href;
  const ASSETS = new URL("../", here); // this file is assets/ridgepoint/widgets.js
  const WORKER_URL = new URL("ridgepoint/widget-worker.js", ASSETS);
  const RUN_TIMEOUT_MS = 15000;
  const START_TIMEOUT_MS = 120000;
  const SLIDER_STEPS = 1000;

  // ---- the shared runtime: one worker for every widget on the page (and across instant navigation) ----
  const runtime = {
    status: "idle", // idle | loading | ready | failed
    worker: null,
    reason: "",
    nextId: 1,
    pending: new Map(),
    widgets: new Set(),
    config: null,
    startedAt: 0,
  };

  function liveWidgets() {
    for (const widget of runtime.widgets) if (!widget.root.isConnected) runtime.widgets.delete(widget);
    return [...runtime.widgets];
  }

  function broadcast(method, ...args) {
    for (const widget of liveWidgets()) widget[method](...args);
  }

  function startRuntime(root) {
    if (runtime.status !== "idle") return;
    runtime.status = "loading";
    runtime.startedAt = performance.now();
    window.ridgepointWidgets.startedAt = runtime.startedAt;
    if (typeof Worker === "undefined" || typeof WebAssembly === "undefined") {
      failRuntime("this browser cannot run WebAssembly in a worker");
      return;
    }
    broadcast("showProgress", "Starting Python", 0);
    let worker;
    try {
      worker = new Worker(WORKER_URL, { type: "module" });
    } catch (error) {
      failRuntime(String(error.message || error));
      return;
    }
    runtime.worker = worker;
    worker.onmessage = (event) => onWorkerMessage(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      failRuntime(event.message || "the worker script could not be loaded");
    };
    // The worker reads where Pyodide and the calculators are from the build's runtime.json, not the page.
    worker.postMessage({ type: "start" });
    setTimeout(() => {
      if (runtime.status === "loading" && runtime.worker === worker) failRuntime("it took too long to start");
    }, START_TIMEOUT_MS);
  }

  function failRuntime(reason) {
    if (runtime.worker) runtime.worker.terminate();
    runtime.worker = null;
    runtime.status = "failed";
    runtime.reason = navigator.onLine === false ? `you seem to be offline (${reason})` : reason;
    for (const [, pending] of runtime.pending) pending.resolve({ ok: false, error: runtime.reason, failed: true });
    runtime.pending.clear();
    broadcast("showFallback", runtime.reason);
  }

  function onWorkerMessage(message) {
    if (message.type === "progress") {
      broadcast("showProgress", message.stage, message.loaded);
    } else if (message.type === "ready") {
      runtime.status = "ready";
      window.ridgepointWidgets.readyAt = performance.now();
      window.ridgepointWidgets.stages = message.stages || []; // where the start-up went (the benchmark prints it)
      broadcast("goLive");
    } else if (message.type === "warmed") {
      window.ridgepointWidgets.warmed = { ms: message.ms, modules: message.modules, rerun: message.rerun };
    } else if (message.type === "failed") {
      failRuntime(message.reason);
    } else if (message.type === "answer") {
      const pending = runtime.pending.get(message.id);
      runtime.pending.delete(message.id);
      if (pending) {
        clearTimeout(pending.timer);
        const answer = JSON.parse(message.answer);
        answer.pythonMs = message.ms;
        pending.resolve(answer);
      }
    }
  }

  // Ask the worker; resolves with {ok, result} or {ok: false, error}. A call that runs away (an endless loop in
  // the code cell) is stopped by restarting the worker, so the widgets keep working.
  function call(request, timeoutMs = RUN_TIMEOUT_MS) {
    return new Promise((resolve) => {
      if (runtime.status !== "ready") {
        resolve({ ok: false, error: "the live calculator is not running" });
        return;
      }
      const id = runtime.nextId++;
      const timer = setTimeout(() => {
        runtime.pending.delete(id);
        resolve({ ok: false, error: `stopped after ${timeoutMs / 1000} s without an answer; Python was restarted` });
        restartRuntime();
      }, timeoutMs);
      runtime.pending.set(id, { resolve, timer });
      runtime.worker.postMessage({ type: "call", id, request: JSON.stringify(request) });
    });
  }

  function restartRuntime() {
    if (runtime.worker) runtime.worker.terminate();
    runtime.worker = null;
    runtime.status = "idle";
    const first = liveWidgets()[0];
    if (first) startRuntime(first.root);
  }

  // ---- URL state: ?prefill-decode.prompt=4000&prefill-decode.kv=1 ----
  // The keys start with the widget's data-url-prefix: its name, or "serving-simulator-2" for a page's second
  // widget of a kind (course/widgets/extension.py instance_keys), so two never overwrite each other's state.
  function readURLState(name) {
    const params = new URLSearchParams(location.search);
    const state = {};
    for (const [key, value] of params) if (key.startsWith(`${name}.`)) state[key.slice(name.length + 1)] = value;
    return state;
  }

  function urlText(value) {
    if (value === null || value === undefined) return ""; // an unset input (a pool size left empty) is ""
    if (Array.isArray(value)) return value.join(",");
    if (typeof value === "boolean") return value ? "1" : "0";
    return String(value);
  }

  function writeURLState(name, state, defaults) {
    const url = new URL(location.href);
    for (const key of [...url.searchParams.keys()]) if (key.startsWith(`${name}.`)) url.searchParams.delete(key);
    for (const [key, value] of Object.entries(state)) {
      const text = urlText(value);
      const sameSet = Array.isArray(value) && urlText([...value].sort()) === urlText([...defaults[key]].sort());
      if (text !== urlText(defaults[key]) && !sameSet) url.searchParams.set(`${name}.${key}`, text);
    }
    if (url.href !== location.href) history.replaceState(history.state, "", url);
  }

  const URL_DELAY_MS = 250; // a dragged slider writes the address once it rests (browsers throttle replaceState)

  // The address belongs to the page the reader is on, and two races can break that. Instant navigation
  // changes the address before it swaps the content, so a delayed write could put this page's widget state
  // into the next page's address. And Chromium cancels a link's pending (cross-document) navigation when the
  // page calls history.replaceState before the new page commits: the click would seem to do nothing. So a
  // widget writes only on its own page, and never once the reader has started to leave; their next input on
  // the page (a cancelled navigation) allows it again.
  const address = { leaving: false };
  if (window.navigation && typeof window.navigation.addEventListener === "function") {
    window.navigation.addEventListener("navigate", (event) => {
      if (!event.destination.sameDocument) address.leaving = true;
    });
  } else {
    window.addEventListener("beforeunload", () => (address.leaving = true));
  }
  window.addEventListener("pageshow", () => (address.leaving = false)); // back from the back/forward cache

  function sameJSON(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
  }

  // Between two charts' updates, the browser gets a turn once this much of the task is spent (a long task is
  // 50 ms; a slider's update of two small charts stays within one task and one frame).
  const YIELD_AFTER_MS = 12;

  function nextTask() {
    if (window.scheduler && typeof window.scheduler.yield === "function") return window.scheduler.yield();
    return new Promise((resolve) => setTimeout(resolve, 0));
  }

  function whenIdle(callback) {
    if ("requestIdleCallback" in window) requestIdleCallback(callback, { timeout: 3000 });
    else setTimeout(callback, 200);
  }

  // Put `rows` into a view's dataset. A slider move changes a few values of the same rows (same count, same
  // fields): those values are changed in the rows the view holds, so Vega keeps its marks and their SVG
  // elements and only updates them. Replacing the rows (view.data) removed every mark and drew it anew: a
  // third more of Vega's work per move (encode and SVG), for the same drawing. Rows of another shape are
  // replaced.
  function setRows(view, name, rows) {
    const current = view.data(name); // throws for a dataset the view does not have
    const sameShape =
      current.length === rows.length &&
      rows.every((row, index) => {
        const fields = Object.keys(row);
        return fields.length === Object.keys(current[index]).length && fields.every((field) => field in current[index]);
      });
    if (!sameShape) {
      view.data(name, rows);
      return;
    }
    const changes = view.changeset();
    rows.forEach((row, index) => {
      const tuple = current[index];
      for (const [field, value] of Object.entries(row)) if (tuple[field] !== value) changes.modify(tuple, field, value);
    });
    view.change(name, changes);
  }

  // ---- one widget ----
  class Widget {
    constructor(root) {
      this.root = root;
      this.name = root.dataset.widget;
      this.urlPrefix = root.dataset.urlPrefix || this.name; // the address keys of this instance
      this.defaults = JSON.parse(root.dataset.defaults);
      this.page = location.pathname; // the only address this widget writes its state to
      this.form = root.querySelector(".rp-widget__controls"); // the fieldset of the inputs
      this.formElement = root.querySelector(".rp-widget__form");
      this.startBox = root.querySelector(".rp-widget__start");
      this.status = root.querySelector(".rp-widget__status");
      this.error = root.querySelector(".rp-widget__error");
      this.summary = root.querySelector(".rp-widget__summary");
      this.code = root.querySelector(".rp-widget__code");
      this.runOutput = root.querySelector(".rp-widget__run-output");
      this.seq = 0;
      this.inFlight = false; // a request is with the worker
      this.dirty = false; // inputs changed since that request went out
      this.shownRows = new Map(); // "chart/dataset" -> JSON of the rows the chart shows
      this.chartsLive = false;
      this.latestCharts = null;
      this.chartsBusy = null;
      this.codeEdited = false;
      this.lastProgress = "";
      root.dataset.rpState = "static";
      this.form.disabled = false; // disabled in the page for readers without JavaScript
      this.code.readOnly = false;
      this.root.querySelector(".rp-widget__run").disabled = false;
      this.linkProblems = [];
      this.applyState(readURLState(this.urlPrefix));
      this.syncSliders();
      this.setStale(this.restored);
      this.bind();
      runtime.widgets.add(this);
      if (runtime.status === "ready") this.goLive();
      else if (runtime.status === "failed") this.showFallback(runtime.reason);
      else if (runtime.status === "loading") this.showProgress("Starting Python", 0);
      else this.offerStart();
      if (this.linkProblems.length) this.showError(this.linkProblems.join(" "));
    }

    // Not started yet: say what the figure is and offer the explicit start.
    offerStart() {
      this.startBox.hidden = false;
      this.status.textContent = this.restored
        ? "This link sets its own inputs. Press Start to compute them; until then no results are shown."
        : "Showing the default scenario, computed when the site was built. Press Start, or change an input, to make it live.";
    }

    // Hide the results while they are not those of the inputs shown beside them.
    setStale(stale) {
      this.root.classList.toggle("rp-widget--stale", Boolean(stale));
    }

    bind() {
      const start = () => startRuntime(this.root);
      this.startBox.querySelector("button").addEventListener("click", start);
      this.formElement.addEventListener("pointerdown", start, { passive: true });
      this.root.querySelector(".rp-widget__python summary").addEventListener("click", start);
      this.formElement.addEventListener("submit", (event) => event.preventDefault());
      this.form.addEventListener("input", (event) => this.onInput(event));
      this.root.querySelector(".rp-widget__run").addEventListener("click", () => this.runCode());
      this.code.addEventListener("input", () => (this.codeEdited = true));
      this.code.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          this.runCode();
        }
      });
    }

    // Log sliders map positions 0..1000 onto low..high; the text field holds the exact value.
    sliderToValue(slider) {
      const low = Number(slider.dataset.low);
      const high = Number(slider.dataset.high);
      const value = Math.exp(Math.log(low) + ((Math.log(high) - Math.log(low)) * Number(slider.value)) / SLIDER_STEPS);
      return low >= 1 ? Math.round(value) : Number(value.toPrecision(value < 10 ? 2 : 3));
    }

    syncSliders() {
      for (const slider of this.form.querySelectorAll("input[data-log-for]")) {
        const field = this.form.elements.namedItem(slider.dataset.logFor);
        const value = Number(field.value);
        const low = Number(slider.dataset.low);
        const high = Number(slider.dataset.high);
        if (Number.isFinite(value) && value > 0) {
          const position = ((Math.log(value) - Math.log(low)) / (Math.log(high) - Math.log(low))) * SLIDER_STEPS;
          slider.value = String(Math.round(Math.min(SLIDER_STEPS, Math.max(0, position))));
        }
        slider.setAttribute("aria-valuetext", `${field.value}`);
      }
    }

    onInput(event) {
      address.leaving = false; // the reader is still here
      const target = event.target;
      this.linkProblems = [];
      if (target.dataset && target.dataset.logFor) {
        const field = this.form.elements.namedItem(target.dataset.logFor);
        field.value = String(this.sliderToValue(target));
        target.setAttribute("aria-valuetext", field.value);
      } else {
        this.syncSliders();
      }
      if (runtime.status !== "ready") this.setStale(true);
      startRuntime(this.root);
      this.schedule();
    }

    readState() {
      const form = this.form;
      if (this.name === "roofline-explorer") {
        return {
          gpus: [...form.querySelectorAll('input[name="gpus"]:checked')].map((box) => box.value),
          precision: form.elements.namedItem("precision").value,
          intensity: form.elements.namedItem("intensity").value,
        };
      }
      // Every other widget: each named control (hidden ones included) by its name; a switch as true/false.
      const state = {};
      for (const field of form.elements) {
        if (!field.name || field.disabled) continue;
        state[field.name] = field.type === "checkbox" ? field.checked : field.value;
      }
      return state;
    }

    // Put a state (from a link, or the defaults) into the controls. A choice the widget does not offer (a
    // mistyped model in a shared link) keeps the default and is reported, never left as a blank dropdown.
    applyState(state) {
      let applied = 0;
      for (const [key, value] of Object.entries(state)) {
        if (key === "gpus") {
          const chosen = String(value).split(",");
          const boxes = [...this.form.querySelectorAll('input[name="gpus"]')];
          const unknown = chosen.filter((name) => name && !boxes.some((box) => box.value === name));
          if (unknown.length) this.linkProblems.push(`The link names GPUs this widget does not offer (${unknown.join(", ")}); they are left out.`);
          for (const box of boxes) box.checked = chosen.includes(box.value);
          applied++;
          continue;
        }
        const field = this.form.elements.namedItem(key);
        if (!field || field instanceof RadioNodeList) continue;
        if (field.tagName === "SELECT" && ![...field.options].some((option) => option.value === String(value))) {
          const label = this.root.querySelector(`label[for="${field.id}"]`);
          const shown = field.options[field.selectedIndex] ? field.options[field.selectedIndex].text : "";
          this.linkProblems.push(`The link asks for ${label ? label.textContent : key} “${value}”, which this widget does not offer; showing ${shown} instead.`);
          continue;
        }
        if (field.type === "checkbox") field.checked = ["1", "true", "on", "yes"].includes(String(value).toLowerCase());
        else field.value = String(value);
        applied++;
      }
      this.restored = applied > 0;
    }

    // Send the current state now, or, when a request is already out, once its answer is back (latest only).
    schedule() {
      if (runtime.status !== "ready") return; // goLive() computes the current state once ready
      if (this.inFlight) {
        this.dirty = true;
        return;
      }
      this.update();
    }

    async update() {
      this.inFlight = true;
      this.dirty = false;
      const seq = ++this.seq;
      const state = this.readState();
      const asked = performance.now();
      const answer = await call({ widget: this.name, state });
      const answered = performance.now();
      this.inFlight = false;
      if (answer.failed) return;
      if (this.dirty) this.update(); // newer inputs: the worker computes them while this answer is painted
      if (!answer.ok) {
        this.showError(answer.error);
        return;
      }
      this.showError("");
      await this.render(answer.result);
      if (!this.dirty) this.setStale(false);
      if (seq === this.seq) {
        clearTimeout(this.urlTimer);
        // Written only while the widget is still on its page and the reader is not leaving it (see `address`).
        this.urlTimer = setTimeout(() => {
          if (this.root.isConnected && location.pathname === this.page && !address.leaving) {
            writeURLState(this.urlPrefix, state, this.defaults);
          }
        }, URL_DELAY_MS);
      }
      // The timings feed the benchmark (course/widgets/benchmark.py): where a slider move's time goes.
      const timings = { python: answer.pythonMs, roundTrip: answered - asked, render: performance.now() - answered };
      this.root.dispatchEvent(new CustomEvent("ridgepoint:rendered", { detail: { result: answer.result, timings } }));
    }

    async render(result) {
      for (const element of this.root.querySelectorAll("[data-shown]")) {
        const value = result.shown && result.shown[element.dataset.shown];
        if (value !== undefined && element.textContent !== value) element.textContent = value;
      }
      const table = this.root.querySelector('[data-table="gpus"] tbody');
      if (table && result.gpus) {
        table.replaceChildren(
          ...result.gpus.map((row) => {
            const tr = document.createElement("tr");
            const th = document.createElement("th");
            th.scope = "row";
            th.textContent = row.name;
            tr.append(th);
            for (const key of ["peak", "ridge_point", "attainable", "bound"]) {
              const td = document.createElement("td");
              td.textContent = row.shown[key];
              tr.append(td);
            }
            return tr;
          }),
        );
      }
      this.summary.textContent = result.summary;
      if (!this.codeEdited && this.code.value !== result.python) this.code.value = result.python;
      const atDefaults = sameJSON(result.state, this.defaults);
      await this.renderCharts(result.charts, atDefaults);
    }

    // Apply the latest chart rows; while a Vega update runs, newer rows wait and only the newest is applied.
    renderCharts(charts, atDefaults) {
      this.latestCharts = { charts, atDefaults };
      if (!this.chartsBusy) {
        this.chartsBusy = (async () => {
          try {
            while (this.latestCharts) {
              const next = this.latestCharts;
              this.latestCharts = null;
              await this.applyCharts(next.charts, next.atDefaults);
            }
          } finally {
            this.chartsBusy = null;
          }
        })();
      }
      return this.chartsBusy;
    }

    // One chart after the other; when the charts already drawn took a while (the serving simulator's, with
    // hundreds of marks), the browser gets a turn before the next, so no update is one long task.
    async applyCharts(charts, atDefaults) {
      let began = performance.now();
      for (const holder of this.root.querySelectorAll("[data-widget-chart]")) {
        const payload = charts[holder.dataset.widgetChart];
        const figure = holder.querySelector("figure.rp-chart");
        if (!payload || !figure) continue;
        this.updateText(figure, payload);
        const changed = [];
        for (const [name, rows] of Object.entries(payload.datasets)) {
          const key = `${holder.dataset.widgetChart}/${name}`;
          const text = JSON.stringify(rows);
          if (this.shownRows.get(key) === text) continue;
          // Until a chart is live, the build-time SVG shows the defaults: nothing to draw for them.
          if (!this.chartsLive && atDefaults) this.shownRows.set(key, text);
          else changed.push([key, name, rows, text]);
        }
        if (!changed.length) continue;
        if (performance.now() - began > YIELD_AFTER_MS) {
          await nextTask();
          began = performance.now();
        }
        await this.pushRows(figure, changed);
      }
    }

    async pushRows(figure, changed) {
      const charts = window.ridgepoint && window.ridgepoint.charts;
      if (!charts) return;
      let view;
      try {
        ({ view } = await charts.activate(figure));
      } catch (error) {
        this.root.dataset.charts = "static"; // charts.js said why; the numbers stay live
        return;
      }
      this.chartsLive = true;
      for (const [key, name, rows, text] of changed) {
        try {
          setRows(view, name, rows);
        } catch (error) {
          continue; // a dataset no mark draws (the axes' frame) is not in the view
        }
        this.shownRows.set(key, text);
      }
      await view.runAsync();
    }

    // The chart's text alternative follows its rows: caption, label and data table.
    updateText(figure, payload) {
      const caption = figure.querySelector(".rp-chart__caption");
      if (caption && caption.textContent !== payload.caption) caption.textContent = payload.caption;
      const view = figure.querySelector(".rp-chart__view");
      if (view && view.getAttribute("aria-label") !== payload.caption) view.setAttribute("aria-label", payload.caption);
      const body = figure.querySelector(".rp-chart__data tbody");
      const text = JSON.stringify(payload.rows);
      if (!body || body.dataset.rows === text) return;
      body.dataset.rows = text;
      body.replaceChildren(
        ...payload.rows.map((row) => {
          const tr = document.createElement("tr");
          for (const cell of row) {
            const td = document.createElement("td");
            td.textContent = cell;
            tr.append(td);
          }
          return tr;
        }),
      );
    }

    // Load Vega and make the charts live while the reader reads, so the first change only swaps rows.
    prepareCharts() {
      const charts = window.ridgepoint && window.ridgepoint.charts;
      if (!charts || this.chartsPrepared) return;
      this.chartsPrepared = true;
      whenIdle(() => {
        for (const figure of this.root.querySelectorAll("[data-widget-chart] figure.rp-chart")) {
          charts.activate(figure).catch(() => {});
        }
      });
    }

    showError(message) {
      message = message || this.linkProblems.join(" "); // a shared link's problem stays until an input changes
      this.error.textContent = message;
      this.root.classList.toggle("rp-widget--invalid", Boolean(message));
    }

    // Progress as the worker reports it: megabytes actually downloaded (a count that only grows), then the
    // stages after the download, named for what they are rather than held at "100%".
    showProgress(stage, loaded) {
      const amount = loaded ? ` (${(loaded / 1e6).toFixed(1)} MB so far)` : "";
      const text = `Starting the live calculator: ${stage}${amount}…`;
      if (text === this.lastProgress) return;
      this.lastProgress = text;
      this.root.dataset.rpState = "loading";
      this.startBox.hidden = true;
      this.status.textContent = text;
    }

    goLive() {
      this.startBox.hidden = true;
      this.root.dataset.rpState = "live";
      this.status.textContent = "Live: the calculators run in your browser. Change any input.";
      this.schedule();
      this.prepareCharts();
    }

    showFallback(reason) {
      this.root.dataset.rpState = "failed";
      this.applyState(Object.fromEntries(Object.entries(this.defaults).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v])));
      this.syncSliders();
      this.form.disabled = true;
      this.startBox.hidden = true;
      this.setStale(false); // the inputs are back at the defaults the figure shows
      this.root.querySelector(".rp-widget__run").disabled = true;
      this.status.textContent =
        `The live calculator could not start (${reason}). ` +
        "The figure shows the default scenario, computed when the site was built.";
    }

    async runCode() {
      startRuntime(this.root);
      this.runOutput.textContent = "Running…";
      while (runtime.status === "loading") await new Promise((done) => setTimeout(done, 100));
      const answer = await call({ run: this.code.value });
      if (!answer.ok) {
        this.runOutput.textContent = answer.error;
        this.runOutput.dataset.outcome = "error";
        return;
      }
      const { output, error } = answer.result;
      this.runOutput.textContent = (output + error).trimEnd() || "(no output)";
      this.runOutput.dataset.outcome = error ? "error" : "ok";
    }
  }

  function init() {
    for (const root of document.querySelectorAll(".rp-widget[data-widget]")) {
      if (root.dataset.rpBound) continue;
      root.dataset.rpBound = "1";
      new Widget(root);
    }
  }

  window.ridgepointWidgets = { runtime, startedAt: 0, readyAt: 0, warmed: null };
  window.ridgepoint.onEachPage(init); // ridgepoint.js, which runs first: every page view, instant navigation too
})();
