# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   ridgepoint:
#     lesson: memory-wall
# ---

# %% [markdown]
# # Ridge points and the roofline, worked through in Python
#
# The lesson describes a GPU by two speeds, how fast it computes and how fast it reads memory, and a piece
# of work by one number, its arithmetic intensity: the FLOPs it does per byte it moves.
# This notebook computes the ridge point of every GPU preset in the course, by hand and then with the
# `calculators` package, and places a handful of everyday operations on the H100's roofline to see which limit
# each one hits.

# %%
import math

import altair as alt

from calculators import (
    GPUS,
    Scenario,
    attainable_flops_per_s,
    format_value,
    get_gpu,
    ridge_point,
    roofline_time,
)
from calculators.charts.data import short_gpu_name
from calculators.charts.notebook_tables import markdown_table
from calculators.charts.specs import gpu_scale
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## The ridge point of one GPU
#
# Peak dense BF16 arithmetic divided by memory bandwidth: how many FLOPs the H100 can do in the time it reads
# one byte. Work with fewer FLOPs per byte than this leaves the maths units waiting for memory.

# %%
h100 = get_gpu("h100-sxm")
peak = h100.peak_flops_per_s("bf16")
bandwidth = h100.memory_bandwidth_bytes_per_s
by_hand = peak / bandwidth

print(f"{format_value(peak, 'TFLOP/s')} / {format_value(bandwidth, 'TB/s')} = {by_hand:.1f} FLOP/byte")
print(f"calculators: ridge_point('h100-sxm') = {ridge_point('h100-sxm'):.1f} FLOP/byte")
assert math.isclose(ridge_point("h100-sxm"), by_hand, rel_tol=1e-12)

# %% [markdown]
# ## Ridge points across the presets
#
# The same division for every GPU in the course, at BF16 and, where the chip has FP8 tensor cores, at FP8.
# FP8 doubles the peak FLOP rate without touching the bandwidth, so it doubles the ridge point in FLOP per
# byte. That does not mean a model needs twice the batch to become compute-bound: with FP8 weights each byte
# read is one weight, which a token uses for 2 FLOPs, so a batch of B tokens has an intensity of 2B instead of
# B. The two factors cancel, and the batch at which FP8 work turns compute-bound is the BF16 ridge point
# again. Only FP8 *weights* with BF16 *arithmetic* (weight-only quantisation) halve it; the cell after the
# table computes both.

# %%
rows = []
for key, chip in GPUS.items():
    bf16 = chip.peak_flops_per_s("bf16") / chip.memory_bandwidth_bytes_per_s
    assert math.isclose(ridge_point(key), bf16, rel_tol=1e-12)
    fp8 = ridge_point(key, "fp8") if "fp8" in chip.dense_flops_per_s else None
    rows.append(
        {
            "GPU": short_gpu_name(key),
            "peak BF16 (TFLOP/s)": chip.peak_flops_per_s("bf16") / 1e12,
            "bandwidth (TB/s)": chip.memory_bandwidth_bytes_per_s / 1e12,
            "ridge BF16 (FLOP/byte)": bf16,
            "ridge FP8 (FLOP/byte)": fp8,
        }
    )
markdown_table(rows, digits=3)

# %%
# The batch (tokens per weight read) at which a decode step of the 8B model turns compute-bound on an H100:
# the prompt tokens that fit in one decode step, for each pairing of weight format and arithmetic format.
for label, weights, maths in [("BF16", "bf16", None), ("W8A8 (FP8 weights, FP8 maths)", "fp8", None),
                              ("W8A16 (FP8 weights, BF16 maths)", "fp8", "bf16")]:  # fmt: skip
    tokens = Scenario(precision=weights, arithmetic_format=maths).prompt_tokens_per_decode_step()
    print(f"{label:<34} compute-bound from about {tokens:5.0f} tokens per step")
bf16_batch = Scenario().prompt_tokens_per_decode_step()
assert math.isclose(Scenario(precision="fp8").prompt_tokens_per_decode_step(), bf16_batch, rel_tol=1e-3)
assert math.isclose(
    Scenario(precision="fp8", arithmetic_format="bf16").prompt_tokens_per_decode_step(),
    bf16_batch / 2,
    rel_tol=1e-3,
)

# %%
(
    alt.Chart(alt.Data(values=rows))
    .mark_bar()
    .encode(
        x=alt.X("ridge BF16 (FLOP/byte):Q", title="ridge point, BF16 (FLOP per byte)"),
        y=alt.Y("GPU:N", sort="-x", title=None),
        color=alt.Color("GPU:N", scale=gpu_scale(GPUS), legend=None),  # each GPU in its course colour
        tooltip=[
            "GPU:N",
            alt.Tooltip("ridge BF16 (FLOP/byte):Q", format=".0f"),
            alt.Tooltip("peak BF16 (TFLOP/s):Q", format=".0f"),
            alt.Tooltip("bandwidth (TB/s):Q", format=".2f"),
        ],
    )
    .properties(
        width=560,
        description="Ridge point of every GPU preset in BF16: peak dense FLOP/s divided by memory bandwidth.",
    )
)

