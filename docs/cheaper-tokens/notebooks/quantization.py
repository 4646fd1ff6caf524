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
#     lesson: quantization
# ---

# %% [markdown]
# # Quantization, worked through in Python
#
# The quantization lesson makes four claims.
# A weight-only format (W4A16) speeds up a batch-1 decode step by the ratio of the bytes read, and an FP8
# recipe by less, since its faster peak is idle there.
# At large batches the weight-only step is BF16 arithmetic, so FP8 overtakes W4A16 at half the BF16 ridge.
# Halving the bytes of a cached token doubles the sequences that fit, while shrinking the weights adds only
# what they free.
# At long contexts the cache's reads dominate a step, so the cache's format matters more than the weights'.
# This notebook derives each by hand at spec-sheet peaks (the bound) and checks it against the calculators.

# %%
import math

from IPython.display import display

from calculators import Scenario, get_gpu, get_model, get_precision
from calculators.charts import build_chart
from calculators.quantization import crossover_batch
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## Step 1: a batch-1 decode step in each recipe
#
# Weights only (no cache reads) at spec peaks, the simple level: a decode step at batch B on N weights of
# s bytes takes max(2 N B / peak, N s / bandwidth), with the peak of the format the maths runs in.
# W4A16 stores INT4 (4.25 bits with its group-128 scales) and multiplies in BF16; W8A8-FP8 stores and
# multiplies FP8.
# This reads all N weights in the weight format: the simple level's shortcut. Checkpoints keep the
# embedding and the output layer in BF16, so a real W4A16 step reads more: the lesson's figures are the
# refined level's, which reads the output layer in BF16 (about a tenth longer for this model at batch 1).

# %%
h100 = get_gpu("h100-sxm")
llama = get_model("llama-3.1-8b")
n = llama.params
bandwidth = h100.memory_bandwidth_bytes_per_s
recipes = {  # name: (weight format, arithmetic format)
    "BF16": ("bf16", "bf16"),
    "W4A16": ("int4", "bf16"),
    "W8A8-FP8": ("fp8", "fp8"),
}


def step_by_hand(weights: str, arithmetic: str, batch: int) -> float:
    """Seconds of one decode step, weights only, at spec peaks."""
    compute = 2 * n * batch / h100.peak_flops_per_s(arithmetic)
    memory = n * get_precision(weights).bytes_per_value / bandwidth
    return max(compute, memory)


times = {}
for name, (weights, arithmetic) in recipes.items():
    hand = step_by_hand(weights, arithmetic, 1)
    ours = Scenario("llama-3.1-8b", precision=weights, arithmetic_format=arithmetic).decode(1).time_s
    times[name] = hand
    print(f"{name:9} {get_precision(weights).bytes_per_value:.4f} bytes/weight: {hand * 1e3:.3f} ms by hand, "
          f"{ours * 1e3:.3f} ms calculators")  # fmt: skip
    assert math.isclose(hand, ours, rel_tol=1e-12)
speedups = {name: times["BF16"] / t for name, t in times.items()}
print(f"W4A16 {speedups['W4A16']:.2f}x BF16's speed, FP8 {speedups['W8A8-FP8']:.2f}x")
assert times["W4A16"] < times["W8A8-FP8"] < times["BF16"]

# %% [markdown]
# ## Step 2: where FP8 overtakes W4A16
#
# W4A16 turns compute-bound at B = peak_bf16 x 0.53125 / (2 x bandwidth) and then takes 2 N B / peak_bf16;
# FP8 stays memory-bound, N / bandwidth, up to B = peak_fp8 / (2 x bandwidth). The two are equal at
# B* = peak_bf16 / (2 x bandwidth), half the BF16 ridge.

