// Ridgepoint page scripts: each block's code initialises on every page the reader sees (instant navigation too).
(function () {
  "use strict";

  // Material's document$ emits after each of its instant navigations, but Material starts only when the reader
  // first acts on a page (material-on-demand.js), which says so with "ridgepoint:material".
  var waitingForMaterial = [];
  function whenMaterial(callback) {
    if (window.document$ && typeof window.document$.subscribe === "function") callback(window.document$);
    else waitingForMaterial.push(callback);
  }
  window.addEventListener("ridgepoint:material", function () {
    waitingForMaterial.splice(0).forEach(whenMaterial);
  });

  // Run `init` once on every page view: when this document is ready, and after each instant navigation once
  // Material runs. Material hands its document$ the page it starts on too, which is not a new page: a page is
  // known by its container, which instant navigation replaces. Without Material (a plain static copy of a
  // page) `init` runs once.
  function onEachPage(init) {
    var seen = new WeakSet();
    function run() {
      var page = document.querySelector("[data-md-component=container]") || document.body;
      if (seen.has(page)) return;
      seen.add(page);
      init(document);
    }
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run, { once: true });
    else run();
    whenMaterial(function (document$) { document$.subscribe(run); });
  }

  window.ridgepoint = Object.assign(window.ridgepoint || {}, { onEachPage: onEachPage });

  // Remember where the site lives on this host (this file is <root>/assets/ridgepoint/ridgepoint.js): the 404
  // page reads it to find the site when the missing address alone cannot tell (overrides/404.html).
  try {
    var root = document.currentScript && new URL("../../", document.currentScript.src).pathname;
    var roots = JSON.parse(localStorage.getItem("ridgepoint:roots") || "[]");
    if (root && Array.isArray(roots) && roots.indexOf(root) < 0) {
      localStorage.setItem("ridgepoint:roots", JSON.stringify(roots.concat(root).slice(-8)));
    }
  } catch (error) {
    // Storage switched off: the 404 page falls back to links to the published course.
  }

  // Printing: open every collapsed section ("Go deeper", chart data tables) and close them again afterwards.
  var openedForPrint = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (details) {
      details.setAttribute("open", "");
      openedForPrint.push(details);
    });
  });
  window.addEventListener("afterprint", function () {
    openedForPrint.forEach(function (details) { details.removeAttribute("open"); });
    openedForPrint = [];
  });

  // A computed number reads as what it says ("295 FLOP/byte"), not as the Python that computed it, and is not
  // a tab stop (a lesson had 21-25 of them among its 97-99). The source moves from the title (which screen
  // readers announce) to a tooltip drawn by CSS for pointers; without JavaScript the title stays.
  onEachPage(function (root) {
    root.querySelectorAll(".rp-number[title]").forEach(function (number) {
      number.setAttribute("data-tip", number.getAttribute("title"));
      number.removeAttribute("title");
    });
  });

  // Material's search dialog has no accessible name; give it the one its button has.
  onEachPage(function () {
    var dialog = document.querySelector(".md-search[role=dialog]:not([aria-label])");
    if (dialog) dialog.setAttribute("aria-label", "Search");
  });

  // A box that scrolls sideways (wide code, display math, a wide table) must be reachable by keyboard, or its
  // hidden part is out of reach; boxes inside a section opened later are checked when it opens. Until
  // Material starts, a code block's <code> and a table scroll themselves; once it has, Material's wrapper
  // scrolls a table instead (and Material gives wide code its own tabindex).
  var SCROLLERS = "pre, pre > code, :not(.md-typeset__table) > table:not([class]), .highlight-ipynb, " +
    ".rp-math--display, .md-typeset__scrollwrap, .jp-OutputArea-output";
  // Every box is measured before any is changed, and none inside a closed section (it is measured when the
  // section opens): a tabindex set between two measurements, or a measurement in content the browser has not
  // laid out, made it lay out the page again (issue 23: up to five layouts in the task that shows the page).
  function focusableScrollers(root) {
    var boxes = Array.prototype.filter.call(root.querySelectorAll(SCROLLERS), function (box) {
      return !box.hasAttribute("tabindex") && !box.querySelector(SCROLLERS) && !box.closest("details:not([open])");
    });
    boxes.filter(function (box) { return box.scrollWidth > box.clientWidth + 1; }).forEach(function (box) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("data-rp-scroller", "");
    });
  }
  onEachPage(function (root) {
    focusableScrollers(root);
    root.querySelectorAll("details").forEach(function (details) {
      details.addEventListener("toggle", function () { if (details.open) focusableScrollers(details); });
    });
  });
  // Once Material has put the tables in its wrappers, a table that no longer scrolls is no tab stop, and the
  // wrapper that now scrolls is one.
  window.addEventListener("ridgepoint:material", function () {
    var stopped = Array.prototype.filter.call(document.querySelectorAll("[data-rp-scroller]"), function (box) {
      return box.scrollWidth <= box.clientWidth + 1;
    });
    stopped.forEach(function (box) {
      box.removeAttribute("tabindex");
      box.removeAttribute("data-rp-scroller");
    });
    focusableScrollers(document);
  });
})();
