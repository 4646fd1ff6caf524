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
#     lesson: chunked-prefill
# ---

# %% [markdown]
# # Chunked prefill, worked through in Python
#
# The lesson quotes a stall of **about 30 decode steps** when an 8,000-token prompt lands on an H100 that is
# decoding sixteen requests, and shows that a token budget of 512 shrinks the worst gap to **one step with a
# chunk in it** at a cost in the new request's time to first token.
# Its figures are the course's calibrated estimate with the KV-cache reads counted; this notebook derives
# their spec-peak bound with the roofline by hand, leaving the cache reads out (about 28 steps, and a cheaper
# chunk than the lesson's), then runs the course's serving simulator at the same bound on the same arrival and
# checks that both agree. It ends by varying the budget and the GPU.
#
# Everything runs on a laptop: the simulator is spec-sheet arithmetic, step by step.

# %%
import math

import altair as alt
from IPython.display import display

from calculators import Scenario, format_value
from calculators.charts import build_chart
from calculators.charts.notebook_tables import markdown_table
from calculators.charts.palette import SCHEDULER_COLOURS
from calculators.simulator.experiments import chunk_step_s, prefill_stall
from course.notebooks.renderer import enable_course_charts

enable_course_charts()

# %% [markdown]
# ## Step 1: one decode step and the ridge point
#
# The lesson's scenario: an 8B model in BF16 on an H100 SXM at spec-sheet peaks.
# A decode step reads the weights once, so it lasts 2N / bandwidth whatever small batch it carries.
# The ridge point, peak / bandwidth, is how many tokens one step can carry before arithmetic, not the weight
# reads, sets its length.

# %%
lesson = Scenario()
N = lesson.model.params
peak = lesson.gpu.peak_flops_per_s("bf16")
bandwidth = lesson.gpu.memory_bandwidth_bytes_per_s
decode_step = 2 * N / bandwidth
ridge = peak / bandwidth
print(f"decode step t_d = 2 x {N:.3g} / {bandwidth:.3g} = {format_value(decode_step, 'ms')}")
print(f"ridge point R   = {peak:.4g} / {bandwidth:.3g} = {ridge:.1f} tokens per step")
assert math.isclose(lesson.decode().time_s, decode_step, rel_tol=1e-12)


def step_time(decodes: int, chunk: int) -> float:
    """The roofline time of a step with ``decodes`` decode tokens and a ``chunk`` of prompt tokens."""
    return decode_step * max(1.0, (decodes + chunk) / ridge)


# %% [markdown]
# ## Step 2: the stall without chunks
#
# Prefill first, the 8,000-token prompt runs alone in one step of t(0, P), and the decoding requests then
# need their own step: their gap is t_d (P / R + 1).

# %%
P, b = 8000, 16
stall_by_hand = step_time(0, P) + step_time(b, 0)
print(f"stall = {format_value(step_time(0, P), 'ms')} + {format_value(step_time(b, 0), 'ms')}")
print(f"      = {format_value(stall_by_hand, 'ms')} = {stall_by_hand / decode_step:.1f} decode steps")

simulated = prefill_stall(P, b)
print(f"simulator: {format_value(simulated.longest_gap_s, 'ms')}, {simulated.stall_steps:.1f} steps")
assert math.isclose(simulated.longest_gap_s, stall_by_hand, rel_tol=0.01)

# %% [markdown]
# The simulator agrees: its engine times every step with the same roofline, and the prompt happens to arrive
# just as a decode step ends, so the decodes wait for exactly the prefill and then their own step.

# %% [markdown]
# ## Step 3: the same arrival with a budget of 512
#
# Each step gives one token to each of the sixteen decodes and the rest of the budget, 496 tokens, to the
# prompt. The prompt needs ceil(8000 / 496) steps, each lasting t(16, 496), and no gap is longer than one.

