"""Links between GPUs, and what a collective costs on them.

A collective of ``n`` bytes over ``G`` GPUs takes a fixed latency plus the bytes each GPU must send over its
link bandwidth (the alpha-beta model). Bandwidths here are **per GPU, per direction** (vendors usually print
the bidirectional total: NVLink 4's "900 GB/s" is 450 GB/s each way). The latency is the fixed cost of one
small collective as serving engines issue them (NCCL's low-latency protocol or vLLM's custom all-reduce):
a few microseconds inside an NVLink domain, more over PCIe and across nodes. Both are spec or typical
figures; measured bus bandwidth reaches 70-90 % of them (``communication_efficiency``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from calculators.validation import count, positive_number, unknown_name


@dataclass(frozen=True)
class Interconnect:
    """One GPU-to-GPU link technology: its bandwidth each way per GPU and the latency of one collective."""

    key: str
    name: str
    bandwidth_bytes_per_s: float  # per GPU, per direction (half the bidirectional figure vendors print)
    latency_s: float  # fixed cost of one small collective (all-reduce, all-to-all) or one send
    source: str
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        positive_number(f"{self.key}: bandwidth_bytes_per_s", self.bandwidth_bytes_per_s)
        positive_number(f"{self.key}: latency_s", self.latency_s)


def _link(key: str, name: str, gb_per_s: float, latency_us: float, source: str, *notes: str) -> Interconnect:
    return Interconnect(key, name, gb_per_s * 1e9, latency_us * 1e-6, source, tuple(notes))


_COLLECTIVE_LATENCY = (
    "Latency: a small all-reduce inside one NVLink domain is typically 5-10 us (NCCL's low-latency "
    "protocol, vLLM's one-shot custom all-reduce); 5 us is used. Typical, not a spec figure."
)

INTERCONNECTS: Mapping[str, Interconnect] = MappingProxyType(
    {
        link.key: link
        for link in (
            _link(
                "nvlink3",
                "NVLink 3 (A100 SXM, NVSwitch)",
                300,
                5,
                "NVIDIA A100 datasheet: NVLink 600 GB/s bidirectional per GPU (12 links x 50 GB/s)",
                _COLLECTIVE_LATENCY,
            ),
            _link(
                "nvlink4",
                "NVLink 4 (H100/H200 SXM, NVSwitch)",
                450,
                5,
                "NVIDIA H100 and H200 datasheets: NVLink 900 GB/s bidirectional per GPU (18 links x 50 GB/s)",
                _COLLECTIVE_LATENCY,
            ),
            _link(
                "nvlink5",
                "NVLink 5 (B200/GB200, NVSwitch)",
                900,
                5,
                "NVIDIA Blackwell datasheets (HGX B200, GB200 NVL72): NVLink 1.8 TB/s bidirectional per GPU",
                _COLLECTIVE_LATENCY,
            ),
            _link(
                "infinity-fabric",
                "AMD Infinity Fabric (MI300X platform, 8 GPUs fully connected)",
                448,
                10,
                "AMD Instinct MI300X platform data sheet: 7 links of 64 GB/s per direction to the other GPUs "
                "(896 GB/s bidirectional aggregate per GPU)",
                "A ring uses 2 of the 7 links; RCCL's all-to-all style algorithms use all of them. The "
                "aggregate is used, so this is optimistic for rings.",
            ),
            _link(
                "pcie4",
                "PCIe 4.0 x16",
                31.5,
                10,
                "PCI-SIG PCIe 4.0: 16 GT/s per lane, 128b/130b coding: 31.5 GB/s per direction for x16",
                "GPUs without NVLink (L4, L40S, RTX 4090, H100 PCIe without bridge) reduce over PCIe, "
                "often through host memory; 10 us is a typical small-collective latency.",
            ),
            _link(
                "pcie5",
                "PCIe 5.0 x16",
                63,
                10,
                "PCI-SIG PCIe 5.0: 32 GT/s per lane, 128b/130b coding: 63 GB/s per direction for x16",
            ),
            _link(
                "infiniband-ndr",
                "InfiniBand NDR, 400 Gb/s per GPU",
                50,
                15,
                "NVIDIA ConnectX-7 / Quantum-2 NDR: 400 Gb/s per port = 50 GB/s per direction; DGX H100 has "
                "one NDR port per GPU",
                "Latency: about 1-2 us per hop on the wire, but a multi-node NCCL all-reduce of a small "
                "message takes 10-20 us; 15 us is used.",
            ),
            _link(
                "tpu-v5e-ici",
                "TPU v5e inter-chip interconnect",
                90,
                5,
                "How to Scale Your Model (JAX scaling book), TPUs chapter: v5e ICI 4.5e10 B/s one way per "
                "link; a ring along one torus axis uses two links each way, 90 GB/s",
            ),
        )
    }
)


# What a collective crosses past a GPU preset's NVLink domain: one 400 Gb/s NIC per GPU, as DGX H100 has.
INTER_NODE_LINK = "infiniband-ndr"


def get_interconnect(key: str | Interconnect) -> Interconnect:
    """Return the interconnect preset called ``key`` (or ``key`` itself if it already is one)."""
    if isinstance(key, Interconnect):
        return key
    if not isinstance(key, str):
        raise ValueError(f"interconnect must be a preset name such as 'nvlink4', got {key!r}")
    try:
        return INTERCONNECTS[key]
    except KeyError:
        raise unknown_name("interconnect", key, INTERCONNECTS) from None


def all_reduce_time_s(bytes_per_gpu: float, gpus: int, link: Interconnect, efficiency: float = 1.0) -> float:
    """Seconds for a ring all-reduce of ``bytes_per_gpu`` bytes (each GPU's full buffer) over ``gpus`` GPUs.

    A ring all-reduce is a reduce-scatter then an all-gather: each GPU sends 2 (G - 1) / G of its buffer.
    One GPU needs no communication at all.
    """
    gpus = count("gpus", gpus)
    if gpus == 1:
        return 0.0
    sent = 2.0 * (gpus - 1) / gpus * bytes_per_gpu
    return link.latency_s + sent / (link.bandwidth_bytes_per_s * efficiency)


def all_to_all_time_s(bytes_per_gpu: float, gpus: int, link: Interconnect, efficiency: float = 1.0) -> float:
    """Seconds for an all-to-all where each GPU holds ``bytes_per_gpu`` bytes to spread over ``gpus`` GPUs.

    Each GPU keeps 1 / G of its data and sends the rest, (G - 1) / G. This is the balanced case; expert
    parallelism with skewed routing sends more to the busiest GPU, which this does not model.
    """
    gpus = count("gpus", gpus)
    if gpus == 1:
        return 0.0
    sent = (gpus - 1) / gpus * bytes_per_gpu
    return link.latency_s + sent / (link.bandwidth_bytes_per_s * efficiency)


def send_time_s(bytes_sent: float, link: Interconnect, efficiency: float = 1.0) -> float:
    """Seconds for one point-to-point send (a pipeline stage handing its activations to the next)."""
    return link.latency_s + bytes_sent / (link.bandwidth_bytes_per_s * efficiency)
