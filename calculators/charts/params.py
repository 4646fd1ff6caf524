"""Chart parameters: what a lesson may write in a chart block, checked with messages that say how to fix it.

A lesson author sees these messages in the build output (and a widget author in the console), so each one
names the chart, the parameter, what was given, what is allowed, and an example that would work.
Standard library only: the browser glue validates the same parameters under Pyodide.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from calculators.hardware import GPUS
from calculators.interconnect import INTERCONNECTS
from calculators.models import MODELS
from calculators.passes import LEVELS
from calculators.precision import FORMATS, PRECISIONS

MAX_TOKENS = 1_048_576  # a chart axis beyond a million tokens says nothing a lesson needs
MAX_BATCH = 4096
MAX_OUTPUT_TOKENS = 512  # one bar per decode step: more would be an unreadable smear
MAX_INTENSITY = 1e6  # FLOP per byte: beyond a million-token prefill
MAX_RATE = 1000  # requests per second: beyond what the serving charts' few GPUs could take
MAX_GPUS = 16  # a serving chart simulates a few GPUs, not a cluster (each one is a run to compute)


class ChartError(ValueError):
    """A chart asks for something that cannot be drawn; ``parameter`` is ``"name"`` for an unknown chart."""

    def __init__(self, chart: str, parameter: str, problem: str, fix: str, line: int | None = None) -> None:
        self.line = line  # 1-based line within the chart block, where the reader (YAML) knows it
        self.chart = chart
        self.parameter = parameter
        self.problem = problem
        self.fix = fix
        super().__init__(f"chart {chart!r}: parameter {parameter!r}: {problem}. Fix: {fix}")


def _suggest(value: str, known: Iterable[str]) -> str:
    import difflib  # only when a parameter is wrong: importing it costs a widget's start ~0.1 s under Pyodide

    close = difflib.get_close_matches(value.lower(), list(known), n=2, cutoff=0.5)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


@dataclass(frozen=True)
class Param:
    """One parameter of a chart: its default, how to read a lesson's value, and an example for messages."""

    name: str
    default: Any
    read: Callable[[str, Any], Any]  # (parameter name, raw value) -> clean value; raises ValueError
    example: str  # a YAML line that works, shown as the fix
    doc: str


class _Invalid(ValueError):
    """A value was rejected; the message says what is allowed (the parameter name is added by the caller)."""


def read_count(low: int, high: int, what: str) -> Callable[[str, Any], int]:
    """A reader of a whole number from ``low`` to ``high`` (``what`` names it in the message)."""
    return lambda _, value: _whole(value, low, high, what)


def read_gpu(_: str, value: Any) -> str:
    if not isinstance(value, str) or value not in GPUS:
        shown = repr(value)
        hint = _suggest(value, GPUS) if isinstance(value, str) else ""
        raise _Invalid(f"unknown GPU preset {shown}{hint}; allowed: {', '.join(GPUS)}")
    return value


