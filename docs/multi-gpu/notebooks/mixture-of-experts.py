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
#     lesson: mixture-of-experts
# ---

# %% [markdown]
# # Mixture of experts and expert parallelism, worked through in Python
#
# The lesson makes four claims. A batch of b tokens, each routing to k of E experts at random, touches
# E (1 - (1 - k/E)^b) experts. Spread over G GPUs, the busiest GPU holds several times the average at small
# batch (2.6 times for DeepSeek-V3 on 8 GPUs at batch 1), and the routed experts' time follows it. Each MoE
# layer's dispatch carries b k h values. This notebook derives each one its own way (enumeration, a
# dynamic programme, a seeded simulation) and checks it against the calculators.

# %%
import itertools
import math
import random

from IPython.display import display

from calculators import Scenario, format_value
from calculators.charts import build_chart
from calculators.expert_parallel import expert_load
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## Step 1: experts touched by a batch
#
# An expert is left out of one token's k picks with probability C(E-1, k) / C(E, k) = 1 - k/E, and tokens
# choose independently. First a brute-force check on a small layer (6 experts, 2 per token, 3 tokens: every
# routing enumerated), then DeepSeek-V3's shape against the calculators.

# %%
E, k, b = 6, 2, 3
subsets = list(itertools.combinations(range(E), k))
total = sum(len(set().union(*routing)) for routing in itertools.product(subsets, repeat=b))
enumerated = total / len(subsets) ** b
formula = E * (1 - (1 - k / E) ** b)
print(f"6 experts, top-2, 3 tokens: enumerated {enumerated:.6f}, formula {formula:.6f}")
assert math.isclose(enumerated, formula, rel_tol=1e-12)

for tokens in (1, 8, 64, 256):
    by_hand = 256 * (1 - (1 - 8 / 256) ** tokens)
    computed = expert_load("deepseek-v3", 8, tokens).experts_touched
    print(f"DeepSeek-V3, {tokens:>3} tokens: {by_hand:6.1f} of 256 experts (calculators {computed:6.1f})")
    assert math.isclose(by_hand, computed, rel_tol=1e-12)

# %% [markdown]
# ## Step 2: the busiest GPU for one token, by a dynamic programme
#
# One token's 8 picks are a uniform 8-subset of 256 experts, 32 on each of 8 GPUs. Walk over the GPUs,
# keeping for each (picks so far, largest count so far) the number of ways; each GPU contributes C(32, c)
# ways to take c of its experts. The expected maximum is the ways-weighted mean over C(256, 8) subsets.
# (The calculators use a generating polynomial instead.)


# %%
def busiest_one_token(experts: int, gpus: int, per_token: int) -> float:
    held = experts // gpus
    ways = {(0, 0): 1}
    for _ in range(gpus):
        nxt: dict[tuple[int, int], int] = {}
        for (picked, most), n in ways.items():
            for c in range(min(held, per_token - picked) + 1):
                key = (picked + c, max(most, c))
                nxt[key] = nxt.get(key, 0) + n * math.comb(held, c)
        ways = nxt
    weighted = sum(most * n for (picked, most), n in ways.items() if picked == per_token)
    return weighted / math.comb(experts, per_token)


by_dp = busiest_one_token(256, 8, 8)
load = expert_load("deepseek-v3", 8, 1)
print(f"busiest GPU holds {by_dp:.4f} experts (calculators {load.busiest_gpu_experts:.4f}); "
      f"average {load.mean_gpu_experts:.0f}, so {by_dp / load.mean_gpu_experts:.2f}x")  # fmt: skip
assert math.isclose(by_dp, load.busiest_gpu_experts, rel_tol=1e-9)

# %% [markdown]
# ## Step 3: the busiest GPU at larger batches, by a seeded simulation
#
# Route the batch at random 4,000 times (seed 11) and average the busiest GPU's distinct experts. The
# busiest count's spread is under 2 experts, so the simulated mean is within about 0.03 of the truth:
# 2 % is several standard errors.

