"""Shared fixtures: the built site (built once per run), a local HTTP server for it, a checked browser page.

The browser is Debian's Chromium driven by Playwright (Playwright's own browser download is impossible here).
Only loopback resolves inside it, and every page fails its test on a console error or a request that leaves
localhost. Without Chromium the browser tests are skipped, unless RIDGEPOINT_REQUIRE_BROWSER=1 (CI sets it).
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlparse

import pytest

from course.browser_flags import CHROMIUM, launch_options

ROOT = Path(__file__).resolve().parent.parent
# The test folders mirror the packages (tests/calculators/simulator/ tests calculators/simulator/); what tests
# in several folders share stays here: fixtures/ (small sites and broken lessons), snapshots/, data/.
TESTS = ROOT / "tests"
BUILD_ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
# For page.evaluate: resolves once the browser has rendered a frame after the call (style, layout, paint).
NEXT_FRAME = "() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))"


def start_material(page: Any) -> None:
    """Move the pointer over the page, as a reader does before following a link, and return once Material has
    set itself up: it starts at the reader's first act (overrides/assets/ridgepoint/material-on-demand.js),
    and its instant navigation, search and table wrappers exist from then on."""
    page.mouse.move(2, 2)
    page.mouse.move(4, 4)
    page.wait_for_function("() => Boolean(window.ridgepointMaterial)")


def build_site(
    destination: Path, config: Path | str = ROOT / "mkdocs.yml", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Build the site with ``--strict`` into ``destination``; the caller checks the returned process."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(destination)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**BUILD_ENV, **(env or {})},
        check=False,
    )


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".js": "text/javascript",
    }

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        served = getattr(self.server, "served", None)
        if served is not None:
            served.append((self.path, int(code)))


class _RecordingServer(http.server.ThreadingHTTPServer):
    """Keeps what it answered: (path, HTTP status) in order, so a test can count what really went out (a
    browser's request events include the answers its HTTP cache gave without asking the server)."""

    served: list[tuple[str, int]]


class SiteServer:
    """A loopback HTTP server whose address is known before the site is built into ``directory``.

    The course is built with its ``site_url`` set to this address: Material's instant navigation only takes
    over links to the site_url's host and port, so this is what lets browser tests navigate as readers do.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self.server = _RecordingServer(("127.0.0.1", 0), handler)
        self.server.served = []
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        if self._thread is None:
            self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
            self._thread.start()
        return self.url

    def close(self) -> None:
        if self._thread is not None:
            self.server.shutdown()
        self.server.server_close()


@contextmanager
def serve_build(destination: Path, config: Path | str) -> Iterator[str]:
    """Build ``config`` with --strict into ``destination`` for a local server, serve it, yield its URL.

    For the fixture sites of the browser tests; the course itself is the ``built_site``/``site_url`` pair.
    """
    server = SiteServer(destination)
    try:
        result = build_site(destination, config, env={"RIDGEPOINT_SITE_URL": server.url})
        if result.returncode != 0:
            pytest.fail(f"building {config} failed:\n{result.stdout}\n{result.stderr}")
        yield server.start()
    finally:
        server.close()


@pytest.fixture(scope="session")
def _site_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteServer]:
    server = SiteServer(tmp_path_factory.mktemp("site"))
    yield server
    server.close()


@pytest.fixture(scope="session")
def built_site(_site_server: SiteServer) -> Path:
    """The course built once per test run with --strict, into a temporary folder, for its local address."""
    destination = _site_server.directory
    result = build_site(destination, env={"RIDGEPOINT_SITE_URL": _site_server.url})
    if result.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}")
    return destination


@pytest.fixture
def site_served(_site_server: SiteServer) -> list[tuple[str, int]]:
    """What the course's server answers from now on: (path, HTTP status), in order."""
    served = _site_server.server.served
    served.clear()
    return served


@pytest.fixture(scope="session")
def site_url(built_site: Path, _site_server: SiteServer) -> str:
    """Base URL of the built site served over HTTP on 127.0.0.1 (Pyodide cannot start from file://)."""
    return _site_server.start()


def _chromium_available() -> bool:
    return Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is not None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium under Playwright; skipped locally when absent, required in CI."""
    if not _chromium_available():
        if os.environ.get("RIDGEPOINT_REQUIRE_BROWSER"):
            pytest.fail(f"Chromium not found at {CHROMIUM}; install Debian's chromium package")
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(**launch_options(playwright.chromium))
        yield chromium
        chromium.close()


class PageWatch:
    """What a page did that a test must fail on: console errors, page errors, requests off the host."""

    def __init__(self, page: Any) -> None:
        self.console_errors: list[str] = []
        self.external_requests: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.console_errors.append(f"page error: {error}"))
        page.on("request", self._on_request)

    def _on_console(self, message: Any) -> None:
        if message.type == "error":
            self.console_errors.append(f"console error: {message.text}")

    def _on_request(self, request: Any) -> None:
        host = urlparse(request.url).hostname
        if request.url.startswith(("data:", "blob:", "about:")):
            return
        if host not in ("127.0.0.1", "localhost"):
            self.external_requests.append(request.url)

    def check(self) -> None:
        problems = self.console_errors + [f"request off the host: {url}" for url in self.external_requests]
        assert not problems, "\n".join(problems)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser page; the test fails afterwards on any console error or request leaving localhost.

    ``page.watch`` is the :class:`PageWatch`; a test that provokes an error on purpose clears its lists.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    new_page = context.new_page()
    watch = PageWatch(new_page)
    new_page.watch = watch  # type: ignore[attr-defined]
    yield new_page
    context.close()
    watch.check()
