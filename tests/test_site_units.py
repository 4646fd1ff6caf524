"""The site layer's plain functions: front matter, navigation, takeaways, numbers, safety, math."""

from __future__ import annotations

import markdown
import pytest

from calculators import Scenario
from course.lessons import Course, Lesson, Track, load_course, parse_lesson, split_front_matter
from course.markdown.lesson_safety import defuse
from course.markdown.math import MathError, find_formulas, to_mathml
from course.markdown.numbers import NumberSyntaxError, Tolerance, find_numbers, parse_number, stated_value
from course.navigation import build_nav, lesson_list_markdown, reading_order
from course.takeaways import insert_takeaways

GOOD = """---
title: "Prefill vs decode: two phases"
summary: One line.
track: inference
order: 1
prerequisites: [memory-wall]
takeaways:
  - First.
  - Second.
---
Body.
"""


def _lesson(id: str, track: str, order: int, prerequisites: tuple[str, ...] = ()) -> Lesson:
    return Lesson(id, f"{track}/{id}.md", id.title(), "Summary.", track, order, ("Takeaway.",), prerequisites)


TRACKS = [Track("foundations", "Foundations", "F.", 1), Track("inference", "Inference", "I.", 2)]


def test_good_front_matter_becomes_a_typed_lesson() -> None:
    lesson, problems = parse_lesson("inference/prefill-vs-decode.md", GOOD, ["foundations", "inference"])
    assert problems == []
    assert lesson == Lesson(
        "prefill-vs-decode",
        "inference/prefill-vs-decode.md",
        "Prefill vs decode: two phases",
        "One line.",
        "inference",
        1,
        ("First.", "Second."),
        ("memory-wall",),
    )


def test_front_matter_keeps_the_line_of_each_field() -> None:
    front, problems = split_front_matter(GOOD, "x.md")
    assert problems == []
    assert front is not None
    assert front.key_lines["track"] == 4
    assert front.key_lines["takeaways"] == 7


def test_a_bool_is_not_an_order() -> None:
    _, problems = parse_lesson("inference/x.md", GOOD.replace("order: 1", "order: true"), ["inference"])
    assert [p.field for p in problems] == ["order"]


def test_nav_follows_track_order_then_lesson_order_not_file_names() -> None:
    course = Course(
        list(reversed(TRACKS)),
        [
            _lesson("zeta", "foundations", 1),
            _lesson("alpha", "foundations", 2),
            _lesson("decode", "inference", 1),
        ],
    )
    pages = [
        "index.md",
        "foundations/index.md",
        "foundations/alpha.md",
        "foundations/zeta.md",
        "inference/index.md",
        "inference/decode.md",
        "about/write-a-lesson.md",
    ]
    course.tracks.sort(key=lambda t: t.order)
    nav = build_nav(course, pages)
    assert reading_order(nav) == [
        "index.md",
        "foundations/index.md",
        "foundations/zeta.md",
        "foundations/alpha.md",
        "inference/index.md",
        "inference/decode.md",
        "about/write-a-lesson.md",
    ]
    assert nav[1] == {
        "Foundations": [
            {"Foundations": "foundations/index.md"},  # titled, so the footer's "Next" names the track
            {"Zeta": "foundations/zeta.md"},
            {"Alpha": "foundations/alpha.md"},
        ]
    }


def test_track_list_links_lessons_and_prerequisites() -> None:
    course = Course(
        TRACKS,
        [_lesson("memory-wall", "foundations", 1), _lesson("decode", "inference", 1, ("memory-wall",))],
    )
    text = lesson_list_markdown(course, "inference", from_track_folder=True)
    assert text.startswith("# Inference\n\nI.")
    assert "1. **[Decode](decode.md)**" in text
    assert "[Memory-Wall](../foundations/memory-wall.md)" in text
    home = lesson_list_markdown(course, None, from_track_folder=False)
    assert "### [Foundations](foundations/index.md)" in home
    assert "(inference/decode.md)" in home


def test_real_course_front_matter_is_valid() -> None:
    course = load_course("docs")
    assert course.problems == []
    assert [t.key for t in course.tracks] == ["foundations", "inference"]


@pytest.mark.parametrize(
    ("body", "expected_position"),
    [
        ("Intro.\n\n<!-- takeaways -->\n\nMore.\n\n## Check your understanding\n", "after-intro"),
        ("Intro.\n\n## Check your understanding\n\nQuiz.\n", "before-quiz"),
        ("Intro.\n", "end"),
    ],
)
def test_takeaways_box_is_placed_at_marker_then_before_quiz_then_at_end(
    body: str, expected_position: str
) -> None:
    result = insert_takeaways(body, ["Decode is memory-bound."])
    box = result.index('!!! takeaways "Key takeaways"')
    assert "    - Decode is memory-bound." in result
    assert "<!-- takeaways -->" not in result
    if expected_position == "after-intro":
        assert result.index("Intro.") < box < result.index("More.")
    elif expected_position == "before-quiz":
        assert box < result.index("## Check your understanding")
    else:
        assert result.rstrip().endswith("- Decode is memory-bound.")


