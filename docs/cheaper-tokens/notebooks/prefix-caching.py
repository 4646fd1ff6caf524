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
#     lesson: prefix-caching
# ---

# %% [markdown]
# # Prefix caching, worked through in Python
#
# The prefix caching lesson reuses whole KV blocks whose entire prefix matches. This notebook counts the hits
# by hand for a system prompt and for a chat turn, bounds the hit rate of the lesson's course run from its
# requests, and checks each figure against the simulator.

# %%
from IPython.display import display

from calculators.charts import build_chart
from calculators.simulator import Request, SharedPrefix, poisson_workload, simulate
from calculators.simulator.named import course_lengths, served
from course.notebooks.renderer import enable_course_charts

enable_course_charts()  # charts below use the course's own markup: a static SVG, interactive on demand

BLOCK = 16  # tokens per KV block, the simulator's default

# %% [markdown]
# ## Step 1: a system prompt shared by ten requests
#
# Each request is a 1,024-token system prompt and 256 tokens of its own, one after another. The first computes
# everything; each later one finds the 1,024 // 16 = 64 whole blocks of the system prompt.

# %%
n, system, own = 10, 1024, 256
by_hand = (n - 1) * (system // BLOCK * BLOCK) / (n * (system + own))
reqs = [Request(i, float(i), system + own, 4, 0, system) for i in range(n)]
simulated = simulate(reqs, prefix_caching=True).summary["prefix_cache"]["hit_rate"]
print(f"hit rate by hand {by_hand:.4f}, simulated {simulated:.4f}")
assert abs(by_hand - simulated) < 1e-12

# %% [markdown]
# ## Step 2: a chat's next turn
#
# The previous turn's cache holds its prompt and all of its answer but the last token (written, never read
# back): P + A - 1 tokens, of which the whole blocks can be found by the next turn.

# %%
prompt, answer, message = 3000, 400, 200
hit = (prompt + answer - 1) // BLOCK * BLOCK
turns = [Request(0, 0.0, prompt, answer), Request(1, 60.0, prompt + answer + message, 4, follows=0)]
cache = simulate(turns, prefix_caching=True).summary["prefix_cache"]
print(f"tokens found by hand {hit:,}, simulated {cache['hit_tokens']:,}")
assert cache["hit_tokens"] == hit

# %% [markdown]
# ## Step 3: the lesson's system-prompt run, bounded from its requests
#
# The course workload behind a 2,048-token system prompt: every request after the first can find at most the
# 128 blocks of the system prompt. The bound below counts that from the very requests of the run; requests
# that arrive while the first is still computing the prompt find less, so the simulation may fall a little
# short of it.

# %%
prompts, outputs = course_lengths()
work = poisson_workload(6.0, 200, prompts, outputs, seed=0, shared_prefix=SharedPrefix(2048))
bound = (len(work) - 1) * 2048 / sum(r.prompt_tokens for r in work)
run = served(preset="course", rate=6, requests=200, shared_prefix=2048, prefix_caching=True)
print(f"bound {bound:.4f}, simulated {run.prefix_hit_rate:.4f}")
assert run.prefix_hit_rate <= bound + 1e-12
assert run.prefix_hit_rate > 0.95 * bound


# %% [markdown]
# ## The lesson's chart from your own numbers
#
# The course's chart builders take the same parameters as the lesson's chart blocks. Here the lesson's
# chart at three rates, then with a shorter shared prompt, and the hit rate of one run.

# %%
display(build_chart("prefix-caching-ttft", rates=[2, 4, 6], requests=100).chart)

# %%
display(build_chart("prefix-caching-ttft", shared_prefix=1024, rates=[2, 4, 6], requests=100).chart)

# %%
round(
    served(preset="course", rate=4, requests=100, shared_prefix=1024, prefix_caching=True).prefix_hit_rate, 3
)
