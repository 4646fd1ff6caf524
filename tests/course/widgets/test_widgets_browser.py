"""The widgets end to end in real Chromium: they start, respond, match CPython, share state by URL, run code,
and fall back to the build-time figure when Pyodide cannot start.

One page (one Pyodide boot) serves most tests, in order; the URL and fallback tests open their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from calculators.browser import compute
from tests.conftest import TESTS, PageWatch, serve_build

pytestmark = pytest.mark.browser

FIXTURE = TESTS / "fixtures" / "widget_site" / "mkdocs.yml"
PD = "#widget-prefill-decode"
RE = "#widget-roofline-explorer"
LIVE_TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def widget_site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_build(tmp_path_factory.mktemp("widget-site"), FIXTURE) as url:
        yield url


@pytest.fixture(scope="module")
def live_page(browser: Any, widget_site_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = PageWatch(page)
    page.goto(widget_site_url)
    start(page)
    yield page
    context.close()
    watch.check()


def start(page: Any, widget: str = PD) -> None:
    """Press the widget's Start button (widgets never start by themselves) and wait until it is live."""
    page.locator(f"{widget} .rp-widget__start-button").click()
    page.wait_for_selector(f'{widget}[data-rp-state="live"]', timeout=LIVE_TIMEOUT_MS)


def shown(page: Any, widget: str) -> dict[str, str]:
    return page.eval_on_selector_all(
        f"{widget} [data-shown]", "els => Object.fromEntries(els.map(e => [e.dataset.shown, e.textContent]))"
    )


def wait_rendered(page: Any, widget: str, action: Any) -> None:
    """Do ``action`` and wait until the widget has rendered an answer to it."""
    page.evaluate(
        f"""() => {{ window.__rendered = false;
        document.querySelector('{widget}').addEventListener('ridgepoint:rendered',
          () => {{ window.__rendered = true; }}, {{ once: true }}); }}"""
    )
    action()
    page.wait_for_function("() => window.__rendered === true", timeout=10_000)


