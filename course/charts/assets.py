"""The charts' browser side: the pinned Vega runtime, the spec files and the wide drawings, copied into the
built site.

The runtime is vl-convert's own bundle of Vega, Vega-Lite and vega-embed (``vl_convert.javascript_bundle()``,
about 0.9 MB), the same code that renders the static SVGs at build, so the interactive chart draws exactly
what the static one shows. It is made locally (no network), checked against the SHA-256 recorded in
``course/charts/vega-runtime.lock.json``, and copied under a name that includes that hash, so a browser cache
can keep it forever. The page asks the browser to check the same hash (Subresource Integrity).

The spec files the site serves are Vega, compiled from the charts' Vega-Lite specs at build (by the same
vl-convert) and cached beside them: the reader's browser never runs the Vega-Lite compiler, which was a
third of the main-thread work of a chart's first drawing (see charts.js). Each mark's tooltip is computed
when the pointer reaches the mark, not on every update (:func:`tooltips_on_hover`).

If vl-convert is upgraded, the bundle changes and the build stops with instructions: look at the new versions,
then run ``python -m course.charts.assets --pin`` and commit the lock file.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.metadata
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from calculators.charts.render import default_cache_dir, write_atomically

LOCK_FILE = Path(__file__).with_name("vega-runtime.lock.json")
SITE_FOLDER = "assets/ridgepoint"  # where charts.js lives in the site; runtime and specs are resolved from it
RUNTIME_FOLDER = "vega"
SPEC_FOLDER = "charts"
# Wide drawings that worked notebooks made in their sandbox (course.notebooks.sandbox), in the chart cache
# but apart from the lessons' own drawings, and named by their SHA-256: a notebook's drawing is never read
# as a lesson chart's, and it is served only to a page that names it by that hash.
NOTEBOOK_DRAWINGS = "notebook-drawings"
FIGURE_TAG = re.compile(r"<figure\b[^>]*\bdata-rp-spec=\"[0-9a-f]{24}\"[^>]*>")
SPEC_REFERENCE = re.compile(r'data-rp-spec(?:-narrow)?="([0-9a-f]{24})"')
WIDE_SPEC = re.compile(r'\bdata-rp-spec="([0-9a-f]{24})"')
WIDE_DRAWING = re.compile(r'\bdata-rp-wide="([0-9a-f]{64})"')


class RuntimeMismatch(RuntimeError):
    """The Vega runtime made here is not the pinned one (vl-convert was upgraded or the lock file edited)."""


@dataclass(frozen=True)
class RuntimePin:
    """What the lock file records about the runtime."""

    file: str  # file name in the site, e.g. "vega-runtime-3425bd951a44.js"
    sha256: str  # hex digest of the file's bytes
    size: int
    vl_convert: str  # vl-convert-python version that produced it
    libraries: dict[str, str]

    @property
    def integrity(self) -> str:
        """The Subresource Integrity value for the ``<script>`` that loads it."""
        return "sha256-" + base64.b64encode(bytes.fromhex(self.sha256)).decode("ascii")

    @property
    def site_path(self) -> str:
        """Path relative to charts.js (``SITE_FOLDER``)."""
        return f"{RUNTIME_FOLDER}/{self.file}"


@cache
def runtime_pin() -> RuntimePin:
    """The pinned runtime, read once from the committed lock file."""
    record = json.loads(LOCK_FILE.read_text(encoding="utf-8"))
    return RuntimePin(
        record["file"], record["sha256"], record["size"], record["vl_convert"], record["libraries"]
    )


def _generate() -> tuple[bytes, dict[str, str]]:
    import vl_convert

    libraries = {
        "vega": vl_convert.get_vega_version(),
        "vega-lite": vl_convert.get_vegalite_versions()[-1],
        "vega-embed": vl_convert.get_vega_embed_version(),
    }
    bundle: str = vl_convert.javascript_bundle()  # type: ignore[call-arg]  # snippet is optional; the stub says not
    return bundle.encode("utf-8"), libraries


def runtime_bytes(cache_dir: Path | None = None) -> bytes:
    """The runtime's bytes, verified against the pin; generated once (about a second) and then cached."""
    pin = runtime_pin()
    cached = (cache_dir if cache_dir is not None else default_cache_dir()) / RUNTIME_FOLDER / pin.file
    if cached.exists():
        content = cached.read_bytes()
        if hashlib.sha256(content).hexdigest() == pin.sha256:
            return content
    content, _ = _generate()
    digest = hashlib.sha256(content).hexdigest()
    if digest != pin.sha256:
        installed = vl_convert_version()
        raise RuntimeMismatch(
            f"the Vega runtime from vl-convert-python {installed} has SHA-256 {digest}, but "
            f"{LOCK_FILE.name} pins {pin.sha256} (made by vl-convert-python {pin.vl_convert}). "
            "Fix: install the pinned vl-convert-python, or review the upgrade and run "
            "`python -m course.charts.assets --pin`, then commit course/charts/vega-runtime.lock.json"
        )
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(content)
    return content


