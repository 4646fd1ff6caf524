/*
 * The search index downloads when the reader first does something on the page, not while it first paints.
 *
 * Material's bundle requests search/search_index.json (an XMLHttpRequest) as soon as it runs, and its worker
 * then spends hundreds of milliseconds indexing it; Material has no setting to start search later. On a slow
 * phone that download and that work compete with the lesson's first paint: Lighthouse counted the index
 * (365 kB, the twin's 91 kB) in the lesson's largest contentful paint in some runs (6-7 s) and not in
 * others (about 2.9 s). This script, loaded just before Material's bundle, holds back the sending of that
 * one request until the reader's first key, pointer, touch or wheel event (searching needs one of these:
 * the search box is focused by a click, a tap or Material's "/", "s" and "f" keys), or at once when the page
 * was opened from a search result (its "?h=" highlights the terms, with the index). Every other request is
 * untouched; while the index is held, Material's search box says "Initializing search" as it does while any
 * index downloads. If Material ever fetches the index another way, this does nothing and search still works.
 */
(function () {
  "use strict";
  var INDEX = /\/search\/search_index\.json(?:$|[?#])/;
  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  var held = [];
  var released = new URLSearchParams(location.search).has("h");
  var EVENTS = ["keydown", "pointerdown", "touchstart", "wheel", "focusin"];

  function release() {
    if (released) return;
    released = true;
    EVENTS.forEach(function (name) {
      removeEventListener(name, release, true);
    });
    held.splice(0).forEach(function (request) {
      send.apply(request.xhr, request.args);
    });
  }

  XMLHttpRequest.prototype.open = function (method, url) {
    this.rpSearchIndex = INDEX.test(String(url));
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (this.rpSearchIndex && !released) {
      held.push({ xhr: this, args: arguments });
      return undefined;
    }
    return send.apply(this, arguments);
  };
  EVENTS.forEach(function (name) {
    addEventListener(name, release, { capture: true, passive: true });
  });
})();
