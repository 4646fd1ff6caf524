"""The lesson author's reference, written from the calculators themselves so that it cannot go out of date.

Every section is Markdown generated at build time from the objects a lesson can reach: the names of the
expression language, the quantities of :class:`~calculators.Scenario` and of what its methods return (with
their docstrings, a ready-to-paste ``{{ ... }}`` and the value it gives today), the display units, the chart
builders and their parameters, the widgets' inputs, and the GPU and model presets with their sources. A
quantity renamed in the calculators disappears from the page; one added appears; an example that stops
evaluating fails the build. :mod:`course.author_reference.extension` puts these sections into a page.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable, Iterable
from typing import Any

from calculators.expressions import NAMESPACE, evaluate
from calculators.hardware import GPU, GPUS
from calculators.models import MODELS, Model
from calculators.passes import PassResult
from calculators.precision import PRECISIONS
from calculators.scenario import Scenario
from calculators.serving import MemoryFootprint, RequestTiming
from calculators.setting import ModelSetting, setting_key, site_setting, using
from calculators.speculative import SpeculativeResult
from calculators.units import UNITS, format_value
from course.numbers.value_cache import value_cache

# Example arguments for methods whose parameters have no default, by parameter name.
EXAMPLE_ARGUMENTS: dict[str, str] = {
    "prompt_tokens": "2000",
    "context_tokens": "2000",
    "precision": '"bf16"',
    "acceptance": "0.8",
    "proposed": "4",
}
# The objects a lesson reaches through an expression, and the expression that reaches each.
QUANTITY_SOURCES: dict[str, tuple[type, str]] = {
    "scenario": (Scenario, "Scenario()"),
    "pass-result": (PassResult, "Scenario().decode()"),
    "request-timing": (RequestTiming, "Scenario().request(2000, 256)"),
    "memory-footprint": (MemoryFootprint, "Scenario().memory(batch=8, context_tokens=4000)"),
    "speculative-result": (SpeculativeResult, "Scenario().speculative(0.8, 4)"),
    "gpu": (GPU, 'gpu("h100-sxm")'),
    "model": (Model, 'model("llama-3.1-8b")'),
}
# Methods that are no quantity a lesson can write: plain data for JSON, and Scenario.step, whose arguments are
# lists of contexts and chunks, which the expression language cannot write (and which fails without them).
NOT_QUANTITIES = frozenset({"as_dict", "step"})
FIELD_COMMENT_RE = re.compile(r"^    (?P<name>[a-z_][a-z0-9_]*): [^#\n]+#(?P<doc>[^\n]*)$", re.MULTILINE)
# The display unit suggested for a quantity, from how its name ends or what it contains (first match wins).
UNIT_BY_NAME: tuple[tuple[Callable[[str], bool], str], ...] = (
    (lambda n: n.endswith("flops_per_s"), "TFLOP/s"),
    (lambda n: n.endswith("bytes_per_s"), "TB/s"),
    (lambda n: n.endswith("flop_per_byte"), "FLOP/byte"),
    (lambda n: n.endswith("tokens_per_s") or n.endswith("tokens_per_s_total"), "tokens/s"),
    (lambda n: "tokens_per_s" in n, "tokens/s"),
    (lambda n: n.endswith("_ms"), "number"),
    (lambda n: n.endswith("_s"), "ms"),
    (lambda n: "bytes" in n, "GB"),
    (lambda n: "flops" in n, "GFLOP"),
    (lambda n: "params" in n, "B"),
    (lambda n: "steps" in n, "steps"),
    (lambda n: "tokens" in n, "tokens"),
)


def first_paragraph(obj: Any) -> str:
    """The first paragraph of ``obj``'s docstring on one line ("" when it has none of its own)."""
    doc = inspect.getdoc(obj) or ""
    if isinstance(obj, property) and obj.fget is not None:
        doc = inspect.getdoc(obj.fget) or ""
    return " ".join(doc.split("\n\n")[0].split())


