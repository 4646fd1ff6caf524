"""GPU memory as a serving engine sees it: what the weights, the runtime and the KV cache get.

Engines do not hand the KV cache "80 GB minus the weights". vLLM, for example, takes the memory the device
reports, keeps ``gpu_memory_utilization`` of it (0.9 by default), and from that subtracts the weights, the
peak activation workspace of its largest step (``max_num_batched_tokens`` tokens) and memory outside
PyTorch (the CUDA context, NCCL buffers, CUDA graphs). What is left is the KV-cache budget. This module
does the same in closed form:

- device bytes: ``GPU.usable_memory_bytes`` (the driver's total, binary: an H100 SXM's "80 GB" shows as
  81,559 MiB = 85.5e9 bytes; a preset without a reported figure uses its decimal spec figure);
- budget per GPU = device bytes x ``memory_utilization``;
- runtime reserve per GPU = ``runtime_reserve_bytes`` (2 GiB by default: CUDA context about 0.5 GiB,
  NCCL and CUDA graphs the rest; vLLM logs show 1-3 GiB for an 8B-70B model);
- activation workspace per GPU: the step's hidden states and MLP intermediates for ``max_batched_tokens``
  tokens, BF16, the MLP part split over the tensor-parallel GPUs;
- KV budget = what remains, over all GPUs; the largest batch and the longest context follow by division,
  never by a search.

``ignore_memory`` turns "does not fit" into a warning, for what-ifs on hardware that is too small.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from calculators.hardware import GPU
from calculators.models import Model
from calculators.operators import ACTIVATION_BYTES
from calculators.validation import MAX_COUNT, count

GIB = 2**30


class Setup(Protocol):
    """What a memory plan reads from a setup (:class:`calculators.passes.Setup` has all of it).

    Named here, below :mod:`calculators.passes`, so that the dependency runs one way: passes builds a
    setup's plan with this module, and this module never imports passes back.
    """

    @property
    def model(self) -> Model: ...
    @property
    def gpu(self) -> GPU: ...
    @property
    def gpus(self) -> int: ...
    @property
    def pipeline_stages(self) -> int: ...
    @property
    def data_parallel_attention(self) -> bool: ...
    @property
    def memory_utilization(self) -> float: ...
    @property
    def runtime_reserve_bytes(self) -> float: ...
    @property
    def max_batched_tokens(self) -> int: ...
    @property
    def ignore_memory(self) -> bool: ...
    @property
    def weight_bytes(self) -> float: ...
    @property
    def attention_weight_bytes(self) -> float: ...
    @property
    def kv_bytes_per_token(self) -> float: ...


@dataclass(frozen=True)
class MemoryPlan:
    """Where each GPU's memory goes, and the KV-cache budget left over all GPUs."""

    gpus: int  # all GPUs of the setup (tensor-parallel x pipeline stages)
    gpu_name: str  # for messages
    device_bytes: float  # memory one GPU reports, bytes
    memory_utilization: float  # share of it the engine may use (vLLM's 0.9)
    weight_bytes_per_gpu: float  # the weights one GPU holds, bytes
    runtime_reserve_bytes: float  # CUDA context, NCCL, CUDA graphs, per GPU, bytes
    activation_workspace_bytes: float  # peak activations of the largest step, per GPU, bytes
    kv_bytes_per_token: float  # KV cache of one token of one sequence over all GPUs, copies included
    cached_tokens_cap: int | None  # a sliding window: no sequence caches more tokens than this
    ignore_memory: bool  # warn instead of refusing when something does not fit

    @property
    def budget_bytes_per_gpu(self) -> float:
        """Memory the engine allows itself on one GPU: device bytes x utilisation."""
        return self.device_bytes * self.memory_utilization

    @property
    def kv_budget_bytes(self) -> float:
        """Bytes left for the KV cache over all GPUs (negative when the weights alone do not fit)."""
        per_gpu = (
            self.budget_bytes_per_gpu
            - self.weight_bytes_per_gpu
            - self.runtime_reserve_bytes
            - self.activation_workspace_bytes
        )
        return per_gpu * self.gpus

    @property
    def kv_tokens(self) -> float:
        """Tokens of KV cache that fit (summed over sequences); infinite when the cache costs nothing."""
        if self.kv_budget_bytes < 0:
            return 0.0
        if self.kv_bytes_per_token == 0:
            return math.inf
        return self.kv_budget_bytes / self.kv_bytes_per_token

    def cached_tokens(self, context: int) -> int:
        """Tokens one sequence of ``context`` tokens keeps in cache: all of them, or a sliding window's."""
        return context if self.cached_tokens_cap is None else min(context, self.cached_tokens_cap)

    def max_sequences(self, context_tokens: int) -> int:
        """The largest number of sequences of ``context_tokens`` tokens whose KV cache fits (0 if none)."""
        context = count("context_tokens", context_tokens)
        fitting = self.kv_tokens / self.cached_tokens(context)
        return MAX_COUNT if fitting >= MAX_COUNT else int(fitting)

    def max_context(self, batch: int = 1) -> int:
        """The longest context each of ``batch`` sequences can reach (at most the largest count accepted)."""
        batch = count("batch", batch)
        per_sequence = self.kv_tokens / batch
        if self.cached_tokens_cap is not None and per_sequence >= self.cached_tokens_cap:
            return MAX_COUNT  # a sliding window caches at most the window, so any context fits
        return MAX_COUNT if per_sequence >= MAX_COUNT else int(per_sequence)

    def check(self, kv_tokens: float, what: str | Callable[[], str] = "this") -> tuple[str, ...]:
        """Nothing if ``kv_tokens`` of cache fit; else raise ``ValueError`` (or warn with ``ignore_memory``).

        ``what`` names the thing that does not fit (a callable is called only then, to keep the check fast).
        """
        kv_bytes = kv_tokens * self.kv_bytes_per_token
        if kv_bytes <= self.kv_budget_bytes:
            return ()
        per_gpu = kv_bytes / self.gpus
        name = what() if callable(what) else what
        message = (
            f"{name} does not fit: per GPU it needs weights {self.weight_bytes_per_gpu / 1e9:,.1f} GB + KV "
            f"cache {per_gpu / 1e9:,.1f} GB + activation workspace "
            f"{self.activation_workspace_bytes / 1e9:,.1f} GB + runtime reserve "
            f"{self.runtime_reserve_bytes / 1e9:,.1f} GB, more than {self.memory_utilization:.0%} of the "
            f"{self.device_bytes / 1e9:,.1f} GB each of {self.gpus} x {self.gpu_name} reports; use a smaller "
            "batch or context, more GPUs (gpus, pipeline_stages), a smaller weight_format or "
            "kv_cache_format, a higher memory_utilization, or ignore_memory=True for a what-if"
        )
        if self.ignore_memory:
            return (f"ignored memory: {message}",)
        raise ValueError(message)


