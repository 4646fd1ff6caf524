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
#     lesson: inside-a-gpu
# ---

# %% [markdown]
# # Inside a GPU, worked through in Python
#
# The lesson says a GPU's peak is SMs × FLOPs per SM per clock × clock. Here every peak and memory figure
# of the lesson is rebuilt by hand from the per-SM figures of NVIDIA's architecture whitepapers, then
# checked against the course's presets (`calculators.hardware`, whose `anatomy` carries the same per-SM
# figures with their sources).

# %%
import math

from IPython.display import display

from calculators import Scenario, format_value, get_gpu
from calculators.charts import build_chart
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## The tensor-core peak, by hand
#
# Per-SM figures from the whitepapers: an H100 SM has 4 tensor cores, each doing 512 dense BF16 multiply-adds
# per clock; an A100 SM has 4 doing 256 each. A multiply-add is two FLOPs.

# %%
FLOPS_PER_FMA = 2
chips = {
    # key: (SMs, tensor cores per SM, FMA per tensor core per clock, FP32 cores per SM, whitepaper FP32 peak)
    "h100-sxm": (132, 4, 512, 128, 66.9e12),
    "h100-pcie": (114, 4, 512, 128, 51.2e12),
    "a100-sxm-80gb": (108, 4, 256, 64, 19.5e12),
}
for key, (sms, cores, fma, fp32_cores, fp32_peak) in chips.items():
    gpu = get_gpu(key)
    per_clock = sms * cores * fma * FLOPS_PER_FMA  # tensor-core FLOPs per clock, whole GPU
    tensor_clock = gpu.peak_flops_per_s("bf16") / per_clock  # the clock the published peak implies
    boost_clock = fp32_peak / (sms * fp32_cores * FLOPS_PER_FMA)  # the clock the FP32 peak implies
    print(
        f"{gpu.name}: {per_clock:,} FLOPs per clock; the BF16 peak "
        f"{format_value(gpu.peak_flops_per_s('bf16'), 'TFLOP/s')} implies "
        f"{format_value(tensor_clock, 'GHz')}, "
        f"the FP32 peak {format_value(boost_clock, 'GHz')}"
    )
    anatomy = gpu.anatomy
    assert anatomy is not None
    assert anatomy.sm_count * anatomy.dense_bf16_flops_per_clock_per_sm == per_clock
    assert math.isclose(anatomy.tensor_clock_hz(gpu.peak_flops_per_s("bf16")), tensor_clock)
    assert math.isclose(anatomy.boost_clock_hz, boost_clock)

# %% [markdown]
# The A100's two clocks agree with the 1,410 MHz its whitepaper prints; the H100's tensor peak is quoted at
# 1.83 GHz, below the 1.98 GHz of its FP32 peak (the PCIe card: 1.62 against 1.755 GHz). That is why its
# matrix peak is about 15 times the vector peak, not the 16 of the per-clock rates.

# %%
h100 = get_gpu("h100-sxm")
assert h100.anatomy is not None
per_clock_ratio = (4 * 512) / 128
published_ratio = h100.peak_flops_per_s("bf16") / 66.9e12
print(f"per clock: {per_clock_ratio:.0f}x; published peaks: {published_ratio:.2f}x")
assert per_clock_ratio == h100.anatomy.tensor_to_vector_per_clock
assert math.isclose(published_ratio, per_clock_ratio * 1.8300 / 1.9798, rel_tol=1e-3)

# %% [markdown]
# ## A clock cut under the power limit
#
# Chips and Cheese saw an H100 PCIe at 1,395 MHz against its power limit. The tensor-core peak scales with the
# clock.

# %%
pcie = get_gpu("h100-pcie")
assert pcie.anatomy is not None
throttled = 114 * 4 * 512 * FLOPS_PER_FMA * 1.395e9
print(
    f"at 1,395 MHz: {format_value(throttled, 'TFLOP/s')} against the spec sheet's "
    f"{format_value(pcie.peak_flops_per_s('bf16'), 'TFLOP/s')}"
)
assert math.isclose(throttled, pcie.anatomy.tensor_peak_at(1.395e9))

# %% [markdown]
# ## The memories
#
# Registers and L1/shared memory are 256 KiB per SM each on the H100; the L2 is 50 MiB. Shared memory serves
# 128 bytes per SM per clock (32 banks of 4 bytes).

# %%
KIB, MIB = 1024, 1024**2
registers = 132 * 256 * KIB
shared_l1 = 132 * 256 * KIB
l2 = 50 * MIB
on_chip = registers + shared_l1 + l2
boost_clock = 66.9e12 / (132 * 128 * FLOPS_PER_FMA)  # the clock the FP32 peak implies
shared_bandwidth = 132 * 128 * boost_clock  # 128 bytes per SM per clock
for name, size in (("registers", registers), ("shared/L1", shared_l1), ("L2", l2), ("on chip", on_chip)):
    print(f"{name:>10}: {format_value(size, 'MB')}")
hbm = format_value(h100.memory_capacity_bytes, "GB")
print(f"HBM: {hbm} at {format_value(h100.memory_bandwidth_bytes_per_s, 'TB/s')}")
print(f"shared memory bandwidth: {format_value(shared_bandwidth, 'TB/s')}")
assert on_chip == h100.anatomy.on_chip_bytes
assert math.isclose(shared_bandwidth, h100.anatomy.shared_memory_bandwidth_bytes_per_s)

# %% [markdown]
# An 8B model's BF16 weights against all of that on-chip memory: the weights cannot stay on the chip, so every
# step reads them from HBM.

# %%
weights = 8e9 * 2  # the course's nominal 8B model, two bytes per parameter
print(f"weights {format_value(weights, 'GB')}: {weights / on_chip:.0f}x the on-chip memory")
assert math.isclose(weights, Scenario().weight_bytes, rel_tol=0.01)
assert weights > 100 * on_chip


# %% [markdown]
# ## The lesson's charts from your own numbers
#
# The course's chart builders take the same parameters as the lesson's chart blocks. Here the hierarchy of
# the H100 PCIe beside the SXM (fewer SMs, slower HBM), and the rooflines of the GPUs whose anatomy the
# lesson reads.

# %%
hierarchy = build_chart("memory-hierarchy", gpus=["h100-sxm", "h100-pcie"]).chart
display(hierarchy)

# %%
rooflines = build_chart("roofline", gpus=["h100-sxm", "a100-sxm-80gb"], batches=[1, 64]).chart
display(rooflines)

# %% [markdown]
# The PCIe card's HBM, which sets its roofline's slope:

# %%
format_value(get_gpu("h100-pcie").memory_bandwidth_bytes_per_s, "TB/s")
