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
#     lesson: tokens-parameters-and-flops
# ---

# %% [markdown]
# # Tokens, parameters and FLOPs, worked through in Python
#
# The lesson makes four claims: Llama-3.1-8B's configuration gives **exactly its published 8,030,261,248
# parameters**; a decoded token costs **about 2N FLOPs** of weight products; attention adds
# **4 × layers × heads × head size FLOPs per token of context**, which matches the weights' FLOPs at about
# **29,000 tokens**; and a mixture-of-experts model's FLOPs follow its **active** parameters.
# This notebook derives each one by hand from the published shapes, checks it against the `calculators`
# package, and then counts a model of your own.
#
# Everything here is arithmetic on published configurations; no GPU is involved.

# %%
import altair as alt

from calculators import Scenario, format_value, get_model
from calculators.charts.notebook_tables import markdown_table
from calculators.charts.palette import NEUTRAL, sequential_colours
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

# %% [markdown]
# ## Step 1: the configuration
#
# These are the fields of Llama-3.1-8B's `config.json` on Hugging Face that the count needs, typed here by
# hand so that nothing below leans on the calculators.

# %%
layers = 32  # num_hidden_layers
hidden = 4096  # hidden_size
heads = 32  # num_attention_heads
kv_heads = 8  # num_key_value_heads
head_dim = 128  # head_dim
mlp_width = 14336  # intermediate_size
vocab = 128256  # vocab_size
tied = False  # tie_word_embeddings

llama = get_model("llama-3.1-8b")
assert (llama.layers, llama.hidden_size, llama.head_dim) == (layers, hidden, head_dim)
assert (llama.attention_heads, llama.kv_heads) == (heads, kv_heads)
assert (llama.mlp_width, llama.vocab_size, llama.tied_embeddings) == (mlp_width, vocab, tied)

# %% [markdown]
# ## Step 2: the parameters, component by component
#
# Attention: a query matrix (hidden → heads × head size), key and value matrices (hidden → KV heads × head
# size each) and an output matrix (heads × head size → hidden). The SwiGLU MLP: gate, up and down, each
# hidden × inner width. Two RMSNorm scales per layer and a final one. The embedding table, and the output
# layer, which is a second matrix of the same shape unless tied.

# %%
attention_per_layer = hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden
mlp_per_layer = 3 * hidden * mlp_width
norms = (2 * layers + 1) * hidden
embedding = vocab * hidden
output_layer = 0 if tied else vocab * hidden
total = layers * (attention_per_layer + mlp_per_layer) + norms + embedding + output_layer

rows = [
    {"component": "attention (all layers)", "parameters": layers * attention_per_layer},
    {"component": "MLP (all layers)", "parameters": layers * mlp_per_layer},
    {"component": "norms", "parameters": norms},
    {"component": "embedding", "parameters": embedding},
    {"component": "output layer", "parameters": output_layer},
    {"component": "total", "parameters": total},
]
for row in rows:
    row["share of total"] = f"{row['parameters'] / total:.2%}"
    row["parameters"] = f"{row['parameters']:,}"
markdown_table(rows)

# %%
parts = [row for row in rows if row["component"] != "total"]
(
    alt.Chart(alt.Data(values=parts))
    .transform_calculate(billions="parseFloat(replace(datum.parameters, /,/g, '')) / 1e9")
    .mark_bar(color=NEUTRAL)
    .encode(
        x=alt.X("billions:Q", title="Parameters (billions)"),
        y=alt.Y("component:N", sort="-x", title=None),
        tooltip=["component:N", "parameters:N", "share of total:N"],
    )
    # A width lets the course draw the chart again at a phone's width, with text that stays readable there.
    .properties(width=560, description="Llama-3.1-8B's parameters by component, in billions.")
)

# %%
print(f"by hand:     {total:,}")
print(f"calculators: {llama.derived_params:,.0f}")
print(f"published:   {llama.published_params:,.0f}  (Hugging Face, the weights' parameter count)")
assert attention_per_layer == llama.attention_params_per_layer == 41_943_040
assert mlp_per_layer == llama.dense_mlp_params_per_layer == 176_160_768
assert norms == llama.norm_params
assert total == llama.derived_params == llama.published_params == 8_030_261_248

# %% [markdown]
# ## Step 3: two FLOPs per weight
#
# Each weight a token is multiplied by costs a multiply and an add. The embedding is a lookup (no FLOPs), and
# the output layer runs once for the token being decoded. So one decoded token costs
# 2 × (attention + MLP + output layer) FLOPs of weight products.

