"""Math in lessons: LaTeX to MathML, and what stays prose or code."""

from __future__ import annotations

import re

import markdown
import pytest

from course.math.extension import MathError, find_formulas, to_mathml, without_formulas
from course.sanitising.extension import find_problems as sanitising_problems


def test_display_math_delimiters_shown_as_code_stay_code() -> None:
    html = markdown.Markdown(extensions=["course.math.extension"]).convert(
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


# The latency lesson's "Go deeper" formula as it was first written: a sum from i = 1 in display maths.
TPOT_SNIPPET = r"""??? deeper "Go deeper (more technical)"

    For one request with $n$ output tokens at times $t_1 < t_2 < \dots < t_n$, arriving at $a$:
    $$\text{TTFT} = t_1 - a, \qquad \text{TPOT} = \frac{1}{n-1}\sum_{i=1}^{n-1} \text{ITL}_i,$$
    and inline, $\sum_{k=1}^{n} x_k$ too.
"""


def test_braces_in_formulas_are_latex_not_attribute_lists() -> None:
    # `{i=1}` in `\sum_{i=1}` has the shape of a Markdown attribute list; in a formula it is LaTeX.
    assert sanitising_problems(TPOT_SNIPPET, "latency.md") == []
    html = markdown.markdown(
        TPOT_SNIPPET,
        extensions=["attr_list", "pymdownx.details", "course.math.extension", "course.sanitising.extension"],
    )
    assert html.count("<math") == 5  # $n$, the times, $a$, the display formula, the inline sum
    assert html.count("\u2211") == 2  # both sums drawn (the sanitiser writes characters, not references)
    drawn = re.sub(r' aria-label="[^"]*"', "", html)  # the display formula's name quotes its LaTeX
    assert "{i=1}" not in drawn
    assert ' i="1"' not in html
    # blanking keeps offsets and lines; an attribute list outside a formula is still checked
    assert len(without_formulas(TPOT_SNIPPET)) == len(TPOT_SNIPPET)
    assert without_formulas(TPOT_SNIPPET).count("\n") == TPOT_SNIPPET.count("\n")
    (problem,) = sanitising_problems("A sum $x_{i=1}$ and a paragraph.\n{: onclick=alert(1) }\n", "a.md")
    assert (problem.line, "onclick" in str(problem)) == (2, True)


def test_display_math_inside_a_paragraph_keeps_the_html_valid() -> None:
    """A <div> cannot sit in a <p>; a formula written mid-paragraph is a display <span> there."""
    html = markdown.Markdown(extensions=["course.math.extension"]).convert(
        "The intensity is $$I = \\frac{2PN}{2N}$$ for a matrix-vector product.\n\n$$ I = P $$\n"
    )
    paragraph, alone = html.split("\n", 1)
    assert paragraph.startswith('<p>The intensity is <span class="rp-math rp-math--display"')
    assert paragraph.endswith("</span> for a matrix-vector product.</p>")
    assert 'display="block"' in paragraph  # still display maths
    assert "<div" not in paragraph
    assert alone.strip().startswith('<div class="rp-math rp-math--display"')  # alone on its line: a block


def test_a_computed_number_inside_a_formula_is_refused() -> None:
    """A {{ }} inside $...$ reached readers as raw text (the disaggregated lesson once shipped one)."""
    from course.math.extension import find_problems

    lesson = "Prefill takes\n$t = {{ Scenario().prefill().time_s | ms }}$ on one GPU.\n"
    problems = find_problems(lesson, "serving/x.md")
    assert [(p.file, p.line) for p in problems] == [("serving/x.md", 2)]
    assert "computed number inside the formula" in problems[0].message
    assert "{{" in problems[0].fix
    assert "$t_{decode}$" in problems[0].fix
    assert find_problems("$t$ = {{ Scenario().prefill().time_s | ms }}\n", "serving/x.md") == []


def test_a_display_formula_is_a_keyboard_stop_named_by_its_latex() -> None:
    """Its box scrolls sideways wherever the formula is wider than the column (phones, wide math fonts), and a
    scrolling box the keyboard cannot reach is a barrier; the name reads the author's LaTeX, escaped."""
    html = markdown.markdown(
        'Per token:\n\n$$\\text{bytes per token} = 2 \\times L "<b>"$$\n',
        extensions=["course.math.extension", "course.sanitising.extension"],
    )
    box = html[html.index("<div") : html.index("<math")]
    assert 'tabindex="0"' in box
    assert 'role="group"' in box
    assert 'aria-label="Formula: bytes per token = 2 \\times L &quot;&lt;b&gt;&quot;"' in box
