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
#     lesson: pipeline-parallelism
# ---

# %% [markdown]
# # Pipeline parallelism, worked through in Python
#
# The pipeline parallelism lesson makes four claims.
# Stages divide the weights and the KV cache per GPU, without copying KV heads as wide tensor parallelism
# does.
# A token still passes every layer in order, so a decode step is no faster: the stages run in turn, and the
# sends between them add to the step.
# With one batch in flight each of P stages idles (P - 1) / P of the step; m micro-batches cut that to
# (P - 1) / (m + P - 1), which raises the throughput of a compute-bound step and lowers that of a
# memory-bound one.
# Across servers, a stage boundary moves far fewer bytes than tensor parallelism's all-reduces; on servers
# with a network card per GPU the wide split still has the shorter step, and the stages win on room for the
# cache and on tokens per second once a batch is in flight on each stage.
# This notebook derives each by hand at spec-sheet peaks (the calculators' own defaults, the bound) and checks
# it against the calculators.

# %%
import math

from IPython.display import display

from calculators import Scenario, get_gpu, get_interconnect, get_model
from calculators.charts import build_chart
from calculators.simulator.experiments import pipeline_step
from calculators.simulator.pipeline import bubble_fraction
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## Step 1: weights and KV cache per GPU
#
# Llama-3.1 405B in BF16 is 2 bytes per parameter. Two stages of eight-way tensor parallelism give each GPU
# 1/16 of the weights, as sixteen-way tensor parallelism does. The KV cache of one token is
# 2 (keys and values) x layers x KV heads x head size x 2 bytes; a stage caches only its own layers, while
# tensor parallelism past eight GPUs copies each of the 8 KV heads.

# %%
big = get_model("llama-3.1-405b")
weights = big.derived_params * 2
h100 = get_gpu("h100-sxm")
print(f"weights {weights / 1e9:,.1f} GB; per GPU on 8: {weights / 8 / 1e9:.1f} GB, ", end="")
print(f"on 16: {weights / 16 / 1e9:.1f} GB")
print(f"an H100 has {h100.memory_capacity_bytes / 1e9:.0f} GB")
assert weights / 8 > h100.memory_capacity_bytes  # one server cannot hold it

staged = Scenario("llama-3.1-405b", level="refined", gpus=8, pipeline_stages=2)
wide = Scenario("llama-3.1-405b", level="refined", gpus=16)
assert math.isclose(staged.setup.memory.weight_bytes_per_gpu, weights / 16)
assert math.isclose(wide.setup.memory.weight_bytes_per_gpu, weights / 16)

kv_token = 2 * big.layers * big.kv_heads * big.head_dim * 2
print(f"KV cache per token: {kv_token:,} bytes in all, {kv_token // 2:,} on each stage")
copies = max(1, 16 / big.kv_heads)
print(f"sixteen-way tensor parallelism stores each KV head {copies:g} times: {kv_token * copies:,.0f} bytes")
assert staged.kv_bytes_per_token == kv_token
assert wide.kv_bytes_per_token == kv_token * copies
print(
    f"sequences of 1,000 tokens that fit: staged {staged.max_batch(1000)}, sixteen-way {wide.max_batch(1000)}"
)
assert staged.max_batch(1000) > wide.max_batch(1000)

# %% [markdown]
# ## Step 2: a token passes every stage, so the step is no faster
#
# Llama-3.1 70B fits in one server, so it can be compared with itself. The second stage waits for the first,
# so two stages take the time of one server's step plus the send between them: InfiniBand's fixed 15 us plus
# one token's activation, 8,192 BF16 values, at 50 GB/s.

# %%
llama = get_model("llama-3.1-70b")
ib = get_interconnect("infiniband-ndr")
send = ib.latency_s + llama.hidden_size * 2 / ib.bandwidth_bytes_per_s
print(
    f"one send: {ib.latency_s * 1e6:.0f} us + {llama.hidden_size * 2:,} bytes / 50 GB/s = {send * 1e6:.2f} us"
)

one_server = Scenario("llama-3.1-70b", level="refined", gpus=8).decode(1, 1000).time_s
two_servers = Scenario("llama-3.1-70b", level="refined", gpus=8, pipeline_stages=2).decode(1, 1000).time_s
print(f"8 GPUs: {one_server * 1e3:.3f} ms; 2 stages of 8: {two_servers * 1e3:.3f} ms")
assert math.isclose(two_servers - one_server, send, rel_tol=1e-6)

# The same eight GPUs as stages read their weights in turn, not at once: the step grows.
for tp, stages in ((8, 1), (4, 2), (2, 4), (1, 8)):
    step = Scenario("llama-3.1-70b", level="refined", gpus=tp, pipeline_stages=stages).decode(1, 1000).time_s
    print(f"tensor-parallel {tp} x {stages} stages: {step * 1e3:6.2f} ms")

# %% [markdown]
# ## Step 3: the bubble, by walking the schedule
#
# In the synchronous schedule stage s starts micro-batch k once it has finished micro-batch k - 1 and stage
# s - 1 has finished micro-batch k. Walking that grid gives the step's length; with equal micro-batches of
# t per stage it is (m + P - 1) t, and each stage idles (P - 1) t of it.


# %%
def schedule(stage_times: list[float], stages: int) -> float:
    """When the last stage finishes the last micro-batch, each micro-batch taking its time on every stage."""
    done = [[0.0] * len(stage_times) for _ in range(stages)]
    for s in range(stages):
        for k, t in enumerate(stage_times):
            ready = max(done[s][k - 1] if k else 0.0, done[s - 1][k] if s else 0.0)
            done[s][k] = ready + t
    return done[-1][-1]


