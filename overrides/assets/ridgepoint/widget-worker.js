// Ridgepoint widget worker: one module Web Worker per page hosts Pyodide and answers every widget on the page.
//
// It runs the calculators exactly as the build did: the zip made at build (its SHA-256 is checked against the
// digest the page carries) is unpacked into Pyodide's file system, and calculators.browser.protocol.handle
// answers JSON requests. Nothing is computed in JavaScript. Pyodide's own files live under a versioned path and
// are kept in Cache Storage, so a repeat visit does not download the runtime again.
//
// Start-up speed (the benchmark compares it with a bare loadPyodide): every file is requested as soon as its
// URL is known, in parallel, instead of one after another as Pyodide would ask for them (pyodide.mjs, then
// pyodide.asm.mjs, then the wasm and the standard library); Cache Storage is written after the first answer,
// not while the runtime compiles; the calculators come as one zip of precompiled bytecode where the build
// could make it (see course/widgets/package.py), so importing them does not compile 400 kB of source.
//
// Messages in:  {type: "start"} (the runtime's URLs and hash come from runtime.json)
//               {type: "call", id, request: JSON text}
// Messages out: {type: "progress", stage, loaded: bytes downloaded so far (0 when not downloading)}
//               {type: "ready", ms, stages: [[stage, time], ...] (absolute ms, for the benchmark)}
//               {type: "failed", reason}
//               {type: "answer", id, answer: JSON text, ms: time Python took}

const EXTRACT_DIR = "/home/pyodide/ridgepoint";
const PROGRESS_EVERY_MS = 100; // a progress message per downloaded chunk would keep the page busy for nothing
let handle = null;
let failed = false;

// Where the start-up time goes, as absolute times (performance.timeOrigin differs between page and worker).
const stages = [];
function stage(name) {
  stages.push([name, performance.timeOrigin + performance.now()]);
}
stage("worker script running");

function post(message) {
  if (message.type === "failed") failed = true;
  self.postMessage(message);
}

// Once the start has failed and the page has been told why, the same failure surfacing again inside Pyodide
// (its pending download promises reject later, unhandled) is not news: keep it out of the page's console.
self.addEventListener("unhandledrejection", (event) => {
  if (failed) event.preventDefault();
});

// Writes to Cache Storage (and other housekeeping) wait until the widget has answered once: storing 13 MB
// while the runtime compiles would compete with it for the processor. The response clones hold the bytes.
const deferred = [];
let deferredDone = false;

function afterFirstAnswer(task) {
  if (deferredDone) task();
  else deferred.push(task);
}

function runDeferred() {
  if (deferredDone) return;
  deferredDone = true;
  for (const task of deferred.splice(0)) Promise.resolve().then(task).catch(() => {});
}

// Progress over every download together: bytes received so far (a count that only grows, where a share per
// file would jump back to 0% as the next file starts), and when the last open download closes, "done". A
// download counts as open from its request, so one finishing before the next one's answer is not "done".
const downloads = { loaded: 0, open: 0, reportedAt: 0 };

// Versioned URLs never change content, so they are served from Cache Storage once fetched (cache-first).
// `early(url)` starts a download before Pyodide asks for it; Pyodide's own request then takes that response.
function cachedFetch(cacheName, prefix, onProgress) {
  const networkFetch = self.fetch.bind(self);
  const started = new Map();
  const fetchOnce = async (url, input, init) => {
    const cache = await caches.open(cacheName);
    const hit = await cache.match(url);
    if (hit) return hit;
    const file = url.slice(prefix.length);
    downloads.open++;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      downloads.open--;
      onProgress(downloads.loaded, downloads.open === 0);
    };
    let response;
    try {
      response = await networkFetch(input, init);
    } catch (error) {
      close();
      // Pyodide waits forever on a failed wasm download, so the failure is reported from here.
      post({ type: "failed", reason: `${file} could not be downloaded` });
      throw error;
    }
    if (!response.ok || !response.body) {
      close();
      if (!response.ok) post({ type: "failed", reason: `${file} could not be downloaded (HTTP ${response.status})` });
      return response;
    }
    const copy = response.clone();
    afterFirstAnswer(() => cache.put(url, copy));
    return withProgress(response, onProgress, close);
  };
  const wrapped = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith(prefix) || typeof caches === "undefined") return networkFetch(input, init);
    const early = started.get(url);
    if (early) {
      started.delete(url); // a response body is read once: a second request goes to the cache or network
      return early;
    }
    return fetchOnce(url, input, init);
  };
  wrapped.early = (url) => {
    if (typeof caches === "undefined" || started.has(url)) return;
    const response = fetchOnce(url, url);
    response.catch(() => {}); // already reported; Pyodide's own request sees the same rejection
    started.set(url, response);
  };
  return wrapped;
}

// The body is read as fast as it arrives, whether or not Pyodide reads yet (a started download keeps going
// while Pyodide is still evaluating its scripts), and counted on the way.
function withProgress(response, onProgress, close) {
  const reader = response.body.getReader();
  const stream = new ReadableStream({
    async start(controller) {
      try {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          downloads.loaded += chunk.value.byteLength;
          const now = performance.now();
          if (now - downloads.reportedAt >= PROGRESS_EVERY_MS) {
            downloads.reportedAt = now;
            onProgress(downloads.loaded, false);
          }
          controller.enqueue(chunk.value);
        }
        controller.close();
      } catch (error) {
        controller.error(error);
      } finally {
        close();
      }
    },
  });
  return new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers });
}

