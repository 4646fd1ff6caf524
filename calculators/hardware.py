"""GPU presets: the peak figures a roofline needs, each with the document it comes from.

All figures are decimal (1 TB/s = 1e12 bytes/s, 1 TFLOP/s = 1e12 FLOP/s) and FLOP/s are dense: vendors print
a "with sparsity" figure twice as large, which no ordinary model reaches, so it is never used here.
``memory_capacity_bytes`` is the spec sheet's figure read as decimal GB (the lessons' "80 GB"); the memory an
engine can use is ``usable_memory_bytes``: the total the driver reports (nvidia-smi's "81559MiB" on an
H100 SXM, "143771MiB" on an H200, "183359MiB" on a B200, as printed in public nvidia-smi logs), which is
binary: HBM sold as "80 GB" is 80 GiB less ECC and driver reservations.
Where sources disagree, ``notes`` says which figure was chosen and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from calculators.gpu_anatomy import A100_SXM, H100_PCIE, H100_SXM, Anatomy
from calculators.precision import get_precision
from calculators.validation import MAX_COUNT, bounded_number, count, unknown_name

TERA = 1e12
GIGA = 1e9


@dataclass(frozen=True)
class GPU:
    """One accelerator's spec-sheet peaks.

    ``dense_flops_per_s`` maps a precision name to peak dense FLOP/s; a precision the chip has no tensor-core
    support for is absent, and asking for it raises ``ValueError``.
    """

    key: str  # preset name, e.g. "h100-sxm"
    name: str  # the vendor's product name
    dense_flops_per_s: Mapping[str, float]  # peak dense FLOP/s by precision ("bf16", "fp8")
    memory_bandwidth_bytes_per_s: float  # peak memory bandwidth, bytes per second (decimal)
    memory_capacity_bytes: (
        float  # memory on one GPU as the spec sheet prints it, bytes (decimal: 80 GB = 80e9)
    )
    source: str  # the document the figures come from
    notes: tuple[str, ...] = field(default=())  # where sources disagree, and which figure was chosen
    memory_exposed_bytes: float | None = (
        None  # what the device reports (nvidia-smi total), bytes; None: unknown
    )
    interconnect: str = "pcie4"  # the link between GPUs of one server (a calculators.interconnect preset)
    # GPUs that ``interconnect`` joins (its NVLink domain): an HGX/DGX board's 8, a GB200 NVL72 rack's 72.
    # Past it collectives cross nodes over ``INTER_NODE_LINK`` (see ``domain_source``).
    domain_gpus: int = 8
    domain_source: str = (
        "an 8-GPU server (HGX/DGX H100, H200 and B200 boards, the MI300X platform, PCIe servers): the "
        "NVIDIA HGX and AMD Instinct platform specifications"
    )
    # What is inside: SMs, tensor cores, on-chip memories, power limit (calculators.gpu_anatomy); None where
    # the vendor publishes no such breakdown.
    anatomy: Anatomy | None = None

    def __post_init__(self) -> None:
        # The custom GPU's ranges, in base units: a peak of 1e-300 FLOP/s would make every time infinite.
        low, high = CUSTOM_LIMITS["tb_per_s"]
        bounded_number(
            f"{self.key}: memory_bandwidth_bytes_per_s",
            self.memory_bandwidth_bytes_per_s,
            high * TERA,
            low * TERA,
        )
        low, high = CUSTOM_LIMITS["gb"]
        bounded_number(
            f"{self.key}: memory_capacity_bytes", self.memory_capacity_bytes, high * GIGA, low * GIGA
        )
        if self.memory_exposed_bytes is not None:
            bounded_number(
                f"{self.key}: memory_exposed_bytes", self.memory_exposed_bytes, high * GIGA, low * GIGA
            )
        if not isinstance(self.dense_flops_per_s, Mapping) or "bf16" not in self.dense_flops_per_s:
            raise ValueError(f"{self.key}: dense_flops_per_s must map precisions to FLOP/s, bf16 included")
        low, high = CUSTOM_LIMITS["tflops"]
        for precision, flops in self.dense_flops_per_s.items():
            get_precision(precision)
            bounded_number(f"{self.key}: dense_flops_per_s[{precision}]", flops, high * TERA, low * TERA)
        object.__setattr__(self, "dense_flops_per_s", MappingProxyType(dict(self.dense_flops_per_s)))
        count(f"{self.key}: domain_gpus", self.domain_gpus, maximum=MAX_COUNT)

    @property
    def usable_memory_bytes(self) -> float:
        """Bytes the device exposes: the nvidia-smi total where known, else the spec sheet's decimal figure.

        HBM is sold in binary units: an H100's "80 GB" is 80 GiB (85.9e9 bytes), of which the driver shows
        81,559 MiB (85.5e9 bytes) after ECC and its own reservations.
        """
        return self.memory_capacity_bytes if self.memory_exposed_bytes is None else self.memory_exposed_bytes

    def peak_flops_per_s(self, precision: str = "bf16", field: str = "precision") -> float:
        """Peak dense FLOP/s when the maths runs in ``precision`` (``field`` names it in errors)."""
        get_precision(precision, field)
        try:
            return self.dense_flops_per_s[precision]
        except KeyError:
            supported = ", ".join(sorted(self.dense_flops_per_s))
            raise ValueError(
                f"{field} {precision!r} has no tensor-core peak on {self.name}; supported: {supported}. "
                "Pick one of those, or store the weights in it and compute in bf16 (weight-only)"
            ) from None

    def arithmetic_for(self, weight_format: str) -> str:
        """The format matrix products run in when weights are stored in ``weight_format`` and nothing else is
        asked: the weight format itself where this GPU has a tensor-core peak for it (W8A8, FP8, NVFP4 on
        Blackwell), else BF16: the weights are dequantised and the maths runs at the BF16 peak (weight-only
        quantisation, W4A16; FP8 weights on an A100)."""
        precision = get_precision(weight_format, "weight_format")
        if precision.arithmetic and precision.name in self.dense_flops_per_s:
            return precision.name
        return "bf16"

    def ridge_point_flop_per_byte(self, precision: str = "bf16") -> float:
        """The arithmetic intensity (FLOP per byte) above which work on this GPU is compute-bound.

        It is peak FLOP/s over memory bandwidth: below it the GPU waits on memory, above it on its maths.
        """
        return self.peak_flops_per_s(precision) / self.memory_bandwidth_bytes_per_s


# Ranges for a GPU given by numbers: wide enough for any real or imagined chip, narrow enough that no
# product of them overflows a float.
CUSTOM_LIMITS = {"tflops": (1e-3, 1e9), "tb_per_s": (1e-6, 1e6), "gb": (1e-3, 1e9)}


def custom_gpu(
    *,
    bf16_tflops: float,
    memory_bandwidth_tb_per_s: float,
    memory_gb: float,
    fp8_tflops: float | None = None,
    int8_tflops: float | None = None,
    fp4_tflops: float | None = None,
    interconnect: str = "nvlink4",
    name: str = "custom GPU",
) -> GPU:
    """A GPU given by its numbers (TFLOP/s dense, TB/s, GB), for what-if questions no preset covers."""
    low, high = CUSTOM_LIMITS["tflops"]
    flops = {"bf16": bounded_number("bf16_tflops", bf16_tflops, high, low) * TERA}
    for key, value in (("fp8", fp8_tflops), ("int8", int8_tflops), ("fp4", fp4_tflops)):
        if value is not None:
            flops[key] = bounded_number(f"{key}_tflops", value, high, low) * TERA
    low, high = CUSTOM_LIMITS["tb_per_s"]
    bandwidth = bounded_number("memory_bandwidth_tb_per_s", memory_bandwidth_tb_per_s, high, low)
    low, high = CUSTOM_LIMITS["gb"]
    return GPU(
        key="custom",
        name=name,
        dense_flops_per_s=flops,
        memory_bandwidth_bytes_per_s=bandwidth * TERA,
        memory_capacity_bytes=bounded_number("memory_gb", memory_gb, high, low) * GIGA,
        source="given by the user",
        interconnect=interconnect,
    )


MIB = 2**20


def _gpu(
    key: str,
    name: str,
    bf16_tflops: float,
    fp8_tflops: float | None,
    tb_per_s: float,
    gb: float,
    source: str,
    *notes: str,
    int8_tflops: float | None = None,
    fp4_tflops: float | None = None,
    exposed_mib: float | None = None,
    interconnect: str = "pcie4",
    domain: tuple[int, str] | None = None,
    anatomy: Anatomy | None = None,
) -> GPU:
    flops = {"bf16": bf16_tflops * TERA}
    for fmt, value in (("fp8", fp8_tflops), ("int8", int8_tflops), ("fp4", fp4_tflops)):
        if value is not None:
            flops[fmt] = value * TERA
    exposed = None if exposed_mib is None else exposed_mib * MIB
    gpu = GPU(key, name, flops, tb_per_s * TERA, gb * GIGA, source, tuple(notes), exposed, interconnect)
    gpu = gpu if anatomy is None else replace(gpu, anatomy=anatomy)
    return gpu if domain is None else replace(gpu, domain_gpus=domain[0], domain_source=domain[1])


GPUS: Mapping[str, GPU] = MappingProxyType(
    {
        gpu.key: gpu
        for gpu in (
            _gpu(
                "h100-sxm",
                "NVIDIA H100 SXM5 80GB",
                989.4,
                1978.9,
                3.35,
                80,
                "NVIDIA H100 datasheet (SXM column: 3.35 TB/s, 80 GB; BF16 1,979 and FP8 3,958 TFLOPS are "
                "'with sparsity') and the NVIDIA H100 Tensor Core architecture whitepaper (dense "
                "989.4 / 1,978.9)",
                "The pre-launch Hopper whitepaper quoted 3 TB/s; the shipping datasheet says 3.35 "
                "TB/s, used here.",
                "Using the sparse 1,979 TFLOPS would double the ridge point to about 591 FLOP/byte.",
                int8_tflops=1978.9,
                exposed_mib=81559,
                interconnect="nvlink4",
                anatomy=H100_SXM,
            ),
            _gpu(
                "h100-pcie",
                "NVIDIA H100 PCIe 80GB",
                756.0,
                1513.0,
                2.0,
                80,
                "NVIDIA H100 datasheet (PCIe column: BF16 1,513 and FP8 3,026 TFLOPS with sparsity; "
                "2 TB/s HBM2e; 80 GB)",
                "Newer datasheets list the H100 NVL (94 GB, 3.9 TB/s) in place of this card.",
                int8_tflops=1513.0,
                exposed_mib=81559,
                interconnect="pcie5",
                anatomy=H100_PCIE,
            ),
            _gpu(
                "h200",
                "NVIDIA H200 SXM 141GB",
                989.4,
                1978.9,
                4.8,
                141,
                "NVIDIA H200 datasheet (BF16 1,979 and FP8 3,958 TFLOPS with sparsity; 4.8 TB/s "
                "HBM3e; 141 GB)",
                "Some third-party pages print 1,979 TFLOPS as dense BF16; that is the sparsity figure.",
                int8_tflops=1978.9,
                exposed_mib=143771,
                interconnect="nvlink4",
            ),
            _gpu(
                "b200",
                "NVIDIA B200 (HGX, 1000 W)",
                2250.0,
                4500.0,
                8.0,
                180,
                "NVIDIA HGX/DGX B200 specifications (180 GB and 8 TB/s per GPU; 4.5 PFLOPS BF16 and "
                "9 PFLOPS FP8 "
                "are sparse figures) and the Blackwell architecture technical brief",
                "Launch material said 192 GB; current HGX/DGX pages say 180 GB per GPU, used here.",
                "The GB200 part (1200 W) is faster: 2,500 TFLOPS dense BF16.",
                int8_tflops=4500.0,
                fp4_tflops=9000.0,
                exposed_mib=183359,
                interconnect="nvlink5",
            ),
            _gpu(
                "a100-sxm-80gb",
                "NVIDIA A100 SXM4 80GB",
                312.0,
                None,
                2.039,
                80,
                "NVIDIA A100 datasheet (BF16 312 dense / 624 sparse TFLOPS; 2,039 GB/s for the 80GB "
                "SXM part)",
                "No FP8 tensor cores. The 40GB part has 1,555 GB/s, which some articles use.",
                int8_tflops=624.0,
                exposed_mib=81920,
                interconnect="nvlink3",
                anatomy=A100_SXM,
            ),
            _gpu(
                "l40s",
                "NVIDIA L40S 48GB",
                362.05,
                733.0,
                0.864,
                48,
                "NVIDIA L40S datasheet (BF16 362.05 / FP8 733 TFLOPS dense, doubled with sparsity; "
                "864 GB/s GDDR6; 48 GB)",
                "Memory is GDDR6, not HBM.",
                int8_tflops=733.0,
                exposed_mib=46068,
                interconnect="pcie4",
            ),
            _gpu(
                "l4",
                "NVIDIA L4 24GB",
                121.0,
                242.5,
                0.3,
                24,
                "NVIDIA L4 datasheet (BF16 242 / FP8 485 TFLOPS with sparsity; 300 GB/s GDDR6; 24 GB)",
                "The datasheet prints only sparse figures; the dense figure is half.",
                int8_tflops=242.5,
                exposed_mib=23034,
                interconnect="pcie4",
            ),
            _gpu(
                "mi300x",
                "AMD Instinct MI300X 192GB",
                1307.4,
                2614.9,
                5.3,
                192,
                "AMD Instinct MI300X data sheet (peak BF16 1,307.4 TFLOPS, FP8 2,614.9 TFLOPS, both "
                "doubled with "
                "sparsity; 5.3 TB/s HBM3; 192 GB)",
                "Some pages list 2,615 TFLOPS as dense FP16; that is the sparse figure.",
                "Published benchmarks reach well below these peaks.",
                int8_tflops=2614.9,
                exposed_mib=196288,
                interconnect="infinity-fabric",
            ),
            _gpu(
                "rtx-4090",
                "NVIDIA GeForce RTX 4090 24GB",
                165.2,
                330.3,
                1.008,
                24,
                "NVIDIA Ada Lovelace architecture whitepaper v2.1, appendix (BF16 with FP32 "
                "accumulate 165.2 TFLOPS "
                "dense; FP8 with FP32 accumulate 330.3; 1,008 GB/s GDDR6X; 24 GB)",
                "GeForce cards run FP16/BF16 with FP32 accumulate at half rate; calculators quoting "
                "330 use the "
                "FP16-accumulate figure, and 661 is sparse.",
                int8_tflops=660.6,
                exposed_mib=24564,
                interconnect="pcie4",
            ),
            _gpu(
                "gb200",
                "NVIDIA GB200 (Blackwell GPU of a GB200 NVL72, 1200 W)",
                2500.0,
                5000.0,
                8.0,
                186,
                "NVIDIA GB200 NVL72 specifications, divided by its 72 GPUs (FP4 1,440 / FP8 720 / BF16 360 "
                "PFLOPS with sparsity, 576 TB/s and 13.4 TB of HBM3e); MLPerf Inference system descriptions "
                "list 186 GB per GPU",
                "Dense figures are half the sparse ones: BF16 2,500, FP8 and INT8 5,000, FP4 10,000 TFLOP/s.",
                "Device-reported memory not published here; it is derived as B200's is read: B200's "
                "'180 GB' is the 183,359 MiB (179 GiB) its driver reports, a binary figure, so GB200's "
                "'186 GB' is taken as 186 GiB (190,464 MiB). Taking it as decimal made a GB200 hold less "
                "than a B200.",
                int8_tflops=5000.0,
                fp4_tflops=10000.0,
                exposed_mib=186 * 1024,
                interconnect="nvlink5",
                domain=(72, "NVIDIA GB200 NVL72 specifications: 72 Blackwell GPUs in one NVLink domain"),
            ),
            _gpu(
                "tpu-v5e",
                "Google TPU v5e",
                197.0,
                None,
                0.819,
                16,
                "Google Cloud TPU v5e documentation (197 TFLOPS BF16, 394 TOPS INT8, 16 GiB HBM2 at "
                "819 GB/s) "
                "and the JAX scaling book's TPU table (1.97e14 FLOP/s, 8.1e11 B/s)",
                "16 GiB is 17.18e9 bytes (the 16 here is read as decimal like every spec figure; the usable "
                "figure is the binary one). It has no FP8 units, so FP8 weights are computed in BF16.",
                int8_tflops=394.0,
                exposed_mib=16384,
                interconnect="tpu-v5e-ici",
                domain=(256, "Google Cloud TPU v5e documentation: a v5e pod is 256 chips joined by ICI"),
            ),
        )
    }
)


def get_gpu(key: str | GPU) -> GPU:
    """Return the GPU preset called ``key`` (or ``key`` itself if it is already a GPU)."""
    if isinstance(key, GPU):
        return key
    if not isinstance(key, str):
        raise ValueError(f"gpu must be a preset name such as 'h100-sxm', got {key!r}")
    try:
        return GPUS[key]
    except KeyError:
        raise unknown_name("GPU", key, GPUS) from None
