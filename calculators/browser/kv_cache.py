"""The KV-cache calculator: how big a batch's cache is, whether it fits, and what reading it costs decode.

The reader picks a model, a GPU setup, the formats of the weights and of the cache, a batch and a context;
the widget shows the bytes per token, the cache of one sequence and of the batch, the memory left for it, the
largest batch and context that fit, and a decode step with and without reading the cache. Every number is a
``Scenario`` call; a setup that does not fit is still computed, as a what-if, and says so.
"""

from __future__ import annotations

from typing import Any

from calculators.browser.bounds import at_spec_peak, shown_with_bound
from calculators.browser.charts import chart_payload
from calculators.browser.inputs import number
from calculators.hardware import GPUS
from calculators.models import MODELS
from calculators.precision import PRECISIONS
from calculators.scenario import Scenario
from calculators.units import format_duration, format_value

NAME = "kv-cache"
DEFAULTS: dict[str, Any] = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "gpus": 1,
    "precision": "bf16",
    "kv_format": "bf16",
    "batch": 64,
    "context": 2000,
}
CONTEXT_RANGE = (128, 131072)  # the context slider: log scale, 128 to 128k tokens
KV_FORMATS = ("bf16", "fp8")  # what engines offer for the cache (vLLM's --kv-cache-dtype auto / fp8)
ASSUMPTIONS = (
    "Memory as a serving engine plans it: the memory the GPU reports, 90% of it usable, less the weights, a "
    "runtime reserve and the activations of the largest step; what remains holds the KV cache. A decode "
    "step reads every weight once and, with the cache counted, every cached key and value of every sequence."
)


def state_from(raw: dict[str, Any]) -> dict[str, Any]:
    """The widget state with defaults filled in, numbers parsed, and unknown keys dropped."""
    merged = {**DEFAULTS, **{key: value for key, value in raw.items() if key in DEFAULTS}}
    return {
        "model": str(merged["model"]).strip(),
        "gpu": str(merged["gpu"]).strip(),
        "gpus": number(merged["gpus"]),
        "precision": str(merged["precision"]).strip(),
        "kv_format": str(merged["kv_format"]).strip(),
        "batch": number(merged["batch"]),
        "context": number(merged["context"]),
    }


def scenario_for(state: dict[str, Any], *, kv_traffic: bool = False) -> Scenario:
    return Scenario(
        state["model"],
        state["gpu"],
        gpus=state["gpus"],
        precision=state["precision"],
        kv_cache_format=state["kv_format"],
        kv_traffic=kv_traffic,
        ignore_memory=True,
    )


def python_source(state: dict[str, Any]) -> str:
    """The calculator calls behind the numbers, as a reader can edit and run them."""
    return (
        "from calculators import Scenario\n"
        "\n"
        f"setup = dict(gpus={state['gpus']!r}, precision={state['precision']!r}, "
        f"kv_cache_format={state['kv_format']!r}, ignore_memory=True)\n"
        f"scenario = Scenario({state['model']!r}, {state['gpu']!r}, kv_traffic=False, **setup)\n"
        f"batch, context = {state['batch']!r}, {state['context']!r}\n"
        'print(f"KV per token: {scenario.kv_bytes_per_token:,.0f} bytes")\n'
        'print(f"KV of the batch: {scenario.kv_cache_bytes(context, batch) / 1e9:.1f} GB")\n'
        'print(f"memory left for it: {scenario.kv_budget_bytes / 1e9:.1f} GB")\n'
        'print(f"largest batch at this context: {scenario.max_batch(context)}")\n'
        f"with_kv = Scenario({state['model']!r}, {state['gpu']!r}, kv_traffic=True, **setup)\n"
        'print(f"decode step: {scenario.decode(batch, context).time_s * 1e3:.2f} ms weights only, "\n'
        '      f"{with_kv.decode(batch, context).time_s * 1e3:.2f} ms reading the cache too")\n'
        "# The same steps at spec-sheet peaks: the bound each time is shown beside\n"
        f'peak = Scenario({state["model"]!r}, {state["gpu"]!r}, mode="peak", kv_traffic=False, **setup)\n'
        f'peak_kv = Scenario({state["model"]!r}, {state["gpu"]!r}, mode="peak", kv_traffic=True, **setup)\n'
        'print(f"bound: {peak.decode(batch, context).time_s * 1e3:.2f} ms weights only, "\n'
        '      f"{peak_kv.decode(batch, context).time_s * 1e3:.2f} ms reading the cache too")\n'
    )


