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
#     lesson: matmul-intensity
# ---

# %% [markdown]
# # Matmul intensity and the critical batch, worked through in Python
#
# The lesson's figures derived by hand: the intensity of a weight product over T tokens, the critical batch
# on several GPUs and in two formats, and the tiles and waves of a product on an H100. Each is checked against
# the course's `calculators` (their own defaults: the spec-peak bound, as the hand arithmetic is).

# %%
import math

import altair as alt
from IPython.display import display

from calculators import format_value, get_gpu, ridge_point
from calculators.charts import build_chart
from calculators.charts.notebook_tables import markdown_table
from calculators.charts.palette import NEUTRAL, SEQUENTIAL_COLOURS
from calculators.charts.specs import colour_scale
from calculators.gemm import critical_tokens, gemm
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

h100 = get_gpu("h100-sxm")
d_in, d_out = 4096, 14336  # Llama-3.1 8B's MLP up-projection

# %% [markdown]
# ## Intensity: FLOPs per byte of one product
#
# T tokens through a d_in x d_out weight: 2 T d_in d_out FLOPs; b bytes per value for the weight, the input
# and the output, each once.

# %%
rows = []
for tokens in (1, 8, 64, 512, 2000, 8192):
    flops = 2 * tokens * d_in * d_out
    bytes_moved = 2 * (d_in * d_out + tokens * d_in + tokens * d_out)
    by_hand = flops / bytes_moved
    assert math.isclose(by_hand, gemm(tokens, d_out, d_in).intensity_flop_per_byte)
    rows.append({"tokens": tokens, "FLOP/byte": by_hand, "FLOP/byte per token": by_hand / tokens})
markdown_table(rows)

# %% [markdown]
# The exact intensity is the token count (in BF16) divided by 1 + T S / D: within 5% of it up to about 160
# tokens, 9% below it at 300. Past that the activations' bytes count more and it grows more slowly, towards
# 2 D / (b S).

# %%
D, S = d_in * d_out, d_in + d_out
print(f"limit 2D/(bS) = {2 * D / (2 * S):,.0f} FLOP/byte")
for tokens in (159, 300):
    overstated = tokens * S / D  # T / I(T) - 1 in BF16, from I(T) = 2 T D / (2 (D + T S))
    assert math.isclose(tokens / gemm(tokens, d_out, d_in).intensity_flop_per_byte - 1, overstated)
    print(f"{tokens} tokens: the token count overstates the intensity by {overstated:.1%}")
assert 159 * S / D < 0.05
assert round(300 * S / D, 2) == 0.09
assert gemm(1 << 20, d_out, d_in).intensity_flop_per_byte < 2 * D / (2 * S)

# %% [markdown]
# ## The critical batch
#
# Setting 2 T D / (b (D + T S)) equal to the ridge R gives T = R b D / (2 D - R b S), about R b / 2.

# %%
rows = []
for key, precision, b in (
    ("a100-sxm-80gb", "bf16", 2),
    ("h100-sxm", "bf16", 2),
    ("h100-sxm", "fp8", 1),
    ("h200", "bf16", 2),
    ("b200", "bf16", 2),
):
    R = ridge_point(key, precision)
    by_hand = R * b * D / (2 * D - R * b * S)
    assert math.isclose(by_hand, critical_tokens(d_in, d_out, key, precision))
    rows.append({"GPU": key, "format": precision, "ridge": R, "R b / 2": R * b / 2, "critical": by_hand})
markdown_table(rows)

# %% [markdown]
# ## Tiles and waves on an H100
#
# 128 x 128 output tiles, one per SM at a time, on the H100 SXM's 132 SMs: the 4,096 x 4,096 output projection
# at 512 and 513 tokens.

# %%
sms = h100.anatomy.sm_count  # 132, from NVIDIA's H100 architecture whitepaper
for tokens in (512, 513):
    tiles = math.ceil(tokens / 128) * math.ceil(4096 / 128)
    waves = math.ceil(tiles / sms)
    share = tokens * 4096 / (waves * sms * 128 * 128)
    product = gemm(tokens, 4096, 4096)
    assert (tiles, waves) == (product.tiles, product.waves)
    assert math.isclose(share, product.quantised_efficiency)
    maths = 2 * tokens * 4096 * 4096 / (h100.peak_flops_per_s("bf16") * share)
    assert math.isclose(maths, product.quantised_compute_time_s)
    assert math.isclose(product.quantised_time_s, max(maths, product.memory_time_s))
    bytes_time = format_value(product.memory_time_s, "us")
    print(
        f"{tokens} tokens: {tiles} tiles, {waves} wave(s), {share:.1%} of the maths is the product's own, "
        f"padded maths {format_value(maths, 'us')} against {bytes_time} of bytes"
    )

# %% [markdown]
# ## Bound, padded tiles and the calibrated estimate
#
# The share of the BF16 peak each reaches for the up-projection, as the token count grows. The calibrated
# estimate is the course's fit to Vidur's measured linear layers.

# %%
rows = []
for tokens in (1, 16, 64, 128, 300, 512, 2048, 8192):
    product = gemm(tokens, d_out, d_in, mode="calibrated")
    peak = h100.peak_flops_per_s("bf16")
    rows.append(
        {
            "tokens": tokens,
            "bound": product.flops / product.bound_time_s / peak,
            "with tiles and waves": product.flops / product.quantised_time_s / peak,
            "calibrated": product.flops / product.calibrated_time_s / peak,
        }
    )
    assert product.calibrated_time_s > product.bound_time_s
    assert product.quantised_time_s >= product.bound_time_s
markdown_table(rows)

# %% [markdown]
# The same shares for every token count from 1 to 4,096, on a log axis: the bound climbs with the token count
# up to the ridge, the padded tiles and partly empty waves make a saw-tooth below it, and the calibrated curve
# stays below both.

# %%
SERIES = {
    "bound": NEUTRAL,
    "with tiles and waves": SEQUENTIAL_COLOURS[0],
    "calibrated": SEQUENTIAL_COLOURS[-1],
}
curve = []
for tokens in sorted({round(2 ** (i / 8)) for i in range(97)}):
    product = gemm(tokens, d_out, d_in, mode="calibrated")
    peak = h100.peak_flops_per_s("bf16")
    times = {
        "bound": product.bound_time_s,
        "with tiles and waves": product.quantised_time_s,
        "calibrated": product.calibrated_time_s,
    }
    for name, t in times.items():
        curve.append({"tokens": tokens, "series": name, "share": product.flops / t / peak})
(
    alt.Chart(alt.Data(values=curve))
    .mark_line()
    .encode(
        x=alt.X("tokens:Q", scale=alt.Scale(type="log"), title="Tokens through the weight (log scale)"),
        y=alt.Y("share:Q", axis=alt.Axis(format="%"), title="Share of the BF16 peak"),
        color=alt.Color("series:N", title=None, scale=colour_scale(SERIES)),
        tooltip=["series:N", "tokens:Q", alt.Tooltip("share:Q", format=".1%")],
    )
    .properties(
        width=560,
        description="Share of the H100's BF16 peak a 4,096 x 14,336 product reaches, by its token count.",
    )
)

# %% [markdown]
# ## The lesson's chart for another GPU and format
#
# The course's chart builders take the lesson's chart parameters. Here the H200 in FP8, where the ridge is
# twice its BF16 one and each value one byte.

# %%
fp8 = build_chart("roofline", gpus=["h200"], precision="fp8", model="llama-3.1-8b", batches=[1, 64, 256])
display(fp8.chart)
