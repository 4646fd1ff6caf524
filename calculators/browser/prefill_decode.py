"""The prefill-vs-decode simulator: one request of one model on one GPU, prefill then decode.

Defaults are the source lesson's simulation: the nominal 8B dense model in BF16 on an H100 SXM, computed in
the active model setting (the page's: :mod:`calculators.setting`), whose KV-cache reads the switch starts
from; switched on, it adds attention over the KV cache to that model (``kv_traffic``), so it can only add
time. A setup too big for the GPU is still computed, as a
what-if, and the summary says it does not fit.
"""

from __future__ import annotations

from typing import Any

from calculators.browser.bounds import at_spec_peak, shown_with_bound
from calculators.browser.charts import chart_payload
from calculators.browser.inputs import flag, in_range, number, one_of
from calculators.hardware import GPUS
from calculators.models import MODELS
from calculators.scenario import Scenario
from calculators.serving import RequestTiming
from calculators.setting import active_setting
from calculators.units import format_duration, format_value

NAME = "prefill-decode"
DEFAULTS: dict[str, Any] = {
    "model": "dense-8b",
    "gpu": "h100-sxm",
    "prompt": 2000,
    "output": 256,
    "batch": 1,
    "kv": None,  # KV-cache reads as the active model setting counts them (calculators.setting)
}
UNIT = "FLOP/byte"
PROMPT_RANGE = (1, 131072)  # the prompt slider: log scale, 1 to 128k tokens
OUTPUT_RANGE = (1, 131072)  # tokens generated: the same ceiling as the prompt
BATCH_RANGE = (1, 4096)  # requests decoded together
LABELS = {
    "prompt": "Prompt tokens",
    "output": "Output tokens",
    "batch": "Batch size",
    "model": "Model",
    "gpu": "GPU",
}
ASSUMPTIONS = (
    "BF16 weights on one GPU; a pass does 2 FLOPs per active parameter per token and reads every weight it "
    "uses once (a mixture of experts reads the experts its tokens pick). KV-cache traffic and attention "
    "FLOPs are ignored unless the switch is on; activations and queueing always are."
)


def _setting_kv() -> bool:
    """Whether the active model setting counts KV-cache reads: the switch's default (off outside any)."""
    setting = active_setting()
    return setting.kv_traffic if setting is not None else False


def state_from(raw: dict[str, Any]) -> dict[str, Any]:
    """The widget state with defaults filled in, numbers parsed, and unknown keys dropped."""
    merged = {**DEFAULTS, **{key: value for key, value in raw.items() if key in DEFAULTS}}
    return {
        "model": str(merged["model"]).strip(),
        "gpu": str(merged["gpu"]).strip(),
        "prompt": number(merged["prompt"]),
        "output": number(merged["output"]),
        "batch": number(merged["batch"]),
        "kv": _setting_kv() if merged["kv"] is None else flag(merged["kv"]),
    }


