"""When the worked notebooks run (course/notebooks/scheduling.py): side by side, each once, ahead of their
pages; a build waits for a page's notebook, a served page says it is running until it has run."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mkdocs_jupyter.plugin import Plugin

from course.notebooks import scheduling


@pytest.fixture
def plugin(tmp_path: Path) -> Any:
    jupyter = Plugin()
    errors, _ = jupyter.load_config({"execute": True, "cache_dir": str(tmp_path / "cache")})
    assert not errors
    return jupyter


def _pages(tmp_path: Path, count: int) -> list[Any]:
    pages = []
    for number in range(count):
        source = tmp_path / f"n{number}.py"
        source.write_text(f"# %%\nprint({number})\n", encoding="utf-8")
        pages.append(SimpleNamespace(file=SimpleNamespace(abs_src_path=str(source))))
    return pages


def _writes_entry(plugin: Any, log: list[str], barrier: threading.Barrier | None = None) -> Any:
    def run(page: Any, plugin_: Any, config: Any, files: Any) -> None:
        if barrier is not None:
            barrier.wait(timeout=60)  # breaks (and fails the run) unless another runs at the same time
        log.append(page.file.abs_src_path)
        entry = scheduling.cache_entry(plugin, page.file.abs_src_path)
        assert entry is not None
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_text("{}", encoding="utf-8")

    return run


def test_uncached_notebooks_run_side_by_side_once_each(
    plugin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scheduling.os, "cpu_count", lambda: 2)
    pages = _pages(tmp_path, 4)
    log: list[str] = []
    done = threading.Event()
    runs = scheduling.start(
        pages, plugin, None, None, when_done=done.set, run=_writes_entry(plugin, log, threading.Barrier(2))
    )
    assert len(runs) == 4
    for future in runs.values():
        future.result(timeout=120)  # each of the two pairs met at the barrier: two ran at once
    assert done.wait(timeout=60)
    assert sorted(log) == sorted(page.file.abs_src_path for page in pages)
    # Cached now: a later build starts nothing.
    again: list[str] = []
    assert scheduling.start(pages, plugin, None, None, run=_writes_entry(plugin, again)) == {}
    assert again == []


def test_a_running_notebook_is_not_started_twice(plugin: Any, tmp_path: Path) -> None:
    (page,) = _pages(tmp_path, 1)
    release = threading.Event()
    calls: list[str] = []

    def slow(page_: Any, plugin_: Any, config: Any, files: Any) -> None:
        calls.append("run")
        release.wait(timeout=60)
        raise RuntimeError("cell 3 failed")

    first = scheduling.start([page], plugin, None, None, run=slow)
    second = scheduling.start([page], plugin, None, None, run=slow)  # a serve rebuild meanwhile
    assert list(first.values()) == list(second.values())
    release.set()
    with pytest.raises(RuntimeError, match="cell 3 failed"):
        next(iter(first.values())).result(timeout=60)
    third = scheduling.start([page], plugin, None, None, run=slow)  # the same text would fail the same way
    assert list(third.values()) == list(first.values())
    assert calls == ["run"]


def _notebook_page(page: Any, source: str) -> Any:
    page.file.src_uri = "track/notebooks/n0.py"
    page.render = lambda config, files: pytest.fail("the notebook would be executed a second time")
    return page


def _one_notebook(plugin: Any, tmp_path: Path) -> tuple[Any, Any, Any]:
    """A notebook page (failing if the plugin renders it), its notebook and a config using ``plugin``."""
    (page,) = _pages(tmp_path, 1)
    page = _notebook_page(page, page.file.abs_src_path)
    notebook = SimpleNamespace(path="track/notebooks/n0.py", title="Worked through")
    return page, notebook, SimpleNamespace(plugins={"mkdocs-jupyter": plugin})


def test_a_build_waits_for_the_notebook_and_a_served_page_says_it_is_running(
    plugin: Any, tmp_path: Path
) -> None:
    page, notebook, config = _one_notebook(plugin, tmp_path)
    release = threading.Event()
    log: list[str] = []
    writes = _writes_entry(plugin, log)

    def held(page_: Any, plugin_: Any, config_: Any, files: Any) -> None:
        release.wait(timeout=60)
        writes(page_, plugin_, config_, files)

    scheduling.start([page], plugin, config, None, run=held)
    scheduling.before_notebook_page(page, [notebook], config, serving=True)
    page.render(None, None)  # the placeholder, not the plugin's render
    assert "This notebook is being executed" in page.content
    assert page.title == "Worked through"
    release.set()
    build_page = _notebook_page(
        SimpleNamespace(file=SimpleNamespace(abs_src_path=page.file.abs_src_path)), ""
    )
    scheduling.before_notebook_page(build_page, [notebook], config, serving=False)  # waits
    entry = scheduling.cache_entry(plugin, page.file.abs_src_path)
    assert entry is not None
    assert entry.exists()
    assert log == [page.file.abs_src_path]


def test_under_serve_queued_notebooks_show_the_placeholder_and_start_after_the_pages(
    plugin: Any, tmp_path: Path
) -> None:
    page, notebook, config = _one_notebook(plugin, tmp_path)
    pages = threading.Event()
    started = threading.Event()

    def run(page_: Any, plugin_: Any, config_: Any, files: Any) -> None:
        started.set()

    scheduling.start([page], plugin, config, None, run=run, after=pages)
    scheduling.before_notebook_page(page, [notebook], config, serving=True)
    page.render(None, None)
    assert "This notebook is being executed" in page.content  # queued, so not run by the page itself
    assert not started.wait(timeout=0.5)  # the first build's pages come first
    pages.set()
    assert started.wait(timeout=30)


def test_a_failed_execution_fails_the_build_at_its_page(plugin: Any, tmp_path: Path) -> None:
    (page,) = _pages(tmp_path, 1)
    page = _notebook_page(page, page.file.abs_src_path)
    notebook = SimpleNamespace(path="track/notebooks/n0.py", title="T")
    config = SimpleNamespace(plugins={"mkdocs-jupyter": plugin})

    def fails(page_: Any, plugin_: Any, config_: Any, files: Any) -> None:
        raise ValueError("assert in cell 2")

    scheduling.start([page], plugin, config, None, run=fails)
    with pytest.raises(ValueError, match="assert in cell 2"):
        scheduling.before_notebook_page(page, [notebook], config, serving=False)


def test_one_worker_per_core_never_more_than_waiting() -> None:
    assert scheduling.worker_count(8) >= 1
    assert scheduling.worker_count(1) == 1
    assert scheduling.worker_count(0) == 1


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's niceness from /proc")
def test_a_workers_kernels_run_at_a_lower_priority_than_the_build() -> None:
    """The build's own work goes first: a kernel started from a worker inherits the worker's niceness."""
    import os
    import subprocess

    seen: list[int] = []

    def worker() -> None:
        scheduling.yield_to_the_build()
        stat = subprocess.run(["cat", "/proc/self/stat"], capture_output=True, text=True, check=True).stdout
        seen.append(int(stat.rsplit(")", 1)[1].split()[16]))  # field 19: nice

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    build = os.getpriority(os.PRIO_PROCESS, 0)
    assert seen == [min(build + scheduling.WORKER_NICENESS, 19)]
    assert os.getpriority(os.PRIO_PROCESS, 0) == build  # the build's own thread keeps its priority
