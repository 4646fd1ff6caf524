"""Links between GPUs, and what a collective costs on them.

A collective of ``n`` bytes over ``p`` GPUs takes a fixed latency (launch and synchronisation), a latency per
step of its algorithm, and the bytes each GPU must send over its link bandwidth (the alpha-beta model of
Thakur, Rabenseifner and Gropp, "Optimization of Collective Communication Operations in MPICH", IJHPCA 2005).
An all-reduce has two algorithms here, and the faster one is taken, as NCCL's tuner does:

- **ring** (reduce-scatter then all-gather round the ring): ``2 (p - 1)`` steps, each GPU sends
  ``2 (p - 1) / p x n`` bytes: the least data, the most steps. Large messages.
- **tree** (reduce up a binary tree, broadcast down, pipelined): ``2 ceil(log2 p)`` steps, about ``2 n``
  bytes sent. Fewer steps, more data: small, latency-bound messages. It stands for every latency-optimised
  algorithm (NCCL's trees across nodes, one-shot all-reduces on a switch).

Bandwidths here are **per GPU, per direction** (vendors usually print the bidirectional total: NVLink 4's
"900 GB/s" is 450 GB/s each way). The fixed latency is that of one small collective as serving engines issue
them; the per-step latency is NCCL's own tuning constant for its low-latency protocol (NVIDIA/nccl,
src/graph/tuning.cc: 0.6 us a step on NVLink, 1.0 on PCIe, 2.7 over the network). A link without a published
per-step figure keeps 0 and its fixed latency stands for the whole small collective. Both are spec or typical
figures; measured bus bandwidth reaches 70-90 % of them (``communication_efficiency``; the calibrated mode
takes NCCL's published 370 of 450 GB/s on NVLink and 47 of 50 over a network card,
:mod:`calculators.calibration`).

Past a server, a send or an all-to-all leaves through its GPU's own network card, but an all-reduce spreads
its rings over every card of the server (:func:`all_reduce_across_servers`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from calculators.validation import count, non_negative_number, positive_number, unknown_name

ALL_REDUCE_ALGORITHMS = ("auto", "ring", "tree")


@dataclass(frozen=True)
class Interconnect:
    """One GPU-to-GPU link technology: its bandwidth each way per GPU, the fixed latency of one collective and
    the latency of each step of a collective's algorithm."""

    key: str
    name: str
    bandwidth_bytes_per_s: float  # per GPU, per direction (half the bidirectional figure vendors print)
    latency_s: float  # fixed cost of one collective (launch, synchronisation) or one send
    source: str
    notes: tuple[str, ...] = ()
    hop_latency_s: float = 0.0  # each step of a ring or tree (0: unknown, latency_s covers the collective)

    def __post_init__(self) -> None:
        positive_number(f"{self.key}: bandwidth_bytes_per_s", self.bandwidth_bytes_per_s)
        positive_number(f"{self.key}: latency_s", self.latency_s)
        non_negative_number(f"{self.key}: hop_latency_s", self.hop_latency_s)


def _link(
    key: str, name: str, gb_per_s: float, latency_us: float, hop_us: float, source: str, *notes: str
) -> Interconnect:
    return Interconnect(key, name, gb_per_s * 1e9, latency_us * 1e-6, source, tuple(notes), hop_us * 1e-6)


