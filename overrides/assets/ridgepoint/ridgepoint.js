// Ridgepoint page scripts: each block's code re-initialises on Material's document$ (instant navigation).
(function () {
  "use strict";

  // Run `init` on every page view: Material's document$ emits after each instant navigation; without Material
  // (a plain static copy of a page) it runs once when the document is ready.
  function onEachPage(init) {
    if (window.document$ && typeof window.document$.subscribe === "function") {
      window.document$.subscribe(function () { init(document); });
    } else if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", function () { init(document); });
    } else {
      init(document);
    }
  }

  window.ridgepoint = Object.assign(window.ridgepoint || {}, { onEachPage: onEachPage });

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

  // A computed number explains itself to keyboard users too: its tooltip text becomes its accessible description.
  onEachPage(function (root) {
    root.querySelectorAll(".rp-number[title]:not([aria-description])").forEach(function (number) {
      number.setAttribute("aria-description", number.getAttribute("title"));
      number.setAttribute("tabindex", "0");
    });
  });
})();
