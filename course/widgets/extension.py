"""The ```widget block: a live calculator in a lesson, rendered complete at build time.

A lesson writes a fenced block with YAML: ``name`` picks the widget (``prefill-decode``,
``roofline-explorer``, ``kv-cache``, ``serving-simulator`` or ``parameter-counter``) and the other keys are
its default inputs; the serving simulator also takes ``controls`` (which inputs the reader may change) and
``charts`` (which of its charts to draw). At build time the block becomes the widget in its default state,
computed by the very function the browser runs (``calculators.browser``): labelled controls, numbers,
charts as static SVG, the stated assumptions and "the Python behind this". Readers without JavaScript,
browsers that cannot start Pyodide, and the PDF therefore see a whole figure; the page script
(overrides/assets/ridgepoint/widgets.js) makes it live in a Web Worker when the reader comes near it.
"""

from __future__ import annotations

import json
import re
from html import escape
from typing import Any

import yaml
from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

from calculators.browser import (
    bounds,
    kv_cache,
    parameter_counter,
    prefill_decode,
    roofline_explorer,
    serving_simulator,
)
from calculators.browser.bounds import bound_setting
from calculators.browser.inputs import describe_range
from calculators.charts.render import render_chart_data
from calculators.setting import describe, site_setting, using
from course.charts.markup import figure_html
from course.charts.stored_data import stored_chart_data
from course.lesson_format.background import BeingComputed, placeholder_box
from course.lesson_format.problems import Problem
from course.sanitising.source_files import load_yaml
from course.sanitising.trusted import store_trusted
from course.widgets.computed import computed_widget

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*widget\s*$")
TITLES = {
    prefill_decode.NAME: "Prefill vs decode simulator",
    roofline_explorer.NAME: "Roofline explorer",
    kv_cache.NAME: "KV-cache calculator",
    serving_simulator.NAME: "Serving simulator",
    parameter_counter.NAME: "Parameter counter",
}


class WidgetError(ValueError):
    """A widget block that cannot be rendered; the message names the block, the field and a fix."""

    def __init__(
        self, message: str, field: str = "widget", fix: str = "see the widget section of the lesson format"
    ) -> None:
        super().__init__(message)
        self.field = field
        self.fix = fix


def _attrs(**values: Any) -> str:
    return " ".join(f'{key.replace("_", "-")}="{escape(str(value))}"' for key, value in values.items())


def _text_input(widget_id: str, name: str, label: str, value: Any, hint: str) -> str:
    field_id = f"{widget_id}-{name}"
    return (
        f'<div class="rp-widget__field"><label for="{field_id}">{escape(label)}</label>'
        f'<input type="text" inputmode="decimal" autocomplete="off" spellcheck="false" '
        f"{_attrs(id=field_id, name=name, value=value, aria_describedby=f'{widget_id}-error')}>"
        f'<small class="rp-widget__hint">{escape(hint)}</small></div>'
    )


def _slider(widget_id: str, name: str, label: str, low: float, high: float) -> str:
    """A log-scale range input bound to the text input ``name``; widgets.js maps its 0..1000 positions."""
    field_id = f"{widget_id}-{name}-slider"
    return (
        '<div class="rp-widget__field rp-widget__field--slider"><label '
        f'for="{field_id}">{escape(label)}</label>'
        f'<input type="range" min="0" max="1000" step="1" '
        f"{_attrs(id=field_id, data_log_for=name, data_low=low, data_high=high)}></div>"
    )


def _select(widget_id: str, name: str, label: str, options: list[tuple[str, str]], chosen: str) -> str:
    field_id = f"{widget_id}-{name}"
    items = "".join(
        f'<option value="{escape(key)}"{" selected" if key == chosen else ""}>{escape(text)}</option>'
        for key, text in options
    )
    return (
        f'<div class="rp-widget__field"><label for="{field_id}">{escape(label)}</label>'
        f"<select {_attrs(id=field_id, name=name)}>{items}</select></div>"
    )


