"""FLOPs, bytes and time of one forward pass (a prefill, a decode step, or a mixed step of both).

Every pass is a list of operators (see :mod:`calculators.operators`), and its time is the sum of their
roofline times plus communication and a fixed per-step overhead. :func:`mixed_step` is the one entry point;
:func:`prefill` and :func:`decode_step` are the same sum for a step of one kind.

Two levels of detail:

``simple`` is the lesson's model: a pass does 2 FLOPs per *active* parameter per token it processes and
reads every weight it uses once (N x bytes per weight; an MoE reads only the experts its tokens touch), as one
operator timed with one max(compute, memory). For a dense model that is exactly what the prefill-vs-decode
lesson computes by hand: prefill intensity is P FLOP/byte in BF16 and decode intensity is the batch B. With
``kv_traffic=True`` it adds one more operator, attention over the KV cache, and so never lowers a time.
The simple level leaves out communication between GPUs (it warns when there are several).

``refined`` is what a careful engineer counts: the per-operator list from the config shapes, with attention
growing with context, the output layer for the last token only, separate number formats for weights, KV
cache and arithmetic, and the collectives of tensor, pipeline and expert parallelism.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, TypeVar

from calculators import calibration, setting
from calculators.efficiency import MAX_STEP_OVERHEAD_S, Efficiency
from calculators.expert_load import busiest_gpu_factors, busiest_gpu_pairs
from calculators.expert_parallel import all_to_all_time_s as expert_all_to_all_time_s
from calculators.expert_parallel import dispatch_bytes
from calculators.hardware import GPU, get_gpu
from calculators.interconnect import (
    INTER_NODE_LINK,
    Interconnect,
    all_reduce_across_servers,
    all_reduce_algorithm,
    all_reduce_time_s,
    all_to_all_time_s,
    get_interconnect,
    send_time_s,
)
from calculators.memory import MemoryPlan, memory_plan
from calculators.models import Model, get_model
from calculators.operators import (
    ACTIVATION_BYTES,
    ModelShape,
    Operator,
    causal_keys,
    communication_operator,
    expected_experts_touched,
    make_operator,
    model_shape,
)
from calculators.precision import PRECISIONS, get_precision
from calculators.validation import (
    MAX_COUNT,
    choice,
    count,
    flag,
    fraction,
    non_negative_number,
)

LEVELS = ("simple", "refined")
DEFAULT_MEMORY_UTILIZATION = 0.9  # vLLM's gpu_memory_utilization default
DEFAULT_RUNTIME_RESERVE_BYTES = 2 * 2**30  # CUDA context, NCCL buffers and CUDA graphs: about 2 GiB
DEFAULT_MAX_BATCHED_TOKENS = 8192  # tokens one step may process (vLLM's max_num_batched_tokens)

__all__ = [
    "LEVELS",
    "PassResult",
    "Setup",
    "attention_flops_per_key",
    "decode_step",
    "expected_experts_touched",
    "make_setup",
    "mixed_step",
    "prefill",
]


@dataclass(frozen=True)
class Setup:
    """A model served on one or more GPUs: everything a pass needs besides its token counts.

    ``gpus`` is the tensor-parallel degree; ``pipeline_stages`` multiplies the GPUs (total = gpus x
    pipeline_stages). The efficiency factors scale the spec-sheet peaks (1.0 = peak). Formats: weights,
    KV cache and arithmetic separately (``arithmetic_format=None`` computes in the weight format where the
    GPU has a peak for it, else in BF16, weight-only).
    """

    model: Model
    gpu: GPU
    weight_format: str = "bf16"
    level: str = "simple"
    gpus: int = 1
    compute_efficiency: float = 1.0
    memory_efficiency: float = 1.0
    kv_cache_format: str = "bf16"
    arithmetic_format: str | None = None
    kv_traffic: bool = False
    pipeline_stages: int = 1
    expert_parallel: bool = False
    data_parallel_attention: bool = False
    interconnect: str | None = None
    communication_efficiency: float = 1.0
    step_overhead_s: float = 0.0
    memory_utilization: float = DEFAULT_MEMORY_UTILIZATION
    runtime_reserve_bytes: float = DEFAULT_RUNTIME_RESERVE_BYTES
    max_batched_tokens: int = DEFAULT_MAX_BATCHED_TOKENS
    ignore_memory: bool = False
    mode: str = "peak"  # "peak": the spec-peak roofline (a bound); "calibrated": fitted to measured kernels
    calibration: str = "as-published"  # the calibrated mode's calibration (see calculators.calibration)

    def __post_init__(self) -> None:
        if not isinstance(self.model, Model):
            raise ValueError(f"model must be a Model or a preset name, got {self.model!r}")
        if not isinstance(self.gpu, GPU):
            raise ValueError(f"gpu must be a GPU or a preset name, got {self.gpu!r}")
        get_precision(self.weight_format, "weight_format")
        get_precision(self.kv_cache_format, "kv_cache_format")
        if self.arithmetic_format is not None:
            if not get_precision(self.arithmetic_format, "arithmetic_format").arithmetic:
                raise ValueError(
                    f"arithmetic_format {self.arithmetic_format!r} is a storage format (weight-only); "
                    "use bf16, fp8, int8 or fp4"
                )
            self.gpu.peak_flops_per_s(self.arithmetic_format, "arithmetic_format")
        choice("level", self.level, LEVELS)
        count("gpus", self.gpus, maximum=100_000)
        count("pipeline_stages", self.pipeline_stages, maximum=self.model.layers)
        fraction("compute_efficiency", self.compute_efficiency)
        fraction("memory_efficiency", self.memory_efficiency)
        fraction("communication_efficiency", self.communication_efficiency)
        fraction("memory_utilization", self.memory_utilization)
        non_negative_number("step_overhead_s", self.step_overhead_s, MAX_STEP_OVERHEAD_S)
        non_negative_number("runtime_reserve_bytes", self.runtime_reserve_bytes)
        count("max_batched_tokens", self.max_batched_tokens)
        choice("mode", self.mode, calibration.MODES)
        choice("calibration", self.calibration, calibration.CALIBRATIONS)
        tuned = (self.compute_efficiency, self.memory_efficiency, self.communication_efficiency)
        if self.mode == "calibrated" and tuned != (1.0, 1.0, 1.0):
            raise ValueError(
                "mode 'calibrated' sets every kernel's efficiency from measurements; leave "
                "compute_efficiency, memory_efficiency and communication_efficiency at 1.0, "
                "or use mode 'peak'"
            )
        for name in ("kv_traffic", "expert_parallel", "data_parallel_attention", "ignore_memory"):
            flag(name, getattr(self, name))
        if self.interconnect is not None:
            get_interconnect(self.interconnect)
        needs_shapes = self.level == "refined" or self.kv_traffic
        if needs_shapes and not self.model.shapes_known:
            raise ValueError(
                f"level 'refined' and kv_traffic need the model's layer shapes, but {self.model.name!r} is "
                "given only by its size; use level 'simple' without kv_traffic, or a model preset"
            )
        if self.expert_parallel and self.model.moe is None:
            raise ValueError(
                f"expert_parallel needs an MoE model; {self.model.name} is dense: set it to False"
            )

    # --- formats and peaks --------------------------------------------------------------------------------
    @property
    def precision(self) -> str:
        """The weight format (the name the lessons and older calls use)."""
        return self.weight_format

    @cached_property
    def arithmetic(self) -> str:
        """The format the matrix products run in: explicit, else the weight format if the GPU computes in it,
        else BF16 (weight-only quantisation dequantises to BF16)."""
        if self.arithmetic_format is not None:
            return self.arithmetic_format
        return self.gpu.arithmetic_for(self.weight_format)

    @property
    def bytes_per_value(self) -> float:
        """Bytes per weight in the weight format (2 for BF16, 1 for FP8, about 0.53 for INT4)."""
        return PRECISIONS[self.weight_format].bytes_per_value

    @property
    def kv_bytes_per_value(self) -> float:
        """Bytes per cached K/V value in the KV-cache format."""
        return PRECISIONS[self.kv_cache_format].bytes_per_value

    @cached_property
    def matmul_peak_flops_per_s(self) -> float:
        """One GPU's reachable FLOP/s for the weight matrix products (arithmetic format x efficiency)."""
        return self.gpu.peak_flops_per_s(self.arithmetic) * self.compute_efficiency

    @cached_property
    def attention_peak_flops_per_s(self) -> float:
        """One GPU's reachable FLOP/s for attention, which runs in BF16."""
        return self.gpu.peak_flops_per_s("bf16") * self.compute_efficiency

    @cached_property
    def bandwidth_bytes_per_s(self) -> float:
        """One GPU's reachable memory bandwidth."""
        return self.gpu.memory_bandwidth_bytes_per_s * self.memory_efficiency

    @property
    def ridge_point_flop_per_byte(self) -> float:
        """Reachable FLOP/s over reachable bytes/s in the arithmetic format."""
        return self.matmul_peak_flops_per_s / self.bandwidth_bytes_per_s

    @cached_property
    def link(self) -> Interconnect:
        """The interconnect between the GPUs: the setup's choice, else the GPU's own."""
        return get_interconnect(self.interconnect or self.gpu.interconnect)

    def link_for(self, gpus: int) -> Interconnect:
        """The link a send or an all-to-all over ``gpus`` GPUs is limited by: the GPU's own up to its NVLink
        domain (8 on HGX boards, 72 on GB200 NVL72), one GPU's NIC past it. A chosen interconnect wins."""
        if self.interconnect is None and gpus > self.gpu.domain_gpus:
            return get_interconnect(INTER_NODE_LINK)
        return self.link

    def all_reduce_link_for(self, gpus: int) -> Interconnect:
        """The link an all-reduce over ``gpus`` GPUs runs at: as :meth:`link_for`, but past the NVLink domain
        with all the NICs of a server together (:func:`~calculators.interconnect.all_reduce_across_servers`);
        the group spans as few servers as it can, with the same number of GPUs in each."""
        if self.interconnect is not None or gpus <= self.gpu.domain_gpus:
            return self.link
        servers = math.ceil(gpus / self.gpu.domain_gpus)
        network = get_interconnect(INTER_NODE_LINK)
        return all_reduce_across_servers(network, self.link, gpus // servers)

    @property
    def stage_boundaries_across_servers(self) -> int:
        """How many of the pipeline's stage boundaries cross from one server to the next, stages filling
        servers in order: all of them when a stage spans servers, none when the whole pipeline fits in one
        NVLink domain (or an interconnect is chosen, which every GPU then shares)."""
        boundaries = self.pipeline_stages - 1
        domain = self.gpu.domain_gpus
        if self.interconnect is not None or self.total_gpus <= domain:
            return 0
        if self.gpus >= domain:
            return boundaries
        stages_per_server = domain // self.gpus
        return math.ceil(self.pipeline_stages / stages_per_server) - 1

    @property
    def total_gpus(self) -> int:
        """All GPUs of the setup: tensor-parallel degree x pipeline stages."""
        return self.gpus * self.pipeline_stages

    @cached_property
    def shape(self) -> ModelShape:
        return model_shape(self.model)

    # --- weights and KV cache -----------------------------------------------------------------------------
    @property
    def params(self) -> float:
        """N at this level: the lesson's round figure (simple) or the one from the shapes (refined)."""
        return self.model.params if self.level == "simple" else self.model.derived_params

    @cached_property
    def weight_bytes(self) -> float:
        """Bytes of all weights stored, one copy (simple: N x bytes per weight; refined: BF16 where a
        quantised checkpoint keeps BF16).

        Quantised checkpoints keep the embedding and the output layer in BF16 at both levels: the simple level
        quantising them too made an 8B model's weights 13% smaller in FP8 and 36-40% smaller in INT4 or
        FP4 than the refined level's, so its capacity figures read optimistic.
        """
        if self.level == "simple":
            if self.bytes_per_value >= ACTIVATION_BYTES or not self.model.shapes_known:
                return self.params * self.bytes_per_value
            in_bf16 = self.model.embedding_params + self.model.lm_head_params
            return (self.params - in_bf16) * self.bytes_per_value + in_bf16 * ACTIVATION_BYTES
        s = self.shape
        quantised = (
            s.layers * (s.qkv_params + s.o_params)
            + s.dense_layers * s.mlp_params
            + s.moe_layers * (s.experts + s.shared_experts) * s.expert_params
        )
        kept = self.params - quantised
        return quantised * self.bytes_per_value + kept * ACTIVATION_BYTES

    @property
    def attention_weight_bytes(self) -> float:
        """Bytes of the attention projections (all layers): what data-parallel attention puts on every GPU."""
        s = self.shape
        return s.layers * (s.qkv_params + s.o_params) * self.bytes_per_value

    @cached_property
    def kv_replication(self) -> float:
        """Copies of each cached K/V value the tensor-parallel GPUs hold together (1 without TP)."""
        if self.data_parallel_attention:
            return 1.0  # each sequence lives on one GPU
        if self.model.attention == "mla":
            return float(self.gpus)  # the latent is shared by all heads, so every GPU holds all of it
        return max(1.0, self.gpus / self.model.kv_heads)  # more GPUs than KV heads: heads are copied

    @cached_property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token of context occupies over all GPUs, copies included."""
        if not self.model.shapes_known:
            return 0.0
        return self.model.kv_values_per_token() * self.kv_bytes_per_value * self.kv_replication

    def kv_cache_bytes(self, batch: int, context_tokens: int) -> float:
        """Bytes of KV cache for ``batch`` sequences of ``context_tokens`` tokens, over all GPUs.

        A model given only by its size has no shapes, so its cache is unknown and counted as 0 bytes.
        """
        batch, context_tokens = count("batch", batch), count("context_tokens", context_tokens)
        return batch * self.model.cached_tokens(context_tokens) * self.kv_bytes_per_token

    @property
    def memory_capacity_bytes(self) -> float:
        """Memory the device reports, over all GPUs (before the utilisation cap and reserves)."""
        return self.gpu.usable_memory_bytes * self.total_gpus

    @cached_property
    def memory(self) -> MemoryPlan:
        """Where each GPU's memory goes, and the KV-cache budget (see :mod:`calculators.memory`)."""
        return memory_plan(self)

    def check_fits(self, batch: int, context_tokens: int) -> tuple[str, ...]:
        """Raise ``ValueError`` if ``batch`` sequences of ``context_tokens`` tokens do not fit in memory;
        with ``ignore_memory`` return the same message as a warning instead."""
        return self.memory.check(
            batch * self.model.cached_tokens(context_tokens),
            lambda: f"batch {batch} at a context of {context_tokens:,} tokens",
        )


R = TypeVar("R")

_MEMO: ContextVar[dict[tuple[Any, ...], Any] | None] = ContextVar("pass_memo", default=None)


@contextmanager
def memoised() -> Iterator[None]:
    """Within the block, a setup asked for twice is built once and a pass asked for twice is computed once.

    The browser worker answers a slider move by computing one request for the numbers and again for each
    chart (the same setups, the same prefill and decode steps, under the calibrated mode and at spec peaks):
    inside this block the repeats are looked up instead. Setups and pass results are frozen, and a setup
    depends only on :func:`make_setup`'s arguments and the active model setting (part of the key), so every
    answer is the one computed without the block. Only hashable arguments are looked up (a ``Model`` object
    is built as usual), and the memory lives as long as the block: one worker request.
    """
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def _remembered(key: tuple[Any, ...], compute: Callable[[], R]) -> R:
    """``compute()``, or what it gave for ``key`` before inside :func:`memoised` (no memory outside)."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    try:
        found = memo.get(key, _MISSING)
    except TypeError:  # an unhashable argument (a Model object): computed every time
        return compute()
    if found is _MISSING:
        found = memo[key] = compute()
    return found  # type: ignore[no-any-return]


_MISSING = object()


def _remembered_pass(
    kind: str, setup: Setup, args: tuple[int, ...], compute: Callable[[], PassResult]
) -> PassResult:
    """A pass of ``setup`` (by identity: a setup's fields do not hash) remembered like :func:`_remembered`.

    The setup is kept beside its result, so its ``id`` cannot be reused by another while the memory lives.
    """
    memo = _MEMO.get()
    if memo is None:
        return compute()
    key = (kind, id(setup), *args)
    found = memo.get(key)
    if found is None or found[0] is not setup:
        found = memo[key] = (setup, compute())
    return found[1]


def make_setup(
    model: str | Model = "dense-8b",
    gpu: str | GPU = "h100-sxm",
    *,
    precision: str = "bf16",
    level: str = "simple",
    gpus: int = 1,
    compute_efficiency: float = 1.0,
    memory_efficiency: float = 1.0,
    weight_format: str | None = None,
    efficiency: Efficiency | None = None,
    **options: object,
) -> Setup:
    """Build a :class:`Setup` from preset names (or objects); defaults are the lesson's scenario.

    ``precision`` is the weight format (``weight_format`` is the same, by its new name); ``efficiency``
    (an :class:`~calculators.efficiency.Efficiency`, e.g. one of ``efficiency.TYPICAL``) sets all four
    achieved-performance inputs at once; other keyword arguments are the :class:`Setup` fields
    (``kv_cache_format``, ``pipeline_stages``, ``ignore_memory``...).
    """
    key = (
        "setup", model, gpu, precision, level, gpus, compute_efficiency, memory_efficiency, weight_format,
        efficiency, tuple(sorted(options.items())), setting.active_setting(),
    )  # fmt: skip
    return _remembered(
        key,
        lambda: _build_setup(
            model, gpu, precision, level, gpus, compute_efficiency, memory_efficiency, weight_format,
            efficiency, options,
        ),
    )  # fmt: skip


def _build_setup(
    model: str | Model,
    gpu: str | GPU,
    precision: str,
    level: str,
    gpus: int,
    compute_efficiency: float,
    memory_efficiency: float,
    weight_format: str | None,
    efficiency: Efficiency | None,
    options: dict[str, object],
) -> Setup:
    if efficiency is not None:
        if not isinstance(efficiency, Efficiency):
            raise ValueError(
                f"efficiency must be an Efficiency (see calculators.efficiency), got {efficiency!r}"
            )
        compute_efficiency, memory_efficiency = efficiency.compute, efficiency.memory
        options = {
            **options,
            "communication_efficiency": efficiency.communication,
            "step_overhead_s": efficiency.step_overhead_s,
        }
    unknown = sorted(set(options) - set(Setup.__dataclass_fields__))
    if unknown:
        raise ValueError(
            f"unknown setup option {unknown[0]!r}; known: {', '.join(Setup.__dataclass_fields__)}"
        )
    chosen = get_model(model)
    tuned = (compute_efficiency, memory_efficiency, options.get("communication_efficiency", 1.0)) != (
        1.0,
        1.0,
        1.0,
    )
    options = setting.setup_options(options, shapes_known=chosen.shapes_known, tuned=tuned)
    return Setup(
        chosen,
        get_gpu(gpu),
        weight_format if weight_format is not None else precision,
        level,
        gpus,
        compute_efficiency,
        memory_efficiency,
        **options,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class PassResult:
    """One forward pass: what it computes, what it moves, and how long it takes, operator by operator."""

    phase: str  # "prefill", "decode" or "mixed" (prefill chunks and decode tokens in one step)
    level: str  # "simple" (the lesson's model) or "refined"
    tokens_processed: int  # tokens that go through the weights in this pass
    weight_bytes: float  # weight bytes read over all GPUs (MoE: only the experts the tokens touch)
    kv_cache_bytes: float  # KV-cache bytes read and written over all GPUs (0 at the simple level)
    embedding_bytes: float  # embedding rows looked up, bytes (0 at the simple level)
    matmul_flops: float  # FLOPs of the weight matrix products over all GPUs
    attention_flops: float  # FLOPs of attention scores and weighted sums (0 at the simple level)
    operators: tuple[Operator, ...]  # the pass's kernels with their FLOPs, bytes and times
    warnings: tuple[str, ...]  # what the result leaves out or assumes (communication, memory what-ifs)
    communication_time_s: float  # seconds of collectives between GPUs, included in the time
    # the per-step time beyond the kernels, included in the time: the engine's overhead and, for an eager
    # engine (the as-published calibration), the GPU's wait for the host to issue the kernels
    overhead_s: float
    ridge_point_flop_per_byte: float  # the GPU's ridge point in the arithmetic format, at these efficiencies
    time_s: float  # seconds the pass takes: the sum of operator times, communication and overhead
    mode: str = "peak"  # "peak" (time_s is the spec-peak bound) or "calibrated" (time_s is the estimate)
    bound_time_s: float = 0.0  # the spec-peak bound of the same pass (equal to time_s in peak mode)
    # the part of overhead_s the GPUs wait for an eager engine's host to issue the kernels: the host's launch
    # floor less the kernels, when the floor is the longer (as-published calibration only; else 0)
    host_wait_s: float = 0.0

    @property
    def flops(self) -> float:
        """FLOPs of the pass over all GPUs."""
        return sum(op.flops for op in self.operators)

    @property
    def bytes_moved(self) -> float:
        """Bytes read and written from memory by the pass (communication not included)."""
        return sum(op.bytes_moved for op in self.operators if op.kind != "communication")

    @property
    def intensity_flop_per_byte(self) -> float:
        """Arithmetic intensity, FLOP per byte moved: P for a simple prefill, B for a simple decode step."""
        return self.flops / self.bytes_moved

    @property
    def compute_time_s(self) -> float:
        """Seconds the maths alone would take: the operators' compute times added up."""
        return sum(op.compute_time_s for op in self.operators)

    @property
    def memory_time_s(self) -> float:
        """Seconds the memory traffic alone would take: the operators' memory times added up."""
        return sum(op.memory_time_s for op in self.operators if op.kind != "communication")

    @property
    def attention_time_s(self) -> float:
        """Seconds of the attention operators (scores and weighted sums over the KV cache), in this mode."""
        return sum(op.time_s for op in self.operators if op.kind == "attention")

    @property
    def weights_time_s(self) -> float:
        """Seconds of the weight matrix products (projections, MLP or experts, output layer), in this mode."""
        return sum(op.time_s for op in self.operators if op.kind == "weights")

    @property
    def routed_experts_time_s(self) -> float:
        """Seconds of an MoE's routed experts, in this mode (on the busiest GPU under expert parallelism)."""
        return sum(op.time_s for op in self.operators if op.name.startswith("routed experts"))

    @property
    def all_to_all_time_s(self) -> float:
        """Seconds of the MoE layers' dispatch and combine all-to-alls, in this mode (0 without them)."""
        return sum(op.time_s for op in self.operators if op.name.startswith("expert all-to-alls"))

    @property
    def attention_intensity_flop_per_byte(self) -> float:
        """FLOPs of attention per byte it moves (KV cache read and written, plus its activations at the
        refined level); 0 when the pass counts no attention.

        Attention's intensity is the model's, not the batch's: each sequence reads its own cache. A decode
        token does 2 (d_qk + d_v) FLOPs per head and cached token, and a cached token holds 2 d values per KV
        head, so decode attention of MHA or GQA reaches about 2 x (query heads per KV head) / bytes per value
        (the KV cache lesson's group size); MLA's latent is shared by every head, so about 2 x query heads.
        Prefill's grows with the prompt: each cached key is used by every later query.
        """
        flops = sum(op.flops for op in self.operators if op.kind == "attention")
        moved = sum(op.bytes_moved for op in self.operators if op.kind == "attention")
        return flops / moved if moved else 0.0

    @property
    def time_ms(self) -> float:
        """The same time in milliseconds."""
        return self.time_s * 1e3

    @property
    def bound(self) -> str:
        """Which limit sets the pass's time: "compute", "memory", or "mixed" where neither does alone.

        Two readings must agree: the pass's totals ("compute" only when its compute time exceeds its memory
        time) and its operators (which kind of operator takes more of the time). A decode step of a large
        batch over a short cache is where they part: its weight products are compute-bound and take most of
        the time, yet its cache reads make the memory time the larger; that step is "mixed", not labelled
        by one of its sides.
        """
        compute = sum(op.time_s for op in self.operators if op.bound == "compute")
        memory = sum(op.time_s for op in self.operators if op.bound == "memory")
        by_totals = "compute" if self.compute_time_s > self.memory_time_s else "memory"
        by_operators = "compute" if compute > memory else "memory"
        return by_totals if by_totals == by_operators else "mixed"

    @property
    def bound_label(self) -> str:
        """The bound as prose: "compute-bound", "memory-bound", "mixed (compute- and memory-bound parts)"."""
        return "mixed (compute- and memory-bound parts)" if self.bound == "mixed" else f"{self.bound}-bound"

    def as_dict(self) -> dict[str, float | int | str]:
        """Flat record with unit-suffixed keys, for JSON output and the browser."""
        return {
            "phase": self.phase,
            "level": self.level,
            "tokens_processed": self.tokens_processed,
            "flops": self.flops,
            "bytes_moved": self.bytes_moved,
            "weight_bytes": self.weight_bytes,
            "kv_cache_bytes": self.kv_cache_bytes,
            "embedding_bytes": self.embedding_bytes,
            "matmul_flops": self.matmul_flops,
            "attention_flops": self.attention_flops,
            "intensity_flop_per_byte": self.intensity_flop_per_byte,
            "ridge_point_flop_per_byte": self.ridge_point_flop_per_byte,
            "compute_time_s": self.compute_time_s,
            "memory_time_s": self.memory_time_s,
            "communication_time_s": self.communication_time_s,
            "overhead_s": self.overhead_s,
            "host_wait_s": self.host_wait_s,
            "time_s": self.time_s,
            "bound": self.bound,
            "mode": self.mode,
            "bound_time_s": self.bound_time_s,
        }


def attention_flops_per_key(model: Model, phase: str) -> float:
    """FLOPs for one query token attending to one cached token, over all heads and layers.

    Scores cost 2 x d_qk and the weighted sum of values 2 x d_v, per head. MLA depends on the phase: prefill
    expands the latent into ordinary heads, decode works on the latent directly (the absorbed form).
    """
    s = model_shape(model)
    if phase == "prefill":
        return 2.0 * s.layers * s.heads * (s.d_qk_prefill + s.d_v_prefill)
    return 2.0 * s.layers * s.heads * (s.d_qk_decode + s.d_v_decode)


# ------------------------------------------------------------------------------------------------ the step
def _checked_contexts(values: Sequence[int]) -> tuple[Sequence[int], int]:
    """``decode_contexts`` validated, with their sum: one pass each of sum, min and max when all are ints.

    A sum of Python ints is an int, and any float, string or None among them changes that, so the fast path
    needs no per-entry check; anything else is checked entry by entry for a message naming the entry.
    """
    if not values:
        return (), 0
    try:
        total = sum(values)
        fast = type(total) is int and min(values) >= 1 and max(values) <= MAX_COUNT
    except TypeError:
        fast = False
    if fast:
        return values, total
    checked = [count(f"decode_contexts[{i}]", v) for i, v in enumerate(values)]
    return checked, sum(checked)


def _checked_chunks(values: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    checked = []
    for i, pair in enumerate(values):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(
                f"prefill_chunks[{i}] must be a pair (chunk_tokens, tokens_already_cached), got {pair!r}"
            )
        tokens = count(f"prefill_chunks[{i}] chunk_tokens", pair[0])
        cached = count(f"prefill_chunks[{i}] tokens_already_cached", pair[1], minimum=0)
        checked.append((tokens, cached))
    return checked


def mixed_step(
    setup: Setup,
    *,
    decode_contexts: Sequence[int] = (),
    prefill_chunks: Sequence[tuple[int, int]] = (),
) -> PassResult:
    """One forward pass over a mix of decoding sequences and prefill chunks (continuous batching).

    ``decode_contexts`` holds, per decoding sequence, the tokens its new token attends to (itself included).
    ``prefill_chunks`` holds (chunk_tokens, tokens_already_cached_before_chunk) per prompt chunk. The step's
    ``time_s`` is the sum over operators plus communication and overhead. Memory is checked against the
    setup's KV budget (a warning instead of an error with ``ignore_memory``).
    """
    if not isinstance(setup, Setup):
        raise ValueError(f"setup must be a Setup (see make_setup), got {setup!r}")
    if isinstance(decode_contexts, str | bytes) or not isinstance(decode_contexts, Sequence):
        raise ValueError(f"decode_contexts must be a list of context lengths, got {decode_contexts!r}")
    if isinstance(prefill_chunks, str | bytes) or not isinstance(prefill_chunks, Sequence):
        raise ValueError(
            f"prefill_chunks must be a list of (chunk_tokens, cached) pairs, got {prefill_chunks!r}"
        )
    contexts, context_sum = _checked_contexts(decode_contexts)
    chunks = _checked_chunks(prefill_chunks)
    if not contexts and not chunks:
        raise ValueError("a step needs at least one token: give decode_contexts or prefill_chunks")
    model = setup.model
    window = model.sliding_window
    decode_tokens = len(contexts)
    if window is None:
        decode_keys = float(context_sum)
    else:
        decode_keys = float(sum(c if c < window else window for c in contexts))
    prefill_tokens = 0
    prefill_keys = 0.0
    prefill_kv_read = 0.0
    prefill_kv_written = 0.0
    prefix_tokens = 0.0
    held = decode_keys  # KV tokens held in the cache at the end of the step
    for tokens, cached in chunks:
        prefill_tokens += tokens
        prefill_keys += causal_keys(cached, tokens, window)
        reach = cached if window is None else min(cached, window)
        prefill_kv_read += reach + tokens
        prefill_kv_written += tokens if window is None else min(tokens, window)
        prefix_tokens += reach
        held += model.cached_tokens(cached + tokens)
    return _pass(
        setup,
        decode_tokens,
        decode_keys,
        prefill_tokens,
        len(chunks),
        prefill_keys,
        prefill_kv_read,
        prefill_kv_written,
        prefix_tokens,
        held,
        lambda: f"a step holding {held:,.0f} tokens of KV cache",
    )


def _pass(
    setup: Setup,
    decode_tokens: int,
    decode_keys: float,
    prefill_tokens: int,
    sequences: int,
    prefill_keys: float,
    prefill_kv_read: float,
    prefill_kv_written: float,
    prefix_tokens: float,
    held_kv_tokens: float,
    what: Callable[[], str],
) -> PassResult:
    """Check memory, then build the operators at the setup's level from a step's totals."""
    warnings = _memory_warnings(setup, held_kv_tokens, what)
    phase = "mixed" if decode_tokens and prefill_tokens else "decode" if decode_tokens else "prefill"
    build = _simple_operators if setup.level == "simple" else _refined_operators
    return build(
        setup,
        phase,
        decode_tokens,
        decode_keys,
        prefill_tokens,
        sequences,
        prefill_keys,
        prefill_kv_read,
        prefill_kv_written,
        prefix_tokens,
        warnings,
    )


def _memory_warnings(setup: Setup, kv_tokens: float, what: Callable[[], str]) -> tuple[str, ...]:
    return setup.memory.check(kv_tokens, what)


def _attention_operators(
    setup: Setup,
    decode_tokens: int,
    decode_keys: float,
    prefill_tokens: int,
    prefill_keys: float,
    prefill_kv_read: float,
    prefill_kv_written: float,
    prefix_tokens: float,
    activations: bool,
) -> tuple[list[Operator], float, float]:
    """Attention over the KV cache, one operator per phase present: (operators, FLOPs, KV bytes)."""
    s = setup.shape
    kv_token = setup.kv_bytes_per_token
    peak = setup.attention_peak_flops_per_s * setup.gpus
    bandwidth = setup.bandwidth_bytes_per_s * setup.gpus
    ops = []
    flops_total = kv_total = 0.0
    per_head = ACTIVATION_BYTES * s.layers * s.heads
    if decode_tokens:
        flops = 2.0 * s.layers * s.heads * (s.d_qk_decode + s.d_v_decode) * decode_keys
        kv = (decode_keys + decode_tokens) * kv_token
        act = decode_tokens * per_head * (s.d_qk_decode + s.d_v_decode) if activations else 0.0
        ops.append(make_operator("attention (decode)", "attention", flops, kv + act, peak, bandwidth))
        flops_total += flops
        kv_total += kv
    if prefill_tokens:
        flops = 2.0 * s.layers * s.heads * (s.d_qk_prefill + s.d_v_prefill) * prefill_keys
        flops += 2.0 * s.layers * s.mla_expand_params * prefix_tokens  # MLA re-expands a cached prefix
        kv = (prefill_kv_read + prefill_kv_written) * kv_token
        act = prefill_tokens * per_head * (s.d_qk_prefill + s.d_v_prefill) if activations else 0.0
        ops.append(make_operator("attention (prefill)", "attention", flops, kv + act, peak, bandwidth))
        flops_total += flops
        kv_total += kv
    return ops, flops_total, kv_total


def _simple_operators(
    setup: Setup,
    phase: str,
    decode_tokens: int,
    decode_keys: float,
    prefill_tokens: int,
    sequences: int,
    prefill_keys: float,
    prefill_kv_read: float,
    prefill_kv_written: float,
    prefix_tokens: float,
    warnings: tuple[str, ...],
) -> PassResult:
    model = setup.model
    tokens = decode_tokens + prefill_tokens
    peak = setup.matmul_peak_flops_per_s * setup.gpus
    bandwidth = setup.bandwidth_bytes_per_s * setup.gpus
    if model.moe is None:
        active = read = setup.params
    else:
        active = model.active_params
        touched = expected_experts_touched(model.moe.experts, model.moe.experts_per_token, tokens)
        read = model.params_with_experts(touched)
    matmul_flops = 2.0 * active * tokens
    weight_bytes = read * setup.bytes_per_value
    ops = [
        make_operator(
            "weights (2 FLOPs per active parameter per token)",
            "weights",
            matmul_flops,
            weight_bytes,
            peak,
            bandwidth,
        )
    ]
    attention_flops = kv_bytes = 0.0
    if setup.kv_traffic:
        attention, attention_flops, kv_bytes = _attention_operators(
            setup, decode_tokens, decode_keys, prefill_tokens, prefill_keys, prefill_kv_read,
            prefill_kv_written, prefix_tokens, activations=False,
        )  # fmt: skip
        ops += attention
    if setup.total_gpus > 1:
        warnings += (
            "the simple level leaves out communication between GPUs; level='refined' adds the all-reduces",
        )
    bound = sum(op.time_s for op in ops) + setup.step_overhead_s
    overhead = setup.step_overhead_s
    host = 0.0
    if setup.mode == "calibrated":
        ops, warnings, overhead, host = _calibrated(
            setup, ops, warnings, decode_tokens, prefill_tokens, tokens, decode_tokens + sequences
        )
    wait = max(0.0, host - sum(op.time_s for op in ops))
    overhead += wait
    time = sum(op.time_s for op in ops) + overhead
    return PassResult(
        phase, "simple", tokens, weight_bytes, kv_bytes, 0.0, matmul_flops, attention_flops, tuple(ops),
        warnings, 0.0, overhead, setup.ridge_point_flop_per_byte, time, setup.mode, bound, wait,
    )  # fmt: skip


def _refined_operators(
    setup: Setup,
    phase: str,
    decode_tokens: int,
    decode_keys: float,
    prefill_tokens: int,
    sequences: int,
    prefill_keys: float,
    prefill_kv_read: float,
    prefill_kv_written: float,
    prefix_tokens: float,
    warnings: tuple[str, ...],
) -> PassResult:
    s = setup.shape
    tp = setup.gpus
    dp_attention = setup.data_parallel_attention
    peak = setup.matmul_peak_flops_per_s * tp
    bandwidth = setup.bandwidth_bytes_per_s * tp
    b_w = setup.bytes_per_value
    b_a = ACTIVATION_BYTES
    tokens = decode_tokens + prefill_tokens
    logits = decode_tokens + sequences  # one logits row per decoding sequence and per prefill chunk
    h = s.hidden
    # Under tensor parallelism each GPU reads the whole input activation of a layer; with data-parallel
    # attention each GPU holds the attention weights and its own sequences.
    act_copies = 1 if dp_attention else tp
    attn_weight_copies = tp if dp_attention else 1
    L = s.layers
    ops: list[Operator] = []

    embedding_bytes = min(tokens, s.vocab) * h * b_a
    ops.append(
        make_operator(
            "embedding lookup", "elementwise", 0.0, embedding_bytes + tokens * h * b_a, peak, bandwidth
        )
    )
    ops.append(make_operator(
        "norms", "elementwise", 4.0 * s.norm_count * tokens * h,
        s.norm_count * (h * b_a * tp + 2.0 * tokens * h * b_a * act_copies), peak, bandwidth,
    ))  # fmt: skip
    qkv_w = L * s.qkv_params * b_w * attn_weight_copies
    ops.append(make_operator(
        "QKV projection", "weights", 2.0 * tokens * L * s.qkv_params,
        qkv_w + L * tokens * (h * act_copies + s.qkv_out_width) * b_a, peak, bandwidth,
    ))  # fmt: skip
    attention, attention_flops, kv_bytes = _attention_operators(
        setup, decode_tokens, decode_keys, prefill_tokens, prefill_keys, prefill_kv_read, prefill_kv_written,
        prefix_tokens, activations=True,
    )  # fmt: skip
    ops += attention
    o_w = L * s.o_params * b_w * attn_weight_copies
    ops.append(make_operator(
        "output projection", "weights", 2.0 * tokens * L * s.o_params,
        o_w + L * tokens * (s.heads * s.d_v_prefill + h * act_copies) * b_a, peak, bandwidth,
    ))  # fmt: skip
    weight_bytes = qkv_w + o_w
    matmul_flops = 2.0 * tokens * L * (s.qkv_params + s.o_params)
    if s.dense_layers:
        w = s.dense_layers * s.mlp_params * b_w
        flops = 2.0 * tokens * s.dense_layers * s.mlp_params
        ops.append(make_operator(
            "MLP", "weights", flops, w + s.dense_layers * tokens * (2.0 * h * tp + 3.0 * s.mlp_width) * b_a,
            peak, bandwidth,
        ))  # fmt: skip
        weight_bytes += w
        matmul_flops += flops
    if s.moe_layers:
        k = s.experts_per_token
        touched = expected_experts_touched(s.experts, k, tokens)
        router_w = s.moe_layers * s.router_params * b_a
        w = s.moe_layers * touched * s.expert_params * b_w + router_w
        router_flops = 2.0 * tokens * s.moe_layers * s.router_params
        flops = 2.0 * tokens * s.moe_layers * k * s.expert_params + router_flops
        act_in = s.moe_layers * tokens * h * act_copies * b_a
        act_pairs = s.moe_layers * tokens * k * (2.0 * h + 3.0 * s.expert_width) * b_a
        name = f"routed experts ({touched:.1f} of {s.experts} touched)"
        routed = make_operator(name, "weights", flops, w + act_in + act_pairs, peak, bandwidth)
        if setup.expert_parallel and setup.gpus > 1:
            routed = _busiest_gpu_time(
                setup, routed, tokens, w, (router_w, router_flops), act_in, act_pairs, peak, bandwidth
            )
        ops.append(routed)
        weight_bytes += w
        matmul_flops += flops
        if s.shared_experts:
            w = s.moe_layers * s.shared_experts * s.expert_params * b_w
            flops = 2.0 * tokens * s.moe_layers * s.shared_experts * s.expert_params
            act = s.moe_layers * tokens * s.shared_experts * (2.0 * h + 3.0 * s.expert_width) * b_a
            ops.append(make_operator("shared experts", "weights", flops, w + act, peak, bandwidth))
            weight_bytes += w
            matmul_flops += flops
    head_w = s.vocab * h * b_a
    head_flops = 2.0 * logits * s.vocab * h
    ops.append(make_operator(
        f"output layer ({logits} logits row{'s' if logits != 1 else ''})", "weights", head_flops,
        head_w + logits * (h * tp + s.vocab) * b_a, peak, bandwidth,
    ))  # fmt: skip
    weight_bytes += head_w
    matmul_flops += head_flops

    communication = _communication_operators(setup, tokens, logits)
    bound = sum(op.time_s for op in ops + communication) + setup.step_overhead_s
    overhead = setup.step_overhead_s
    host = 0.0
    if setup.mode == "calibrated":
        ops, warnings, overhead, host = _calibrated(
            setup, ops, warnings, decode_tokens, prefill_tokens, tokens, decode_tokens + sequences
        )
        communication = _communication_operators(setup, tokens, logits, calibrated=True)
    ops += communication
    wait = max(0.0, host - sum(op.time_s for op in ops))
    overhead += wait
    comm_time = sum(op.time_s for op in communication)
    time = sum(op.time_s for op in ops) + overhead
    if setup.expert_parallel or dp_attention:
        warnings += (
            "expert-parallel all-to-alls are approximated: balanced routing, no overlap with compute (the "
            "routed experts are timed on the busiest GPU under uniform random routing)",
        )
    if setup.pipeline_stages > 1:
        warnings += (
            "pipeline stages run one after another within a pass: this is one batch's latency; the "
            "throughput of several micro-batches in flight is not modelled",
        )
    return PassResult(
        phase, "refined", tokens, weight_bytes, kv_bytes, embedding_bytes, matmul_flops, attention_flops,
        tuple(ops), warnings, comm_time, overhead, setup.ridge_point_flop_per_byte, time, setup.mode, bound,
        wait,
    )  # fmt: skip


def _busiest_gpu_time(
    setup: Setup, routed: Operator, tokens: int, weight_bytes: float, router: tuple[float, float],
    act_in: float, act_pairs: float, peak: float, bandwidth: float,
) -> Operator:  # fmt: skip
    """The routed experts timed on the busiest GPU of expert parallelism (uniform random routing): its
    distinct experts set the expert weights it reads, its token-expert pairs their FLOPs and activations.
    The router (``router``: its weight bytes and FLOPs, in ``weight_bytes`` and the operator's FLOPs) is no
    expert and scales with neither: it did, and a Mixtral step of one token on 8 GPUs with 2 experts per
    token came out slower than with all 8 (its router counted four times over). The operator's FLOPs and
    bytes stay the totals over all GPUs; only its times change."""
    s = setup.shape
    by_experts, by_pairs = busiest_gpu_factors(s.experts, setup.gpus, s.experts_per_token, tokens)
    router_bytes, router_flops = router
    busiest_bytes = (weight_bytes - router_bytes) * by_experts + router_bytes + act_in + act_pairs * by_pairs
    busiest_flops = (routed.flops - router_flops) * by_pairs + router_flops
    busiest = make_operator(routed.name, routed.kind, busiest_flops, busiest_bytes, peak, bandwidth)
    name = f"{routed.name[:-1]}; busiest GPU {by_experts:.2f}x the mean experts, {by_pairs:.2f}x the tokens)"
    return busiest._replace(name=name, flops=routed.flops, bytes_moved=routed.bytes_moved)


def _calibrated(
    setup: Setup, ops: list[Operator], warnings: tuple[str, ...], decode_tokens: int, prefill_tokens: int,
    tokens: int, sequences: int,
) -> tuple[list[Operator], tuple[str, ...], float, float]:  # fmt: skip
    """The same operators timed by the calibrated curves (plus, at the refined level, the element-wise
    kernels the bound leaves out: activation, rotary embedding, residual adds), the extrapolation notes, the
    step overhead, and the host's launch floor: the kernels of an eager engine take at least the time its
    CPU needs to issue them, so the caller adds the GPU's wait, ``max(0, floor - kernels)``, to the
    overhead (:func:`calculators.calibration.host_floor_s`)."""
    s = setup.shape
    touched = expected_experts_touched(s.experts, s.experts_per_token, tokens) if s.experts else 0.0
    step = calibration.StepShape(
        tokens, decode_tokens, prefill_tokens, setup.gpus, s.layers, s.heads, s.dense_layers, s.moe_layers,
        s.experts_per_token, touched, setup.data_parallel_attention,
    )  # fmt: skip
    peak = setup.gpu.peak_flops_per_s(setup.arithmetic)
    attention_peak = setup.gpu.peak_flops_per_s("bf16")
    bandwidth = setup.gpu.memory_bandwidth_bytes_per_s
    like = calibration.measured_like(setup.gpu.key, setup.gpu.peak_flops_per_s("bf16") / bandwidth)
    out = []
    for op in ops:
        if op.kind == "communication":
            out.append(op)
            continue
        t = calibration.operator_time_s(
            op.name, op.kind, op.flops, op.bytes_moved, step,
            attention_peak if op.kind == "attention" else peak, bandwidth, like, setup.calibration,
        )  # fmt: skip
        if setup.expert_parallel and op.name.startswith("routed experts") and setup.gpus > 1:
            # The busiest GPU's share, as in the bound: the balanced time scaled by the same ratio.
            balanced = make_operator(
                op.name, op.kind, op.flops, op.bytes_moved, setup.matmul_peak_flops_per_s * setup.gpus,
                setup.bandwidth_bytes_per_s * setup.gpus,
            )  # fmt: skip
            t *= op.time_s / balanced.time_s if balanced.time_s else 1.0
        out.append(op._replace(time_s=t))
    if setup.level == "refined":
        b_a = ACTIVATION_BYTES
        widths = s.dense_layers * 3.0 * s.mlp_width + s.moe_layers * 3.0 * s.expert_width * (
            s.experts_per_token + s.shared_experts
        )
        moved = tokens * b_a * (widths + s.layers * (2.0 * s.qkv_out_width + 6.0 * s.hidden * setup.gpus))
        t = calibration.operator_time_s(
            "activation, rotary embedding and residual adds", "elementwise", 0.0, moved, step, peak,
            bandwidth, like, setup.calibration,
        )  # fmt: skip
        out.append(make_operator(
            "activation, rotary embedding and residual adds (calibrated only)", "elementwise", 0.0, moved,
            peak * setup.gpus, bandwidth * setup.gpus,
        )._replace(time_s=t))  # fmt: skip
    link = setup.link_for(setup.total_gpus).key if setup.total_gpus > 1 else None
    notes = calibration.provenance(setup.gpu.key, like, setup.arithmetic, link, setup.calibration)
    overhead = setup.step_overhead_s + calibration.step_overhead_s(setup.calibration, sequences)
    return out, warnings + notes, overhead, calibration.host_floor_s(setup.calibration, like, s.layers)


def _calibrated_link(link: Interconnect, setup: Setup) -> Interconnect:
    latency, hop, bandwidth = calibration.collective_latency_and_bandwidth(
        link.key, link.latency_s, link.hop_latency_s, link.bandwidth_bytes_per_s, setup.calibration
    )
    return replace(link, bandwidth_bytes_per_s=bandwidth, latency_s=latency, hop_latency_s=hop)


def _collective_link(
    setup: Setup, gpus: int, calibrated: bool, *, all_reduce: bool = False
) -> tuple[Interconnect, str]:
    """The link a collective over ``gpus`` GPUs runs on (an all-reduce's, or a send's and an all-to-all's),
    with its latencies and bandwidth in the setup's mode, and the all-reduce algorithm of that mode ("auto":
    the faster of ring and tree)."""
    link = setup.all_reduce_link_for(gpus) if all_reduce else setup.link_for(gpus)
    if not calibrated:
        return link, "auto"
    return _calibrated_link(link, setup), calibration.ALL_REDUCE_ALGORITHM[setup.calibration]


def tensor_parallel_all_reduce(
    setup: Setup, tokens: int = 1, calibrated: bool | None = None
) -> tuple[float, str]:
    """(seconds, algorithm) of one tensor-parallel all-reduce of ``tokens`` tokens' activations (``tokens`` x
    hidden x 2 bytes on each GPU), calibrated or at the link's spec (None: the setup's mode): the all-reduce a
    layer pays twice per step, as the step's communication operator counts it.
    """
    tokens = count("tokens", tokens, minimum=0)
    buffer = tokens * setup.shape.hidden * ACTIVATION_BYTES
    if setup.gpus == 1:
        return 0.0, "none"
    if calibrated is None:
        calibrated = setup.mode == "calibrated"
    link, algorithm = _collective_link(setup, setup.gpus, calibrated, all_reduce=True)
    eff = setup.communication_efficiency
    if algorithm == "auto":
        algorithm = all_reduce_algorithm(buffer, setup.gpus, link, eff)
    return all_reduce_time_s(buffer, setup.gpus, link, eff, algorithm), algorithm


def _communication_operators(
    setup: Setup, tokens: int, logits: int, *, calibrated: bool = False
) -> list[Operator]:
    s = setup.shape
    tp = setup.gpus
    link, _ = _collective_link(setup, tp, calibrated)
    across_link, _ = _collective_link(setup, setup.total_gpus, calibrated)
    inside_link, _ = _collective_link(setup, 1, calibrated)
    eff = setup.communication_efficiency
    h = s.hidden
    buffer = tokens * h * ACTIVATION_BYTES  # one layer's activations, the whole buffer on each GPU
    ops = []
    if tp > 1:
        moe_by_all_to_all = s.moe_layers if (setup.expert_parallel or setup.data_parallel_attention) else 0
        # After the embedding, after attention (unless data-parallel) and after each MLP or MoE layer
        # that is not exchanged by all-to-all.
        reduces = 1 + (0 if setup.data_parallel_attention else s.layers) + s.layers - moe_by_all_to_all
        if reduces:
            each, _ = tensor_parallel_all_reduce(setup, tokens, calibrated)
            ops.append(communication_operator(
                f"tensor-parallel all-reduces ({reduces} x {buffer / 1e6:,.2f} MB)",
                buffer * reduces,
                each * reduces,
            ))  # fmt: skip
        gather = logits * s.vocab * ACTIVATION_BYTES
        ops.append(communication_operator(
            "output-layer logits all-gather", gather, all_to_all_time_s(gather, tp, link, eff),
        ))  # fmt: skip
        if moe_by_all_to_all:
            # Dispatch and combine (calculators/expert_parallel.py): T k h values each, timed on the GPU
            # receiving the most token-expert pairs (the busiest under uniform routing with expert
            # parallelism; the mean T k / G when the experts are split by tensor parallelism instead).
            k = s.experts_per_token
            pairs = busiest_gpu_pairs(s.experts, tp, k, tokens) if setup.expert_parallel else tokens * k / tp
            nvlink = _calibrated_link(setup.link, setup) if calibrated else setup.link
            each = expert_all_to_all_time_s(
                pairs, h, ACTIVATION_BYTES, tp, setup.gpu.domain_gpus, nvlink, link, eff
            )
            moved = dispatch_bytes(tokens, k, h, ACTIVATION_BYTES) / tp  # each GPU's share, as before
            ops.append(communication_operator(
                f"expert all-to-alls (2 x {moe_by_all_to_all}, approximate)", 2 * moe_by_all_to_all * moved,
                2 * moe_by_all_to_all * each,
            ))  # fmt: skip
    if setup.pipeline_stages > 1:
        sends = setup.pipeline_stages - 1
        across = setup.stage_boundaries_across_servers
        ops.append(communication_operator(
            f"pipeline sends ({sends} stage boundaries, {across} across servers)",
            buffer * sends,
            across * send_time_s(buffer, across_link, eff)
            + (sends - across) * send_time_s(buffer, inside_link, eff),
        ))  # fmt: skip
    return ops


def prefill(setup: Setup, prompt_tokens: int, *, batch: int = 1) -> PassResult:
    """One prefill pass over ``batch`` prompts of ``prompt_tokens`` tokens each (nothing cached before).

    Every prompt token is known in advance, so all of them go through the weights together: the weights are
    read once and used ``batch x prompt_tokens`` times. Attention is causal.
    """
    prompt = count("prompt_tokens", prompt_tokens)
    batch = count("batch", batch)
    return _remembered_pass("prefill", setup, (prompt, batch), lambda: _prefill(setup, prompt, batch))


def _prefill(setup: Setup, prompt: int, batch: int) -> PassResult:
    window = setup.model.sliding_window
    written = prompt if window is None else min(prompt, window)
    return _pass(
        setup,
        0,
        0.0,
        batch * prompt,
        batch,
        batch * causal_keys(0, prompt, window),
        float(batch * prompt),
        float(batch * written),
        0.0,
        float(batch * setup.model.cached_tokens(prompt)),
        lambda: f"batch {batch} at a context of {prompt:,} tokens",
    )


def decode_step(setup: Setup, *, batch: int = 1, context_tokens: int = 1) -> PassResult:
    """One decode step: each of ``batch`` sequences produces one token, attending ``context_tokens`` tokens.

    ``context_tokens`` counts the tokens the new token attends to, itself included.
    """
    batch = count("batch", batch)
    context = count("context_tokens", context_tokens)
    return _remembered_pass("decode", setup, (batch, context), lambda: _decode_step(setup, batch, context))


def _decode_step(setup: Setup, batch: int, context: int) -> PassResult:
    keys = float(batch * setup.model.cached_tokens(context))
    return _pass(
        setup, batch, keys, 0, 0, 0.0, 0.0, 0.0, 0.0, keys,
        lambda: f"batch {batch} at a context of {context:,} tokens",
    )  # fmt: skip
