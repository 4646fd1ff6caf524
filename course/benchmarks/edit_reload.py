"""What a contributor feels: the time from saving a lesson to the rebuilt page in ``dev.py serve``.

The same one-line edit is made to the same lesson, served as ``dev.py serve`` serves the course
(``mkdocs serve --dirty``, which writes only the edited page: :mod:`course.lesson_format.partial_rebuilds`),
and by a plain ``mkdocs serve`` of the plain-Material copy of its pages
(:func:`course.benchmarks.harness.write_plain_site`), as a Material site is served by default. Both
servers run at once, each after its first build; the edits alternate between them (course, plain, plain,
course, ...), so that a burst of load on a shared machine falls on both sides alike. Each figure is the
time from writing the file until the page open in headless Chromium shows the edit by itself: MkDocs'
watcher, its debounce, the whole rebuild and the live reload (issue 23: the site's policy once blocked the
reload, which timing the server's answer alone did not notice). Without Chromium, the figure falls back to the
first answer of the page that contains the edit (MkDocs' server holds requests until a rebuild is done). One
run of a single
edit is noise on a busy machine, so each side is timed :data:`EDITS` times and the median, the range and
the ratio of the medians are printed, never asserted (issue 17, part 2: target at most 1.3x).

``python -m course.benchmarks.edit_reload`` runs this figure alone (no cold and warm builds first).
"""

from __future__ import annotations

import argparse
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from course.benchmarks.harness import ROOT, Sites, build_env, register, write_plain_site
from course.lesson_format.lessons import load_course
from course.lesson_format.partial_rebuilds import SERVE_FLAGS
from course.lesson_format.site_config import write_derived_config

