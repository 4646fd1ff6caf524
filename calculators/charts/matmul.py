"""The matmul-intensity lesson's chart: the share of peak FLOP/s a weight product reaches, by its token count.

Three figures of the same d_in x d_out product on one GPU (:mod:`calculators.gemm`): the spec-peak roofline
(rising with the token count up to the critical batch, then flat at the peak), the same with the maths of
padded tiles and partly empty waves counted (a saw-tooth below it), and the course's calibrated estimate,
fitted to measured linear layers. The critical batch is marked.
"""

from __future__ import annotations

from typing import Any

from calculators.charts.content import ChartData, Row, _computed, _tokens, short_gpu_name
from calculators.charts.palette import NEUTRAL, SEQUENTIAL_COLOURS
from calculators.charts.params import Param, read_count, read_gpu, read_params, read_precision
from calculators.gemm import critical_tokens, gemm, sm_count
from calculators.units import format_value

GEMM_EFFICIENCY_PARAMS: tuple[Param, ...] = (
    Param("gpu", "h100-sxm", read_gpu, "gpu: h100-sxm", "GPU preset (one with a published SM count)"),
    Param("precision", "bf16", read_precision, "precision: bf16", "format of the values and the maths"),
    Param("d_in", 4096, read_count(16, 1 << 17, "a layer width"), "d_in: 4096", "the weight's input width"),
    Param(
        "d_out", 14336, read_count(16, 1 << 17, "a layer width"), "d_out: 14336", "the weight's output width"
    ),
    Param(
        "max_tokens",
        4096,
        read_count(16, 1 << 16, "a token count"),
        "max_tokens: 4096",
        "largest token count on the curve",
    ),
    Param("tile", 128, read_count(16, 512, "a tile size"), "tile: 128", "rows and columns of a square tile"),
)
# (series label, colour, which time): the bound grey like every baseline; the two estimates that fall short
# of it are an ordered pair, the tile-and-wave bound in the lightest shade, the measured fit in the darkest.
SERIES: tuple[tuple[str, str, str], ...] = (
    ("spec-peak bound", NEUTRAL, "bound_time_s"),
    ("bound with tiles and waves", SEQUENTIAL_COLOURS[0], "quantised_time_s"),
    ("calibrated estimate", SEQUENTIAL_COLOURS[-1], "calibrated_time_s"),
)
TABLE_TOKENS = (1, 16, 64, 128, 129, 256, 512, 1024, 4096)


def token_counts(max_tokens: int, tile: int) -> list[int]:
    """Token counts on the curve: a log-spaced set, plus each multiple of the tile and the count just past
    it, where a new row of tiles (and maybe a new wave) begins: the saw-tooth's edges."""
    counts = {max(1, round(2 ** (i / 12))) for i in range(12 * max_tokens.bit_length() + 1)}
    counts |= {edge + step for edge in range(tile, max_tokens + 1, tile) for step in (0, 1)}
    return sorted(c for c in counts if c <= max_tokens)


def gemm_efficiency(**given: Any) -> ChartData:
    """Share of the peak FLOP/s a d_in x d_out product reaches for 1 to ``max_tokens`` tokens, three ways."""
    chart = "gemm-efficiency"
    p = read_params(chart, GEMM_EFFICIENCY_PARAMS, given)
    sms = _computed(chart, "gpu", "use a GPU with a published SM count", lambda: sm_count(p["gpu"]))
    d_in, d_out, tile = p["d_in"], p["d_out"], p["tile"]

    def product(tokens: int) -> Any:
        return gemm(tokens, d_out, d_in, p["gpu"], p["precision"], tile_m=tile, tile_n=tile)

    first = _computed(chart, "precision", "use a format the GPU computes in", lambda: product(1))
    peak = first.flops / first.compute_time_s
    points: list[Row] = []
    table_rows: list[tuple[str, ...]] = []
    for tokens in token_counts(p["max_tokens"], tile):
        result = product(tokens)
        shares = {name: result.flops / getattr(result, attr) / peak for name, _, attr in SERIES}
        for name, colour, _ in SERIES:
            points.append(
                {
                    "series": name,
                    "colour": colour,
                    "tokens": tokens,
                    "share": shares[name],
                    "waves": result.waves,
                    "bound": f"{result.bound}-bound",
                }
            )
        if tokens in TABLE_TOKENS:
            table_rows.append(
                (
                    f"{tokens:,}",
                    *(format_value(shares[name], "%") for name, _, _ in SERIES),
                    f"{result.tiles:,} tiles, {result.waves:,} wave(s)",
                )
            )
    marks: list[Row] = []
    try:
        critical = critical_tokens(d_in, d_out, p["gpu"], p["precision"])
    except ValueError:
        critical = None
    if critical is not None and critical <= p["max_tokens"]:
        marks.append({"tokens": critical, "label": f"critical batch {critical:,.0f}"})
    caption = (
        f"Share of the {short_gpu_name(p['gpu'])}'s {p['precision'].upper()} peak reached by a "
        f"{d_in:,} × {d_out:,} weight product over 1 to {_tokens(p['max_tokens'])}: the spec-peak bound, "
        f"the bound with {tile} × {tile} tiles and waves of {sms} SMs counted, and the "
        "calibrated estimate fitted to measured kernels."
    )
    return ChartData(
        chart,
        p,
        {"points": points, "marks": marks},
        ("Tokens", *(name for name, _, _ in SERIES), "Tiles and waves"),
        tuple(table_rows),
        caption,
    )
