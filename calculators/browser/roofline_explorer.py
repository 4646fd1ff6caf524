"""The roofline explorer: several GPUs' rooflines and ridge points, and one operation placed by its intensity.

The reader picks GPUs and a precision, then an arithmetic intensity (FLOP per byte); for each GPU the widget
reads off the attainable FLOP/s and whether the operation is compute- or memory-bound there.
"""

from __future__ import annotations

from typing import Any

from calculators.browser.charts import chart_payload
from calculators.browser.inputs import names, number
from calculators.hardware import GPUS, get_gpu
from calculators.precision import PRECISIONS, get_precision
from calculators.roofline import ridge_point, roofline_time
from calculators.units import format_value
from calculators.validation import positive_number

NAME = "roofline-explorer"
DEFAULTS: dict[str, Any] = {
    "gpus": ["h100-sxm", "a100-sxm-80gb", "l4"],
    "precision": "bf16",
    "intensity": 100,
}
INTENSITY_RANGE = (0.1, 100000.0)  # the intensity slider: log scale
ASSUMPTIONS = (
    "Spec-sheet peaks: dense tensor-core FLOP/s at the chosen precision and full memory bandwidth. "
    "Attainable FLOP/s is the lower of the peak and intensity × bandwidth."
)


def state_from(raw: dict[str, Any]) -> dict[str, Any]:
    merged = {**DEFAULTS, **{key: value for key, value in raw.items() if key in DEFAULTS}}
    return {
        "gpus": names(merged["gpus"]),
        "precision": str(merged["precision"]).strip(),
        "intensity": number(merged["intensity"]),
    }


def python_source(state: dict[str, Any]) -> str:
    return (
        "from calculators import attainable_flops_per_s, ridge_point\n"
        "\n"
        f"intensity = {state['intensity']!r}  # FLOP per byte\n"
        f"for gpu in {state['gpus']!r}:\n"
        f"    ridge = ridge_point(gpu, {state['precision']!r})\n"
        f"    flops = attainable_flops_per_s(intensity, gpu, {state['precision']!r})\n"
        '    bound = "compute" if intensity >= ridge else "memory"\n'
        '    print(f"{gpu}: ridge {ridge:.0f} FLOP/byte, {flops / 1e12:.1f} TFLOP/s, {bound}-bound")\n'
    )


def chart_params(state: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The course's roofline chart with the chosen GPUs, no passes, and the operation placed on each roof."""
    params = {"gpus": state["gpus"], "precision": state["precision"], "prompt": None, "batches": [],
              "intensity": state["intensity"], "span": "all"}  # fmt: skip
    return {"roofline": ("roofline", params)}


def compute(raw: dict[str, Any]) -> dict[str, Any]:
    """Everything the explorer shows for ``raw`` control values; raises the calculators' ``ValueError``."""
    state = state_from(raw)
    if not state["gpus"]:
        raise ValueError(f"gpus must name at least one GPU; known GPUs: {', '.join(sorted(GPUS))}")
    precision = get_precision(state["precision"]).name
    intensity = positive_number("intensity", state["intensity"])
    rows: list[dict[str, Any]] = []
    for key in state["gpus"]:
        gpu = get_gpu(key)
        ridge = ridge_point(gpu, precision)
        # An operation of this intensity: that many FLOPs per byte moved, timed on the roofline.
        timed = roofline_time(intensity, 1.0, gpu, precision)
        attainable = timed.flops / timed.time_s
        rows.append({
            "gpu": gpu.key, "name": gpu.name, "ridge_point": ridge,
            "peak_flops_per_s": gpu.peak_flops_per_s(precision),
            "bandwidth_bytes_per_s": gpu.memory_bandwidth_bytes_per_s, "attainable_flops_per_s": attainable,
            "bound": timed.bound,
            "shown": {
                "ridge_point": format_value(ridge, "FLOP/byte"),
                "attainable": format_value(attainable, "TFLOP/s"),
                "peak": format_value(gpu.peak_flops_per_s(precision), "TFLOP/s"),
                "bound": f"{timed.bound}-bound",
            },
        })  # fmt: skip
    summary = f"At {format_value(intensity, 'FLOP/byte')} in {precision.upper()}: " + "; ".join(
        f"{row['name']} {row['shown']['attainable']}, {row['shown']['bound']} (ridge "
        f"{row['shown']['ridge_point']})"
        for row in rows
    )
    state = {**state, "precision": precision}
    return {
        "state": state,
        "values": {"intensity": intensity},
        "gpus": rows,
        "summary": summary + ".",
        "python": python_source(state),
        "charts": {key: chart_payload(*chart) for key, chart in chart_params(state).items()},
    }


def options() -> dict[str, list[tuple[str, str]]]:
    return {
        "gpus": [(key, gpu.name) for key, gpu in GPUS.items()],
        "precision": [(key, precision.name.upper()) for key, precision in PRECISIONS.items()],
    }
