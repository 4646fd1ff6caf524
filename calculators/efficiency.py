"""How far below the spec-sheet peaks real kernels run, as explicit, optional inputs.

The lessons compute at spec peaks (every factor 1.0, no overhead), and say so. Measured systems land below:
the factors here scale the peaks a pass is timed against, and a fixed per-step overhead stands for kernel
launches, the scheduler and sampling. ``TYPICAL`` gathers values a reader can try, with where they come from;
none of them is a default. They are one constant for every kernel, a what-if; for estimates that follow the
shape of each kernel (fitted to published measurements and validated against held-out ones) use
``mode="calibrated"`` (:mod:`calculators.calibration`), which refuses these factors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from calculators.validation import fraction, non_negative_number

MAX_STEP_OVERHEAD_S = 10.0  # a per-step overhead above ten seconds is a typo, not a what-if


@dataclass(frozen=True)
class Efficiency:
    """Shares of the peaks a setup reaches (1.0 = spec sheet) and a fixed cost per forward pass."""

    compute: float = 1.0  # share of peak FLOP/s the matrix products reach (MFU of a GEMM)
    memory: float = 1.0  # share of peak memory bandwidth reached (MBU)
    communication: float = 1.0  # share of the link's bandwidth a collective reaches (bus bandwidth)
    step_overhead_s: float = 0.0  # seconds added to every pass: launches, scheduling, sampling

    def __post_init__(self) -> None:
        fraction("compute_efficiency", self.compute)
        fraction("memory_efficiency", self.memory)
        fraction("communication_efficiency", self.communication)
        non_negative_number("step_overhead_s", self.step_overhead_s, MAX_STEP_OVERHEAD_S)


SPEC_PEAKS = Efficiency()

TYPICAL: Mapping[str, tuple[Efficiency, str]] = MappingProxyType(
    {
        "spec-peaks": (
            SPEC_PEAKS,
            "The lessons' assumption: every kernel at the spec sheet's peak, no overhead.",
        ),
        "well-tuned-h100": (
            Efficiency(compute=0.7, memory=0.8, communication=0.8, step_overhead_s=0.5e-3),
            "Measured anchors land at 0.58-0.78 of the roofline time: Vidur's H100 and A100 linear-layer "
            "profiles (about 0.76-0.78), FasterTransformer 13B (0.76 on one GPU), DistServe's OPT-13B fits "
            "(0.59 prefill, 0.62 decode); NCCL bus bandwidth is typically 70-90 % of the link. The 0.5 ms "
            "step overhead is the order of a CUDA-graph decode step's launch and sampling cost. "
            "Collected in the course's review notes (section 4.8).",
        ),
    }
)