def _results(rows: list[tuple[str, str, str]]) -> str:
    items = "".join(
        f'<div class="rp-widget__result"><dt>{escape(label)}</dt><dd '
        f'data-shown="{escape(key)}">{escape(text)}</dd></div>'
        for key, label, text in rows
    )
    return f'<dl class="rp-widget__results">{items}</dl>'


def _figures(result: dict[str, Any]) -> str:
    """The widget's charts, drawn by the course's chart builders (static SVG from the chart cache).

    Each is the course's chart figure (``charts.js`` makes it a live Vega view from the pinned runtime) in a
    holder naming the chart for ``widgets.js``, which swaps the worker's rows into it by dataset name.
    """
    figures = []
    for key, payload in result["charts"].items():
        data = stored_chart_data(payload["chart"], payload["params"])
        rendered = render_chart_data(data)
        figure = figure_html(
            rendered,
            caption=data.caption,
            columns=data.table_columns,
            rows=data.table_rows,
            chart=payload["chart"],
        )
        # Marked as a widget's chart, so the page's own chart blocks can still be told apart (tests, CSS).
        figure = figure.replace('<figure class="rp-chart"', '<figure class="rp-chart rp-chart--widget"', 1)
        figures.append(f'<div class="rp-widget__figure" data-widget-chart="{escape(key)}">{figure}</div>')
    return "".join(figures)


def _prefill_decode_body(widget_id: str, result: dict[str, Any]) -> tuple[str, str, str, str]:
    state, shown, options = result["state"], result["shown"], prefill_decode.options()
    labels = prefill_decode.LABELS  # the same words as the widget's messages
    low, high = prefill_decode.PROMPT_RANGE
    controls = "".join(
        [
            _select(widget_id, "model", labels["model"], options["model"], state["model"]),
            _select(widget_id, "gpu", labels["gpu"], options["gpu"], state["gpu"]),
            _slider(widget_id, "prompt", "Prompt length (log scale)", low, high),
            _text_input(widget_id, "prompt", labels["prompt"], state["prompt"], describe_range(low, high)),
            _text_input(
                widget_id,
                "output",
                labels["output"],
                state["output"],
                f"tokens generated, {describe_range(*prefill_decode.OUTPUT_RANGE)}",
            ),
            _text_input(
                widget_id,
                "batch",
                labels["batch"],
                state["batch"],
                f"requests together, {describe_range(*prefill_decode.BATCH_RANGE)}",
            ),
            f'<div class="rp-widget__field rp-widget__field--switch"><input type="checkbox" role="switch" '
            f"{_attrs(id=f'{widget_id}-kv', name='kv')}{' checked' if state['kv'] else ''}>"
            f'<label for="{widget_id}-kv">Include KV-cache traffic (refined level)</label></div>',
        ]
    )
    results = _results(
        [
            ("prefill_time_s", "Prefill time", shown["prefill_time_s"]),
            ("decode_step_time_s", "Time per decode step", shown["decode_step_time_s"]),
            ("prefill_in_decode_steps", "Prefill, in decode steps", shown["prefill_in_decode_steps"]),
            ("time_to_first_token_s", "Time to first token", shown["time_to_first_token_s"]),
            ("total_time_s", "Total time", shown["total_time_s"]),
            ("prefill_bound", "Prefill is", shown["prefill_bound"]),
            ("decode_bound", "Decode is", shown["decode_bound"]),
            ("ridge_point", "Ridge point", shown["ridge_point"]),
        ]
    )
    return controls, results, _figures(result), prefill_decode.ASSUMPTIONS


