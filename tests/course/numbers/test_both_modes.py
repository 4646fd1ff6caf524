"""The course's one model setting, figures with their spec-peak bound, comparative claims checked in both
modes, and what-ifs that the text must name (calculators.setting, course.numbers.comparisons, .departures)."""

from __future__ import annotations

import markdown
import pytest

from calculators import Scenario, format_value, setting
from calculators.browser import compute
from calculators.setting import COURSE_SETTING, SPEC_PEAK, active_setting, using
from calculators.simulator.experiments import chunk_step_s
from calculators.simulator.named import served
from course.numbers.comparisons import parse_comparison
from course.numbers.departures import departures, unnamed_departure
from course.numbers.extension import find_problems, parse_number


@pytest.fixture
def course_site(monkeypatch: pytest.MonkeyPatch) -> None:
    """The site computing under the course's setting (the switch of calculators.setting.SITE_SETTING)."""
    monkeypatch.setattr(setting, "SITE_SETTING", COURSE_SETTING)


def test_the_course_setting_fills_only_what_an_expression_leaves_unsaid() -> None:
    plain = Scenario().setup
    assert active_setting() is None
    assert (plain.mode, plain.kv_traffic) == ("peak", False)  # the calculators' own defaults, outside a build
    with using(COURSE_SETTING):
        course = Scenario().setup
        pinned = Scenario(mode="peak", kv_traffic=False).setup
        tuned = Scenario(compute_efficiency=0.7).setup  # the calibrated mode would refuse it: stays at peaks
        sized = Scenario("dense-8b").setup
    assert (course.mode, course.calibration, course.kv_traffic) == ("calibrated", "current", True)
    assert (pinned.mode, pinned.kv_traffic) == ("peak", False)
    assert (tuned.mode, tuned.kv_traffic) == ("peak", True)
    assert sized.kv_traffic is True
    assert active_setting() is None


def test_cached_experiments_and_runs_are_kept_per_setting() -> None:
    with using(SPEC_PEAK):
        peak_step = chunk_step_s(16, 512)
        peak_run = served("course", rate=5, scheduler="chunked", requests=40)
    with using(COURSE_SETTING):
        course_step = chunk_step_s(16, 512)
        course_run = served("course", rate=5, scheduler="chunked", requests=40)
    assert course_step > peak_step  # the calibrated step, not the spec-peak one served again from the cache
    assert course_run.tpot_s.p50 > peak_run.tpot_s.p50
    assert course_run.result.summary["tpot_s"]["p50"] == course_run.tpot_s.p50


@pytest.mark.usefixtures("course_site")
def test_a_figure_can_print_its_spec_peak_bound_beside_it() -> None:
    html = markdown.markdown(
        'A step takes {{ "about 6.5 ms" == Scenario().decode().time_s | ms | within 10% | bound }}.',
        extensions=["course.numbers.extension"],
    )
    with using(SPEC_PEAK):
        bound = Scenario().decode().time_s * 1e3
    assert f">about 6.5 ms (bound {bound:.3g} ms)</span>" in html
    assert parse_number("x | ms | .1f | bound").bound


def test_a_figure_that_is_its_own_bound_is_printed_once() -> None:
    html = markdown.markdown(
        'At spec peaks, {{ Scenario(mode="peak", kv_traffic=True).decode().time_s | ms | .2f | bound }}.',
        extensions=["course.numbers.extension"],
    )
    assert ">4.78 ms</span>" in html


