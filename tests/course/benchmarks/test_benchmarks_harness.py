"""The build-time figures: wall clock and CPU seconds side by side (printed, never asserted on timings)."""

from __future__ import annotations

import gzip
import http.server
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from course.benchmarks.harness import (
    Build,
    Sites,
    _children_cpu_seconds,
    _Server,
    build_figures,
    median_build,
    serve,
)


def test_the_warm_build_is_compared_in_cpu_seconds_too() -> None:
    sites = Sites(
        course_cold=Build(Path("cc"), 100.0, 150.0),
        course_warm=Build(Path("cw"), 14.0, 10.0),  # a busy machine stretched the wall clock
        plain_cold=Build(Path("pc"), 1.0, 1.0),
        plain_warm=Build(Path("pw"), 1.0, 0.8),
        lesson_pages=[],
    )
    rows = dict(build_figures(sites))
    assert rows["warm build: course / plain (target <= 2x)"] == "14.0 s / 1.0 s = 14.00x"
    # 10.0 / 0.8 = 12.5
    cpu = rows["warm build, CPU seconds: course / plain (the steadier on a busy machine)"]
    assert cpu == "10.0 s / 0.8 s = 12.50x"


def test_a_warm_figure_is_the_median_of_its_builds_at_the_last_ones_folder() -> None:
    builds = [Build(Path("w"), 2.4, 2.0), Build(Path("w"), 1.9, 2.2), Build(Path("last"), 2.1, 1.8)]
    assert median_build(builds) == Build(Path("last"), 2.1, 2.0)  # a slow outlier no longer sets the figure


def test_a_child_process_cpu_is_counted_once_it_has_finished() -> None:
    before = _children_cpu_seconds()
    spin = "import time\nend = time.process_time() + 0.2\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", spin], check=True)
    assert _children_cpu_seconds() - before >= 0.2  # at least what the child spun (its start-up comes on top)


def test_sites_are_served_as_their_static_host_serves_them_text_compressed(tmp_path: Path) -> None:
    page = "<!doctype html><title>t</title>" + "<p>a lesson's text</p>" * 200
    (tmp_path / "lesson").mkdir()
    (tmp_path / "lesson" / "index.html").write_text(page)
    (tmp_path / "image.png").write_bytes(b"\x89PNG" + bytes(300))

    def fetch(path: str, encoding: str | None) -> tuple[str | None, bytes]:
        headers = {"Accept-Encoding": encoding} if encoding else {}
        with serve(tmp_path) as base:
            response = urllib.request.urlopen(urllib.request.Request(base + path, headers=headers))
            with response:
                return response.headers.get("Content-Encoding"), response.read()

    encoding, body = fetch("lesson/", "gzip, deflate")
    assert encoding == "gzip"
    assert gzip.decompress(body).decode() == page
    assert len(body) < len(page) / 10
    assert fetch("lesson/", None) == (None, page.encode())  # a client that does not accept gzip
    assert fetch("lesson", "gzip")[0] == "gzip"  # after the redirect to the folder's address
    assert fetch("image.png", "gzip") == (None, b"\x89PNG" + bytes(300))  # images are sent as they are


def test_a_connection_the_browser_dropped_prints_no_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    server = _Server(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    try:
        for dropped in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset by peer")):
            try:
                raise dropped
            except ConnectionError:
                server.handle_error(None, ("127.0.0.1", 1))
        assert capsys.readouterr().err == ""
        try:
            raise ValueError("a real error in the handler")
        except ValueError:
            server.handle_error(None, ("127.0.0.1", 1))
        assert "ValueError: a real error in the handler" in capsys.readouterr().err  # still printed
    finally:
        server.server_close()
