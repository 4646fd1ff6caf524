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
#     lesson: number-formats
# ---

# %% [markdown]
# # Number formats, worked through in Python
#
# The lesson's figures, derived by hand from the formats' bit layouts and the GPUs' spec sheets, then checked
# against the course's `calculators`. Everything here is the spec-peak bound (the calculators' own defaults),
# which is what hand arithmetic gives.

# %%
import math

from IPython.display import display

from calculators import FORMATS, Scenario, format_value, get_format, get_gpu, ridge_point
from calculators.charts import build_chart
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## The largest value of each float, from its bits
#
# With $E$ exponent bits the bias is $2^{E-1} - 1$. IEEE formats (FP16, BF16, E5M2) keep the top exponent
# for infinities and NaNs, so their largest number uses the exponent below it with every mantissa bit set.
# OCP's E4M3 keeps only one pattern of the top exponent for NaN, and E2M1 keeps nothing back.


# %%
def largest(exponent_bits: int, mantissa_bits: int, specials: str) -> float:
    bias = 2 ** (exponent_bits - 1) - 1
    top = 2**exponent_bits - 1 - bias
    if specials == "ieee":
        return 2.0 ** (top - 1) * (2 - 2.0**-mantissa_bits)
    if specials == "nan-only":  # the all-ones mantissa of the top exponent is NaN
        return 2.0**top * (2 - 2.0 ** (1 - mantissa_bits))
    return 2.0**top * (2 - 2.0**-mantissa_bits)


by_hand = {
    "fp16": largest(5, 10, "ieee"),
    "bf16": largest(8, 7, "ieee"),
    "fp8-e4m3": largest(4, 3, "nan-only"),
    "fp8-e5m2": largest(5, 2, "ieee"),
    "mxfp4": largest(2, 1, "none"),
}
for key, value in by_hand.items():
    steps = 2 ** FORMATS[key].mantissa_bits
    print(f"{FORMATS[key].name:9} largest {value:,.6g}   values per doubling {steps}")
    assert math.isclose(value, get_format(key).max_value)
assert by_hand["fp16"] == 65_504  # IEEE 754 binary16
assert by_hand["fp8-e4m3"] == 448  # OCP OFP8, table 1
assert by_hand["fp8-e5m2"] == 57_344

# %% [markdown]
# ## Bits per value, the block's scale included
#
# A block of $k$ values with $b$-bit elements and an $s$-bit scale costs $b + s/k$ bits per value.

# %%
blocks = {
    "nvfp4": 4 + 8 / 16,  # E2M1 elements, an FP8 E4M3 scale per 16
    "mxfp4": 4 + 8 / 32,  # E2M1 elements, an E8M0 scale per 32
    "int4": 4 + (16 + 16) / 128,  # a 16-bit scale and a 16-bit zero point per 128 weights
}
for key, bits in blocks.items():
    print(f"{FORMATS[key].name:16} {bits} bits per value, {bits / 8} bytes")
    assert math.isclose(bits, get_format(key).bits_per_value)

# %% [markdown]
# ## Weight-only against FP8 arithmetic on an H100
#
# The course's 8B model: $8 \times 10^9$ weights. A decode step at batch 1 reads every weight once, so its
# bound is bytes over bandwidth; a 2,000-token prefill does $2 \times 8 \times 10^9 \times 2000$ FLOPs at the
# peak of the arithmetic format. W4A16 computes at the BF16 peak, FP8 at the FP8 peak.

# %%
h100 = get_gpu("h100-sxm")
params = 8e9
bandwidth = h100.memory_bandwidth_bytes_per_s
recipes = {  # bytes per weight, the peak the maths runs at, and the calculators' scenario
    "BF16": (2.0, h100.peak_flops_per_s("bf16"), Scenario()),
    "W4A16": (4.25 / 8, h100.peak_flops_per_s("bf16"), Scenario(precision="int4")),
    "W8A8 FP8": (1.0, h100.peak_flops_per_s("fp8"), Scenario(precision="fp8")),
}
for name, (bytes_per_weight, peak, scenario) in recipes.items():
    decode = params * bytes_per_weight / bandwidth
    prefill = 2 * params * 2000 / peak
    shown = f"decode {format_value(decode, 'ms')}   prefill of 2,000 tokens {format_value(prefill, 'ms')}"
    print(f"{name:9} {shown}")
    assert math.isclose(decode, scenario.decode().time_s, rel_tol=0.01)
    assert math.isclose(prefill, scenario.prefill(2000).time_s, rel_tol=0.01)