def test_python_is_not_downloaded_until_the_reader_asks(browser: Any, widget_site_url: str) -> None:
    """Reading past a widget (scrolling it into view) downloads nothing; the Start button does."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(widget_site_url)
    for widget in (PD, RE):
        page.locator(widget).scroll_into_view_if_needed()
    page.wait_for_load_state("networkidle")
    assert not [url for url in requests if "pyodide" in url or "widget-worker" in url]
    assert page.get_attribute(PD, "data-rp-state") == "static"
    assert "Press Start" in page.inner_text(f"{PD} .rp-widget__status")
    progress: list[str] = []
    page.expose_function("__progress", lambda text: progress.append(text))
    page.evaluate(
        f"""() => new MutationObserver(() => window.__progress(
              document.querySelector('{PD} .rp-widget__status').textContent))
            .observe(document.querySelector('{PD} .rp-widget__status'), {{ childList: true, subtree: true,
              characterData: true }})"""
    )
    start(page)
    context.close()
    assert [url for url in requests if url.endswith(".wasm")]
    # Honest progress: megabytes downloaded only grow, and no stage claims a percentage.
    amounts = [float(text.split("(")[1].split(" MB")[0]) for text in progress if " MB so far" in text]
    assert amounts == sorted(amounts), progress
    assert not [text for text in progress if "%" in text], progress


def test_prefill_decode_responds_and_matches_cpython(live_page: Any) -> None:
    timeline = f'{PD} [data-widget-chart="timeline"] .rp-chart__view'
    before_chart = live_page.inner_html(timeline)
    wait_rendered(live_page, PD, lambda: live_page.fill(f"{PD}-prompt", "8000"))
    result = compute("prefill-decode", {"prompt": "8000", "kv": False})  # the fixture's block: kv false
    expected = result["shown"]
    got = shown(live_page, PD)
    assert got == {key: expected[key] for key in got}
    assert got["prefill_time_s"] != "32.3 ms"
    # The chart is the live Vega view now, drawn from the worker's rows; its caption follows them.
    live_page.wait_for_selector(f'{PD} [data-widget-chart="timeline"] .rp-chart--live')
    assert live_page.inner_html(timeline) != before_chart
    caption = live_page.inner_text(f'{PD} [data-widget-chart="timeline"] .rp-chart__caption')
    assert caption == result["charts"]["timeline"]["caption"]
    assert "8,000 tokens" in live_page.text_content(f'{PD} [data-widget-chart="roofline"] .rp-chart__view')
    live_page.wait_for_url("**prefill-decode.prompt=8000*")
    # the aria-live summary: calibrated (the site's setting), cache reads off as the block says: 167 / 6.53 ms
    assert "costs 25.5 steps" in live_page.inner_text(f"{PD} .rp-widget__summary")


def test_kv_switch_and_keyboard_slider(live_page: Any) -> None:
    # From a prompt of its own, not the one an earlier test left: the test passes alone (pytest -k) too.
    wait_rendered(live_page, PD, lambda: live_page.fill(f"{PD}-prompt", "8000"))
    wait_rendered(live_page, PD, lambda: live_page.check(f"{PD}-kv"))
    live_page.focus(f"{PD}-prompt-slider")
    wait_rendered(live_page, PD, lambda: live_page.keyboard.press("PageUp"))
    prompt = live_page.input_value(f"{PD}-prompt")
    assert int(prompt) > 8000
    expected = compute("prefill-decode", {"prompt": prompt, "kv": True})["shown"]
    assert shown(live_page, PD)["decode_step_time_s"] == expected["decode_step_time_s"]


def test_bad_input_shows_the_calculators_message_inline(live_page: Any) -> None:
    live_page.fill(f"{PD}-batch", "-2")
    live_page.wait_for_function(
        f"() => document.querySelector('{PD}-error').textContent.includes('Batch size')"
    )
    # The control's own words and the range its hint states, not the calculators' argument names.
    message = live_page.inner_text(f"{PD}-error")
    assert message == "Batch size: type a whole number from 1 to 4,096; -2 is not."
    hint = live_page.inner_text(f"{PD} label[for='widget-prefill-decode-batch'] ~ .rp-widget__hint")
    assert "1 to 4,096" in hint
    live_page.fill(f"{PD}-batch", "4096")  # the top of the stated range passes the widget's check
    live_page.wait_for_function(
        f"() => !document.querySelector('{PD}-error').textContent.startsWith('Batch size')"
    )
    live_page.fill(f"{PD}-batch", "1")
    live_page.wait_for_function(f"() => document.querySelector('{PD}-error').textContent === ''")
    # a model too big for the GPU is computed as a what-if, and the summary says it does not fit
    live_page.select_option(f"{PD}-model", "llama-3.1-405b")
    summary = f"{PD} .rp-widget__summary"
    live_page.wait_for_function(
        f"() => document.querySelector('{summary}').textContent.includes('do not fit')"
    )
    assert live_page.inner_text(f"{PD}-error") == ""
    wait_rendered(live_page, PD, lambda: live_page.select_option(f"{PD}-model", "dense-8b"))


def test_one_output_token_draws_without_vega_warnings(live_page: Any) -> None:
    warnings: list[str] = []
    live_page.on("console", lambda message: warnings.append(message.text))
    wait_rendered(live_page, PD, lambda: live_page.fill(f"{PD}-output", "1"))
    live_page.wait_for_selector(f'{PD} [data-widget-chart="timeline"] .rp-chart--live')
    assert not [text for text in warnings if "Infinite extent" in text], warnings
    wait_rendered(live_page, PD, lambda: live_page.fill(f"{PD}-output", "256"))


def test_a_move_updates_the_charts_marks_in_place_and_draws_what_new_rows_draw(live_page: Any) -> None:
    """A slider move changes values of the same rows: Vega keeps the bars' SVG elements and updates them
    (widgets.js setRows; replacing the rows drew every mark anew, a third more work per move), and the
    drawing is exactly the one that the answer's rows put in afresh draw."""
    figure = f'{PD} [data-widget-chart="timeline"] figure.rp-chart'
    bar = f"{figure} .rp-chart__view .mark-rect path"
    live_page.wait_for_selector(f"{figure}.rp-chart--live")
    live_page.eval_on_selector(bar, "path => { path.rpKept = true; }")
    before = live_page.inner_html(f"{figure} .rp-chart__view")
    live_page.evaluate(
        f"""() => document.querySelector('{PD}').addEventListener('ridgepoint:rendered',
          (event) => {{ window.rpAnswer = event.detail.result; }}, {{ once: true }})"""
    )
    wait_rendered(live_page, PD, lambda: live_page.fill(f"{PD}-prompt", "3000"))
    assert live_page.eval_on_selector(bar, "path => path.rpKept === true")  # the same element, moved
    drawn = live_page.inner_html(f"{figure} .rp-chart__view")
    assert drawn != before  # the bars moved
    # The same rows put in afresh (the view's rows replaced by copies of the answer's): the same drawing,
    # from new elements.
    live_page.evaluate(
        f"""async () => {{
          const {{ view }} = await window.ridgepoint.charts.activate(document.querySelector('{figure}'));
          for (const [name, rows] of Object.entries(window.rpAnswer.charts.timeline.datasets)) {{
            view.data(name, JSON.parse(JSON.stringify(rows)));
          }}
          await view.runAsync();
        }}"""
    )
    assert not live_page.eval_on_selector(bar, "path => path.rpKept === true")
    assert live_page.inner_html(f"{figure} .rp-chart__view") == drawn


