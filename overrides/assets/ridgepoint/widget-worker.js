// Ridgepoint widget worker: one module Web Worker per page hosts Pyodide and answers every widget on the page.
//
// It runs the calculators exactly as the build did: the zip made at build (its SHA-256 is checked against the
// digest the page carries) is unpacked into Pyodide's file system, and calculators.browser.protocol.handle
// answers JSON requests. Nothing is computed in JavaScript. Pyodide's own files live under a versioned path and
// are kept in Cache Storage, so a repeat visit does not download the runtime again.
//
// Messages in:  {type: "start"} (the runtime's URLs and hash come from runtime.json)
//               {type: "call", id, request: JSON text}
// Messages out: {type: "progress", stage, loaded: bytes downloaded so far (0 when not downloading)}  {type: "ready", ms}  {type: "failed", reason}
//               {type: "answer", id, answer: JSON text, ms: time Python took}

const EXTRACT_DIR = "/home/pyodide/ridgepoint";
let handle = null;
let failed = false;

function post(message) {
  if (message.type === "failed") failed = true;
  self.postMessage(message);
}

// Once the start has failed and the page has been told why, the same failure surfacing again inside Pyodide
// (its pending download promises reject later, unhandled) is not news: keep it out of the page's console.
self.addEventListener("unhandledrejection", (event) => {
  if (failed) event.preventDefault();
});

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

// Progress over every download together: bytes received so far (a count that only grows, where a share per
// file would jump back to 0% as the next file starts), and when the last open download closes, "done".
const downloads = { loaded: 0, open: 0 };

function withProgress(response, url, onProgress) {
  if (!response.body) return response;
  const reader = response.body.getReader();
  downloads.open++;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    downloads.open--;
    onProgress(downloads.loaded, downloads.open === 0);
  };
  const stream = new ReadableStream({
    async pull(controller) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        close();
        throw error;
      }
      if (chunk.done) {
        controller.close();
        close();
        return;
      }
      downloads.loaded += chunk.value.byteLength;
      onProgress(downloads.loaded, false);
      controller.enqueue(chunk.value);
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
  self.fetch = cachedFetch(cacheName, indexURL, (loaded, finished) =>
    post(
      finished
        ? { type: "progress", stage: "Preparing Python (downloaded)", loaded: 0 }
        : { type: "progress", stage: "Downloading Python", loaded },
    ),
  );
  if (typeof WebAssembly === "undefined") throw new Error("this browser has no WebAssembly");
  post({ type: "progress", stage: "Loading Python", loaded: 0 });
  const packageBytes = fetchPackage(packageURL, digest);
  const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
  const pyodide = await loadPyodide({ indexURL, stdout: () => {}, stderr: () => {} });
  post({ type: "progress", stage: "Loading the calculators", loaded: 0 });
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
