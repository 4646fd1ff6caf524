"""The serving simulator widget: a small workload served step by step; its timeline, KV memory and latencies.

One widget for every serving lesson. Its state holds every input of a run (the setup, the workload, the
scheduler and its token budgets, KV memory, disaggregated pools and link, the SLO); a lesson's block picks
which of them the reader sees as controls (``controls``) and which charts are drawn (``charts``); the other
inputs keep the block's values. So the batching lesson shows the scheduler and the arrival rate, the paging
lesson the allocator and the pool size, and a later lesson the token budget or the link, all with this code.

Runs stay small enough for Pyodide: at most 300 requests and a timeline of the first steps
(:mod:`calculators.charts.serving` runs the simulation once and its charts share it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from calculators.browser.bounds import at_spec_peak, shown_with_bound
from calculators.browser.charts import chart_payload
from calculators.browser.inputs import flag, names, number
from calculators.charts.params import ChartError, read_params
from calculators.charts.serving import (
    MAX_MICRO_BATCHES,
    MAX_PIPELINE_STAGES,
    MAX_PROMPT,
    MAX_RATE,
    MAX_REQUESTS,
    MAX_THINK_S,
    MAX_TURNS,
    SCHEDULER_NAMES,
    SIMULATION_PARAMS,
    run_summary,
    simulation,
    simulation_source,
)
from calculators.hardware import GPUS
from calculators.interconnect import INTERCONNECTS
from calculators.models import MODELS
from calculators.simulator.named import SCHEDULERS
from calculators.units import format_duration, format_value

NAME = "serving-simulator"
SIMULATION_DEFAULTS: dict[str, Any] = {param.name: param.default for param in SIMULATION_PARAMS}
CHARTS = {"timeline": "serving-timeline", "memory": "kv-memory", "latency": "serving-latency"}
DEFAULTS: dict[str, Any] = {
    **SIMULATION_DEFAULTS,
    "compare": [],
    "controls": ["scheduler", "rate", "prompt", "output"],
    "charts": ["timeline", "latency"],
}
# Inputs that are on/off switches, and inputs whose empty value means "not set" (None).
SWITCHES = ("kv_traffic", "burst", "speculative", "prefix_caching")
OPTIONAL = ("capacity_tokens", "max_sequence_tokens")
# Each input as a control: (label, kind, hint). The label is also how an error message names the input.
CONTROLS: dict[str, tuple[str, str, str]] = {
    "model": ("Model", "select", ""),
    "gpu": ("GPU", "select", ""),
    "kv_traffic": ("Count the KV cache reads in each step's time", "switch", ""),
    "scheduler": ("Scheduler", "select", ""),
    "requests": ("Requests", "text", f"1 to {MAX_REQUESTS}"),
    "rate": ("Arrival rate (requests per second)", "text", f"0.01 to {MAX_RATE:,.0f}"),
    "burst": ("All requests arrive at once", "switch", ""),
    "prompt": ("Prompt tokens (mean)", "text", f"1 to {MAX_PROMPT:,}"),
    "prompt_spread": ("Prompt spread (standard deviation)", "text", "0: every prompt the same length"),
    "output": ("Output tokens (mean)", "text", "1 to 4,096"),
    "output_spread": ("Output spread (standard deviation)", "text", "0: every answer the same length"),
    "batch_size": ("Static batch size", "text", "requests per batch, 1 to 1,024"),
    "max_sequences": ("Most requests running at once", "text", "1 to 4,096"),
    "max_batch_tokens": ("Prompt tokens per prefill step", "text", "continuous batching"),
    "token_budget": ("Token budget per step", "text", "chunked prefill: decode tokens plus prompt chunks"),
    "memory": ("KV memory", "select", ""),
    "block_tokens": ("Block size (tokens)", "text", "paged memory, 1 to 4,096"),
    "reserve": ("Contiguous slab per request", "select", ""),
    "capacity_tokens": ("KV pool (tokens)", "text", "empty: what the GPU's memory leaves"),
    "max_sequence_tokens": ("Longest request the engine accepts (tokens)", "text", "empty: the longest here"),
    "prefill_gpus": ("Prefill GPUs", "text", "disaggregated, 1 to 64"),
    "decode_gpus": ("Decode GPUs", "text", "disaggregated, 1 to 64"),
    "link": ("Link for the KV caches", "select", ""),
    "replicas": ("Colocated GPUs (one replica each)", "text", "prefill first, chunked or static, 1 to 64"),
    "slo_ttft_ms": ("SLO: time to first token (ms)", "text", "0.1 to 1,000,000"),
    "slo_tpot_ms": ("SLO: time per output token (ms)", "text", "0.01 to 100,000"),
    "seed": ("Random seed", "text", "another draw of the same workload"),
    "speculative": ("Speculative decoding", "switch", ""),
    "acceptance": ("Acceptance rate of a proposed token", "text", "speculative: 0.01 to 0.99"),
    "proposed": ("Tokens proposed per step", "text", "speculative: 1 to 16"),
    "drafter": ("Drafter", "select", ""),
    "shared_prefix": (
        "Shared system prompt (tokens)",
        "text",
        f"put before the prompts; 0 to {MAX_PROMPT:,}, 0: none",
    ),
    "prefix_share": (
        "Share of requests with a system prompt",
        "text",
        "with a system prompt: 0.01 to 1 (of conversations, with turns)",
    ),
    "prefixes": (
        "Distinct system prompts",
        "text",
        f"with a system prompt: 1 to {MAX_REQUESTS}, drawn at random",
    ),
    "turns": (
        "Turns per conversation",
        "text",
        f"each prompt holds the turns before it; 1 to {MAX_TURNS}, 1: no conversations",
    ),
    "think_s": (
        "Time between a conversation's turns (s)",
        "text",
        f"with turns: 0 to {MAX_THINK_S:,.0f}",
    ),
    "prefix_caching": ("Prefix caching", "switch", ""),
    "pipeline_stages": (
        "Pipeline stages (GPUs per replica)",
        "text",
        f"the layers split across them; 1 to {MAX_PIPELINE_STAGES}",
    ),
    "micro_batches": (
        "Micro-batches per step",
        "text",
        f"with pipeline stages: 1 to {MAX_MICRO_BATCHES}",
    ),
}
RESULTS = (
    ("output_tokens_per_s", "Output throughput"),
    ("ttft_p50_s", "Time to first token, median"),
    ("ttft_p99_s", "Time to first token, p99"),
    ("tpot_p50_s", "Time per output token, median"),
    ("tpot_p99_s", "Time per output token, p99"),
    ("itl_p99_s", "Inter-token latency, p99"),
    ("longest_stall_s", "Longest gap between two tokens"),
    ("slo_attainment", "Requests meeting the SLO"),
    ("mean_decode_batch", "Mean decode batch (requests per decode step)"),
    ("kv_waste_fraction", "KV memory reserved but empty"),
    ("kv_capacity_tokens", "KV cache pool (a replica)"),
    ("preemptions", "Preemptions"),
)
ASSUMPTIONS = (
    "One replica per GPU (per group of GPUs with pipeline stages); each step's time is the cost model's "
    "for what the step ran (weights read once per step, attention over each request's KV cache when "
    "counted). KV memory is what the GPU's memory leaves after the weights, runtime and activations "
    "(vLLM's 90% rule), unless a pool size is given; a request that outgrows free blocks preempts the "
    "newest running one, which later recomputes its cache. Poisson arrivals from a fixed seed; no network, "
    "tokenizer or sampling time."
)


def _label(name: str) -> str:
    return CONTROLS[name][0] if name in CONTROLS else name


def state_from(raw: dict[str, Any]) -> dict[str, Any]:
    """The widget state with defaults filled in, numbers and switches parsed, unknown keys dropped."""
    merged = {**DEFAULTS, **{key: value for key, value in raw.items() if key in DEFAULTS}}
    state: dict[str, Any] = {}
    for key, value in merged.items():
        if key in ("controls", "charts", "compare"):
            state[key] = names(value)
        elif key in SWITCHES:
            state[key] = flag(value)
        elif key in OPTIONAL and (value is None or str(value).strip() in ("", "0", "none", "null")):
            state[key] = None
        elif isinstance(value, str):
            state[key] = number(value)
        else:
            state[key] = value
    return state


def checked(state: dict[str, Any]) -> dict[str, Any]:
    """The simulation inputs of ``state``, validated; a bad one raises ``ValueError`` naming its control."""
    for key, allowed in (("controls", CONTROLS), ("charts", CHARTS)):
        unknown = [item for item in state[key] if item not in allowed]
        if unknown:
            raise ValueError(f"{key}: unknown {', '.join(unknown)}; allowed: {', '.join(allowed)}")
    given = {name: state[name] for name in SIMULATION_DEFAULTS}
    try:
        values = read_params(NAME, SIMULATION_PARAMS, given)
    except ChartError as error:
        raise ValueError(f"{_label(error.parameter)}: {error.problem}") from None
    for name in state["compare"]:
        if name not in SCHEDULERS:
            raise ValueError(f"compare: unknown scheduler {name!r}; allowed: {', '.join(SCHEDULERS)}")
    return values


# The results that are times or rates of the run: each has a bound, the same run at spec peaks. The others
# (shares, counts, the mean batch) are not bounded by the faster run's, so they are shown once.
TIMED = (
    "output_tokens_per_s",
    "ttft_p50_s",
    "ttft_p99_s",
    "tpot_p50_s",
    "tpot_p99_s",
    "itl_p99_s",
    "longest_stall_s",
)


def _shown(values: dict[str, Any], bounds: dict[str, Any] | None = None) -> dict[str, str]:
    """Each result as the widget shows it: a time or rate with its bound beside it where ``bounds`` has it."""

    def duration(value: float | None) -> str:
        return "none (one-token answers)" if value is None else format_duration(value)

    def rate(value: float | None) -> str:
        return format_value(value or 0.0, "tokens/s")

    def timed(key: str, show: Callable[[Any], str]) -> str:
        bound = None if bounds is None else bounds[key]
        if values[key] is None or (bounds is not None and bound is None):  # nothing to set beside
            return show(values[key])
        return shown_with_bound(values[key], bound, show)

    return {
        "output_tokens_per_s": timed("output_tokens_per_s", rate),
        **{key: timed(key, duration) for key in TIMED[1:]},
        "slo_attainment": format_value(values["slo_attainment"], "%"),
        "mean_decode_batch": f"{values['mean_decode_batch']:.1f} requests",
        "kv_waste_fraction": format_value(values["kv_waste_fraction"], "%"),
        "kv_capacity_tokens": f"{values['kv_capacity_tokens']:,} tokens",
        "preemptions": f"{values['preemptions']:,}",
    }


def _gpus(params: dict[str, Any]) -> str:
    """ "the NVIDIA H100 SXM5 80GB", or "2 NVIDIA H100 SXM5 80GB GPUs as pipeline stages" per replica."""
    name = GPUS[params["gpu"]].name
    stages = params["pipeline_stages"]
    return f"the {name}" if stages == 1 else f"{stages} {name} GPUs a replica, as pipeline stages"


def chart_params(state: dict[str, Any], params: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The widget's charts (those ``state["charts"]`` names), each with the run's parameters."""
    extra: dict[str, dict[str, Any]] = {
        "latency": {"compare": list(state["compare"])},
        "timeline": {},
        "memory": {},
    }
    return {key: (CHARTS[key], {**params, **extra[key]}) for key in state["charts"]}


