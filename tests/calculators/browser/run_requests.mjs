// Answer widget requests with the calculators archive inside real Pyodide under Node (no browser).
// Usage: node run_requests.mjs ARCHIVE.zip < requests.json  (a JSON list of request objects)
// Prints a JSON list of the answers, exactly as the browser worker would receive them, and the modules that were
// compiled from source on import (the archive's bytecode not usable by this Pyodide).
import { readFileSync } from "node:fs";
import { loadPyodide } from "pyodide";

const [archive] = process.argv.slice(2);
const requests = JSON.parse(readFileSync(0, "utf8"));
const pyodide = await loadPyodide();
pyodide.unpackArchive(new Uint8Array(readFileSync(archive)), "zip", { extractDir: "/home/pyodide/ridgepoint" });
pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide/ridgepoint')");
const handle = pyodide.runPython("from calculators.browser import handle; handle");
const version = pyodide.runPython("import sys; sys.version.split()[0]");
// The imported modules whose bytecode in the archive this Python would not use (wrong magic number, not a
// checked-hash .pyc, or not the hash of the source beside it): those were compiled from source on import.
const compiledOnImport = pyodide.runPython(`
import importlib.util, json, sys
from pathlib import Path

def used(module):
    cached = Path(module.__spec__.cached or "")
    if not cached.is_file():
        return False
    pyc = cached.read_bytes()
    source = Path(module.__spec__.origin).read_bytes()
    return (
        pyc[:4] == importlib.util.MAGIC_NUMBER
        and int.from_bytes(pyc[4:8], "little") == 3
        and pyc[8:16] == importlib.util.source_hash(source)
    )

json.dumps(sorted(name for name, module in sys.modules.items() if name.startswith("calculators") and not used(module)))
`);
const answers = requests.map((request) => JSON.parse(handle(JSON.stringify(request))));
process.stdout.write(JSON.stringify({ python: version, answers, compiledOnImport: JSON.parse(compiledOnImport) }));
