"""What is inside a GPU preset: its streaming multiprocessors, tensor cores, on-chip memories and power limit.

A spec sheet gives a GPU's peaks as single figures; this says what they are made of, so that a lesson can
show that a peak is SMs x FLOPs per SM per clock x clock, and that the small on-chip memories sit between
HBM and the maths units. Each figure comes from one NVIDIA document, named in ``source``:

- the *NVIDIA A100 Tensor Core GPU Architecture* whitepaper (2020): its comparison table of data-centre GPUs
  (SMs, boost clock, L2, shared memory and register file per SM, TDP) and its section on the A100 SM
  (256 dense FP16 FMA per clock per tensor core, 64 FP32 cores per SM, 192 KB of combined L1 and shared
  memory per SM) and, in its memory-hierarchy section, the A100 L2's read bandwidth, 5,120 bytes per clock;
- the *NVIDIA H100 Tensor Core GPU Architecture* whitepaper (2022): its comparison table of A100 and H100
  (SMs, tensor cores, L2, shared memory and register file per SM, FP32 peaks 66.9 and 51.2 TFLOPS, TDP)
  and its section on the H100 SM
  (128 FP32 cores per SM, twice the A100 SM's dense tensor-core rate per clock, 256 KB of combined L1 and
  shared memory per SM);
- the NVIDIA H100 datasheet (power up to 700 W for SXM, 300-350 W for PCIe; it rounds the FP32 peaks to
  67 and 51 TFLOPS, which would put the implied clocks 0.1 to 0.4 % off) and the A100 datasheet (FP32
  19.5 TFLOPS, 400 W for SXM);
- the *CUDA C++ Programming Guide*, compute-capability section: shared memory has 32 banks, each delivering
  32 bits per clock, so an SM's shared memory serves 128 bytes per clock.

NVIDIA's on-chip sizes are binary (the "50 MB" L2 of an H100 is 50 MiB, 52,428,800 bytes, which is what the
CUDA runtime reports as its L2 size), so they are stored in bytes from KiB and MiB. NVIDIA publishes no
register bandwidth, and an L2 bandwidth only for the A100 (per clock, without saying which clock the L2
runs at, so it is not turned into bytes per second here); none is stored rather than one guessed.

The clocks are not stored but implied by the published peaks: NVIDIA computes the FP32 (CUDA-core) peak at
the top boost clock (the A100 whitepaper prints both, 19.5 TFLOPS and 1,410 MHz; the H100's 66.9 and 51.2
TFLOPS give 1,980 and 1,755 MHz, the maximum boost clocks nvidia-smi reports) and the H100's dense
tensor-core peak at a lower clock, 989.4e12 / (132 x 4096) = 1.83 GHz against 1.98 GHz, which is why the
H100's matrix peak is about 15 times its FP32 peak and not the 16 of the per-clock rates.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.validation import MAX_COUNT, bounded_number, count

KIB = 1024
MIB = 1024 * 1024

SHARED_MEMORY_BYTES_PER_CLOCK_PER_SM = 32 * 4
"""32 banks of 32 bits per clock (CUDA C++ Programming Guide, compute capabilities 5.x to 9.0)."""

FLOPS_PER_FMA = 2
"""A fused multiply-add is a multiplication and an addition: two FLOPs, as every peak counts it."""


@dataclass(frozen=True)
class Anatomy:
    """One GPU's compute units, on-chip memories and power limit, as NVIDIA's documents give them."""

    sm_count: int  # streaming multiprocessors enabled on this product
    tensor_cores_per_sm: int
    dense_bf16_fma_per_clock_per_tensor_core: int  # multiply-adds each tensor core does per clock
    fp32_cores_per_sm: int  # CUDA cores: one FP32 multiply-add each per clock
    fp32_peak_flops_per_s: float  # the datasheet's FP32 (non-tensor) peak, FLOP/s
    l2_bytes: float
    l1_shared_bytes_per_sm: float  # the SRAM an SM splits between L1 cache and shared memory
    max_shared_bytes_per_sm: float  # the most of it a kernel may use as shared memory
    register_bytes_per_sm: float
    power_limit_w: float  # the board's maximum power (TDP), watts
    form_factor: str  # "SXM" (a socketed module) or "PCIe" (a card)
    memory_type: str  # "HBM3", "HBM2e", ...
    source: str
    l2_read_bytes_per_clock: int | None = None  # where NVIDIA prints it (the A100 whitepaper); else None

    def __post_init__(self) -> None:
        counts = ("sm_count", "tensor_cores_per_sm", "fp32_cores_per_sm")
        for name in (*counts, "dense_bf16_fma_per_clock_per_tensor_core"):
            count(name, getattr(self, name), maximum=MAX_COUNT)
        if self.l2_read_bytes_per_clock is not None:
            count("l2_read_bytes_per_clock", self.l2_read_bytes_per_clock, maximum=MAX_COUNT)
        sizes = ("l2_bytes", "l1_shared_bytes_per_sm", "max_shared_bytes_per_sm", "register_bytes_per_sm")
        for name in sizes:
            bounded_number(name, getattr(self, name), 1e12, 1.0)
        bounded_number("fp32_peak_flops_per_s", self.fp32_peak_flops_per_s, 1e21, 1e9)
        bounded_number("power_limit_w", self.power_limit_w, 1e5, 1.0)
        if self.max_shared_bytes_per_sm > self.l1_shared_bytes_per_sm:
            raise ValueError("max_shared_bytes_per_sm cannot exceed the SM's L1/shared SRAM")

    @property
    def tensor_cores(self) -> int:
        """Tensor cores on the whole GPU."""
        return self.sm_count * self.tensor_cores_per_sm

    @property
    def dense_bf16_flops_per_clock_per_sm(self) -> int:
        """Dense BF16 FLOPs one SM's tensor cores do per clock (two per multiply-add)."""
        return self.tensor_cores_per_sm * self.dense_bf16_fma_per_clock_per_tensor_core * FLOPS_PER_FMA

    @property
    def fp32_flops_per_clock_per_sm(self) -> int:
        """FP32 FLOPs one SM's CUDA cores do per clock (one multiply-add per core)."""
        return self.fp32_cores_per_sm * FLOPS_PER_FMA

    @property
    def tensor_to_vector_per_clock(self) -> float:
        """How many times more FLOPs per clock an SM's tensor cores do in BF16 than its FP32 CUDA cores."""
        return self.dense_bf16_flops_per_clock_per_sm / self.fp32_flops_per_clock_per_sm

    @property
    def boost_clock_hz(self) -> float:
        """The clock the FP32 peak is computed at: the top boost clock (1,410 MHz on the A100, as printed)."""
        return self.fp32_peak_flops_per_s / (self.sm_count * self.fp32_flops_per_clock_per_sm)

    def tensor_clock_hz(self, dense_bf16_flops_per_s: float) -> float:
        """The clock a dense BF16 tensor-core peak implies: peak / (SMs x FLOPs per SM per clock)."""
        return dense_bf16_flops_per_s / (self.sm_count * self.dense_bf16_flops_per_clock_per_sm)

    def tensor_peak_at(self, clock_hz: float) -> float:
        """Dense BF16 tensor-core FLOP/s at ``clock_hz``: SMs x FLOPs per SM per clock x clock.

        A kernel that runs below the clock the spec sheet assumes (at its power limit, say) gets this, not
        the spec sheet's peak.
        """
        clock = bounded_number("clock_hz", clock_hz, 1e10, 1e6)
        return self.sm_count * self.dense_bf16_flops_per_clock_per_sm * clock

    @property
    def register_bytes(self) -> float:
        """Register files of every SM together."""
        return self.sm_count * self.register_bytes_per_sm

    @property
    def l1_shared_bytes(self) -> float:
        """L1/shared-memory SRAM of every SM together."""
        return self.sm_count * self.l1_shared_bytes_per_sm

    @property
    def on_chip_bytes(self) -> float:
        """All the SRAM between HBM and the maths units: registers, L1/shared memory and L2."""
        return self.register_bytes + self.l1_shared_bytes + self.l2_bytes

    @property
    def shared_memory_bandwidth_bytes_per_s(self) -> float:
        """All shared memory at 128 bytes per clock at the boost clock: a peak derived, not measured."""
        return self.sm_count * SHARED_MEMORY_BYTES_PER_CLOCK_PER_SM * self.boost_clock_hz