def suggested_unit(name: str) -> str:
    """A display unit that suits a quantity called ``name`` (``time_s`` -> ms, ``weight_bytes`` -> GB)."""
    return next((unit for matches, unit in UNIT_BY_NAME if matches(name)), "number")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or "—"


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def _signature(obj: Callable[..., Any]) -> str:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    parameters = [p for p in signature.parameters.values() if p.name != "self"]
    return "(" + ", ".join(_parameter(p) for p in parameters) + ")"


def _parameter(parameter: inspect.Parameter) -> str:
    prefix = "*" if parameter.kind is inspect.Parameter.VAR_POSITIONAL else ""
    if parameter.default is inspect.Parameter.empty:
        return prefix + parameter.name
    return f"{parameter.name}={parameter.default!r}"


@dataclasses.dataclass(frozen=True)
class Quantity:
    """One public member of a calculator object, with an expression reaching it and what that gives."""

    name: str
    signature: str  # "(prompt_tokens, batch=1)" for a method, "" otherwise
    kind: str  # "property", "method" or "field"
    doc: str
    expression: str
    value: Any

    @property
    def is_number(self) -> bool:
        return isinstance(self.value, int | float) and not isinstance(self.value, bool)

    @property
    def unit(self) -> str:
        return suggested_unit(self.name)

    @property
    def insertion(self) -> str | None:
        """The ``{{ ... }}`` a lesson writes to show this quantity (None when it is not a number)."""
        if not self.is_number:
            return None
        whole = " | .0f" if isinstance(self.value, int) else ""
        return f"{{{{ {self.expression} | {self.unit}{whole} }}}}"

    @property
    def shown(self) -> str:
        """What the insertion renders today, or a short description of a value that is not a number."""
        if self.is_number:
            decimals = 0 if isinstance(self.value, int) else None
            return format_value(float(self.value), self.unit, decimals=decimals)
        if isinstance(self.value, str | bool) or self.value is None:
            text = repr(self.value)
            return _code(text if len(text) <= 48 else text[:45] + "…'")
        return type(self.value).__name__


def _example_call(name: str, function: Callable[..., Any]) -> str | None:
    arguments = []
    for parameter in list(inspect.signature(function).parameters.values())[1:]:
        if parameter.default is not inspect.Parameter.empty:
            continue
        if parameter.name not in EXAMPLE_ARGUMENTS:
            return None
        arguments.append(EXAMPLE_ARGUMENTS[parameter.name])
    return f"{name}({', '.join(arguments)})"


def quantities(cls: type, reached_by: str) -> list[Quantity]:
    """Every public property, method and dataclass field of ``cls``, evaluated through ``reached_by``."""
    found: list[Quantity] = []
    comments = field_comments(cls)
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    members: list[tuple[str, str, Any]] = [(name, "field", None) for name in sorted(fields)]
    for name, member in sorted(vars(cls).items()):
        if name.startswith("_") or name in fields:
            continue
        if isinstance(member, property):
            members.append((name, "property", member))
        elif inspect.isfunction(member) and name not in NOT_QUANTITIES:
            members.append((name, "method", member))
    for name, kind, member in members:
        call = _example_call(name, member) if kind == "method" else name
        if call is None:
            continue
        expression = f"{reached_by}.{call}"
        value = _example_value(expression)  # an example that stops working fails the build, as it should
        doc = first_paragraph(member) if member is not None else comments.get(name, "")
        signature = _signature(member) if kind == "method" else ""
        found.append(Quantity(name, signature, kind, doc, expression, value))
    return found