def referenced_specs(site_dir: Path) -> set[str]:
    """Spec keys that the built pages' charts fetch (``data-rp-spec``).

    A figure that carries its spec inline (``data-rp-spec-inline``) needs no file. Notebook outputs lose
    their inline specs to the sanitiser, so their charts fetch spec files like lessons' charts do.
    """
    keys: set[str] = set()
    for page in site_dir.rglob("*.html"):
        for tag in FIGURE_TAG.findall(page.read_text(encoding="utf-8", errors="replace")):
            if "data-rp-spec-inline" not in tag:
                keys.update(SPEC_REFERENCE.findall(tag))
    return keys


def referenced_wide_drawings(site_dir: Path) -> dict[str, str]:
    """The wide drawings the built pages' charts fetch: their SHA-256 (``data-rp-wide``, the file's name)
    mapped to the key of the spec drawn (``data-rp-spec``), whose SVG the chart cache holds."""
    drawings: dict[str, str] = {}
    for page in site_dir.rglob("*.html"):
        for tag in FIGURE_TAG.findall(page.read_text(encoding="utf-8", errors="replace")):
            digest, spec = WIDE_DRAWING.search(tag), WIDE_SPEC.search(tag)
            if digest is not None and spec is not None:
                drawings[digest.group(1)] = spec.group(1)
    return drawings


def wide_drawing(digest: str, key: str, folder: Path) -> bytes:
    """The wide drawing of spec ``key`` from the chart cache, checked against the ``digest`` pages name it by
    (the browser checks it too: a file that differs would never be shown)."""
    source = folder / f"{key}.svg"
    notebooks = folder / NOTEBOOK_DRAWINGS / f"{digest}.svg"
    if notebooks.exists() and not (
        source.exists() and hashlib.sha256(source.read_bytes()).hexdigest() == digest
    ):
        source = notebooks
    if not source.exists():
        raise FileNotFoundError(
            f"the drawing of chart spec {key} is referenced by a page but missing from {folder}; "
            "Fix: rebuild without deleting the chart cache during the build"
        )
    content = source.read_bytes()
    if hashlib.sha256(content).hexdigest() != digest:
        raise RuntimeError(
            f"{source} is not the drawing the pages were built with (its SHA-256 is not {digest}); "
            "Fix: build again (the chart cache changed during the build)"
        )
    return content


@cache
def vl_convert_version() -> str:
    """The installed vl-convert-python's version, looked up once: each chart a page shows asked for it (196
    lookups of the installed distributions a build, 0.15 s under the profiler)."""
    return importlib.metadata.version("vl-convert-python")


# What vega_spec makes of vl-convert's output; part of the cache entry's name, so that a change of it (a new
# transform) compiles every spec afresh. 2: tooltips computed on hover.
COMPILED_FORM = 2


