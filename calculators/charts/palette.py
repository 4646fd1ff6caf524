"""The course's chart colours: one colour per GPU, per phase and per precision, on every chart of the site.

A reader who learns "the H100 is blue" on one chart must find it blue on the next, static or live, whatever
other GPUs share the chart and in whatever order. So colours are looked up by what a mark stands for (a GPU's
key, a phase's name), never handed out by position in a category scheme. The data rows carry their colour
(``colour``) and the specs read it from there, so rows a live widget sends keep the same colours too.

Series that are neither GPUs nor phases (schedulers, memory states, attention layouts, ordered series such
as arrival rates) have colours of their own here as well: left to a category scheme, its first blue and
orange would read as "H100" and "prefill".

Every colour is a mid-luminance hue with at least 3:1 contrast against white and against Material's slate
background (the tests check it), as WCAG asks of graphical objects. No two meanings share a colour: a GPU's
colour stands for that GPU alone, a phase's for that phase, and so on (the tests check this on every chart).
The newer sets were picked, among hues that pass the contrast check, as far as possible (CIELAB distance) from
the GPU and phase colours and from each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

GPU_COLOURS: Mapping[str, str] = MappingProxyType(
    {
        "h100-sxm": "#3b7dd8",  # blue
        "h100-pcie": "#1a8fa0",  # teal
        "h200": "#2e9e5b",  # green
        "b200": "#c2409a",  # magenta
        "a100-sxm-80gb": "#d64541",  # red
        "l40s": "#a8742a",  # ochre
        "l4": "#6b8e23",  # olive
        "mi300x": "#7f7fa0",  # slate grey
        "rtx-4090": "#b05cc8",  # orchid
        "gb200": "#a87050",  # brown
        "tpu-v5e": "#3d8f7f",  # sea green
    }
)
NEUTRAL = "#8c8c8c"  # what is neither series: waiting, free memory, a weights-only baseline
OTHER_GPU = NEUTRAL  # a GPU defined in a notebook, not a preset

PHASE_COLOURS: Mapping[str, str] = MappingProxyType({"prefill": "#e8710a", "decode": "#7b61d1"})
PRECISION_COLOURS: Mapping[str, str] = MappingProxyType(
    {
        "BF16": "#5f78d6",
        "FP8": "#b8860b",
        "INT8": "#8e6c8a",  # mauve
        "FP4": "#c25b7a",  # rose
    }
)

# Quantisation recipes (calculators.quantization): a recipe computing in a format takes that format's colour;
# the weight-only recipes, which compute in BF16 from smaller weights, have their own.
RECIPE_COLOURS: Mapping[str, str] = MappingProxyType(
    {
        "BF16": PRECISION_COLOURS["BF16"],
        "W8A16": "#b05050",  # brick
        "W4A16": "#2a9d8f",  # teal green
        "W8A8-INT8": PRECISION_COLOURS["INT8"],
        "W8A8-FP8": PRECISION_COLOURS["FP8"],
        "W4A4-FP4": PRECISION_COLOURS["FP4"],
    }
)

# The two parts of a value's cost in memory on the number-formats chart (calculators.charts.formats): its own
# bits, and its share of the scale its block stores.
FORMAT_PART_COLOURS: Mapping[str, str] = MappingProxyType(
    {
        "the value's own bits": "#4090c8",  # sky blue
        "its share of the block's scale": "#d87068",  # salmon
    }
)

# Keyed by the simulator's scheduler names (calculators.simulator.named.SCHEDULERS).
SCHEDULER_COLOURS: Mapping[str, str] = MappingProxyType(
    {
        "static": "#70743e",  # moss
        "continuous": "#1b981b",  # leaf green
        "chunked": "#d926d9",  # fuchsia
        "disaggregated": "#a68c59",  # tan
    }
)
# KV memory: tokens written, room held for a request but not yet written, and free room (neutral).
MEMORY_COLOURS: Mapping[str, str] = MappingProxyType(
    {"filled": "#a65973", "reserved": "#988f1b", "free": NEUTRAL}  # wine, mustard, grey
)
# Keyed by the attention layout as charts write it (calculators.models.ATTENTION_KINDS, upper case).
ATTENTION_COLOURS: Mapping[str, str] = MappingProxyType(
    {"MHA": "#936aaf", "GQA": "#548547", "MLA": "#9c3cdd"}  # lilac, fern, violet
)
# A tensor-parallel decode step's two parts (calculators.charts.parallel): the collectives between GPUs, and
# each GPU's own kernels and the engine's overhead. Rust and dusty rose: far (CIELAB) from every colour above.
TENSOR_PARALLEL_COLOURS: Mapping[str, str] = MappingProxyType(
    {"all-reduces between GPUs": "#aa5522", "each GPU's own work": "#bb8888"}
)
# Expert parallelism's load per GPU (calculators.charts.experts): the busiest GPU and the average one.
EXPERT_LOAD_COLOURS: Mapping[str, str] = MappingProxyType(
    {"busiest GPU": "#cf5c36", "average GPU": "#5b8fa8"}  # vermilion, steel blue
)
# For ordered series (arrival rates, context lengths, batch sizes): one rose hue, lighter to darker as the
# value grows. Only three shades of one hue pass the contrast check on both backgrounds.
SEQUENTIAL_COLOURS: tuple[str, ...] = ("#d17594", "#c95e82", "#bf406a")

LIGHT_BACKGROUND = "#ffffff"
DARK_BACKGROUND = "#1e2129"  # Material's slate background, hsl(232, 15%, 14%)


def gpu_colour(key: str) -> str:
    """The colour of the GPU preset ``key`` on every chart."""
    return GPU_COLOURS.get(key, OTHER_GPU)


def sequential_colours(count: int) -> tuple[str, ...]:
    """The colours of ``count`` ordered series, smallest value first, spread over the ramp."""
    if not 1 <= count <= len(SEQUENTIAL_COLOURS):
        raise ValueError(
            f"sequential_colours: {count} ordered series, but the ramp has 1 to {len(SEQUENTIAL_COLOURS)}; "
            "show fewer series or tell them apart another way (dash, labels)"
        )
    if count == 1:
        return SEQUENTIAL_COLOURS[-1:]
    last = len(SEQUENTIAL_COLOURS) - 1
    return tuple(SEQUENTIAL_COLOURS[round(i * last / (count - 1))] for i in range(count))


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    """WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    high, low = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)
