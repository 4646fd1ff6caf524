"""The calibrated mode: what kernels reach, fitted per operator and per shape to published measurements.

The spec-peak roofline is a lower bound on time. The calibrated mode estimates what an engine of a stated year
reaches, from small parametric curves fitted to Vidur's published kernel profiles (Agrawal et al., "Vidur: A
Large-Scale Simulation Framework For LLM Inference", MLSys 2024; data/profiling/ of microsoft/vidur, summary
points in :mod:`calculators.calibration_points`):

- **Linear layers** (one kernel per layer and matrix): ``t = n x t0 + max(Tc, Tm) + overlap x min(Tc, Tm)``
  with ``Tc = F / (peak x e_c(T))``, ``e_c(T) = e_max T / (T + T_half)`` over the token count T, and
  ``Tm = B / (bandwidth x e_m)``. The launch floor t0 makes small matrices (tensor-parallel shards, decode)
  slow; the overlap term makes shapes near the ridge slower than either limit, as measured.
- **Element-wise kernels** (norms, activation, rotary embedding, residual adds): ``n x t0 + B / (bw x e)``.
- **Attention**, FlashAttention-class kernels over a paged cache: decode
  ``L t0 + max(L c x batch, KV / (bw x e))``; prefill ``L x t0 + c x tokens x heads + F / (peak x e)``.
- **Collectives**: ``alpha + 2 (G - 1) x hop + bytes x 2 (G - 1) / G / bus_bandwidth`` (a ring, as Vidur's
  NCCL measured it), fitted for ``alpha`` and ``hop``; small decode all-reduces are latency-bound. The
  "current" calibration applies what NCCL's ring reaches, 370 of NVLink 4's 450 GB/s (NVIDIA/nccl-tests
  issue #212, S. Jeaugey of NVIDIA: about 20 % protocol overhead), to every link (a rule past NVLink 4).
- **Per-step engine overhead**: ``a + b x sequences`` (scheduling, input preparation, sampling, output
  handling).
- **The host's launch floor** of an eager engine (as-published only): the CPU issues every kernel of the
  step, one layer after another, and the GPU cannot run a kernel before it is issued, so the kernels take
  ``max(kernels, layers x h)``, with ``h`` the host's time per layer (:func:`host_floor_s`).

Which GPUs are measured: the A100 (SXM4 80GB) and H100 (SXM5) for linear and element-wise kernels;
attention on the A100 only; all-reduce on NVLink 3 and NVLink 4 nodes. Every other GPU, link or format
takes the fractions of its own peaks from the nearest measured one (``MEASURED_LIKE``; a custom GPU: the
nearer ridge point) and is labelled "extrapolated".

Two named calibrations:

- ``"as-published"``: the kernels and collectives as Vidur profiled them in 2024 (PyTorch eager kernels,
  NCCL ring all-reduces of 20-40 us), plus a per-step engine overhead of 4.5 ms + 0.34 ms per sequence
  fitted to what Splitwise's measured vLLM steps of Llama-2-70B on two A100s leave over once these kernels
  are subtracted (Patel et al., ISCA 2024; their simulator's data/perf_model.csv): the 2023-24 engines the
  papers measured. The validation test uses this one (tests/calculators/test_calibration_validation.py).
  Its kernels also wait for the host that issues them: the same engine's steps on 4 GPUs (Splitwise's
  measurements, where each GPU's share of the kernels is shorter than the host's issue time) give 0.49 ms
  per layer on the DGX-A100's host and 0.30 ms on the DGX-H100's.
- ``"current"``: the same kernel efficiencies with the launch floors of a CUDA-graph engine (kernels
  replayed from a graph: 40 % of the eager floor, a rule), collectives at the link preset's fixed latency
  (5-10 us, a one-shot custom all-reduce's, a rule) and NCCL's per-step constants, the faster of ring and
  tree, at NCCL's achieved ring bus bandwidth, and a small constant per-step overhead fitted to one published
  step of vLLM 0.23 (Llama-3.1-8B on an A100 40GB); a step of vLLM 0.21 on an H100 is its held-out check.

The calculators' own default stays the spec-peak bound (``mode="peak"``), simple enough to derive by hand;
the course quotes "current" (calculators.setting.COURSE_SETTING) with the bound beside each figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from calculators.interconnect import INTER_NODE_LINK

MODES = ("peak", "calibrated")
CALIBRATIONS = ("as-published", "current")

# Measured GPU whose fractions of peak a GPU takes (the rule for GPUs without measurements): the same
# generation or the nearest one with HBM and tensor cores of the same kind.
MEASURED_LIKE = MappingProxyType(
    {
        "a100-sxm-80gb": "a100",
        "h100-sxm": "h100",
        "h100-pcie": "h100",
        "h200": "h100",
        "b200": "h100",
        "gb200": "h100",
        "mi300x": "h100",
        "tpu-v5e": "h100",
        "l40s": "a100",
        "l4": "a100",
        "rtx-4090": "a100",
    }
)
MEASURED_GPUS = ("a100-sxm-80gb", "h100-sxm")
MEASURED_LINKS = MappingProxyType({"nvlink3": "nvlink3", "nvlink4": "nvlink4"})
A100_PEAKS = (312e12, 2.039e12)  # the spec peaks the fractions are taken against (FP16 dense, HBM2e)
H100_PEAKS = (989.4e12, 3.35e12)
PEAKS = MappingProxyType({"a100": A100_PEAKS, "h100": H100_PEAKS})
LINK_SPEC = MappingProxyType({"nvlink3": 300e9, "nvlink4": 450e9})
# The bus bandwidth NCCL's ring all-reduce reaches, as a share of the link's spec: "with the protocol overhead
# (~20%) NCCL can get an effective NVLink bandwidth of 370GB/s" of NVLink 4's 450 (S. Jeaugey, NVIDIA,
# NVIDIA/nccl-tests issue #212, 2024). Measured on NVLink 4; the current calibration applies it to every
# link inside a server (a rule).
ACHIEVED_BUS_SHARE = 370.0 / 450.0
# Over the network NCCL comes closer to the wire: "For NDR @ 400Gbps you should see 46-48GB/s per NIC" of
# its 50 (an NCCL maintainer, NVIDIA/nccl-tests issue #290, 2025); the middle, 47 of 50, is taken. The
# current calibration applies it to the inter-node links, alone or a server's cards together
# (:func:`calculators.interconnect.all_reduce_across_servers`).
NETWORK_BUS_SHARE = 47.0 / 50.0
NETWORK_LINKS = frozenset({INTER_NODE_LINK})
# The all-reduce algorithm of each calibration: Vidur's NCCL ran rings inside a node (its fit is a ring's);
# an engine of today takes the faster of ring and tree for each size, as the spec-peak bound does.
ALL_REDUCE_ALGORITHM = MappingProxyType({"as-published": "ring", "current": "auto"})
CURRENT_LAUNCH_SHARE = 0.4  # a CUDA-graph replay's launch floor, as a share of the eager floor (a rule)


# ------------------------------------------------------------------------------------------ the curves
def matmul_time_s(
    p: Sequence[float], flops: float, bytes_moved: float, tokens: float, peak: float, bandwidth: float,
    kernels: float = 1.0,
) -> float:  # fmt: skip
    """Seconds for ``kernels`` identical linear layers holding ``flops`` and ``bytes_moved`` in all.

    ``p`` = (t0 us, e_max, T_half, e_m, overlap); ``tokens`` is the token count of each kernel.
    """
    t0_us, e_max, t_half, e_m, overlap = p
    e_c = e_max * tokens / (tokens + t_half) if tokens > 0 else e_max
    compute = flops / (peak * e_c)
    memory = bytes_moved / (bandwidth * e_m)
    return kernels * t0_us * 1e-6 + max(compute, memory) + overlap * min(compute, memory)


def streaming_time_s(p: Sequence[float], bytes_moved: float, bandwidth: float, kernels: float = 1.0) -> float:
    """Seconds for ``kernels`` element-wise kernels moving ``bytes_moved`` in all; ``p`` = (t0 us, e)."""
    return kernels * p[0] * 1e-6 + bytes_moved / (bandwidth * p[1])


def decode_attention_time_s(
    p: Sequence[float], kv_bytes: float, sequences: float, layers: float, bandwidth: float
) -> float:
    """Seconds of decode attention; ``p`` = (t0 us per layer, us per sequence and layer, e).

    Each sequence's fixed work (its query, block table and output) and the streaming of the KV cache run in
    the same thread blocks across the GPU, so they overlap: the larger of the two counts, plus a launch
    floor. (A sum fits Vidur's profile worse: 0.119 against 0.109 RMS log error.)
    """
    per_sequence = layers * p[1] * sequences * 1e-6
    return layers * p[0] * 1e-6 + max(per_sequence, kv_bytes / (bandwidth * p[2]))


def prefill_attention_time_s(
    p: Sequence[float], flops: float, token_heads: float, layers: float, peak: float
) -> float:
    """Seconds of prefill attention; ``p`` = (t0 us per layer, ns per token and head, e);
    ``token_heads`` = chunk tokens x query heads on the GPU x layers."""
    return layers * p[0] * 1e-6 + token_heads * p[1] * 1e-9 + flops / (peak * p[2])


def all_reduce_fit_time_s(p: Sequence[float], bytes_per_gpu: float, gpus: int) -> float:
    """Seconds for one ring all-reduce; ``p`` = (alpha us, hop us per step, bus bandwidth GB/s)."""
    return (p[0] + 2.0 * (gpus - 1) * p[1]) * 1e-6 + 2.0 * (gpus - 1) / gpus * bytes_per_gpu / (p[2] * 1e9)


# Fitted once from calculators.calibration_points by calculators.calibration_fit.refit() (a test checks
# they agree).
FITTED: Mapping[str, tuple[float, ...]] = MappingProxyType(
    {
        "matmul/a100": (5.468, 0.7665, 30.74, 0.8896, 0.2957),
        "matmul/h100": (4.524, 0.7936, 2.995e-05, 0.9287, 0.4318),
        "elementwise/a100": (3.273, 0.639),
        "elementwise/h100": (2.479, 0.7276),
        "attention-decode/a100": (8.314, 1.279, 0.8132),
        "attention-prefill/a100": (161.9, 0.4211, 0.3805),
        "all-reduce/nvlink3": (39.93, 0.01365, 312.4),
        "all-reduce/nvlink4": (19.53, 0.6614, 631.2),
        "engine-overhead/as-published": (4.478, 0.3425),
        "engine-host/a100": (0.4918,),
        "engine-host/h100": (0.3042,),
        "engine-overhead/current": (1.145, 0.0),
    }
)


# ------------------------------------------------------------------------------------------ applying it
@dataclass(frozen=True)
class StepShape:
    """What the calibrated curves need to know about a step beyond its operators' FLOPs and bytes."""

    tokens: int  # tokens through the weights
    decode_tokens: int  # decoding sequences
    prefill_tokens: int  # prompt tokens in prefill chunks
    gpus: int  # tensor-parallel degree: operators' totals are shared by this many GPUs
    layers: int
    heads: int  # query heads of the model
    dense_layers: int
    moe_layers: int
    experts_per_token: int
    experts_touched: float
    data_parallel_attention: bool


def measured_like(gpu_key: str, ridge_flop_per_byte: float) -> str:
    """The measured GPU ("a100" or "h100") whose fractions of peak a GPU takes: its preset's entry in
    ``MEASURED_LIKE``, else (a custom GPU) the one whose BF16 ridge point is nearer, on a log scale."""
    if gpu_key in MEASURED_LIKE:
        return MEASURED_LIKE[gpu_key]
    ridges = {like: peak / bandwidth for like, (peak, bandwidth) in PEAKS.items()}
    return min(ridges, key=lambda like: abs(math.log(ridges[like] / ridge_flop_per_byte)))


def provenance(
    gpu_key: str, like: str, arithmetic: str, link: str | None, calibration: str = "as-published"
) -> tuple[str, ...]:
    """What in a calibrated estimate is extrapolated rather than measured, one line each."""
    lines = []
    if gpu_key not in MEASURED_GPUS:
        lines.append(
            f"calibrated: no published kernel profiles for {gpu_key}; its fractions of peak are extrapolated "
            f"from Vidur's {like.upper()} measurements"
        )
    if arithmetic != "bf16":
        lines.append(
            f"calibrated: {arithmetic} matrix products are extrapolated (Vidur profiled FP16): the same "
            f"share of the {arithmetic} peak as measured for FP16"
        )
    if gpu_key != "a100-sxm-80gb":
        lines.append("calibrated: attention kernels are extrapolated from Vidur's A100 profiles")
    if link is not None and link not in MEASURED_LINKS:
        if calibration != "current":
            lines.append(
                f"calibrated: collectives over {link} are extrapolated from Vidur's NVLink 4 profiles"
            )
        elif link not in NETWORK_LINKS:
            lines.append(
                f"calibrated: collectives over {link} take the share of spec NCCL reaches on NVLink 4"
            )
    return tuple(lines)


def launch_scale(calibration: str) -> float:
    return CURRENT_LAUNCH_SHARE if calibration == "current" else 1.0


def collective_latency_and_bandwidth(
    link_key: str, spec_latency_s: float, spec_hop_s: float, spec_bandwidth: float, calibration: str
) -> tuple[float, float, float]:
    """(fixed latency s, latency per step s, bus bandwidth B/s) of one collective in the calibrated mode.

    "as-published": the latencies of Vidur's fit (an extrapolated link's never below its preset's; the fixed
    one never below the preset's on any link), and its bus bandwidth capped
    at the link's spec (Vidur's largest all-reduces imply 312 and 631 GB/s on NVLink 3 and 4, above the 300
    and 450 no ring reaches). "current": the preset's latencies (a one-shot custom all-reduce's fixed cost,
    NCCL's per-step constants) and the share of the spec NCCL's ring reaches (``ACHIEVED_BUS_SHARE`` on
    NVLink and other links inside a server, ``NETWORK_BUS_SHARE`` over the network).
    """
    if calibration == "current":
        share = NETWORK_BUS_SHARE if link_key in NETWORK_LINKS else ACHIEVED_BUS_SHARE
        return spec_latency_s, spec_hop_s, spec_bandwidth * share
    measured = MEASURED_LINKS.get(link_key, "nvlink4")
    alpha_us, hop_us, bus_gb = FITTED[f"all-reduce/{measured}"]
    bandwidth = min(spec_bandwidth, bus_gb * 1e9 * spec_bandwidth / LINK_SPEC[measured])
    hop = hop_us * 1e-6 if link_key in MEASURED_LINKS else max(spec_hop_s, hop_us * 1e-6)
    return max(spec_latency_s, alpha_us * 1e-6), hop, bandwidth


def operator_time_s(
    name: str, kind: str, flops: float, bytes_moved: float, step: StepShape, peak: float, bandwidth: float,
    like: str, calibration: str,
) -> float:  # fmt: skip
    """Calibrated seconds of one (non-communication) operator; ``peak``/``bandwidth`` are one GPU's spec,
    ``like`` the measured GPU whose fractions of peak it takes (see :func:`measured_like`)."""
    scale = launch_scale(calibration)
    g = step.gpus
    f, b = flops / g, bytes_moved / g
    mm = FITTED[f"matmul/{like}"]
    mm = (mm[0] * scale, *mm[1:])
    ew = FITTED[f"elementwise/{like}"]
    ew = (ew[0] * scale, ew[1])
    L = step.layers
    if kind == "weights":
        tokens: float = max(step.tokens, 1)
        if name.startswith("QKV") or name.startswith("output projection"):
            kernels = float(L)
        elif name.startswith("MLP"):
            kernels = 2.0 * step.dense_layers
        elif name.startswith("routed experts"):
            kernels = 2.0 * step.moe_layers
            tokens = max(tokens * step.experts_per_token / max(step.experts_touched, 1.0), 1.0)
        elif name.startswith("shared experts"):
            kernels = 2.0 * step.moe_layers
        elif name.startswith("output layer"):
            kernels = 1.0
            tokens = 1.0 + step.decode_tokens
        else:  # the simple level's one operator: QKV, output projection, two MLP kernels per layer
            kernels = 4.0 * L + 1.0
        return matmul_time_s(mm, f, b, tokens, peak, bandwidth, kernels)
    if kind == "attention":
        if name.startswith("attention (decode)"):
            p = FITTED["attention-decode/a100"]
            p = (p[0] * scale, p[1], p[2])
            seqs = step.decode_tokens / (g if step.data_parallel_attention else 1)
            return decode_attention_time_s(p, b, seqs, L, bandwidth)
        p = FITTED["attention-prefill/a100"]
        p = (p[0] * scale, p[1], p[2])
        heads = step.heads / (1 if step.data_parallel_attention else g)
        return prefill_attention_time_s(p, f, step.prefill_tokens * heads * L, L, peak)
    kernels = {"norms": 2.0 * L + 1.0, "embedding lookup": 1.0}.get(name, 4.0 * L)
    return streaming_time_s(ew, b, bandwidth, kernels)


def host_floor_s(calibration: str, like: str, layers: int) -> float:
    """Seconds the host of an eager engine needs to issue one step's kernels: ``layers x h``.

    Mechanism: an engine without CUDA graphs (the engines of 2023-24, "as-published") issues every kernel
    from Python, layer by layer (normalisation, projections, rotary embedding, cache write, attention,
    all-reduce, MLP), and the GPU cannot start a kernel before the CPU has issued it. While the kernels take
    longer than their issue (one GPU's share of a large model), the host runs ahead and costs nothing; once
    they are shorter (the same model over more GPUs, or a small model), the step takes the host's time,
    whatever the GPUs. Each tensor-parallel worker issues its own shard's kernels in parallel, so the floor
    does not grow with the GPU count; it is a property of the host CPU and the software. (This is the
    explanation adopted, not a measurement: Splitwise publishes whole steps, not their breakdown; it is the
    one that fits a step which stops shrinking once a GPU's share of the kernels is small, on both nodes.)

    ``h`` is fitted per measured node (``like``: the DGX-A100's host for "a100", the DGX-H100's for
    "h100", whose CPUs differ; every other GPU takes its measured GPU's host, a rule) to Splitwise's
    measured vLLM steps of Llama-2-70B on 4 GPUs of each (``calibration_points.SPLITWISE_HOST``), where the
    kernels are shorter than the host. Per layer, because the issue work is per layer (a rule for models of
    other depths: the fit data has Llama-2-70B's 80 layers only). For "current" it is 0: a CUDA graph
    replays the step's kernels with one launch (its shorter launch floor is in ``CURRENT_LAUNCH_SHARE``).

    The form was chosen after seeing the validation misses it removes (Splitwise's 8-GPU steps, 0.57x and
    0.62x when the overhead was fitted on 2 GPUs only): Splitwise's times between tokens on 8 GPUs of each
    node are within 6 % of the same step on 4 (median +1 % on A100s, +4 % on H100s), so the step is set by
    something that does not shrink with each GPU's share of the kernels.
    """
    if calibration == "current":
        return 0.0
    (ms_per_layer,) = FITTED[f"engine-host/{like}"]
    return layers * ms_per_layer * 1e-3


def step_overhead_s(calibration: str, sequences: int) -> float:
    """Per-step engine overhead a + b x sequences in the step (scheduling, input preparation, sampling,
    output handling): fitted to Splitwise's vLLM measurements for "as-published"; for "current" a constant
    fitted to one published step of vLLM 0.23 (CUDA graphs and asynchronous scheduling hide most of it)."""
    a_ms, b_ms = FITTED[f"engine-overhead/{calibration}"]
    return (a_ms + b_ms * sequences) * 1e-3
