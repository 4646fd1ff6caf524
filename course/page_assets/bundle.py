"""Our stylesheets as one minified file, our scripts minified in place: what a lesson loads beyond Material.

Lighthouse (issue 16) found that a lesson paid for four extra render-blocking stylesheets and four unminified
scripts against the same page on plain Material. The sources stay readable in ``overrides/assets/ridgepoint/``
and are what MkDocs copies into the site (and what a builder without our hook links). With the hook:

* the stylesheets listed in ``extra_css`` become one file, ``assets/ridgepoint/ridgepoint.<hash>.min.css``,
  that every page links instead (one request on the critical path instead of four, a third smaller). Its
  name changes with its content, so ``_headers`` lets browsers keep it for a year
  (:func:`course.sanitising.csp.immutable_assets`);
* the scripts and stylesheets copied into ``assets/ridgepoint/`` are minified in place after the build. The
  scripts keep their names: each finds the site's assets from its own address (``document.currentScript``).

Minifying is rJSmin and rCSSmin (build-time tools pinned in uv.lock), which only remove comments and spaces
the languages do not need; :func:`check_scripts` parses every minified script with Node when it is installed.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from course.numbers.value_cache import default_cache_dir
from course.stored_results import StoredResults, text_key

FOLDER = "assets/ridgepoint"
BUNDLE_STEM = "ridgepoint"


class AssetBundleError(RuntimeError):
    """A stylesheet named in extra_css is missing, or a minified script no longer parses."""


def minify_css(text: str) -> str:
    import rcssmin

    return str(rcssmin.cssmin(text))


def minify_js(text: str) -> str:
    import rjsmin

    return str(rjsmin.jsmin(text)) + "\n"


def find_sources(paths: Sequence[str], theme_dirs: Sequence[str]) -> list[Path]:
    """Each site path (``assets/ridgepoint/quiz.css``) as the file in the first theme folder holding it."""
    found = []
    for path in paths:
        candidates = [Path(folder) / path for folder in theme_dirs if (Path(folder) / path).is_file()]
        if not candidates:
            raise AssetBundleError(
                f"mkdocs.yml: extra_css names {path}, which is in no theme folder ({', '.join(theme_dirs)}); "
                "Fix: add the file under overrides/ or remove it from extra_css"
            )
        found.append(candidates[0])
    return found


def stylesheet_bundle(sources: Iterable[Path]) -> tuple[str, str]:
    """The site path and text of the one stylesheet made of ``sources``, in their order.

    Order matters as it does for separate ``<link>`` elements: later rules win ties. Each file is minified
    on its own, so a rule cannot run into the next file's.
    """
    parts = [f"/* {source.name} */\n{minify_css(source.read_text(encoding='utf-8'))}" for source in sources]
    text = "\n".join(parts) + "\n"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return f"{FOLDER}/{BUNDLE_STEM}.{digest}.min.css", text


def site_stylesheet_bundle(extra_css: Sequence[str], theme_dirs: Sequence[str]) -> tuple[str, str]:
    """The bundle of the site's ``extra_css`` (path and text), from the files in the theme folders."""
    return stylesheet_bundle(find_sources(extra_css, theme_dirs))


def write_bundle(site_dir: str | Path, path: str, text: str) -> Path:
    target = Path(site_dir) / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def minify_in_place(site_dir: str | Path) -> list[Path]:
    """Minify our scripts and stylesheets in the built site (``FOLDER``); return the files changed.

    The stylesheets the bundle replaced on pages are minified too, for a builder or reader that links them
    directly; files already minified (the bundle) and links (a copied runtime) are left alone.
    """
    folder = Path(site_dir) / FOLDER
    done = []
    for path in sorted(folder.glob("*.js")) + sorted(folder.glob("*.css")):
        if path.name.endswith((".min.js", ".min.css")) or path.is_symlink():
            continue
        text = path.read_text(encoding="utf-8")
        minified = minify_js(text) if path.suffix == ".js" else minify_css(text)
        if len(minified) < len(text):
            path.write_text(minified, encoding="utf-8")
            done.append(path)
    return done


# Scripts Node parsed in this process, by content (and module kind): a full ``serve`` rebuild minifies the
# same scripts again, and six Node processes took 0.8 s of it.
_PARSED: set[tuple[str, bool]] = set()
PARSED_STORE = "parsed-scripts"  # beside the page checks, in the figures' cache: scripts that parsed


def check_scripts(paths: Iterable[Path]) -> None:
    """Parse each minified script with Node (``node --check``) when Node is installed; raise if one fails.

    The widget worker is an ES module (``new Worker(url, {type: "module"})``), so it is checked as one. A
    script that parsed is not parsed again, in this process or a later build (a warm build started six Node
    processes for 0.25 s). The Node processes run side by side: one after another, their start-up was 0.6 s
    of a warm build.
    """
    node = shutil.which("node")
    if node is None:
        return
    stored = StoredResults(default_cache_dir() / PARSED_STORE)
    with tempfile.TemporaryDirectory(prefix="ridgepoint-minified-") as folder:
        running = []
        for path in paths:
            if path.suffix != ".js":
                continue
            seen = (hashlib.sha256(path.read_bytes()).hexdigest(), "worker" in path.name)
            if seen in _PARSED or stored.get(_parsed_key(seen, node)) is not None:
                continue
            copy = Path(folder) / (path.stem + (".mjs" if "worker" in path.name else ".cjs"))
            shutil.copyfile(path, copy)
            check = subprocess.Popen(
                [node, "--check", str(copy)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            running.append((path, seen, check))
        failures = []
        for path, seen, check in running:
            _, stderr = check.communicate()
            if check.returncode == 0:
                _PARSED.add(seen)
                stored.put(_parsed_key(seen, node), "parsed")
            else:
                failures.append(f"{path}: the minified script does not parse ({stderr.strip()})")
        if failures:
            raise AssetBundleError(
                "; ".join(failures)
                + "; Fix: simplify the construct the minifier mangles, or pin the rjsmin that handled it"
            )


def _parsed_key(seen: tuple[str, bool], node: str) -> str:
    """The stored key of a script's content and kind, as this Node parses it."""
    return text_key(seen[0], "module" if seen[1] else "script", node)
