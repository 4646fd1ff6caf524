"""What the course's features cost: build time and page weight against the same pages on plain Material.

``python -m course.benchmarks`` (the ``benchmark`` nox session) builds the course cold (fresh process and
empty caches) and the same pages with our blocks stripped on plain Material (no hook, no extensions, no extra
CSS or JS) cold too; then each warm (again, with its caches filled) three times, the two in turn, and prints
the times (a warm one: the median of three) and their ratios. It then measures the bytes a lesson page
loads before the reader interacts, served over HTTP in headless Chromium (every response until the network
is idle), for both sites.

Targets: warm build at most 2x plain (issue 23; issue 3 had asked 1.3x), lesson page at most 1.25x plain.
They are printed, never asserted: a timing depends on the machine. Each build is also given in CPU seconds
(user and system, the build's processes together), which a machine busy with other work stretches far less
than the wall-clock time. Others add figures with :func:`register` (a name and a function
taking the :class:`Sites` and returning ``(label, value)`` rows).
"""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from course.lesson_format.lessons import load_course
from course.lesson_format.site_config import read_site_config
from course.numbers.comparisons import is_comparison
from course.numbers.extension import NUMBER_RE, comparison_text, evaluate_reference, parse_number

ROOT = Path(__file__).resolve().parents[2]
STRIPPED_FENCES = ("chart", "quiz", "widget", "lessons")
PLAIN_EXTENSIONS = [
    "toc",
    "admonition",
    "attr_list",
    "md_in_html",
    "tables",
    "footnotes",
    "pymdownx.details",
    "pymdownx.highlight",
    "pymdownx.inlinehilite",
    "pymdownx.superfences",
]
FENCE_BLOCK_RE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<name>[\w.-]+)[^\n]*\n"
    r".*?^(?P=indent)(?P=fence)[ \t]*$\n?",
    re.MULTILINE | re.DOTALL,
)


@dataclass
class Build:
    """One build of a site: where it went and how long it took (wall clock, and CPU of its processes)."""

    site_dir: Path
    seconds: float
    cpu_seconds: float  # user + system, the build's processes together


@dataclass
class Sites:
    """The four builds the figures compare."""

    course_cold: Build
    course_warm: Build
    plain_cold: Build
    plain_warm: Build
    lesson_pages: list[str]  # site-relative URLs of the lessons, e.g. "serving/prefill-vs-decode/"


Figure = Callable[[Sites], list[tuple[str, str]]]
FIGURES: dict[str, Figure] = {}


def register(name: str) -> Callable[[Figure], Figure]:
    """Add a figure to the printout (a widget's start-up time, a notebook page's weight ...)."""

    def add(function: Figure) -> Figure:
        FIGURES[name] = function
        return function

    return add


# ----------------------------------------------------------------------------------------------- stripping
def strip_blocks(markdown: str) -> str:
    """A lesson as plain Material would show it: our fences removed, numbers as plain text."""
    text = FENCE_BLOCK_RE.sub(lambda m: "" if m.group("name") in STRIPPED_FENCES else m.group(0), markdown)

    def plain_number(match: re.Match[str]) -> str:
        if is_comparison(match.group("body")):
            return comparison_text(match.group("body"))  # the claim's words, as the page shows them
        try:
            return evaluate_reference(parse_number(match.group("body"))).text
        except ValueError:
            return match.group(0)

    return NUMBER_RE.sub(plain_number, text)


def write_plain_site(destination: Path) -> Path:
    """Copy docs/ with blocks stripped, and a plain Material config for it; returns the config path."""
    docs = destination / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("notebooks", "*.py", "*.ipynb"))
    for page in docs.rglob("*.md"):
        page.write_text(strip_blocks(page.read_text(encoding="utf-8")), encoding="utf-8")
    real = read_site_config()
    theme = {key: value for key, value in real["theme"].items() if key != "custom_dir"}
    config = {
        "site_name": real["site_name"],
        "site_url": real.get("site_url"),
        "repo_url": real.get("repo_url"),
        "edit_uri": real.get("edit_uri"),
        "docs_dir": str(docs),
        "exclude_docs": real.get("exclude_docs", ""),
        "theme": theme,
        "plugins": ["search"],
        "markdown_extensions": PLAIN_EXTENSIONS,
    }
    path = destination / "mkdocs-plain.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