def _roofline_explorer_body(widget_id: str, result: dict[str, Any]) -> tuple[str, str, str, str]:
    state, options = result["state"], roofline_explorer.options()
    low, high = roofline_explorer.INTENSITY_RANGE
    boxes = "".join(
        f'<label class="rp-widget__check"><input type="checkbox" name="gpus" value="{escape(key)}"'
        f"{' checked' if key in state['gpus'] else ''}> {escape(text)}</label>"
        for key, text in options["gpus"]
    )
    controls = "".join(
        [
            '<fieldset class="rp-widget__field '
            f'rp-widget__field--gpus"><legend>GPUs</legend>{boxes}</fieldset>',
            _select(widget_id, "precision", "Precision", options["precision"], state["precision"]),
            _slider(widget_id, "intensity", "Arithmetic intensity (log scale)", low, high),
            _text_input(
                widget_id,
                "intensity",
                roofline_explorer.INTENSITY_LABEL,
                state["intensity"],
                describe_range(low, high),
            ),
        ]
    )
    head = "<tr><th scope='col'>GPU</th><th scope='col'>Peak</th><th scope='col'>Ridge point</th>"
    head += "<th scope='col'>Attainable here</th><th scope='col'>Bound</th></tr>"
    body = "".join(
        f"<tr><th scope='row'>{escape(row['name'])}</th><td>{escape(row['shown']['peak'])}</td>"
        f"<td>{escape(row['shown']['ridge_point'])}</td><td>{escape(row['shown']['attainable'])}</td>"
        f"<td>{escape(row['shown']['bound'])}</td></tr>"
        for row in result["gpus"]
    )
    # A table wider than a phone scrolls inside its own box (a focusable region, so keyboards can scroll it)
    # instead of widening the page.
    results = (
        f'<div class="rp-widget__table-scroll" role="region" tabindex="0" aria-label="GPUs compared">'
        f'<table class="rp-widget__table" data-table="gpus"><thead>{head}</thead>'
        f"<tbody>{body}</tbody></table></div>"
    )
    return controls, results, _figures(result), roofline_explorer.ASSUMPTIONS


def _kv_cache_body(widget_id: str, result: dict[str, Any]) -> tuple[str, str, str, str]:
    state, shown, options = result["state"], result["shown"], kv_cache.options()
    low, high = kv_cache.CONTEXT_RANGE
    controls = "".join(
        [
            _select(widget_id, "model", "Model", options["model"], state["model"]),
            _select(widget_id, "gpu", "GPU", options["gpu"], state["gpu"]),
            _text_input(widget_id, "gpus", "GPUs", state["gpus"], "tensor parallel"),
            _select(widget_id, "precision", "Weights", options["precision"], state["precision"]),
            _select(widget_id, "kv_format", "KV cache", options["kv_format"], state["kv_format"]),
            _slider(widget_id, "context", "Context length (log scale)", low, high),
            _text_input(widget_id, "context", "Context tokens", state["context"], f"{low} to {high:,}"),
            _text_input(widget_id, "batch", "Batch size", state["batch"], "sequences cached at once"),
        ]
    )
    results = _results(
        [
            ("kv_bytes_per_token", "KV cache per token", shown["kv_bytes_per_token"]),
            ("kv_bytes_per_sequence", "One sequence", shown["kv_bytes_per_sequence"]),
            ("kv_bytes_batch", "The whole batch", shown["kv_bytes_batch"]),
            ("weight_bytes", "Weights", shown["weight_bytes"]),
            ("kv_budget_bytes", "Memory left for the cache", shown["kv_budget_bytes"]),
            ("max_batch", "Largest batch at this context", shown["max_batch"]),
            ("max_context", "Longest context at this batch", shown["max_context"]),
            ("decode_step_weights_only_s", "Decode step, weights only", shown["decode_step_weights_only_s"]),
            ("decode_step_with_kv_s", "Decode step, reading the cache", shown["decode_step_with_kv_s"]),
        ]
    )
    return controls, results, _figures(result), kv_cache.ASSUMPTIONS


def _form_text(value: Any) -> str:
    """A state value as its input holds it, written as widgets.js writes the default it compares it with
    (``urlText``): so an input the reader left alone never differs from its default, and the address keeps
    only what the reader changed (10.0 is "10", no value is "", a switch "1" or "0", a list comma-joined)."""
    if isinstance(value, list | tuple):
        return ",".join(str(item) for item in value)
    if isinstance(value, bool):
        return "1" if value else "0"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _hidden(name: str, value: Any) -> str:
    """An input the lesson keeps fixed: not shown, but read with the others and sent to the calculators."""
    return f'<input type="hidden" {_attrs(name=name, value=_form_text(value))}>'


