"""The 404 page works wherever the site is deployed: served for a missing address at any depth under a base
path other than site_url's, it loads nothing that can fail and is still styled (overrides/404.html)."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

BASE = "/somewhere/else/"


class _ElsewhereHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the built site under BASE, and its 404.html (status 404) for anything missing, as hosts do."""

    def translate_path(self, path: str) -> str:
        inside = path[len(BASE) - 1 :] if path.startswith(BASE) else "/no-such-file"
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


@pytest.fixture(scope="module")
def elsewhere_url(built_site: Path) -> Iterator[str]:
    handler = functools.partial(_ElsewhereHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}{BASE}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("missing", ["missing/", "serving/no-such-lesson/", "a/b/c/d/e.html"])
def test_not_found_page_is_styled_with_no_failed_request(page: Any, elsewhere_url: str, missing: str) -> None:
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on("response", lambda response: response.status >= 400 and failed.append(response.url))
    response = page.goto(elsewhere_url + missing)
    assert response.status == 404
    page.wait_for_load_state("load")
    assert failed == [elsewhere_url + missing]  # the page itself (a 404, as it should be) and nothing else
    assert page.title().startswith("Page not found")
    styles = page.evaluate(
        """() => ({bar: getComputedStyle(document.querySelector('.rp-404__bar')).backgroundColor,
                  font: getComputedStyle(document.body).fontFamily,
                  margin: getComputedStyle(document.body).marginTop})"""
    )
    assert styles["bar"] == "rgb(64, 81, 181)"  # the theme's indigo
    assert "Helvetica" in styles["font"]
    assert styles["margin"] == "0px"
    # The one console error is Chromium reporting the page's own 404 status.
    assert len(page.watch.console_errors) <= 1
    page.watch.console_errors.clear()
