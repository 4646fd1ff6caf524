"""The inside-a-gpu lesson's chart: a GPU's memories, from the registers to HBM, by capacity.

One bar per memory level and GPU on a log axis, so that 80 GB of HBM and a few tens of MB of on-chip SRAM fit
on one picture; the table beside it adds each level's bandwidth where NVIDIA publishes one (HBM; the A100's
L2, per clock) or it follows from a published per-SM rate (shared memory, 128 bytes per SM per clock), and
says "not published" otherwise.
Every figure comes from the presets (:mod:`calculators.gpu_anatomy`). Standard library only.
"""

from __future__ import annotations

from typing import Any

from calculators.charts.content import ChartData, Row, short_gpu_name
from calculators.charts.palette import gpu_colour
from calculators.charts.params import ChartError, Param, read_gpus, read_params
from calculators.hardware import GPUS
from calculators.units import format_value

MEMORY_HIERARCHY_PARAMS: tuple[Param, ...] = (
    Param(
        "gpus",
        ("h100-sxm", "a100-sxm-80gb"),
        read_gpus,
        "gpus: [h100-sxm, a100-sxm-80gb]",
        "GPU presets with a published breakdown (h100-sxm, h100-pcie, a100-sxm-80gb)",
    ),
)
LEVELS = ("Registers", "Shared / L1", "L2 cache", "HBM")
"""From the maths units outwards: the order of the bars, top to bottom."""


def _size(num_bytes: float) -> str:
    return format_value(num_bytes, "GB" if num_bytes >= 1e9 else "MB")


def memory_hierarchy(**given: Any) -> ChartData:
    """Capacity of each memory level of each GPU, summed over its SMs, with its bandwidth in the table."""
    chart = "memory-hierarchy"
    p = read_params(chart, MEMORY_HIERARCHY_PARAMS, given)
    lacking = [key for key in p["gpus"] if GPUS[key].anatomy is None]
    if lacking:
        with_anatomy = ", ".join(key for key, gpu in GPUS.items() if gpu.anatomy is not None)
        raise ChartError(
            chart,
            "gpus",
            f"{', '.join(lacking)}: no published breakdown of SMs and on-chip memory",
            f"use GPUs among {with_anatomy}",
        )
    rows: list[Row] = []
    table: list[tuple[str, ...]] = []
    for key in p["gpus"]:
        gpu = GPUS[key]
        anatomy = gpu.anatomy
        assert anatomy is not None  # checked above
        l2_per_clock = anatomy.l2_read_bytes_per_clock
        levels = (
            (anatomy.register_bytes, None),
            (anatomy.l1_shared_bytes, format_value(anatomy.shared_memory_bandwidth_bytes_per_s, "TB/s")),
            # Per clock, as the whitepaper prints it: it does not say which clock the L2 runs at.
            (anatomy.l2_bytes, None if l2_per_clock is None else f"{l2_per_clock:,} bytes per clock"),
            (gpu.memory_capacity_bytes, format_value(gpu.memory_bandwidth_bytes_per_s, "TB/s")),
        )
        for level, (capacity, bandwidth) in zip(LEVELS, levels, strict=True):
            shown = "not published" if bandwidth is None else bandwidth
            rows.append(
                {
                    "gpu": short_gpu_name(key),
                    "level": level,
                    "capacity_mb": capacity / 1e6,
                    "base_mb": 1.0,
                    "capacity": _size(capacity),
                    "bandwidth": shown,
                    "colour": gpu_colour(key),
                }
            )
            table.append((short_gpu_name(key), level, _size(capacity), shown))
    names = " and ".join(short_gpu_name(key) for key in p["gpus"])
    caption = (
        f"The memories of the {names}, from the registers next to the maths units out to HBM, by capacity "
        "(all SMs together; log scale)."
    )
    return ChartData(
        chart,
        p,
        {"levels": rows},
        ("GPU", "Memory", "Capacity", "Bandwidth"),
        tuple(table),
        caption,
    )
