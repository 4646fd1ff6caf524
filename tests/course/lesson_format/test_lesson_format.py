"""The lesson format's plain functions: front matter, navigation, the takeaways box."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.lesson_format.lessons import (
    Course,
    Lesson,
    Track,
    load_course,
    parse_lesson,
    parse_tracks,
    split_front_matter,
)
from course.lesson_format.navigation import build_nav, lesson_list_markdown, reading_order
from course.lesson_format.takeaways import insert_takeaways
from tests.conftest import ROOT

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
    assert text.startswith("# Track 2: Inference\n\nI.")
    assert "1. **[Decode](decode.md)**" in text
    assert "[Memory-Wall](../foundations/memory-wall.md)" in text
    home = lesson_list_markdown(course, None, from_track_folder=False)
    assert "### [Track 1: Foundations](foundations/index.md)" in home
    assert "(inference/decode.md)" in home


def test_real_course_front_matter_is_valid() -> None:
    course = load_course("docs")
    assert course.problems == []
    # Numbered as the source course is: its prefill-vs-decode lesson recalls "the memory wall from Track 3".
    assert [(t.order, t.key) for t in course.tracks][:4] == [
        (1, "model"),
        (2, "gpu"),
        (3, "foundations"),
        (4, "serving"),
    ]
    assert course.lesson_by_id("memory-wall").track == "foundations"
    assert course.lesson_by_id("prefill-vs-decode").track == "serving"


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


# -------------------------------------------------------------------------------------------- planned lessons
PLANNED_TRACKS = """\
- key: serving
  title: Serving
  summary: S.
  order: 4
  planned:
    - id: batching
      title: Batching
      summary: One read of the weights serves the batch.
    - id: kv-memory-and-paging
      title: KV memory and paging
      summary: How many sequences fit.