def chart_params(state: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The course's kv-cache chart for this setup; its x axis reaches at least twice the chosen context."""
    longest = 16_384
    while longest < 2 * state["context"] and longest < 1_048_576:
        longest *= 2
    params = {
        "model": state["model"], "gpu": state["gpu"], "gpus": state["gpus"], "precision": state["precision"],
        "kv_format": state["kv_format"], "batch": state["batch"], "context": state["context"],
        "max_context": longest,
    }  # fmt: skip
    return {"kv": ("kv-cache", params)}


def compute(raw: dict[str, Any]) -> dict[str, Any]:
    """Everything the widget shows for ``raw`` control values; raises the calculators' ``ValueError``."""
    state = state_from(raw)
    scenario = scenario_for(state)
    with_kv = scenario_for(state, kv_traffic=True)
    batch, context = state["batch"], state["context"]
    per_token = scenario.kv_bytes_per_token
    batch_bytes = scenario.kv_cache_bytes(context, batch)
    budget = scenario.kv_budget_bytes
    weights_only = scenario.decode(batch, context)
    reading = with_kv.decode(batch, context)
    # The same two steps at spec peaks: the lower bound shown beside each, as the lessons print it.
    bound = at_spec_peak(
        lambda: {
            "decode_step_weights_only_s": scenario_for(state).decode(batch, context).time_s,
            "decode_step_with_kv_s": scenario_for(state, kv_traffic=True).decode(batch, context).time_s,
        }
    )
    bounds = bound or {}
    fits = budget > 0 and batch_bytes <= budget
    largest_batch = scenario.max_batch(context)
    longest = scenario.setup.memory.max_context(batch) if budget > 0 else 0
    values = {
        "kv_bytes_per_token": per_token,
        "kv_bytes_per_sequence": scenario.kv_cache_bytes(context),
        "kv_bytes_batch": batch_bytes,
        "kv_budget_bytes": budget,
        "weight_bytes": scenario.weight_bytes,
        "max_batch": largest_batch,
        "max_context": longest,
        "decode_step_weights_only_s": weights_only.time_s,
        "decode_step_with_kv_s": reading.time_s,
        "kv_read_bytes": reading.kv_cache_bytes,
    }
    exact = format_value(per_token, "bytes", decimals=0)
    shown = {
        "kv_bytes_per_token": f"{format_value(per_token, 'KiB')} ({exact})",
        "kv_bytes_per_sequence": format_value(scenario.kv_cache_bytes(context), "MB"),
        "kv_bytes_batch": format_value(batch_bytes, "GB") + ("" if fits else ", does not fit"),
        "weight_bytes": format_value(scenario.weight_bytes, "GB"),
        "kv_budget_bytes": format_value(max(budget, 0.0), "GB"),
        "max_batch": f"{largest_batch:,} sequences",
        "max_context": (
            format_value(longest, "tokens", decimals=0) if longest < 1_048_576 else "over a million tokens"
        ),
        "decode_step_weights_only_s": shown_with_bound(
            weights_only.time_s, bounds.get("decode_step_weights_only_s"), format_duration),
        "decode_step_with_kv_s": shown_with_bound(
            reading.time_s, bounds.get("decode_step_with_kv_s"), format_duration),
    }  # fmt: skip
    summary = (
        f"{scenario.model.name}: {shown['kv_bytes_per_token']} of KV cache per token, so {batch:,} "
        f"sequences of {context:,} tokens hold {format_value(batch_bytes, 'GB')} against "
        f"{shown['kv_budget_bytes']} left for it; at most {largest_batch:,} such sequences fit. "
        "Reading that cache every step takes a decode step from "
        f"{shown['decode_step_weights_only_s']} to {shown['decode_step_with_kv_s']}."
    )
    if not fits:
        summary += " This batch does not fit in the memory: a what-if."
    return {
        "state": state,
        "values": values,
        "bounds": bounds,
        "shown": shown,
        "summary": summary,
        "python": python_source(state),
        "charts": {key: chart_payload(*chart) for key, chart in chart_params(state).items()},
    }


def options() -> dict[str, list[tuple[str, str]]]:
    """The presets the controls offer: (key, display name)."""
    return {
        "model": [(key, model.name) for key, model in MODELS.items()],
        "gpu": [(key, gpu.name) for key, gpu in GPUS.items()],
        "precision": [(key, precision.name.upper()) for key, precision in PRECISIONS.items()],
        "kv_format": [(key, PRECISIONS[key].name.upper()) for key in KV_FORMATS],
    }
