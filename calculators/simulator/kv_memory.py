"""KV-cache memory: how many tokens of cache fit, and how they are handed out.

Two ways to hand out memory, as in the vLLM paper (Kwon et al., SOSP 2023, "Efficient Memory Management for
Large Language Model Serving with PagedAttention"):

- ``paged``: fixed-size blocks of ``block_tokens`` tokens, taken one at a time as a sequence grows. The only
  waste is the unfilled part of each sequence's last block.
- ``contiguous``: one slab per sequence, reserved at admission, as engines before vLLM did. Everything a
  sequence does not end up using is waste. How big a slab is follows the vLLM paper's three Orca baselines
  (``reserve``): ``max``, the longest sequence the engine accepts (``max_sequence_tokens``); ``pow2``, the
  prompt plus the output rounded up to a power of two (at most 2x over); ``oracle``, exactly the prompt plus
  the output, as if the engine knew the output length in advance (the best a contiguous allocator can do).

The budget is the memory of the setup's GPUs times ``memory_fraction`` (vLLM's ``gpu_memory_utilization``,
0.9 by default) less the weights, divided by the KV-cache bytes of one token; or ``capacity_tokens`` directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.passes import Setup
from calculators.validation import choice, count, fraction

KINDS = ("paged", "contiguous")
RESERVES = ("max", "pow2", "oracle")


@dataclass(frozen=True)
class MemoryConfig:
    """How KV memory is sized and allocated.

    ``capacity_tokens`` overrides the budget from the setup (useful for what-ifs and for a model given only by
    its size, whose cache size is unknown). ``max_sequence_tokens`` is what the contiguous baseline reserves
    per sequence; by default, the longest prompt plus output in the workload. ``watermark`` is the share of
    blocks kept free when admitting new work, so running sequences can grow without being preempted at once
    (vLLM keeps 1%).
    """

    kind: str = "paged"
    block_tokens: int = 16
    memory_fraction: float = 0.9
    capacity_tokens: int | None = None
    max_sequence_tokens: int | None = None
    watermark: float = 0.01
    reserve: str = "max"

    def __post_init__(self) -> None:
        choice("memory kind", self.kind, KINDS)
        choice("contiguous reserve", self.reserve, RESERVES)
        count("block_tokens", self.block_tokens)
        fraction("memory_fraction", self.memory_fraction)
        if self.capacity_tokens is not None:
            count("capacity_tokens", self.capacity_tokens)
        if self.max_sequence_tokens is not None:
            count("max_sequence_tokens", self.max_sequence_tokens)
        if not 0 <= self.watermark < 1:
            raise ValueError(f"watermark must be a share of the blocks in [0, 1), got {self.watermark!r}")

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "block_tokens": self.block_tokens,
            "memory_fraction": self.memory_fraction,
            "capacity_tokens": self.capacity_tokens,
            "max_sequence_tokens": self.max_sequence_tokens,
            "watermark": self.watermark,
            "reserve": self.reserve,
        }


def kv_bytes_per_token(setup: Setup) -> float:
    """KV-cache bytes one token of context takes over all the setup's GPUs (copies included)."""
    return setup.kv_cache_bytes(1, 1)


def kv_capacity_tokens(setup: Setup, config: MemoryConfig) -> int:
    """Tokens of KV cache the setup can hold under ``config``."""
    if config.capacity_tokens is not None:
        return config.capacity_tokens
    per_token = kv_bytes_per_token(setup)
    if per_token <= 0:
        raise ValueError(
            f"the KV-cache size of {setup.model.name!r} is unknown (it is given only by its size); give "
            "MemoryConfig(capacity_tokens=...) or use a model preset"
        )
    free = setup.memory_capacity_bytes * config.memory_fraction - setup.weight_bytes
    tokens = int(free // per_token)
    if tokens < 1:
        raise ValueError(
            f"the weights of {setup.model.name} ({setup.weight_bytes / 1e9:,.1f} GB) leave no room for a KV "
            f"cache in {config.memory_fraction:.0%} of {setup.gpus} x {setup.gpu.name} "
            f"({setup.memory_capacity_bytes / 1e9:,.0f} GB); use more GPUs, fp8, or a smaller model"
        )
    return tokens


class KVMemory:
    """The pool of KV slots of one engine instance.

    A slot is a block of ``block_tokens`` tokens when paged and a single token when contiguous (a slab is a
    run of slots reserved at once). Counts only: which physical block holds what does not change any time.
    """

    __slots__ = ("config", "free", "paged", "reserve", "reserve_tokens", "total", "unit", "watermark_slots")

    def __init__(self, config: MemoryConfig, capacity_tokens: int, reserve_tokens: int) -> None:
        self.config = config
        self.paged = config.kind == "paged"
        self.unit = config.block_tokens if self.paged else 1
        self.total = capacity_tokens // self.unit
        if self.total < 1:
            raise ValueError(
                f"a KV cache of {capacity_tokens:,} tokens holds no block of {self.unit} tokens; "
                "give more capacity_tokens or smaller block_tokens"
            )
        self.free = self.total
        self.reserve_tokens = reserve_tokens
        self.reserve = config.reserve
        self.watermark_slots = int(config.watermark * self.total)

    def slots_for(self, tokens: int, prompt: int, output: int) -> int:
        """Slots a sequence of ``prompt`` + ``output`` tokens needs to hold ``tokens`` tokens (paged), or
        its whole slab (contiguous).
        """
        if self.paged:
            return -(-tokens // self.unit)
        if self.reserve == "max":
            return self.reserve_tokens
        if self.reserve == "oracle":
            return prompt + output
        return prompt + (1 << (output - 1).bit_length())

    @property
    def used(self) -> int:
        return self.total - self.free

    @property
    def used_tokens(self) -> int:
        """Tokens of cache handed out (reserved), whether or not they hold a token yet."""
        return (self.total - self.free) * self.unit
