"""The number-formats lesson's chart: what one value costs in memory, its own bits and its share of a scale.

One bar per format (:data:`calculators.precision.FORMATS`), split into the element's bits and the bits its
block's scale adds per value, so a reader sees why NVFP4 is 4.5 bits and MXFP4 4.25 although both store 4-bit
values. The figures are the formats' own (``bits_per_value``); nothing is computed twice here.
"""

from __future__ import annotations

from typing import Any

from calculators.charts.content import ChartData, Row
from calculators.charts.palette import FORMAT_PART_COLOURS
from calculators.charts.params import Param, read_formats, read_params
from calculators.precision import FORMATS

ELEMENT, SCALE = "the value's own bits", "its share of the block's scale"


FORMAT_BITS_PARAMS: tuple[Param, ...] = (
    Param(
        "formats",
        ("bf16", "fp8-e4m3", "int8", "int4", "mxfp4", "nvfp4"),
        read_formats,
        "formats: [bf16, fp8-e4m3, nvfp4, mxfp4]",
        f"number formats compared, from top to bottom (any of {', '.join(FORMATS)})",
    ),
)


def format_bits(**given: Any) -> ChartData:
    """Bits per value of each format: the element's bits and, for block formats, the scale's share."""
    p = read_params("format-bits", FORMAT_BITS_PARAMS, given)
    rows: list[Row] = []
    table: list[tuple[str, ...]] = []
    for order, key in enumerate(p["formats"]):
        fmt = FORMATS[key]
        for part, bits in ((ELEMENT, float(fmt.element_bits)), (SCALE, fmt.scale_bits_per_value)):
            if bits:
                rows.append(
                    {
                        "format": fmt.name,
                        "order": order,
                        "part": part,
                        "colour": FORMAT_PART_COLOURS[part],
                        "bits": bits,
                        "total": fmt.bits_per_value,
                    }
                )
        table.append(
            (
                fmt.name,
                f"{fmt.element_bits:g}",
                f"{fmt.scale_bits_per_value:g}",
                fmt.scale,
                f"{fmt.bits_per_value:g}",
            )
        )
    caption = (
        "Bits one value costs in memory in "
        + ", ".join(FORMATS[k].name for k in p["formats"])
        + (": its own bits, and for block formats its share of the scale the block stores.")
    )
    return ChartData(
        "format-bits",
        p,
        {"bits": rows},
        ("Format", "Value bits", "Scale bits per value", "Scale", "Bits per value"),
        tuple(table),
        caption,
    )