_COLLECTIVE_LATENCY = (
    "Latency: a small all-reduce inside one NVLink domain is typically 5-10 us (NCCL's low-latency "
    "protocol, vLLM's one-shot custom all-reduce); 5 us is used as the fixed part. Typical, not a spec "
    "figure. Each step of a ring or tree adds 0.6 us, NCCL's tuning constant for its low-latency protocol "
    "on NVLink (NVIDIA/nccl src/graph/tuning.cc)."
)
_NCCL_HOP = (
    "Per-step latency: NCCL's tuning constant for its low-latency protocol (NVIDIA/nccl src/graph/tuning.cc)."
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
                0.6,
                "NVIDIA A100 datasheet: NVLink 600 GB/s bidirectional per GPU (12 links x 50 GB/s)",
                _COLLECTIVE_LATENCY,
            ),
            _link(
                "nvlink4",
                "NVLink 4 (H100/H200 SXM, NVSwitch)",
                450,
                5,
                0.6,
                "NVIDIA H100 and H200 datasheets: NVLink 900 GB/s bidirectional per GPU (18 links x 50 GB/s)",
                _COLLECTIVE_LATENCY,
            ),
            _link(
                "nvlink5",
                "NVLink 5 (B200/GB200, NVSwitch)",
                900,
                5,
                0.6,
                "NVIDIA Blackwell datasheets (HGX B200, GB200 NVL72): NVLink 1.8 TB/s bidirectional per GPU",
                _COLLECTIVE_LATENCY,
            ),
            _link(
                "infinity-fabric",
                "AMD Infinity Fabric (MI300X platform, 8 GPUs fully connected)",
                448,
                10,
                0,
                "AMD Instinct MI300X platform data sheet: 7 links of 64 GB/s per direction to the other GPUs "
                "(896 GB/s bidirectional aggregate per GPU)",
                "A ring uses 2 of the 7 links; RCCL's all-to-all style algorithms use all of them. The "
                "aggregate is used, so this is optimistic for rings. No published per-step latency: the "
                "10 us stands for the whole small collective.",
            ),
            _link(
                "pcie4",
                "PCIe 4.0 x16",
                31.5,
                10,
                1.0,
                "PCI-SIG PCIe 4.0: 16 GT/s per lane, 128b/130b coding: 31.5 GB/s per direction for x16",
                "GPUs without NVLink (L4, L40S, RTX 4090, H100 PCIe without bridge) reduce over PCIe, "
                "often through host memory; 10 us is a typical small-collective latency, plus 1.0 us a step "
                "(NCCL's tuning constant for its low-latency protocol on PCIe).",
            ),
            _link(
                "pcie5",
                "PCIe 5.0 x16",
                63,
                10,
                1.0,
                "PCI-SIG PCIe 5.0: 32 GT/s per lane, 128b/130b coding: 63 GB/s per direction for x16",
                _NCCL_HOP,
            ),
            _link(
                "infiniband-ndr",
                "InfiniBand NDR, 400 Gb/s per GPU",
                50,
                15,
                2.7,
                "NVIDIA ConnectX-7 / Quantum-2 NDR: 400 Gb/s per port = 50 GB/s per direction; DGX H100 has "
                "one NDR port per GPU",
                "Latency: about 1-2 us per hop on the wire, but a multi-node NCCL collective has a fixed "
                "cost of 10-20 us; 15 us is used, plus 2.7 us a step (NCCL's tuning constant for its "
                "low-latency protocol over the network, NVIDIA/nccl src/graph/tuning.cc).",
            ),
            _link(
                "tpu-v5e-ici",
                "TPU v5e inter-chip interconnect",
                90,
                5,
                0,
                "How to Scale Your Model (JAX scaling book), TPUs chapter: v5e ICI 4.5e10 B/s one way per "
                "link; a ring along one torus axis uses two links each way, 90 GB/s",
                "No published per-step latency: the 5 us stands for the whole small collective.",
            ),
        )
    }
)


# What a collective crosses past a GPU preset's NVLink domain: one 400 Gb/s NIC per GPU, as DGX H100 has.
INTER_NODE_LINK = "infiniband-ndr"


def all_reduce_across_servers(
    network: Interconnect, inside: Interconnect, gpus_per_server: int
) -> Interconnect:
    """The link an all-reduce spanning several servers runs at: the network's latencies, and as bandwidth
    all the NICs of a server together, one per GPU, never more than the link inside the server.

    A ring over two servers of eight crosses the network at two of its sixteen hops, so one ring would be
    held to one NIC. NCCL spreads its rings over all the NICs instead, each crossing at a different one, and
    a server's traffic leaves through all of them at once: the bus bandwidth nccl-tests reports across
    servers is the NICs' total, 192 GB/s on DGX A100's eight 200 Gb/s NICs (NVIDIA/nccl issue 812) and up to
    400 GB/s on eight 400 Gb/s NICs (NVIDIA/nccl-tests issue 309). Sends and all-to-alls are not spread
    this way: each GPU's bytes leave through its own NIC, so they keep ``network`` as it is.
    """
    gpus_per_server = count("gpus_per_server", gpus_per_server)
    return replace(
        network,
        name=f"{network.name}, {gpus_per_server} NICs of a server together",
        bandwidth_bytes_per_s=min(
            inside.bandwidth_bytes_per_s, gpus_per_server * network.bandwidth_bytes_per_s
        ),
        notes=(
            *network.notes,
            "An all-reduce across servers spreads its rings over every NIC of the server.",
        ),
    )


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


