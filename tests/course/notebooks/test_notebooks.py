"""The worked notebooks: their headers, navigation, execution, built pages, downloads and failure messages.

Unit tests of course.notebooks and the notebook helpers run everywhere; tests marked ``site`` execute the
notebooks in a kernel, read the built course (``built_site``) and build a fixture site with a failing cell.
"""

from __future__ import annotations

import hashlib
import json
import re
from html import escape
from pathlib import Path
from typing import Any

import nbformat
import pytest

from calculators import Scenario, format_value
from calculators.charts import build_chart
from calculators.charts.notebook_tables import format_cell, table_markdown
from calculators.charts.specs import NARROW_WIDTH, WIDE_WIDTH, course_spec
from course.folder_digest import fingerprint_folder
from course.lesson_format.lessons import load_course
from course.lesson_format.navigation import build_nav, reading_order
from course.notebooks.lesson_notebooks import (
    CACHE_ENV,
    JUPYTER_PLUGIN,
    Notebook,
    configure_execution_cache,
    describe_cell_failure,
    finish_notebook_page,
    load_notebooks,
    nav_companions,
    outputs_fingerprint,
    parse_notebook,
)
from course.notebooks.renderer import course_chart_renderer, narrow_variant, with_course_style
from course.sanitising.external_loads import html_loads, js_loads
from tests.conftest import ROOT, TESTS, build_site

DOCS = ROOT / "docs"
COURSE = load_course(DOCS)
NOTEBOOKS, NOTEBOOK_PROBLEMS = load_notebooks(DOCS, COURSE)
FIXTURE_SITE = TESTS / "fixtures" / "notebook_site"
HEADER = "# ---\n# jupyter:\n#   ridgepoint:\n#     lesson: {lesson}\n# ---\n\n"


