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
#     lesson: tensor-parallelism
# ---

# %% [markdown]
# # Tensor parallelism, worked through in Python
#
# The tensor parallelism lesson makes four claims.
# Splitting every weight matrix over p GPUs costs two all-reduces per layer.
# A decode step's all-reduce is a few kilobytes, so its time is nearly all latency, which grows with p: a
# ring takes 2(p - 1) steps, a tree 2 ceil(log2 p), and the faster one is used.
# The all-reduces' share of a decode step grows as GPUs are added, so four times the GPUs give less than four
# times the speed, and past one eight-GPU server the step gets slower.
# With more GPUs than KV heads, heads are copied.
# This notebook derives each by hand at spec-sheet peaks (the bound) and checks it against the calculators.

# %%
import math

from IPython.display import display

from calculators import Scenario, get_interconnect, get_model
from calculators.charts import build_chart
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## Step 1: how many all-reduces a decode step pays
#
# One after attention's output projection and one after the MLP's down-projection in each layer; the
# calculators add one after the embedding lookup.

# %%
llama = get_model("llama-3.1-70b")
reduces = 2 * llama.layers + 1
print(f"{llama.layers} layers: 2 x {llama.layers} + 1 = {reduces} all-reduces per step")
eight = Scenario("llama-3.1-70b", level="refined", gpus=8, mode="peak", ignore_memory=True)
step = eight.decode(1, 1000)
op = next(o for o in step.operators if o.name.startswith("tensor-parallel all-reduces"))
print(op.name)
assert op.name.startswith(f"tensor-parallel all-reduces ({reduces} x")

# %% [markdown]
# ## Step 2: one all-reduce, ring and tree, by hand
#
# NVLink 4 as the link preset gives it: 450 GB/s each way, 5 us fixed, 0.6 us a step. Each GPU holds one
# token's output, 8,192 BF16 values. Ring: 5 + 2(p - 1) x 0.6 us + 2(p - 1)/p x n / 450 GB/s. Tree:
# 5 + 2 ceil(log2 p) x 0.6 us + 2 n / 450 GB/s. The faster one counts.

# %%
nvlink = get_interconnect("nvlink4")
alpha, step_s, beta = nvlink.latency_s, nvlink.hop_latency_s, nvlink.bandwidth_bytes_per_s
n = llama.hidden_size * 2
print(f"message {n:,} bytes; alpha {alpha * 1e6:.1f} us, {step_s * 1e6:.1f} us a step, {beta / 1e9:.0f} GB/s")


def ring(p: int, size: float) -> float:
    return alpha + 2 * (p - 1) * step_s + 2 * (p - 1) / p * size / beta


def tree(p: int, size: float) -> float:
    return alpha + 2 * math.ceil(math.log2(p)) * step_s + 2 * size / beta


for p in (2, 4, 8):
    hand = min(ring(p, n), tree(p, n))
    scenario = Scenario("llama-3.1-70b", level="refined", gpus=p, mode="peak", ignore_memory=True)
    computed = scenario.all_reduce_time_s(1)
    print(f"p = {p}: ring {ring(p, n) * 1e6:6.3f} us, tree {tree(p, n) * 1e6:6.3f} us; "
          f"calculators {computed * 1e6:6.3f} us ({scenario.all_reduce_algorithm(1)})")  # fmt: skip
    assert math.isclose(hand, computed, rel_tol=1e-9)
    print(f"        the data's share of it: {2 * n / beta / computed:.1%}")

# %% [markdown]
# ## Step 3: where the ring starts to win
#
# Over 8 GPUs the ring has 14 steps to the tree's 6, 4.8 us more, and sends 1.75 n against 2 n. The two
# cost the same where 0.25 n / beta = 4.8 us.

# %%
crossover = (14 - 6) * step_s / ((2 - 2 * 7 / 8) / beta)
print(f"crossover at {crossover / 1e6:.2f} MB, a batch of {crossover / n:,.0f} tokens")
assert eight.all_reduce_algorithm(math.floor(crossover / n)) == "tree"
assert eight.all_reduce_algorithm(math.ceil(crossover / n) + 1) == "ring"

