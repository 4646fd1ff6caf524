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
#     lesson: prefill-vs-decode
# ---

# %% [markdown]
# # Prefill vs decode, worked through in Python
#
# The lesson states four figures for an 8-billion-parameter model in BF16 on an NVIDIA H100 SXM:
# a decode step takes **about 5 ms**, prefill gets through **roughly 300 prompt tokens** in that time,
# a **2,000-token prompt costs about seven decode steps**, and the GPU's **ridge point is near 295 FLOP per
# byte**. This notebook derives each one by hand, step by step, and then asks the course's `calculators`
# package for the same quantity, so you can see that the two agree.
# It ends by changing the model and the GPU to see which conclusions survive.
#
# Everything here runs on a laptop: the figures are spec-sheet arithmetic, no GPU is involved.
# They are the spec-peak bounds the lesson derives by hand; the lesson's other figures are the course's
# calibrated estimate of an engine of today (a decode step of about 6.7 ms, not 4.8), which this notebook
# does not reproduce: the peak-vs-achieved lesson and its notebook show where the gap comes from.

# %%
import math

import altair as alt

from calculators import GPUS, MODELS, Scenario, format_value, get_gpu, get_model, ridge_point
from calculators.charts.data import short_gpu_name
from calculators.charts.notebook_tables import markdown_table
from calculators.charts.specs import gpu_scale
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## Step 1: the model and the GPU
#
# Two numbers describe the model: its parameter count N and the bytes each parameter takes.
# BF16 stores a number in 16 bits, that is 2 bytes.
# Two numbers describe the GPU: its peak dense BF16 arithmetic rate and its memory bandwidth.

# %%
model = get_model("dense-8b")
gpu = get_gpu("h100-sxm")

N = model.params  # parameters
bytes_per_weight = 2  # BF16
peak = gpu.peak_flops_per_s("bf16")  # FLOP per second, dense
bandwidth = gpu.memory_bandwidth_bytes_per_s  # bytes per second

print(f"N                = {N:.3g} parameters ({model.name})")
print(f"bytes per weight = {bytes_per_weight}")
print(f"peak BF16        = {peak:.4g} FLOP/s   ({format_value(peak, 'TFLOP/s')})")
print(f"bandwidth        = {bandwidth:.4g} B/s     ({format_value(bandwidth, 'TB/s')})")

# %% [markdown]
# ## Step 2: one decode step takes about 5 ms
#
# A decode step produces one token and must read every weight once: 2N bytes.
# It also does about 2 FLOPs per weight for that token (one multiply, one add): 2N FLOPs.
# The step lasts as long as the slower of the two: the time to read the bytes, or the time to do the FLOPs.

# %%
decode_bytes = bytes_per_weight * N
decode_flops = 2 * N
decode_memory_time = decode_bytes / bandwidth
decode_compute_time = decode_flops / peak
decode_time = max(decode_memory_time, decode_compute_time)

print(f"bytes read   = 2 x {N:.3g} = {decode_bytes:.3g} B  ({format_value(decode_bytes, 'GB')})")
print(f"memory time  = {decode_bytes:.3g} / {bandwidth:.3g} = {format_value(decode_memory_time, 'ms')}")
print(f"compute time = {decode_flops:.3g} / {peak:.4g} = {format_value(decode_compute_time, 'us')}")
print(f"decode step  = max of the two = {format_value(decode_time, 'ms')}  (the lesson: about 5 ms)")
print(f"maths units busy {format_value(decode_compute_time / decode_time, '%', digits=2)} of the step")

# %% [markdown]
# The calculators model the same pass (the lesson's scenario is `Scenario()`: this model, this GPU, BF16,
# spec-sheet peaks, KV-cache traffic ignored). Their answer must be ours:

# %%
lesson = Scenario()  # dense-8b on h100-sxm, BF16, simple level
step = lesson.decode()
print(
    f"calculators: {format_value(step.time_s, 'ms')}, {step.bound}-bound, "
    f"intensity {step.intensity_flop_per_byte:.2g} FLOP/byte"
)
assert math.isclose(step.time_s, decode_time, rel_tol=1e-12)
assert step.bound == "memory"