def test_code_cell_runs_and_shows_tracebacks(live_page: Any) -> None:
    live_page.click(f"{PD} .rp-widget__python summary")
    code = live_page.input_value(f"{PD}-code")
    assert "scenario.request(" in code
    live_page.click(f"{PD} .rp-widget__run")
    output = f"{PD} .rp-widget__run-output"
    live_page.wait_for_function(f"() => document.querySelector('{output}').dataset.outcome")
    assert "prefill:" in live_page.inner_text(output)
    live_page.fill(f"{PD}-code", "Scenario('dense-8b', 'h100-sxm').decode(batch=0)")
    live_page.click(f"{PD} .rp-widget__run")
    live_page.wait_for_function(f"() => document.querySelector('{output}').dataset.outcome === 'error'")
    text = live_page.inner_text(output)
    assert text.startswith("Traceback")
    assert text.rstrip().endswith("batch must be a whole number >= 1, got 0")
    wait_rendered(live_page, PD, lambda: live_page.fill(f"{PD}-output", "100"))  # the widget still works


def test_roofline_explorer_matches_cpython(live_page: Any) -> None:
    live_page.locator(RE).scroll_into_view_if_needed()
    live_page.wait_for_selector(f'{RE}[data-rp-state="live"]')
    wait_rendered(live_page, RE, lambda: live_page.fill(f"{RE}-intensity", "400"))
    wait_rendered(live_page, RE, lambda: live_page.check(f'{RE} input[value="l4"]'))
    rows = live_page.eval_on_selector_all(
        f'{RE} [data-table="gpus"] tbody tr', "trs => trs.map(tr => [...tr.children].map(c => c.textContent))"
    )
    gpus = [row[0] for row in rows]
    result = compute("roofline-explorer", {"gpus": ",".join(["h100-sxm", "b200", "a100-sxm-80gb", "l4"]),
                                           "intensity": "400"})  # fmt: skip
    expected = {row["name"]: [row["shown"][k] for k in ("peak", "ridge_point", "attainable", "bound")]
                for row in result["gpus"]}  # fmt: skip
    assert sorted(gpus) == sorted(expected)
    for row in rows:
        assert row[1:] == expected[row[0]]
    live_page.wait_for_url("**roofline-explorer.intensity=400*")
    chart_table = live_page.eval_on_selector_all(
        f'{RE} [data-widget-chart="roofline"] tbody tr',
        "trs => trs.map(tr => [...tr.children].map(c => c.textContent))",
    )
    assert chart_table == result["charts"]["roofline"]["rows"]  # the chart's text alternative follows too
    labels = live_page.text_content(f'{RE} [data-widget-chart="roofline"] .rp-chart__view')
    assert "L4 24GB, ridge 403" in labels  # the roofline of the GPU just ticked is drawn
    caption = live_page.text_content(f'{RE} [data-widget-chart="roofline"] .rp-chart__caption')
    assert "L4 24GB: memory-bound" in caption  # and the operation is placed on it


