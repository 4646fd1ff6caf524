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
#     lesson: attention-roofline
# ---

# %% [markdown]
# # Attention's roofline and FlashAttention, worked through in Python
#
# This notebook derives the lesson's key figures by hand from the models' configurations: the intensity of
# decode attention for GQA, MHA and MLA, the intensity of prefill attention, and the contexts at which
# attention overtakes the weight products. Each is then checked against the course's `calculators`, at their
# own defaults (the spec-peak bound), so the hand arithmetic and the code must agree.

# %%
import math

from IPython.display import display

from calculators import Scenario, format_value, get_gpu, get_model, ridge_point
from calculators.charts import build_chart
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

llama = get_model("llama-3.1-8b")
L, H, H_kv, d = llama.layers, llama.attention_heads, llama.kv_heads, llama.head_dim
print(f"Llama-3.1-8B: {L} layers, {H} query heads, {H_kv} KV heads of {d}")

# %% [markdown]
# ## Decode attention: FLOPs per byte of cache
#
# A decode token does $4d$ FLOPs per query head, cached token and layer (a dot product with the key and a
# weighted sum of the value, two FLOPs per multiply-add), and reads $2 H_{kv} d\,b$ bytes of that token's
# cache per layer. So the intensity is $2 (H / H_{kv}) / b$.

# %%
bytes_per_value = 2  # BF16
flops_per_key = 4 * L * H * d  # every layer and query head
cache_per_token = 2 * L * H_kv * d * bytes_per_value
by_hand = flops_per_key / cache_per_token
print(f"FLOPs per (query, key) pair: {flops_per_key:,}; cache per token: {cache_per_token:,} bytes")
print(f"decode attention intensity by hand: {by_hand:.2f} FLOP/byte (group size {H // H_kv})")

step = Scenario("llama-3.1-8b", level="refined").decode(1, 8000)
print(f"calculators: {step.attention_intensity_flop_per_byte:.4f} FLOP/byte")
# the calculators add the query and output of the new token (BF16) to the bytes: 0.025 % at 8,000 tokens
assert math.isclose(by_hand, step.attention_intensity_flop_per_byte, rel_tol=1e-3)

# %% [markdown]
# Full multi-head attention would cache a key and value for every query head: one FLOP per byte in BF16.
# An FP8 cache halves the bytes.

# %%
mha = Scenario(llama.with_multi_head_attention(), level="refined").decode(1, 8000)
fp8 = Scenario("llama-3.1-8b", level="refined", kv_cache_format="fp8").decode(1, 8000)
print(f"MHA: {mha.attention_intensity_flop_per_byte:.3f} FLOP/byte")
print(f"FP8 cache: {fp8.attention_intensity_flop_per_byte:.2f} FLOP/byte")
assert math.isclose(mha.attention_intensity_flop_per_byte, 2 * 1 / 2, rel_tol=1e-3)
# the new token's query and output stay in BF16: 0.1 % of the bytes of an 8,000-token FP8 cache
assert math.isclose(fp8.attention_intensity_flop_per_byte, 2 * (H / H_kv) / 1, rel_tol=2e-3)
print(f"an H100's ridge point: {ridge_point('h100-sxm'):.0f} FLOP/byte")

# %% [markdown]
# ## MLA: every head reads the same latent
#
# DeepSeek-V3 caches a latent of $d_c$ values and a position key of $d_r$ per layer. In the absorbed form each
# head scores against all $d_c + d_r$ and mixes $d_c$: $2H(2d_c + d_r)$ FLOPs per cached token and layer,
# over $(d_c + d_r) b$ bytes.

# %%
deepseek = get_model("deepseek-v3")
m = deepseek.mla
assert m is not None
d_c, d_r, H_mla = m.kv_lora_rank, m.qk_rope_head_dim, deepseek.attention_heads
mla_by_hand = 2 * H_mla * (2 * d_c + d_r) / ((d_c + d_r) * bytes_per_value)
print(f"MLA decode intensity by hand: {mla_by_hand:.1f} FLOP/byte, about 2 x {H_mla} heads")

dp_attention = Scenario(
    "deepseek-v3", "h200", gpus=8, precision="fp8", level="refined", data_parallel_attention=True
)
mla = dp_attention.decode(1, 100_000).attention_intensity_flop_per_byte
print(f"calculators (data-parallel attention, 100,000 tokens): {mla:.1f} FLOP/byte")
assert math.isclose(mla_by_hand, mla, rel_tol=5e-3)  # the query and output add 0.24 % to the bytes
print(f"ridge points: H100 {ridge_point('h100-sxm'):.0f}, H200 {ridge_point('h200'):.0f} FLOP/byte")