def compute(raw: dict[str, Any]) -> dict[str, Any]:
    """Everything the widget shows for ``raw`` control values; raises ``ValueError`` for bad input."""
    state = state_from(raw)
    params = checked(state)
    try:
        result = simulation(NAME, params)
    except ChartError as error:
        raise ValueError(f"{_label(error.parameter)}: {error.problem}") from None
    values = run_summary(result)
    # The same run at spec peaks (kept per setting, like the page's run): the bound of each time and rate.
    at_peak = at_spec_peak(lambda: simulation(NAME, params))
    bounds = {key: run_summary(at_peak)[key] for key in TIMED} if at_peak is not None else None
    shown = _shown(values, bounds)
    arrivals = "all at once" if params["burst"] else f"at {params['rate']:g} per second"
    summary = (
        f"{SCHEDULER_NAMES[params['scheduler']].capitalize()} of {params['requests']} requests arriving "
        f"{arrivals} on {_gpus(params)}: {shown['output_tokens_per_s']}, median time to first "
        f"token {shown['ttft_p50_s']}, median time per output token {shown['tpot_p50_s']}, "
        f"{shown['slo_attainment']} of requests within the SLO, {shown['preemptions']} preemptions."
    )
    speculation = result.summary.get("speculation")
    if speculation is not None and speculation["tokens_per_step"] is not None:
        summary += (
            f" Speculative decoding wrote {speculation['tokens_per_step']:.2f} tokens per request per decode "
            f"step ({speculation['expected_tokens_per_step']:.2f} expected)."
        )
    cache = result.summary.get("prefix_cache")
    if cache is not None:
        summary += (
            f" {format_value(cache['hit_rate'], '%')} of prompt tokens found in the prefix cache "
            f"({cache['hit_tokens']:,} of {cache['hit_tokens'] + cache['miss_tokens']:,})."
        )
    charts = {}
    for key, (chart, chart_args) in chart_params(state, params).items():
        try:
            charts[key] = chart_payload(chart, chart_args)
        except ChartError as error:
            raise ValueError(f"{_label(error.parameter)}: {error.problem}") from None
    return {
        "state": state,
        "values": values,
        "bounds": bounds or {},
        "shown": shown,
        "summary": summary,
        "python": simulation_source(params),
        "charts": charts,
    }


def options() -> dict[str, list[tuple[str, str]]]:
    """The choices of each select control: (key, display name)."""
    return {
        "model": [(key, model.name) for key, model in MODELS.items() if model.shapes_known],
        "gpu": [(key, gpu.name) for key, gpu in GPUS.items()],
        "scheduler": [(key, SCHEDULER_NAMES[key].capitalize()) for key in SCHEDULERS],
        "memory": [
            ("paged", "Paged (fixed-size blocks)"),
            ("contiguous", "Contiguous (one slab per request)"),
        ],
        "reserve": [
            ("max", "The longest request accepted"),
            ("pow2", "Length rounded up to a power of two"),
            ("oracle", "Exactly its length (an oracle)"),
        ],
        "link": [(key, link.name) for key, link in INTERCONNECTS.items()],
        "drafter": [
            ("heads", "Draft heads on the model (one layer a step)"),
            ("ngram", "N-gram lookup (no GPU work)"),
        ],
    }
