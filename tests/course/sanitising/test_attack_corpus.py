"""The attack corpus (attack_corpus.py), built into one site and loaded in Chromium.

The check must report every payload (none passes silently); the site is then built with the checks skipped
(RIDGEPOINT_UNCHECKED_BUILD=1, as under a builder that runs no hooks) to prove the sanitiser, the escaping and
the Content-Security-Policy on their own: on every payload's page no canary fires, no request leaves the
host, and no handler, script URL, frame, object or <base> is left in the DOM. Files that cannot be built
(not lessons, bad encodings, YAML bombs) are refused before MkDocs reads them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest

from course.lesson_format.check import Settings, check
from course.lesson_format.site_config import write_derived_config
from course.lesson_format.validation import DEFAULT_BLOCK_MODULES
from tests.conftest import BUILD_ENV, ROOT, PageWatch, SiteServer
from tests.course.sanitising.attack_corpus import (
    CANARY,
    ISSUE_24_FORMULAS,
    ISSUE_24_PARSER_DIFFERENTIALS,
    ISSUE_24_POLICY,
    ISSUE_24_TITLES,
    PAYLOADS,
    REFUSED_FILES,
    Payload,
    refused_file_bytes,
)

pytestmark = pytest.mark.site

SECRET = "corpus-secret-3f9a1c"  # in the build's environment; no page may show it
BUILT = [p for p in PAYLOADS if p.outcome == "inert"]
REFUSED = [p for p in PAYLOADS if p.outcome == "refused"]
INJECTED = [p for p in BUILT if p.place == "injected"]
TRACKS = [
    {"key": "corpus", "title": "Corpus", "summary": "Hostile lessons.", "order": 1},
    {"key": "evil", "title": "Evil", "summary": "A track whose title is hostile.", "order": 2},
    {"key": "evil-entities", "title": "Evil", "summary": "A track whose title is decoded twice.", "order": 3},
]


def track_key(payload: Payload) -> str:
    """The track whose title carries a ``track`` payload (one track each)."""
    return "evil-entities" if payload.id == "track-entities" else "evil"


def _lesson(payload: Payload, order: int) -> tuple[str, str]:
    """``(path under docs/, text)`` of the lesson carrying ``payload``."""
    fields: dict[str, Any] = {
        "title": f"Payload {payload.id}",
        "summary": "One hostile payload.",
        "track": track_key(payload) if payload.place == "track" else "corpus",
        "order": order,
        "takeaways": ["Nothing in a lesson runs."],
    }
    if payload.place == "summary":
        fields["summary"] = payload.code()
    if payload.place == "takeaways":
        fields["takeaways"] = ["Nothing in a lesson runs.", payload.code()]
    if payload.place in ("title", "description", "subtitle", "status"):
        fields[payload.place] = payload.code()
    front = "\n".join(f"{key}: {json.dumps(value)}" for key, value in fields.items())
    body = "# Payload\n\nProse before the payload.\n\n"
    if payload.place == "body":
        body += payload.code() + "\n"
    elif payload.place == "quiz":
        quiz = {
            "questions": [
                {
                    "id": "q",
                    "kind": "single",
                    "prompt": payload.code(),
                    "options": [
                        {"text": "Yes", "correct": True, "explain": "Because."},
                        {"text": "No", "explain": "Not so."},
                    ],
                }
            ]
        }
        body += "## Check your understanding\n\n```quiz\n" + json.dumps(quiz, indent=1) + "\n```\n"
    elif payload.place == "caption":
        body += f"```chart\nname: ridge-points\ncaption: {json.dumps(payload.code())}\n```\n"
    if payload.place == "page":  # outside any track, no front matter: titled by its first heading
        return f"pages/{payload.id}.md", payload.code() + "\n\nA page outside the tracks.\n"
    if payload.place == "filename":  # outside any track, no heading: titled by its file name
        return f"pages/{payload.code()}.md", "A page with no heading.\n"
    folder = track_key(payload) if payload.place == "track" else "corpus"
    return f"{folder}/{payload.id}.md", f"---\n{front}\n---\n{body}"


NOTEBOOK = """# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   ridgepoint:
#     lesson: script-tag
# ---

