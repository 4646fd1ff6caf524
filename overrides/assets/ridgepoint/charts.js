// Ridgepoint charts: turn a build-time chart figure into a live Vega view when the reader reaches for it.
//
// Every figure.rp-chart already shows its static SVG, caption and data table (also without JavaScript).
// On the first hover, focus or tap, this script loads the self-hosted Vega runtime (once per page, checked
// by Subresource Integrity), fetches the chart's spec (or reads it inline), renders it with the SVG renderer
// and swaps it in place of the static image. Nothing is loaded before that.
// The main thread never freezes for it: see `embed` for how the work is cut into tasks under 50 ms. It re-initialises on Material's
// document$ (instant navigation) and exposes window.ridgepoint.charts for widgets that push new rows.
// A course chart's page holds its narrow drawing only; where the figure is wide enough for the wide one, this
// script fetches it (a file of this site named by its SHA-256, checked by the browser) once the page has
// loaded, and charts.css shows it in the place an empty frame held for it (see `showWide`).
(() => {
  "use strict";
  const here = document.currentScript ? document.currentScript.src : location.href;
  const BASE = new URL(".", here); // this file is assets/ridgepoint/charts.js; runtime and specs sit beside it
  const ASSETS = new URL("../", BASE);
  // Where the Vega runtime is and its hash come from the build's runtime.json, never from the page.
  let config = null;
  function runtimeConfig() {
    if (!config) {
      config = fetch(new URL("runtime.json", BASE)).then((response) => {
        if (!response.ok) throw new Error(`runtime.json: HTTP ${response.status}`);
        return response.json();
      });
      config.catch(() => (config = null));
    }
    return config;
  }
  const TRIGGERS = ["pointerenter", "focusin", "touchstart"];
  const embeds = new Map(); // figure -> Promise of vega-embed's result ({view, finalize})
  let runtime = null; // Promise of vegaEmbed

  function loadRuntime() {
    if (typeof window.vegaEmbed === "function") return Promise.resolve(window.vegaEmbed);
    if (!runtime) {
      runtime = runtimeConfig().then(({ vega }) => new Promise((resolve, reject) => {
        const src = new URL(vega.src, ASSETS);
        if (src.origin !== location.origin) throw new Error("the chart runtime must come from this site");
        const script = document.createElement("script");
        script.src = src.href;
        script.integrity = vega.integrity;
        script.async = true;
        script.onload = () =>
          typeof window.vegaEmbed === "function"
            ? resolve(window.vegaEmbed)
            : reject(new Error("the chart runtime loaded but did not define vegaEmbed"));
        script.onerror = () => {
          runtime = null; // a later reach may retry (e.g. back online)
          reject(new Error("the chart runtime could not be loaded"));
        };
        document.head.appendChild(script);
      }));
      runtime.catch(() => (runtime = null));
    }
    return runtime;
  }

  // The figure's width decides between the wide drawing and its narrow variant, as charts.css does for the
  // static SVGs (same threshold: the wide drawing's width, calculators.charts.specs.WIDE_WIDTH), so going
  // live never changes a chart's layout or text size.
  const NARROW_BELOW_PX = 640;

  // A chart's spec and its kind: the site serves Vega specs (compiled from Vega-Lite at build, so the reader's
  // browser never runs the Vega-Lite compiler); a spec inline in the page (notebook outputs) is Vega-Lite,
  // compiled here in the parse step's task.
  async function specOf(figure) {
    const holder = figure.querySelector(".rp-chart__view");
    const fitsNarrow = holder.clientWidth < NARROW_BELOW_PX;
    const inlineNarrow = figure.querySelector("script.rp-chart__spec--narrow");
    if (inlineNarrow && fitsNarrow) return { spec: JSON.parse(inlineNarrow.textContent), mode: "vega-lite" };
    const inline = figure.querySelector("script.rp-chart__spec:not(.rp-chart__spec--narrow)");
    if (inline) return { spec: JSON.parse(inline.textContent), mode: "vega-lite" };
    const narrow = figure.dataset.rpSpecNarrow && fitsNarrow;
    const key = narrow ? figure.dataset.rpSpecNarrow : figure.dataset.rpSpec;
    if (!/^[0-9a-f]+$/.test(key || "")) throw new Error("this chart names no spec the site built");
    const response = await fetch(new URL(`charts/${key}.json`, BASE));
    if (!response.ok) throw new Error(`chart spec ${key}: HTTP ${response.status}`);
    return { spec: await response.json(), mode: "vega" };
  }

  // The wide drawing, where the figure is at least as wide as it (charts.css's threshold too). Fetched after
  // the page's load, when the browser is idle: it replaces a drawing the reader already sees. Its name is its
  // SHA-256, which the browser checks (Subresource Integrity), so only the build's own drawing is shown.
  const wideDrawings = new WeakMap(); // figure -> Promise, once per figure
  const pageLoaded = new Promise((resolve) => {
    if (document.readyState === "complete") resolve();
    else window.addEventListener("load", resolve, { once: true });
  }).then(() => new Promise((resolve) => (window.requestIdleCallback ? requestIdleCallback(resolve, { timeout: 2000 }) : setTimeout(resolve, 0))));

  function integrityOf(hex) {
    let binary = "";
    for (let index = 0; index < hex.length; index += 2) binary += String.fromCharCode(parseInt(hex.slice(index, index + 2), 16));
    return `sha256-${btoa(binary)}`;
  }

  async function fetchWide(figure) {
    const digest = figure.dataset.rpWide;
    if (!/^[0-9a-f]{64}$/.test(digest || "")) return;
    await pageLoaded;
    const response = await fetch(new URL(`charts/${digest}.svg`, BASE), { integrity: integrityOf(digest) });
    if (!response.ok) throw new Error(`wide drawing ${digest.slice(0, 12)}: HTTP ${response.status}`);
    const drawing = new DOMParser().parseFromString(await response.text(), "image/svg+xml").documentElement;
    if (drawing.localName !== "svg" || drawing.namespaceURI !== "http://www.w3.org/2000/svg") {
      throw new Error("the wide drawing is not an SVG");
    }
    const view = figure.querySelector(".rp-chart__view");
    if (!view || figure.classList.contains("rp-chart--live") || view.querySelector(".rp-chart__svg--wide")) return;
    const holder = document.createElement("div");
    holder.className = "rp-chart__svg rp-chart__svg--wide";
    holder.append(document.importNode(drawing, true));
    view.prepend(holder);
    figure.classList.remove("rp-chart--narrow-only");
    figure.classList.add("rp-chart--wide");
  }

  function showWide(figure) {
    if (!wideDrawings.has(figure)) {
      const pending = fetchWide(figure).catch((error) => {
        wideDrawings.delete(figure); // the narrow drawing stays, at its own size; a later resize tries again
        figure.classList.add("rp-chart--narrow-only");
        console.warn(`Ridgepoint: chart keeps its narrow drawing (${error.message})`);
      });
      wideDrawings.set(figure, pending);
    }
  }

  const widths = typeof ResizeObserver === "function"
    ? new ResizeObserver((entries) => {
      for (const entry of entries) {
        if (entry.contentRect.width >= NARROW_BELOW_PX) showWide(entry.target.closest("figure.rp-chart"));
      }
    })
    : null;

  function darkScheme() {
    return document.body.getAttribute("data-md-color-scheme") === "slate";
  }

  // Yield the main thread: the browser paints and handles input between the steps of a chart's first drawing.
  function nextTask() {
    if (window.scheduler && typeof window.scheduler.yield === "function") return window.scheduler.yield();
    return new Promise((resolve) => setTimeout(resolve, 0));
  }

  const EMBED_OPTIONS = {
    ast: true, // Vega's expression interpreter: no eval, so the Content-Security-Policy needs no 'unsafe-eval'
    renderer: "svg", // the page's CSS styles live and static charts alike (currentColor, fonts)
    actions: false,
    // The site's compiled specs compute a mark's tooltip in its hover encoding, when the pointer enters it,
    // not on every update (course/charts/assets.py, tooltips_on_hover); a spec without one is unchanged.
    hover: true,
  };

  // Vega's View class, which this bundle of vega-embed does not export: taken from the view of an empty chart
  // (drawn by nothing, a few milliseconds), once per page.
  let viewClass = null;
  function loadViewClass(vegaEmbed) {
    if (!viewClass) {
      viewClass = vegaEmbed(document.createElement("div"), { marks: [] }, { ...EMBED_OPTIONS, mode: "vega", renderer: "none", tooltip: false })
        .then((result) => {
          const View = result.view.constructor;
          result.finalize();
          return View;
        });
      viewClass.catch(() => (viewClass = null));
    }
    return viewClass;
  }

  // Parse a spec into Vega's dataflow description, and stop there: vega-embed hands the parsed runtime to the
  // view class it is given, which records it and ends the embed.
  const PARSED = new Error("parsed");
  async function parseSpec(vegaEmbed, spec, mode) {
    let parsed = null;
    class Capture {
      constructor(runtime) {
        parsed = runtime;
        throw PARSED;
      }
    }
    try {
      await vegaEmbed(document.createElement("div"), spec, { ...EMBED_OPTIONS, mode, viewClass: Capture });
    } catch (error) {
      if (error !== PARSED) throw error;
    }
    if (!parsed) throw new Error("the chart runtime did not parse the spec");
    return parsed;
  }

  // vega-embed runs a chart's first drawing as one task: parse the spec, build the view, run its dataflow and
  // draw, 100-170 ms of main-thread work on a first hover. Here each step is a task of its own, none near 50 ms:
  // the runtime's script, the empty chart that yields the View class, the parse, then the real embed with a
  // view class that takes the parsed runtime (the embed parses only an empty spec) and waits a task before
  // its first run (the dataflow and the SVG). vega-embed still sets up the tooltips, sizing and the view.
  async function embed(figure) {
    figure.classList.add("rp-chart--loading");
    const holder = figure.querySelector(".rp-chart__view");
    const [vegaEmbed, { spec, mode }] = await Promise.all([loadRuntime(), specOf(figure)]);
    await nextTask(); // the runtime's script ran in the task that loaded it
    const View = await loadViewClass(vegaEmbed);
    await nextTask();
    const parsed = await parseSpec(vegaEmbed, spec, mode);
    await nextTask();
    class ParsedView extends View {
      constructor(_, options) {
        super(parsed, options);
        this.rpFirstRun = true;
      }

      async runAsync(...args) {
        if (this.rpFirstRun) {
          this.rpFirstRun = false;
          await nextTask(); // building the view and running its dataflow are two tasks
        }
        return super.runAsync(...args);
      }
    }
    // Drawn apart from the page and swapped in whole: the figure never shows a half-made view beside the
    // static drawing, though the steps leave the page in between.
    const live = document.createElement("div");
    live.className = "rp-chart__live";
    const result = await vegaEmbed(live, { marks: [] }, {
      ...EMBED_OPTIONS,
      mode: "vega",
      viewClass: ParsedView,
      tooltip: { theme: darkScheme() ? "dark" : "light" },
    });
    // The live drawing is an image with the figure's caption as its text alternative, like the static one.
    const svg = live.querySelector("svg");
    if (svg) {
      svg.setAttribute("role", "img");
      svg.setAttribute("aria-label", holder.getAttribute("aria-label") || "Chart");
    }
    holder.replaceChildren(live);
    figure.classList.remove("rp-chart--loading");
    figure.classList.add("rp-chart--live");
    return result;
  }

  // Make the figure live (once); resolves to vega-embed's result, whose .view a widget may update.
  function activate(figure) {
    if (!embeds.has(figure)) {
      const pending = embed(figure).catch((error) => {
        figure.classList.remove("rp-chart--loading");
        figure.classList.add("rp-chart--static");
        embeds.delete(figure); // the static chart stays; the next reach tries again
        console.warn(`Ridgepoint: chart stays static (${error.message})`);
        throw error;
      });
      embeds.set(figure, pending);
    }
    return embeds.get(figure);
  }

  function onReach(event) {
    activate(event.currentTarget).catch(() => {});
  }

  function prune() {
    for (const [figure, pending] of embeds) {
      if (figure.isConnected) continue;
      embeds.delete(figure);
      pending.then((result) => result.finalize()).catch(() => {});
    }
  }

  function init() {
    prune();
    for (const figure of document.querySelectorAll("figure.rp-chart:not([data-rp-ready])")) {
      figure.dataset.rpReady = "";
      for (const type of TRIGGERS) figure.addEventListener(type, onReach, { passive: true });
      const view = figure.querySelector(".rp-chart__view");
      if (widths && view && figure.dataset.rpWide) widths.observe(view);
    }
  }

  window.ridgepoint = window.ridgepoint || {};
  window.ridgepoint.charts = {
    activate,
    // Replace a named dataset of a chart's spec (calculators.charts.data rows) and redraw.
    async update(figure, dataset, rows) {
      const { view } = await activate(figure);
      await view.data(dataset, rows).runAsync();
      return view;
    },
  };

  window.ridgepoint.onEachPage(init); // ridgepoint.js, which runs first: every page view, instant navigation too
})();
