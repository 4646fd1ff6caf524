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

The budget is the cost model's (:mod:`calculators.memory`): the memory the devices report times the setup's
``memory_utilization`` (vLLM's ``gpu_memory_utilization``, 0.9 by default), less the weights, the runtime
reserve and the activation workspace, divided by the KV-cache bytes of one token; or ``capacity_tokens``.

When paged blocks run out, a running sequence is preempted, in one of the two ways of the vLLM paper (section
4.5; its section 7.3 compares them): ``recompute`` drops its cache and prefills its prompt and the tokens it
wrote again when it resumes (vLLM's default, and V1's only way); ``swap`` copies its blocks to CPU memory over
the host link (PCIe) and back when it resumes, each copy adding its transfer time to the step that makes it,
within a CPU swap space of ``swap_space_gib`` per GPU (vLLM's ``swap_space``, 4 GiB by default). vLLM's V0
engine aborted when that space was full; here the sequence is recomputed instead and counted, so the run
still ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators.interconnect import INTERCONNECTS, Interconnect, get_interconnect, send_time_s
from calculators.memory import MemoryPlan
from calculators.passes import Setup
from calculators.validation import choice, count, non_negative_number

KINDS = ("paged", "contiguous")
RESERVES = ("max", "pow2", "oracle")
PREEMPTIONS = ("recompute", "swap")
DEFAULT_SWAP_SPACE_GIB = 4.0  # vLLM's CacheConfig.swap_space: CPU swap space per GPU, GiB
MAX_SWAP_SPACE_GIB = 65536.0  # 64 TiB per GPU: more host memory than any server has
# H100, H200 and B200 servers reach host memory over PCIe 5.0 x16; an A100 server over PCIe 4.0 (give pcie4).
DEFAULT_SWAP_LINK = "pcie5"


@dataclass(frozen=True)
class MemoryConfig:
    """How KV memory is sized and allocated.

    ``capacity_tokens`` overrides the budget from the setup (useful for what-ifs and for a model given only by
    its size, whose cache size is unknown). ``max_sequence_tokens`` is what the contiguous baseline reserves
    per sequence; by default, the longest prompt plus output in the workload. ``watermark`` is the share of
    blocks kept free when admitting new work, so running sequences can grow without being preempted at once
    (vLLM keeps 1%). ``preemption`` is how a sequence gives its blocks back when they run out ("recompute"
    or "swap"); a swap goes over ``swap_link`` (an interconnect preset) into ``swap_space_gib`` of CPU memory
    per GPU.
    """

    kind: str = "paged"
    block_tokens: int = 16
    capacity_tokens: int | None = None
    max_sequence_tokens: int | None = None
    watermark: float = 0.01
    reserve: str = "max"
    preemption: str = "recompute"
    swap_space_gib: float = DEFAULT_SWAP_SPACE_GIB
    swap_link: str = DEFAULT_SWAP_LINK

    def __post_init__(self) -> None:
        choice("memory kind", self.kind, KINDS)
        choice("contiguous reserve", self.reserve, RESERVES)
        choice("preemption", self.preemption, PREEMPTIONS)
        non_negative_number("swap_space_gib", self.swap_space_gib, MAX_SWAP_SPACE_GIB)
        choice("swap_link", self.swap_link, INTERCONNECTS)
        count("block_tokens", self.block_tokens)
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
            "capacity_tokens": self.capacity_tokens,
            "max_sequence_tokens": self.max_sequence_tokens,
            "watermark": self.watermark,
            "reserve": self.reserve,
            "preemption": self.preemption,
            "swap_space_gib": self.swap_space_gib,
            "swap_link": self.swap_link,
        }


def kv_capacity_tokens(setup: Setup, config: MemoryConfig, plan: MemoryPlan | None = None) -> int:
    """Tokens of KV cache one replica of the setup can hold under ``config``; ``plan`` is its memory when
    something besides the target holds some (a drafter: :func:`calculators.speculative.drafter_memory_plan`,
    whose token counts both models' caches)."""
    if config.capacity_tokens is not None:
        return config.capacity_tokens
    plan = setup.memory if plan is None else plan
    tokens = plan.kv_tokens
    if math.isinf(tokens):
        raise ValueError(
            f"the KV-cache size of {setup.model.name!r} is unknown (it is given only by its size); give "
            "MemoryConfig(capacity_tokens=...) or use a model preset"
        )
    if tokens < 1:
        plan.check(1.0, f"a KV cache for {setup.model.name}")  # raises the cost model's own explanation
        raise ValueError(f"{setup.model.name} leaves no room for a KV cache; give capacity_tokens")
    return int(tokens)


def cache_send_time_s(setup: Setup, tokens: int, link: Interconnect, lanes: int | None = None) -> float:
    """Seconds to move ``tokens`` tokens of one sequence's KV cache over ``link``: every GPU of the setup
    sends its own share over its own link at once (the handoff of disaggregated serving, a swap to CPU), or
    the cache is split over ``lanes`` links (a prefill pool of another tensor-parallel degree than the
    decode pool: as many as the smaller side has GPUs)."""
    share = setup.kv_cache_bytes(1, tokens) / (setup.total_gpus if lanes is None else lanes)
    return send_time_s(share, link, setup.communication_efficiency)


class SwapSpace:
    """The CPU memory one instance swaps preempted sequences' blocks into, and what a copy costs.

    Counts blocks, as :class:`KVMemory` does; ``seconds(tokens)`` is one copy's time over the host link.
    """

    __slots__ = ("free", "link", "setup", "total")

    def __init__(self, setup: Setup, config: MemoryConfig) -> None:
        per_token = setup.kv_bytes_per_token / setup.total_gpus  # bytes of one token's cache on each GPU
        if not per_token > 0:
            raise ValueError(
                f"the KV-cache size of {setup.model.name!r} is unknown (it is given only by its size), so "
                "a swap's size is too; use a model preset or preemption 'recompute'"
            )
        self.setup = setup
        self.link = get_interconnect(config.swap_link)
        self.total = int(config.swap_space_gib * 2**30 / per_token) // config.block_tokens
        self.free = self.total

    def seconds(self, blocks: int, block_tokens: int) -> float:
        """One copy of ``blocks`` blocks of ``block_tokens`` tokens, either way."""
        return cache_send_time_s(self.setup, blocks * block_tokens, self.link) if blocks else 0.0


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
