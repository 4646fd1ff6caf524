"""The lessons built with Zensical, which runs our Markdown extensions but no MkDocs hook.

Lesson articles must come out as under MkDocs (the checks, blocks and takeaways box live in the extensions),
and a wrong claim must fail ``zensical build``. Zensical is not in the locked test dependencies: it is pre-1.0
(0.0.x releases, often weekly) and brings its own ranges for Markdown and pymdown-extensions, which would move
the versions MkDocs builds with. ``python3 dev.py zensical`` installs it beside the locked set and runs this
file; elsewhere the tests skip and say so. ``RIDGEPOINT_ZENSICAL`` may name a ``zensical`` executable.

Known differences, normalised here: the theme around the article, ``data-search-exclude`` (Zensical's search
drops the valueless attribute) and links to the worked notebooks, which are MkDocs-only for now.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
from pathlib import Path

import pytest

from course.lesson_format.lessons import load_course
from tests.conftest import ROOT

pytestmark = pytest.mark.zensical

COPIED = ("docs", "course", "calculators", "overrides", "mkdocs.yml", "CONTRIBUTING.md")
WRONG_CLAIM = '\nA decode step takes {{ "about 9 ms" == Scenario().decode().time_s | ms | within 10% }}.\n'


def _zensical() -> str:
    found = os.environ.get("RIDGEPOINT_ZENSICAL") or shutil.which("zensical")
    if not found:
        pytest.skip("zensical is not installed (kept out of the locked test deps): `python3 dev.py zensical`")
    return found


def _project_copy(destination: Path) -> Path:
    for name in COPIED:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, destination / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(origin, destination / name)
    return destination


def _zensical_build(project: Path) -> subprocess.CompletedProcess[str]:
    # The extensions import the project and its dependencies (nh3, PyYAML) from this interpreter's packages.
    path = os.pathsep.join([str(project), *site.getsitepackages()])
    return subprocess.run(
        [_zensical(), "build", "--clean"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _article(html: str) -> list[str]:
    """The article from its heading on, without blank lines and the known differences."""
    match = re.search(r'<article class="md-content__inner md-typeset">(.*?)</article>', html, re.DOTALL)
    assert match, "no article"
    article = match.group(1)
    article = article[article.index("<h1") :].replace(" data-search-exclude", "")
    article = re.sub(r'(notebooks/[\w-]+)(?:\.py|/)"', r'\1"', article)
    return [line for line in article.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def zensical_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _zensical()
    project = _project_copy(tmp_path_factory.mktemp("zensical"))
    result = _zensical_build(project)
    assert result.returncode == 0, f"zensical build failed:\n{result.stdout}\n{result.stderr}"
    return project / "site"


def test_lesson_articles_built_by_zensical_match_the_mkdocs_build(
    zensical_site: Path, built_site: Path
) -> None:
    lessons = load_course(ROOT / "docs").lessons
    assert lessons
    for lesson in lessons:
        page = Path(lesson.path).with_suffix("") / "index.html"
        zensical = (zensical_site / page).read_text(encoding="utf-8")
        assert "Key takeaways" in zensical, f"{lesson.path}: no takeaways box"
        assert _article(zensical) == _article((built_site / page).read_text(encoding="utf-8")), lesson.path


def test_a_wrong_claim_fails_the_zensical_build(tmp_path: Path) -> None:
    _zensical()
    project = _project_copy(tmp_path)
    lesson = project / "docs" / "foundations" / "memory-wall.md"
    lesson.write_text(lesson.read_text(encoding="utf-8") + WRONG_CLAIM, encoding="utf-8")

    result = _zensical_build(project)

    assert result.returncode != 0
    assert 'claim "about 9 ms"' in result.stdout + result.stderr
    assert "about 7 ms" in result.stdout + result.stderr  # the fix the check suggests: the calibrated 6.68 ms
