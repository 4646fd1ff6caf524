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
#     lesson: kv-cache
# ---

# %% [markdown]
# # The KV cache, worked through in Python
#
# The lesson makes four claims about the KV cache:
# Llama-3.1-8B caches **128 KiB per token** in BF16, the same model with full multi-head attention would cache
# **four times as much**, DeepSeek-V3's latent attention caches **about half of what the 8B model does**, and
# a decode step reads **every sequence's whole cache**, so it slows down as context and batch grow.
# This notebook derives each one from the models' shapes by hand, checks it against the `calculators` package,
# and then varies the model, the number format, the context and the batch.
#
# Everything here is arithmetic on published shapes and spec sheets; no GPU is involved.

# %%
import math

import altair as alt

from calculators import MODELS, Scenario, format_value, get_gpu, get_model
from calculators.charts.notebook_tables import markdown_table
from calculators.charts.palette import ATTENTION_COLOURS, NEUTRAL, sequential_colours
from calculators.charts.specs import colour_scale
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## Step 1: bytes per token for grouped-query attention
#
# Each layer caches a key and a value vector for every KV head; each vector has `head_dim` numbers.
# In BF16 a number takes 2 bytes. The shapes come from the model's `config.json`.

# %%
llama = get_model("llama-3.1-8b")
bytes_per_value = 2  # BF16

by_hand = 2 * llama.layers * llama.kv_heads * llama.head_dim * bytes_per_value
print(f"layers {llama.layers}, KV heads {llama.kv_heads}, head size {llama.head_dim}")
print(f"2 x {llama.layers} x {llama.kv_heads} x {llama.head_dim} x {bytes_per_value} = {by_hand:,} bytes")
print(f"= {by_hand / 1024:g} KiB per token  (the lesson: 128 KiB)")

assert llama.kv_cache_bytes_per_token() == by_hand == 128 * 1024

# %% [markdown]
# ## Step 2: the same model with full multi-head attention
#
# Multi-head attention has one KV head per query head. Llama-3.1-8B has 32 query heads sharing 8 KV heads
# (groups of 4), so undoing the grouping multiplies the cache by 4.

# %%
mha = llama.with_multi_head_attention()
mha_by_hand = 2 * llama.layers * llama.attention_heads * llama.head_dim * bytes_per_value
print(f"MHA: 2 x {llama.layers} x {llama.attention_heads} x {llama.head_dim} x 2 = {mha_by_hand:,} bytes")
group = llama.attention_heads // llama.kv_heads
print(f"ratio to GQA: {mha_by_hand / by_hand:g}  (query heads per KV head: {group})")

assert mha.kv_cache_bytes_per_token() == mha_by_hand == 524_288

# %% [markdown]
# ## Step 3: DeepSeek-V3's latent attention
#
# MLA caches, per layer, one compressed latent of `kv_lora_rank` numbers and one position (RoPE) key of
# `qk_rope_head_dim` numbers, shared by all heads.

# %%
deepseek = get_model("deepseek-v3")
assert deepseek.mla is not None
mla_by_hand = deepseek.layers * (deepseek.mla.kv_lora_rank + deepseek.mla.qk_rope_head_dim) * bytes_per_value
print(
    f"{deepseek.layers} layers x ({deepseek.mla.kv_lora_rank} + {deepseek.mla.qk_rope_head_dim}) x 2 "
    f"= {mla_by_hand:,} bytes per token"
)
share = mla_by_hand / by_hand
print(f"against Llama-3.1-8B: {share:.0%}, for a model {deepseek.params / llama.params:.0f}x larger")

assert deepseek.kv_cache_bytes_per_token() == mla_by_hand == 70_272

# %% [markdown]
# ## Every model preset
#
# The same formula for every model in the course (its attention kind decides which one), in BF16 and in FP8.

# %%
rows = []
for key, preset in MODELS.items():
    if not preset.shapes_known or key == "dense-8b":
        continue
    rows.append(
        {
            "model": preset.name,
            "attention": preset.attention.upper(),
            "KV bytes per token (BF16)": preset.kv_cache_bytes_per_token(),
            "KV bytes per token (FP8)": preset.kv_cache_bytes_per_token(1.0),
            "2,000 tokens (MB, BF16)": preset.kv_cache_bytes_per_token() * 2000 / 1e6,
        }
    )
markdown_table(rows, digits=4)

# %%
(
    alt.Chart(alt.Data(values=rows))
    .mark_bar()
    .encode(
        x=alt.X("KV bytes per token (BF16):Q", title="KV cache per token, BF16 (bytes)"),
        y=alt.Y("model:N", sort="-x", title=None),
        color=alt.Color("attention:N", title="Attention", scale=colour_scale(ATTENTION_COLOURS)),
        tooltip=["model:N", "attention:N", alt.Tooltip("KV bytes per token (BF16):Q", format=",.0f")],
    )
    .properties(width=560, description="KV-cache bytes per token of every model preset, by attention kind.")
)

# %% [markdown]
# ## Step 4: growth with context and batch, against the memory left
#
# A batch of B sequences of T tokens holds B x T x bytes-per-token. An engine on an H100 SXM keeps 90% of the
# memory the device reports, takes out the weights, a runtime reserve and the activations, and gives the rest
# to the cache; dividing gives the largest batch.

