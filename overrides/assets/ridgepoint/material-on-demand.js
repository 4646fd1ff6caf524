/*
 * Material's bundle starts when the reader first does something on the page, not while the page first paints.
 *
 * Why: a lesson paints before Material's bundle has run (its HTML is larger than a plain page's, and the
 * browser shows what it has parsed while the bundle downloads), so the bundle's start-up (about 27 ms of
 * evaluation and 33 ms of set-up at DOMContentLoaded on tokens-parameters-and-flops, unthrottled; four times
 * that on a slow phone) ran as long tasks after the first paint, while the reader may already be scrolling,
 * and Lighthouse counted them as blocking time (course/benchmarks/page_speed.py). Nothing Material does is
 * needed before the reader acts: the page, its navigation drawer (a checkbox), its links, the light/dark
 * toggle (ours) and every block of ours work without it. Its features are for a reader who acts: search,
 * keyboard shortcuts, the table of contents following the scroll, instant navigation between pages.
 *
 * How: the template (overrides/main.html) renders Material's bundle as an inert tag (type="text/plain",
 * data-rp-on-demand), which the browser neither fetches nor runs. At the reader's first key, pointer, touch,
 * wheel or focus event (or at DOMContentLoaded, if they act sooner), this script adds a live copy of each such
 * tag, in order. Material sets itself up when the document fires DOMContentLoaded, which has passed by then:
 * this script fires it again, in a task after the bundle's, then tells the course's scripts
 * (``ridgepoint:material``, ridgepoint.js) so that they follow instant navigation from then on. The course's
 * scripts listen for DOMContentLoaded once, so only Material hears the second one. A page opened
 * from a search result ("?h=", the terms to highlight) starts Material at once.
 *
 * What a reader gives up: Material's start-up still runs, at their first act instead of during the load, as
 * two tasks (the bundle's evaluation, then its set-up), while their first tap or key is already answered
 * (tests/site/test_main_thread_browser.py names them). A click on a link that is the very first thing they
 * do on a page loads the next page in full rather than by instant navigation (the bundle is still on its
 * way). A first key that is one of Material's shortcuts is not lost: "/", "s" and "f" open its search box at
 * once (the box is in the page, and what is typed next goes into it), and "n", "p", "," and "." (turn the
 * page) are passed to Material once it has started, within a second. Material's bundle requests the search
 * index as it starts, so the index waits for the reader with it (it used to be held back on its own).
 */
(function () {
  "use strict";
  var EVENTS = ["keydown", "pointerdown", "pointermove", "touchstart", "wheel", "focusin"];
  var SEARCH_KEYS = /^[/sf]$/; // Material's keys that open search
  var PAGE_KEYS = /^[np.,]$/; // and those that turn the page
  var REPLAY_WITHIN_MS = 1000;
  var started = false;
  var firstKey = null;

  // Material's keyboard shortcuts listen on the window; a copy of the first key goes there only, so no
  // listener of an element (a widget's code cell, a quiz) sees the key twice.
  function replay(key) {
    if (!key || performance.now() - key.at > REPLAY_WITHIN_MS) return;
    window.dispatchEvent(new KeyboardEvent("keydown", key.init));
  }

  // Material sets itself up when the document emits DOMContentLoaded, which had passed when it was loaded:
  // the event is sent again, for Material's listener (the course's own listeners of it ran once and are gone).
  function materialStarted() {
    document.dispatchEvent(new Event("DOMContentLoaded"));
    window.ridgepointMaterial = { startedAt: performance.now() }; // when Material was set up (tests wait for it)
    window.dispatchEvent(new Event("ridgepoint:material"));
    replay(firstKey);
  }

  function load(tags, index) {
    if (index >= tags.length) {
      materialStarted();
      return;
    }
    var inert = tags[index];
    var live = document.createElement("script");
    live.src = inert.src;
    // The next step in a task of its own: the bundle's evaluation and Material's set-up are two shorter tasks.
    live.onload = function () { setTimeout(function () { load(tags, index + 1); }, 0); };
    live.onerror = function () { load(tags, index + 1); };
    inert.parentNode.insertBefore(live, inert);
  }

  function loadAll() {
    load(Array.prototype.slice.call(document.querySelectorAll("script[data-rp-on-demand]")), 0);
  }

  function typing(target) {
    return target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement ||
      target instanceof HTMLSelectElement || Boolean(target && target.isContentEditable);
  }

  // Material's search shortcut, done at once (its search box is in the page): what the reader types next goes
  // into the box, where Material finds it when it starts. Its other shortcuts wait for Material.
  function openSearch(event) {
    var toggle = document.querySelector("input[data-md-toggle=search]");
    var query = document.querySelector("input[data-md-component=search-query]");
    if (!toggle || !query) return;
    event.preventDefault();
    toggle.checked = true;
    query.focus();
  }

  function start(event) {
    if (started) return;
    started = true;
    EVENTS.forEach(function (name) { removeEventListener(name, start, true); });
    var shortcut = event && event.type === "keydown" && !event.ctrlKey && !event.metaKey && !typing(event.target);
    if (shortcut && SEARCH_KEYS.test(event.key)) {
      openSearch(event);
    } else if (shortcut && PAGE_KEYS.test(event.key)) {
      firstKey = {
        at: performance.now(),
        init: { key: event.key, code: event.code, shiftKey: event.shiftKey, altKey: event.altKey, cancelable: true },
      };
    }
    // The inert tags are at the end of the page: a reader who acts while it is still loading waits for them.
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", loadAll, { once: true });
    else loadAll();
  }

  if (new URLSearchParams(location.search).has("h")) {
    start(null); // opened from a search result: Material highlights the terms as it starts, with the index
    return;
  }
  EVENTS.forEach(function (name) {
    // Not passive for a key: the search shortcut's key must not also be typed into the search box.
    addEventListener(name, start, { capture: true, passive: name !== "keydown" });
  });
})();
