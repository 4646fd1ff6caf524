"""The roofline: how long a piece of work takes when it is limited by either maths or memory.

A GPU can do at most ``peak`` FLOP per second and move at most ``bandwidth`` bytes per second. Work that needs
F FLOPs and B bytes takes at least max(F / peak, B / bandwidth). Which term wins depends only on the work's
arithmetic intensity F / B compared with the GPU's ridge point peak / bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.hardware import GPU, get_gpu
from calculators.validation import fraction, positive_number


@dataclass(frozen=True)
class RooflineTime:
    """Time of one piece of work on the roofline, with both candidate times kept for display."""

    flops: float
    bytes_moved: float
    intensity_flop_per_byte: float
    ridge_point_flop_per_byte: float
    compute_time_s: float
    memory_time_s: float
    time_s: float
    bound: str  # "compute" or "memory"


def ridge_point(gpu: str | GPU, precision: str = "bf16", *, compute_efficiency: float = 1.0,
                memory_efficiency: float = 1.0) -> float:
    """Ridge point in FLOP per byte: achieved FLOP/s over achieved bytes/s (spec-sheet peaks by default)."""
    chip = get_gpu(gpu)
    flops = chip.peak_flops_per_s(precision) * fraction("compute_efficiency", compute_efficiency)
    bandwidth = chip.memory_bandwidth_bytes_per_s * fraction("memory_efficiency", memory_efficiency)
    return flops / bandwidth


def roofline_time(
    flops: float,
    bytes_moved: float,
    gpu: str | GPU,
    precision: str = "bf16",
    *,
    gpus: int = 1,
    compute_efficiency: float = 1.0,
    memory_efficiency: float = 1.0,
) -> RooflineTime:
    """Seconds to do ``flops`` FLOPs while moving ``bytes_moved`` bytes, split evenly over ``gpus`` GPUs.

    The bound is decided by comparing intensity with the ridge point, so "compute-bound" means exactly
    "intensity at or above the ridge", the definition the lessons teach.
    """
    chip = get_gpu(gpu)
    flops = positive_number("flops", flops)
    bytes_moved = positive_number("bytes_moved", bytes_moved)
    achieved_flops = chip.peak_flops_per_s(precision) * fraction("compute_efficiency", compute_efficiency) * gpus
    achieved_bandwidth = chip.memory_bandwidth_bytes_per_s * fraction("memory_efficiency", memory_efficiency) * gpus
    compute_time = flops / achieved_flops
    memory_time = bytes_moved / achieved_bandwidth
    intensity = flops / bytes_moved
    ridge = achieved_flops / achieved_bandwidth
    return RooflineTime(
        flops=flops,
        bytes_moved=bytes_moved,
        intensity_flop_per_byte=intensity,
        ridge_point_flop_per_byte=ridge,
        compute_time_s=compute_time,
        memory_time_s=memory_time,
        time_s=max(compute_time, memory_time),
        bound="compute" if intensity >= ridge else "memory",
    )


def attainable_flops_per_s(intensity_flop_per_byte: float, gpu: str | GPU, precision: str = "bf16") -> float:
    """The roofline itself: FLOP/s reachable at a given intensity, min(peak, intensity x bandwidth)."""
    chip = get_gpu(gpu)
    intensity = positive_number("intensity_flop_per_byte", intensity_flop_per_byte)
    return min(chip.peak_flops_per_s(precision), intensity * chip.memory_bandwidth_bytes_per_s)
