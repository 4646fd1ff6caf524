"""Charts: data from the calculators, a spec matching the reviewed snapshot that compiles,
its SVG renders and is cached, and bad parameters fail with the parameter, the allowed values and a fix.

Snapshots live in tests/snapshots/charts/<case>.json and are compared as data. After an intended change,
refresh them with ``RIDGEPOINT_UPDATE_SNAPSHOTS=1 pytest tests/calculators/charts/test_charts.py`` and review
the diff.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import altair as alt
import pytest
import vl_convert

from calculators import Scenario, ridge_point
from calculators.charts import CHARTS, ChartError, build_chart, chart_data
from calculators.charts.content import short_gpu_name
from calculators.charts.palette import (
    ATTENTION_COLOURS,
    DARK_BACKGROUND,
    EXPERT_LOAD_COLOURS,
    FORMAT_PART_COLOURS,
    GPU_COLOURS,
    LIGHT_BACKGROUND,
    MEMORY_COLOURS,
    NEUTRAL,
    PHASE_COLOURS,
    PRECISION_COLOURS,
    RECIPE_COLOURS,
    SCHEDULER_COLOURS,
    SEQUENTIAL_COLOURS,
    TENSOR_PARALLEL_COLOURS,
    contrast,
    sequential_colours,
)
from calculators.charts.render import merged_rects, render_course_chart, render_spec, tidy_svg
from calculators.charts.specs import NARROW_WIDTH, WIDE_WIDTH
from calculators.hardware import GPUS
from calculators.models import ATTENTION_KINDS
from calculators.quantization import RECIPES
from calculators.simulator.named import SCHEDULERS
from course.charts import assets as chart_assets
from course.charts.extension import find_problems, parse_block, render_block
from course.charts.markup import altair_chart_html, figure_html
from tests.conftest import ROOT, TESTS

SNAPSHOTS = TESTS / "snapshots" / "charts"
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "roofline": ("roofline", {}),
    "roofline-several": ("roofline", {"gpus": ["a100-sxm-80gb", "h100-sxm", "b200"], "batches": [1, 64]}),
    "prefill-vs-decode": ("prefill-vs-decode", {}),
    "prefill-vs-decode-attention": ("prefill-vs-decode", {"kv_traffic": True}),
    "ridge-points": ("ridge-points", {}),
    "ridge-points-fp8": ("ridge-points", {"precisions": ["bf16", "fp8"]}),
    "request-timeline": ("request-timeline", {}),
    "kv-cache": ("kv-cache", {}),
    "kv-cache-mla": ("kv-cache", {"model": "deepseek-v3", "gpu": "h200", "gpus": 8, "precision": "fp8"}),
    "prefill-stall": ("prefill-stall", {}),
    "latency-vs-rate": ("latency-vs-rate", {"rates": [5, 20, 40]}),
    "goodput-vs-rate": ("goodput-vs-rate", {"rates": [20, 50], "gpus": 3, "prefill_gpus": 2}),
    # Serving charts of small runs, so that the stored specs (which carry their rows) stay short.
    "serving-timeline": (
        "serving-timeline",
        {"requests": 12, "rate": 30, "output": 24, "rows": 6, "steps": 40},
    ),
    "kv-memory": ("kv-memory", {"requests": 12, "rate": 30, "output": 24, "memory": "contiguous"}),
    "serving-latency": (
        "serving-latency",
        {"requests": 12, "rate": 30, "output": 24, "compare": ["static", "continuous"]},
    ),
    "batch-tradeoff": ("batch-tradeoff", {"max_batch": 16}),
    "bound-vs-calibrated": ("bound-vs-calibrated", {"max_batch": 16}),
    "format-bits": ("format-bits", {}),
    "attention-share": (
        "attention-share",
        {"models": ["llama-3.1-8b", "llama-3.1-70b"], "context": 2048, "max_context": 4096},
    ),
    "speculative-speedup": ("speculative-speedup", {"max_batch": 16, "acceptance": [0.6, 0.8]}),
    "prefix-caching-ttft": ("prefix-caching-ttft", {"rates": [4, 8], "requests": 40}),
    "quantization-speedup": ("quantization-speedup", {"max_batch": 16}),
    "quantization-speedup-kv": (
        "quantization-speedup",
        {"max_batch": 8, "recipes": ["bf16", "w4a16"], "kv_format": "fp8", "context": 8000},
    ),
    "attention-vs-weights": ("attention-vs-weights", {"max_context": 4096}),
    "expert-load": ("expert-load", {"max_batch": 64}),
    "memory-hierarchy": ("memory-hierarchy", {}),
    "gemm-efficiency": ("gemm-efficiency", {"max_tokens": 512}),
    "tensor-parallel-decode": ("tensor-parallel-decode", {"max_gpus": 8}),
    "pipeline-micro-batches": ("pipeline-micro-batches", {"stages": [2, 4], "max_micro_batches": 4}),
}


def test_prefix_caching_chart_puts_the_cached_run_below_at_every_rate() -> None:
    data = chart_data("prefix-caching-ttft", rates=[4, 8], requests=40)
    points = data.datasets["points"]
    off = {p["rate"]: p for p in points if p["series"] == "no prefix caching"}
    on = {p["rate"]: p for p in points if p["series"] == "prefix caching"}
    assert set(off) == set(on) == {4.0, 8.0}
    for rate in off:
        assert on[rate]["ttft_p90_ms"] < off[rate]["ttft_p90_ms"]
        assert off[rate]["hit_rate"] == 0.0
        assert on[rate]["hit_rate"] > 0.4  # the course workload: 2,048 of about 3,548 tokens per prompt hit
    with pytest.raises(ChartError, match="rates"):
        chart_data("prefix-caching-ttft", rates=[8, 4])


def test_attention_share_by_hand() -> None:
    # Llama-3.1-8B, one token attending 8,192 tokens: attention 4 x 32 layers x 32 heads x 128 x 8192 =
    # 4,294,967,296 FLOPs; weight products 2 x (1,342,177,280 attention + 5,637,144,576 MLP + 525,336,576
    # output layer) = 15,009,316,864. Share 4,294,967,296 / 19,304,284,160 = 22.25%.
    data = chart_data("attention-share", models=["llama-3.1-8b"], context=8192)
    (mark,) = data.datasets["marks"]
    assert mark["attention_gflop"] == pytest.approx(4.294967296)
    assert mark["weights_gflop"] == pytest.approx(15.009316864)
    assert mark["share_pct"] == pytest.approx(100 * 4_294_967_296 / 19_304_284_160)
    shares = [row["share_pct"] for row in data.datasets["lines"]]
    assert shares == sorted(shares), "attention's share grows with the context"


def test_expert_load_by_hand() -> None:
    # Mixtral 8x7B on 8 GPUs (one expert each), one token: it picks 2 experts, so 2 GPUs hold 1 touched
    # expert and 6 hold none: busiest 1, average 8 (1 - 6/8) / 8 = 0.25. Two tokens: each expert is missed
    # with P (6/8)^2 = 0.5625, so the average GPU touches 0.4375; the busiest 1 (each GPU holds one).
    data = chart_data("expert-load", model="mixtral-8x7b", gpus=8, max_batch=2)
    by = {(r["series"], r["batch"]): r["experts"] for r in data.datasets["points"]}
    assert by["busiest GPU", 1] == pytest.approx(1.0)
    assert by["average GPU", 1] == pytest.approx(0.25)
    assert by["average GPU", 2] == pytest.approx(0.4375)
    assert by["busiest GPU", 2] == pytest.approx(1.0)
    assert data.datasets["held"] == [{"experts": 1.0}]
    with pytest.raises(ChartError, match="dense"):
        chart_data("expert-load", model="dense-8b")


def test_attention_share_refuses_a_fourth_model() -> None:
    with pytest.raises(ChartError, match="one to 3 model presets"):
        chart_data("attention-share", models=["llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "qwen2.5-7b"])


@pytest.mark.parametrize("case", CASES)
def test_spec_matches_snapshot_and_compiles(case: str) -> None:
    name, params = CASES[case]
    spec = json.loads(json.dumps(build_chart(name, **params).spec))  # tuples -> lists, as stored
    path = SNAPSHOTS / f"{case}.json"
    if os.environ.get("RIDGEPOINT_UPDATE_SNAPSHOTS") or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(spec, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        if not os.environ.get("RIDGEPOINT_UPDATE_SNAPSHOTS"):
            pytest.fail(f"wrote missing snapshot {path.name}; review and commit it")
    assert spec == json.loads(path.read_text(encoding="utf-8")), (
        f"{case}: spec differs from {path}; if intended, rerun with RIDGEPOINT_UPDATE_SNAPSHOTS=1 and review"
    )
    vega = vl_convert.vegalite_to_vega(spec)  # the Vega-Lite compiler accepts it
    data_names = {entry["name"] for entry in vega["data"]}
    assert set(spec["datasets"]) <= data_names, "named datasets must survive, widgets update them by name"


def test_every_chart_has_a_snapshot_case() -> None:
    assert {name for name, _ in CASES.values()} == set(CHARTS)


@pytest.mark.parametrize("case", CASES)
def test_svg_renders_transparent_and_themeable(case: str, tmp_path: Path) -> None:
    name, params = CASES[case]
    data, rendered = render_course_chart(name, params, tmp_path)
    assert rendered.svg.startswith("<svg")
    assert 'fill="white"' not in rendered.svg.split(">", 2)[1], "background must be transparent"
    assert "currentColor" in rendered.svg, "text and axes follow the page's colour (light, dark, print)"
    assert "$schema" not in rendered.spec_json
    assert data.table_rows
    assert all(len(row) == len(data.table_columns) for row in data.table_rows)
    assert data.caption


def test_numbers_come_from_the_calculators() -> None:
    lesson = Scenario()
    roof = chart_data("roofline", batches=[1, 64])
    ops = {row["label"]: row for row in roof.datasets["operations"]}
    assert ops["prefill, 2,000 tokens"]["intensity"] == lesson.prefill(2000).intensity_flop_per_byte
    assert ops["decode, batch 64"]["intensity"] == lesson.decode(64).intensity_flop_per_byte
    assert roof.datasets["ridges"][0]["intensity"] == ridge_point("h100-sxm")

    curve = chart_data("prefill-vs-decode")
    marks = {round(row["prompt_tokens"]): row for row in curve.datasets["marks"]}
    assert marks[2000]["decode_steps"] == lesson.request(2000).prefill_cost_in_decode_steps
    assert marks[295]["prompt_tokens"] == lesson.prompt_tokens_per_decode_step()
    assert round(lesson.prompt_tokens_per_decode_step()) in {
        row["prompt_tokens"] for row in curve.datasets["curve"]
    }

    timeline = chart_data("request-timeline", output=8)
    timing = lesson.request(2000, 8)
    segments = timeline.datasets["segments"]
    assert len(segments) == 1 + timing.decode_steps
    assert segments[-1]["end_ms"] == pytest.approx(timing.total_time_s * 1e3, rel=1e-12)

    ridges = chart_data("ridge-points", precisions=["bf16", "fp8"])
    by_key = {(row["gpu"], row["precision"]): row["ridge"] for row in ridges.datasets["ridges"]}
    assert by_key[("H100 SXM5 80GB", "FP8")] == ridge_point("h100-sxm", "fp8")
    assert ("A100 SXM4 80GB", "FP8") not in by_key
    assert any("no FP8" in cell for row in ridges.table_rows for cell in row)


@pytest.mark.parametrize("case", CASES)
def test_each_variant_is_drawn_for_the_width_it_is_shown_at(case: str, tmp_path: Path) -> None:
    """The page never shrinks a chart below its drawn size where it shows it, so its text keeps its size.

    charts.css shows the wide drawing in boxes at least WIDE_WIDTH px wide and the narrow one below that;
    the narrow one fits a widget's chart box on a 390 px phone (316 px, measured), its text larger.
    """
    name, params = CASES[case]
    rendered = render_course_chart(name, params, tmp_path)[1]
    assert rendered.narrow is not None
    for svg, room in ((rendered.svg, WIDE_WIDTH), (rendered.narrow.svg, NARROW_WIDTH)):
        drawn = float(re.search(r'<svg[^>]* width="([\d.]+)"', svg).group(1))  # type: ignore[union-attr]
        assert room * 0.85 <= drawn <= room, f"{case}: drawn {drawn} px wide for a {room} px box"


def test_the_page_switches_variants_at_the_wide_drawings_width() -> None:
    site_assets = ROOT / "overrides" / "assets" / "ridgepoint"
    css = (site_assets / "charts.css").read_text(encoding="utf-8")
    script = (site_assets / "charts.js").read_text(encoding="utf-8")
    assert f"@container (max-width: {WIDE_WIDTH - 0.02}px)" in css
    assert f"const NARROW_BELOW_PX = {WIDE_WIDTH};" in script


def test_second_render_does_not_call_vl_convert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = vl_convert.vegalite_to_svg

    def counting(spec: Any, *args: Any, **kwargs: Any) -> str:
        calls.append(spec)
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(vl_convert, "vegalite_to_svg", counting)
    first = render_course_chart("roofline", {}, tmp_path)[1]
    again = render_course_chart("roofline", {}, tmp_path)[1]
    assert len(calls) == 2  # the wide drawing and its narrow variant
    assert again == first
    assert first.narrow is not None
    assert first.narrow.key != first.key
    render_course_chart("roofline", {"gpus": ["h200"]}, tmp_path)  # other inputs: a new render
    assert len(calls) == 4
    spec = build_chart("ridge-points").spec
    render_spec(spec, tmp_path)
    render_spec(spec, tmp_path)
    assert len(calls) == 5, "any Altair spec is cached by its content hash too"


@pytest.mark.parametrize(
    ("name", "params", "parameter", "expected"),
    [
        ("rooflin", {}, "name", "known charts: roofline, prefill-vs-decode, ridge-points, request-timeline"),
        ("roofline", {"gpu": "h100-sxm"}, "gpu", "did you mean 'gpus'?"),
        ("roofline", {"gpus": ["h100"]}, "gpus", "allowed: h100-sxm, h100-pcie"),
        (
            "roofline",
            {"gpus": ["a100-sxm-80gb"], "precision": "fp8"},
            "precision",
            "a100-sxm-80gb has no fp8",
        ),
        ("roofline", {"batches": [0]}, "batches", "a whole number from 1 to 4,096"),
        ("roofline", {"model": "llama-3.1-405b"}, "prompt", "does not fit"),
        ("prefill-vs-decode", {"prompt": 5000, "max_prompt": 1000}, "prompt", "beyond max_prompt"),
        ("request-timeline", {"output": 10_000}, "output", "from 1 to 512"),
        ("ridge-points", {"precisions": ["int3"]}, "precisions", "allowed: bf16, fp8"),
        ("latency-vs-rate", {"rates": [20, 10]}, "rates", "increasing order"),
        ("latency-vs-rate", {"tpot_slo": 120}, "tpot_slo", "0.05 is 50 ms"),
        ("goodput-vs-rate", {"link": "ethernet"}, "link", "allowed: nvlink3"),
        ("goodput-vs-rate", {"prefill_gpus": 2}, "prefill_gpus", "1 to 1 of its 2 GPUs"),
        ("goodput-vs-rate", {"schedulers": ["fifo"]}, "schedulers", "chunked"),
    ],
)
def test_bad_parameters_name_parameter_allowed_values_and_fix(
    name: str, params: dict[str, Any], parameter: str, expected: str
) -> None:
    with pytest.raises(ChartError) as caught:
        chart_data(name, **params)
    assert caught.value.parameter == parameter
    assert expected in str(caught.value)
    assert "Fix:" in str(caught.value)
    assert isinstance(caught.value, ValueError)


LESSON = """# A lesson