# %% [markdown]
# ## Operations on the roofline
#
# Each operation below is counted by hand: its FLOPs and the bytes it must move at least once, in BF16
# (2 bytes a value). Its intensity is the ratio, and the roofline gives the FLOP rate the H100 can reach at
# that intensity: bandwidth x intensity below the ridge, the peak above it.
#
# - **Vector addition** of two n-element vectors: n additions, reading 2n values and writing n.
# - **Matrix-vector product** (an n x n matrix times a vector): 2n² FLOPs, the matrix dominates the bytes.
# - **Decode step** of the 8B model, batch 1 and batch 64: 2N FLOPs per sequence, 2N bytes of weights.
# - **Square matrix multiplication** of two n x n matrices: 2n³ FLOPs, reading two matrices and writing one.
# - **Prefill** of a 2,000-token prompt on the 8B model: 2N FLOPs per token, the weights read once.

# %%
n = 4096
lesson = Scenario()  # dense-8b on h100-sxm, BF16
operations = {  # name: (FLOPs, bytes moved)
    "vector add": (n, 3 * n * 2),
    "matrix x vector": (2 * n * n, (n * n + 2 * n) * 2),
    "decode, batch 1": (lesson.decode().flops, lesson.decode().bytes_moved),
    "decode, batch 64": (lesson.decode(batch=64).flops, lesson.decode(batch=64).bytes_moved),
    "matmul 4096³": (2 * n**3, 3 * n * n * 2),
    "prefill, 2,000 tokens": (lesson.prefill(2000).flops, lesson.prefill(2000).bytes_moved),
}

placed = []
for name, (flops, moved) in operations.items():
    timed = roofline_time(flops, moved, "h100-sxm")
    intensity = flops / moved
    reachable = min(peak, intensity * bandwidth)  # the roofline, by hand
    assert math.isclose(attainable_flops_per_s(intensity, "h100-sxm"), reachable, rel_tol=1e-12)
    placed.append(
        {
            "operation": name,
            "intensity (FLOP/byte)": intensity,
            "attainable (TFLOP/s)": reachable / 1e12,
            "share of peak": reachable / peak,
            "bound": timed.bound,
        }
    )
markdown_table(placed, digits=3)

# %% [markdown]
# The roofline itself, for the H100 and two neighbours, on logarithmic axes: a sloped line (memory-bound,
# FLOP/s grow with intensity) meeting a flat one (compute-bound, the peak) at the ridge point. The
# operations from the table sit on the H100's line.

# %%
intensities = [2**k / 8 for k in range(0, 18)]  # 1/8 to 16,384 FLOP/byte
roof_rows = [
    {
        "GPU": short_gpu_name(key),
        "intensity (FLOP/byte)": x,
        "attainable (TFLOP/s)": attainable_flops_per_s(x, key) / 1e12,
    }
    for key in ("a100-sxm-80gb", "h100-sxm", "b200")
    for x in sorted({*intensities, ridge_point(key)})
]

x_scale = alt.Scale(type="log", domain=[0.1, 20000])
y_scale = alt.Scale(type="log")
roofs = (
    alt.Chart(alt.Data(values=roof_rows))
    .mark_line()
    .encode(
        x=alt.X("intensity (FLOP/byte):Q", scale=x_scale, title="arithmetic intensity (FLOP per byte, log)"),
        y=alt.Y("attainable (TFLOP/s):Q", scale=y_scale, title="attainable TFLOP/s (log)"),
        color=alt.Color("GPU:N", scale=gpu_scale(("a100-sxm-80gb", "h100-sxm", "b200"))),
    )
)
# Labels alternate above and below their points, so that neighbours do not overlap; past the ridge (far
# right) a label ends at its point, so that it stays inside the chart.
labelled = [
    {
        **row,
        "label above": number % 2 == 0,
        "side": "right" if row["intensity (FLOP/byte)"] > by_hand else "center",
    }
    for number, row in enumerate(placed)
]
points = alt.Chart(alt.Data(values=labelled)).encode(
    x=alt.X("intensity (FLOP/byte):Q", scale=x_scale),
    y=alt.Y("attainable (TFLOP/s):Q", scale=y_scale),
)
marks = points.mark_point(filled=True, size=70, color="currentColor").encode(
    shape=alt.Shape("bound:N", title="bound"),
    tooltip=[
        "operation:N",
        alt.Tooltip("intensity (FLOP/byte):Q", format=",.3g"),
        alt.Tooltip("attainable (TFLOP/s):Q", format=",.3g"),
        "bound:N",
    ],
)
side = alt.expr("datum.side")
labels_above = points.transform_filter("datum['label above']").mark_text(
    dy=-12, align=side, color="currentColor"
)
labels_below = points.transform_filter("!datum['label above']").mark_text(
    dy=14, align=side, color="currentColor"
)
(
    roofs + marks + labels_above.encode(text="operation:N") + labels_below.encode(text="operation:N")
).properties(
    width=560,
    height=340,
    description="Rooflines of the A100, H100 and B200 in BF16, with six operations placed on the H100's.",
)