"""


def test_planned_lessons_are_listed_without_links_after_the_written_ones() -> None:
    tracks, problems = parse_tracks(PLANNED_TRACKS)
    assert problems == []
    course = Course(tracks, [_lesson("prefill-vs-decode", "serving", 1)])
    text = lesson_list_markdown(course, "serving", from_track_folder=True)
    assert "1. **[Prefill-Vs-Decode](prefill-vs-decode.md)**" in text
    assert "2. Batching *(planned)*" in text
    assert "3. KV memory and paging *(planned)*" in text
    assert "batching.md" not in text
    assert "](kv-memory" not in text


def test_a_written_lesson_replaces_its_planned_entry() -> None:
    tracks, _ = parse_tracks(PLANNED_TRACKS)
    course = Course(tracks, [_lesson("batching", "serving", 2)])
    assert [p.id for p in course.planned_in("serving")] == ["kv-memory-and-paging"]
    text = lesson_list_markdown(course, "serving", from_track_folder=True)
    assert "1. **[Batching](batching.md)**" in text
    assert "Batching *(planned)*" not in text


@pytest.mark.parametrize(
    ("planned", "field", "message"),
    [
        (
            "    - id: Batching!\n      title: B\n      summary: S.\n",
            "track 'serving' planned #1 id",
            "file stem",
        ),
        (
            "    - id: batching\n      title: B\n",
            "track 'serving' planned #1",
            "an id, a title and a summary",
        ),
        ("    - batching\n", "track 'serving' planned #1", "an id, a title and a summary"),
    ],
)
def test_bad_planned_entries_are_reported_with_field_and_fix(planned: str, field: str, message: str) -> None:
    text = PLANNED_TRACKS.split("  planned:\n")[0] + "  planned:\n" + planned
    _, problems = parse_tracks(text)
    assert [(p.field, message in p.message) for p in problems] == [(field, True)]
    assert all(p.fix for p in problems)


def test_a_lesson_planned_in_two_tracks_is_reported() -> None:
    other = PLANNED_TRACKS.replace("key: serving", "key: other").replace("order: 4", "order: 5")
    _, problems = parse_tracks(PLANNED_TRACKS + other)
    assert any("also planned in track 'serving'" in p.message for p in problems)


def test_a_misspelt_field_is_one_problem_that_names_the_field_it_looks_like() -> None:
    lesson, problems = parse_lesson("inference/x.md", GOOD.replace("title:", "titl:"), ["inference"])
    assert lesson is None
    assert [(p.field, p.line) for p in problems] == [("titl", 2)]  # not also "title is required"
    assert "did you mean 'title'?" in problems[0].message
    assert problems[0].fix == "rename it to `title:`"


def test_the_lesson_check_extension_fails_a_build_that_has_no_hook() -> None:
    import markdown

    from course.lesson_format.problems import LessonProblems

    wrong = 'A step takes {{ "about 9 ms" == Scenario().decode().time_s | ms | within 10% }}.\n'
    with pytest.raises(LessonProblems, match=r"this page:1: claim \"about 9 ms\""):
        markdown.Markdown(extensions=["course.lesson_format.extension", "course.numbers.extension"]).convert(
            wrong
        )
    collecting = markdown.Markdown(
        extensions=["course.lesson_format.extension", "course.numbers.extension"],
        extension_configs={"course.lesson_format.extension": {"collect": True}},
    )
    assert "rp-number" in collecting.convert(wrong)  # under MkDocs the hook reports it, with all the others
    right = wrong.replace("about 9 ms", "about 7 ms")  # the course's calibrated step: 6.68 ms
    assert "7 ms" in markdown.Markdown(extensions=["course.lesson_format.extension"]).convert(right)


def test_the_takeaways_extension_places_the_box_of_the_lesson_it_converts(tmp_path: Path) -> None:
    import markdown

    (tmp_path / "tracks.yml").write_text(
        "- key: inference\n  title: Inference\n  summary: I.\n  order: 1\n  notebooks: optional\n",
        encoding="utf-8",
    )
    (tmp_path / "inference").mkdir()
    (tmp_path / "inference" / "prefill-vs-decode.md").write_text(
        GOOD.replace("Body.", "Body.\n\n## Check your understanding\n"), encoding="utf-8"
    )
    extensions = ["admonition", "course.lesson_format.takeaways"]
    configs = {"course.lesson_format.takeaways": {"docs_dir": str(tmp_path)}}

    def convert(text: str) -> str:
        return markdown.Markdown(extensions=extensions, extension_configs=configs).convert(text)

    # A builder hands over the body without its front matter, and does not say which file it is.
    html = convert("Body.\n\n## Check your understanding\n")
    assert '<p class="admonition-title">Key takeaways</p>' in html
    assert (
        html.index("<li>First.</li>")
        < html.index("<li>Second.</li>")
        < html.index("Check your understanding")
    )
    assert "Key takeaways" not in convert("Another page.\n\n<!-- takeaways -->\n")
    assert "takeaways" not in convert("Another page.\n\n<!-- takeaways -->\n")  # a stray marker is dropped


def test_the_generated_navigation_in_mkdocs_yml_is_current() -> None:
    from course.lesson_format.nav_file import BEGIN, END, nav_block

    text = Path("mkdocs.yml").read_text(encoding="utf-8")
    assert BEGIN in text, "mkdocs.yml has no generated navigation: run `python3 dev.py nav`"
    assert END in text, "mkdocs.yml's generated navigation has no end marker: run `python3 dev.py nav`"
    current = text[text.index(BEGIN) : text.index(END) + len(END)] + "\n"
    assert current == nav_block("docs"), "mkdocs.yml's navigation is not current: run `python3 dev.py nav`"


def _glossary_course(docs: Path) -> None:
    """Two tracks, each of one lesson; the glossary's term "p99" is defined by the second track's lesson."""
    (docs / "tracks.yml").write_text(
        "- key: early\n  title: Early\n  summary: E.\n  order: 1\n  notebooks: optional\n"
        "- key: late\n  title: Late\n  summary: L.\n  order: 2\n  notebooks: optional\n",
        encoding="utf-8",
    )
    for track, lesson, order in (("early", "paging", 1), ("late", "latency", 1)):
        (docs / track).mkdir()
        front = f"---\ntitle: {lesson.title()}\nsummary: S.\ntrack: {track}\norder: {order}\n"
        front += "takeaways: [T.]\n---\n"
        (docs / track / f"{lesson}.md").write_text(front + "Body.\n", encoding="utf-8")
    (docs / "glossary.yml").write_text(
        "- term: latency percentiles\n  lesson: latency\n  forms: [p99, percentile]\n"
        "- term: SLO\n  lesson: latency\n  forms: [SLO]\n",
        encoding="utf-8",
    )


def test_a_term_used_before_its_lesson_must_link_there(tmp_path: Path) -> None:
    from course.lesson_format.glossary import find_problems

    _glossary_course(tmp_path)
    page = "Body.\n\nThe `p99` in code is not prose.\nThe p99 TTFT rises; an slo is not an SLO-bound.\n"
    problems = find_problems(page, "early/paging.md", str(tmp_path))
    assert [(p.line, p.field) for p in problems] == [(4, "term 'p99'"), (4, "term 'SLO'")]
    assert "'Latency', which comes later in the course" in problems[0].message
    assert "[p99](../late/latency.md)" in problems[0].fix
    linked = page + "\nSee [the latency lesson](../late/latency.md#percentiles).\n"
    assert find_problems(linked, "early/paging.md", str(tmp_path)) == []
    # The defining lesson, and the lessons after it, use the term freely; a page that is no lesson too.
    assert find_problems(page, "late/latency.md", str(tmp_path)) == []
    assert find_problems(page, "index.md", str(tmp_path)) == []


def test_a_glossary_entry_must_name_a_written_lesson(tmp_path: Path) -> None:
    from course.lesson_format.glossary import glossary_problems

    _glossary_course(tmp_path)
    (tmp_path / "glossary.yml").write_text(
        "- term: tensor parallelism\n  lesson: tensor-parallelism\n  forms: [tensor parallelism]\n",
        encoding="utf-8",
    )
    problems = glossary_problems(tmp_path)
    assert [(p.file, p.field) for p in problems] == [
        ("glossary.yml", "term 'tensor parallelism' field 'lesson'")
    ]
    assert "is not a written lesson's id" in problems[0].message


def test_the_course_glossary_is_valid_and_every_lesson_keeps_its_order() -> None:
    from course.lesson_format.glossary import find_problems, glossary_problems

    docs = ROOT / "docs"
    assert glossary_problems(docs) == []
    for lesson in load_course(docs).lessons:
        text = (docs / lesson.path).read_text(encoding="utf-8")
        assert find_problems(text, lesson.path, str(docs)) == [], lesson.path


CLAIM = '{{ "is memory-bound" holds Scenario().decode().memory_time_s > Scenario().decode().compute_time_s }}'


@pytest.mark.parametrize(
    ("takeaway", "words"),
    [
        # Plain comparative words, with nothing checked: reported, each word once, lower-cased.
        ("Prefill is compute-bound, so it runs faster than decode.", ["compute-bound", "faster"]),
        ("The split wins when the objective is tight; TPOT levels off.", ["wins", "levels off"]),
        ("A step at batch 64 is {{ Scenario().decode(64).time_s | ms }}, longer than at 8.", ["longer than"]),
        # Backed: a holds claim, a checked figure (==), or a figure printed with its bound.
        (f"So decode {CLAIM}, and it grows with the batch.", []),
        (
            'The cache is {{ "4 times" == model("llama-3.1-8b").kv_cache_bytes_per_token() | x | within 1% }}'
            " smaller than MHA's.",
            [],
        ),
        ("It runs {{ Scenario().decode().time_s | ms | .1f | bound }}, faster than prefill.", []),
        # Words inside a figure, a citation, code or maths are not the takeaway's own.
        ("Vendors report more [@faster than-2024]; `x faster than y` and $a > b$ say nothing.", []),
        # Words that also describe without comparing are not on the list.
        ("A float's bits are split between exponent and mantissa; more bits, larger range.", []),
    ],
)
def test_a_takeaway_that_compares_needs_a_checked_claim(takeaway: str, words: list[str]) -> None:
    from course.lesson_format.comparatives import takeaway_problems

    problems = takeaway_problems("serving/x.md", ["A plain first takeaway.", takeaway], line=7)
    if not words:
        assert problems == []
        return
    [problem] = problems
    assert (problem.file, problem.field, problem.line) == ("serving/x.md", "takeaways item 2", 7)
    assert problem.message.startswith("compares (" + ", ".join(repr(w) for w in words) + ")")
    assert "holds" in problem.fix


def test_the_course_reports_a_planted_comparative_takeaway_without_a_claim(tmp_path: Path) -> None:
    _glossary_course(tmp_path)
    lesson = tmp_path / "early" / "paging.md"
    planted = "- Paging wastes less memory than slabs, so it serves more than static batching.\n"
    text = lesson.read_text(encoding="utf-8").replace("takeaways: [T.]\n", "takeaways:\n  - T.\n  " + planted)
    lesson.write_text(text, encoding="utf-8")
    problems = load_course(tmp_path).problems
    assert [(p.file, p.field, p.line) for p in problems] == [("early/paging.md", "takeaways item 2", 6)]
    assert "'more than'" in problems[0].message
    assert [x.id for x in load_course(tmp_path).lessons] == ["paging", "latency"]  # reported, not dropped
    lesson.write_text(
        text.replace("so it serves more than static batching", f"so decode {CLAIM}"), encoding="utf-8"
    )
    assert load_course(tmp_path).problems == []