# %% [markdown]
# # HEADING

# %%
import os

from IPython.display import HTML, display

display(HTML("PAYLOAD"))
print("secret:", os.environ.get("RIDGEPOINT_CORPUS_SECRET", "absent"))
"""


def write_corpus(docs: Path, payloads: list[Payload]) -> None:
    """A docs tree with one lesson (or notebook, or track title) per payload."""
    tracks = [dict(t) for t in TRACKS]
    for payload in payloads:
        if payload.place == "track":
            next(t for t in tracks if t["key"] == track_key(payload))["title"] = payload.code()
    (docs / "corpus" / "notebooks").mkdir(parents=True)
    (docs / "evil").mkdir()
    (docs / "evil-entities").mkdir()
    (docs / "pages").mkdir()
    (docs / "tracks.yml").write_text(json.dumps(tracks), encoding="utf-8")
    (docs / "index.md").write_text("# Attack corpus\n", encoding="utf-8")
    for order, payload in enumerate(payloads, start=1):
        if payload.place == "notebook":
            html = payload.code().replace('"', '\\"')
            (docs / "corpus" / "notebooks" / f"{payload.id}.py").write_text(
                NOTEBOOK.replace("PAYLOAD", html).replace("HEADING", "A hostile notebook"), encoding="utf-8"
            )
        elif payload.place == "notebook-heading":
            (docs / "corpus" / "notebooks" / f"{payload.id}.py").write_text(
                NOTEBOOK.replace("PAYLOAD", "x").replace("HEADING", payload.code()), encoding="utf-8"
            )
        elif payload.outcome == "refused":
            (docs / REFUSED_FILES[payload.id]).write_bytes(refused_file_bytes(payload))
        else:
            path, text = _lesson(payload, order)
            (docs / path).write_text(text, encoding="utf-8")


def page_url(payload: Payload) -> str:
    if payload.place in ("notebook", "notebook-heading"):
        return f"corpus/notebooks/{payload.id}/"
    if payload.place == "page":
        return f"pages/{payload.id}/"
    if payload.place == "filename":
        return f"pages/{quote(payload.code())}/"
    if payload.place == "summary":
        return ""  # the home page lists every lesson with its summary
    return f"{track_key(payload) if payload.place == 'track' else 'corpus'}/{payload.id}/"


@pytest.fixture(scope="module")
def corpus_docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = tmp_path_factory.mktemp("corpus") / "docs"
    docs.mkdir()
    write_corpus(docs, BUILT)
    return docs


@pytest.fixture(scope="module")
def corpus_site(corpus_docs: Path) -> Iterator[tuple[Path, str]]:
    """The corpus built once, with the checks skipped, and served on loopback."""
    site = corpus_docs.parent / "site"
    server = SiteServer(site)
    # Not strict: the lesson problems are printed as warnings, and the pages are built all the same.
    config = write_derived_config(corpus_docs.parent / "mkdocs.yml", corpus_docs, strict=False)
    env = {
        **BUILD_ENV,
        "RIDGEPOINT_UNCHECKED_BUILD": "1",
        "RIDGEPOINT_SITE_URL": server.url,
        "RIDGEPOINT_CORPUS_SECRET": SECRET,
    }
    try:
        result = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "-f", str(config), "-d", str(site)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if result.returncode != 0:
            pytest.fail(f"the corpus did not build:\n{result.stdout}\n{result.stderr}")
        # The notebook's hostile output is reported too (a warning: it fails a strict build).
        assert (
            "corpus/notebooks/notebook-output.py: its output holds an inline event handler" in result.stderr
        )
        for payload in INJECTED:  # as if the sanitiser had let it through: the policy is the last wall
            built = site / page_url(payload) / "index.html"
            text = built.read_text(encoding="utf-8")
            built.write_text(text.replace("</body>", payload.code() + "</body>", 1), encoding="utf-8")
        yield site, server.start()
    finally:
        server.close()


def test_the_corpus_is_large_and_covers_every_place() -> None:
    assert len(PAYLOADS) >= 40
    issue_24 = ISSUE_24_FORMULAS + ISSUE_24_PARSER_DIFFERENTIALS + ISSUE_24_TITLES + ISSUE_24_POLICY
    assert len(issue_24) >= 35
    assert {p.place for p in PAYLOADS} >= {"body", "title", "track", "quiz", "caption", "notebook", "file"}
    assert len({p.id for p in PAYLOADS}) == len(PAYLOADS)


def test_the_check_reports_every_built_payload(corpus_docs: Path) -> None:
    """No payload passes silently: `dev.py check` (the same code as the build) names each one."""
    problems, _ = check((), Settings(corpus_docs, DEFAULT_BLOCK_MODULES))
    silent = []
    for payload in BUILT:
        if payload.place == "notebook" or payload.message is None:
            continue  # its output exists only once it runs (the build reports it); or text the check allows
        file = "tracks.yml" if payload.place == "track" else _lesson(payload, 0)[0]
        found = [str(p) for p in problems if p.file == file]
        if not any(payload.message in text for text in found):
            silent.append(f"{payload.id}: expected {payload.message!r} for {file}, got {found}")
    assert not silent, "\n".join(silent)


def test_the_built_pages_carry_no_payload(corpus_site: tuple[Path, str]) -> None:
    site, _ = corpus_site
    for payload in BUILT:
        if payload.place == "injected" or "<" not in payload.code():
            continue  # written into the built page on purpose (see corpus_site); or entities, shown as text
        page = (site / unquote(page_url(payload)) / "index.html").read_text(encoding="utf-8")
        assert payload.code() not in page, payload.id  # at most escaped text, never the markup itself
    notebook = (site / "corpus" / "notebooks" / "notebook-output" / "index.html").read_text(encoding="utf-8")
    assert SECRET not in notebook
    assert "secret: absent" in notebook  # the kernel ran, without the builder's environment
    assert "Content-Security-Policy" in (site / "_headers").read_text(encoding="utf-8")


DOM_CHECK = """() => {
  const found = [];
  const urlAttributes = ["href", "src", "action", "formaction", "xlink:href", "data", "srcdoc", "values",
                         "to", "from", "poster", "background", "srcset"];
  for (const element of document.querySelectorAll("*")) {
    for (const attribute of element.attributes) {
      const name = attribute.name.toLowerCase();
      const value = attribute.value.replace(/[\\s\\x00-\\x1f]/g, "").toLowerCase();
      if (name.startsWith("on")) found.push(`${element.tagName} ${name}`);
      if (urlAttributes.includes(name) && /^(javascript|vbscript|data:text|data:image\\/svg)/.test(value)) {
        found.push(`${element.tagName} ${name}=${value.slice(0, 40)}`);
      }
      if (urlAttributes.includes(name) && value.includes("evil.example")) {
        found.push(`${element.tagName} ${name}=${value.slice(0, 40)}`);
      }
    }
  }
  const structural = "article iframe, article object, article embed, article form[action], " +
    "article script:not([type]), base, meta[http-equiv=refresh i], article svg use";
  for (const element of document.querySelectorAll(structural)) {
    found.push(element.tagName);
  }
  const gadget = "[data-rp-runtime], [data-pyodide], [data-package]";
  if (document.querySelector(gadget)) found.push("gadget data-*");
  return found;
}"""

# Something laid over the page: an element with a fixed or absolute box as large as most of the window
# (a fake message or login over the lesson), or a password field anywhere.
OVERLAY_CHECK = """() => {
  const found = [];
  const area = window.innerWidth * window.innerHeight;
  for (const element of document.querySelectorAll("article *")) {
    const style = getComputedStyle(element);
    if (style.position !== "fixed" && style.position !== "absolute") continue;
    const box = element.getBoundingClientRect();
    if (box.width * box.height > area / 2) found.push(element.tagName);
  }
  // A form of the lesson's own (our blocks' controls are forms too, and post nowhere).
  for (const form of document.querySelectorAll("article form")) {
    if (!form.closest(".rp-chart, .rp-widget, .rp-quiz")) found.push("a form");
  }
  if (document.querySelector("input[type=password]")) found.push("a password field");
  return found;
}"""

REACH = """async () => {
  for (const element of document.querySelectorAll("article *")) {
    for (const type of ["pointerenter", "mouseover", "focusin", "touchstart"]) {
      element.dispatchEvent(new Event(type, { bubbles: true }));
    }
  }
  if (document.activeElement) document.activeElement.blur();
  return true;
}"""


@pytest.mark.browser
def test_no_payload_runs_or_loads_from_another_host(corpus_site: tuple[Path, str], browser: Any) -> None:
    """Each payload's page in Chromium: no canary, no request off loopback, nothing dangerous in the DOM."""
    _, url = corpus_site
    fired: list[str] = []
    failures: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.expose_binding(CANARY, lambda source, payload_id: fired.append(str(payload_id)))
    try:
        for payload in BUILT:
            page = context.new_page()
            watch = PageWatch(page)
            refused: list[str] = []  # requests the policy refused: they never leave the browser
            page.on(
                "requestfailed",
                lambda request, refused=refused: (
                    refused.append(request.url)
                    if (request.failure or "") in ("csp", "net::ERR_BLOCKED_BY_CSP")
                    else None
                ),
            )
            page.goto(url + page_url(payload), wait_until="load")
            page.evaluate(REACH)  # hover, focus and touch everything, as a reader might
            page.wait_for_load_state("networkidle")
            left = page.evaluate(DOM_CHECK) if payload.place != "injected" else []
            if left:
                failures.append(f"{payload.id}: left in the DOM: {left}")
            left_host = [url for url in watch.external_requests if url not in refused]
            if left_host:
                failures.append(f"{payload.id}: requests off the host: {left_host}")
            if page.url != url + page_url(payload) and payload.place != "filename":
                failures.append(f"{payload.id}: the page went to {page.url}")
            overlay = page.evaluate(OVERLAY_CHECK)
            if overlay:
                failures.append(f"{payload.id}: an element covers the page: {overlay}")
            # Payloads such as <img src=x> keep a harmless same-site address, which is not found; the payloads
            # written in after the build are refused by the policy, which the console says.
            errors = [
                e
                for e in watch.console_errors
                if "status of 404" not in e
                and not (payload.place == "injected" and "Content Security Policy" in e)
            ]
            if errors:
                failures.append(f"{payload.id}: console errors: {errors}")
            page.close()
    finally:
        context.close()
    if fired:
        failures.append(f"canaries fired: {sorted(set(fired))}")
    assert not failures, "\n".join(failures)


def test_files_that_are_not_lessons_are_refused_before_mkdocs_reads_them(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    write_corpus(docs, REFUSED)
    problems, _ = check((), Settings(docs, DEFAULT_BLOCK_MODULES))
    for payload in REFUSED:
        found = [str(p) for p in problems if p.file == REFUSED_FILES[payload.id]]
        assert any(payload.message in text for text in found), f"{payload.id}: got {found}"
    config = write_derived_config(tmp_path / "mkdocs.yml", docs)
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(config), "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=BUILD_ENV,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0
    for path in REFUSED_FILES.values():
        assert path in output
    assert not (tmp_path / "site" / "corpus").exists()  # stopped before anything was written
