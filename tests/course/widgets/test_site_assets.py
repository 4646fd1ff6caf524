"""The one build step that installs the pages' assets into a built site, for builders without our hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course.widgets.runtime import (
    PYODIDE_FILES,
    RUNTIME_CONFIG,
    FrontendAssetError,
    ensure_npm_packages,
    main,
    pyodide_site_path,
)


def test_one_command_installs_the_widget_and_chart_runtimes_into_a_built_site(tmp_path: Path) -> None:
    try:
        ensure_npm_packages()
    except FrontendAssetError as error:
        pytest.skip(f"Pyodide cannot be installed from package-lock.json here: {error}")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<p>A page without charts.</p>", encoding="utf-8")

    assert main(["--site", str(site)]) == 0

    config = json.loads((site / RUNTIME_CONFIG).read_text(encoding="utf-8"))
    assert config["pyodide"] == pyodide_site_path()
    for name in PYODIDE_FILES:
        assert (site / "assets" / config["pyodide"] / name).is_file(), name
    assert (site / "assets" / config["vega"]["src"]).is_file()  # the pinned Vega runtime, for the charts
    assert (site / "assets" / config["package"]["src"]).is_file()  # the calculators archive for Pyodide