# %% [markdown]
# ## Step 3: prefill gets through roughly 300 tokens in that time
#
# Prefill also reads the weights once per pass, but uses them for every prompt token,
# so each extra token adds 2N FLOPs and no weight bytes.
# Once the prompt is long enough for arithmetic to be the limit, each token costs 2N / peak seconds.
# Dividing the decode step by that cost gives the number of prompt tokens that fit in one decode step.

# %%
prefill_time_per_token = 2 * N / peak
tokens_per_step = decode_time / prefill_time_per_token
print(f"per prompt token = 2 x {N:.3g} / {peak:.4g} = {format_value(prefill_time_per_token, 'us')}")
print(
    f"tokens per step  = {format_value(decode_time, 'ms')} / {format_value(prefill_time_per_token, 'us')} "
    f"= {tokens_per_step:.1f}  (the lesson: roughly 300)"
)

calculated = lesson.prompt_tokens_per_decode_step()
print(f"calculators: {calculated:.1f} tokens")
assert math.isclose(calculated, tokens_per_step, rel_tol=1e-12)

# %% [markdown]
# Write the two times out and N cancels:
# (2N / bandwidth) / (2N / peak) = peak / bandwidth.
# The number of prompt tokens that fit in one decode step is a property of the GPU alone, and in BF16 it is
# the ridge point of step 5.
#
# ### What FP8 changes, and what it does not
#
# With 1-byte FP8 weights the decode step reads N bytes instead of 2N. What happens to the prompt tokens that
# fit in that step depends on the format the arithmetic runs in:
#
# - **FP8 weights and FP8 arithmetic** (W8A8): the peak doubles too, so a prompt token costs 2N / (2 x peak).
#   Both times halve, and the count stays peak_BF16 / bandwidth, about 295 on an H100. The ridge point in FLOP
#   per byte doubles, but a token now brings 2 FLOPs per byte of weights instead of 1, so the batch or prompt
#   needed to be compute-bound does not move.
# - **FP8 weights with BF16 arithmetic** (weight-only quantisation, W8A16): the step halves but the arithmetic
#   does not speed up, so the count halves, to about 148.

# %%
w8a8 = Scenario(precision="fp8")  # FP8 weights, FP8 tensor-core arithmetic
w8a16 = Scenario(precision="fp8", arithmetic_format="bf16")  # FP8 weights, BF16 arithmetic
for label, scenario in [
    ("BF16", lesson),
    ("FP8 weights, FP8 maths", w8a8),
    ("FP8 weights, BF16 maths", w8a16),
]:
    print(
        f"{label:<24} decode step {format_value(scenario.decode().time_s, 'ms'):>8}, "
        f"prompt tokens per step {scenario.prompt_tokens_per_decode_step():6.1f}"
    )
assert math.isclose(w8a8.prompt_tokens_per_decode_step(), tokens_per_step, rel_tol=1e-3)
assert math.isclose(w8a16.prompt_tokens_per_decode_step(), tokens_per_step / 2, rel_tol=1e-3)

# %% [markdown]
# ## Step 4: a 2,000-token prompt costs about seven decode steps
#
# A 2,000-token prefill does 2N FLOPs per token and reads 2N bytes once.
# Its intensity, FLOPs per byte, is therefore P = 2,000, far above what the H100 needs to be compute-bound,
# so its time is the FLOPs over the peak.

# %%
P = 2000
prefill_flops = 2 * N * P
prefill_bytes = bytes_per_weight * N
prefill_intensity = prefill_flops / prefill_bytes
prefill_time = max(prefill_flops / peak, prefill_bytes / bandwidth)
steps = prefill_time / decode_time

