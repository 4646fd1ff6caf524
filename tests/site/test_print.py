"""A lesson printed from the browser (print.css, section 1): no controls on paper, a widget's inputs printed
beside its results, and light colours with white margins whatever the scheme on screen.

Chromium prints with ``emulate_media(media="print")`` for what is laid out, and ``page.pdf()`` (with
background graphics on, as a reader may tick) rendered by pdftoppm for what reaches the paper.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

LESSONS = ("serving/prefill-vs-decode/", "foundations/memory-wall/")

# Every element that is drawn (has a box) and is a control, inside the article.
VISIBLE_CONTROLS = """() => [...document.querySelectorAll(
    'article :is(button, textarea, select, input[type="range"], .rp-widget__run-output)')]
  .filter((element) => element.getClientRects().length > 0
    && getComputedStyle(element).visibility !== 'hidden')
  .filter((element) => !element.closest('.rp-widget__controls')
    || element.matches('button, input[type="range"]'))
  .map((element) => element.outerHTML.slice(0, 80))"""


def open_printed(page: Any, url: str, scheme: str = "light") -> None:
    page.emulate_media(color_scheme=scheme)
    page.goto(url)
    page.wait_for_selector(".rp-widget")
    page.emulate_media(media="print", color_scheme=scheme)


@pytest.mark.parametrize("lesson", LESSONS)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_printed_lesson_has_no_controls(page: Any, site_url: str, lesson: str, scheme: str) -> None:
    open_printed(page, site_url + lesson, scheme)
    assert page.evaluate(VISIBLE_CONTROLS) == []
    text = page.inner_text("article")
    assert "Output or traceback appears here" not in text
    assert "The Python behind this" not in text


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_used_widget_prints_its_inputs_and_no_stale_results(page: Any, site_url: str, tmp_path: Path) -> None:
    """The reader's values, not the defaults, are on paper; results not computed for them are not."""
    open_printed(page, site_url + "serving/prefill-vs-decode/")
    page.emulate_media(media="screen")
    page.fill("#widget-prefill-decode-batch", "16")
    page.select_option("#widget-prefill-decode-gpu", "h200")
    page.emulate_media(media="print")
    pdf = tmp_path / "lesson.pdf"
    page.pdf(path=str(pdf))
    pdftotext = ["pdftotext", "-layout", str(pdf), "-"]
    text = subprocess.run(pdftotext, capture_output=True, text=True, check=True).stdout
    widget = text[text.index("Prefill vs decode simulator") :]
    inputs = widget.split("Key takeaways")[0]
    # Each input as "label: value", on a line or two above the results they produced.
    assert "GPU: NVIDIA H200 SXM 141GB" in inputs
    assert "Batch size: 16" in inputs
    assert "Prompt tokens: 2000" in inputs
    # Results not yet computed for these inputs are hidden on screen and on paper, never printed beside them.
    assert "Time per decode step" not in inputs
    # The roofline explorer lists only the GPUs it compares (three by default), not eleven boxes.
    page.goto(site_url + "foundations/memory-wall/")
    page.wait_for_selector(".rp-widget")
    chosen = page.eval_on_selector_all(
        "#widget-roofline-explorer .rp-widget__check",
        "labels => labels.filter((label) => label.getClientRects().length).map((label) => label.textContent)",
    )
    assert len(chosen) == 3
    assert any("H100 SXM5" in name for name in chosen)


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="pdftoppm (poppler-utils) is not installed")
def test_dark_mode_prints_light_with_white_margins(page: Any, site_url: str, tmp_path: Path) -> None:
    open_printed(page, site_url + "serving/prefill-vs-decode/", "dark")
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    colours = page.evaluate(
        "[getComputedStyle(document.body).backgroundColor,"
        " getComputedStyle(document.querySelector('article')).color]"
    )
    assert colours[0] == "rgb(255, 255, 255)"
    assert colours[1].startswith("rgba(0, 0, 0"), colours
    pdf = tmp_path / "lesson.pdf"
    page.pdf(path=str(pdf), print_background=True, format="A4", margin={"top": "15mm", "bottom": "15mm"})
    pdftoppm = ["pdftoppm", "-r", "20", "-gray", "-f", "1", "-l", "2", str(pdf), str(tmp_path / "p")]
    subprocess.run(pdftoppm, check=True)
    for image in sorted(tmp_path.glob("p-*.pgm")):
        width, height, pixels = read_pgm(image)
        # The top and bottom margins (15 mm of 297 mm) and the page's corners are paper-white.
        margin_rows = int(height * 12 / 297)
        margins = pixels[: margin_rows * width] + pixels[-margin_rows * width :]
        assert min(margins) >= 250, f"{image.name}: a dark margin (darkest grey {min(margins)} of 255)"
        # And the page is mostly white: dark mode would make it mostly near-black.
        light = sum(1 for value in pixels if value >= 200)
        assert light / len(pixels) > 0.8, f"{image.name}: only {light / len(pixels):.0%} of the page is light"


def read_pgm(path: Path) -> tuple[int, int, bytes]:
    """Width, height and 8-bit grey pixels of a binary PGM (P5) as pdftoppm -gray writes it."""
    data = path.read_bytes()
    fields: list[bytes] = []
    position = 0
    while len(fields) < 4:
        while data[position : position + 1].isspace():
            position += 1
        end = position
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(data[position:end])
        position = end
    assert fields[0] == b"P5", fields
    assert fields[3] == b"255", fields
    width, height = int(fields[1]), int(fields[2])
    return width, height, data[position + 1 : position + 1 + width * height]
