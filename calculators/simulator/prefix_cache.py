"""Prefix caching: KV blocks of shared prompt prefixes kept and reused across requests.

As vLLM's automatic prefix caching and SGLang's RadixAttention do, a full block of a prompt is known by the
tokens it holds (here the pair (prefix id, block index), since the workload says which requests share which
system prompt). A request whose prompt starts with blocks already in the cache takes them instead of
computing them: its prefill starts after them, and the blocks are shared, held once in memory however many
requests read them (copy-on-write: a request's own blocks after the prefix stay private). A block no
running request holds stays cached until memory runs short, then the least recently used goes first.

Bookkeeping, kept simple on purpose: a cached block no request holds counts as free memory in
:class:`~calculators.simulator.kv_memory.KVMemory` (it can be taken at any time), and is evicted for real
when the free count drops below the number of such blocks. So every check the schedulers already make on
free memory stays right.
"""

from __future__ import annotations

from collections import OrderedDict

Key = tuple[int, int]  # (prefix id, block index)


class PrefixCache:
    """The cached blocks of one engine instance: who holds each, and the LRU order of the unheld."""

    __slots__ = (
        "block_tokens",
        "duplicate_tokens",
        "evictions",
        "hit_tokens",
        "looked_up_tokens",
        "refs",
        "unheld",
    )

    def __init__(self, block_tokens: int) -> None:
        self.block_tokens = block_tokens
        self.refs: dict[Key, int] = {}  # every cached block: how many running requests hold it
        self.unheld: OrderedDict[Key, None] = OrderedDict()  # refs == 0, least recently used first
        self.hit_tokens = 0  # prompt tokens found in the cache at admission
        self.looked_up_tokens = 0  # prompt tokens of every admission (what could have been found)
        self.evictions = 0
        self.duplicate_tokens = 0  # tokens of shared blocks beyond their first holder (stored once)

    def reusable_blocks(self, prefix_id: int | None, prefix_tokens: int, target: int) -> int:
        """Full prefix blocks of a prompt that may ever be cached: at least one prompt token is always left
        to compute, since the first output token needs the last prompt token's pass."""
        if prefix_id is None:
            return 0
        return min(prefix_tokens, target - 1) // self.block_tokens

    def lookup(self, prefix_id: int | None, prefix_tokens: int, target: int) -> list[Key]:
        """The leading cached blocks of such a prompt (a hit stops at the first block not cached)."""
        keys: list[Key] = []
        if prefix_id is None:
            return keys
        for b in range(self.reusable_blocks(prefix_id, prefix_tokens, target)):
            key = (prefix_id, b)
            if key not in self.refs:
                break
            keys.append(key)
        return keys

    def unheld_among(self, keys: list[Key]) -> int:
        return sum(1 for k in keys if self.refs[k] == 0)

    def hold(self, key: Key) -> bool:
        """One more request holds ``key``; True if it was unheld (so it stops counting as free)."""
        n = self.refs[key]
        self.refs[key] = n + 1
        if n == 0:
            del self.unheld[key]
            return True
        self.duplicate_tokens += self.block_tokens
        return False

    def insert(self, key: Key) -> None:
        """A request has computed ``key``'s block and shares it from now on (it holds it)."""
        self.refs[key] = 1

    def drop(self, key: Key) -> bool:
        """A request lets ``key`` go; True if no one holds it now (it becomes free, but stays cached)."""
        n = self.refs[key] - 1
        self.refs[key] = n
        if n == 0:
            self.unheld[key] = None  # most recently used last
            return True
        self.duplicate_tokens -= self.block_tokens
        return False

    def evict_to(self, free: int) -> None:
        """Evict the least recently used unheld blocks until no more of them are left than ``free``."""
        unheld = self.unheld
        while len(unheld) > max(free, 0):
            key, _ = unheld.popitem(last=False)
            del self.refs[key]
            self.evictions += 1
