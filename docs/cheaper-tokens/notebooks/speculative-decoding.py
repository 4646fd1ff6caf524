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
#     lesson: speculative-decoding
# ---

# %% [markdown]
# # Speculative decoding, worked through in Python
#
# The speculative decoding lesson makes four claims.
# A step that checks k proposals yields (1 - a^(k+1)) / (1 - a) tokens on average when each is accepted
# independently at rate a.
# At batch 1 the check costs about one decode step, so the speed-up is that many tokens divided by the
# drafter's cost plus one: Leviathan et al.'s E / (k c + 1).
# As the batch grows the check turns compute-bound, and past a break-even batch speculation is slower than
# plain decoding; at spec-sheet peaks, weights only and with a free drafter that batch is ridge x E / (k + 1).
# This notebook derives each by hand at spec-sheet peaks (the bound) and checks it against the calculators.

# %%
import math

from IPython.display import display

from calculators import Scenario, format_value, get_gpu
from calculators.charts import build_chart
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## Step 1: tokens per verification step
#
# The step keeps proposal i only if it and all before it are accepted: probability a^i. With the target's own
# token always added, the mean is 1 + a + ... + a^k.

# %%
a, k = 0.8, 4
by_sum = sum(a**i for i in range(k + 1))
closed = (1 - a ** (k + 1)) / (1 - a)
llama = Scenario("llama-3.1-8b", kv_traffic=True)
computed = llama.speculative(a, k).expected_tokens_per_step
print(f"sum {by_sum:.4f}, closed form {closed:.4f}, calculators {computed:.4f}")
assert math.isclose(by_sum, closed, rel_tol=1e-12)
assert math.isclose(closed, computed, rel_tol=1e-12)
sixteen = llama.speculative(a, 16).expected_tokens_per_step
print(f"ceiling as k grows: 1 / (1 - a) = {1 / (1 - a):.1f}; k = 16 gives {sixteen:.3f}")
assert sixteen < 1 / (1 - a)

# %% [markdown]
# ## Step 2: the check at batch 1 costs about one decode step
#
# Llama-3.1 8B in BF16 on an H100, 1,000 tokens of context, the cache's reads counted. The weights are read
# once either way; five tokens add FLOPs the idle maths units absorb, and the cache is read once.

# %%
context = 1000
step = llama.speculative(a, k, 1, context)
print(f"plain decode step {format_value(step.plain.time_s, 'ms')}, check of 5 positions "
      f"{format_value(step.verify.time_s, 'ms')} ({step.verify.bound}-bound)")  # fmt: skip
assert step.verify.time_s < 1.1 * step.plain.time_s

# %% [markdown]
# ## Step 3: the drafter's cost, and Leviathan et al.'s formula
#
# An EAGLE-style draft head is one decoder layer, and each draft step also runs the target's output layer
# (vocabulary x hidden) to turn its guess into a token. At batch 1 a step's time is the weights it reads, so
# one draft step costs c = (one decoder layer + output layer) / all weights of a decode step, and the
# speed-up is E / (k c + 1) if the check costs exactly one decode step. The shapes come from the model's
# config: the decoder layers hold everything but the input embedding and the output layer.

# %%
model = llama.model
layers, vocab, hidden = model.layers, model.vocab_size, model.hidden_size
output_layer = vocab * hidden
decoder_layer = (model.params - 2 * output_layer) / layers  # untied: embedding and output layer apart
c = (decoder_layer + output_layer) / model.params
leviathan = closed / (k * c + 1)
print(f"output layer {output_layer / 1e6:.0f}M weights, decoder layer {decoder_layer / 1e6:.0f}M: c {c:.4f}")
print(f"E / (k c + 1) = {closed:.4f} / ({k} x {c:.4f} + 1) = {leviathan:.3f}; calculators {step.speedup:.3f}")
assert not model.tied_embeddings
# The check here costs a little more than one decode step (five positions, the cache written five times).
assert abs(step.speedup - leviathan) / leviathan < 0.02

# %% [markdown]
# ## Step 4: the break-even batch, by hand
#
# The nominal 8B model, weights only, spec-sheet peaks, n-gram lookup (free). A plain step costs
# max(2NB / peak, 2N / bandwidth), the check max(2NB(k + 1) / peak, 2N / bandwidth). While the check is
# compute-bound and plain decoding is not, speed-up = E x ridge / (B (k + 1)), below 1 from
# B = ridge x E / (k + 1).

# %%
nominal = Scenario()
gpu = get_gpu("h100-sxm")
ridge = gpu.peak_flops_per_s("bf16") / gpu.memory_bandwidth_bytes_per_s
hand = ridge * closed / (k + 1)
search = nominal.speculative_break_even_batch(a, k, 1, drafter="ngram")
print(f"ridge {ridge:.2f} FLOP/byte; ridge x E / (k + 1) = {hand:.2f}, so batch {math.floor(hand) + 1}; "
      f"calculators {search}")  # fmt: skip
assert search == math.floor(hand) + 1
below, at = (nominal.speculative(a, k, b, 1, drafter="ngram").speedup for b in (search - 1, search))
print(f"speed-up at batch {search - 1}: {below:.4f}; at {search}: {at:.4f}")
assert at < 1 <= below

# %% [markdown]
# ## Step 5: the lesson's 70B target with an 8B drafter, against the batch
#
# Llama-3.1 70B in FP8 on one H200, Llama-3.1 8B (FP8) drafting 4 tokens, 1,000 tokens of context, the
# cache's reads counted, at spec-sheet peaks. The speed-up falls with the batch and ends below 1 before
# memory runs out: the drafter's 9.1 GB of weights and its cache sit beside the target's, so 108 sequences
# fit ((59.03 - 9.08) GB / ((327,680 + 131,072) B x 1,004 tokens)) where plain decoding fits 180.

# %%
target = Scenario("llama-3.1-70b", "h200", precision="fp8", kv_traffic=True)
options = {"drafter": "model", "draft_model": "llama-3.1-8b"}
speedups = {b: target.speculative(0.7, 4, b, context, **options).speedup for b in (1, 16, 64, 96, 108)}
for b, s in speedups.items():
    print(f"batch {b:>3}: speed-up {s:.2f}")
values = list(speedups.values())
assert values == sorted(values, reverse=True)
break_even = target.speculative_break_even_batch(0.7, 4, context, **options)
fits = target.speculative_max_batch(4, context, **options)
print(f"break-even batch {break_even}; {fits} sequences of {context:,} tokens fit beside the drafter "
      f"({target.max_batch(context)} without it)")  # fmt: skip
assert 1 < break_even < fits == 108

# %%
display(build_chart("speculative-speedup", max_batch=256).chart)


# %% [markdown]
# ## A second drafter
#
# The same chart for draft heads on Llama-3.1 8B in BF16 on one H100, which cost far less to run than a
# draft model.

# %%
heads = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "precision": "bf16", "drafter": "heads"}
with_heads = build_chart("speculative-speedup", max_batch=256, **heads).chart
display(with_heads)

# %% [markdown]
# The batch at which draft heads stop paying on that GPU:

# %%
Scenario("llama-3.1-8b", kv_traffic=True).speculative_break_even_batch(0.8, 4, 1000, drafter="heads")