# -------------------------------------------------------------------------------------------------- builds
def timed_build(config: Path, site_dir: Path, env: dict[str, str], caches: Path) -> Build:
    """Build in a fresh process (so that imports count, as they do for a reader's first build).

    ``caches`` holds the build caches (rendered charts, executed notebooks, computed figures): a new, empty
    one makes a cold build. The build runs from the project root, where the config's relative paths point.
    """
    caches.mkdir(parents=True, exist_ok=True)
    env = {
        **env,
        "RIDGEPOINT_CHART_CACHE": str(caches / "charts"),
        "RIDGEPOINT_NOTEBOOK_CACHE": str(caches / "mkdocs-jupyter"),
        "RIDGEPOINT_NUMBER_CACHE": str(caches / "numbers"),
    }
    start, used = time.perf_counter(), _children_cpu_seconds()
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(site_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds, cpu_seconds = time.perf_counter() - start, _children_cpu_seconds() - used
    if result.returncode != 0:
        raise RuntimeError(f"build of {config} failed:\n{result.stdout}\n{result.stderr}")
    return Build(site_dir, seconds, cpu_seconds)


def _children_cpu_seconds() -> float:
    """User and system CPU seconds of this process's finished children (and theirs: notebooks, Node)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# A warm build of either site alone moved by a fifth from run to run on the 2-core machine (plain Material's
# 1.0-1.4 s): each site's warm figure is the median of this many, the two sites built in turn. A build into
# a new folder also copies every static file, Pyodide's 13 MB among them, which MkDocs skips when unchanged
# (0.4 s more in one profile), so the median leaves out the first.
WARM_BUILDS = 3


def build_env() -> dict[str, str]:
    """The environment of every build and server the benchmark starts: this one's, without our own settings
    (each build names its caches itself), MkDocs' notice about its next version silenced.

    Plain Material's code was compiled to byte code when it was installed; ours is compiled at its first
    import and kept, unless PYTHONDONTWRITEBYTECODE is set (some development shells set it), when
    every build compiled the project's 140 modules again: 0.2 s that only the course's warm build paid. So it
    is left out.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("RIDGEPOINT_")}
    env["NO_MKDOCS_2_WARNING"] = "1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def build_all(work: Path) -> Sites:
    env = build_env()
    course_cold = timed_build(ROOT / "mkdocs.yml", work / "course-cold", env, work / "course-caches")
    plain_config = write_plain_site(work / "plain")
    plain_cold = timed_build(plain_config, work / "plain-cold", env, work / "plain-caches")
    course_warm, plain_warm = [], []
    for _ in range(WARM_BUILDS):  # in turn, so that both sites' builds share the machine's moods
        course_warm.append(
            timed_build(ROOT / "mkdocs.yml", work / "course-warm", env, work / "course-caches")
        )
        plain_warm.append(timed_build(plain_config, work / "plain-warm", env, work / "plain-caches"))
    lessons = [lesson.path.removesuffix(".md") + "/" for lesson in load_course(ROOT / "docs").lessons]
    return Sites(course_cold, median_build(course_warm), plain_cold, median_build(plain_warm), lessons)


def median_build(builds: list[Build]) -> Build:
    """The median of a site's builds (wall clock and CPU each), at the last one's folder."""
    return Build(
        builds[-1].site_dir,
        statistics.median(b.seconds for b in builds),
        statistics.median(b.cpu_seconds for b in builds),
    )