def checked(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` with every value inside what its control states, or a reader's message naming the control.

    The calculators accept any prompt length; the widget accepts what its hints say, in the lesson's words
    ("Prompt tokens: type a whole number from 1 to 131,072"), never in argument names.
    """
    return {
        **state,
        "model": one_of(LABELS["model"], state["model"], dict(options()["model"])),
        "gpu": one_of(LABELS["gpu"], state["gpu"], dict(options()["gpu"])),
        "prompt": in_range(LABELS["prompt"], state["prompt"], *PROMPT_RANGE, whole=True),
        "output": in_range(LABELS["output"], state["output"], *OUTPUT_RANGE, whole=True),
        "batch": in_range(LABELS["batch"], state["batch"], *BATCH_RANGE, whole=True),
    }


def scenario_for(state: dict[str, Any]) -> Scenario:
    return Scenario(state["model"], state["gpu"], kv_traffic=state["kv"], ignore_memory=True)


def python_source(state: dict[str, Any]) -> str:
    """The calculator call behind the numbers, as a reader can edit and run it."""
    return (
        "from calculators import Scenario\n"
        "\n"
        f"scenario = Scenario({state['model']!r}, {state['gpu']!r}, kv_traffic={state['kv']!r}, "
        "ignore_memory=True)\n"
        f"request = scenario.request({state['prompt']!r}, output_tokens={state['output']!r}, "
        f"batch={state['batch']!r})\n"
        'print(f"prefill: {request.prefill.time_s * 1e3:.2f} ms ({request.prefill.bound_label})")\n'
        'print(f"decode step: {request.first_decode.time_s * 1e3:.2f} ms '
        '({request.first_decode.bound_label})")\n'
        'print(f"prefill = {request.prefill_cost_in_decode_steps:.1f} decode steps")\n'
        'print(f"total: {request.total_time_s:.3f} s")\n'
        "# The same request at spec-sheet peaks: the bound each time is shown beside\n"
        f"peak = Scenario({state['model']!r}, {state['gpu']!r}, kv_traffic={state['kv']!r}, "
        'ignore_memory=True, mode="peak")\n'
        f"bound = peak.request({state['prompt']!r}, output_tokens={state['output']!r}, "
        f"batch={state['batch']!r})\n"
        'print(f"bound: prefill {bound.prefill.time_s * 1e3:.2f} ms, decode step '
        '{bound.first_decode.time_s * 1e3:.2f} ms, total {bound.total_time_s:.3f} s")\n'
    )


def chart_params(state: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The widget's two course charts and their parameters: one request's timeline, and the roofline.

    Decode is one bar (closed-form sum, any output length, cheap per slider move); the roofline's axes fit
    every GPU preset (``span: all``), so new rows never fall outside the axes drawn at build time.
    """
    common = {
        "model": state["model"],
        "kv_traffic": state["kv"],
        "memory": "ignore",
        "prompt": state["prompt"],
    }
    return {
        "timeline": (
            "request-timeline",
            {**common, "gpu": state["gpu"], "output": state["output"], "batch": state["batch"],
             "decode": "together"},
        ),
        "roofline": ("roofline",
                     {**common, "gpus": [state["gpu"]], "batches": [state["batch"]], "span": "all"}),
    }  # fmt: skip


TIMES = ("prefill_time_s", "decode_step_time_s", "time_to_first_token_s", "total_time_s")


def _timed(request: RequestTiming) -> dict[str, float]:
    """The request's times, the figures that depend on the mode (each has a bound at spec peaks)."""
    return {
        "prefill_time_s": request.prefill.time_s,
        "decode_step_time_s": request.first_decode.time_s,
        "time_to_first_token_s": request.time_to_first_token_s,
        "total_time_s": request.total_time_s,
    }


def compute(raw: dict[str, Any]) -> dict[str, Any]:
    """Everything the widget shows for ``raw`` control values; raises the calculators' ``ValueError``."""
    state = checked(state_from(raw))
    scenario = scenario_for(state)
    request = scenario.request(state["prompt"], state["output"], batch=state["batch"])
    prefill, decode = request.prefill, request.first_decode
    timed = _timed(request)
    # The same request at spec peaks: each time's lower bound, shown beside it as the lessons print it.
    at_peak = at_spec_peak(
        lambda: scenario_for(state).request(state["prompt"], state["output"], batch=state["batch"])
    )
    bounds = _timed(at_peak) if at_peak is not None else {}
    values = {
        "prefill_time_s": prefill.time_s,
        "decode_step_time_s": decode.time_s,
        "prefill_in_decode_steps": request.prefill_cost_in_decode_steps,
        "time_to_first_token_s": request.time_to_first_token_s,
        "total_time_s": request.total_time_s,
        "prefill_intensity": prefill.intensity_flop_per_byte,
        "decode_intensity": decode.intensity_flop_per_byte,
        "ridge_point": scenario.ridge_point_flop_per_byte,
    }

    def time(key: str) -> str:
        return shown_with_bound(timed[key], bounds.get(key), format_duration)

    shown = {
        **{key: time(key) for key in TIMES[:2]},
        # A ratio of two times, bounded by neither mode's figure: shown once, in the page's setting.
        "prefill_in_decode_steps": format_value(request.prefill_cost_in_decode_steps, "steps"),
        **{key: time(key) for key in TIMES[2:]},
        "prefill_bound": f"{prefill.bound_label} at {format_value(prefill.intensity_flop_per_byte, UNIT)}",
        "decode_bound": f"{decode.bound_label} at {format_value(decode.intensity_flop_per_byte, UNIT)}",
        "ridge_point": format_value(scenario.ridge_point_flop_per_byte, "FLOP/byte"),
    }
    summary = (
        f"{scenario.model.name} on {scenario.gpu.name}: prefill {shown['prefill_time_s']}, "
        f"one decode step {shown['decode_step_time_s']}, so the prompt costs "
        f"{shown['prefill_in_decode_steps']}; "
        f"first token after {shown['time_to_first_token_s']}, whole request {shown['total_time_s']}."
    )
    fits = scenario.memory(request.batch, request.prompt_tokens + request.output_tokens).fits
    if not fits:
        summary += " These weights and KV cache do not fit in this GPU's memory: a what-if."
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
    }
