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
#     lesson: kv-memory-and-paging
# ---

# %% [markdown]
# # KV memory and paging, worked through in Python
#
# The lesson sizes the KV pool of Llama-3.1 8B on an H100 SXM, counts how many requests fit, and compares
# contiguous slabs with 16-token blocks in the serving simulator.
# This notebook rebuilds the memory table by hand, checks it against the calculators, works out the waste of
# each allocator for single requests, and then reruns the lesson's simulations.

# %%
import math

from IPython.display import display

from calculators import Scenario, format_value, get_gpu, get_model
from calculators.charts import build_chart
from calculators.charts.notebook_tables import markdown_table
from calculators.simulator.named import served
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## Step 1: the pool, by hand
#
# The engine may use 90% of the memory the device reports. From that it subtracts the weights (2 bytes per
# parameter), the runtime reserve (2 GiB) and the activation workspace of its largest step.

# %%
scenario = Scenario("llama-3.1-8b")
plan = scenario.setup.memory
model = get_model("llama-3.1-8b")
gpu = get_gpu("h100-sxm")

device = gpu.usable_memory_bytes
share = 0.9 * device
weights = 2 * scenario.setup.params
runtime = 2 * 2**30
workspace = plan.activation_workspace_bytes  # the step's activations: see calculators.memory
pool_bytes = share - weights - runtime - workspace
k = 2 * model.layers * model.kv_heads * model.head_dim * 2  # key and value, each layer and KV head, BF16
pool_tokens = pool_bytes / k

markdown_table(
    [
        {"what": "reported by the device", "GB": device / 1e9},
        {"what": "engine's share (90%)", "GB": share / 1e9},
        {"what": "weights", "GB": weights / 1e9},
        {"what": "runtime reserve", "GB": runtime / 1e9},
        {"what": "activation workspace", "GB": workspace / 1e9},
        {"what": "KV pool", "GB": pool_bytes / 1e9},
    ]
)

# %%
print(f"one token of cache: {k:,} B; pool: {pool_tokens:,.0f} tokens")
assert math.isclose(pool_bytes, plan.kv_budget_bytes, rel_tol=1e-12)
assert math.isclose(pool_tokens, plan.kv_tokens, rel_tol=1e-12)

# %% [markdown]
# ## Step 2: how many requests fit
#
# Each request of c tokens needs c x k bytes, so floor(pool / c) of them fit.

# %%
rows = []
for context in (1536, 8192, 32768):
    by_hand = math.floor(pool_tokens / context)
    rows.append({"context (tokens)": context, "requests that fit": by_hand})
    assert by_hand == scenario.max_batch(context)
markdown_table(rows)

# %% [markdown]
# ## Step 3: what one request wastes under each allocator
#
# A request of 1,024 prompt tokens that writes 300 tokens ends at 1,324 tokens of cache.
# A slab of the longest accepted length (8,192) wastes the rest; rounding the length (prompt plus expected
# output, here 512) up to a power of two wastes less; 16-token blocks waste at most 15 tokens.

# %%
length = 1024 + 300
allocations = {
    "slab of 8,192": 8192,
    "prompt + output rounded to a power of two": 1024 + 2 ** math.ceil(math.log2(512)),
    "16-token blocks": 16 * math.ceil(length / 16),
}
markdown_table(
    [
        {
            "allocator": name,
            "reserved": reserved,
            "empty": reserved - length,
            "share empty": 1 - length / reserved,
        }
        for name, reserved in allocations.items()
    ]
)

# %% [markdown]
# ## Step 4: the lesson's simulations
#
# 200 requests arrive at 60 per second, prompts of 1,024 tokens and answers of 512 on average, both
# log-normal. The same seed gives every run the same requests.

# %%
workload = {
    "requests": 200,
    "rate": 60,
    "prompt": 1024,
    "prompt_spread": 512,
    "output": 512,
    "output_spread": 400,
}
runs = {
    "contiguous, 8,192-token slabs": served(memory="contiguous", max_sequence_tokens=8192, **workload),
    "contiguous, power of two": served(memory="contiguous", reserve="pow2", **workload),
    "contiguous, exact length (oracle)": served(memory="contiguous", reserve="oracle", **workload),
    "paged, 16-token blocks": served(**workload),
    "paged, pool of 40,000 tokens": served(capacity_tokens=40000, **workload),
}
markdown_table(
    [
        {"allocator": name, "reserved but empty": run.kv_waste_fraction, "tokens/s": run.output_tokens_per_s,
         "mean batch": run.mean_decode_batch, "TTFT p99 (s)": run.ttft_s.p99, "preemptions": run.preemptions}
        for name, run in runs.items()
    ]
)  # fmt: skip

# %%
paged = runs["paged, 16-token blocks"]
slabs = runs["contiguous, 8,192-token slabs"]
tight = runs["paged, pool of 40,000 tokens"]
assert paged.kv_waste_fraction < 0.02  # only the tails of last blocks
assert slabs.kv_waste_fraction > 0.6
assert paged.output_tokens_per_s > slabs.output_tokens_per_s
assert tight.preemptions > 0
assert tight.ttft_s.p99 > paged.ttft_s.p99
print(f"slabs use {format_value(1 - slabs.kv_waste_fraction, '%')} of what they reserve; the vLLM paper "
      "measured 20.4% to 38.2% in the systems it profiled")  # fmt: skip

# %% [markdown]
# ## The memory maps, from the same runs
#
# The lesson's chart of KV memory for the tight pool of 40,000 tokens: first with 8,192-token slabs, then with
# 16-token blocks, where preemptions make room.

# %%
slabs_map = build_chart(
    "kv-memory", memory="contiguous", max_sequence_tokens=8192, capacity_tokens=40000, **workload
).chart
display(slabs_map)

# %%
blocks_map = build_chart("kv-memory", capacity_tokens=40000, **workload).chart
display(blocks_map)
