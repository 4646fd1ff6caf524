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
#     lesson: latency-metrics-and-slos
# ---

# %% [markdown]
# # Latency metrics and SLOs, worked through in Python
#
# The lesson defines TTFT, inter-token latency (ITL), TPOT and end-to-end latency, shows the 99th percentile
# of TTFT exploding as one H100 nears capacity, and measures goodput: the highest arrival rate at which 90% of
# requests meet both bounds of an SLO.
# This notebook computes each metric from the simulator's raw token times, checks the identity
# end-to-end = TTFT + (n - 1) x TPOT on every request, compares the queueing with the M/D/1 formula, and
# finds the goodput rate for a few SLOs.
# Like every worked notebook it runs at the spec-peak bound, with the KV-cache reads counted as in the lesson,
# not in the course's calibrated setting: its steps are shorter than the lesson's, so one H100 keeps up with
# more requests here (about 20 per second under the lesson's SLO) than the lesson's calibrated 12.6.

# %%
import itertools
import math

import altair as alt
from IPython.display import display

from calculators import Scenario, format_value
from calculators.charts import build_chart
from calculators.charts.notebook_tables import markdown_table
from calculators.charts.palette import sequential_colours
from calculators.charts.specs import colour_scale
from calculators.simulator.experiments import max_good_rate
from calculators.simulator.named import served
from course.notebooks.renderer import enable_course_charts

enable_course_charts()

# %% [markdown]
# ## Step 1: one request, no queue
#
# With no other user, TTFT is the prefill and every later token costs one decode step.

# %%
alone = Scenario().request(2000, 256)
ttft, tpot, n = alone.time_to_first_token_s, alone.time_per_output_token_s, alone.output_tokens
e2e = ttft + (n - 1) * tpot
print(f"TTFT {format_value(ttft, 'ms')}, TPOT {format_value(tpot, 'ms')}, n = {n}")
print(
    f"end-to-end = {format_value(ttft, 'ms')} + {n - 1} x {format_value(tpot, 'ms')}",
    f"= {format_value(e2e, 's')}",
)
print(f"decode share = {(n - 1) * tpot / e2e:.1%}")
assert math.isclose(e2e, alone.total_time_s, rel_tol=1e-12)

# %% [markdown]
# ## Step 2: every metric from token times
#
# Serve the course workload on one H100 at 8 requests per second, prefill first, and rebuild each metric of
# one request from the times its tokens came out.

# %%
run = served("course", rate=8, scheduler="continuous")
result = run.result
record = max(result.requests, key=lambda r: r["longest_gap_s"])  # the request hit hardest by a stall
times = result.token_times(record["id"])
gaps = [b - a for a, b in itertools.pairwise(times)]
my_ttft = times[0] - record["arrival_s"]
my_tpot = (times[-1] - times[0]) / (len(times) - 1)
print(f"request {record['id']}: {len(times)} tokens")
print(f"TTFT {format_value(my_ttft, 'ms')}, TPOT {format_value(my_tpot, 'ms')}")
print(
    f"median gap {format_value(sorted(gaps)[len(gaps) // 2], 'ms')},",
    f"longest gap {format_value(max(gaps), 'ms')}",
)
assert math.isclose(my_ttft, record["ttft_s"], rel_tol=1e-9)
assert math.isclose(my_tpot, record["tpot_s"], rel_tol=1e-9)

# %% [markdown]
# The identity holds for every request, not only on average:

# %%
worst = max(
    abs(r["e2e_s"] - (r["ttft_s"] + (r["output_tokens"] - 1) * (r["tpot_s"] or 0.0))) for r in result.requests
)
print(f"largest difference between end-to-end and TTFT + (n - 1) x TPOT: {worst:.2e} s")
assert worst < 1e-9

# %% [markdown]
# ## Step 3: TPOT's tail against ITL's tail
#
# A percentile of TPOT ranks requests; a percentile of ITL ranks gaps. Prefill first, the stalls are rare
# gaps, so they show in ITL's tail and hardly in TPOT's.

