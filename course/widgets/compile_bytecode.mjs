// Compile the calculators archive to bytecode with the very Pyodide the site ships, so that a reader's browser
// imports the calculators without compiling 400 kB of source first (the largest cost of a widget's start after
// Pyodide's own). Run by course/widgets/bytecode.py: node compile_bytecode.mjs SOURCE.zip TARGET.zip
//
// The target holds every source file and, beside it, __pycache__/NAME.cpython-XY.pyc in "checked hash" form:
// Python uses a .pyc only when its magic number is its own and the source's hash matches, and otherwise
// compiles the source as before, so bytecode can only make the start faster, never change what runs.
import { readFileSync, writeFileSync } from "node:fs";
import { loadPyodide } from "pyodide";

const [source, target] = process.argv.slice(2);
const pyodide = await loadPyodide({ stdout: (line) => console.log(line), stderr: (line) => console.error(line) });
pyodide.FS.writeFile("/tmp/source.zip", new Uint8Array(readFileSync(source)));
pyodide.runPython(`
import compileall, py_compile, shutil, zipfile
from pathlib import Path

home = Path("/home/pyodide/ridgepoint")  # where the widget worker unpacks it: tracebacks name the same files
shutil.unpack_archive("/tmp/source.zip", home, "zip")
if not compileall.compile_dir(home, quiet=1, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH):
    raise SystemExit("the calculators did not compile under Pyodide")
with zipfile.ZipFile("/tmp/target.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        info = zipfile.ZipInfo(path.relative_to(home).as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        archive.writestr(info, path.read_bytes())
`);
writeFileSync(target, pyodide.FS.readFile("/tmp/target.zip"));