def _page_html(site: Path, notebook: Notebook) -> str:
    return (site / notebook.path.removesuffix(".py") / "index.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------- headers
def test_every_lesson_has_a_notebook_and_every_notebook_is_valid() -> None:
    assert NOTEBOOK_PROBLEMS == []
    assert {lesson.id for lesson in COURSE.lessons} <= {n.lesson for n in NOTEBOOKS}


def test_header_without_lesson_is_a_problem_with_a_fix() -> None:
    notebook, problems = parse_notebook("inference/notebooks/x.py", "# %% [markdown]\n# # Title\n", COURSE)
    assert notebook is None
    assert [(p.file, p.field) for p in problems] == [("inference/notebooks/x.py", "ridgepoint.lesson")]
    assert "lesson: prefill-vs-decode" in problems[0].fix


def test_unknown_lesson_names_the_known_ones() -> None:
    text = HEADER.format(lesson="prefill-vs-decoed") + "# %% [markdown]\n# # Title\n"
    _, problems = parse_notebook("inference/notebooks/x.py", text, COURSE)
    assert len(problems) == 1
    assert "'prefill-vs-decoed'" in problems[0].message
    assert "prefill-vs-decode" in problems[0].message


def test_notebook_without_a_title_is_a_problem() -> None:
    text = HEADER.format(lesson="memory-wall") + "# %%\nx = 1\n"
    _, problems = parse_notebook("foundations/notebooks/x.py", text, COURSE)
    assert [p.field for p in problems] == ["title"]


def test_valid_header_gives_title_lesson_and_download_name() -> None:
    text = HEADER.format(lesson="memory-wall") + "# %% [markdown]\n# # Ridge points by hand\n\n# %%\nx = 1\n"
    notebook, problems = parse_notebook("foundations/notebooks/ridge.py", text, COURSE)
    assert problems == []
    assert notebook == Notebook("foundations/notebooks/ridge.py", "Ridge points by hand", "memory-wall")
    assert notebook.download_name == "ridge.ipynb"


# ------------------------------------------------------------------------------------------- navigation
def test_notebooks_follow_their_lesson_in_the_navigation() -> None:
    pages = [lesson.path for lesson in COURSE.lessons] + [n.path for n in NOTEBOOKS]
    order = reading_order(build_nav(COURSE, pages, nav_companions(NOTEBOOKS, COURSE)))
    for notebook in NOTEBOOKS:
        lesson = COURSE.lesson_by_id(notebook.lesson)
        assert lesson is not None
        assert order.index(notebook.path) == order.index(lesson.path) + 1


def test_companion_missing_from_the_site_is_left_out() -> None:
    pages = [lesson.path for lesson in COURSE.lessons]  # notebooks excluded from the build
    order = reading_order(build_nav(COURSE, pages, nav_companions(NOTEBOOKS, COURSE)))
    assert not any(page.endswith(".py") for page in order)


# ------------------------------------------------------------------------------------------------- cache
def test_fingerprint_changes_when_a_calculator_changes(tmp_path: Path) -> None:
    (tmp_path / "calculators").mkdir()
    module = tmp_path / "calculators" / "hardware.py"
    module.write_text("BANDWIDTH = 3.35e12\n", encoding="utf-8")
    before = outputs_fingerprint(tmp_path)
    assert outputs_fingerprint(tmp_path) == before
    module.write_text("BANDWIDTH = 3.9e12\n", encoding="utf-8")
    assert outputs_fingerprint(tmp_path) != before


def test_a_lesson_edit_keeps_the_notebooks_executed(tmp_path: Path) -> None:
    """Saving a lesson under ``serve`` must not run the notebooks again: their outputs do not depend on it."""
    (tmp_path / "calculators").mkdir()
    (tmp_path / "calculators" / "hardware.py").write_text("BANDWIDTH = 3.35e12\n", encoding="utf-8")
    lesson = tmp_path / "docs" / "serving" / "batching.md"
    lesson.parent.mkdir(parents=True)
    lesson.write_text("# Batching\n", encoding="utf-8")
    before = outputs_fingerprint(tmp_path)
    lesson.write_text("# Batching\n\nA new paragraph.\n", encoding="utf-8")
    assert outputs_fingerprint(tmp_path) == before


def test_cache_folders_of_other_fingerprints_are_removed(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "page.json").write_text("{}", encoding="utf-8")
    (tmp_path / "current").mkdir()
    assert fingerprint_folder(tmp_path, "current") == tmp_path / "current"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["current"]


def test_a_partial_serve_rebuild_keeps_the_executed_notebooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mkdocs-jupyter deletes every cached notebook a build did not render; a partial rebuild renders none
    (course.lesson_format.partial_rebuilds), so with the cache on it emptied it, and the next full rebuild
    executed all eight notebooks again (43 s instead of 3 s, seen in ``dev.py serve``)."""
    from mkdocs_jupyter.plugin import Plugin

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))

    def build(*, partial: bool) -> Path | None:
        plugin = Plugin()  # a serve keeps the plugin but loads its config again for each build
        plugin.load_config({"execute": True})
        folder = configure_execution_cache({JUPYTER_PLUGIN: plugin}, ROOT, ROOT / "docs", partial=partial)
        plugin.on_pre_build(config=None)
        plugin.on_post_build(config=None)  # renders no notebook page, like a partial rebuild
        return folder

    folder = build(partial=False)
    assert folder is not None
    folder.mkdir(parents=True, exist_ok=True)
    executed = folder / "a-notebook-executed-before.json"
    executed.write_text("{}", encoding="utf-8")
    assert build(partial=True) is None
    assert executed.exists()
    build(partial=False)  # a full build that rendered no notebook: the eviction the partial one avoids
    assert not executed.exists()


# ------------------------------------------------------------------------------------------ page finish
def test_mkdocs_jupyter_output_loses_its_cdn_scripts_and_gains_the_links() -> None:
    from mkdocs_jupyter.convert import nb2html

    raw = nb2html(str(FIXTURE_SITE / "docs/fixture/notebooks/broken-cell.py"), execute=False)
    assert "cdnjs.cloudflare.com" in raw  # what nbconvert's template brings (MathJax, Mermaid)
    notebook = Notebook("fixture/notebooks/broken-cell.py", "A notebook", "fixture-lesson")
    page = finish_notebook_page(raw, notebook, "A fixture lesson", "../../fixture-lesson/")
    assert html_loads(page) == []
    assert js_loads(page) == []
    assert "cdnjs" not in page
    assert "mathjax" not in page.lower()
    assert '<a href="../../fixture-lesson/">A fixture lesson</a>' in page
    assert '<a href="broken-cell.ipynb" download>' in page


def test_notebook_code_cells_are_code_blocks_without_the_templates_inert_copy_button() -> None:
    """Material's copy button needs ``pre > code``; mkdocs-jupyter's needs a script the page never loads."""
    from mkdocs_jupyter.convert import nb2html

    raw = nb2html(str(FIXTURE_SITE / "docs/fixture/notebooks/broken-cell.py"), execute=False)
    assert "<clipboard-copy" in raw  # what the template brings
    notebook = Notebook("fixture/notebooks/broken-cell.py", "A notebook", "fixture-lesson")
    page = finish_notebook_page(raw, notebook, "A fixture lesson", "../../fixture-lesson/")
    cells = re.findall(
        r'<div class="highlight-ipynb hl-python" id="([^"]+)"><pre>(.*?)</pre>', page, re.DOTALL
    )
    # Material's button targets "#__code_<nearest id> > code": an id that is a valid CSS selector, unlike
    # nbconvert's "cell-id=..." on the cell around it.
    assert [cell_id for cell_id, _ in cells] == [
        "rp-notebook-code-1",
        "rp-notebook-code-2",
        "rp-notebook-code-3",
    ]
    cells = [code for _, code in cells]
    assert all(cell.startswith("<code>") and cell.endswith("</code>") for cell in cells)
    assert re.sub(r"<[^>]+>", "", cells[0]).strip() == "steps = 7"
    body = page[page.index('<div class="jp-Notebook">') :]
    assert "clipboard" not in body  # no dead icon, no hidden second copy of the source
    assert "Copied!" not in body


def test_a_notebook_page_keeps_none_of_the_templates_inline_stylesheets() -> None:
    """mkdocs-jupyter's template writes JupyterLab's whole theme into every notebook page (590 kB of
    ``<style>``, nearly all for Lab's own interface); the site styles notebooks with notebooks.css instead."""
    from mkdocs_jupyter.convert import nb2html

    raw = nb2html(str(FIXTURE_SITE / "docs/fixture/notebooks/broken-cell.py"), execute=False)
    styles = re.findall(r"<style\b.*?</style>", raw, re.DOTALL)
    assert sum(map(len, styles)) > 100_000  # what the template brings: the test would be vacuous without it
    notebook = Notebook("fixture/notebooks/broken-cell.py", "A notebook", "fixture-lesson")
    page = finish_notebook_page(raw, notebook, "A fixture lesson", "../../fixture-lesson/")
    assert "<style" not in page
    assert "jupyter-wrapper" not in page  # nor the template's wrapper, which its theme is scoped to
    assert page.count('<div class="jp-Notebook">') == 1  # the cells are all there, in one notebook
    assert '<div class="highlight-ipynb hl-python" id="rp-notebook-code-2">' in page


def test_the_templates_head_is_dropped_with_what_it_would_load() -> None:
    notebook = Notebook("fixture/notebooks/x.py", "X", "fixture-lesson")
    template = '<style>@import url("https://cdn.example.org/vega.css");</style><div class="jp-Cell x"></div>'
    page = finish_notebook_page(template, notebook, "L", "../")
    assert "example.org" not in page
    assert page.endswith('<div class="jp-Notebook"><div class="jp-Cell x"></div></div>')


def test_an_external_load_left_in_a_notebook_page_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan after sanitising is the second wall: if the allow-list let a load through, the build stops."""
    import course.sanitising.policy

    monkeypatch.setattr(course.sanitising.policy, "sanitise_notebook_html", lambda cells: cells)
    notebook = Notebook("fixture/notebooks/leak.py", "X", "fixture-lesson")
    # Among the token spans and plain divs that the scan skips (they load nothing): each load is still found.
    cells = (
        '<div class="jp-Cell x"><pre><span class="n">x</span><img src="https://cdn.example.org/vega.png">'
        '<span class="o">=</span></pre><div class="p"><td style="background: url(//cdn.example.org/t.png)">'
        "</td></div></div>"
    )
    urls = r"//cdn\.example\.org/t\.png, https://cdn\.example\.org/vega\.png"  # sorted
    with pytest.raises(ValueError, match=rf"fixture/notebooks/leak\.py.*{urls}"):
        finish_notebook_page(cells, notebook, "L", "../")


def test_notebook_cells_and_outputs_are_sanitised() -> None:
    notebook = Notebook("fixture/notebooks/x.py", "X", "fixture-lesson")
    cells = (
        '<script>window.head = 1</script><div class="jp-Cell x"><script src="https://cdn.example.org/v.js">'
        '</script><img src="https://example.org/a.png" onerror="alert(1)"><a href="javascript:alert(2)">x</a>'
        '<figure class="rp-chart" data-rp-chart="roofline" data-rp-spec="abc123" data-rp-runtime="//e.org/">'
        '<svg viewBox="0 0 1 1"><path d="M0 0"></path><animate attributeName="href" values="javascript:1">'
        "</animate></svg></figure></div>"
    )
    page = finish_notebook_page(cells, notebook, "L", "../")
    for gone in ("<script", "example.org", "onerror", "javascript:", "data-rp-runtime", "<animate"):
        assert gone not in page
    assert '<figure class="rp-chart" data-rp-chart="roofline" data-rp-spec="abc123">' in page
    assert '<svg viewBox="0 0 1 1"><path d="M0 0"></path></svg>' in page


@pytest.mark.parametrize(
    ("value", "kept"), [("ab" * 32, True), ("AB" * 32, False), ("ab" * 31, False), ("../x.svg", False)]
)
def test_a_notebook_chart_keeps_only_a_sha256_as_its_wide_drawings_name(value: str, kept: bool) -> None:
    """charts.js fetches ``charts/<data-rp-wide>.svg`` and checks it by that hash: nothing else may pass."""
    notebook = Notebook("fixture/notebooks/x.py", "X", "fixture-lesson")
    cells = f'<div class="jp-Cell x"><figure class="rp-chart" data-rp-wide="{value}"></figure></div>'
    page = finish_notebook_page(cells, notebook, "L", "../")
    assert (f'data-rp-wide="{value}"' in page) == kept


def test_a_rendered_notebook_is_sanitised_once_but_warned_of_on_every_build(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``serve`` keeps the sanitised cells of an unchanged notebook; its warning must not go quiet."""
    notebook = Notebook("fixture/notebooks/once.py", "Once", "fixture-lesson")
    cells = '<div class="jp-Cell x"><img src="a.png" onerror="alert(1)"></div>'
    pages = []
    for _ in range(2):  # two builds of one server
        caplog.clear()
        pages.append(finish_notebook_page(cells, notebook, "L", "../"))
        assert "an inline event handler" in caplog.text
    assert pages[0] == pages[1]
    assert "onerror" not in pages[1]
    edited = cells.replace("a.png", "b.png")  # the notebook ran again: its new output is sanitised too
    assert "b.png" in finish_notebook_page(edited, notebook, "L", "../")


# A code cell as nbconvert's lab template writes it (divs nested five deep), with an output holding a chart's
# data table, then a Markdown cell with a heading.
_CELLS = (
    '<div class="jp-Cell jp-CodeCell jp-Notebook-cell"><div class="jp-Cell jp-CodeCell jp-Notebook-cell">'
    '<div class="jp-Cell-inputWrapper"><div class="jp-InputArea"><div class="jp-InputPrompt">In [1]:</div>'
    '<div class="highlight-ipynb"><pre>decode_step = weight_bytes / bandwidth</pre></div>'
    '<div class="clipboard-copy-txt">decode_step = weight_bytes / bandwidth</div></div></div>'
    '<div class="jp-Cell-outputWrapper"><div class="jp-OutputArea-output"><pre>4.8 ms per decode step</pre>'
    '<figure class="rp-chart"><details class="rp-chart__data" data-search-exclude><summary>Data</summary>'
    "<table><tr><td>H100</td></tr></table></details></figure></div>"
    "<p>output prose after the chart</p></div></div></div>"
    '<div class="jp-Cell jp-MarkdownCell jp-Notebook-cell"><div class="jp-RenderedMarkdown">'
    '<h2 id="step-2">Step 2: one decode step</h2><p>A decode step reads every weight once.</p></div></div>'
)


def test_code_cells_stay_out_of_the_search_index_and_markdown_cells_stay_in() -> None:
    from material.plugins.search.plugin import Parser  # the indexer Material's search plugin runs

    from course.notebooks.lesson_notebooks import copyable_code_cells, without_template_copy_button
    from course.sanitising.policy import sanitise_notebook_html

    notebook = Notebook("fixture/notebooks/x.py", "X", "fixture-lesson")
    page = finish_notebook_page(_CELLS, notebook, "L", "../")
    parser = Parser()
    parser.feed(page)
    parser.close()
    indexed = " ".join("".join(section.title + section.text) for section in parser.data)
    for code_or_output in ("decode_step", "In [1]", "4.8 ms", "H100", "output prose"):
        assert code_or_output not in indexed
    assert "Step 2: one decode step" in indexed
    assert "A decode step reads every weight once." in indexed
    # Each code cell is wrapped once (not its inner duplicate), and nothing else moves.
    assert page.count("<rp-code-cell data-search-exclude>") == 1
    unwrapped = page.replace("<rp-code-cell data-search-exclude>", "").replace("</rp-code-cell>", "")
    sanitised = sanitise_notebook_html(without_template_copy_button(_CELLS))
    assert unwrapped.endswith(copyable_code_cells('<div class="jp-Notebook">' + sanitised + "</div>"))


def test_notebook_kernels_get_no_variable_of_the_builder(monkeypatch: pytest.MonkeyPatch) -> None:
    from course.notebooks.sandbox import kernel_environment

    monkeypatch.setenv("GITHUB_TOKEN", "secret-token-value")
    environment = kernel_environment(Path.cwd())
    assert "GITHUB_TOKEN" not in environment
    assert "secret-token-value" not in "".join(environment.values())
    assert set(environment) == {
        "PATH",
        "HOME",
        "IPYTHONDIR",
        "JUPYTER_RUNTIME_DIR",
        "TMPDIR",
        "LANG",
        "PYTHONPATH",
        "PYTHONDONTWRITEBYTECODE",
        "RIDGEPOINT_CHART_CACHE",
    }
    assert environment["RIDGEPOINT_CHART_CACHE"].startswith("/sandbox/")  # never the build's chart cache


# --------------------------------------------------------------------------------------- failure message
def test_cell_failure_names_notebook_code_cell_line_and_exception() -> None:
    from nbclient.exceptions import CellExecutionError

    source = (
        "per_step = 5.0\nbroken = per_step / (steps - 7)  # ZeroDivisionError: this cell must fail the build"
    )
    traceback = [
        "\x1b[31mZeroDivisionError\x1b[39m  Traceback (most recent call last)",
        "\x1b[32m----> \x1b[39m\x1b[32m2\x1b[39m broken = per_step / (steps - 7)",
    ]
    error = CellExecutionError.from_cell_and_msg(
        nbformat.v4.new_code_cell(source),
        {"ename": "ZeroDivisionError", "evalue": "float division by zero", "traceback": traceback},
    )
    message = describe_cell_failure(error, FIXTURE_SITE / "docs")
    assert message is not None
    assert message.startswith("Notebook fixture/notebooks/broken-cell.py failed in code cell 2")
    assert "line 2: ZeroDivisionError: float division by zero" in message
    assert describe_cell_failure(ValueError("not a cell"), FIXTURE_SITE / "docs") is None


# ---------------------------------------------------------------------------------------- notebook helpers
def test_table_markdown_rounds_like_the_lessons_and_aligns_numbers() -> None:
    table = table_markdown([{"GPU": "H100", "ms": Scenario().decode().time_s * 1e3, "GPUs": 2, "fp8": None}])
    assert table.splitlines() == [
        "| GPU | ms | GPUs | fp8 |",
        "| --- | ---: | ---: | ---: |",
        "| H100 | 4.78 | 2 | n/a |",
    ]
    assert format_cell(1978.9) == "1,980"
    assert format_cell("a|b") == "a\\|b"


def test_table_rows_must_share_columns() -> None:
    with pytest.raises(ValueError, match="row 2 has columns"):
        table_markdown([{"a": 1}, {"b": 2}])


def test_course_style_goes_under_a_charts_own_config() -> None:
    styled = with_course_style({"mark": "bar", "config": {"axis": {"labelFontSize": 20}}})
    assert styled["config"]["background"] == "transparent"
    assert styled["config"]["axis"]["labelFontSize"] == 20
    assert styled["config"]["axis"]["labelColor"] == "currentColor"


def _drawn_widths(html: str) -> list[float]:
    return [float(width) for width in re.findall(r'<svg[^>]* width="([\d.]+)"', html)]


def test_a_course_chart_in_a_notebook_brings_the_lessons_narrow_variant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``display(build_chart(...).chart)`` shows what a lesson page shows: the narrow drawing in the page,
    the wide one's frame, and the wide one named by its SHA-256 (its file, in the chart cache, goes to the
    site)."""
    monkeypatch.setenv("RIDGEPOINT_CHART_CACHE", str(tmp_path))
    built = build_chart("serving-latency", compare=["static", "continuous"], requests=12, output=24)
    html = course_chart_renderer(built.chart.to_dict())["text/html"]
    assert "usermeta" not in html
    assert "usermeta" not in built.spec
    assert 'class="rp-chart__spec rp-chart__spec--narrow"' in html
    narrow = json.loads(html.split('rp-chart__spec--narrow">', 1)[1].split("</script>", 1)[0])
    assert narrow["vconcat"] == course_spec(built.data, narrow=True)["vconcat"]  # the panels stacked
    frame, small = _drawn_widths(html)
    assert WIDE_WIDTH * 0.85 <= frame <= WIDE_WIDTH
    assert NARROW_WIDTH * 0.85 <= small <= NARROW_WIDTH
    assert 'class="rp-chart__frame"' in html
    assert "rp-chart__svg--wide" not in html
    wide = re.search(r'data-rp-spec="([0-9a-f]{24})"', html)
    digest = re.search(r'data-rp-wide="([0-9a-f]{64})"', html)
    assert wide is not None
    assert digest is not None
    drawn = (tmp_path / f"{wide.group(1)}.svg").read_bytes()
    assert hashlib.sha256(drawn).hexdigest() == digest.group(1)


def test_a_notebooks_own_chart_is_drawn_at_the_course_widths_its_long_titles_in_lines() -> None:
    spec = {
        "data": {"values": [{"a": 1, "b": 2}]},
        "mark": "point",
        "encoding": {
            "x": {"field": "a", "type": "quantitative", "title": "arithmetic intensity (FLOP per byte, log)"},
            "y": {"field": "b", "type": "quantitative", "title": "short"},
        },
        "width": 560,
    }
    narrow = narrow_variant(spec)
    assert narrow is not None
    assert narrow["width"] == NARROW_WIDTH
    assert narrow["autosize"] == {"type": "fit-x", "contains": "padding"}
    assert narrow["encoding"]["x"]["title"] == ["arithmetic intensity (FLOP", "per byte, log)"]
    assert narrow["encoding"]["y"]["title"] == "short"
    assert narrow_variant({**spec, "width": "container"}) is None  # no width to fit: left as it is
    # A chart with no width (Altair's default) is fitted too: unfitted, a phone drew its text at 9.5 px.
    no_width = narrow_variant({key: value for key, value in spec.items() if key != "width"})
    assert no_width is not None
    assert no_width["width"] == NARROW_WIDTH


# ----------------------------------------------------------------------------------------- execution
def _execute(path: Path) -> nbformat.NotebookNode:
    """The notebook executed as the build executes it, in the sandbox."""
    import jupytext

    from course.notebooks.sandbox import execute_notebook

    return execute_notebook(jupytext.read(path, fmt="py:percent"), path.name, ROOT)


def _outputs(notebook: nbformat.NotebookNode, mime: str) -> str:
    parts: list[str] = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output["text"])
            elif mime in output.get("data", {}):
                parts.append(output["data"][mime])
    return "\n".join(parts)


@pytest.mark.site
def test_prefill_vs_decode_notebook_derives_the_lessons_figures() -> None:
    executed = _execute(DOCS / "serving/notebooks/prefill-vs-decode-derivation.py")
    text = _outputs(executed, "text/plain")
    lesson = Scenario()
    assert f"decode step  = max of the two = {format_value(lesson.decode().time_s, 'ms')}" in text
    assert f"tokens per step  = 4.78 ms / 16.2 µs = {lesson.prompt_tokens_per_decode_step():.1f}" in text
    assert f"= {lesson.request(2000).prefill_cost_in_decode_steps:.2f}  (the lesson: about 7)" in text
    assert f"= {lesson.ridge_point_flop_per_byte:.1f} FLOP/byte" in text
    html = _outputs(executed, "text/html")
    assert html.count('<figure class="rp-chart"') == 2
    assert html.count("<svg") >= 2


@pytest.mark.site
def test_memory_wall_notebook_places_operations_on_the_roofline() -> None:
    executed = _execute(DOCS / "foundations/notebooks/memory-wall-ridge-points.py")
    markdown = _outputs(executed, "text/markdown")
    assert "| decode, batch 1 | 1.00 |" in markdown
    assert "| memory |" in markdown
    assert "| compute |" in markdown
    html = _outputs(executed, "text/html")
    assert html.count('<figure class="rp-chart"') == 2
    assert html_loads(html) == []
    assert js_loads(html) == []


# ----------------------------------------------------------------------------------------- built site
@pytest.mark.site
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda n: n.path)
def test_built_notebook_page_has_outputs_charts_links_and_no_external_loads(
    built_site: Path, notebook: Notebook
) -> None:
    page = _page_html(built_site, notebook)
    assert "jp-OutputArea-output" in page
    assert "Out[" in page
    charts = re.findall(r'<figure class="rp-chart".*?</figure>', page, re.DOTALL)
    assert len(charts) >= 2
    assert all("<svg" in chart for chart in charts)
    # Outputs are sanitised, inline specs included: interactive charts fetch the spec files the build copied.
    for key in re.findall(r'data-rp-spec="([0-9a-f]+)"', "".join(charts)):
        assert (built_site / "assets" / "ridgepoint" / "charts" / f"{key}.json").is_file()
    assert html_loads(page) == []
    assert js_loads(page) == []
    assert "cdnjs" not in page
    assert "require.js" not in page
    # The template's inline stylesheets (JupyterLab's theme, 590 kB a page) stay out; notebooks.css styles it.
    assert re.findall(r"<style\b", page) == []
    assert len(page.encode("utf-8")) < 400_000  # 680 to 770 kB with them, 87 to 177 kB without
    lesson = COURSE.lesson_by_id(notebook.lesson)
    assert lesson is not None
    lesson_url = "../../" + Path(lesson.path).stem + "/"
    assert f'<a href="{lesson_url}">{escape(lesson.title)}</a>' in page  # a title may hold an apostrophe
    download = built_site / notebook.path.removesuffix(".py") / notebook.download_name
    assert f'href="{notebook.download_name}" download' in page
    nbformat.validate(nbformat.read(download, as_version=4))
    assert json.loads(download.read_text(encoding="utf-8"))["metadata"]["ridgepoint"]["lesson"] == lesson.id


@pytest.mark.site
def test_a_failing_cell_fails_the_build_naming_notebook_and_cell(tmp_path: Path) -> None:
    result = build_site(tmp_path / "site", FIXTURE_SITE / "mkdocs.yml")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Error reading page 'fixture/notebooks/broken-cell.py'" in output
    assert (
        "Notebook fixture/notebooks/broken-cell.py failed in code cell 2 (starting `per_step = 5.0`), "
        "line 2: ZeroDivisionError: float division by zero" in output
    )


@pytest.mark.site
def test_search_index_holds_notebook_prose_and_headings_but_no_code(built_site: Path) -> None:
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    for notebook in NOTEBOOKS:
        url = notebook.path.removesuffix(".py") + "/"
        entries = [doc for doc in index["docs"] if doc["location"].split("#")[0] == url]
        titles = " ".join(doc["title"] for doc in entries)
        text = " ".join(doc["text"] for doc in entries)
        source = (DOCS / notebook.path).read_text(encoding="utf-8")
        headings = re.findall(r"^# #+ (.+)$", source, re.MULTILINE)
        assert headings, notebook.path
        for heading in headings:  # every Markdown cell's heading is found, by its words
            assert heading.replace("`", "") in titles, (notebook.path, heading)
        code_lines = [
            line.strip()
            for cell in re.split(r"^# %%.*$", source, flags=re.MULTILINE)
            if not cell.lstrip().startswith("# ")  # a Markdown cell is all comment lines
            for line in cell.splitlines()
            if len(line.strip()) > 20 and not line.startswith("#")
        ]
        assert code_lines, notebook.path
        leaked = [line for line in code_lines if line in text]
        assert not leaked, f"{notebook.path}: code in the search index: {leaked[:3]}"
        assert "Out[" not in text
        assert "In [" not in text


@pytest.mark.browser
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda n: n.path)
def test_notebook_chart_goes_live_on_hover(page: Any, site_url: str, notebook: Notebook) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(site_url + notebook.path.removesuffix(".py") + "/")
    page.wait_for_load_state("networkidle")
    assert not [url for url in requested if "vega-runtime" in url], (
        "Vega loads only when a chart is reached for"
    )
    figure = page.locator(".jp-OutputArea-output figure.rp-chart").last
    figure.scroll_into_view_if_needed()
    figure.hover()
    page.wait_for_selector(".jp-OutputArea-output figure.rp-chart--live .rp-chart__live svg", timeout=15000)
    assert [url for url in requested if "vega-runtime" in url], "the self-hosted runtime loads on hover"
    # Outputs are sanitised (no inline script survives): the spec is the file the build copied.
    assert [url for url in requested if url.startswith(site_url + "assets/ridgepoint/charts/")]


@pytest.mark.site
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda n: n.path)
def test_lesson_page_links_its_notebook(built_site: Path, notebook: Notebook) -> None:
    lesson = COURSE.lesson_by_id(notebook.lesson)
    assert lesson is not None
    page = (built_site / lesson.path.removesuffix(".md") / "index.html").read_text(encoding="utf-8")
    target = "../" + notebook.path.split("/", 1)[1].removesuffix(".py") + "/"
    assert f'<a href="{target}">worked notebook</a>' in page


def test_a_header_that_is_not_yaml_is_one_problem_with_the_header_example() -> None:
    text = "# ---\n# jupyter:\n#   ridgepoint: {lesson: [memory-wall\n# ---\n\n# %% [markdown]\n# # T\n"
    notebook, problems = parse_notebook("foundations/notebooks/x.py", text, COURSE)
    assert notebook is None
    assert [p.field for p in problems] == ["file"]  # stops the build before jupytext reads it unbounded
    assert "lesson: prefill-vs-decode" in problems[0].fix


def test_title_is_the_first_heading_of_a_markdown_cell_not_a_code_comment() -> None:
    text = (
        HEADER.format(lesson="memory-wall")
        + "# %%\n# # not a title\nx = 1\n\n# %% [markdown]\n# # Real title\n"
    )
    notebook, problems = parse_notebook("foundations/notebooks/x.py", text, COURSE)
    assert problems == []
    assert notebook is not None
    assert notebook.title == "Real title"


@pytest.mark.site
@pytest.mark.browser
def test_a_notebook_code_cell_has_a_copy_button_that_copies_its_code(browser: Any, site_url: str) -> None:
    from tests.conftest import PageWatch

    notebook = next(n for n in NOTEBOOKS if n.path.startswith("foundations/"))
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    watch = PageWatch(page)
    page.goto(site_url + notebook.path.removesuffix(".py") + "/")
    cell = page.locator(".jp-CodeCell .jp-InputArea-editor pre").first
    code = cell.locator("code").text_content()
    assert code is not None
    assert "import math" in code  # the notebook's first code cell
    cell.hover()
    cell.locator('button.md-code__button[data-md-type="copy"]').click()
    copied = page.evaluate(
        """async () => { for (let tries = 0; tries < 50; tries++) {
          const text = await navigator.clipboard.readText(); if (text) return text;
          await new Promise((done) => setTimeout(done, 100)); } return ""; }"""
    )
    assert copied.strip() == code.strip()
    context.close()
    watch.check()


def test_a_notebook_pages_finished_cells_are_read_back_by_the_next_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A warm build reads the sanitised cells of an unchanged notebook from disk; the warning still shows."""
    from course import stored_results
    from course.notebooks import lesson_notebooks

    notebook = Notebook("fixture/notebooks/stored.py", "Stored", "fixture-lesson")
    cells = '<div class="jp-Cell x"><img src="a.png" onerror="alert(1)"></div>'
    runs = []
    finished = lesson_notebooks._finished_cells.__wrapped__  # past this process's own memo

    def counted(content: str, path: str) -> str:
        runs.append(path)
        return finished(content, path)

    monkeypatch.setattr(lesson_notebooks, "_finished_cells", counted)
    pages = []
    for _ in range(2):  # two builds, each with its own store of the same folder
        caplog.clear()
        stored = stored_results.StoredResults(tmp_path)
        pages.append(finish_notebook_page(cells, notebook, "L", "../", stored))
        assert "an inline event handler" in caplog.text
    assert pages[0] == pages[1]
    assert "onerror" not in pages[1]
    assert len(runs) == 1
    # A load the allow-list let through (as in the test above): refused, and never kept.
    import course.sanitising.policy

    monkeypatch.setattr(course.sanitising.policy, "sanitise_notebook_html", lambda cells: cells)
    external = '<div class="jp-Cell x"><img src="https://cdn.example.org/vega.png"></div>'
    stored = stored_results.StoredResults(tmp_path)
    with pytest.raises(ValueError, match=r"cdn\.example\.org"):
        finish_notebook_page(external, notebook, "L", "../", stored)
    assert len(list(stored.folder.iterdir())) == 1  # only the good page's cells: a refusal is never kept