def test_a_comparison_must_hold_in_both_modes_and_names_both_values() -> None:
    holds = '{{ "longer" holds Scenario().prefill(2000).time_s > Scenario().decode().time_s }}'
    assert find_problems(f"A prefill is {holds}.", "x.md") == []
    # 6 ms lies between the spec-peak step (4.78 ms) and the calibrated one (6.68 ms): true in one mode only.
    one_mode = '{{ "over 6 ms" holds Scenario().decode().time_s > 0.006 }}'
    [problem] = find_problems(f"A step takes {one_mode}.", "docs/x.md")
    assert problem.field == 'claim "over 6 ms"'
    assert "holds calibrated but not in every mode" in problem.message
    assert "calibrated: 0.006677 vs 0.006 (holds)" in problem.message
    assert "spec peak: 0.004776 vs 0.006 (fails)" in problem.message
    html = markdown.markdown(f"A prefill is {holds}.", extensions=["course.numbers.extension"])
    assert '<span class="rp-comparison" data-expr=' in html
    assert ">longer</span>" in html
    assert "Checked in both modes" in html
    malformed = find_problems('{{ "x" holds Scenario().decode().time_s }}', "x.md")
    assert "one comparison" in malformed[0].message
    assert parse_comparison('"a" holds 1 < 2').symbol == "<"


@pytest.mark.usefixtures("course_site")
def test_a_what_if_must_be_named_in_the_sentence_that_quotes_it() -> None:
    assert departures('Scenario(mode="peak", kv_traffic=False).decode().time_s') == [
        "no KV reads",
        "spec peaks",
    ]
    assert departures('Scenario(mode="calibrated", kv_traffic=True).decode().time_s') == []
    assert departures('Scenario(mode=\\"peak\\").decode().time_s') == ["spec peaks"]  # quiz text escapes
    figure = "{{ Scenario(kv_traffic=False).decode(64, 2000).time_s | ms }}"
    assert unnamed_departure(figure, f"The step takes {figure}.") is not None
    assert unnamed_departure(figure, f"With the KV reads left out, it takes {figure}.") is None
    # The expression's own words do not count: `mode="peak"` is not a sentence saying "at spec peaks".
    peak = '{{ Scenario(mode="peak").decode().time_s | ms }}'
    [problem] = find_problems(f"A step takes {peak}.", "x.md")
    assert "what-if (spec peaks)" in problem.message
    assert find_problems(f"At spec-sheet peaks a step takes {peak}.", "x.md") == []


def test_the_site_computes_in_the_course_setting() -> None:
    """The switch is thrown (issue 26): every figure of the site is the calibrated estimate with the KV-cache
    reads counted, widgets included, and a what-if must be named. Fails if SITE_SETTING goes back to None."""
    assert setting.SITE_SETTING is COURSE_SETTING
    html = markdown.markdown(
        "A step takes {{ Scenario().decode().time_s | ms }}.", extensions=["course.numbers.extension"]
    )
    with using(COURSE_SETTING):
        calibrated = Scenario().decode().time_s  # 6.68 ms; the spec-peak bound is 16 GB / 3.35 TB/s = 4.78 ms
    assert f">{format_value(calibrated, 'ms')}</span>" in html
    assert ">4.78 ms</span>" not in html
    widget = compute("prefill-decode", {})
    assert widget["state"]["kv"] is True  # the widget's switch starts from the setting's KV reads
    assert widget["values"]["decode_step_time_s"] > 1.3 * Scenario().decode(1, 2001).time_s  # not the bound
    assert unnamed_departure('{{ Scenario(mode="peak").decode().time_s | ms }}', "A step.") is not None


def test_a_takeaway_that_holds_in_one_mode_only_fails_the_lesson_check_at_its_line() -> None:
    from course.lesson_format.validation import block_validators, validate_page

    lesson = (
        "---\n"
        "title: T\n"
        "summary: One line.\n"
        "takeaways:\n"
        '  - A decode step {{ "takes over 6 ms" holds Scenario().decode().time_s > 0.006 }} on an H100.\n'
        "---\n"
        "Body.\n"
    )
    problems = validate_page(lesson, "serving/x.md", block_validators(["course.numbers.extension"]))
    assert [(p.line, p.field) for p in problems] == [(5, 'claim "takes over 6 ms"')]
    assert "spec peak: 0.004776 vs 0.006 (fails)" in problems[0].message