print(f"FLOPs     = 2 x {N:.3g} x {P:,} = {format_value(prefill_flops, 'TFLOP')}")
print(
    f"intensity = {format_value(prefill_flops, 'TFLOP')} / {format_value(prefill_bytes, 'GB')} "
    f"= {prefill_intensity:,.0f} FLOP/byte"
)
print(
    f"time      = {format_value(prefill_flops, 'TFLOP')} / {format_value(peak, 'TFLOP/s')} "
    f"= {format_value(prefill_time, 'ms')}"
)
print(
    f"in decode steps = {format_value(prefill_time, 'ms')} / {format_value(decode_time, 'ms')} "
    f"= {steps:.2f}  (the lesson: about 7)"
)

request = lesson.request(P)
print(
    f"calculators: prefill {format_value(request.prefill.time_s, 'ms')}, "
    f"{request.prefill_cost_in_decode_steps:.2f} decode steps, {request.prefill.bound}-bound"
)
assert math.isclose(request.prefill_cost_in_decode_steps, steps, rel_tol=1e-12)
assert request.prefill.bound == "compute"

# %% [markdown]
# ## Step 5: the ridge point, near 295 FLOP per byte
#
# The ridge point is the intensity at which reading the bytes and doing the FLOPs take equally long:
# peak FLOP/s divided by bytes per second.
# Below it, work waits on memory (decode at 1 FLOP/byte); above it, on the maths units (prefill at 2,000).

# %%
ridge = peak / bandwidth
print(
    f"ridge point = {format_value(peak, 'TFLOP/s')} / {format_value(bandwidth, 'TB/s')}",
    f"= {ridge:.1f} FLOP/byte",
)
print(f"calculators: {ridge_point('h100-sxm'):.1f} FLOP/byte")
assert math.isclose(ridge_point("h100-sxm"), ridge, rel_tol=1e-12)
assert math.isclose(ridge, tokens_per_step, rel_tol=1e-12)  # step 3's count, as promised

# %% [markdown]
# ## Vary the GPU
#
# The same 8B model on every GPU preset in the course (on the 16 GB TPU v5e only as a what-if: its 16 GB of
# weights do not fit, so memory is ignored there).
# A faster memory shortens the decode step; a higher ridge point means more prompt tokens per decode step,
# so a 2,000-token prefill costs fewer of them.

# %%
gpu_rows = []
for key in GPUS:
    # ignore_memory: a GPU too small for the 16 GB of weights is still computed, as a what-if
    scenario = Scenario("dense-8b", key, ignore_memory=True)
    timing = scenario.request(P)
    gpu_rows.append(
        {
            "GPU": short_gpu_name(key),
            "fits": Scenario("dense-8b", key, ignore_memory=True).memory(1, P + 1).fits,
            "decode step (ms)": timing.first_decode.time_s * 1e3,
            "prompt tokens per decode step": scenario.prompt_tokens_per_decode_step(),
            "2,000-token prefill (ms)": timing.prefill.time_s * 1e3,
            "prefill in decode steps": timing.prefill_cost_in_decode_steps,
            "ridge point (FLOP/byte)": scenario.ridge_point_flop_per_byte,
        }
    )
markdown_table(gpu_rows, digits=3)

# %%
(
    alt.Chart(alt.Data(values=gpu_rows))
    .mark_bar()
    .encode(
        x=alt.X("prefill in decode steps:Q", title="2,000-token prefill, in decode steps"),
        y=alt.Y("GPU:N", sort="-x", title=None),
        tooltip=[
            "GPU:N",
            alt.Tooltip("prefill in decode steps:Q", format=".2f"),
            alt.Tooltip("decode step (ms):Q", format=".2f"),
        ],
    )
    .properties(
        width=560,
        description="A 2,000-token prefill of an 8B BF16 model, in decode steps, on each GPU preset.",
    )
)

