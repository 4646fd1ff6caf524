// Answer widget requests with the calculators archive inside real Pyodide under Node (no browser).
// Usage: node run_requests.mjs ARCHIVE.zip < requests.json  (a JSON list of request objects)
// Prints a JSON list of the answers, exactly as the browser worker would receive them.
import { readFileSync } from "node:fs";
import { loadPyodide } from "pyodide";

const [archive] = process.argv.slice(2);
const requests = JSON.parse(readFileSync(0, "utf8"));
const pyodide = await loadPyodide();
pyodide.unpackArchive(new Uint8Array(readFileSync(archive)), "zip", { extractDir: "/home/pyodide/ridgepoint" });
pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide/ridgepoint')");
const handle = pyodide.runPython("from calculators.browser import handle; handle");
const version = pyodide.runPython("import sys; sys.version.split()[0]");
const answers = requests.map((request) => JSON.parse(handle(JSON.stringify(request))));
process.stdout.write(JSON.stringify({ python: version, answers }));