for stages, m in ((2, 1), (2, 4), (4, 4), (4, 12)):
    step = schedule([1.0] * m, stages)
    idle = (step - m) / step
    print(f"P = {stages}, m = {m:>2}: step {step:g} stage-times, each stage idles {idle:.0%}")
    assert math.isclose(idle, (stages - 1) / (m + stages - 1))
    assert math.isclose(idle, bubble_fraction(stages, m))

# %% [markdown]
# ## Step 4: micro-batches through Llama-3.1 405B's two stages
#
# Eight 2,000-token prompts, split into four micro-batches of two: each micro-batch's pass through both
# stages takes t2 (the calculators' prefill of two prompts), so t2 / 2 on each stage, and the step is the
# schedule above. Against one pass of all eight prompts, the throughput rises. A decode step of 64 in four
# micro-batches of 16 is the same walk with the decode pass of 16: memory-bound, about as long as the pass of
# 64, so the step grows.

# %%
t2 = staged.prefill(2000, batch=2).time_s
t8 = staged.prefill(2000, batch=8).time_s
prefill_step = schedule([t2 / 2] * 4, 2)
print(f"prefill: one pass {t8:.3f} s, four micro-batches {prefill_step:.3f} s, {t8 / prefill_step:.2f}x")
assert math.isclose(prefill_step, pipeline_step(2, 4, prompts=8).step_s)
assert prefill_step < t8

t16 = staged.decode(16, 1000).time_s
t64 = staged.decode(64, 1000).time_s
decode_step = schedule([t16 / 2] * 4, 2)
print(f"decode: one pass {t64 * 1e3:.1f} ms, four micro-batches {decode_step * 1e3:.1f} ms")
assert math.isclose(decode_step, pipeline_step(2, 4, decoding=64, context=1000).step_s)
assert decode_step > t64

# %% [markdown]
# ## Step 5: what crosses the servers, and how fast
#
# A stage boundary sends each token's activation once a step. Sixteen-way tensor parallelism all-reduces the
# same activation 2L + 1 times a step, and a ring makes each GPU send 2 (p - 1) / p of it each time. An
# all-reduce across servers runs one ring per network card, so a server's share leaves through all eight of
# its 50 GB/s cards at once: 400 GB/s together, a little under NVLink's 450. The send between stages has
# one card, its GPU's own.

# %%
reduces = 2 * big.layers + 1
ratio = reduces * 2 * 15 / 16
print(f"{reduces} all-reduces a step, about {ratio:.0f} times the bytes of one stage boundary")
nvlink = get_interconnect("nvlink4")
across = min(nvlink.bandwidth_bytes_per_s, 8 * ib.bandwidth_bytes_per_s)
print(f"an all-reduce across the servers: min(450, 8 x 50) = {across / 1e9:.0f} GB/s")
assert wide.setup.all_reduce_link_for(16).bandwidth_bytes_per_s == across
assert wide.setup.link_for(16).bandwidth_bytes_per_s == ib.bandwidth_bytes_per_s  # a send: one card
for batch in (1, 64):
    tp16 = wide.decode(batch, 1000)
    pp2 = staged.decode(batch, 1000)
    print(
        f"batch {batch:>2}: sixteen-way {tp16.time_s * 1e3:.1f} ms "
        f"(communication {tp16.communication_time_s * 1e3:.1f}), "
        f"two stages {pp2.time_s * 1e3:.1f} ms (communication {pp2.communication_time_s * 1e3:.2f})"
    )
    # Sixteen GPUs read and compute at once where two stages take turns: the wide split's step is shorter.
    assert tp16.time_s < pp2.time_s

# %% [markdown]
# ## Step 6: batches in flight
#
# With two batches in flight, each stage always busy and the sends hidden, the pipeline writes two batches'
# tokens per pass: an upper estimate the synchronous simulator does not model. Against sixteen-way tensor
# parallelism holding as many sequences in one batch, the stages win once the batches are large, and they
# hold about twice the sequences.

# %%
in_flight = 2 * 64 / t64
one_big_batch = 128 / staged.decode(128, 1000).time_s
print(f"two batches of 64 in flight: {in_flight:,.0f} tokens/s; one batch of 128: {one_big_batch:,.0f}")
assert in_flight > one_big_batch
for sequences in (128, 256):
    stages_rate = sequences / staged.decode(sequences // 2, 1000).time_s
    wide_rate = sequences / wide.decode(sequences, 1000).time_s
    print(f"{sequences} sequences: two stages {stages_rate:,.0f} tokens/s, sixteen-way {wide_rate:,.0f}")
assert 256 / staged.decode(128, 1000).time_s > 256 / wide.decode(256, 1000).time_s
most_staged, most_wide = staged.max_batch(1000), wide.max_batch(1000)
full_staged = most_staged / staged.decode(most_staged // 2, 1000).time_s
full_wide = most_wide / wide.decode(most_wide, 1000).time_s
print(f"as many as fit: two stages {most_staged} at {full_staged:,.0f} tokens/s, ", end="")
print(f"sixteen-way {most_wide} at {full_wide:,.0f}")

# %% [markdown]
# ## The lesson's charts from your own numbers
#
# The lesson's two charts at the calculators' own defaults (spec peaks; the site draws them calibrated):
# one prefill step and one decode step of Llama-3.1 405B, tokens per second against the micro-batches, one
# line per number of stages.

# %%
display(build_chart("pipeline-micro-batches", phase="prefill", batch=8, context=2000).chart)

# %%
display(build_chart("pipeline-micro-batches", phase="decode", batch=64, context=1000).chart)

# %% [markdown]
# And one figure to end with: the bubble of four stages and twelve micro-batches, the lesson's first quiz.

# %%
bubble_fraction(4, 12)
