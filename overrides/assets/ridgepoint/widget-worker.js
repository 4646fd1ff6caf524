// Ridgepoint widget worker: one module Web Worker per page hosts Pyodide and answers every widget on the page.
//
// It runs the calculators exactly as the build did: the zip made at build (its SHA-256 is checked against the
// digest the page carries) is unpacked into Pyodide's file system, and calculators.browser.protocol.handle
// answers JSON requests. Nothing is computed in JavaScript. Pyodide's own files live under a versioned path and
// are kept in Cache Storage, so a repeat visit does not download the runtime again; its WebAssembly module is
// read from the browser's HTTP cache first, where Chromium also keeps the machine code compiled from it; and a
// copy of Python's memory with the calculators imported makes a repeat visit's start a restore (see below).
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
//               {type: "warmed", ms, modules, rerun} (after a start from the kept copy: see warmUp)

const EXTRACT_DIR = "/home/pyodide/ridgepoint";
const PROGRESS_EVERY_MS = 100; // a progress message per downloaded chunk would keep the page busy for nothing
let handle = null;
let failed = false;
let lastCallAt = 0; // when the worker last answered a widget (the warm-up waits while widgets are asking)

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
// The WebAssembly module comes from the browser's HTTP cache first, where it can: Chromium keeps the machine
// code it compiled from a .wasm (its code cache) beside the HTTP cache's entry for that URL, and a response
// read from Cache Storage or made in script has none, so the module was compiled again on every visit
// (issue 23). The HTTP cache is asked alone (`only-if-cached`: never the server) and downloads go through it
// (`force-cache`: the URL is versioned, so a stored copy is never stale, whatever caching headers the server
// sent). Where the HTTP cache cannot keep 9.6 MB (a private window's cache lives in memory and takes no entry
// that large), the copy in Cache Storage still saves the download.
function cachedFetch(cacheName, prefix, onProgress) {
  const networkFetch = self.fetch.bind(self);
  const started = new Map();
  const fetchOnce = async (url, input, init) => {
    const compiled = url.endsWith(".wasm");
    if (compiled) {
      const kept = await networkFetch(url, { cache: "only-if-cached", mode: "same-origin" }).catch(() => null);
      if (kept && kept.ok) return kept;
    }
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
      response = await (compiled ? networkFetch(url, { cache: "force-cache" }) : networkFetch(input, init));
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
    if (compiled) {
      countProgress(response.clone(), onProgress, close);
      return response; // the network's own response, which the browser compiles and keeps the code of
    }
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

// Count `bytes` more downloaded, and tell the page at most every PROGRESS_EVERY_MS.
function counted(bytes, onProgress) {
  downloads.loaded += bytes;
  const now = performance.now();
  if (now - downloads.reportedAt >= PROGRESS_EVERY_MS) {
    downloads.reportedAt = now;
    onProgress(downloads.loaded, false);
  }
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
          counted(chunk.value.byteLength, onProgress);
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

// The same count for a response handed on as it is (a copy of its body is read here, as it arrives).
async function countProgress(response, onProgress, close) {
  try {
    const reader = response.body.getReader();
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      counted(chunk.value.byteLength, onProgress);
    }
  } catch (error) {
    // the response's own reader reports a broken download
  } finally {
    close();
  }
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

// ---- Python's memory after the calculators' import, kept for the next visit (a Pyodide memory snapshot) ----
// A repeat visit's start was Python's own start and the calculators' import (the compiled wasm is cached, see
// cachedFetch): seconds that no browser cache keeps. After a start from scratch, the worker copies Python's
// memory (Pyodide's makeMemorySnapshot: the wasm's linear memory, about 32 MB, with the calculators imported)
// and keeps it in Cache Storage once the widget has answered; the next visit starts Pyodide from that copy.
// The copy is only ever used for exactly the runtime and calculators it was taken with: its key names the
// Pyodide version and the calculators archive's SHA-256 (both from runtime.json), Pyodide itself refuses a
// copy of another build (its build id is in the copy), and the restored Python must name the same archive
// hash; its bytes are checked against the SHA-256 kept beside them before Pyodide sees them. Any doubt (no
// Cache Storage, damaged bytes, a failed restore, a mismatch) drops the copy and starts from scratch.
const SNAPSHOT_CACHE = "ridgepoint-python-snapshot";
const SNAPSHOT_DIGEST = "X-Ridgepoint-SHA256";

function snapshotKey(version, digest) {
  return new URL(`__ridgepoint-python-snapshot/${version}/${digest}`, self.location.origin).href;
}

// The copy with its SHA-256 (kept beside it), or null; a copy whose bytes do not match is never handed on.
async function readSnapshot(key) {
  if (typeof caches === "undefined") return null;
  try {
    const cache = await caches.open(SNAPSHOT_CACHE);
    const hit = await cache.match(key);
    if (!hit) return null;
    const bytes = new Uint8Array(await hit.arrayBuffer());
    if (hit.headers.get(SNAPSHOT_DIGEST) === (await sha256(bytes))) return bytes;
    await dropSnapshots(null);
  } catch (error) {
    // no copy to start from
  }
  return null;
}

async function keepSnapshot(key, snapshot) {
  const cache = await caches.open(SNAPSHOT_CACHE);
  const headers = { "Content-Type": "application/octet-stream", [SNAPSHOT_DIGEST]: await sha256(snapshot) };
  await cache.put(key, new Response(snapshot, { headers }));
  await dropSnapshots(key);
}

async function dropSnapshots(keep) {
  if (typeof caches === "undefined") return;
  const cache = await caches.open(SNAPSHOT_CACHE);
  for (const request of await cache.keys()) if (request.url !== keep) await cache.delete(request);
}

const QUIET = { stdout: () => {}, stderr: () => {} };

// After a start from the kept copy, Python's interpreter has run almost nothing in this worker, and V8 compiles
// it again as the reader's first moves bring it new kinds of work: those moves were slow. The calculators'
// module bodies are run again, into namespaces of their own (calculators/browser/warm_up.py says why and what
// it leaves alone; course/widgets/benchmark.py what it bought), one module per task, each only once no widget
// has asked for anything for QUIET_MS, so a reader's request waits for one module at most.
const QUIET_MS = 100;

function warmUp(pyodide) {
  pyodide.runPython("from calculators.browser.warm_up import module_names as _rp_names, rerun as _rp_rerun");
  const names = JSON.parse(pyodide.globals.get("_rp_names")());
  const rerun = pyodide.globals.get("_rp_rerun");
  const began = performance.now();
  const modules = names.length;
  let done = 0;
  const step = () => {
    if (!names.length) {
      post({ type: "warmed", ms: performance.now() - began, modules, rerun: done });
      return;
    }
    const quietFor = performance.now() - lastCallAt;
    if (quietFor < QUIET_MS) {
      setTimeout(step, QUIET_MS - quietFor);
      return;
    }
    try {
      if (rerun(names.shift())) done++;
    } catch (error) {
      return; // Python itself failed: the next widget request says so; a warm-up is never worth an error
    }
    setTimeout(step, 0);
  };
  setTimeout(step, 0);
}

// Start Pyodide from a kept copy of its memory (`kept`: the promise of readSnapshot); null (and the copy
// dropped) when there is none or it does not work out.
async function restore(loadPyodide, indexURL, kept, digest) {
  const snapshot = await kept;
  if (!snapshot) return null;
  stage("snapshot read");
  try {
    const pyodide = await loadPyodide({ indexURL, ...QUIET, _loadSnapshot: snapshot });
    if (pyodide.globals.get("_ridgepoint_archive") !== digest) throw new Error("the copy is of other calculators");
    const restored = pyodide.globals.get("_ridgepoint_handle");
    if (typeof restored !== "function") throw new Error("the copy has no calculators");
    return { pyodide, restored };
  } catch (error) {
    await dropSnapshots(null).catch(() => {});
    return null;
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
  const key = snapshotKey(version, digest);
  const kept = readSnapshot(key); // read (and checked) while Pyodide's script loads
  post({ type: "progress", stage: "Loading Python", loaded: 0 });
  const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
  const restoredFrom = await restore(loadPyodide, indexURL, kept, digest);
  if (restoredFrom) {
    stage("Pyodide restored with the calculators");
    handle = restoredFrom.restored;
    // The copy holds Python's memory, not its files: the calculators' files (read for tracebacks and
    // source, and by the warm-up) are unpacked again once the first answer is out.
    const pyodide = restoredFrom.pyodide;
    afterFirstAnswer(async () => {
      pyodide.unpackArchive(await packageBytes, "zip", { extractDir: EXTRACT_DIR });
      warmUp(pyodide);
    });
  } else {
    const pyodide = await loadPyodide({ indexURL, ...QUIET, _makeSnapshot: typeof caches !== "undefined" });
    stage("Pyodide loaded");
    post({ type: "progress", stage: "Loading the calculators", loaded: 0 });
    pyodide.unpackArchive(await packageBytes, "zip", { extractDir: EXTRACT_DIR });
    stage("calculators unpacked");
    pyodide.runPython(
      `import sys\nif ${JSON.stringify(EXTRACT_DIR)} not in sys.path: sys.path.insert(0, ${JSON.stringify(EXTRACT_DIR)})\n` +
        `from calculators.browser import handle as _ridgepoint_handle\n_ridgepoint_archive = ${JSON.stringify(digest)}`,
    );
    handle = pyodide.globals.get("_ridgepoint_handle");
    stage("calculators imported");
    if (typeof caches !== "undefined") {
      // Taken now, before any answer: the copy is Python just after the import, whatever the reader does next.
      let snapshot = null;
      try {
        snapshot = pyodide.makeMemorySnapshot();
      } catch (error) {
        // no copy this time; the next visit starts from scratch as this one did
      }
      if (snapshot) {
        afterFirstAnswer(() => keepSnapshot(key, snapshot));
      }
    }
  }
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
    lastCallAt = performance.now();
    post({ type: "answer", id: message.id, answer, ms: lastCallAt - began });
    runDeferred(); // the first answer is out: now the downloads can be stored
  }
};
