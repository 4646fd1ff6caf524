"""``dev.py serve`` with a broken lesson: the problem is shown in the browser and the server keeps answering.

MkDocs' own server holds every request after a failed build until one succeeds (one request waited 12 minutes
in issue 17), with the error only in the terminal. Under ``serve`` the course writes the pages anyway, each
with a panel listing the problems (file, line, fix), and the live reload takes the panel away once fixed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from course.lesson_format.partial_rebuilds import SERVE_FLAGS
from course.lesson_format.problems import Problem, problems_panel, with_problems_panel
from course.lesson_format.site_config import write_derived_config
from tests.conftest import BUILD_ENV, ROOT, TESTS, PageWatch
from tests.fixture_docs import good_lesson_docs
from tests.served_pages import free_port, wait_for

FIXTURES = TESTS / "fixtures" / "broken_lessons"
WAIT_S = 240  # a build on a busy 2-core runner; the loop returns as soon as the page answers


def test_panel_lists_this_pages_problems_first_with_file_line_and_fix() -> None:
    problems = [
        Problem("inference/other.md", "title", "is missing", "title: A title"),
        Problem("foundations/this.md", "order", "expected a whole number, got 'x'", "order: 3", line=5),
    ]
    panel = problems_panel(problems, "foundations/this.md")
    assert panel.index("docs/foundations/this.md:5") < panel.index("docs/inference/other.md")
    assert "2 lesson problems" in panel
    assert "expected a whole number, got &#x27;x&#x27;" in panel  # escaped: lesson text is untrusted
    assert "Fix: <code>order: 3</code>" in panel
    page = '<html><body class="x"><article class="md-content__inner md-typeset"><h1>T</h1></article></body>'
    assert with_problems_panel(page, "<aside>P</aside>").count("<aside>P</aside><h1>") == 1


def _wait_for(url: str, condition: str, present: bool) -> str:
    return wait_for(url, condition, wait_s=WAIT_S, request_s=30, present=present)


@pytest.mark.site
def test_serve_shows_a_lesson_problem_in_the_page_and_keeps_serving(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(FIXTURES / "tracks.yml", docs)
    shutil.copy(FIXTURES / "index.md", docs)
    for name in ("index.md", "good-lesson.md", "claim-off.md"):
        (docs / "foundations").mkdir(exist_ok=True)
        shutil.copy(FIXTURES / "foundations" / name, docs / "foundations" / name)
    (docs / "inference").mkdir()
    shutil.copy(FIXTURES / "inference" / "index.md", docs / "inference")
    config = write_derived_config(tmp_path / "mkdocs.yml", docs)
    port = free_port()
    address = f"127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", *SERVE_FLAGS, "-f", str(config), "--dev-addr", address],
        cwd=ROOT,
        env={**BUILD_ENV, "RIDGEPOINT_SITE_URL": f"http://127.0.0.1:{port}/"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        page_url = f"http://127.0.0.1:{port}/foundations/good-lesson/"
        page = _wait_for(page_url, "rp-problems", present=True)
        assert "docs/foundations/claim-off.md:10" in page
        assert "states 9 ms" in page
        assert "Fix: <code>" in page
        claim = docs / "foundations" / "claim-off.md"
        claim.write_text(
            claim.read_text(encoding="utf-8").replace("about 9 ms", "about 7 ms"), encoding="utf-8"
        )
        page = _wait_for(page_url, "rp-problems", present=False)
        assert "Fixture lesson" in page or "good" in page.lower()
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=30)
    assert "1 lesson problem found" in output  # the terminal says it too


@pytest.mark.site
@pytest.mark.browser
def test_a_saved_lesson_reloads_the_open_page_under_the_sites_own_policy(
    tmp_path: Path, browser: Any
) -> None:
    """Issue 23: the site's policy blocked MkDocs' inline live-reload script, so a saved lesson never showed.

    Under serve each page loads the live-reload script as a file of the site (course.sanitising.live_reload),
    which the published policy already allows: no policy violation, and the saved text appears by itself.
    """
    docs = good_lesson_docs(tmp_path)
    config = write_derived_config(tmp_path / "mkdocs.yml", docs)
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "serve",
            *SERVE_FLAGS,
            "-f",
            str(config),
            "--dev-addr",
            f"127.0.0.1:{port}",
        ],
        cwd=ROOT,
        env={**BUILD_ENV, "RIDGEPOINT_SITE_URL": f"http://127.0.0.1:{port}/"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    context = browser.new_context()
    try:
        url = f"http://127.0.0.1:{port}/foundations/good-lesson/"
        page_source = _wait_for(url, "live-reload.js", present=True)
        assert "Content-Security-Policy" in page_source
        assert "'unsafe-inline'" not in _script_src(page_source)
        page = context.new_page()
        watch = PageWatch(page)
        page.goto(url, wait_until="load")
        lesson = docs / "foundations" / "good-lesson.md"
        lesson.write_text(
            lesson.read_text(encoding="utf-8") + "\nA sentence saved while the page was open.\n"
        )
        page.wait_for_function(  # the page reloads by itself once the rebuild is done
            "() => document.body.innerText.includes('A sentence saved while the page was open.')",
            timeout=WAIT_S * 1000,
        )
        watch.check()  # no policy violation, no request off the host
    finally:
        context.close()
        server.terminate()
        server.communicate(timeout=30)


def _script_src(page: str) -> str:
    match = re.search(r"script-src ([^;\"]*)", page)
    return match.group(1) if match else ""