```chart
name: roofline
caption: Fine.
```

````markdown
```chart
name: not-checked-inside-an-example
```
````

```chart
name: prefill-vs-decode
caption: Bad.
max_prompt: -3
```

```chart
name: ridge-points
```

```chart
name: [unclosed
```
"""


def test_find_problems_reports_file_line_field_and_fix() -> None:
    problems = find_problems(LESSON, "inference/x.md")
    assert [(p.line, p.field) for p in problems] == [
        (17, "chart 'prefill-vs-decode' parameter 'max_prompt'"),  # the parameter's own line
        (20, "chart 'ridge-points' parameter 'caption'"),  # not written: the fence's line
        (25, "chart '?'"),  # where the YAML reader stopped
    ]
    assert all(p.file == "inference/x.md" and p.fix for p in problems)
    assert "from 1 to 1,048,576" in problems[0].message


@pytest.mark.parametrize(
    ("caption", "shown"),
    [
        ("From the [prefill vs decode](../serving/prefill-vs-decode.md) lesson.", "[prefill vs decode]("),
        ("Set by `peak_tflops`.", "`peak_tflops`"),
        ("The **flat** part is compute.", "**flat**"),
        ("Ridge <b>points</b>.", "<"),
    ],
)
def test_a_caption_with_markup_is_reported_at_its_line(caption: str, shown: str) -> None:
    """A caption is printed as text: a Markdown link reached readers with its brackets (memory wall)."""
    lesson = f"# A lesson\n\n```chart\nname: ridge-points\ncaption: {caption}\n```\n"
    [problem] = find_problems(lesson, "foundations/x.md")
    assert (problem.line, problem.field) == (5, "chart 'ridge-points' caption")
    assert shown in problem.message
    assert "link from the lesson's prose" in problem.fix


def test_a_caption_of_plain_words_is_not_reported() -> None:
    caption = "The H100's ridge (295 FLOP/byte) * 2 = 590; a_b_c."
    lesson = f"```chart\nname: ridge-points\ncaption: {caption}\n```\n"
    assert find_problems(lesson, "foundations/x.md") == []


def test_block_renders_figure_or_visible_error(tmp_path: Path) -> None:
    html = render_block("name: ridge-points\ncaption: Ridge <points> & more.\n", tmp_path)
    assert html.startswith('<figure class="rp-chart" data-rp-chart="ridge-points"')
    assert "<svg" in html
    assert "<figcaption" in html
    assert "Ridge &lt;points&gt; &amp; more." in html
    assert re.search(
        r"<details class=\"rp-chart__data\" data-search-exclude><summary>[^<]+</summary><table>", html
    )
    # The runtime's address and hash come from the build's runtime.json, never from the page.
    assert "data-rp-runtime" not in html
    assert "data-rp-integrity" not in html
    error = render_block("name: ridge-points\ncaption: x\ngpus: [nope]\n", tmp_path)
    assert "rp-chart-error" in error
    assert "parameter &#x27;gpus&#x27;" in error
    assert "<svg" not in error


def test_parse_block_normalises_caption() -> None:
    block = parse_block("name: roofline\ncaption: >\n  Two\n  lines.\ngpus: [h200]\n")
    assert (block.name, block.caption, block.params) == ("roofline", "Two lines.", {"gpus": ["h200"]})


def test_fence_works_in_plain_python_markdown(tmp_path: Path) -> None:
    import markdown

    md = markdown.Markdown(extensions=["course.charts.extension"], extension_configs={
        "course.charts.extension": {"cache_dir": str(tmp_path)}})  # fmt: skip
    html = md.convert("Text.\n\n```chart\nname: request-timeline\ncaption: One request.\n```\n")
    assert '<figure class="rp-chart" data-rp-chart="request-timeline"' in html
    assert list(tmp_path.glob("*.svg")), "rendered into the configured cache folder"


def test_tidy_svg_prefixes_ids_and_keeps_text() -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><clipPath id="clip1"><rect width="1.23456"/></clipPath>'
    svg += '<g clip-path="url(#clip1)" opacity="1"><text x="3.14159">0.86412</text></g></svg>'
    tidy = tidy_svg(svg, "rpab")
    assert 'id="rpab-clip1"' in tidy
    assert "url(#rpab-clip1)" in tidy
    assert 'width="1.23"' in tidy
    assert 'x="3.14"' in tidy
    assert ">0.86412<" in tidy
    assert 'opacity="1"' not in tidy


def test_tidy_svg_numbers_ids_by_the_drawing_not_by_what_the_process_drew_before() -> None:
    """vl-convert's id counter runs on through a process: the same chart came out as clip23 in one build and
    clip226 in another, so MkDocs and Zensical builds of one lesson differed."""

    def drawn(first: int, second: int) -> str:
        clips = "".join(f'<clipPath id="clip{n}"><rect/></clipPath>' for n in (first, second))
        return f'<svg>{clips}<g clip-path="url(#clip{first})"/><g clip-path="url(#clip{second})"/></svg>'

    assert tidy_svg(drawn(23, 24), "rpab") == tidy_svg(drawn(226, 2), "rpab")
    tidy = tidy_svg(drawn(226, 2), "rpab")
    assert 'id="rpab-clip1"' in tidy
    assert tidy.index('id="rpab-clip1"') < tidy.index('id="rpab-clip2"')
    assert tidy.count("url(#rpab-clip2)") == 1


def test_marks_drawn_fully_transparent_are_left_out_of_the_static_drawing() -> None:
    svg = (
        '<svg><path transform="translate(1,2)" d="M0,0" stroke="#4c78a8" opacity="0"/>'  # a hover target
        '<path d="M1,1" fill-opacity="0" stroke="#000"/><path d="M2,2" fill="#000" opacity="0.5"/>'
        '<text x="1" opacity="0">overlapping label</text><text x="2">shown</text></svg>'
    )
    assert tidy_svg(svg, "rpab") == (
        '<svg><path d="M1,1" fill-opacity="0" stroke="#000"/><path d="M2,2" fill="#000" opacity="0.5"/>'
        '<text x="2">shown</text></svg>'
    )


def _rect(x: int, fill: str, extra: str = "") -> str:
    return f'<path d="M{x},2h3v4h-3Z" fill="{fill}"{extra}/>'


def test_sibling_rectangles_of_one_fill_become_one_path_in_their_order() -> None:
    purple, orange = "#7b61d1", "#e8710a"
    svg = "<g>" + _rect(1, purple) + _rect(5, purple) + _rect(9, orange) + _rect(13, purple) + "</g>"
    assert merged_rects(svg) == (
        '<g><path d="M1,2h3v4h-3ZM5,2h3v4h-3Z" fill="#7b61d1"/><path d="M9,2h3v4h-3Z" fill="#e8710a"/>'
        '<path d="M13,2h3v4h-3Z" fill="#7b61d1"/></g>'  # a later run of purple stays after the orange
    )


@pytest.mark.parametrize(
    "other",
    [
        _rect(5, "#7b61d1", ' opacity="0.7"'),  # overlaps would darken: drawn one by one
        _rect(5, "#7b61d1", ' stroke="#8c8c8c"'),
        '<path class="background" d="M5,2h3v4h-3Z" fill="#7b61d1"/>',
        '<path d="M5,2h-3v4h3Z" fill="#7b61d1"/>',  # traced the other way round: a union would leave a hole
        '<path d="M5,2h3v4h-2Z" fill="#7b61d1"/>',  # not a rectangle
        '<path d="M5,2h3v4h-3Z" fill="currentColor"/>',
    ],
)
def test_anything_but_a_plain_rectangle_of_the_same_fill_is_left_as_drawn(other: str) -> None:
    svg = "<g>" + _rect(1, "#7b61d1") + other + "</g>"
    assert merged_rects(svg) == svg


def test_a_serving_timeline_draws_its_steps_as_a_few_paths(tmp_path: Path) -> None:
    """The batching lesson's timeline drew 629 rect elements; the page now carries one path per colour run."""
    data, rendered = render_course_chart("serving-timeline", {}, tmp_path)
    steps = sum(len(rows) for rows in data.datasets.values())
    paths = rendered.svg.count("<path")
    assert steps > 100
    assert paths < steps / 5