# %% [markdown]
# ## Step 4: past the server, InfiniBand
#
# Sixteen H100s span two HGX servers of eight; between them each GPU has one 400 Gb/s NDR port, 50 GB/s,
# with 15 us fixed and 2.7 us a step in the preset. An all-reduce runs one ring per port, so a server's
# bytes leave through all eight at once: min(NVLink's 450, 8 x 50) = 400 GB/s.

# %%
ib = get_interconnect("infiniband-ndr")
sixteen = Scenario("llama-3.1-70b", level="refined", gpus=16, mode="peak", ignore_memory=True)
assert sixteen.setup.link_for(16).key == "infiniband-ndr"
ports = min(get_interconnect("nvlink4").bandwidth_bytes_per_s, 8 * ib.bandwidth_bytes_per_s)
hand16 = min(
    ib.latency_s + 2 * 15 * ib.hop_latency_s + 2 * 15 / 16 * n / ports,
    ib.latency_s + 2 * 4 * ib.hop_latency_s + 2 * n / ports,
)
print(f"16 GPUs: {hand16 * 1e6:.2f} us by hand, calculators {sixteen.all_reduce_time_s(1) * 1e6:.2f} us")
assert math.isclose(hand16, sixteen.all_reduce_time_s(1), rel_tol=1e-9)

# %% [markdown]
# ## Step 5: the decode step, and the all-reduces' share
#
# The step's time is each GPU's share of the weights and cache, its kernels, and the all-reduces (plus an
# all-gather of the output layer's logits). Its communication is 161 of the all-reduces above plus that
# gather.

# %%
times, shares = {}, {}
for p in (2, 4, 8, 16):
    options = {"level": "refined", "gpus": p, "mode": "peak", "kv_traffic": True, "ignore_memory": True}
    scenario = Scenario("llama-3.1-70b", **options)
    result = scenario.decode(1, 1000)
    gather = next(o for o in result.operators if o.name.startswith("output-layer logits"))
    assert math.isclose(result.communication_time_s, reduces * scenario.all_reduce_time_s(1) + gather.time_s)
    times[p], shares[p] = result.time_s, result.communication_time_s / result.time_s
    print(f"p = {p:>2}: step {result.time_s * 1e3:6.2f} ms, all-reduces and gather {shares[p]:.0%}")
assert shares[2] < shares[4] < shares[8]
print(f"from 2 to 8 GPUs: {times[2] / times[8]:.2f}x faster, not 4x")
assert times[2] / times[8] < 4
assert times[16] > times[8]

# The weights alone, read at HBM bandwidth and split p ways: what doubling from 8 to 16 could save.
weights = Scenario("llama-3.1-70b", level="refined").weight_bytes
hbm = Scenario("llama-3.1-70b").gpu.memory_bandwidth_bytes_per_s
saved = weights / hbm / 8 - weights / hbm / 16
extra = reduces * (sixteen.all_reduce_time_s(1) - eight.all_reduce_time_s(1))
print(f"8 -> 16 GPUs saves {saved * 1e3:.2f} ms of weight reads and adds {extra * 1e3:.2f} ms of all-reduces")
assert extra > saved

# %% [markdown]
# ## Step 6: KV heads copied past eight GPUs
#
# Llama-3.1 70B has 8 KV heads; a head is not split, so p GPUs store max(1, p / 8) copies of each.

# %%
for p in (4, 8, 16):
    copies = max(1, p / llama.kv_heads)
    computed = Scenario("llama-3.1-70b", level="refined", gpus=p).setup.kv_replication
    print(f"p = {p:>2}: {copies:g} copies of each KV head (calculators {computed:g})")
    assert copies == computed

# %%
display(build_chart("tensor-parallel-decode", batch=1, max_gpus=16).chart)


# %% [markdown]
# ## The lesson's chart at a larger batch
#
# The same chart at batch 64, where each GPU's own work grows and the all-reduces' share shrinks, and one
# decode all-reduce over eight GPUs in seconds.

# %%
display(build_chart("tensor-parallel-decode", batch=64, max_gpus=16).chart)

# %%
Scenario("llama-3.1-70b", level="refined", gpus=8).all_reduce_time_s(1)
