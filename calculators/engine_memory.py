"""KV-cache blocks as an engine counts them at start-up, beside the cost model's closed-form budget.

:mod:`calculators.memory` gives the KV budget the lessons quote: device memory x utilisation, less the
weights, a 2 GiB runtime reserve and the activations of an 8,192-token step. An engine arrives at its
number differently: vLLM (before its V1 engine) loads the weights, runs one dummy forward pass of
``max_num_batched_tokens`` tokens spread over ``max_num_seqs`` sequences, measures the peak, and hands the
rest of ``total x gpu_memory_utilization`` to the cache, printing ``# GPU blocks: N`` (V1 prints ``GPU KV
cache size: N tokens``, which is N blocks x the block size). Without chunked prefill
``max_num_batched_tokens`` is ``max_model_len``, so a long ``max_model_len`` costs KV blocks: the dummy pass
of a 29,000-token prompt holds gigabytes of activations. This module models that measurement:

- total: the memory the engine reads from the driver (``total_memory_bytes``; by default the GPU preset's
  reported total);
- weights per GPU, as :func:`calculators.memory.memory_plan` splits them;
- activation peak of the dummy pass: :func:`calculators.memory.activation_workspace_bytes` at
  ``max_num_batched_tokens`` (the hidden states, QKV and MLP intermediates, BF16), plus the sampler's FP32
  logits for ``max_num_seqs`` sequences (``max_num_seqs x vocab x 4`` bytes);
- memory outside PyTorch's allocator (CUDA context, cuBLAS workspaces): :data:`VLLM_NON_TORCH_BYTES`, a
  constant fitted on one log;
- blocks per GPU = what is left // (``block_size`` x the KV bytes of one token on one GPU).

The table in tests/calculators/test_engine_memory.py compares the result with the
counts engines printed, each with its URL: fitted rows apart from held-out ones, misses stated.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from calculators.memory import GIB, activation_workspace_bytes, memory_plan
from calculators.passes import Setup
from calculators.validation import count, fraction, non_negative_number

SAMPLER_LOGIT_BYTES = 4  # vLLM's sampler holds the logits in FP32
DEFAULT_MAX_NUM_SEQS = 256  # vLLM's default max_num_seqs: the dummy pass's sequence count
DEFAULT_BLOCK_SIZE = 16  # vLLM's default block size, tokens

# Memory outside PyTorch's allocator, per GPU, fitted on one log (vLLM issue #10517, Llama-3.1-8B on an
# RTX 3090 at max_model_len 20,000: 1,952 blocks; that log prints non_torch_memory=0.35GiB, of which the
# sampler's 0.12 GiB of logits is counted separately here). Single-GPU only: with tensor parallelism
# NCCL and all-reduce buffers add about as much again per GPU (vLLM PR #10511: 1.79 GiB at TP=1, 3.58 GiB
# at TP=2 on an 80 GB card), which this constant does not model.
VLLM_NON_TORCH_BYTES = 0.2 * GIB


@dataclass(frozen=True)
class EngineKV:
    """One engine's start-up memory account for one GPU, and the KV blocks it prints."""

    total_bytes: float  # what the driver reports for one GPU
    budget_bytes: float  # total x gpu_memory_utilization
    weight_bytes: float  # weights one GPU holds
    activation_bytes: float  # peak of the profiling pass: layer activations and sampler logits
    non_torch_bytes: float  # CUDA context and workspaces outside PyTorch's allocator
    block_bytes: float  # one block of block_size tokens on one GPU
    block_size: int  # tokens per block

    @property
    def kv_bytes(self) -> float:
        """Bytes one GPU gives the KV cache (negative when the rest does not fit)."""
        return self.budget_bytes - self.weight_bytes - self.activation_bytes - self.non_torch_bytes

    @property
    def blocks(self) -> int:
        """The engine's ``# GPU blocks`` (per GPU: every GPU holds its heads of the same blocks)."""
        return max(0, int(self.kv_bytes // self.block_bytes))

    @property
    def tokens(self) -> int:
        """The engine's ``GPU KV cache size: N tokens``: blocks x block size."""
        return self.blocks * self.block_size


def engine_kv_capacity(
    setup: Setup,
    engine: str = "vllm",
    *,
    gpu_memory_utilization: float | None = None,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int = DEFAULT_MAX_NUM_SEQS,
    block_size: int = DEFAULT_BLOCK_SIZE,
    total_memory_bytes: float | None = None,
) -> EngineKV:
    """KV blocks vLLM's profiling run leaves for ``setup`` (see the module docstring for each term).

    ``gpu_memory_utilization`` and ``max_num_batched_tokens`` default to the setup's
    ``memory_utilization`` and ``max_batched_tokens``; give ``max_num_batched_tokens=max_model_len`` for
    an engine without chunked prefill. ``total_memory_bytes`` is the total the engine's log prints, where
    it differs from the GPU preset's.
    """
    if engine != "vllm":
        raise ValueError(f"engine must be 'vllm' (the only engine modelled so far), got {engine!r}")
    if not setup.model.shapes_known:
        raise ValueError(
            f"{setup.model.name!r} is given only by its size, so its KV bytes per token are unknown; "
            "use a model preset"
        )
    utilization = fraction(
        "gpu_memory_utilization",
        setup.memory_utilization if gpu_memory_utilization is None else gpu_memory_utilization,
    )
    tokens = count(
        "max_num_batched_tokens",
        setup.max_batched_tokens if max_num_batched_tokens is None else max_num_batched_tokens,
    )
    sequences = count("max_num_seqs", max_num_seqs)
    block = count("block_size", block_size)
    total = (
        setup.gpu.usable_memory_bytes
        if total_memory_bytes is None
        else non_negative_number("total_memory_bytes", total_memory_bytes)
    )
    plan = memory_plan(setup)
    layers = activation_workspace_bytes(replace(setup, max_batched_tokens=tokens))
    logits = sequences * setup.model.vocab_size * SAMPLER_LOGIT_BYTES
    return EngineKV(
        total_bytes=total,
        budget_bytes=total * utilization,
        weight_bytes=plan.weight_bytes_per_gpu,
        activation_bytes=layers + logits,
        non_torch_bytes=VLLM_NON_TORCH_BYTES,
        block_bytes=block * plan.kv_bytes_per_token / plan.gpus,
        block_size=block,
    )