# Both drawings as images on white, at twice their size: how many pixels differ, and by how much at most.
_PIXEL_DIFFERENCE = """async ([first, second]) => {
  const load = (svg) => new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = reject;
    image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg);
  });
  const pixels = (image) => {
    const canvas = document.createElement("canvas");
    canvas.width = image.width * 2;
    canvas.height = image.height * 2;
    const context = canvas.getContext("2d");
    context.fillStyle = "#fff";
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(image, 0, 0, canvas.width, canvas.height);
    return context.getImageData(0, 0, canvas.width, canvas.height).data;
  };
  const [a, b] = (await Promise.all([load(first), load(second)])).map(pixels);
  let differing = 0, largest = 0;
  for (let i = 0; i < a.length; i += 4) {
    const d = Math.max(Math.abs(a[i] - b[i]), Math.abs(a[i + 1] - b[i + 1]), Math.abs(a[i + 2] - b[i + 2]));
    if (d) differing += 1;
    largest = Math.max(largest, d);
  }
  return { pixels: a.length / 4, differing, largest };
}"""


def _drawn_both_ways(
    chart: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str, skipped: object
) -> tuple[str, str]:
    """A course chart's tidied drawing with ``calculators.charts.render``'s ``step`` and with it replaced by
    ``skipped`` (a step that does nothing): (with the step, without it)."""
    import vl_convert

    from calculators.charts import render
    from calculators.charts.specs import course_spec

    data, _ = render_course_chart(chart, {}, tmp_path)
    drawn = vl_convert.vegalite_to_svg(course_spec(data, narrow=False))
    done = tidy_svg(drawn, "rpab")
    monkeypatch.setattr(render, step, skipped)
    return done, tidy_svg(drawn, "rpab")


