"""Asking a local ``mkdocs serve`` for pages until they show (or drop) some text: the serve tests' client.

Both the problems-panel test and the rebuild-cache test (tests/course/lesson_format/test_serve.py,
test_rebuild_caches.py) start a real server on a free port and poll it while it rebuilds, so the polling
lives here once.
"""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request

import pytest


def free_port() -> int:
    """A loopback port nothing listens on now (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get_page(url: str, timeout_s: float) -> str | None:
    """The page's text, or None while the server is not answering yet."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return str(response.read().decode("utf-8"))
    except (urllib.error.URLError, TimeoutError, ConnectionError):
        return None


def wait_for(url: str, text: str, *, wait_s: float, request_s: float, present: bool = True) -> str:
    """Poll ``url`` until ``text`` is in the page (or, ``present=False``, gone); fail after ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        page = get_page(url, request_s)
        if page is not None and (text in page) == present:
            return page
        time.sleep(0.5)
    pytest.fail(f"{url} did not {'show' if present else 'drop'} {text!r} within {wait_s} s")
