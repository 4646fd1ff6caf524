"""The reference for lesson authors: generated from the code, complete, and its block checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from calculators.charts import CHARTS
from calculators.hardware import GPUS
from calculators.models import MODELS
from calculators.setting import COURSE_SETTING, using
from calculators.units import format_value
from course.author_reference.sections import (
    NOT_QUANTITIES,
    QUANTITY_SOURCES,
    SECTIONS,
    quantities,
    section_markdown,
)


def test_reference_lists_every_preset_chart_parameter_and_unit() -> None:
    presets = section_markdown("gpu-presets") + section_markdown("model-presets")
    for key in [*GPUS, *MODELS]:
        assert f"| `{key}` |" in presets
        assert f"- `{key}`: " in presets  # its source
    charts = section_markdown("charts")
    for kind in CHARTS.values():
        assert f"### `{kind.name}`" in charts
        for param in kind.params:
            assert f"| `{param.name}` |" in charts


def test_reference_quantities_follow_the_code_and_evaluate() -> None:
    from calculators.scenario import Scenario

    names = {q.name for q in quantities(Scenario, "Scenario()")}
    public = {n for n in vars(Scenario) if not n.startswith("_")}
    assert names == public - NOT_QUANTITIES  # step takes lists, which an expression cannot write
    timing = {q.name: q for q in quantities(*QUANTITY_SOURCES["request-timing"])}
    assert timing["time_to_first_token_s"].insertion == (
        "{{ Scenario().request(2000, 256).time_to_first_token_s | ms }}"
    )
    # The "today" column is what the insertion prints in a lesson: the course's setting (calibrated, KV
    # reads), not the calculators' own spec-peak default (which gives 32.3 ms for this request).
    with using(COURSE_SETTING):
        expected = Scenario().request(2000, 256).time_to_first_token_s
    assert timing["time_to_first_token_s"].shown == format_value(expected, "ms") != "32.3 ms"
    for name in SECTIONS:
        assert section_markdown(name).strip()


def test_reference_block_reports_an_unknown_section_with_its_line() -> None:
    from course.author_reference.extension import find_problems

    problems = find_problems("# Page\n\n```reference\nsection: gpus\n```\n", "contributing/reference.md")
    assert [(p.line, p.field) for p in problems] == [(3, "reference block")]
    assert "unknown section 'gpus'" in problems[0].message


@pytest.mark.site
def test_built_reference_page_lists_every_preset_and_every_chart(built_site: Path) -> None:
    page = (built_site / "contributing" / "reference" / "index.html").read_text(encoding="utf-8")
    for key in [*GPUS, *MODELS, *CHARTS]:
        assert f"<code>{key}</code>" in page
    assert "989 TFLOP/s" in page  # values are computed, not typed


def test_a_section_is_written_once_per_model_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from calculators import setting

    calls: list[object] = []

    def probe() -> str:
        calls.append(setting.active_setting())
        return f"written in {setting.site_setting()}\n"

    monkeypatch.setitem(SECTIONS, "probe-section", probe)
    first = section_markdown("probe-section")
    assert section_markdown("probe-section") == first  # the page's check and its rendering share one writing
    assert len(calls) == 1
    monkeypatch.setattr(setting, "SITE_SETTING", None)  # another setting (a test's): written again for it
    assert section_markdown("probe-section") != first
    assert len(calls) == 2


def test_example_numbers_are_kept_for_the_next_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference's examples go through the figures' cache: a stored number is read back, not computed
    (the speculative break-even example runs the simulator), and a whole number comes back an int even where
    a lesson's figure of the same expression is stored (as a float)."""
    from calculators.setting import setting_key, site_setting
    from course.author_reference import sections
    from course.numbers.value_cache import computed_number, value_cache

    monkeypatch.setenv("RIDGEPOINT_NUMBER_CACHE", str(tmp_path))
    expression = "Scenario().decode().time_s"
    computed = sections._example_value(expression)
    assert isinstance(computed, float)
    key = f"{setting_key(site_setting())} reference float {expression}"
    assert value_cache().get(key) == computed  # stored
    value_cache().put(key, 123.0)
    assert sections._example_value(expression) == 123.0  # read back, not computed again
    assert sections._example_value('gpu("h100-sxm").name') == "NVIDIA H100 SXM5 80GB"  # not a number
    whole = 'model("llama-3.1-8b").layers'
    computed_number.cache_clear()
    assert computed_number(whole) == 32.0  # a lesson's figure: stored as a float
    for _ in range(2):  # computed, then read back
        value = sections._example_value(whole)
        assert type(value) is int
        assert value == 32