# %%
b_star = h100.peak_flops_per_s("bf16") / (2 * bandwidth)
first = next(b for b in range(1, 1000) if step_by_hand("fp8", "fp8", b) < step_by_hand("int4", "bf16", b))
found = crossover_batch("dense-8b", "h100-sxm", "w4a16", "w8a8-fp8")
print(f"B* = {b_star:.2f}; first batch FP8 is faster, by hand {first}, calculators {found}")
assert first == math.ceil(b_star) == found
at_512 = {name: step_by_hand(w, a, 512) for name, (w, a) in recipes.items()}
print("batch 512: " + ", ".join(f"{name} {t * 1e3:.2f} ms" for name, t in at_512.items()))
assert at_512["W4A16"] == at_512["BF16"]  # the same BF16 arithmetic: weight-only buys nothing

# %% [markdown]
# ## Step 3: capacity
#
# A token of Llama-3.1 8B's cache holds K and V for 32 layers of 8 KV heads of 128 values. The engine's
# budget is what is left of 90% of the memory after the weights, a 2 GiB runtime reserve and the
# activations of its largest step (taken from the calculators' memory plan); the sequences of c tokens that
# fit are budget / (c x bytes per token), rounded down.

# %%
context = 8000
for weights in ("bf16", "fp8", "int4"):
    scenario = Scenario("llama-3.1-8b", precision=weights)
    plan = scenario.setup.memory
    reserve, activations = 2 * 2**30, plan.activation_workspace_bytes
    budget = 0.9 * h100.usable_memory_bytes - scenario.weight_bytes - reserve - activations
    assert math.isclose(budget, scenario.kv_budget_bytes, rel_tol=1e-12)
    for kv in ("bf16", "fp8"):
        per_token = 2 * llama.layers * llama.kv_heads * llama.head_dim * get_precision(kv).bytes_per_value
        fits = math.floor(budget / (context * per_token))
        ours = Scenario("llama-3.1-8b", precision=weights, kv_cache_format=kv).max_batch(context)
        print(f"weights {weights:5} cache {kv:5}: {budget / 1e9:5.1f} GB / ({context:,} x {per_token:,.0f} "
              f"B) = {fits} sequences, calculators {ours}")  # fmt: skip
        assert fits == ours

# %% [markdown]
# ## Step 4: long contexts, where the cache's format matters most
#
# 12 sequences of 32,000 tokens, the cache's reads counted, at spec peaks. Reading the cache costs
# B x c x bytes per token / bandwidth beside the weights' N s / bandwidth (attention's few FLOPs per byte
# keep it memory-bound). Halving the cache's bytes takes more off the step than quartering the weights'.

# %%
batch, long = 12, 32000


def long_step_by_hand(weights: str, kv: str) -> float:
    per_token = 2 * llama.layers * llama.kv_heads * llama.head_dim * get_precision(kv).bytes_per_value
    return (n * get_precision(weights).bytes_per_value + batch * long * per_token) / bandwidth


for weights, kv in (("bf16", "bf16"), ("int4", "bf16"), ("bf16", "fp8")):
    hand = long_step_by_hand(weights, kv)
    reading = Scenario("llama-3.1-8b", precision=weights, kv_cache_format=kv, kv_traffic=True)
    ours = reading.decode(batch, long)
    print(f"weights {weights:4} cache {kv:4}: {hand * 1e3:.2f} ms by hand, {ours.time_s * 1e3:.2f} ms ours")
    # The calculators also write each new token's K and V and read the query: a fraction of a percent more.
    assert abs(ours.time_s - hand) / hand < 0.01
assert long_step_by_hand("bf16", "fp8") < long_step_by_hand("int4", "bf16")

# %%
display(build_chart("quantization-speedup", recipes=["w4a16", "w8a8-fp8"], max_batch=512).chart)


# %% [markdown]
# ## The lesson's chart for a bigger model
#
# The same chart for Llama-3.1 70B on one H200, where BF16 does not fit at all, and the batch from which
# FP8 decodes faster than W4A16 there.

# %%
display(build_chart("quantization-speedup", model="llama-3.1-70b", gpu="h200", max_batch=256).chart)

# %%
crossover_batch("llama-3.1-70b", "h200", "w4a16", "w8a8-fp8", 1000)
