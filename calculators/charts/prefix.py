"""The prefix-caching lesson's chart: time to first token against the arrival rate, with and without caching.

Each point is one simulated run of the course workload (:data:`calculators.simulator.named.PRESETS`),
whose prompts all start with the same system prompt: the same requests served once with prefix caching off and
once with it on (:func:`calculators.simulator.named.served`, so the lesson's figures and the chart's points
are the same runs). The table adds each run's hit rate (share of prompt tokens found cached) and the share
of requests within the SLO.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from calculators.charts.content import ChartData, Row, _computed, _in, _tokens
from calculators.charts.palette import NEUTRAL, sequential_colours
from calculators.charts.params import Param, read_count, read_params, read_rates
from calculators.simulator.named import Served, served
from calculators.units import format_value

PREFIX_CACHING_PARAMS: tuple[Param, ...] = (
    Param(
        "shared_prefix",
        2048,
        read_count(1, 32_768, "a number of tokens"),
        "shared_prefix: 2048",
        "tokens of the system prompt every request starts with",
    ),
    Param(
        "rates",
        (2.0, 4.0, 6.0, 8.0, 10.0, 12.0),
        read_rates,
        "rates: [2, 4, 8]",
        "arrival rates, requests per second",
    ),
    Param("requests", 200, read_count(20, 400, "a number of requests"), "requests: 200", "requests per run"),
)
SERIES = ("no prefix caching", "prefix caching")


def run(shared_prefix: int, rate: float, requests: int, caching: bool) -> Served:
    """One run of the course workload behind a shared system prompt (the lesson quotes the same runs)."""
    return served(
        preset="course", rate=rate, requests=requests, shared_prefix=shared_prefix, prefix_caching=caching
    )


def prefix_caching_ttft(**given: Any) -> ChartData:
    """p90 TTFT against the arrival rate, one line without and one with prefix caching."""
    chart = "prefix-caching-ttft"
    p = read_params(chart, PREFIX_CACHING_PARAMS, given)
    colours = (NEUTRAL, sequential_colours(1)[0])
    points: list[Row] = []
    table = []
    for series, colour, caching in zip(SERIES, colours, (False, True), strict=True):
        for rate in p["rates"]:
            result = _computed(
                chart, "shared_prefix", "use a shorter shared_prefix or fewer requests",
                partial(run, p["shared_prefix"], rate, p["requests"], caching),
            )  # fmt: skip
            points.append(
                {
                    "series": series,
                    "colour": colour,
                    "rate": rate,
                    "ttft_p90_ms": _in("ms", result.ttft_s.p90),
                    "hit_rate": result.prefix_hit_rate,
                    "slo": result.slo_attainment,
                }
            )
            table.append(
                (
                    f"{rate:g}/s",
                    series,
                    format_value(result.ttft_s.p90, "ms"),
                    format_value(result.prefix_hit_rate, "%"),
                    format_value(result.slo_attainment, "%"),
                )
            )
    caption = (
        f"Time to first token (90th percentile) of the course workload on one GPU, every prompt behind the "
        f"same {_tokens(p['shared_prefix'])} system prompt, against the arrival rate: the same requests "
        "without and with prefix caching. With the cache each prompt computes only its own part, so the "
        "first token comes sooner and the queue builds up only at a higher rate."
    )
    return ChartData(
        chart,
        p,
        {"points": points},
        ("Rate", "Run", "TTFT p90", "Hit rate", "Within the SLO"),
        tuple(table),
        caption,
    )