# %% [markdown]
# Decode follows the bytes, prefill follows the peak: W4A16 helps only the first, FP8 both.
#
# The lesson's table takes Llama-3.1-8B as a quantised checkpoint stores it: the transformer layers' weights
# in the weight format, the output layer in BF16 (a decode step reads all of it), and the embedding table,
# also BF16, of which a step reads one row per token. A decode step at batch 1 also reads the cache of its
# 1,000 tokens of context, $2 L H_{kv} d$ values of 2 bytes each per token.

# %%
llama = Scenario("llama-3.1-8b", level="refined").setup.model
shape = Scenario("llama-3.1-8b", level="refined").setup.shape
layers = shape.layers * (shape.qkv_params + shape.o_params + shape.mlp_params)  # quantised
output_layer = shape.vocab * shape.hidden  # BF16
cache = 1000 * 2 * shape.layers * llama.kv_heads * llama.head_dim * 2
for name, bytes_per_weight, scenario in (
    ("BF16", 2.0, Scenario("llama-3.1-8b", level="refined")),
    ("W4A16", 4.25 / 8, Scenario("llama-3.1-8b", precision="int4", level="refined")),
    ("W8A8 FP8", 1.0, Scenario("llama-3.1-8b", precision="fp8", level="refined")),
):
    read = layers * bytes_per_weight + output_layer * 2 + cache
    print(f"{name:9} decode reads {format_value(read, 'GB')}: {format_value(read / bandwidth, 'ms')}")
    # the norms, the embedding rows and each layer's activations add a fraction of a percent
    assert math.isclose(read / bandwidth, scenario.decode(1, 1000).time_s, rel_tol=0.01)

# %% [markdown]
# ## Where decode turns compute-bound
#
# At batch $b$ the weight products do $2b$ FLOPs per weight and read $s$ bytes of it: intensity $2b/s$. They
# are compute-bound past the ridge point of the arithmetic format, at $b^* = I^* s / 2$.

# %%
for name, (bytes_per_weight, peak, scenario) in recipes.items():
    ridge = peak / bandwidth
    crossing = ridge * bytes_per_weight / 2
    print(f"{name:9} ridge {ridge:.0f} FLOP/byte, compute-bound from batch {crossing:.0f}")
    assert math.isclose(ridge, scenario.ridge_point_flop_per_byte)
    # the calculators search for the first compute-bound batch; at the simple level every weight is in the
    # weight format and nothing else is read, so only the rounding up to a whole batch separates them
    assert crossing <= scenario.compute_bound_batch(1) <= 1.1 * crossing + 1

# %% [markdown]
# On a B200, FP4 arithmetic raises the ridge to its dense FP4 peak over its bandwidth.

# %%
for fmt in ("bf16", "fp8", "fp4"):
    print(f"B200 ridge in {fmt.upper()}: {ridge_point('b200', fmt):.0f} FLOP/byte")
assert math.isclose(ridge_point("b200", "fp4"), 9000e12 / 8e12)


# %% [markdown]
# ## The lesson's charts from your own numbers
#
# The course's chart builders take the same parameters as the lesson's chart blocks. Here the bits per value
# of every format the calculators know, and the ridge points of the GPUs in the formats their tensor cores
# take.

# %%
every_format = ["fp32", "bf16", "fp16", "fp8-e4m3", "fp8-e5m2", "int8", "int4", "mxfp4", "nvfp4"]
display(build_chart("format-bits", formats=every_format).chart)

# %%
gpus = ["h100-sxm", "h200", "b200", "a100-sxm-80gb"]
ridges = build_chart("ridge-points", gpus=gpus, precisions=["bf16", "fp8", "fp4"]).chart
display(ridges)

# %% [markdown]
# The tallest bar above, B200 in FP4, in FLOP per byte:

# %%
round(ridge_point("b200", "fp4"))