def test_state_in_the_url_is_restored(browser: Any, widget_site_url: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = PageWatch(page)
    page.goto(widget_site_url + "?prefill-decode.prompt=16000&prefill-decode.gpu=h200&prefill-decode.kv=1")
    # The link's inputs are shown at once; the build-time results (the defaults') are not shown beside them.
    assert page.input_value(f"{PD}-prompt") == "16000"
    assert page.locator(f"{PD} .rp-widget__output").is_hidden()
    start(page)
    page.wait_for_selector(f"{PD} .rp-widget__output", state="visible")
    page.wait_for_function(
        f"() => document.querySelector('{PD} [data-shown=prefill_time_s]').textContent !== '32.3 ms'"
    )
    assert page.input_value(f"{PD}-prompt") == "16000"
    assert page.input_value(f"{PD}-gpu") == "h200"
    assert page.is_checked(f"{PD}-kv")
    expected = compute("prefill-decode", {"prompt": 16000, "gpu": "h200", "kv": True})["shown"]
    assert shown(page, PD)["prefill_time_s"] == expected["prefill_time_s"]
    # Away and back with instant navigation: the page's Python keeps running, so the widget is live at once.
    page.click("text=Another page")
    page.wait_for_url("**/other/")
    page.click("text=Back to the widgets")
    page.wait_for_selector(f'{PD}[data-rp-state="live"]', timeout=LIVE_TIMEOUT_MS)  # Python already runs
    context.close()
    watch.check()


def test_a_bad_model_in_the_link_keeps_the_default_and_says_so(page: Any, widget_site_url: str) -> None:
    page.goto(widget_site_url + "?prefill-decode.model=llama-9000")
    assert page.input_value(f"{PD}-model") == "dense-8b"  # never a blank dropdown
    message = page.inner_text(f"{PD}-error")
    assert "“llama-9000”, which this widget does not offer" in message
    assert "Nominal 8B dense model" in message


def test_without_javascript_the_inputs_are_disabled_and_say_why(browser: Any, widget_site_url: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(widget_site_url)
        assert page.is_disabled(f"{PD}-prompt")
        assert page.is_disabled(f"{PD} .rp-widget__run")
        assert page.locator(f"{PD} .rp-widget__start").is_hidden()
        assert "needs JavaScript" in page.inner_text(f"{PD} .rp-widget__status")
        assert "scroll" not in page.inner_text(f"{PD} .rp-widget__status")
        # the build-time figure is whole: calibrated, the block's kv: false, its spec-peak bound beside it
        # (16 GB of weights at 3.35 TB/s = 4.78 ms)
        assert shown(page, PD)["decode_step_time_s"].replace("\u00a0", " ") == "6.53 ms (bound 4.78 ms)"
    finally:
        context.close()


def test_static_figure_stays_when_pyodide_cannot_load(page: Any, widget_site_url: str) -> None:
    page.route("**/*.wasm", lambda route: route.abort())
    page.goto(widget_site_url)
    page.locator(f"{PD} .rp-widget__start-button").click()
    page.wait_for_selector(f'{PD}[data-rp-state="failed"]', timeout=LIVE_TIMEOUT_MS)
    assert "could not start" in page.inner_text(f"{PD} .rp-widget__status")
    assert shown(page, PD)["decode_step_time_s"].replace("\u00a0", " ") == "6.53 ms (bound 4.78 ms)"
    # At 1280 px the wide drawing was fetched beside the narrow one; CSS shows one
    page.wait_for_selector(f'{PD} [data-widget-chart="timeline"] .rp-chart__svg--wide svg', state="attached")
    drawings = page.locator(f'{PD} [data-widget-chart="timeline"] .rp-chart__svg svg')
    assert drawings.count() == 2
    assert len([i for i in range(2) if drawings.nth(i).is_visible()]) == 1
    assert page.is_disabled(f"{PD}-prompt")
    page.watch.console_errors.clear()  # the blocked wasm request is logged by Chromium on purpose


# The worker's stage names (widget-worker.js): a start from a kept copy of Python's memory, or from scratch.
RESTORED = "Pyodide restored with the calculators"
FROM_SCRATCH = "calculators imported"
SNAPSHOTS = "ridgepoint-python-snapshot"  # the worker's Cache Storage for the copy

# The code cache's trace events (v8.dev/blog/wasm-code-caching): the compiled module stored, then found.
WASM_TRACE = ["v8.wasm", "devtools.timeline", "disabled-by-default-devtools.timeline"]


@contextmanager
def persistent_browser(browser: Any, profile: Path) -> Iterator[Any]:
    """A browser with a profile on disk, as a reader's is: its caches outlive the page and the browser."""
    from course.browser_flags import launch_options

    context = browser.browser_type.launch_persistent_context(
        str(profile), **launch_options(browser.browser_type)
    )
    try:
        yield context
    finally:
        context.close()


def start_stages(page: Any) -> list[str]:
    """Start the widget and wait until it is live; the worker's start-up stages, by name."""
    start(page)
    return [name for name, _ in page.evaluate("window.ridgepointWidgets.stages")]


def snapshot_keys(page: Any) -> list[str]:
    return page.evaluate(f"async () => (await (await caches.open('{SNAPSHOTS}')).keys()).map((r) => r.url)")


def wait_for_snapshot(page: Any) -> None:
    """The copy is stored once the widget has answered (a Cache Storage write of ~32 MB): wait for it."""
    for _ in range(LIVE_TIMEOUT_MS // 200):
        if len(snapshot_keys(page)) == 1:
            return
        page.wait_for_timeout(200)
    raise AssertionError(f"no copy of Python's memory was kept: {snapshot_keys(page)}")


def test_a_repeat_visit_starts_from_the_kept_python(
    browser: Any, widget_site_url: str, tmp_path: Path
) -> None:
    """The first visit starts Python and imports the calculators, then keeps a copy of Python's memory;
    the reader's next visit (the browser restarted, same profile) starts from that copy, warms Python up,
    and its answers are the calculators' own."""
    with persistent_browser(browser, tmp_path / "profile") as context:
        page = context.pages[0] if context.pages else context.new_page()
        watch = PageWatch(page)
        page.goto(widget_site_url)
        assert FROM_SCRATCH in start_stages(page)
        wait_for_snapshot(page)
        assert page.evaluate("window.ridgepointWidgets.warmed") is None  # the import was its warm-up
        (key,) = snapshot_keys(page)
        runtime = page.evaluate("async () => (await fetch('assets/ridgepoint/runtime.json')).json()")
        assert key.endswith(
            f"/{runtime['pyodide'].rstrip('/').split('/')[-1]}/{runtime['package']['sha256']}"
        )
        watch.check()
    with persistent_browser(browser, tmp_path / "profile") as context:
        page = context.pages[0] if context.pages else context.new_page()
        watch = PageWatch(page)
        page.goto(widget_site_url)
        stages = start_stages(page)
        assert RESTORED in stages, stages
        assert FROM_SCRATCH not in stages, stages
        # The worker runs the calculators' module bodies again (calculators/browser/warm_up.py): every one of
        # them, and the answers after it are still the calculators' own (below).
        page.wait_for_function("() => window.ridgepointWidgets.warmed", timeout=LIVE_TIMEOUT_MS)
        warmed = page.evaluate("window.ridgepointWidgets.warmed")
        assert warmed["modules"] > 20, warmed
        assert warmed["rerun"] == warmed["modules"], warmed
        wait_rendered(page, PD, lambda: page.fill(f"{PD}-prompt", "8000"))
        expected = compute("prefill-decode", {"prompt": "8000", "kv": False})["shown"]
        got = shown(page, PD)
        assert got == {key: expected[key] for key in got}
        # The calculators' files are back too (the copy is memory only): the code cell imports a module the
        # widgets had not imported when the copy was taken.
        page.click(f"{PD} .rp-widget__python summary")
        page.fill(f"{PD}-code", "import calculators.engine_memory as module\nprint(module.__name__)")
        page.click(f"{PD} .rp-widget__run")
        page.wait_for_function(f"() => document.querySelector('{PD} .rp-widget__run-output').dataset.outcome")
        assert page.inner_text(f"{PD} .rp-widget__run-output") == "calculators.engine_memory"
        watch.check()


def test_a_damaged_or_foreign_python_copy_is_never_used(
    browser: Any, widget_site_url: str, tmp_path: Path
) -> None:
    """A copy that does not restore (damaged, or another Pyodide build's) is dropped and Python starts from
    scratch; a copy kept for other calculators (the site was updated) is never even read, and is replaced."""
    with persistent_browser(browser, tmp_path / "profile") as context:
        page = context.pages[0] if context.pages else context.new_page()
        watch = PageWatch(page)
        page.goto(widget_site_url)
        runtime = page.evaluate("async () => (await fetch('assets/ridgepoint/runtime.json')).json()")
        version = runtime["pyodide"].rstrip("/").split("/")[-1]
        origin = widget_site_url.split("/", 3)[:3]
        key = "/".join(origin) + f"/__ridgepoint-python-snapshot/{version}/{runtime['package']['sha256']}"
        old = "/".join(origin) + f"/__ridgepoint-python-snapshot/{version}/{'0' * 64}"
        # Garbage under the right key, and an older site's copy under its own.
        page.evaluate(
            """async ([key, old]) => { const cache = await caches.open('ridgepoint-python-snapshot');
               await cache.put(key, new Response(new Uint8Array(4096).fill(7)));
               await cache.put(old, new Response(new Uint8Array(4096))); }""",
            [key, old],
        )
        stages = start_stages(page)
        assert FROM_SCRATCH in stages, stages
        assert RESTORED not in stages, stages
        wait_rendered(page, PD, lambda: page.fill(f"{PD}-prompt", "8000"))
        wait_for_snapshot(page)  # the damaged copy and the old site's are gone; this start's copy is kept
        assert snapshot_keys(page) == [key]
        size = page.evaluate(
            "async (key) => (await (await (await caches.open('ridgepoint-python-snapshot')).match(key))"
            ".arrayBuffer()).byteLength",
            key,
        )
        assert size > 1_000_000  # Python's memory, not the 4 kB of garbage
        watch.check()


def _wasm_events(context: Any, page: Any, action: Any) -> set[str]:
    """The names of the v8.wasm trace events while ``action`` runs."""
    session = context.new_cdp_session(page)
    events: list[dict[str, Any]] = []
    finished: list[bool] = []
    session.on("Tracing.dataCollected", lambda message: events.extend(message["value"]))
    session.on("Tracing.tracingComplete", lambda message: finished.append(True))
    config = {"traceConfig": {"includedCategories": WASM_TRACE}, "transferMode": "ReportEvents"}
    session.send("Tracing.start", config)
    action()
    session.send("Tracing.end")
    while not finished:
        page.wait_for_timeout(100)  # the trace arrives in pieces after its end
    session.detach()
    return {event["name"] for event in events if event.get("name", "").startswith("v8.wasm.")}


def test_a_repeat_visit_runs_the_wasm_compiled_on_the_first(
    browser: Any, widget_site_url: str, tmp_path: Path
) -> None:
    """Chromium keeps the machine code it compiles from pyodide.asm.wasm beside its HTTP cache's entry for
    the URL: the worker hands Pyodide the HTTP cache's response (asked for with force-cache, so the server is
    not asked again), and the next visit skips the compilation. Read from Cache Storage or made in script,
    the module was compiled again on every visit."""
    with persistent_browser(browser, tmp_path / "profile") as context:
        page = context.pages[0] if context.pages else context.new_page()
        watch = PageWatch(page)
        page.goto(widget_site_url)
        stored = "v8.wasm.cachedModule" in _wasm_events(context, page, lambda: start(page))
        for _ in range(60):  # stored once the optimising compiler has compiled enough of it
            if stored:
                break
            stored = "v8.wasm.cachedModule" in _wasm_events(
                context, page, lambda: page.wait_for_timeout(1000)
            )
        assert stored, "Chromium never stored the compiled module"
        page.goto(widget_site_url)  # the reader comes back
        events = _wasm_events(context, page, lambda: start(page))
        assert "v8.wasm.moduleCacheHit" in events, events
        watch.check()


def test_every_fixture_page_loads_cleanly(page: Any, widget_site_url: str, tmp_path: Path) -> None:
    for path in ("", "other/", "serving/"):
        page.goto(widget_site_url + path)
        page.wait_for_load_state("load")


SIM = "#widget-serving-simulator"  # the batching lesson's controls: scheduler, rate, output
MAP = "#widget-serving-simulator-2"  # the paging lesson's: memory, pool size, block size
CHATS = "#widget-serving-simulator-3"  # conversations, the prefix share and pipeline stages


@pytest.fixture(scope="module")
def serving_page(browser: Any, widget_site_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = PageWatch(page)
    page.goto(widget_site_url + "serving/")
    start(page, SIM)  # widgets start when the reader asks; the page's other widget then goes live too
    yield page
    context.close()
    watch.check()


def chart_rows(page: Any, widget: str, chart: str) -> list[list[str]]:
    return page.eval_on_selector_all(
        f'{widget} [data-widget-chart="{chart}"] tbody tr',
        "trs => trs.map(tr => [...tr.children].map(c => c.textContent))",
    )


def test_serving_simulator_shows_only_the_blocks_controls(serving_page: Any) -> None:
    labels = serving_page.eval_on_selector_all(f"{SIM} form label", "ls => ls.map(l => l.htmlFor)")
    assert labels == [f"widget-serving-simulator-{name}" for name in ("scheduler", "rate", "output")]
    # live, the chart is one drawing for the width it has (the build's wide and narrow ones are replaced);
    # the widget is live before its charts are (Vega draws them in steps), so wait for the chart's own state
    serving_page.wait_for_selector(f'{SIM} [data-widget-chart="timeline"] .rp-chart--live')
    assert serving_page.locator(f'{SIM} [data-widget-chart="timeline"] svg').count() == 1


def test_serving_simulator_timeline_moves_with_the_scheduler(serving_page: Any) -> None:
    state = {"requests": 40, "rate": 20, "capacity_tokens": 12000, "compare": "static,continuous",
             "charts": "timeline,latency", "controls": "scheduler,rate,output"}  # fmt: skip
    wait_rendered(serving_page, SIM, lambda: serving_page.select_option(f"{SIM}-scheduler", "static"))
    result = compute("serving-simulator", {**state, "scheduler": "static"})
    assert shown(serving_page, SIM) == result["shown"]
    assert chart_rows(serving_page, SIM, "timeline") == result["charts"]["timeline"]["rows"]
    caption = serving_page.inner_text(f'{SIM} [data-widget-chart="timeline"] .rp-chart__caption')
    assert caption.startswith("The first")
    assert "of static batching" in caption
    serving_page.wait_for_selector(f'{SIM} [data-widget-chart="timeline"] .rp-chart--live')
    serving_page.wait_for_url("**serving-simulator.scheduler=static*")
    serving_page.fill(f"{SIM}-rate", "fast")  # an error renders no answer: wait for the message instead
    serving_page.wait_for_function(
        f"() => document.querySelector('{SIM}-error').textContent.includes('Arrival rate')"
    )
    wait_rendered(serving_page, SIM, lambda: serving_page.fill(f"{SIM}-rate", "20"))
    assert serving_page.inner_text(f"{SIM}-error") == ""


def test_serving_simulator_memory_map_moves_with_the_allocator(serving_page: Any) -> None:
    serving_page.locator(MAP).scroll_into_view_if_needed()
    serving_page.wait_for_selector(f'{MAP}[data-rp-state="live"]')
    wait_rendered(serving_page, MAP, lambda: serving_page.select_option(f"{MAP}-memory", "paged"))
    block = {"requests": 60, "rate": 40, "output_spread": 64, "capacity_tokens": 12000,
             "controls": "memory,capacity_tokens,block_tokens", "charts": "memory"}  # fmt: skip
    result = compute("serving-simulator", {**block, "memory": "paged"})
    assert shown(serving_page, MAP)["kv_waste_fraction"] == result["shown"]["kv_waste_fraction"]
    assert chart_rows(serving_page, MAP, "memory") == result["charts"]["memory"]["rows"]
    serving_page.wait_for_selector(f'{MAP} [data-widget-chart="memory"] .rp-chart--live')


def test_serving_simulator_takes_conversations_prefix_shares_and_pipeline_stages(serving_page: Any) -> None:
    serving_page.locator(CHATS).scroll_into_view_if_needed()
    serving_page.wait_for_selector(f'{CHATS}[data-rp-state="live"]')
    labels = serving_page.eval_on_selector_all(f"{CHATS} form label", "ls => ls.map(l => l.htmlFor)")
    names = ("turns", "think_s", "prefix_share", "prefixes", "pipeline_stages")
    assert labels == [f"widget-serving-simulator-3-{name}" for name in names]
    block = {"requests": 30, "shared_prefix": 1024, "prefix_caching": True,
             "controls": ",".join(names), "charts": "latency"}  # fmt: skip
    wait_rendered(serving_page, CHATS, lambda: serving_page.fill(f"{CHATS}-turns", "3"))
    wait_rendered(serving_page, CHATS, lambda: serving_page.fill(f"{CHATS}-prefix_share", "0.5"))
    result = compute("serving-simulator", {**block, "turns": "3", "prefix_share": "0.5"})
    assert shown(serving_page, CHATS) == result["shown"]
    assert chart_rows(serving_page, CHATS, "latency") == result["charts"]["latency"]["rows"]
    serving_page.fill(f"{CHATS}-pipeline_stages", "40")  # past the bound: the message names the control
    serving_page.wait_for_function(
        f"() => document.querySelector('{CHATS}-error').textContent.includes('Pipeline stages')"
    )
    wait_rendered(serving_page, CHATS, lambda: serving_page.fill(f"{CHATS}-pipeline_stages", "2"))
    assert serving_page.inner_text(f"{CHATS}-error") == ""
    staged = compute(
        "serving-simulator", {**block, "turns": "3", "prefix_share": "0.5", "pipeline_stages": "2"}
    )
    # Two stages hold half the weights each: a larger KV pool, the same step times (capacity, not speed).
    assert shown(serving_page, CHATS) == staged["shown"]
    assert staged["shown"]["kv_capacity_tokens"] != result["shown"]["kv_capacity_tokens"]
    assert "as pipeline stages" in serving_page.text_content(f"{CHATS} .rp-widget__summary")


def test_two_widgets_of_a_kind_keep_their_own_state_in_the_address(
    browser: Any, widget_site_url: str
) -> None:
    """The serving fixture has two serving simulators: each writes and restores its own keys."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = PageWatch(page)
    page.goto(widget_site_url + "serving/")
    start(page, SIM)
    page.wait_for_selector(f'{MAP}[data-rp-state="live"]', timeout=LIVE_TIMEOUT_MS)
    second_scheduler = page.input_value(f'{MAP} input[name="scheduler"]')  # hidden: its block fixes it
    assert second_scheduler != "static"
    wait_rendered(page, SIM, lambda: page.select_option(f"{SIM}-scheduler", "static"))
    wait_rendered(page, MAP, lambda: page.select_option(f"{MAP}-memory", "paged"))
    page.wait_for_function(
        """() => { const p = new URLSearchParams(location.search);
          return p.get('serving-simulator.scheduler') === 'static'
            && p.get('serving-simulator-2.memory') === 'paged' && !p.has('serving-simulator.memory'); }"""
    )
    page.reload()
    assert page.input_value(f"{SIM}-scheduler") == "static"
    assert page.input_value(f"{MAP}-memory") == "paged"
    assert page.input_value(f'{MAP} input[name="scheduler"]') == second_scheduler  # not the first's "static"
    context.close()
    watch.check()