# %%
rows = []
for scheduler in ("continuous", "chunked"):
    r = served("course", rate=8, scheduler=scheduler)
    rows.append(
        {
            "scheduler": scheduler,
            "TPOT p50 (ms)": r.tpot_s.p50 * 1e3,
            "TPOT p99 (ms)": r.tpot_s.p99 * 1e3,
            "ITL p50 (ms)": r.itl_s.p50 * 1e3,
            "ITL p99 (ms)": r.itl_s.p99 * 1e3,
            "ITL max (ms)": r.itl_s.max * 1e3,
        }
    )
markdown_table(rows, digits=3)

# %% [markdown]
# ## Step 4: TTFT against load, and the M/D/1 queue
#
# An M/D/1 queue (Poisson arrivals, fixed service time 1/mu) waits W = rho / (2 mu (1 - rho)) on average.
# A batching engine is not one, but the shape is the same: slow growth, then a wall.

# %%
load_rows = []
for rate in (5, 10, 15, 20, 25, 30, 35, 40, 45):
    r = served("course", rate=rate, scheduler="chunked")
    load_rows.append(
        {
            "rate (req/s)": rate,
            "served (req/s)": r.served_rps,
            "TTFT p50 (ms)": r.ttft_s.p50 * 1e3,
            "TTFT p99 (ms)": r.ttft_s.p99 * 1e3,
            "queueing p99 (ms)": r.queueing_s.p99 * 1e3,
            "meet the SLO": r.slo_attainment,
        }
    )
markdown_table(load_rows, digits=3)


# %%
def md1_wait(rho: float) -> float:
    """Mean queueing time of an M/D/1 queue, in service times."""
    return rho / (2 * (1 - rho))


print("utilisation -> mean wait, in service times")
for rho in (0.5, 0.8, 0.9, 0.95, 0.99):
    print(f"  {rho:.2f} -> {md1_wait(rho):.1f}")

# %% [markdown]
# ## Step 5: the distributions at three loads
#
# Each request's TTFT, sorted: the curve's right end is the tail a p99 reports.

# %%
dist_rows = []
rates = (10, 30, 40)
shades = zip(rates, sequential_colours(len(rates)), strict=True)
rate_colours = {f"{rate} req/s": colour for rate, colour in shades}  # busier in darker shades
for rate in rates:
    r = served("course", rate=rate, scheduler="chunked")
    values = sorted(float(q["ttft_s"]) for q in r.result.requests)
    for i, v in enumerate(values):
        dist_rows.append({"rate": f"{rate} req/s", "share": (i + 1) / len(values), "ttft_ms": v * 1e3})
(
    alt.Chart(alt.Data(values=dist_rows))
    .mark_line()
    .encode(
        x=alt.X("ttft_ms:Q", title="TTFT (ms)", scale=alt.Scale(type="log")),
        y=alt.Y("share:Q", title="Share of requests at or below", axis=alt.Axis(format="%")),
        color=alt.Color("rate:N", title=None, scale=colour_scale(rate_colours)),
    )
    .properties(width=560, description="The cumulative distribution of TTFT at three arrival rates.")
)

# %% [markdown]
# ## Step 6: goodput for a few SLOs
#
# The highest arrival rate at which 90% of requests meet both bounds, found by bisection (twenty seconds of
# arrivals per trial rate).

# %%
slo_rows = []
for ttft_slo in (0.25, 0.5, 1.0):
    for tpot_slo in (0.01, 0.02):
        slo_rows.append(
            {
                "TTFT bound (s)": ttft_slo,
                "TPOT bound (ms)": tpot_slo * 1e3,
                "prefill first (req/s)": max_good_rate(
                    "continuous", gpus=1, ttft_slo=ttft_slo, tpot_slo=tpot_slo
                ),
                "chunked (req/s)": max_good_rate("chunked", gpus=1, ttft_slo=ttft_slo, tpot_slo=tpot_slo),
            }
        )
markdown_table(slo_rows, digits=3)

# %% [markdown]
# ## The lesson's charts, on two GPUs
#
# The course's chart builders take the same parameters as the lesson's chart blocks: here the latency
# percentiles and the goodput of two H100s serving the same workload.

# %%
display(build_chart("latency-vs-rate", gpus=2, rates=[10, 20, 40, 60, 80]).chart)

# %%
display(
    build_chart("goodput-vs-rate", gpus=2, rates=[20, 40, 60, 80], schedulers=["continuous", "chunked"]).chart
)
