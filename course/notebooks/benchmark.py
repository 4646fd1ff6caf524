"""The worked notebooks' share of the course's build time, a figure of the benchmark session.

The course is built once more, cold and warm, with the notebooks excluded (same configuration, same hook,
fresh caches); the difference from the full builds the benchmark already made is what the notebooks cost.
Cold, mkdocs-jupyter starts a kernel per notebook and runs every cell; warm, it reads the cached HTML.
Both caches (charts, notebook outputs) live under the working directory, which a cold build gets fresh.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from course.benchmarks.harness import ROOT, Sites, register, timed_build
from course.lesson_format.site_config import read_site_config
from course.notebooks.lesson_notebooks import NOTEBOOK_GLOB


def write_course_without_notebooks(destination: Path) -> Path:
    """A configuration that builds the course as it is, minus its notebooks; returns its path."""
    real = read_site_config()
    excluded = str(real.get("exclude_docs") or "") + "\n" + NOTEBOOK_GLOB.replace("*.py", "") + "\n"
    config = {
        "INHERIT": str(ROOT / "mkdocs.yml"),
        "docs_dir": str(ROOT / "docs"),
        "exclude_docs": excluded,
        "theme": {"custom_dir": str(ROOT / "overrides")},
        "hooks": [str(ROOT / "course" / "mkdocs_hooks.py")],
        "watch": [],
    }
    destination.mkdir(parents=True, exist_ok=True)
    path = destination / "mkdocs-no-notebooks.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def _share(with_notebooks: float, without: float) -> str:
    cost = with_notebooks - without
    return (
        f"{with_notebooks:.1f} s - {without:.1f} s = {cost:.1f} s, {cost / with_notebooks:.0%} of the build"
    )


@register("worked notebooks' share of build time")
def notebook_figures(sites: Sites) -> list[tuple[str, str]]:
    work = sites.course_cold.site_dir.parent / "no-notebooks"
    config = write_course_without_notebooks(work)
    env = {key: value for key, value in os.environ.items() if not key.startswith("RIDGEPOINT_")}
    env["NO_MKDOCS_2_WARNING"] = "1"
    cold = timed_build(config, work / "cold", env, work / "caches")  # new, empty caches
    warm = timed_build(config, work / "warm", env, work / "caches")
    notebooks = len(list((ROOT / "docs").glob(NOTEBOOK_GLOB)))
    return [
        (
            f"cold: course - course without its {notebooks} notebooks",
            _share(sites.course_cold.seconds, cold.seconds),
        ),
        (
            f"warm: course - course without its {notebooks} notebooks",
            _share(sites.course_warm.seconds, warm.seconds),
        ),
    ]