# %% [markdown]
# ## Prefill attention: intensity grows with the prompt
#
# A causal prefill of $T$ tokens has $T(T+1)/2$ (query, key) pairs. With FlashAttention the course counts each
# token's K and V written once and read once, and each query and output once.

# %%
T = 8000
prefill_flops = flops_per_key * T * (T + 1) / 2
prefill_bytes = 2 * T * cache_per_token + T * (2 * L * H * d * 2)  # K/V written and read; Q and O in BF16
prefill_by_hand = prefill_flops / prefill_bytes
result = Scenario("llama-3.1-8b", level="refined").prefill(T)
print(f"prefill attention at {T:,} tokens: {prefill_by_hand:,.0f} by hand, ", end="")
print(f"{result.attention_intensity_flop_per_byte:,.0f} from the calculators (about T/3)")
assert math.isclose(prefill_by_hand, result.attention_intensity_flop_per_byte, rel_tol=1e-9)

# %% [markdown]
# ## Where attention overtakes the weight products
#
# **Prefill**: both are compute-bound at the same BF16 peak, so the times cross where the FLOPs do:
# $2NT = 2LHd\,T(T+1)$, so $T + 1 = N / (LHd)$, with $N$ the weights multiplied per token (every layer's
# projections and MLP; the output layer runs for the last token only).

# %%
per_layer = llama.attention_params_per_layer + 3 * llama.hidden_size * llama.mlp_width
N = L * per_layer
prefill_crossing = N / (L * H * d) - 1
computed = Scenario("llama-3.1-8b", level="refined").attention_takes_over("prefill")
print(f"N = {N:,} weights per token; crossing by hand {prefill_crossing:,.0f}, calculators {computed:,}")
# the output layer's one read (about 0.3 ms at spec bandwidth) moves the crossing by a few tokens
assert math.isclose(prefill_crossing, computed, rel_tol=1e-3)

# %% [markdown]
# **Decode** at batch $B$: both are memory-bound, so the times cross where the bytes do: the weights (less the
# embedding table, which a step only looks rows up in) once per step, against $B$ caches of $T$ tokens.

# %%
gpu = get_gpu("h100-sxm")
weights_read = Scenario("llama-3.1-8b").weight_bytes - llama.embedding_params * bytes_per_value
for batch in (1, 8, 64):
    hand = weights_read / (batch * cache_per_token)
    calc = Scenario("llama-3.1-8b", level="refined").attention_takes_over("decode", batch)
    print(f"batch {batch:>2}: by hand {hand:>9,.0f} tokens, calculators {calc:>9,} tokens")
    assert math.isclose(hand, calc, rel_tol=0.02)  # activations, which grow with the batch, add up to 2 %
print(f"weights read per step: {format_value(weights_read, 'GB')}")
print(f"at {format_value(gpu.memory_bandwidth_bytes_per_s, 'TB/s')}: ", end="")
print(format_value(weights_read / gpu.memory_bandwidth_bytes_per_s, "ms"))

# %% [markdown]
# The calibrated mode moves the prefill crossing much earlier, because its attention kernels (fitted to
# profiles of older kernels on an A100) reach a smaller share of the peak than its matrix products do.

# %%
calibrated = Scenario("llama-3.1-8b", level="refined", mode="calibrated", calibration="current")
calibrated_crossing = calibrated.attention_takes_over("prefill")
print(f"prefill crossing: bound {computed:,} tokens, calibrated {calibrated_crossing:,}")
print(f"decode crossing at batch 1: calibrated {calibrated.attention_takes_over('decode'):,} tokens")
assert calibrated_crossing < computed


# %% [markdown]
# ## The lesson's charts from your own numbers
#
# The course's chart builders take the same parameters as the lesson's chart blocks. Here the chart at
# batch 1, and for Llama-3.1 70B on an H200, whose weights weigh more against its cache.

# %%
display(build_chart("attention-vs-weights", batch=1).chart)

# %%
larger = build_chart("attention-vs-weights", model="llama-3.1-70b", gpu="h200", batch=8).chart
display(larger)

# %% [markdown]
# Where attention passes the weights in that 70B decode, in tokens of context:

# %%
Scenario("llama-3.1-70b", "h200", level="refined").attention_takes_over("decode", 8)
