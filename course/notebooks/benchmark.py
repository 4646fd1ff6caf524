"""The worked notebooks' share of the course's build time, a figure of the benchmark session.

The course is built once more, cold and warm, with the notebooks excluded (same configuration, same hook,
fresh caches); the difference from the full builds the benchmark already made is what the notebooks cost.
Cold, mkdocs-jupyter starts a kernel per notebook and runs every cell; warm, it reads the cached HTML.
Both caches (charts, notebook outputs) live under the working directory, which a cold build gets fresh.
The warm figure is measured as the course's is: the median of WARM_BUILDS builds into one folder, in the same
environment (until December 2026 it was one build into an empty folder with Python's byte code not kept, and
the notebooks' share of the warm build came out negative: 1.3 s with them, 2.4 s without, -80%). Measured that
way it was still negative in two trials (without the notebooks 2.2 and 2.0 s, the course 1.6 and 1.7 s): the
build without them logs no warning, so its lessons' renders are kept as the course's are, and why it takes
longer is not traced.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from course.benchmarks.harness import ROOT, WARM_BUILDS, Sites, build_env, median_build, register, timed_build
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
    env = build_env()
    cold = timed_build(config, work / "cold", env, work / "caches")  # new, empty caches
    warms = [timed_build(config, work / "warm", env, work / "caches") for _ in range(WARM_BUILDS)]
    warm = median_build(warms)
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
