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
#     lesson: batching
# ---

# %% [markdown]
# # Batching, worked through in Python
#
# The batching lesson makes five claims for Llama-3.1 8B in BF16 on an H100 SXM.
# A batch shares one read of the weights.
# Each request's KV cache is read on top, so at 2,000 tokens of context the caches of about 61 requests
# weigh as much as the weights.
# The products with the weights turn compute-bound at the ridge point; attention over the cache never does,
# and past about 400 tokens of context it takes longer than those products at any batch.
# Bigger batches trade latency for throughput.
# Continuous batching beats static batching on a workload with uneven answers.
# This notebook derives each by hand and checks it against the calculators, then runs the simulator.

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
# ## Step 1: the model's bytes, and one token's cache
#
# The weights are 2 bytes per parameter in BF16. The KV cache of one token holds a key and a value for each
# KV head of each layer: 2 x layers x KV heads x head size values, 2 bytes each.

# %%
model = get_model("llama-3.1-8b")
gpu = get_gpu("h100-sxm")
weights_only = Scenario("llama-3.1-8b")
with_cache = Scenario("llama-3.1-8b", kv_traffic=True)

W = 2 * weights_only.setup.params  # bytes of weights
k = 2 * model.layers * model.kv_heads * model.head_dim * 2  # bytes of cache per token
beta = gpu.memory_bandwidth_bytes_per_s
pi = gpu.peak_flops_per_s("bf16")
print(
    f"W = {format_value(W, 'GB')}, k = 2 x {model.layers} x {model.kv_heads} x {model.head_dim} x 2 = {k:,} B"
)
assert math.isclose(W, weights_only.weight_bytes, rel_tol=1e-12)
assert k == weights_only.setup.kv_bytes_per_token

# %% [markdown]
# ## Step 2: a batch shares the weight read
#
# Counting the weights only, a step reads W bytes and does 2N FLOPs per request. Up to the ridge point the
# reads are the slower, so the step takes W / bandwidth whatever the batch.

# %%
c = 2000
for b in (1, 64):
    hand = max(W / beta, 2 * weights_only.setup.params * b / pi)
    step = weights_only.decode(b, c)
    print(f"batch {b:>3}: {format_value(hand, 'ms')} by hand, {format_value(step.time_s, 'ms')} calculators")
    assert math.isclose(hand, step.time_s, rel_tol=1e-12)

# %% [markdown]
# ## Step 3: the cache reads, and the batch where they equal the weights
#
# Each request also reads its own cache: c tokens of k bytes, and writes one more token. Attention's FLOPs are
# few per byte, so that part of the step is memory-bound; the cost model times each part on its own roofline
# and adds them.

# %%
b = 64
attention_bytes = b * (c + 1) * k
hand = W / beta + attention_bytes / beta
step = with_cache.decode(b, c)
print(
    f"batch 64, 2,000 tokens: {format_value(hand, 'ms')} by hand, {format_value(step.time_s, 'ms')} computed"
)
assert math.isclose(hand, step.time_s, rel_tol=1e-9)

equal = W / (k * c)
print(f"cache reads equal the weights at b = W / (k c) = {equal:.1f}  (the lesson: about 61)")

# %% [markdown]
# ## Step 4: which parts of a step turn compute-bound
#
# The weights' products are compute-bound past the ridge point pi / beta; attention over the cache stays
# memory-bound at any batch. The products' compute time outweighs attention's memory time only if
# 2N b / pi > b c k / beta, which no longer depends on b: c < W / (k x ridge). Past that context the
# calculators, which label a step by its larger part, call every batch memory-bound.

# %%
ridge = pi / beta
limit = W / (k * ridge)
print(f"ridge {ridge:.1f} FLOP/byte; weights only, compute-bound from batch {math.ceil(ridge)}")
print(f"with the cache: mostly memory time at any batch past c = W / (k x ridge) = {limit:.0f} tokens")
print(f"calculators: {weights_only.compute_bound_batch(c)}, {with_cache.compute_bound_batch(c)} (0: never), "
      f"longest context {with_cache.longest_compute_bound_context()}")  # fmt: skip
assert weights_only.compute_bound_batch(c) == math.ceil(ridge)
assert with_cache.compute_bound_batch(c) == 0
# The search also counts attention's FLOPs and the written token, so it lands a little below the formula.
assert abs(with_cache.longest_compute_bound_context() - limit) / limit < 0.02

# %% [markdown]
# ## Step 5: latency against throughput
#
# Each point of the lesson's chart is one batch size: its step time is the time per output token, b over it
# the GPU's output. The ceiling is bandwidth over one request's cache.

# %%
rows = []
for b in (1, 8, 32, 64, 128, 220):
    step = with_cache.decode(b, c)
    rows.append({"batch": b, "ms per token": step.time_s * 1e3, "tokens/s": b / step.time_s})
markdown_table(rows)

# %%
ceiling = beta / (k * c)
print(f"ceiling = {format_value(beta, 'TB/s')} / ({k:,} B x {c:,}) = {format_value(ceiling, 'tokens/s')}")
print(f"largest batch that fits at 2,000 tokens: {weights_only.max_batch(c)}")
assert all(row["tokens/s"] < ceiling for row in rows)

# %% [markdown]
# ## Step 6: static against continuous batching
#
# The simulator serves 200 requests (20 per second on average, 512-token prompts, answers of 256 tokens on
# average with a standard deviation of 200) with each scheduler. The same seed gives both the same requests.

# %%
workload = {"requests": 200, "rate": 20, "output": 256, "output_spread": 200}
static = served(scheduler="static", batch_size=32, **workload)
continuous = served(**workload)
markdown_table(
    [
        {"scheduler": name, "tokens/s": run.output_tokens_per_s, "TPOT p50 (ms)": run.tpot_s.p50 * 1e3,
         "TTFT p50 (s)": run.ttft_s.p50, "mean decode batch": run.mean_decode_batch}
        for name, run in (("static", static), ("continuous", continuous))
    ]
)  # fmt: skip

# %%
print(f"continuous / static throughput: {continuous.output_tokens_per_s / static.output_tokens_per_s:.2f}x")
assert continuous.output_tokens_per_s > static.output_tokens_per_s
assert continuous.ttft_s.p50 < static.ttft_s.p50

# %% [markdown]
# With every answer the same length, static batching loses much less: no request finishes early in a batch.

# %%
even = {"requests": 200, "rate": 20, "output": 256}
ratio = (
    served(**even).output_tokens_per_s / served(scheduler="static", batch_size=32, **even).output_tokens_per_s
)
print(f"equal lengths: continuous / static = {ratio:.2f}x")

# %% [markdown]
# ## The lesson's charts from your own numbers
#
# The course's chart builders take the same parameters as the lesson's chart blocks. Here the trade-off
# at 4,000 tokens of context, where the cache bends the curve even sooner, and the two schedulers on the
# workload with equal answer lengths.

# %%
tradeoff = build_chart("batch-tradeoff", context=4000, max_batch=256).chart
display(tradeoff)

# %%
schedulers = build_chart("serving-latency", compare=["static", "continuous"], batch_size=32, **even).chart
display(schedulers)