def _example_value(expression: str) -> Any:
    """``expression`` evaluated in the site's setting, as a lesson's insertion prints it.

    A number is kept in the figures' cache (:mod:`course.numbers.value_cache`, per state of the calculators):
    one example, the speculative break-even batch, runs the simulator for most of a second, every build. Its
    keys are the reference's own, by type: the cache holds floats, a lesson's figure of the same expression is
    stored as a float, and the reference shows an ``int`` as one (``| number``, not ``| number | .0f``).
    """
    setting = site_setting()
    cache = value_cache()
    keys = {kind: f"{setting_key(setting)} reference {kind.__name__} {expression}" for kind in (int, float)}
    for kind, key in keys.items():
        stored = cache.get(key)
        if stored is not None:
            return kind(stored)
    with using(setting):
        value = evaluate(expression)
    if type(value) in keys:  # not a bool or an object: those are computed each time, cheaply
        cache.put(keys[type(value)], value)
    return value


def field_comments(cls: type) -> dict[str, str]:
    """The trailing ``# comment`` of each field written in ``cls``'s body: the doc a dataclass field has."""
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    return {m["name"]: m["doc"].strip() for m in FIELD_COMMENT_RE.finditer(source)}


def quantities_markdown(key: str) -> str:
    """A table of one object's quantities: name, what it is, the expression, and what it gives."""
    cls, reached_by = QUANTITY_SOURCES[key]
    lines = [
        f"Reached with {_code(reached_by)}.",
        "",
        "| quantity | what it is | write in a lesson | today |",
        "| --- | --- | --- | --- |",
    ]
    for quantity in quantities(cls, reached_by):
        written = _code(quantity.insertion or quantity.expression)
        name = _code(quantity.name + quantity.signature)
        lines.append(f"| {name} | {_cell(quantity.doc)} | {written} | {_cell(quantity.shown)} |")
    return "\n".join(lines) + "\n"


def expression_names_markdown() -> str:
    """The names an expression may use, with their signatures and what they are."""
    lines = ["| name | what it is |", "| --- | --- |"]
    for name, obj in NAMESPACE.items():
        doc = first_paragraph(obj) if not inspect.isbuiltin(obj) else f"Python's built-in {name}."
        target = obj.__init__ if inspect.isclass(obj) else obj
        lines.append(f"| {_code(name + _signature(target))} | {_cell(doc)} |")
    return "\n".join(lines) + "\n"


def units_markdown() -> str:
    """Every display unit: its name in ``{{ ... }}``, what it divides by, and how a value looks."""
    lines = ["| unit | divides the base value by | example |", "| --- | --- | --- |"]
    for unit in UNITS.values():
        lines.append(
            f"| {_code(unit.name)} | {unit.scale:g} | {format_value(4.776 * unit.scale, unit.name)} |"
        )
    return "\n".join(lines) + "\n"