def tooltips_on_hover(spec: dict[str, Any]) -> dict[str, Any]:
    """Move each mark's tooltip from its ``update`` encoding to its ``hover`` encoding (in place; returned).

    Vega-Lite puts a mark's tooltip in ``update``, so every update of a live chart computed a tooltip object
    for every mark, its numbers formatted, under the expression interpreter the Content-Security-Policy
    requires. The serving simulator's timeline (900 marks) took 40 ms a typed value, and up to 62 ms; 28 and
    41 ms with this (two runs of six values each, interleaved; headless Chromium, 2 cores). In ``hover`` Vega
    computes it for the one mark the pointer enters (charts.js turns hover processing on), before the
    pointer's move that shows it, from the mark's current row, so a tooltip still says what the chart shows.
    """
    for mark in spec.get("marks", []):
        encode = mark.get("encode", {})
        update = encode.get("update", {})
        if "tooltip" in update:
            encode.setdefault("hover", {}).setdefault("tooltip", update.pop("tooltip"))
        tooltips_on_hover(mark)  # a group's marks
    return spec


def vega_spec(key: str, folder: Path) -> bytes:
    """The Vega spec of the cached Vega-Lite spec ``key`` (compact JSON), compiled once and cached.

    Compiled by the vl-convert that rendered the static SVG, so the live chart is the same drawing, with its
    tooltips computed on hover (:func:`tooltips_on_hover`). Like the Vega-Lite spec it is served without
    ``$schema`` (a URL the browser never needs). The cache entry is named after the vl-convert version and
    :data:`COMPILED_FORM`, so an upgrade or a new transform compiles afresh.
    """
    source = folder / f"{key}.vl.json"
    if not source.exists():
        raise FileNotFoundError(
            f"chart spec {key} is referenced by a page but missing from {folder}; "
            "Fix: rebuild without deleting the chart cache during the build"
        )
    version = vl_convert_version()
    compiled = folder / f"{key}.vega-{version}-{COMPILED_FORM}.json"
    if compiled.exists():
        return compiled.read_bytes()
    import vl_convert  # on a cache miss only

    spec = tooltips_on_hover(vl_convert.vegalite_to_vega(json.loads(source.read_text(encoding="utf-8"))))
    spec.pop("$schema", None)
    content = json.dumps(spec, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    write_atomically(compiled, content)
    return content.encode("utf-8")


def copy_into(site_dir: str | Path, cache_dir: Path | None = None) -> list[Path]:
    """Copy the verified runtime, every spec the built pages reference (as Vega) and every wide drawing they
    fetch into ``site_dir``.

    Called once after the build (MkDocs ``on_post_build``). A spec missing from the cache is an error: the
    page would show a chart that can never become interactive.
    """
    site = Path(site_dir)
    folder = cache_dir if cache_dir is not None else default_cache_dir()
    target = site / SITE_FOLDER
    written = []
    runtime = target / runtime_pin().site_path
    runtime.parent.mkdir(parents=True, exist_ok=True)
    runtime.write_bytes(runtime_bytes(folder))
    written.append(runtime)
    for key in sorted(referenced_specs(site)):
        destination = target / SPEC_FOLDER / f"{key}.json"
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(vega_spec(key, folder))
        written.append(destination)
    for digest, key in sorted(referenced_wide_drawings(site).items()):
        destination = target / SPEC_FOLDER / f"{digest}.svg"
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(wide_drawing(digest, key, folder))
        written.append(destination)
    return written


def pin() -> RuntimePin:
    """Record the runtime that the installed vl-convert makes (run after reviewing an upgrade)."""
    content, libraries = _generate()
    digest = hashlib.sha256(content).hexdigest()
    record = {
        "source": "vl_convert.javascript_bundle() (Vega, Vega-Lite and vega-embed, bundled by vl-convert)",
        "file": f"vega-runtime-{digest[:12]}.js",
        "sha256": digest,
        "size": len(content),
        "vl_convert": vl_convert_version(),
        "libraries": libraries,
        "note": "globals vega and vegaLite are not usable from this bundle: use vegaEmbed and the view API",
    }
    write_atomically(LOCK_FILE, json.dumps(record, indent=2) + "\n")
    runtime_pin.cache_clear()
    return runtime_pin()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m course.charts.assets", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--pin", action="store_true", help="record the runtime the installed vl-convert makes"
    )
    parser.add_argument("--check", action="store_true", help="verify the runtime against the lock file")
    args = parser.parse_args(argv)
    if args.pin:
        print(f"pinned {pin()}")
    if args.check or not args.pin:
        runtime_bytes()
        print(f"ok: {runtime_pin().file} matches {LOCK_FILE}")


if __name__ == "__main__":
    main()