async function sha256(bytes) {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

// The calculators archive: its name carries the hash, and its content is checked; a stale or damaged cached
// copy is dropped and fetched again from the network.
async function fetchPackage(url, expected) {
  const cache = typeof caches === "undefined" ? null : await caches.open("ridgepoint-calculators");
  const attempts = [() => (cache ? cache.match(url) : null), () => fetch(url, { cache: "reload" })];
  for (const attempt of attempts) {
    const response = await attempt();
    const hit = attempt === attempts[0];
    if (!response || !response.ok) continue;
    const bytes = new Uint8Array(await response.clone().arrayBuffer());
    if ((await sha256(bytes)) === expected) {
      if (cache && !hit) {
        afterFirstAnswer(async () => {
          for (const key of await cache.keys()) if (key.url !== url) await cache.delete(key);
          await cache.put(url, new Response(bytes));
        });
      }
      return bytes;
    }
    if (cache) await cache.delete(url);
  }
  throw new Error("the calculators package could not be fetched, or its SHA-256 does not match the page's");
}

// Where Pyodide and the calculators are, and the archive's hash, come from the build's runtime.json beside
// this file, never from the page: a lesson cannot point the worker at another host.
async function runtimeConfig() {
  const here = new URL(".", self.location.href);
  const response = await fetch(new URL("runtime.json", here), { cache: "no-cache" });
  if (!response.ok) throw new Error(`runtime.json: HTTP ${response.status}`);
  const config = await response.json();
  const assets = new URL("../", here);
  const indexURL = new URL(config.pyodide, assets);
  const packageURL = new URL(config.package.src, assets);
  for (const url of [indexURL, packageURL]) {
    if (url.origin !== self.location.origin) throw new Error("the widget runtime must come from this site");
  }
  return { indexURL: indexURL.href, packageURL: packageURL.href, digest: config.package.sha256 };
}

// Caches of older Pyodide versions are dropped once the widget runs (not before: it is not urgent).
async function dropOldCaches(cacheName) {
  if (typeof caches === "undefined") return;
  for (const name of await caches.keys()) {
    if (name.startsWith("ridgepoint-pyodide-") && name !== cacheName) await caches.delete(name);
  }
}

async function start() {
  const began = performance.now();
  stage("start asked");
  const { indexURL, packageURL, digest } = await runtimeConfig();
  stage("runtime.json read");
  if (typeof WebAssembly === "undefined") throw new Error("this browser has no WebAssembly");
  const version = indexURL.replace(/\/$/, "").split("/").pop();
  const cacheName = `ridgepoint-pyodide-${version}`;
  self.fetch = cachedFetch(cacheName, indexURL, (loaded, finished) =>
    post(
      finished
        ? { type: "progress", stage: "Preparing Python (downloaded)", loaded: 0 }
        : { type: "progress", stage: "Downloading Python", loaded },
    ),
  );
  // Everything at once: the two scripts (the module map hands loadPyodide the same modules), the wasm and
  // the standard library (Pyodide takes the responses already under way), and the calculators.
  for (const file of ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]) self.fetch.early(indexURL + file);
  const runtimeScript = import(`${indexURL}pyodide.asm.mjs`);
  runtimeScript.catch(() => {}); // loadPyodide imports it too and reports a failure
  const packageBytes = fetchPackage(packageURL, digest);
  post({ type: "progress", stage: "Loading Python", loaded: 0 });
  const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
  const pyodide = await loadPyodide({ indexURL, stdout: () => {}, stderr: () => {} });
  stage("Pyodide loaded");
  post({ type: "progress", stage: "Loading the calculators", loaded: 0 });
  pyodide.unpackArchive(await packageBytes, "zip", { extractDir: EXTRACT_DIR });
  stage("calculators unpacked");
  pyodide.runPython(
    `import sys\nif ${JSON.stringify(EXTRACT_DIR)} not in sys.path: sys.path.insert(0, ${JSON.stringify(EXTRACT_DIR)})\n` +
      "from calculators.browser import handle as _ridgepoint_handle",
  );
  handle = pyodide.globals.get("_ridgepoint_handle");
  stage("calculators imported");
  post({ type: "ready", ms: performance.now() - began, stages });
  afterFirstAnswer(() => dropOldCaches(cacheName));
  setTimeout(runDeferred, 5000); // in case no widget asks at once
}

self.onmessage = async (event) => {
  const message = event.data;
  if (message.type === "start") {
    try {
      await start(message);
    } catch (error) {
      post({ type: "failed", reason: String((error && error.message) || error) });
    }
  } else if (message.type === "call") {
    let answer;
    const began = performance.now();
    try {
      answer = handle(message.request);
    } catch (error) {
      answer = JSON.stringify({ ok: false, error: `the worker failed: ${(error && error.message) || error}` });
    }
    post({ type: "answer", id: message.id, answer, ms: performance.now() - began });
    runDeferred(); // the first answer is out: now the downloads can be stored
  }
};