# %%
weight_flops = 2 * (layers * (attention_per_layer + mlp_per_layer) + vocab * hidden)
step = Scenario("llama-3.1-8b", level="refined").decode(1, 1)
print(f"by hand:     {format_value(weight_flops, 'GFLOP')}")
print(f"calculators: {format_value(step.matmul_flops, 'GFLOP')}")
rule = weight_flops / (2 * total)
print(f"2N:          {format_value(2 * total, 'GFLOP')}  (the rule of thumb: the count is {rule:.1%} of it)")
assert step.matmul_flops == weight_flops

# %% [markdown]
# ## Step 4: the attention term
#
# Per layer and query head, a new token takes a dot product with every earlier key (2 × head size FLOPs) and
# adds in every earlier value (2 × head size). Key and value heads do not enter: each query head does its own.

# %%
attention_per_context_token = 4 * layers * heads * head_dim
crossover = weight_flops / attention_per_context_token
print(f"attention: {attention_per_context_token:,} FLOPs per token of context")
print(f"it matches the weight products at {crossover:,.0f} tokens of context")
assert round(crossover, -3) == 29_000  # the lesson's "about 29,000 tokens"

for context in (1_000, 8_192, 32_768, 131_072):
    at = Scenario("llama-3.1-8b", level="refined").decode(1, context)
    assert at.attention_flops == attention_per_context_token * context
    share = at.attention_flops / (at.attention_flops + at.matmul_flops)
    flops = format_value(at.attention_flops, "GFLOP")
    print(f"  {context:>7,} tokens: attention {flops}, {share:.0%} of the token")

# %% [markdown]
# ## Step 5: mixture of experts, total against active
#
# Mixtral 8x7B: the same attention shapes as Llama-3.1-8B's, a 32,000-token vocabulary, and in every layer a
# router (hidden × 8) and 8 SwiGLU experts of inner width 14,336, of which each token uses 2.

# %%
experts, per_token, expert = 8, 2, 3 * hidden * 14336
mix_vocab = 32000
shared_parts = layers * (attention_per_layer + hidden * experts) + norms + 2 * mix_vocab * hidden
mix_total = shared_parts + layers * experts * expert
mix_active = shared_parts + layers * per_token * expert
mixtral = get_model("mixtral-8x7b")
print(f"total:  {mix_total:,}  (calculators {mixtral.derived_params:,.0f}; the paper: 47B)")
print(f"active: {mix_active:,}  (calculators {mixtral.active_params:,.0f}; the paper: 13B)")
assert mix_total == mixtral.derived_params
assert mix_active == mixtral.active_params

# %% [markdown]
# ## Your own model
#
# Change the shapes below (a model's `config.json` has them all) and rerun: the count, the FLOPs per token and
# the context at which attention catches up.

# %%
mine = {
    "layers": 48,
    "hidden": 5120,
    "heads": 40,
    "kv_heads": 8,
    "head_dim": 128,
    "mlp_width": 13824,
    "vocab": 152064,
    "tied": False,
}
m = mine
attn = m["hidden"] * m["heads"] * m["head_dim"] * 2 + 2 * m["hidden"] * m["kv_heads"] * m["head_dim"]
mlp = 3 * m["hidden"] * m["mlp_width"]
tables = m["vocab"] * m["hidden"] * (1 if m["tied"] else 2)  # embedding, and the output layer unless tied
n = m["layers"] * (attn + mlp + 2 * m["hidden"]) + m["hidden"] + tables
flops = 2 * (m["layers"] * (attn + mlp) + m["vocab"] * m["hidden"])
per_context = 4 * m["layers"] * m["heads"] * m["head_dim"]
print(f"parameters: {format_value(n, 'B')}")
print(f"weight FLOPs per token: {format_value(flops, 'GFLOP')}")
print(f"BF16 weights: {format_value(2 * n, 'GB')}")
print(f"attention matches the weights at {flops / per_context:,.0f} tokens of context")

# %% [markdown]
# ## Attention's share for three sizes
#
# The same count for the three Llama-3.1 sizes, from the cost model.

# %%
points = []
sizes = ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"]
colours = dict(zip(sizes, sequential_colours(len(sizes)), strict=True))
for key in sizes:
    for context in (512, 2048, 8192, 32768, 131072):
        at = Scenario(key, level="refined", ignore_memory=True).decode(1, context)
        share = at.attention_flops / (at.attention_flops + at.matmul_flops)
        points.append({"model": get_model(key).name, "key": key, "context": context, "share": 100 * share})
by_size = alt.Scale(domain=[get_model(k).name for k in sizes], range=[colours[k] for k in sizes])
(
    alt.Chart(alt.Data(values=points))
    .mark_line(point=True)
    .encode(
        x=alt.X("context:Q", scale=alt.Scale(type="log"), title="Tokens attended to"),
        y=alt.Y("share:Q", title="Attention's share of the token's FLOPs (%)"),
        color=alt.Color("model:N", title="Model", scale=by_size),
    )
    .properties(width=560, description="Attention's share of a token's FLOPs against the context, per model.")
)
