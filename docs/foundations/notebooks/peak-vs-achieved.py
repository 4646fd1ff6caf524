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
#     lesson: peak-vs-achieved
# ---

# %% [markdown]
# # Peak against achieved: MFU and MBU, worked through in Python
#
# The lesson's figures derived by hand: the spec-peak bound of a decode step, the MBU and MFU of that step in
# each mode, the per-step cost of the 2023-24 engines, and the ridge of what is reached. Each is checked
# against the course's `calculators`.

# %%
import math

from IPython.display import display

from calculators import Scenario, format_value, get_gpu
from calculators.calibration import FITTED
from calculators.charts import build_chart
from calculators.charts.notebook_tables import markdown_table
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

gpu = get_gpu("h100-sxm")
bound = Scenario("llama-3.1-8b", level="refined")
current = Scenario("llama-3.1-8b", level="refined", mode="calibrated", calibration="current")
as_published = Scenario("llama-3.1-8b", level="refined", mode="calibrated")

# %% [markdown]
# ## The bound of a decode step, by hand
#
# At batch 1 the step reads every weight once and the KV cache of 1,000 tokens; the bound is those bytes over
# the peak bandwidth (the arithmetic is far quicker).

# %%
step = bound.decode(1, 1000)
needed = step.weight_bytes + step.kv_cache_bytes
by_hand = needed / gpu.memory_bandwidth_bytes_per_s
print(f"weights {format_value(step.weight_bytes, 'GB')}, KV cache {format_value(step.kv_cache_bytes, 'GB')}")
print(f"by hand {format_value(by_hand, 'ms')}, calculators {format_value(step.time_s, 'ms')}")
assert math.isclose(by_hand, step.time_s, rel_tol=0.02)  # embedding rows and launches of nothing else

# %% [markdown]
# ## MBU and MFU in each mode
#
# MBU is the bytes needed over the time, as a share of peak bandwidth; MFU the FLOPs over the time, as a share
# of peak FLOP/s.

# %%
rows = []
for name, scenario in (("bound", bound), ("current engine", current), ("2023-24 engine", as_published)):
    result = scenario.decode(1, 1000)
    mbu = (result.weight_bytes + result.kv_cache_bytes) / result.time_s / gpu.memory_bandwidth_bytes_per_s
    mfu = result.flops / result.time_s / gpu.peak_flops_per_s("bf16")
    shares = scenario.decode_utilisation(1, 1000)
    assert math.isclose(mbu, shares.mbu)
    assert math.isclose(mfu, shares.mfu)
    rows.append({"figure": name, "step (ms)": result.time_s * 1e3, "MBU": mbu, "MFU": mfu})
markdown_table(rows, digits=3)

# %% [markdown]
# In the bound, MFU over MBU is the batch over the ridge point: at batch 1 on an H100, one over about 295.

# %%
shares = bound.decode_utilisation(1, 1000)
ridge = gpu.peak_flops_per_s("bf16") / gpu.memory_bandwidth_bytes_per_s
print(f"MFU / MBU = {shares.mfu / shares.mbu:.5f}, 1 / ridge = {1 / ridge:.5f}")
assert math.isclose(shares.mfu / shares.mbu, 1 / ridge, rel_tol=0.15)  # attention's FLOPs and KV bytes differ

# %% [markdown]
# ## The engines' cost per step
#
# The as-published calibration adds a + c x b per step for b sequences, fitted to Splitwise's vLLM steps.
# The lesson recovers a and c from two batches; here they are read from the fit. The step's overhead also
# holds the GPU's wait for the host (next section), which the two batches' difference must leave out.

# %%
a_ms, c_ms = FITTED["engine-overhead/as-published"]
o1 = as_published.decode(1, 1000).overhead_s - as_published.decode(1, 1000).host_wait_s
o2 = as_published.decode(2, 1000).overhead_s - as_published.decode(2, 1000).host_wait_s
assert math.isclose(2 * o1 - o2, a_ms * 1e-3)
assert math.isclose(o2 - o1, c_ms * 1e-3)
print(f"a = {a_ms:.2f} ms, c = {c_ms:.3f} ms per sequence; throughput cap 1/c = {1e3 / c_ms:,.0f} tokens/s")
for batch in (1, 64, 256):
    t = as_published.decode(batch, 1000).time_s
    print(f"batch {batch:3}: step {format_value(t, 'ms')}, {batch / t:,.0f} tokens/s")
    assert batch / t < 1e3 / c_ms

# %% [markdown]
# ## Waiting for the host
#
# An engine without CUDA graphs issues every kernel from the CPU, layer by layer, so the kernels of a step
# take at least the host's issue time: h per layer, fitted to Splitwise's 4-GPU steps of each node. On one
# H100 the 8B model's kernels are shorter than that, so the step is the host's time plus a + c x b.

# %%
(h_ms,) = FITTED["engine-host/h100"]
layers = 32  # Llama-3.1 8B
eager = as_published.decode(1, 1000)
kernels = eager.time_s - eager.overhead_s
floor = layers * h_ms * 1e-3
print(f"kernels {format_value(kernels, 'ms')}, host {layers} x {h_ms} ms = {format_value(floor, 'ms')}")
assert kernels < floor
assert math.isclose(eager.host_wait_s, floor - kernels)
assert math.isclose(eager.time_s, floor + (a_ms + c_ms) * 1e-3)
assert current.decode(1, 1000).host_wait_s == 0.0  # a CUDA graph replays the step with one launch

# %% [markdown]
# ## The ridge of what is reached
#
# At 60 % of peak compute and 80 % of peak bandwidth the ridge is 0.6 / 0.8 of the spec one.

# %%
derated = Scenario("dense-8b", "h100-sxm", compute_efficiency=0.6, memory_efficiency=0.8)
print(f"{ridge:.0f} x 0.6 / 0.8 = {ridge * 0.6 / 0.8:.0f} FLOP/byte")
assert math.isclose(derated.ridge_point_flop_per_byte, ridge * 0.6 / 0.8)

# %% [markdown]
# ## The lesson's chart from your own numbers
#
# The course's chart builders take the same parameters as the lesson's chart block. Here the same decode on
# an H200 at 4,000 tokens of context, and on an A100, whose kernels Vidur measured.

# %%
display(build_chart("bound-vs-calibrated", gpu="h200", context=4000, max_batch=64).chart)

# %%
display(build_chart("bound-vs-calibrated", gpu="a100-sxm-80gb", context=1000, max_batch=64).chart)