# %% [markdown]
# ## Vary the model
#
# Every model preset on the H100 SXM, on as many GPUs as its BF16 weights need (tensor parallelism splits the
# weights and the arithmetic evenly; the all-reduces between the GPUs are not counted at this level, which
# flatters the multi-GPU rows, most of all the 405B model on 16 GPUs across two nodes). For a dense model
# every pass scales with N, so the decode step grows with the model while the prefill cost in decode steps
# does not move: it is still the prompt length divided by the ridge point.
#
# A mixture-of-experts model breaks that. Each token computes only the few experts it is routed to, so the
# FLOPs follow the *active* parameters; but the bytes follow the experts the pass *touches*. A decode step at
# batch 1 reads only its token's experts, while a 2,000-token prefill touches almost all of them. Mixtral has
# 8 experts per layer and picks 2: the prefill reads all 8 but still has enough arithmetic to be
# compute-bound. DeepSeek-V3 has 256 and picks 8: its prefill reads nearly every expert for too little
# arithmetic per byte, so it is memory-bound and costs many more decode steps than a dense model's.


# %%
def gpus_needed(model_key: str, gpu_key: str) -> int:
    """Smallest power-of-two GPU count whose memory holds the BF16 weights and the prompt's KV cache."""
    count = 1
    while True:
        try:
            Scenario(model_key, gpu_key, gpus=count).request(P)
        except ValueError:
            count *= 2
        else:
            return count


model_rows = []
for key, preset in MODELS.items():
    count = gpus_needed(key, "h100-sxm")
    timing = Scenario(key, "h100-sxm", gpus=count).request(P)
    model_rows.append(
        {
            "model": preset.name,
            "H100s": count,
            "weights (GB)": Scenario(key).weight_bytes / 1e9,
            "decode step (ms)": timing.first_decode.time_s * 1e3,
            "2,000-token prefill (ms)": timing.prefill.time_s * 1e3,
            "prefill in decode steps": timing.prefill_cost_in_decode_steps,
            "prefill is": f"{timing.prefill.bound}-bound",
        }
    )
markdown_table(model_rows, digits=3)

# %%
deepseek = Scenario("deepseek-v3", "h100-sxm", gpus=gpus_needed("deepseek-v3", "h100-sxm")).request(P)
dense = Scenario("dense-8b").request(P)
print(
    f"dense 8B: prefill = {dense.prefill_cost_in_decode_steps:.2f} decode steps ({dense.prefill.bound}-bound)"
)
steps = deepseek.prefill_cost_in_decode_steps
print(f"DeepSeek-V3: prefill = {steps:.2f} decode steps ({deepseek.prefill.bound}-bound)")
assert deepseek.prefill.bound == "memory"
assert deepseek.prefill_cost_in_decode_steps > dense.prefill_cost_in_decode_steps

# %% [markdown]
# ## The prefill cost as the prompt grows
#
# Short prompts are memory-bound like decode (one weight read, too little arithmetic to hide it), so they
# cost one decode step. Past the ridge point, each extra token adds compute time and the cost rises in a
# straight line. The bend sits at each GPU's ridge point.

# %%
curve_gpus = ("h100-sxm", "h200", "b200", "a100-sxm-80gb", "l4")
curve_rows = []
for key in curve_gpus:
    scenario = Scenario("dense-8b", key)
    for prompt in (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384):
        curve_rows.append(
            {
                "GPU": short_gpu_name(key),
                "prompt tokens": prompt,
                "prefill in decode steps": scenario.request(prompt).prefill_cost_in_decode_steps,
            }
        )

(
    alt.Chart(alt.Data(values=curve_rows))
    .mark_line(point=True)
    .encode(
        x=alt.X("prompt tokens:Q", scale=alt.Scale(type="log", base=2), title="prompt tokens (log scale)"),
        y=alt.Y(
            "prefill in decode steps:Q", scale=alt.Scale(type="log"), title="prefill time in decode steps"
        ),
        color=alt.Color("GPU:N", scale=gpu_scale(curve_gpus)),
        tooltip=["GPU:N", "prompt tokens:Q", alt.Tooltip("prefill in decode steps:Q", format=".2f")],
    )
    .properties(
        width=560,
        description="Prefill of an 8B BF16 model, in decode steps, as the prompt grows, on five GPU presets.",
    )
)