# ------------------------------------------------------------------------------------------- page weight
# What GitHub Pages, where the course is published, sends gzip-compressed to a browser that accepts it.
COMPRESSED_SUFFIXES = (".html", ".css", ".js", ".mjs", ".json", ".svg", ".xml", ".txt")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """Serves a built site as its static host does: text gzip-compressed, the rest as it is.

    Python's own handler sends every file uncompressed, so a page-speed run priced a lesson's HTML at its full
    size on the simulated slow network, which no reader of the published site pays (issue 23). Both sites of
    a comparison are served by this same handler.
    """

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        path = Path(self.translate_path(self.path))
        if path.is_dir() and urllib.parse.urlsplit(self.path).path.endswith("/"):
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.suffix in COMPRESSED_SUFFIXES and path.is_file()):
            return super().send_head()  # redirects, 404s and binary files, as Python sends them
        body = gzip.compress(path.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


class _Server(http.server.ThreadingHTTPServer):
    """A browser that drops a connection mid-answer is no error of the site's.

    Lighthouse closes its tabs and connections as soon as it has its trace, while this server still writes:
    Python's server printed a traceback of each BrokenPipeError or ConnectionResetError among the
    benchmark's figures (three in one run), where a reader took them for a failure. Any other error is
    printed as before.
    """

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@contextmanager
def serve(site_dir: Path) -> Iterator[str]:
    server = _Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site_dir)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class PageWeight:
    """Bytes a page loads before the reader interacts: uncompressed, and gzip-compressed.

    ``raw`` counts each response's body as the browser hands it over (after decompression), so it is the
    files' own size; ``gzip`` is what a host that compresses text (GitHub Pages, Netlify, nginx, and
    :func:`serve` here) sends, closer to what a reader downloads. Both are printed.
    """

    raw: int
    gzip: int


def bytes_before_interaction(site_dir: Path, page: str) -> PageWeight:
    """Every response a page triggers until the network is idle (no scroll, hover or typing)."""
    from playwright.sync_api import sync_playwright

    from course.browser_flags import launch_options

    bodies: list[bytes] = []
    with serve(site_dir) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_options(playwright.chromium))
        tab = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        tab.on("response", lambda response: bodies.append(response.body() if response.ok else b""))
        tab.goto(base + page, wait_until="networkidle")
        browser.close()
    return PageWeight(sum(map(len, bodies)), sum(len(gzip.compress(body, 6)) for body in bodies))


def _weight(course: int, plain: int) -> str:
    return f"{course / 1e3:,.0f} kB / {plain / 1e3:,.0f} kB = {_ratio(course, plain)}"


def _ratio(course: float, plain: float) -> str:
    return f"{course / plain:.2f}x" if plain else "n/a"


@register("build time")
def build_figures(sites: Sites) -> list[tuple[str, str]]:
    return [
        (
            "cold build: course / plain",
            f"{sites.course_cold.seconds:.1f} s / {sites.plain_cold.seconds:.1f} s = "
            f"{_ratio(sites.course_cold.seconds, sites.plain_cold.seconds)}",
        ),
        (
            "warm build: course / plain (target <= 2x)",
            f"{sites.course_warm.seconds:.1f} s / "
            f"{sites.plain_warm.seconds:.1f} s = "
            f"{_ratio(sites.course_warm.seconds, sites.plain_warm.seconds)}",
        ),
        (
            "warm build, CPU seconds: course / plain (the steadier on a busy machine)",
            f"{sites.course_warm.cpu_seconds:.1f} s / {sites.plain_warm.cpu_seconds:.1f} s = "
            f"{_ratio(sites.course_warm.cpu_seconds, sites.plain_warm.cpu_seconds)}",
        ),
    ]


@register("lesson page weight before interaction")
def weight_figures(sites: Sites) -> list[tuple[str, str]]:
    rows = []
    for page in sites.lesson_pages:
        course = bytes_before_interaction(sites.course_warm.site_dir, page)
        plain = bytes_before_interaction(sites.plain_warm.site_dir, page)
        rows.append((f"{page} uncompressed (target <= 1.25x)", _weight(course.raw, plain.raw)))
        rows.append((f"{page} gzip-compressed, as hosts send it", _weight(course.gzip, plain.gzip)))
    return rows
