"""Math in lessons: LaTeX to MathML, and what stays prose or code."""

from __future__ import annotations

import markdown
import pytest

from course.math.extension import MathError, find_formulas, to_mathml


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