def _pixel_difference(browser: Any, first: str, second: str) -> dict[str, int]:
    page = browser.new_page()
    try:
        page.set_content("<body></body>")
        return dict(page.evaluate(_PIXEL_DIFFERENCE, [first, second]))
    finally:
        page.close()


@pytest.mark.browser
def test_merged_rectangles_draw_the_same_picture(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chart drawn one element per rectangle and with the merged paths, in Chromium. Only the seams go:
    two rectangles drawn apart each half-cover the pixels along their shared edge, and the page showed
    through (measured: 0.45% of the timeline's pixels, by at most 50 of 255). A rectangle lost or added
    would change hundreds of pixels by far more."""
    merged, one_by_one = _drawn_both_ways(
        "serving-timeline", tmp_path, monkeypatch, "merged_rects", lambda svg: svg
    )
    assert merged.count("<path") < one_by_one.count("<path")
    difference = _pixel_difference(browser, one_by_one, merged)
    assert difference["largest"] <= 64
    assert difference["differing"] < 0.01 * difference["pixels"]


@pytest.mark.browser
def test_leaving_out_transparent_marks_changes_no_pixel(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GEMM-efficiency chart carries 504 transparent hover points: without them, the same picture."""
    # A pattern that matches nothing: every mark kept.
    lean, full = _drawn_both_ways("gemm-efficiency", tmp_path, monkeypatch, "_INVISIBLE", re.compile(r"(?!)"))
    assert lean.count("<path") < full.count("<path") - 100
    assert _pixel_difference(browser, full, lean)["differing"] == 0


def test_any_altair_chart_becomes_chart_markup(tmp_path: Path) -> None:
    rows = [{"gpu": "A", "ridge": 153.0}, {"gpu": "B", "ridge": 295.3}]
    chart = (
        alt.Chart(alt.Data(values=rows)).mark_bar().encode(x="ridge:Q", y="gpu:N").properties(title="Ridges")
    )
    html = altair_chart_html(chart, cache_dir=tmp_path)
    assert '<figcaption class="rp-chart__caption">Ridges</figcaption>' in html
    assert "<th>gpu</th><th>ridge</th>" in html
    assert "<td>295.3</td>" in html
    inline = re.search(r'<script type="application/json" class="rp-chart__spec">(.*?)</script>', html, re.S)
    assert inline
    assert json.loads(inline.group(1).replace("<\\/", "</"))["mark"]["type"] == "bar"


def test_inline_spec_cannot_close_its_script(tmp_path: Path) -> None:
    chart = alt.Chart(alt.Data(values=[{"a": "</script><b>"}])).mark_point().encode(x="a:N")
    html = altair_chart_html(chart, caption="x", cache_dir=tmp_path)
    spec_part = html.split('class="rp-chart__spec">', 1)[1]
    assert spec_part.index("</script>") == len(spec_part) - len("</script></figure>")


def test_runtime_is_verified_against_the_pin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    content = chart_assets.runtime_bytes(tmp_path)
    pin = chart_assets.runtime_pin()
    assert hashlib.sha256(content).hexdigest() == pin.sha256
    assert len(content) == pin.size
    cached = tmp_path / chart_assets.RUNTIME_FOLDER / pin.file
    cached.write_bytes(b"tampered")
    assert chart_assets.runtime_bytes(tmp_path) == content, "a tampered cache entry is replaced"
    cached.unlink()
    monkeypatch.setattr(chart_assets, "runtime_pin", lambda: chart_assets.RuntimePin(
        pin.file, "0" * 64, pin.size, "0.0", {}))  # fmt: skip
    with pytest.raises(chart_assets.RuntimeMismatch, match=r"Fix: .*--pin"):
        chart_assets.runtime_bytes(tmp_path)


def test_copy_into_ships_runtime_and_referenced_specs_only(tmp_path: Path) -> None:
    cache, site = tmp_path / "cache", tmp_path / "site"
    used = render_course_chart("ridge-points", {}, cache)[1]
    unused = render_course_chart("request-timeline", {}, cache)[1]
    page = site / "lesson" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(figure_html(used, caption="c", columns=["a"], rows=[["1"]]), encoding="utf-8")
    written = chart_assets.copy_into(site, cache)
    folder = site / chart_assets.SITE_FOLDER
    assert (folder / chart_assets.runtime_pin().site_path) in written
    served = json.loads((folder / "charts" / f"{used.key}.json").read_text())
    # The site serves the spec compiled to Vega (the browser runs no Vega-Lite compiler); widgets replace rows
    # by the Vega-Lite spec's dataset names, so each must name a dataset of the compiled spec.
    assert "marks" in served
    assert "$schema" not in served
    assert set(json.loads(used.spec_json)["datasets"]) <= {data["name"] for data in served["data"]}
    assert not (folder / "charts" / f"{unused.key}.json").exists()
    # The wide drawing, which the page holds by its SHA-256 only, is shipped under that name.
    digest = hashlib.sha256(used.svg.encode()).hexdigest()
    assert (folder / "charts" / f"{digest}.svg").read_text(encoding="utf-8") == used.svg
    assert sorted(p.name for p in (folder / "charts").glob("*.svg")) == [f"{digest}.svg"]
    (cache / f"{used.key}.svg").write_text(used.svg.replace("<g", "<g class='x'", 1), encoding="utf-8")
    with pytest.raises(RuntimeError, match=f"not the drawing the pages were built with.*{digest}"):
        chart_assets.copy_into(site, cache)
    (cache / f"{used.key}.vl.json").unlink()
    with pytest.raises(FileNotFoundError, match=used.key):
        chart_assets.copy_into(site, cache)


def test_a_figure_with_its_spec_inline_needs_no_spec_file(tmp_path: Path) -> None:
    # Notebook pages come from mkdocs-jupyter's own cache, which can outlive an emptied chart cache.
    cache, site = tmp_path / "cache", tmp_path / "site"
    rendered = render_course_chart("ridge-points", {}, cache)[1]
    page = site / "notebook" / "index.html"
    page.parent.mkdir(parents=True)
    markup = figure_html(rendered, caption="c", columns=["a"], rows=[["1"]], inline_spec=True)
    page.write_text(markup, encoding="utf-8")
    (cache / f"{rendered.key}.vl.json").unlink()
    written = chart_assets.copy_into(site, cache)
    assert not [path.name for path in written if path.suffix == ".json"]


def test_palette_gives_every_gpu_and_phase_its_own_readable_colour() -> None:
    """One colour per GPU preset, phase, precision, scheduler, memory state, attention layout, tensor-parallel
    part and ramp step, none shared (but the neutral grey of free memory), each >= 3:1 on white and on dark
    slate."""
    assert set(GPU_COLOURS) == set(GPUS)
    assert set(SCHEDULER_COLOURS) == set(SCHEDULERS)
    assert set(ATTENTION_COLOURS) == {kind.upper() for kind in ATTENTION_KINDS}
    assert MEMORY_COLOURS["free"] == NEUTRAL
    assert set(RECIPE_COLOURS) == {recipe.name for recipe in RECIPES.values()}
    for recipe in RECIPES.values():
        if not recipe.weight_only:  # a recipe computing in a format is drawn in that format's colour
            assert RECIPE_COLOURS[recipe.name] == PRECISION_COLOURS[recipe.arithmetic_format[:4].upper()]
    colours = [
        *GPU_COLOURS.values(),
        *PHASE_COLOURS.values(),
        *PRECISION_COLOURS.values(),
        RECIPE_COLOURS["W4A16"],  # the other recipes take their arithmetic format's colour
        RECIPE_COLOURS["W8A16"],
        *FORMAT_PART_COLOURS.values(),
        *SCHEDULER_COLOURS.values(),
        *(colour for state, colour in MEMORY_COLOURS.items() if state != "free"),
        *ATTENTION_COLOURS.values(),
        *TENSOR_PARALLEL_COLOURS.values(),
        *SEQUENTIAL_COLOURS,
        *EXPERT_LOAD_COLOURS.values(),
        NEUTRAL,
    ]
    assert len(set(colours)) == len(colours)
    for colour in colours:
        assert contrast(colour, LIGHT_BACKGROUND) >= 3, colour
        assert contrast(colour, DARK_BACKGROUND) >= 3, colour
    assert contrast("#ffffff", "#000000") == pytest.approx(21)  # the WCAG formula, checked at its ends


def test_ordered_series_take_the_ramp_from_its_light_end_to_its_dark_end() -> None:
    assert sequential_colours(1) == (SEQUENTIAL_COLOURS[-1],)
    assert sequential_colours(2) == (SEQUENTIAL_COLOURS[0], SEQUENTIAL_COLOURS[-1])
    assert sequential_colours(3) == SEQUENTIAL_COLOURS
    with pytest.raises(ValueError, match="show fewer series"):
        sequential_colours(4)


# Series that genuinely are a phase, so drawn in its colour: the phase itself, a step doing it, its latency
# (TTFT waits for the prefill, TPOT is a decode step), a prefill's cost or a decode step's with the KV cache.
PHASE_SERIES = {
    "prefill": re.compile(r"^(prefill|prefilling|TTFT p\d+|with attention over the prompt)$"),
    "decode": re.compile(r"^(decode|decoding|TPOT p\d+|with the KV cache of [\d,]+ tokens)$"),
}
COLOUR_CHANNELS = ("color", "fill", "stroke")


def _series_colours(spec: Any, datasets: dict[str, list[dict[str, Any]]]) -> list[tuple[str, str]]:
    """Every (series, colour) pair a spec draws; fails on a colour channel left to a category scheme."""
    pairs: list[tuple[str, str]] = []
    if isinstance(spec, list):
        for item in spec:
            pairs += _series_colours(item, datasets)
    if not isinstance(spec, dict):
        return pairs
    for key, value in spec.items():
        if key != "encoding":
            pairs += _series_colours(value, datasets)
            continue
        for channel in COLOUR_CHANNELS:
            encoding = value.get(channel)
            if not isinstance(encoding, dict) or "field" not in encoding:
                continue
            field, scale = encoding["field"], encoding.get("scale", {})
            colours = scale.get("range")
            if colours == {"field": "colour"}:  # the rows carry their colours
                assert encoding.get("sort") == "ascending", f"{field}: a field range needs a sorted domain"
                pairs += [
                    (row[field], row["colour"]) for rows in datasets.values() for row in rows if field in row
                ]
            else:
                scheme = f"colour of {field!r} left to a category scheme: give it a palette scale by name"
                assert isinstance(colours, list), scheme
                assert "domain" in scale, scheme
                pairs += list(zip(scale["domain"], colours, strict=True))
    return pairs


COLOUR_CASES = {
    **CASES,
    "serving-latency-all": ("serving-latency", {"requests": 8, "output": 8, "compare": list(SCHEDULERS)}),
    "goodput-vs-rate-all": ("goodput-vs-rate", {"rates": [20], "schedulers": ["chunked", "disaggregated"]}),
    "kv-cache-mha": ("kv-cache", {"compare_mha": True}),
}


@pytest.mark.parametrize("case", COLOUR_CASES)
def test_every_series_has_its_palette_colour_and_none_borrows_a_gpus_or_a_phases(case: str) -> None:
    """No chart leaves a series to Vega's category scheme (whose blue and orange read as "H100" and
    "prefill"); a GPU's colour marks that GPU only, a phase's that phase only."""
    name, params = COLOUR_CASES[case]
    for narrow in (False, True):
        built = build_chart(name, narrow=narrow, **params)
        pairs = set(_series_colours(built.spec, dict(built.data.datasets)))
        for series, colour in pairs:
            if colour in GPU_COLOURS.values():
                gpu = next(key for key, value in GPU_COLOURS.items() if value == colour)
                assert str(series).startswith(short_gpu_name(gpu)), f"{case}: {series!r} in {gpu}'s colour"
            for phase, pattern in PHASE_SERIES.items():
                if colour == PHASE_COLOURS[phase]:
                    assert pattern.match(str(series)), f"{case}: {series!r} in the {phase} colour"
        by_series: dict[str, set[str]] = {}
        for series, colour in pairs:
            by_series.setdefault(series, set()).add(colour)
        assert {s: c for s, c in by_series.items() if len(c) > 1} == {}, f"{case}: a series in two colours"


def test_notebook_charts_colour_their_series_from_the_palette() -> None:
    """A notebook's own chart names a palette scale for every colour channel and writes no colour itself."""
    for path in sorted((ROOT / "docs").glob("**/notebooks/*.py")):
        text = path.read_text(encoding="utf-8")
        for line in text.splitlines():
            if re.search(r"alt\.(Color|Fill|Stroke)\(", line):
                assert "scale=" in line, f"{path.name}: colour left to a category scheme: {line.strip()}"
        assert not re.search(r"#[0-9a-fA-F]{6}\b", text), f"{path.name}: import colours from the palette"


def test_each_roofline_row_carries_its_gpus_colour_whatever_the_order() -> None:
    for gpus in (["h100-sxm", "a100-sxm-80gb"], ["a100-sxm-80gb", "h100-sxm"]):
        rows = build_chart("roofline", gpus=gpus).data.datasets["rooflines"]
        assert {(row["gpu"], row["colour"]) for row in rows} == {
            ("H100 SXM5 80GB", GPU_COLOURS["h100-sxm"]),
            ("A100 SXM4 80GB", GPU_COLOURS["a100-sxm-80gb"]),
        }


def test_kv_cache_lines_stay_put_while_the_chosen_context_moves() -> None:
    """A widget's context slider changes the marks only: the lines' rows, which the live chart keeps, stay."""
    before = chart_data("kv-cache", context=2_000, max_context=16_384)
    after = chart_data("kv-cache", context=3_000, max_context=16_384)
    assert after.datasets["lines"] == before.datasets["lines"]
    assert after.datasets["budget"] == before.datasets["budget"]
    assert {row["context"] for row in after.datasets["marks"]} == {3_000}
    # each mark still sits on its line: with no window the cache grows linearly with the context
    for mark in after.datasets["marks"]:
        line = [row for row in after.datasets["lines"] if row["series"] == mark["series"]]
        point = max((row for row in line if row["context"] <= 3_000), key=lambda row: row["context"])
        assert mark["gb"] == pytest.approx(point["gb"] * 3_000 / point["context"], rel=1e-12)


def test_kv_cache_every_line_reaches_its_mark() -> None:
    """A line cut at the top of the axis still reaches its marked point: none floats above its line's end.

    Llama-3.1 8B at 65,536 tokens, batch 64: with GQA 64 x 65,536 x 131,072 bytes = 549.8 GB; its multi-head
    twin keeps 4x the heads, 2,199.0 GB, above the GQA line's top (1,099.5 GB at 131,072 tokens) and far
    above twice the memory left (115.6 GB): that line ends on its mark, once.
    """
    data = chart_data("kv-cache", context=65_536, max_context=131_072)
    assert [round(mark["gb"], 1) for mark in data.datasets["marks"]] == [549.8, 2_199.0]
    for mark in data.datasets["marks"]:
        line = [row for row in data.datasets["lines"] if row["series"] == mark["series"]]
        assert max(row["gb"] for row in line) >= mark["gb"]
        assert len({row["context"] for row in line}) == len(line)  # no point drawn twice
    mha = [row for row in data.datasets["lines"] if "multi-head" in row["series"]]
    assert (mha[-1]["context"], mha[-1]["gb"]) == (65_536, data.datasets["marks"][1]["gb"])


def test_kv_cache_line_bends_where_a_sliding_window_caps_the_cache() -> None:
    """Mistral-7B v0.1 keeps at most 4,096 tokens: its line rises to 4,096, then is flat, whatever the step.

    Per token: 2 (key, value) x 32 layers x 8 KV heads x 128 dims x 2 bytes (BF16) = 131,072 bytes; a batch
    of 64 at the window: 64 x 4,096 x 131,072 = 34,359,738,368 bytes = 34.36 GB. The grid's step here is
    262,144 / 32 = 8,192 tokens, so without a point at the window the line would rise straight to 8,192.
    """
    data = chart_data("kv-cache", model="mistral-7b", batch=64, context=100_000, max_context=262_144)
    own = data.datasets["marks"][0]["series"]
    points = {row["context"]: row["gb"] for row in data.datasets["lines"] if row["series"] == own}
    assert points[4_096] == pytest.approx(34.359738368, rel=1e-12)
    assert points[8_192] == points[262_144] == points[4_096]
    assert max(points) == 262_144
    assert data.datasets["marks"][0]["gb"] == points[4_096]


def test_prefill_chart_with_attention_marks_where_attention_takes_over() -> None:
    """Attention FLOPs grow with P squared; the chart marks the first prompt where they pass the weights."""
    data = chart_data("prefill-vs-decode", kv_traffic=True)
    [crossing] = [row for row in data.datasets["marks"] if "attention" in row["label"]]
    scenario = Scenario(kv_traffic=True)
    at, before = scenario.prefill(crossing["prompt_tokens"]), scenario.prefill(crossing["prompt_tokens"] - 1)
    assert at.attention_flops > at.matmul_flops
    assert before.attention_flops <= before.matmul_flops
    series = {row["series"] for row in data.datasets["curve"]}
    assert series == {"with attention over the prompt", "weights only (attention left out)"}
    # at 100k tokens the attention curve is well above the straight line (review: 4.2 s, not 1.6 s)
    longest = [row for row in data.datasets["curve"] if row["prompt_tokens"] == 100_000]
    with_attention = next(r for r in longest if r["series"].startswith("with"))
    without = next(r for r in longest if r["series"].startswith("weights"))
    assert with_attention["prefill_ms"] > 2.5 * without["prefill_ms"]


def test_attention_chart_has_each_context_once_and_ends_at_the_longest() -> None:
    """131,072 = 256 x 2^9 is reached by the quarter-doublings themselves: it was drawn and tabled twice."""
    data = chart_data("attention-vs-weights", batch=8)
    per_line = [row["context"] for row in data.datasets["lines"]
                if (row["phase"], row["part"]) == ("decode", "attention")]  # fmt: skip
    assert len(per_line) == len(set(per_line))
    assert per_line[-1] == 131072
    assert len(data.table_rows) == len({row[:3] for row in data.table_rows})


def test_attention_chart_marks_where_attention_passes_the_weights_in_each_phase() -> None:
    """Per token, attention grows with the context and the weights' time does not: each phase's mark sits
    where the calculators say attention takes over, and the lines agree with it on either side."""
    data = chart_data("attention-vs-weights", batch=8)
    scenario = Scenario("llama-3.1-8b", level="refined", ignore_memory=True)
    marks = {row["phase"]: row["context"] for row in data.datasets["marks"]}
    assert marks == {
        "prefill": scenario.attention_takes_over("prefill"),
        "decode": scenario.attention_takes_over("decode", 8),
    }
    for phase, crossing in marks.items():
        by_context: dict[int, dict[str, float]] = {}
        for row in data.datasets["lines"]:
            if row["phase"] == phase:
                by_context.setdefault(row["context"], {})[row["part"]] = row["us_per_token"]
        for context, parts in by_context.items():
            if context >= 1024:  # past the fixed costs of very short passes
                passed = parts["attention"] > parts["weight products"]
                assert passed == (context >= crossing), (phase, context)