def test_numbers_parse_inserts_and_claims() -> None:
    insert = parse_number(" Scenario().decode().time_s | ms | .1f ")
    assert (insert.expression, insert.unit, insert.decimals, insert.is_claim) == (
        "Scenario().decode().time_s",
        "ms",
        1,
        False,
    )
    claim = parse_number(' "about 5 ms" == Scenario().decode().time_s | ms | within 10% ')
    assert claim.quoted == "about 5 ms"
    assert claim.tolerance == Tolerance(10, relative=True)
    assert parse_number("x | ms | 2sig").digits == 2
    assert parse_number('"3 ms" == x | ms | within 0.5').tolerance == Tolerance(0.5, relative=False)


@pytest.mark.parametrize(
    "source",
    [
        "Scenario()",
        '"about 5 ms" == Scenario().decode().time_s | ms',
        "x | furlongs",
        "x | ms | .1f | 2sig",
        "x | ms | bold",
    ],
)
def test_numbers_reject_malformed_syntax(source: str) -> None:
    with pytest.raises(NumberSyntaxError):
        parse_number(source)


def test_tolerance_edges() -> None:
    assert Tolerance(10, relative=True).allows(5.0, 4.776)
    assert not Tolerance(10, relative=True).allows(5.5, 5.0 * 0.99)
    assert Tolerance(0.5, relative=False).allows(5.0, 4.5)
    assert not Tolerance(0.5, relative=False).allows(5.0, 4.49)


def test_stated_value_reads_commas_and_decimals() -> None:
    assert stated_value("about 1,200 tokens") == 1200
    assert stated_value("roughly 4.8 ms") == 4.8
    assert stated_value("a few") is None


def test_numbers_in_code_are_not_numbers() -> None:
    text = "A {{ x | ms }}\n\n```\n{{ y | ms }}\n```\nand `{{ z | ms }}` and {{ w | s }}"
    assert find_numbers(text) == [(1, " x | ms "), (6, " w | s ")]


def test_rendered_number_equals_the_calculator() -> None:
    html = markdown.markdown(
        "It takes {{ Scenario().decode().time_s | ms | .1f }}.", extensions=["course.markdown.numbers"]
    )
    expected = f"{Scenario().decode().time_s * 1e3:.1f} ms"
    assert f">{expected}</span>" in html
    assert 'class="rp-number"' in html


def test_lesson_safety_defuses_but_leaves_code_alone() -> None:
    text = 'A <b onclick="x()">b</b> [l](javascript:go()) `<script>` and <script>y</script>'
    out = defuse(text)
    assert "onclick=" not in out.replace("data-blocked-onclick=", "")
    assert "javascript:" not in out
    assert "`<script>`" in out
    assert "&lt;script>y" in out


def test_display_math_delimiters_shown_as_code_stay_code() -> None:
    html = markdown.Markdown(extensions=["course.markdown.math"]).convert(
        "Wrap display maths in `$$`, like this:\n\n$$ I = P $$\n\nand `$$x$$` stays code."
    )
    assert "<code>$$</code>" in html
    assert "<code>$$x$$</code>" in html
    assert html.count("<math") == 1


def test_math_becomes_mathml_and_dollar_prices_stay_prose() -> None:
    assert to_mathml(r"\frac{2PN}{2N}", display=False).startswith("<math")
    assert find_formulas("It costs $5 or $10, and $I = P$ holds.") == [(1, "I = P", False)]
    with pytest.raises(MathError, match="unknown LaTeX command"):
        to_mathml(r"\notacommand x", display=True)


def test_misspelt_unit_gets_the_corrected_reference_as_its_fix() -> None:
    from course.markdown.numbers import find_problems

    claim, insert = find_problems(
        '{{ "about 16 GB" == Scenario().weight_bytes | gb | within 5% }}'
        " {{ Scenario().decode().time_s | msec }}",
        "a.md",
    )
    assert "did you mean 'GB'" in claim.message
    assert claim.fix == '{{ "about 16 GB" == Scenario().weight_bytes | GB | within 5% }}'
    assert insert.fix == "{{ Scenario().decode().time_s | ms }}"


def test_figures_in_front_matter_takeaways_are_checked_at_their_line() -> None:
    from course.validation import block_validators, validate_page

    lesson = (
        "---\n"
        "title: T\n"
        "summary: One line.\n"
        "takeaways:\n"
        '  - A 2,000-token prefill costs {{ "about nine" == '
        "Scenario().request(2000).prefill_cost_in_decode_steps | steps | within 5% }} decode steps.\n"
        "---\n"
        "Body.\n"
    )
    problems = validate_page(lesson, "inference/x.md", block_validators(["course.markdown.numbers"]))
    assert [(p.line, p.field) for p in problems] == [(5, 'claim "about nine"')]
    assert 'e.g. "about seven"' in problems[0].fix


def test_spelled_out_numbers_are_stated_values() -> None:
    from course.markdown.numbers import stated_value

    assert stated_value("roughly seven") == 7
    assert stated_value("Twenty of them") == 20
    assert stated_value("about 1,200 tokens, not seven") == 1200  # digits first
    assert stated_value("someone") is None  # whole words only