H100_SOURCE = (
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper (comparison table of A100 and H100: SMs, tensor "
    "cores per SM, 50 MB L2, shared memory up to 228 KB and register file 256 KB per SM, FP32 peak; the "
    "H100 SM section: 128 FP32 cores and 256 KB of combined L1/shared memory per SM, twice the A100 SM's "
    "dense tensor-core rate per clock) and the NVIDIA H100 datasheet (power)"
)

H100_SXM = Anatomy(
    sm_count=132,
    tensor_cores_per_sm=4,
    dense_bf16_fma_per_clock_per_tensor_core=512,
    fp32_cores_per_sm=128,
    fp32_peak_flops_per_s=66.9e12,
    l2_bytes=50 * MIB,
    l1_shared_bytes_per_sm=256 * KIB,
    max_shared_bytes_per_sm=228 * KIB,
    register_bytes_per_sm=256 * KIB,
    power_limit_w=700,
    form_factor="SXM",
    memory_type="HBM3",
    source=H100_SOURCE + " (SXM5 column: 132 SMs, FP32 66.9 TFLOPS, up to 700 W)",
)

H100_PCIE = Anatomy(
    sm_count=114,
    tensor_cores_per_sm=4,
    dense_bf16_fma_per_clock_per_tensor_core=512,
    fp32_cores_per_sm=128,
    fp32_peak_flops_per_s=51.2e12,
    l2_bytes=50 * MIB,
    l1_shared_bytes_per_sm=256 * KIB,
    max_shared_bytes_per_sm=228 * KIB,
    register_bytes_per_sm=256 * KIB,
    power_limit_w=350,
    form_factor="PCIe",
    memory_type="HBM2e",
    source=H100_SOURCE + " (PCIe column: 114 SMs, FP32 51.2 TFLOPS, 300-350 W; the upper limit is stored)",
)

A100_SXM = Anatomy(
    sm_count=108,
    tensor_cores_per_sm=4,
    dense_bf16_fma_per_clock_per_tensor_core=256,
    fp32_cores_per_sm=64,
    fp32_peak_flops_per_s=19.5e12,
    l2_bytes=40 * MIB,
    l1_shared_bytes_per_sm=192 * KIB,
    max_shared_bytes_per_sm=164 * KIB,
    register_bytes_per_sm=256 * KIB,
    power_limit_w=400,
    form_factor="SXM",
    memory_type="HBM2e",
    source=(
        "NVIDIA A100 Tensor Core GPU Architecture whitepaper (comparison table of data-centre GPUs: 108 SMs, "
        "1,410 MHz boost clock, 40 MB L2, shared memory up to 164 KB and register file 256 KB per SM, "
        "400 W; the A100 SM section: 256 dense FP16 FMA per clock per tensor core, 64 FP32 cores and "
        "192 KB of combined L1/shared memory per SM; the memory-hierarchy section: L2 read bandwidth "
        "5,120 bytes per clock) and the NVIDIA A100 datasheet (FP32 19.5 TFLOPS)"
    ),
    l2_read_bytes_per_clock=5120,
)