def charts_markdown() -> str:
    """Every chart a ``chart`` block may name, with each parameter's default, meaning and an example."""
    from calculators.charts import CHARTS

    blocks: list[str] = []
    for kind in CHARTS.values():
        lines = [
            f"### `{kind.name}`",
            "",
            f"{kind.summary[:1].upper()}{kind.summary[1:]}.",
            "",
            "| parameter | default | what it sets | example |",
            "| --- | --- | --- | --- |",
        ]
        for param in kind.params:
            lines.append(
                f"| {_code(param.name)} | {_code(_yaml(param.default))} | {_cell(param.doc)} | "
                f"{_code(param.example)} |"
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def widgets_markdown() -> str:
    """Every widget a ``widget`` block may name, with its inputs and their defaults."""
    from calculators.browser import (
        kv_cache,
        parameter_counter,
        prefill_decode,
        roofline_explorer,
        serving_simulator,
    )

    lines = ["| widget | what it does | inputs and defaults |", "| --- | --- | --- |"]
    for module in (prefill_decode, roofline_explorer, kv_cache, serving_simulator, parameter_counter):
        inputs = ", ".join(_code(f"{key}: {_yaml(value)}") for key, value in module.DEFAULTS.items())
        lines.append(f"| {_code(module.NAME)} | {_cell(first_paragraph(module))} | {inputs} |")
    return "\n".join(lines) + "\n"


def _yaml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    return str(value)


def _notes(notes: Iterable[str]) -> str:
    return " ".join(note.strip() for note in notes)


def gpu_presets_markdown() -> str:
    """Every GPU preset: its dense, decimal peaks and ridge point, and the documents they come from."""
    lines = [
        "| key | GPU | BF16 dense | FP8 dense | bandwidth | memory | BF16 ridge point |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for gpu in GPUS.values():
        fp8 = gpu.dense_flops_per_s.get("fp8")
        lines.append(
            f"| {_code(gpu.key)} | {_cell(gpu.name)} "
            f"| {format_value(gpu.peak_flops_per_s('bf16'), 'TFLOP/s')} "
            f"| {format_value(fp8, 'TFLOP/s') if fp8 else '—'} "
            f"| {format_value(gpu.memory_bandwidth_bytes_per_s, 'TB/s')} "
            f"| {format_value(gpu.memory_capacity_bytes, 'GB')} "
            f"| {format_value(gpu.ridge_point_flop_per_byte('bf16'), 'FLOP/byte')} |"
        )
    return "\n".join(lines) + "\n\n" + _sources(GPUS.values())


def model_presets_markdown() -> str:
    """Every model preset: parameters, attention kind, and where its shapes come from."""
    lines = [
        "| key | model | parameters | active per token | attention |",
        "| --- | --- | --- | --- | --- |",
    ]
    for model in MODELS.values():
        active = format_value(model.active_params, "B") if model.moe else "all"
        lines.append(
            f"| {_code(model.key)} | {_cell(model.name)} | {format_value(model.params, 'B')} | {active} "
            f"| {model.attention} |"
        )
    return "\n".join(lines) + "\n\n" + _sources(MODELS.values())


def _sources(presets: Iterable[GPU | Model]) -> str:
    """Each preset's source and notes, as a list under its table (too long for a table cell)."""
    items = ["**Sources and notes.**", ""]
    for preset in presets:
        notes = f" {_notes(preset.notes)}" if preset.notes else ""
        items.append(f"- `{preset.key}`: {_link(preset.source)}.{notes}".replace("..", "."))
    return "\n".join(items) + "\n"


def _link(source: str) -> str:
    """Sources that are plain URLs become links (a source may list several, separated by "; ")."""
    parts = []
    for part in source.split("; "):
        parts.append(f"<{part}>" if part.startswith("https://") and " " not in part else part)
    return "; ".join(parts)


def precisions_markdown() -> str:
    """The number formats a scenario, chart or widget may name."""
    lines = ["| precision | bytes per value |", "| --- | --- |"]
    for key, precision in PRECISIONS.items():
        lines.append(f"| {_code(key)} | {precision.bytes_per_value:g} |")
    return "\n".join(lines) + "\n"


SECTIONS: dict[str, Callable[[], str]] = {
    "expression-names": expression_names_markdown,
    **{key: functools.partial(quantities_markdown, key) for key in QUANTITY_SOURCES},
    "units": units_markdown,
    "charts": charts_markdown,
    "widgets": widgets_markdown,
    "gpu-presets": gpu_presets_markdown,
    "model-presets": model_presets_markdown,
    "precisions": precisions_markdown,
}


def section_markdown(name: str) -> str:
    """The Markdown of one reference section; raises KeyError naming the known sections."""
    if name not in SECTIONS:
        raise KeyError(f"unknown reference section {name!r}; known: {', '.join(SECTIONS)}")
    return _section_markdown(name, site_setting())


@functools.cache
def _section_markdown(name: str, setting: ModelSetting | None) -> str:
    """A section as the calculators write it in ``setting`` (the key: a test may change the site's).

    Written once per process: the page's check and its rendering both ask for it, and the quantity tables
    evaluate some three hundred expressions. ``serve`` imports this module afresh when the calculators change.
    """
    return SECTIONS[name]()
