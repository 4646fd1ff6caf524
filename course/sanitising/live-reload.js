// Live reload for `mkdocs serve`, loaded from this site's own origin, so the page's
// Content-Security-Policy stays the published one ('self' scripts, no inline script).
// MkDocs' server answers /livereload/<epoch>/<request> once the site is newer than <epoch> (or after a
// minute with the same epoch); the page then reloads. The epoch comes from the server with the page, in this
// script's data-epoch (course.sanitising.live_reload). Written into the site under serve only.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var epoch = Number(script.dataset.epoch);
  var requestId = script.dataset.requestId;
  var request = null;
  var timer = null;

  function poll() {
    if (request || timer) return;
    var current = new XMLHttpRequest();
    request = current;
    current.onloadend = function () {
      if (request !== current) return; // stopped while it waited
      request = null;
      if (current.status === 200 && Number(current.responseText) > epoch) {
        location.reload();
        return;
      }
      timer = setTimeout(function () {
        timer = null;
        poll();
      }, current.status === 200 ? 0 : 3000);
    };
    current.open("GET", "/livereload/" + epoch + "/" + requestId);
    current.send();
  }

  function stop() {
    var current = request;
    request = null;
    if (current) current.abort();
    if (timer) clearTimeout(timer);
    timer = null;
  }

  function followVisibility() {
    if (document.visibilityState === "visible") poll();
    else stop();
  }

  if (document.readyState === "complete") followVisibility();
  else window.addEventListener("load", followVisibility);
  document.addEventListener("visibilitychange", followVisibility);
  window.addEventListener("pagehide", stop);
})();
