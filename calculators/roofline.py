"""The roofline: how long a piece of work takes when it is limited by either maths or memory.

A GPU can do at most ``peak`` FLOP per second and move at most ``bandwidth`` bytes per second. Work that needs
F FLOPs and B bytes takes at least max(F / peak, B / bandwidth). Which term wins depends only on the work's
arithmetic intensity F / B compared with the GPU's ridge point peak / bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.hardware import GPU, get_gpu
from calculators.validation import bounded_number, count, fraction, positive_number


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


# The largest and smallest FLOP or byte count a roofline time takes: their quotient (the intensity) and
# their times stay finite, and no real pass comes near either end.
MAX_AMOUNT = 1e30
MIN_AMOUNT = 1e-30


def achieved_peaks(
    gpu: str | GPU,
    precision: str = "bf16",
    *,
    compute_efficiency: float = 1.0,
    memory_efficiency: float = 1.0,
) -> tuple[float, float]:
    """One GPU's reachable (FLOP/s, bytes/s): the spec-sheet peaks scaled by the efficiency factors."""
    chip = get_gpu(gpu)
    flops = chip.peak_flops_per_s(precision) * fraction("compute_efficiency", compute_efficiency)
    bandwidth = chip.memory_bandwidth_bytes_per_s * fraction("memory_efficiency", memory_efficiency)
    return flops, bandwidth


def ridge_point(
    gpu: str | GPU,
    precision: str = "bf16",
    *,
    compute_efficiency: float = 1.0,
    memory_efficiency: float = 1.0,
) -> float:
    """Ridge point in FLOP per byte: achieved FLOP/s over achieved bytes/s (spec-sheet peaks by default).

    Tensor parallelism multiplies both by G, so the ridge point does not depend on the number of GPUs.
    """
    flops, bandwidth = achieved_peaks(
        gpu, precision, compute_efficiency=compute_efficiency, memory_efficiency=memory_efficiency
    )
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
    "intensity at or above the ridge", the definition the lessons teach. It agrees with "compute time at
    least memory time" except when the two times are equal to within float rounding.
    """
    gpus = count("gpus", gpus)
    flops = bounded_number("flops", flops, MAX_AMOUNT, MIN_AMOUNT)
    bytes_moved = bounded_number("bytes_moved", bytes_moved, MAX_AMOUNT, MIN_AMOUNT)
    peak, bandwidth = achieved_peaks(
        gpu, precision, compute_efficiency=compute_efficiency, memory_efficiency=memory_efficiency
    )
    compute_time = flops / (peak * gpus)
    memory_time = bytes_moved / (bandwidth * gpus)
    intensity = flops / bytes_moved
    ridge = peak / bandwidth
    return RooflineTime(
        flops=flops,
        bytes_moved=bytes_moved,
        intensity_flop_per_byte=intensity,
        ridge_point_flop_per_byte=ridge,
        compute_time_s=compute_time,
        memory_time_s=memory_time,
        time_s=max(compute_time, memory_time),
        bound=bound_at(intensity, ridge),
    )


def bound_at(intensity_flop_per_byte: float, ridge_point_flop_per_byte: float) -> str:
    """Which limit applies at an intensity: "compute" at or above the ridge point, "memory" below it."""
    intensity_flop_per_byte = positive_number("intensity_flop_per_byte", intensity_flop_per_byte)
    ridge_point_flop_per_byte = positive_number("ridge_point_flop_per_byte", ridge_point_flop_per_byte)
    return "compute" if intensity_flop_per_byte >= ridge_point_flop_per_byte else "memory"


def attainable_flops_per_s(intensity_flop_per_byte: float, gpu: str | GPU, precision: str = "bf16") -> float:
    """The roofline itself: FLOP/s reachable at a given intensity, min(peak, intensity x bandwidth)."""
    chip = get_gpu(gpu)
    intensity = positive_number("intensity_flop_per_byte", intensity_flop_per_byte)
    return min(chip.peak_flops_per_s(precision), intensity * chip.memory_bandwidth_bytes_per_s)