def _switch(widget_id: str, name: str, label: str, on: bool) -> str:
    return (
        f'<div class="rp-widget__field rp-widget__field--switch"><input type="checkbox" role="switch" '
        f"{_attrs(id=f'{widget_id}-{name}', name=name)}{' checked' if on else ''}>"
        f'<label for="{widget_id}-{name}">{escape(label)}</label></div>'
    )


def _serving_simulator_body(widget_id: str, result: dict[str, Any]) -> tuple[str, str, str, str]:
    """The controls the block asks for (``controls``), every other input hidden; the run's figures."""
    state, shown, options = result["state"], result["shown"], serving_simulator.options()
    visible = list(dict.fromkeys(state["controls"]))  # in the block's order
    fields = []
    for name in visible + [name for name in serving_simulator.CONTROLS if name not in visible]:
        label, kind, hint = serving_simulator.CONTROLS[name]
        value = state[name]
        if name not in visible:
            fields.append(_hidden(name, value))
        elif kind == "select":
            fields.append(_select(widget_id, name, label, options[name], str(value)))
        elif kind == "switch":
            fields.append(_switch(widget_id, name, label, bool(value)))
        else:
            fields.append(_text_input(widget_id, name, label, _form_text(value), hint))
    fields += [_hidden(key, state[key]) for key in ("compare", "controls", "charts")]
    results = _results([(key, label, shown[key]) for key, label in serving_simulator.RESULTS])
    return "".join(fields), results, _figures(result), serving_simulator.ASSUMPTIONS


def _parameter_counter_body(widget_id: str, result: dict[str, Any]) -> tuple[str, str, str, str]:
    """A text input per configuration field (the tied switch beside them), a slider for the context."""
    state, shown = result["state"], result["shown"]
    fields = []
    for name, (label, low, high) in parameter_counter.FIELDS.items():
        if name == "context":
            fields.append(_slider(widget_id, name, "Context (log scale)", low, high))
        fields.append(_text_input(widget_id, name, label, state[name], describe_range(low, high)))
    fields.append(_switch(widget_id, "tied", "Output layer tied to the embedding", state["tied"]))
    results = _results([(key, label, shown[key]) for key, label in parameter_counter.RESULTS])
    return "".join(fields), results, _figures(result), parameter_counter.ASSUMPTIONS


# Widgets whose figures are times of passes, so depend on the model setting (the roofline explorer draws the
# spec sheet's two peaks, which no setting changes).
COMPUTES_PASSES = (prefill_decode.NAME, kv_cache.NAME, serving_simulator.NAME)
BODIES = {
    prefill_decode.NAME: _prefill_decode_body,
    roofline_explorer.NAME: _roofline_explorer_body,
    kv_cache.NAME: _kv_cache_body,
    serving_simulator.NAME: _serving_simulator_body,
    parameter_counter.NAME: _parameter_counter_body,
}
COMPUTE = {
    prefill_decode.NAME: prefill_decode.compute,
    roofline_explorer.NAME: roofline_explorer.compute,
    kv_cache.NAME: kv_cache.compute,
    serving_simulator.NAME: serving_simulator.compute,
    parameter_counter.NAME: parameter_counter.compute,
}
ALLOWED_KEYS = {
    prefill_decode.NAME: set(prefill_decode.DEFAULTS),
    roofline_explorer.NAME: set(roofline_explorer.DEFAULTS),
    kv_cache.NAME: set(kv_cache.DEFAULTS),
    serving_simulator.NAME: set(serving_simulator.DEFAULTS),
    parameter_counter.NAME: set(parameter_counter.DEFAULTS),
}