EDITS = 5  # per side; the median of five is steady where one run varied 1.1-2.2x
FIRST_BUILD_S = 900  # the course's first serve build executes the notebooks on a busy runner
RELOAD_S = 300
SETTLE_S = 0.5  # between edits, so that no edit lands in the watcher's debounce of the one before
SERVING_RE = re.compile(r"Serving on (http://\S+)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _page(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=RELOAD_S) as response:
            return str(response.read().decode("utf-8", "replace"))
    except (urllib.error.URLError, TimeoutError, ConnectionError):
        return None


@dataclass
class Served:
    """One ``mkdocs serve`` after its first build: the lesson file it watches and the page that shows it."""

    name: str
    lesson: Path
    url: str
    seconds: list[float] = field(default_factory=list)
    browser_page: Any = None  # a Playwright page open at ``url``, or None: poll the server instead

    def time_edit(self) -> float:
        """Append one line to the lesson; the seconds until the page shows it."""
        marker = f"Edited for the benchmark {time.time_ns()}."
        start = time.perf_counter()
        with self.lesson.open("a", encoding="utf-8") as handle:
            handle.write(f"\n{marker}\n")
        if self.browser_page is not None:  # what the author sees: the open page reloads by itself
            self.browser_page.wait_for_function(
                "marker => document.body && document.body.innerText.includes(marker)",
                arg=marker,
                timeout=RELOAD_S * 1000,
                polling=20,
            )
            seconds = time.perf_counter() - start
            self.seconds.append(seconds)
            return seconds
        deadline = time.monotonic() + RELOAD_S
        while time.monotonic() < deadline:
            if marker in (_page(self.url) or ""):
                seconds = time.perf_counter() - start
                self.seconds.append(seconds)
                return seconds
            time.sleep(0.05)
        raise RuntimeError(f"{self.url} did not show the edit within {RELOAD_S} s")


@contextmanager
def serving(
    name: str, config: Path, lesson: Path, page: str, env: dict[str, str], flags: Sequence[str] = ()
) -> Iterator[Served]:
    """Start ``mkdocs serve *flags`` for ``config``; yields once ``page`` answers, stops it on exit."""
    port = _free_port()
    address = f"127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", *flags, "-f", str(config), "--dev-addr", address],
        cwd=ROOT,
        env={**env, "RIDGEPOINT_SITE_URL": f"http://127.0.0.1:{port}/"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        base = _serving_address(server.stdout, time.monotonic() + FIRST_BUILD_S)
        # Drain the server's output meanwhile, so that a full pipe never blocks its rebuild.
        threading.Thread(target=server.stdout.read, daemon=True).start()
        url = base + page
        while _page(url) is None:
            time.sleep(0.2)
        yield Served(name, lesson, url)
    finally:
        server.terminate()
        server.wait(timeout=60)


def _serving_address(output: IO[str], deadline: float) -> str:
    """The address ``mkdocs serve`` prints once its first build is done (with the site's mount path)."""
    while time.monotonic() < deadline:
        line = output.readline()
        if not line:
            raise RuntimeError("mkdocs serve stopped before serving")
        if match := SERVING_RE.search(line):
            return match.group(1)
    raise RuntimeError("mkdocs serve did not finish its first build in time")


def interleaved(sides: Sequence[Served], edits: int) -> None:
    """Time ``edits`` edits of each side, alternating which side goes first in each round."""
    for round_number in range(edits):
        order = sides if round_number % 2 == 0 else list(reversed(sides))
        for side in order:
            time.sleep(SETTLE_S)
            side.time_edit()


def summary(seconds: Sequence[float]) -> str:
    """``median s (min-max, n runs)``."""
    return f"{statistics.median(seconds):.2f} s ({min(seconds):.2f}-{max(seconds):.2f}, n={len(seconds)})"


def figures(course: Served, plain: Served) -> list[tuple[str, str]]:
    ratio = statistics.median(course.seconds) / statistics.median(plain.seconds)
    ratios = [c / p for c, p in zip(course.seconds, plain.seconds, strict=True)]
    page = course.url.split("/", 3)[-1]
    return [
        (f"{page}: course, median (range)", summary(course.seconds)),
        (f"{page}: plain Material, median (range)", summary(plain.seconds)),
        (
            "course / plain, ratio of medians (target <= 1.3x)",
            f"{ratio:.2f}x (round by round {min(ratios):.2f}-{max(ratios):.2f}x)",
        ),
    ]


def measure(work: Path, plain_source: Path, edits: int = EDITS) -> list[tuple[str, str]]:
    """Serve a copy of the course and the plain copy in ``plain_source`` at once; time ``edits`` each."""
    env = build_env()
    lesson = load_course(ROOT / "docs").lessons[0]
    page = lesson.path.removesuffix(".md") + "/"
    docs = work / "course-docs"
    shutil.rmtree(docs, ignore_errors=True)
    shutil.copytree(ROOT / "docs", docs)
    course_config = write_derived_config(work / "mkdocs-course.yml", docs)
    plain_config = plain_source / "mkdocs-plain.yml"
    with ExitStack() as servers:
        course = servers.enter_context(
            serving("course", course_config, docs / lesson.path, page, env, flags=SERVE_FLAGS)
        )
        plain_lesson = plain_source / "docs" / lesson.path
        plain = servers.enter_context(serving("plain", plain_config, plain_lesson, page, env))
        servers.enter_context(open_in_browser([course, plain]))
        interleaved([course, plain], edits)
    return figures(course, plain)


@contextmanager
def open_in_browser(sides: Sequence[Served]) -> Iterator[None]:
    """Open each side's page in headless Chromium, for :meth:`Served.time_edit`; nothing without Chromium."""
    from course.browser_flags import CHROMIUM, launch_options

    if not Path(CHROMIUM).exists():
        yield
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_options(playwright.chromium))
        try:
            for side in sides:
                side.browser_page = browser.new_page()
                side.browser_page.goto(side.url, wait_until="load")
            yield
        finally:
            for side in sides:
                side.browser_page = None
            browser.close()


@register("edit to reload (dev.py serve)")
def edit_reload_figures(sites: Sites) -> list[tuple[str, str]]:
    work = sites.course_warm.site_dir.parent / "edit-reload"
    return measure(work, sites.plain_warm.site_dir.parent / "plain")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.benchmarks.edit_reload", description=__doc__)
    parser.add_argument("--edits", type=int, default=EDITS, help=f"edits per side (default {EDITS})")
    parser.add_argument(
        "--work",
        type=Path,
        help="a folder kept between runs (the copies, their notebook cache): a second run starts warm",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ridgepoint-edit-reload-") as folder:
        work = (args.work or Path(folder)).resolve()
        shutil.rmtree(work / "plain", ignore_errors=True)
        write_plain_site(work / "plain")
        print("edit to reload (dev.py serve)")
        for label, value in measure(work / "edit-reload", work / "plain", args.edits):
            print(f"  {label:<52} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
