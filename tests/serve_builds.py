"""Build a site as ``dev.py serve`` rebuilds it, in one process, with edits between builds: a test driver.

``python -m tests.serve_builds CONFIG SITE [--dirty] [EDITS_JSON]``, from the repository root (run as a
file, its own folder would come first on the path, and tests/course would hide the real course package),
builds once, then for each step of EDITS_JSON (a list of steps, each a list of ``[file, text]`` saves) writes
the files and builds again, as MkDocs' server does after a save (the same process, a fresh config each time,
``serve_url`` set). It prints, as JSON, the HTML files each build wrote (by their modification times), so
that a test can tell a partial rebuild from a full one. Run in a subprocess: the hook imports the project
afresh between builds, which must not happen inside pytest's own process.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from mkdocs.commands.build import build
from mkdocs.config import load_config

SERVE_URL = "http://127.0.0.1:8000/"


def _outputs(site: Path) -> dict[str, int]:
    return {p.relative_to(site).as_posix(): p.stat().st_mtime_ns for p in site.rglob("*.html")}


def main(argv: list[str]) -> int:
    dirty = "--dirty" in argv
    config_file, site_dir, *edits = [a for a in argv if a != "--dirty"]
    steps = json.loads(Path(edits[0]).read_text(encoding="utf-8")) if edits else []
    site = Path(site_dir)

    def one_build(first: bool) -> list[str]:
        config = load_config(config_file=config_file, site_dir=site_dir)
        if first:
            config.plugins.on_startup(command="serve", dirty=dirty)
        config.site_url = SERVE_URL
        before = _outputs(site) if site.exists() else {}
        build(config, serve_url=SERVE_URL, dirty=dirty)
        return sorted(path for path, stamp in _outputs(site).items() if before.get(path) != stamp)

    written = [one_build(first=True)]
    for step in steps:
        time.sleep(0.05)  # a save a moment after the build, as an editor's would be
        for file, text in step:
            Path(file).write_text(text, encoding="utf-8")
        written.append(one_build(first=False))
    print(json.dumps(written))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    sys.exit(main(sys.argv[1:]))