def _gpus_and_bytes(bytes_per_gpu: float, gpus: int) -> tuple[float, int]:
    return non_negative_number("bytes_per_gpu", bytes_per_gpu, maximum=1e18), count("gpus", gpus)


def ring_all_reduce_time_s(
    bytes_per_gpu: float, gpus: int, link: Interconnect, efficiency: float = 1.0
) -> float:
    """Seconds for a ring all-reduce of ``bytes_per_gpu`` bytes (each GPU's full buffer) over ``gpus`` GPUs.

    A reduce-scatter then an all-gather round the ring: ``2 (p - 1)`` steps, in each of which every GPU sends
    ``n / p`` bytes to its neighbour, so ``2 (p - 1) / p x n`` in all, the least any all-reduce built on sends
    can move (the factor nccl-tests turns algorithm bandwidth into bus bandwidth with). Its steps grow with
    ``p``: the algorithm for large messages. One GPU needs no communication at all.
    """
    n, p = _gpus_and_bytes(bytes_per_gpu, gpus)
    if p == 1:
        return 0.0
    steps = 2 * (p - 1)
    sent = 2.0 * (p - 1) / p * n
    return link.latency_s + steps * link.hop_latency_s + sent / (link.bandwidth_bytes_per_s * efficiency)


def tree_all_reduce_time_s(
    bytes_per_gpu: float, gpus: int, link: Interconnect, efficiency: float = 1.0
) -> float:
    """Seconds for a tree all-reduce: reduce up a binary tree, broadcast the sum back down, pipelined.

    ``2 ceil(log2 p)`` steps (up and down the tree's depth), and a GPU inside the tree passes the whole
    buffer up and down: about ``2 n`` bytes sent, more than a ring's ``2 (p - 1) / p x n``. Few steps, more
    data: the algorithm for small, latency-bound messages.
    """
    n, p = _gpus_and_bytes(bytes_per_gpu, gpus)
    if p == 1:
        return 0.0
    steps = 2 * math.ceil(math.log2(p))
    return link.latency_s + steps * link.hop_latency_s + 2.0 * n / (link.bandwidth_bytes_per_s * efficiency)


_ALL_REDUCES = {"ring": ring_all_reduce_time_s, "tree": tree_all_reduce_time_s}


def all_reduce_algorithm(bytes_per_gpu: float, gpus: int, link: Interconnect, efficiency: float = 1.0) -> str:
    """The faster algorithm for this message ("ring" on a tie), as NCCL's tuner picks by its cost model."""
    ring = ring_all_reduce_time_s(bytes_per_gpu, gpus, link, efficiency)
    tree = tree_all_reduce_time_s(bytes_per_gpu, gpus, link, efficiency)
    return "tree" if tree < ring else "ring"


def all_reduce_time_s(
    bytes_per_gpu: float, gpus: int, link: Interconnect, efficiency: float = 1.0, algorithm: str = "auto"
) -> float:
    """Seconds for an all-reduce of ``bytes_per_gpu`` bytes (each GPU's full buffer) over ``gpus`` GPUs.

    ``algorithm`` "ring" or "tree" (see those functions), or "auto": the faster of the two for this size.
    """
    if algorithm not in ALL_REDUCE_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALL_REDUCE_ALGORITHMS)}, got {algorithm!r}")
    if algorithm == "auto":
        algorithm = all_reduce_algorithm(bytes_per_gpu, gpus, link, efficiency)
    return _ALL_REDUCES[algorithm](bytes_per_gpu, gpus, link, efficiency)


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