def parse_block(body: str) -> tuple[str, dict[str, Any]]:
    """Read a widget block's YAML: returns (name, defaults); raises :class:`WidgetError` with a fix."""
    try:
        data = load_yaml(body) or {}
    except yaml.YAMLError as error:
        raise WidgetError(
            f"widget block: the YAML does not parse ({error})", "widget", "write `name: prefill-decode`"
        ) from None
    if not isinstance(data, dict):
        raise WidgetError(
            "widget block: expected YAML keys such as `name: prefill-decode`", "widget", "add `name:`"
        )
    name = data.pop("name", None)
    if name not in COMPUTE:
        raise WidgetError(
            f"widget block: field 'name' is {name!r}; expected one of {', '.join(sorted(COMPUTE))}",
            "widget name",
            "`name: prefill-decode`, `roofline-explorer`, `kv-cache`, `serving-simulator` or "
            "`parameter-counter`",
        )
    unknown = sorted(set(data) - ALLOWED_KEYS[name])
    if unknown:
        raise WidgetError(
            f"widget {name!r}: unknown field(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(ALLOWED_KEYS[name]))}",
            f"widget {name!r} field {unknown[0]!r}",
            "remove or rename them",
        )
    return name, data


def render_widget(
    name: str, defaults: dict[str, Any], widget_id: str | None = None, url_prefix: str | None = None
) -> str:
    """The widget's HTML in its default state; raises :class:`WidgetError` if the defaults are rejected.

    ``url_prefix`` starts the address keys that hold the reader's inputs (``?serving-simulator.rate=20``): the
    widget's name unless the page has two of a kind (see :func:`instance_keys`).
    """
    try:
        with using(site_setting()):  # drawn as the browser computes it (calculators.browser.protocol)
            result = computed_widget(name, defaults, COMPUTE[name])
    except ValueError as error:
        raise WidgetError(
            f"widget {name!r}: its defaults are rejected by the calculators: {error}",
            f"widget {name!r} defaults",
            "give values the calculators accept (see the message)",
        ) from None
    widget_id = widget_id or f"widget-{name}"
    controls, results, figures, assumptions = BODIES[name](widget_id, result)
    if name in COMPUTES_PASSES:  # which setting its times are in, the page's (see calculators.setting)
        with using(site_setting()):
            bounded = bound_setting() is not None  # its times and rates carry their spec-peak bound
        assumptions = f"{describe(site_setting())} {bounds.NOTE + ' ' if bounded else ''}{assumptions}"
    data = _attrs(
        id=widget_id,
        data_widget=name,
        data_url_prefix=url_prefix or name,
        data_defaults=json.dumps(result["state"], separators=(",", ":")),
        aria_labelledby=f"{widget_id}-title",
    )
    return (
        f'<section class="rp-widget" {data}>'
        f'<header class="rp-widget__head"><h3 class="rp-widget__title" id="{widget_id}-title">'
        f"{escape(TITLES[name])}</h3>"
        # Without JavaScript the controls could not change anything: they are shown disabled and the status
        # says why; widgets.js enables them and offers a Start button (it never starts on its own).
        '<p class="rp-widget__status" role="status">Showing the default scenario, computed when '
        "the site was built. Changing the inputs needs JavaScript.</p></header>"
        f'<form class="rp-widget__form" aria-label="{escape(TITLES[name])} inputs" novalidate>'
        f'<fieldset class="rp-widget__controls" disabled>{controls}</fieldset></form>'
        f'<div class="rp-widget__start" hidden><button type="button" class="md-button md-button--primary '
        f'rp-widget__start-button">Start the live calculator</button> <small class="rp-widget__hint">'
        "Downloads Python into your browser once; the numbers and charts then follow your inputs."
        "</small></div>"
        f'<p class="rp-widget__error" id="{widget_id}-error" role="alert"></p>'
        f'<div class="rp-widget__output">{results}'
        f'<p class="rp-widget__summary" aria-live="polite">{escape(result["summary"])}</p>'
        f'<div class="rp-widget__figures">{figures}</div></div>'
        f'<p class="rp-widget__assumptions"><strong>Assumptions.</strong> {escape(assumptions)}</p>'
        f'<details class="rp-widget__python"><summary>The Python behind this</summary>'
        f'<label class="rp-widget__code-label" for="{widget_id}-code">Edit the calculator call and '
        "run it in your "
        f"browser</label>"
        f'<textarea class="rp-widget__code" id="{widget_id}-code" rows="9" spellcheck="false" readonly>'
        f"{escape(result['python'])}</textarea>"
        f'<button type="button" class="md-button rp-widget__run" disabled>Run</button>'
        '<pre class="rp-widget__run-output" aria-live="polite" data-empty="Output or traceback '
        'appears here."></pre>'
        f"</details></section>"
    )


