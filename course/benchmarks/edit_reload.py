"""What a contributor feels: the time from saving a lesson to the rebuilt page in ``dev.py serve``.

The same one-line edit is made to the same lesson, served by ``mkdocs serve`` for the course and for the
plain-Material copy of its pages (:func:`course.benchmarks.harness.write_plain_site`); each server has done
its first build, with the build caches the benchmark's warm builds filled. The figure is the time from
writing the file to the first answer of the page that contains the edit: MkDocs' watcher, its debounce, the
rebuild and the write of the page. One run each, printed, never asserted (issue 17, part 2: target 1.3x).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

from course.benchmarks.harness import ROOT, Sites, register
from course.lesson_format.lessons import load_course
from course.lesson_format.site_config import write_derived_config

FIRST_BUILD_S = 900  # the course's first serve build executes the notebooks on a busy runner
RELOAD_S = 300
SERVING_RE = re.compile(r"Serving on (http://\S+)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _page(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return str(response.read().decode("utf-8", "replace"))
    except (urllib.error.URLError, TimeoutError, ConnectionError):
        return None


def _base_url(output: IO[str], deadline: float) -> str:
    """The address ``mkdocs serve`` prints once its first build is done (with the site's mount path)."""
    while time.monotonic() < deadline:
        line = output.readline()
        if not line:
            raise RuntimeError("mkdocs serve stopped before serving")
        if match := SERVING_RE.search(line):
            return match.group(1)
    raise RuntimeError("mkdocs serve did not finish its first build in time")


def edit_to_reload_seconds(config: Path, lesson: Path, page: str, env: dict[str, str]) -> float:
    """Serve ``config``, append one line to ``lesson``, and time until ``page`` shows it."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-f", str(config), "--dev-addr", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env={**env, "RIDGEPOINT_SITE_URL": f"http://127.0.0.1:{port}/"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    drain: subprocess.Popen[bytes] | None = None
    try:
        assert server.stdout is not None
        url = _base_url(server.stdout, time.monotonic() + FIRST_BUILD_S) + page
        while _page(url) is None:
            time.sleep(0.2)
        marker = f"Edited for the benchmark {time.time_ns()}."
        # Drain the server's output meanwhile, so that a full pipe never blocks its rebuild.
        drain = subprocess.Popen(["cat"], stdin=server.stdout, stdout=subprocess.DEVNULL)
        start = time.perf_counter()
        with lesson.open("a", encoding="utf-8") as handle:
            handle.write(f"\n{marker}\n")
        deadline = time.monotonic() + RELOAD_S
        while time.monotonic() < deadline:
            if marker in (_page(url) or ""):
                return time.perf_counter() - start
            time.sleep(0.05)
        raise RuntimeError(f"{url} did not show the edit within {RELOAD_S} s")
    finally:
        server.terminate()
        server.wait(timeout=60)
        if drain is not None:
            drain.wait(timeout=60)


@register("edit to reload (dev.py serve)")
def edit_reload_figures(sites: Sites) -> list[tuple[str, str]]:
    work = sites.course_warm.site_dir.parent / "edit-reload"
    env = {key: value for key, value in os.environ.items() if not key.startswith("RIDGEPOINT_")}
    env |= {
        "NO_MKDOCS_2_WARNING": "1",
        "RIDGEPOINT_CHART_CACHE": str(sites.course_warm.site_dir.parent / "course-caches" / "charts"),
    }
    lesson = load_course(ROOT / "docs").lessons[0]
    page = lesson.path.removesuffix(".md") + "/"
    docs = work / "course-docs"
    shutil.copytree(ROOT / "docs", docs)
    course_config = write_derived_config(work / "mkdocs-course.yml", docs)
    course = edit_to_reload_seconds(course_config, docs / lesson.path, page, env)
    plain_source = sites.plain_warm.site_dir.parent / "plain"
    plain_config = plain_source / "mkdocs-plain.yml"
    plain = edit_to_reload_seconds(plain_config, plain_source / "docs" / lesson.path, page, env)
    ratio = f"{course / plain:.2f}x" if plain else "n/a"
    return [(f"{page}: course / plain (target <= 1.3x)", f"{course:.2f} s / {plain:.2f} s = {ratio}")]