def activation_workspace_bytes(setup: Setup) -> float:
    """Peak activations of a step of ``max_batched_tokens`` tokens on one GPU, bytes (BF16).

    The residual stream and a normed copy (2 x hidden), the QKV output, and the MLP's gate/up output and
    activated intermediate (3 x width), split over the tensor-parallel GPUs. An MoE's width is that of the
    experts each token runs (k routed + shared).
    """
    model = setup.model
    moe = model.moe
    width = (
        model.mlp_width
        if moe is None
        else max(
            model.mlp_width if moe.dense_layers else 0,
            (moe.experts_per_token + moe.shared_experts) * moe.expert_mlp_width,
        )
    )
    qkv = (model.attention_heads + 2 * model.kv_heads) * model.head_dim
    per_token = 2 * model.hidden_size + (qkv + 3 * width) / setup.gpus
    return setup.max_batched_tokens * per_token * ACTIVATION_BYTES


def memory_plan(setup: Setup) -> MemoryPlan:
    """Where the setup's memory goes (see the module docstring for each term)."""
    tp, stages = setup.gpus, setup.pipeline_stages
    weights = setup.weight_bytes
    if setup.data_parallel_attention and setup.model.shapes_known:
        attention = setup.attention_weight_bytes
        per_gpu = (weights - attention) / (tp * stages) + attention / stages
    else:
        per_gpu = weights / (tp * stages)
    return MemoryPlan(
        gpus=tp * stages,
        gpu_name=setup.gpu.name,
        device_bytes=setup.gpu.usable_memory_bytes,
        memory_utilization=setup.memory_utilization,
        weight_bytes_per_gpu=per_gpu,
        runtime_reserve_bytes=setup.runtime_reserve_bytes,
        activation_workspace_bytes=activation_workspace_bytes(setup),
        kv_bytes_per_token=setup.kv_bytes_per_token,
        cached_tokens_cap=setup.model.sliding_window,
        ignore_memory=setup.ignore_memory,
    )