def find_blocks(lines: list[str]) -> list[tuple[int, int, str]]:
    """Each widget fence as (first line index, closing line index or -1 if unclosed, body text)."""
    blocks = []
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        fence = match["fence"]
        end = next((j for j in range(index + 1, len(lines)) if lines[j].strip() == fence), -1)
        blocks.append((index, end, "\n".join(lines[index + 1 : end]) if end >= 0 else ""))
        if end < 0:
            break
        index = end + 1
    return blocks


def find_problems(markdown: str, path: str) -> list[Problem]:
    """Every widget block of a page that would not render: bad YAML, unknown widget or field,
    rejected defaults."""
    problems = []
    for start, end, body in find_blocks(markdown.splitlines()):
        if end < 0:
            problems.append(
                Problem(path, "widget", "the widget fence is never closed", "close it with ```", start + 1)
            )
            continue
        try:
            name, defaults = parse_block(body)
            with using(site_setting()):
                computed_widget(name, defaults, COMPUTE[name])
        except BeingComputed:
            continue  # under dev.py serve: checked on the rebuild that follows, when it is computed
        except WidgetError as error:
            problems.append(Problem(path, error.field, str(error), error.fix, start + 1))
        except ValueError as error:
            problems.append(
                Problem(
                    path,
                    "widget defaults",
                    f"rejected by the calculators: {error}",
                    "use accepted values",
                    start + 1,
                )
            )
    return problems


def instance_keys(name: str, number: int) -> tuple[str, str]:
    """The element id and address-key prefix of the ``number``-th widget ``name`` of a page (from 1).

    Two widgets of a kind on one page must not share the address keys, or the last to write wins and a
    reload restores both from one. The first keeps the plain name, so links shared before still work; the
    second is ``serving-simulator-2`` (no widget's name ends in a number, so prefixes cannot collide).
    """
    suffix = f"-{number}" if number > 1 else ""
    return f"widget-{name}{suffix}", f"{name}{suffix}"


class WidgetPreprocessor(Preprocessor):
    """Replace each ```widget fence with its rendered HTML (stashed, so Markdown leaves it alone)."""

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        index = 0
        seen: dict[str, int] = {}
        while index < len(lines):
            match = FENCE.match(lines[index])
            if not match:
                out.append(lines[index])
                index += 1
                continue
            fence, start = match["fence"], index
            end = next((j for j in range(index + 1, len(lines)) if lines[j].strip() == fence), None)
            if end is None:
                raise WidgetError(
                    f"widget block at line {start + 1}: the fence is never closed. Fix: end it with {fence}"
                )
            try:
                name, defaults = parse_block("\n".join(lines[start + 1 : end]))
            except WidgetError as error:
                raise WidgetError(f"line {start + 1}: {error}") from None
            seen[name] = seen.get(name, 0) + 1
            widget_id, url_prefix = instance_keys(name, seen[name])
            try:
                html = render_widget(name, defaults, widget_id, url_prefix)
            except BeingComputed:  # under dev.py serve: its default state is being computed by a worker
                html = placeholder_box("widget")
            out += ["", store_trusted(self.md, html), ""]
            index = end + 1
        return out


class WidgetExtension(Extension):
    """Registers the widget fence before pymdownx.superfences (priority 25) would take it as code."""

    def extendMarkdown(self, md: Markdown) -> None:
        md.preprocessors.register(WidgetPreprocessor(md), "ridgepoint_widgets", 27)


def makeExtension(**kwargs: Any) -> Extension:
    return WidgetExtension(**kwargs)