# %%
rng = random.Random(11)
trials = 4000
for tokens in (2, 8, 32):
    most = 0
    for _ in range(trials):
        touched: list[set[int]] = [set() for _ in range(8)]
        for _ in range(tokens):
            for e in rng.sample(range(256), 8):
                touched[e // 32].add(e)
        most += max(len(t) for t in touched)
    simulated = most / trials
    exact = expert_load("deepseek-v3", 8, tokens).busiest_gpu_experts
    print(f"{tokens:>2} tokens: simulated {simulated:.3f}, calculators {exact:.3f}")
    assert math.isclose(simulated, exact, rel_tol=0.02)

# %% [markdown]
# ## Step 4: the routed experts' time follows the busiest GPU
#
# At batch 1 the routed experts are memory-bound: their time is the bytes the busiest GPU reads. Its experts'
# weights (and their token's activations) are the busiest/average ratio times the even split's; the
# router's weights (256 x 7,168 values x 2 bytes in each of the 58 MoE layers) and the token's input (7,168
# x 2 bytes a layer) belong to no expert and cost what they cost split evenly. At spec-sheet peaks:


# %%
def deepseek(expert_parallel: bool) -> Scenario:
    return Scenario(
        "deepseek-v3", "h200", gpus=8, precision="fp8", level="refined", data_parallel_attention=True,
        expert_parallel=expert_parallel, mode="peak",
    )  # fmt: skip


balanced = deepseek(False).decode(1, 4096).routed_experts_time_s
busiest = deepseek(True).decode(1, 4096).routed_experts_time_s
routed = next(op for op in deepseek(False).decode(1, 4096).operators if op.name.startswith("routed experts"))
shared = 58 * (256 * 7168 + 7168) * 2 / routed.bytes_moved  # the router and the input: 1% of the bytes
expected = load.imbalance - (load.imbalance - 1) * shared
print(f"routed experts: {format_value(balanced, 'ms')} split evenly, {format_value(busiest, 'ms')} with "
      f"expert parallelism, ratio {busiest / balanced:.3f} ({expected:.3f} by hand)")  # fmt: skip
assert math.isclose(busiest / balanced, expected, rel_tol=1e-3)

# %% [markdown]
# ## Step 5: the dispatch's bytes and time inside one node
#
# 64 tokens x 8 experts x 7,168 values x 2 bytes per layer. Inside one node of 8 GPUs the busiest receiver
# gets 7/8 of its pairs over NVLink 4 (450 GB/s each way, 5 us per collective). 58 MoE layers, a dispatch
# and a combine each.

# %%
tokens, hidden = 64, 7168
dispatch = tokens * 8 * hidden * 2
load64 = expert_load("deepseek-v3", 8, tokens)
computed_bytes = format_value(load64.dispatch_bytes, "MB")
print(f"dispatch per layer {format_value(dispatch, 'MB')} (calculators {computed_bytes})")
assert dispatch == load64.dispatch_bytes
one = 5e-6 + load64.busiest_gpu_pairs * 7 / 8 * hidden * 2 / 450e9
by_hand = 2 * 58 * one
computed = deepseek(True).decode(tokens, 4096).all_to_all_time_s
print(f"all-to-alls per step: {format_value(by_hand, 'ms')} by hand, {format_value(computed, 'ms')} computed")
assert math.isclose(by_hand, computed, rel_tol=1e-9)

# %% [markdown]
# ## The lesson's chart
#
# The average and the busiest GPU's experts touched against the batch, from the calculators.

# %%
display(build_chart("expert-load", model="deepseek-v3", gpus=8, max_batch=512).chart)


# %% [markdown]
# ## The lesson's chart for Mixtral
#
# The same chart for Mixtral 8x7B, eight experts over eight GPUs, one each: at batch 1 the busiest GPU
# holds all the work of the step's two experts. Then DeepSeek-V3's imbalance at batch 64.

# %%
display(build_chart("expert-load", model="mixtral-8x7b", gpus=8, max_batch=512).chart)

# %%
round(expert_load("deepseek-v3", 8, 64).imbalance, 3)