# %%
B = 512
chunk = B - b
steps = math.ceil(P / chunk)
print(f"steps carrying the prompt = ceil({P} / {chunk}) = {steps}")
print(f"each step = t({b}, {chunk}) = {format_value(step_time(b, chunk), 'ms')}")
print(f"prefill spread over the steps: about {format_value(steps * step_time(b, chunk), 'ms')}")

chunked = prefill_stall(P, b, B)
print(
    f"simulator: {chunked.prefill_steps} steps, longest gap {format_value(chunked.longest_gap_s, 'ms')}, "
    f"TTFT {format_value(chunked.ttft_s, 'ms')}"
)
assert chunked.prefill_steps == steps
assert math.isclose(chunked.longest_gap_s, step_time(b, chunk), rel_tol=0.01)
assert math.isclose(chunk_step_s(b, chunk), chunked.longest_gap_s, rel_tol=0.01)

# %% [markdown]
# The last step carries only what is left of the prompt, and the TTFT also includes the wait for the step in
# progress when the prompt arrived, so the simulator's TTFT is a little below steps x t and a little above it
# respectively; both effects are under one step.

# %% [markdown]
# ## Step 4: the trade across budgets
#
# A small budget keeps each step at t_d but needs many steps; a big one needs few steps but makes each
# of them, and so the decodes' gaps, longer.

# %%
rows = []
for budget in (None, 128, 256, 512, 1024, 2048, 4096):
    run = prefill_stall(P, b, budget)
    rows.append(
        {
            "budget": "none" if budget is None else f"{budget:,}",
            "steps carrying the prompt": run.prefill_steps,
            "longest gap (ms)": run.longest_gap_s * 1e3,
            "longest gap (steps)": run.stall_steps,
            "TTFT of the new request (ms)": run.ttft_s * 1e3,
        }
    )
markdown_table(rows, digits=3)

# %%
chunked_rows = [r for r in rows if r["budget"] != "none"]
(
    alt.Chart(alt.Data(values=chunked_rows))
    .mark_line(point=True, color=SCHEDULER_COLOURS["chunked"])
    .encode(
        x=alt.X(
            "longest gap (ms):Q", title="Longest gap for a decoding request (ms)", scale=alt.Scale(type="log")
        ),
        y=alt.Y(
            "TTFT of the new request (ms):Q", title="New request's TTFT (ms)", scale=alt.Scale(zero=False)
        ),
        tooltip=["budget:N", alt.Tooltip("longest gap (ms):Q", format=".3g"), "steps carrying the prompt:Q"],
    )
    .properties(
        width=560,
        description="Each token budget as a point: the decodes' worst gap against the new request's TTFT.",
    )
)

# %% [markdown]
# ## Vary the GPU
#
# The stall is the prompt's prefill, which is compute-bound, so it follows peak compute; the decode step
# follows bandwidth. A GPU with more bandwidth but the same compute (the H200 against the H100) shortens the
# decode step and leaves the stall almost where it was, so the stall counts as more of its steps.

# %%
gpu_rows = []
for gpu in ("a100-sxm-80gb", "h100-sxm", "h200", "b200"):
    plain = prefill_stall(P, b, gpu=gpu)
    small = prefill_stall(P, b, B, gpu=gpu)
    gpu_rows.append(
        {
            "GPU": gpu,
            "decode step (ms)": plain.decode_step_s * 1e3,
            "stall (ms)": plain.longest_gap_s * 1e3,
            "stall (steps)": plain.stall_steps,
            "chunked gap (ms)": small.longest_gap_s * 1e3,
            "chunked TTFT (ms)": small.ttft_s * 1e3,
        }
    )
markdown_table(gpu_rows, digits=3)

# %% [markdown]
# ## The lesson's chart, for another arrival
#
# The course's chart builders take the same parameters as the lesson's chart blocks. Here the same
# sixteen decoding requests meet a 4,000-token prompt with a budget of 256 tokens.

# %%
display(build_chart("prefill-stall", prompt=4000, decoding=16, token_budget=256).chart)