# %%
scenario = Scenario("llama-3.1-8b", "h100-sxm")
plan = scenario.setup.memory
left = plan.kv_budget_bytes
print(f"device memory {format_value(plan.device_bytes, 'GB')}, usable {plan.memory_utilization:.0%}")
print(f"weights {format_value(plan.weight_bytes_per_gpu, 'GB')}")
print(f"runtime reserve {format_value(plan.runtime_reserve_bytes, 'GB')}")
print(f"activations {format_value(plan.activation_workspace_bytes, 'GB')}")
print(f"left for the KV cache: {format_value(left, 'GB')}")
print()
for batch, context in [(1, 2000), (64, 2000), (1, 131072), (16, 8000)]:
    size = batch * context * by_hand
    print(f"batch {batch:>3} x {context:>7,} tokens: {format_value(size, 'GB'):>9}  fits: {size <= left}")
    assert math.isclose(scenario.kv_cache_bytes(context, batch), size)

largest = int(left / (2000 * by_hand))
print(f"\nlargest batch at 2,000 tokens: {largest}")
assert scenario.max_batch(2000) == largest

# %% [markdown]
# ## Step 5: decode reads the whole cache every step
#
# A decode step reads the weights once and each sequence's cache once. At spec-sheet bandwidth, with the
# attention arithmetic far below the ridge point, the step takes about (weights + cache) / bandwidth.

# %%
bandwidth = get_gpu("h100-sxm").memory_bandwidth_bytes_per_s
# ignore_memory: compute the batches that do not fit too, as what-ifs (the table says which fit)
with_kv = Scenario("llama-3.1-8b", "h100-sxm", kv_traffic=True, ignore_memory=True)
weights_only = Scenario("llama-3.1-8b", "h100-sxm", ignore_memory=True)
table = []
for batch in (1, 8, 64):
    for context in (2000, 8000, 32000):
        step = with_kv.decode(batch, context)
        estimate = (step.weight_bytes + batch * context * by_hand) / bandwidth
        table.append(
            {
                "batch": batch,
                "context": context,
                "KV read per step (GB)": step.kv_cache_bytes / 1e9,
                "fits": batch <= scenario.max_batch(context),
                "step, weights only (ms)": weights_only.decode(batch, context).time_s * 1e3,
                "step, with the cache (ms)": step.time_s * 1e3,
                "(weights + cache) / bandwidth (ms)": estimate * 1e3,
            }
        )
        assert (
            step.time_s >= estimate * 0.99
        )  # the calculators also count the new token's write and the maths
markdown_table(table, digits=3)

# %%
# The same step as the batch grows, at three context lengths: the weights-only line is flat until the ridge,
# the lines with the cache climb from the start, and faster the longer the context.
curve = []
contexts = (2000, 8000, 32000)
# Longer contexts in darker shades of the course's ramp; the weights-only baseline grey.
shades = zip(contexts, sequential_colours(len(contexts)), strict=True)
read_colours = {f"weights and cache, {context:,} tokens": colour for context, colour in shades}
read_colours["weights only"] = NEUTRAL
for context in contexts:
    for batch in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        curve.append(
            {
                "batch": batch,
                "step (ms)": with_kv.decode(batch, context).time_s * 1e3,
                "what is read": f"weights and cache, {context:,} tokens",
            }
        )
for batch in (1, 2, 4, 8, 16, 32, 64, 128, 256):
    curve.append(
        {"batch": batch, "step (ms)": weights_only.decode(batch).time_s * 1e3, "what is read": "weights only"}
    )
(
    alt.Chart(alt.Data(values=curve))
    .mark_line(point=True)
    .encode(
        x=alt.X("batch:Q", scale=alt.Scale(type="log", base=2), title="batch (sequences, log scale)"),
        y=alt.Y("step (ms):Q", scale=alt.Scale(type="log"), title="decode step (ms, log scale)"),
        color=alt.Color("what is read:N", title=None, scale=colour_scale(read_colours)),
        tooltip=["what is read:N", "batch:Q", alt.Tooltip("step (ms):Q", format=".2f")],
    )
    .properties(
        width=560,
        description="Decode step of Llama-3.1-8B on an H100 against batch, with and without the KV cache.",
    )
)

# %% [markdown]
# With one sequence the cache barely matters; at 64 sequences of 2,000 tokens it already doubles the step,
# and at long contexts it dominates (some of these batches do not even fit in the H100's memory: they are
# what-ifs). Batching shares the weight read among the sequences, never the cache read.
#
# ## Step 6: an FP8 cache
#
# Storing keys and values in one byte halves the bytes per token, the memory held and the bytes read per step.

# %%
fp8 = Scenario("llama-3.1-8b", "h100-sxm", kv_cache_format="fp8")
print(f"bytes per token: {fp8.kv_bytes_per_token:,.0f} (BF16: {scenario.kv_bytes_per_token:,.0f})")
print(f"largest batch at 2,000 tokens: {fp8.max_batch(2000)} (BF16: {scenario.max_batch(2000)})")
assert fp8.kv_bytes_per_token == by_hand / 2
