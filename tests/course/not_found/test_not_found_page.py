"""The 404 page works wherever the site is deployed (overrides/404.html, course/not_found/page.py).

Served for a missing address at any depth, under a base path other than site_url's or at a host's root, it is
Material's page (header, tabs, palette toggle) styled with no request that fails. Where the address tells
where the site lives (a section's name in it, one segment at a host's root, or an earlier visit), the theme's
scripts load from there and its links stay on this host; where it cannot tell, links go to the published
course and nothing is requested.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

INDIGO = "rgb(64, 81, 181)"  # the theme's primary colour, light scheme


class _BaseHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the built site under ``base``, and its 404.html (status 404) for anything missing, as hosts
    do."""

    base = "/"

    def translate_path(self, path: str) -> str:
        inside = path[len(self.base) - 1 :] if path.startswith(self.base) else "/no-such-file"
        return super().translate_path(inside)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code != 404:
            super().send_error(code, message, explain)
            return
        body = (Path(self.directory) / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _serve(built_site: Path, base: str) -> Iterator[str]:
    handler = functools.partial(type("Handler", (_BaseHandler,), {"base": base}), directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}{base}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def elsewhere_url(built_site: Path) -> Iterator[str]:
    yield from _serve(built_site, "/somewhere/else/")


@pytest.fixture(scope="module")
def root_url(built_site: Path) -> Iterator[str]:
    yield from _serve(built_site, "/")


def _open_missing(page: Any, url: str) -> list[str]:
    """Open ``url`` (missing); return the URLs of every failed request but the page's own 404."""
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on("response", lambda response: response.status >= 400 and failed.append(response.url))
    response = page.goto(url)
    assert response.status == 404
    page.wait_for_load_state("networkidle")
    assert page.title().startswith("Page not found")
    # The one console error is Chromium reporting the page's own 404 status.
    assert len(page.watch.console_errors) <= 1, page.watch.console_errors
    page.watch.console_errors.clear()
    return [address for address in failed if address != url]


def _styles(page: Any) -> dict[str, str]:
    return page.evaluate(
        """() => ({header: getComputedStyle(document.querySelector('.md-header')).backgroundColor,
                  margin: getComputedStyle(document.body).marginTop,
                  heading: document.querySelector('.md-content h1').textContent})"""
    )


def _home_link(page: Any) -> str:
    return page.evaluate("() => document.querySelector('a.md-header__button.md-logo').href")


@pytest.mark.parametrize(
    ("base", "missing"),
    [
        ("elsewhere", "serving/no-such-lesson/"),  # a section's name: the site is just before it
        ("elsewhere", "assets/no-such-file.css"),
        ("root", "missing/"),  # one segment at a host's root
        ("root", "serving/a/b/c.html"),
    ],
)
def test_where_the_address_tells_the_root_the_page_is_the_theme_s(
    page: Any, elsewhere_url: str, root_url: str, base: str, missing: str
) -> None:
    site = elsewhere_url if base == "elsewhere" else root_url
    assert _open_missing(page, site + missing) == []
    assert _styles(page) == {"header": INDIGO, "margin": "0px", "heading": "Page not found"}
    assert _home_link(page) == site  # links stay on this host, under its base path
    # The theme's scripts run: the palette toggle switches the scheme.
    before = page.evaluate("() => document.body.dataset.mdColorScheme")
    page.locator("form[data-rp-palette] label:visible").first.click()
    assert page.evaluate("() => document.body.dataset.mdColorScheme") != before
    # A link in the navigation leads to the page it names, under the same base path.
    page.locator(".md-tabs a", has_text="Serving").first.click()
    page.wait_for_url(site + "serving/")
    assert page.title().startswith("Serving")


@pytest.mark.parametrize("missing", ["missing/", "a/b/c/d/e.html"])
def test_where_the_address_cannot_tell_the_page_is_styled_and_requests_nothing(
    page: Any, elsewhere_url: str, missing: str
) -> None:
    assert _open_missing(page, elsewhere_url + missing) == []
    assert _styles(page) == {"header": INDIGO, "margin": "0px", "heading": "Page not found"}
    assert _home_link(page).startswith("http://127.0.0.1:")  # the published course (site_url in tests)
    assert _home_link(page) != elsewhere_url


def test_after_a_visit_the_page_knows_where_the_site_lives(page: Any, elsewhere_url: str) -> None:
    page.goto(elsewhere_url)  # any page of the site remembers its root (ridgepoint.js)
    page.wait_for_load_state("networkidle")
    assert _open_missing(page, elsewhere_url + "missing/") == []
    assert _home_link(page) == elsewhere_url
    assert _styles(page)["header"] == INDIGO


def test_without_javascript_the_page_is_styled_and_requests_nothing(browser: Any, elsewhere_url: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on("response", lambda response: response.status >= 400 and failed.append(response.url))
    page.goto(elsewhere_url + "serving/no-such-lesson/")
    page.wait_for_load_state("load")
    assert failed == [elsewhere_url + "serving/no-such-lesson/"]
    assert _styles(page)["header"] == INDIGO
    context.close()
