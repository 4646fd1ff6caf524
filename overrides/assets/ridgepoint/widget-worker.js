// Ridgepoint widget worker: one module Web Worker per page hosts Pyodide and answers every widget on the page.
//
// It runs the calculators exactly as the build did: the zip made at build (its SHA-256 is checked against the
// digest the page carries) is unpacked into Pyodide's file system, and calculators.browser.protocol.handle
// answers JSON requests. Nothing is computed in JavaScript. Pyodide's own files live under a versioned path and
// are kept in Cache Storage, so a repeat visit does not download the runtime again.
//
// Messages in:  {type: "start"} (the runtime's URLs and hash come from runtime.json)
//               {type: "call", id, request: JSON text}
// Messages out: {type: "progress", stage, loaded, total}  {type: "ready", ms}  {type: "failed", reason}
//               {type: "answer", id, answer: JSON text, ms: time Python took}

const EXTRACT_DIR = "/home/pyodide/ridgepoint";
let handle = null;

function post(message) {
  self.postMessage(message);
}

// Versioned URLs never change content, so they are served from Cache Storage once fetched (cache-first).
function cachedFetch(cacheName, prefix, onProgress) {
  const networkFetch = self.fetch.bind(self);
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith(prefix) || typeof caches === "undefined") return networkFetch(input, init);
    const cache = await caches.open(cacheName);
    const hit = await cache.match(url);
    if (hit) return hit;
    const file = url.slice(prefix.length);
    let response;
    try {
      response = await networkFetch(input, init);
    } catch (error) {
      // Pyodide waits forever on a failed wasm download, so the failure is reported from here.
      post({ type: "failed", reason: `${file} could not be downloaded` });
      throw error;
    }
    if (!response.ok) {
      post({ type: "failed", reason: `${file} could not be downloaded (HTTP ${response.status})` });
      return response;
    }
    // Stored while Pyodide already reads (and compiles) the stream: awaiting the write would delay the start.
    cache.put(url, response.clone()).catch(() => {});
    return withProgress(response, url, onProgress);
  };
}

function withProgress(response, url, onProgress) {
  const total = Number(response.headers.get("content-length")) || 0;
  if (!response.body || total < 1e6) return response;
  let loaded = 0;
  const reader = response.body.getReader();
  const stream = new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      loaded += value.byteLength;
      onProgress(url, loaded, total);
      controller.enqueue(value);
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
    if (!response || !response.ok) continue;
    const bytes = new Uint8Array(await response.clone().arrayBuffer());
    if ((await sha256(bytes)) === expected) {
      if (cache) {
        for (const key of await cache.keys()) if (key.url !== url) await cache.delete(key);
        await cache.put(url, new Response(bytes));
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

async function start() {
  const began = performance.now();
  const { indexURL, packageURL, digest } = await runtimeConfig();
  const version = indexURL.replace(/\/$/, "").split("/").pop();
  const cacheName = `ridgepoint-pyodide-${version}`;
  if (typeof caches !== "undefined") {
    for (const name of await caches.keys()) {
      if (name.startsWith("ridgepoint-pyodide-") && name !== cacheName) await caches.delete(name);
    }
  }
  self.fetch = cachedFetch(cacheName, indexURL, (url, loaded, total) =>
    post({ type: "progress", stage: "Downloading Python", loaded, total }),
  );
  if (typeof WebAssembly === "undefined") throw new Error("this browser has no WebAssembly");
  post({ type: "progress", stage: "Loading Python", loaded: 0, total: 0 });
  const packageBytes = fetchPackage(packageURL, digest);
  const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
  const pyodide = await loadPyodide({ indexURL, stdout: () => {}, stderr: () => {} });
  post({ type: "progress", stage: "Loading the calculators", loaded: 0, total: 0 });
  pyodide.unpackArchive(await packageBytes, "zip", { extractDir: EXTRACT_DIR });
  pyodide.runPython(
    `import sys\nif ${JSON.stringify(EXTRACT_DIR)} not in sys.path: sys.path.insert(0, ${JSON.stringify(EXTRACT_DIR)})\n` +
      "from calculators.browser import handle as _ridgepoint_handle",
  );
  handle = pyodide.globals.get("_ridgepoint_handle");
  post({ type: "ready", ms: performance.now() - began });
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
  }
};