def read_gpus(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise _Invalid(f"expected a non-empty list of GPU presets, got {value!r}; allowed: {', '.join(GPUS)}")
    keys = tuple(read_gpu(name, item) for item in value)
    if len(set(keys)) != len(keys):
        raise _Invalid(f"a GPU is listed twice in {list(keys)!r}")
    return keys


def read_all_or_gpus(name: str, value: Any) -> tuple[str, ...]:
    if value == "all":
        return tuple(GPUS)
    return read_gpus(name, value)


def read_model(_: str, value: Any) -> str:
    if not isinstance(value, str) or value not in MODELS:
        hint = _suggest(value, MODELS) if isinstance(value, str) else ""
        raise _Invalid(f"unknown model preset {value!r}{hint}; allowed: {', '.join(MODELS)}")
    return value


MAX_MODELS_PER_CHART = 3  # one ordered colour each (calculators.charts.palette.SEQUENTIAL_COLOURS)


def read_models(name: str, value: Any) -> tuple[str, ...]:
    """One to three model presets, none twice."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not 1 <= len(value) <= MAX_MODELS_PER_CHART:
        raise _Invalid(f"expected a list of one to {MAX_MODELS_PER_CHART} model presets, got {value!r}")
    keys = tuple(read_model(name, item) for item in value)
    if len(set(keys)) != len(keys):
        raise _Invalid(f"a model is listed twice in {list(keys)!r}")
    return keys


def read_precision(_: str, value: Any) -> str:
    if not isinstance(value, str) or value not in PRECISIONS:
        raise _Invalid(f"unknown precision {value!r}; allowed: {', '.join(PRECISIONS)}")
    return value


def read_precisions(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise _Invalid(
            f"expected a non-empty list of precisions, got {value!r}; allowed: {', '.join(PRECISIONS)}"
        )
    keys = tuple(read_precision(name, item) for item in value)
    if len(set(keys)) != len(keys):
        raise _Invalid(f"a precision is listed twice in {list(keys)!r}")
    return keys


def read_formats(_: str, value: Any) -> tuple[str, ...]:
    """A non-empty list of number-format keys (``calculators.precision.FORMATS``), none twice."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise _Invalid(f"expected a non-empty list of formats, got {value!r}; allowed: {', '.join(FORMATS)}")
    for item in value:
        if item not in FORMATS:
            raise _Invalid(
                f"unknown format {item!r};{_suggest(str(item), FORMATS)} allowed: {', '.join(FORMATS)}"
            )
    if len(set(value)) != len(value):
        raise _Invalid(f"a format is listed twice in {list(value)!r}")
    return tuple(value)


def read_level(_: str, value: Any) -> str:
    if value not in LEVELS:
        raise _Invalid(f"unknown level {value!r}; allowed: {', '.join(LEVELS)}")
    return str(value)


def _whole(value: Any, low: int, high: int, what: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _Invalid(f"expected {what}, a whole number from {low:,} to {high:,}, got {value!r}")
    return value


def read_tokens(_: str, value: Any) -> int:
    return _whole(value, 1, MAX_TOKENS, "a token count")


def read_optional_tokens(name: str, value: Any) -> int | None:
    """``null`` (or ``false``) leaves the point off the chart."""
    if value is None or value is False:
        return None
    return read_tokens(name, value)


def read_output_tokens(_: str, value: Any) -> int:
    return _whole(value, 1, MAX_OUTPUT_TOKENS, "a number of output tokens")


def read_any_output_tokens(_: str, value: Any) -> int:
    """Output tokens where decode is drawn as one bar, so the count is not limited by bars."""
    return _whole(value, 1, MAX_TOKENS, "a number of output tokens")


def read_optional_intensity(_: str, value: Any) -> float | None:
    """An arithmetic intensity in FLOP per byte, from 0.01 to a million; ``null`` places nothing."""
    if value is None or value is False:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.01 <= value <= MAX_INTENSITY:
        raise _Invalid(
            f"expected an arithmetic intensity from 0.01 to {MAX_INTENSITY:,.0f} FLOP/byte, got {value!r}"
        )
    return float(value)


def read_choice(choices: tuple[str, ...]) -> Callable[[str, Any], str]:
    """A reader accepting one of ``choices`` (for switches such as a chart's ``span``)."""

    def read(_: str, value: Any) -> str:
        if value not in choices:
            raise _Invalid(f"expected one of {', '.join(choices)}, got {value!r}")
        return str(value)

    return read


def read_batches(_: str, value: Any) -> tuple[int, ...]:
    """Decode batch sizes to place; an empty list places none."""
    if value is None:
        return ()
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list | tuple):
        raise _Invalid(f"expected a list of batch sizes such as [1, 64], got {value!r}")
    batches = tuple(_whole(item, 1, MAX_BATCH, "a batch size") for item in value)
    if len(set(batches)) != len(batches):
        raise _Invalid(f"a batch size is listed twice in {list(batches)!r}")
    return batches


def read_batch(_: str, value: Any) -> int:
    return _whole(value, 1, MAX_BATCH, "a batch size")


MAX_TENSOR_PARALLEL = 64  # GPUs sharing one model in a memory chart: arithmetic only, no simulation


def read_gpu_count(_: str, value: Any) -> int:
    """GPUs a serving chart simulates (each one adds a run to compute)."""
    return _whole(value, 1, MAX_GPUS, "a number of GPUs")


def read_tensor_parallel(_: str, value: Any) -> int:
    """GPUs sharing one model by tensor parallelism, in a chart that only computes memory."""
    return _whole(value, 1, MAX_TENSOR_PARALLEL, "a number of GPUs")


def read_bool(_: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"expected true or false, got {value!r}")
    return value


def read_rates(_: str, value: Any) -> tuple[float, ...]:
    """Arrival rates in requests per second, each above 0 and at most 1,000, in increasing order."""
    if not isinstance(value, list | tuple) or not value:
        raise _Invalid(f"expected a list of arrival rates such as [5, 10, 20], got {value!r}")
    rates = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | float) or not 0 < item <= MAX_RATE:
            raise _Invalid(
                f"expected arrival rates above 0 and at most {MAX_RATE:,} per second, got {item!r}"
            )
        rates.append(float(item))
    if rates != sorted(set(rates)):
        raise _Invalid(f"list the rates once each, in increasing order, got {list(value)!r}")
    return tuple(rates)


def read_acceptances(_: str, value: Any) -> tuple[float, ...]:
    """Per-token acceptance rates of speculative decoding, each in [0, 1), at most three, in increasing order.

    Three: a chart tells ordered series apart by shade, and the course's ramp has three
    (:func:`calculators.charts.palette.sequential_colours`).
    """
    if not isinstance(value, list | tuple) or not 0 < len(value) <= 3:
        raise _Invalid(f"expected a list of one to three acceptance rates such as [0.6, 0.8], got {value!r}")
    rates = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | float) or not 0 <= item < 1:
            raise _Invalid(f"expected acceptance rates from 0 up to (not including) 1, got {item!r}")
        rates.append(float(item))
    if rates != sorted(set(rates)):
        raise _Invalid(f"list the acceptance rates once each, in increasing order, got {list(value)!r}")
    return tuple(rates)


def read_seconds(_: str, value: Any) -> float:
    """A latency bound in seconds, above 0 and at most a minute."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 60:
        raise _Invalid(f"expected seconds above 0 and at most 60 (0.05 is 50 ms), got {value!r}")
    return float(value)


def read_link(_: str, value: Any) -> str:
    if not isinstance(value, str) or value not in INTERCONNECTS:
        raise _Invalid(f"unknown link {value!r}; allowed: {', '.join(INTERCONNECTS)}")
    return value


def read_params(chart: str, declared: Iterable[Param], given: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``given`` against ``declared`` and return every parameter, defaults filled in.

    Raises :class:`ChartError` for the first unknown or invalid parameter, naming it and an example fix.
    """
    by_name = {param.name: param for param in declared}
    for key in given:
        if key not in by_name:
            known = ", ".join(by_name) or "none"
            hint = _suggest(str(key), by_name)
            raise ChartError(
                chart,
                str(key),
                f"unknown parameter{hint}; chart {chart!r} takes: {known}",
                f"remove {key!r} or use one of: {known}",
            )
    values: dict[str, Any] = {}
    for name, param in by_name.items():
        raw = given.get(name, param.default)
        try:
            values[name] = param.read(name, raw) if name in given else raw
        except ValueError as error:
            raise ChartError(chart, name, str(error), f"for example `{param.example}`") from None
    return values
