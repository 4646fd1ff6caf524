"""Our stylesheets as one minified, content-named file and our scripts minified in place (course/page_assets),
and the 404 page made self-contained (course/not_found): without a browser."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from course.not_found.page import NotFoundPageError, self_contained
from course.page_assets.bundle import (
    AssetBundleError,
    check_scripts,
    find_sources,
    minify_in_place,
    stylesheet_bundle,
)
from course.sanitising.csp import immutable_assets
from tests.conftest import ROOT

OURS = ROOT / "overrides" / "assets" / "ridgepoint"


def test_the_bundle_keeps_the_stylesheets_order_and_is_named_by_its_content(tmp_path: Path) -> None:
    first, second = tmp_path / "a.css", tmp_path / "b.css"
    first.write_text("/* why */\n.x {\n  color: red;\n}\n", encoding="utf-8")
    second.write_text(".x { color: blue; }\n@media print {\n  .x { display: none; }\n}\n", encoding="utf-8")
    path, text = stylesheet_bundle([first, second])
    assert re.fullmatch(r"assets/ridgepoint/ridgepoint\.[0-9a-f]{8}\.min\.css", path)
    assert text.index("color:red") < text.index("color:blue")  # later rules still win ties
    assert "why" not in text
    assert "@media print{.x{display:none}}" in text
    assert stylesheet_bundle([second, first])[0] != path  # new content, new name
    # The name carries the content's hash, so _headers lets browsers keep it.
    (tmp_path / "site" / path).parent.mkdir(parents=True)
    (tmp_path / "site" / path).write_text(text, encoding="utf-8")
    assert immutable_assets(tmp_path / "site") == ["/" + path]


def test_a_stylesheet_missing_from_the_theme_is_named_with_the_fix() -> None:
    with pytest.raises(AssetBundleError, match=r"extra_css names assets/ridgepoint/nope\.css.*Fix"):
        find_sources(["assets/ridgepoint/nope.css"], [str(ROOT / "overrides")])


def test_our_scripts_minify_to_scripts_that_still_parse(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(OURS, site / "assets" / "ridgepoint")
    sizes = {path.name: path.stat().st_size for path in (site / "assets" / "ridgepoint").iterdir()}
    changed = minify_in_place(site)
    expected = {"ridgepoint.js", "widgets.js", "quiz.js", "charts.js", "quiz.css"}
    assert {path.name for path in changed} >= expected
    for path in changed:
        assert path.stat().st_size < sizes[path.name]
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the minified scripts were not parsed")
    check_scripts(changed)  # raises if one no longer parses


@pytest.fixture
def node_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The Node processes ``check_scripts`` starts from now on, with the figures' cache in ``tmp_path``."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    runs: list[list[str]] = []
    real_popen = subprocess.Popen

    def counted(argv: list[str], **kwargs: object) -> object:
        runs.append(argv)
        return real_popen(argv, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "Popen", counted)
    monkeypatch.setenv("RIDGEPOINT_NUMBER_CACHE", str(tmp_path / "cache"))
    return runs


def test_a_script_is_parsed_once_per_process_and_a_broken_one_every_time(
    tmp_path: Path, node_runs: list[list[str]]
) -> None:
    """A full serve rebuild minifies the same scripts again; Node parses each content once."""
    script, broken = tmp_path / "fine.js", tmp_path / "broken.js"
    script.write_text(f"window.checked = {tmp_path.stat().st_ino};\n", encoding="utf-8")  # new content
    broken.write_text("(() => { const x = ; })();\n", encoding="utf-8")
    check_scripts([script])
    check_scripts([script])
    assert len(node_runs) == 1
    for _ in range(2):
        with pytest.raises(AssetBundleError):
            check_scripts([broken])
    assert len(node_runs) == 3


def test_a_script_that_parsed_in_an_earlier_build_is_not_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, node_runs: list[list[str]]
) -> None:
    """Kept in the figures' cache (six Node processes a warm build); a cold cache parses."""
    from course.page_assets import bundle

    script = tmp_path / "kept.js"
    script.write_text(f"window.kept = {tmp_path.stat().st_ino};\n", encoding="utf-8")
    check_scripts([script])
    monkeypatch.setattr(bundle, "_PARSED", set())  # the next build's process
    check_scripts([script])
    assert len(node_runs) == 1
    monkeypatch.setenv("RIDGEPOINT_NUMBER_CACHE", str(tmp_path / "cold"))
    monkeypatch.setattr(bundle, "_PARSED", set())
    check_scripts([script])
    assert len(node_runs) == 2


def test_a_script_that_no_longer_parses_fails_the_build(tmp_path: Path) -> None:
    """The scripts are parsed side by side: a broken one is named, whichever of them it is."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    fine, broken = tmp_path / "fine.js", tmp_path / "broken.js"
    fine.write_text(f"window.fine = {tmp_path.stat().st_ino + 1};\n", encoding="utf-8")
    broken.write_text("(() => { const x = ; })();\n", encoding="utf-8")
    with pytest.raises(AssetBundleError, match=r"broken\.js: the minified script does not parse") as error:
        check_scripts([broken, fine])
    assert "fine.js" not in str(error.value)


def test_the_404_page_inlines_stylesheets_and_icon_and_links_to_the_published_site(tmp_path: Path) -> None:
    (tmp_path / "assets").mkdir()
    main = "body{margin:0}\n/*# sourceMappingURL=main.css.map */"
    (tmp_path / "assets" / "main.css").write_text(main, encoding="utf-8")
    (tmp_path / "assets" / "print.css").write_text("nav{display:none}", encoding="utf-8")
    (tmp_path / "assets" / "favicon.png").write_bytes(b"\x89PNG")
    page = (
        '<head><link rel="icon" href="/course/assets/favicon.png">'
        '<link rel="stylesheet" href="/course/assets/main.css">'
        '<link rel="stylesheet" href="/course/assets/print.css" media="print"></head>'
        '<body><a href="/course/.">Home</a> <a class="x" href="/course/serving/">Serving</a>'
        '<a href="https://github.com/x/y">repo</a> <a href="#top">top</a>'
        '<template><script src="/course/assets/bundle.js"></script></template></body>'
    )
    out = self_contained(page, tmp_path, "https://example.org/course/")
    assert "<style>body{margin:0}\n</style>" in out  # the source map comment would point nowhere
    assert '<style media="print">nav{display:none}</style>' in out
    assert 'href="data:image/png;base64,iVBORw=="' in out
    assert '<a href="https://example.org/course/">Home</a>' in out
    assert '<a class="x" href="https://example.org/course/serving/">' in out
    assert 'href="https://github.com/x/y"' in out
    assert 'href="#top"' in out
    assert '<script src="/course/assets/bundle.js">' in out  # the page's own script loads these
    with pytest.raises(NotFoundPageError, match="does not have"):
        self_contained(
            '<link rel="stylesheet" href="/course/gone.css">', tmp_path, "https://example.org/course/"
        )


def test_page_speed_figures_are_the_medians_of_their_runs() -> None:
    from course.benchmarks.page_speed import PageSpeed, median_speed

    runs = [
        PageSpeed(2700, 2900, 870_000, 77, 410),
        PageSpeed(3500, 6200, 871_000, 53, 90),
        PageSpeed(2400, 2500, 869_000, 65, 230),
    ]
    assert median_speed(runs) == PageSpeed(2700, 2900, 870_000, 65, 230)  # each figure on its own
    fallback = median_speed([*runs[:2], PageSpeed(1, 1, 1)])
    assert fallback.score is None  # the Performance API has no score
    assert fallback.tbt_ms is None  # nor blocking time
