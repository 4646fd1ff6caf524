// Time the serving simulator inside real Pyodide under Node (no browser): the widgets' Python, the same zip.
// Usage: node simulator_pyodide.mjs ARCHIVE.zip < code.py ; prints what the Python code prints (JSON).
import { readFileSync } from "node:fs";
import { loadPyodide } from "pyodide";

const [archive] = process.argv.slice(2);
const code = readFileSync(0, "utf8");
const pyodide = await loadPyodide();
pyodide.unpackArchive(new Uint8Array(readFileSync(archive)), "zip", { extractDir: "/home/pyodide/ridgepoint" });
pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide/ridgepoint')");
pyodide.setStdout({ batched: (line) => process.stdout.write(line + "\n") });
pyodide.runPython(code);
