"""Prefix caching: the KV blocks of prompts already seen, kept and reused across requests.

vLLM's automatic prefix caching knows a full block by a hash of the tokens in it and of its parent block's
hash, so a block's key stands for the whole prefix up to and including it: two prompts share block ``b``
only if they agree on every token of blocks ``0..b`` (vLLM documentation, "Automatic Prefix Caching").
SGLang's RadixAttention keeps the same prefixes in a radix tree, token by token (Zheng et al., 2023). The
simulator follows vLLM, at block granularity.

The workload does not carry tokens, only which stretches of prompts are the same: a prompt is a list of
*pieces* (a content label and a length), and two pieces with the same label hold the same tokens. A request
may start with a system prompt (label ``("system", k)``) or continue a chat (the previous turn's pieces,
then its answer, label ``("output", id)``), and always ends with its own new tokens (``("prompt", id)``).
:class:`BlockHasher` turns those pieces into one key per full block, chained on the parent's key as vLLM's
hash is; keys are interned as small whole numbers, so two blocks get the same key exactly when their
prefixes are the same (no hash collisions to reason about).

Sharing is reference-counted: a cached block is held once in memory however many running requests read it.
Copy-on-write never has to copy here, because only full blocks are shared and a full block is never written
again: a request writes its new tokens into a block of its own (vLLM shares full blocks only, for the same
reason). A block no running request holds stays cached until memory runs short; then the least recently
used goes first, and of one request's blocks the tail before the head (vLLM frees a request's blocks in
reverse order, so its last blocks are evicted first).

Bookkeeping, kept simple on purpose: a cached block no request holds counts as free memory in
:class:`~calculators.simulator.kv_memory.KVMemory` (it can be taken at any time), and is evicted for real
when the free count drops below the number of such blocks. So every check the schedulers already make on
free memory stays right.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from calculators.simulator.workload import Request

Key = int  # a full block's interned chained hash: equal keys, equal prefixes up to and including the block
Label = tuple[str, int]  # what a piece of a prompt holds: ("system", k), ("prompt", id) or ("output", id)
Piece = tuple[Label, int]  # a label and its length in tokens


class BlockHasher:
    """The block keys of every request's context (its prompt, then its output), shared by all replicas.

    A key is what vLLM's block hash stands for: the parent block's key and the (label, start, end) pieces of
    the block's own tokens. Interning those pairs as whole numbers gives each distinct prefix one key.
    """

    __slots__ = ("_ids", "_keys", "_prompt_pieces", "block_tokens", "requests")

    def __init__(self, block_tokens: int, requests: Iterable[Request]) -> None:
        self.block_tokens = block_tokens
        self.requests = {r.id: r for r in requests}
        self._ids: dict[tuple[Key, tuple[tuple[Label, int, int], ...]], Key] = {}
        self._keys: dict[int, list[Key]] = {}
        self._prompt_pieces: dict[int, list[Piece]] = {}

    def prompt_pieces(self, request: Request) -> list[Piece]:
        """The pieces of ``request``'s prompt, in order; their lengths add up to its prompt tokens."""
        cached = self._prompt_pieces.get(request.id)
        if cached is not None:
            return cached
        self.requests.setdefault(request.id, request)
        chain = []  # a chat's turns, latest first, down to the first turn
        r = request
        while r.follows is not None:
            chain.append(r)
            r = self.requests[r.follows]
        pieces: list[Piece] = []
        if r.prefix_id is not None and r.prefix_tokens:
            pieces.append((("system", r.prefix_id), r.prefix_tokens))
        own = r.prompt_tokens - sum(n for _, n in pieces)
        if own:
            pieces.append((("prompt", r.id), own))
        for turn in reversed(chain):  # each turn: the previous prompt, its answer, then its own new tokens
            previous = self.requests[turn.follows]  # type: ignore[index]
            pieces = [*pieces, (("output", previous.id), previous.output_tokens)]
            own = turn.prompt_tokens - sum(n for _, n in pieces)
            if own:
                pieces.append((("prompt", turn.id), own))
        self._prompt_pieces[request.id] = pieces
        return pieces

    def keys(self, request: Request) -> list[Key]:
        """One key per full block of ``request``'s longest cached context: its prompt and all but its last
        output token (the last token is written, never read back, so its cache is never computed)."""
        cached = self._keys.get(request.id)
        if cached is not None:
            return cached
        pieces = [*self.prompt_pieces(request), (("output", request.id), request.output_tokens - 1)]
        keys = self.chain(pieces)
        self._keys[request.id] = keys
        return keys

    def chain(self, pieces: list[Piece]) -> list[Key]:
        """The key of each full block of ``pieces``: block ``b``'s key names its parent's key and its own
        (label, start, end) pieces, so it is equal for two contexts only if blocks ``0..b`` all are."""
        b = self.block_tokens
        keys: list[Key] = []
        parent = -1
        content: list[tuple[Label, int, int]] = []
        room = b  # tokens left to fill in the current block
        for label, length in pieces:
            start = 0
            while length - start > 0:
                take = min(room, length - start)
                content.append((label, start, start + take))
                start += take
                room -= take
                if room == 0:
                    node = (parent, tuple(content))
                    key = self._ids.get(node)
                    if key is None:
                        key = self._ids[node] = len(self._ids)
                    keys.append(key)
                    parent, content, room = key, [], b
        return keys


class PrefixCache:
    """The cached blocks of one engine instance: who holds each, and the LRU order of the unheld."""

    __slots__ = (
        "block_tokens",
        "duplicate_tokens",
        "evictions",
        "hasher",
        "hit_tokens",
        "looked_up_tokens",
        "refs",
        "unheld",
    )

    def __init__(self, hasher: BlockHasher) -> None:
        self.hasher = hasher
        self.block_tokens = hasher.block_tokens
        self.refs: dict[Key, int] = {}  # every cached block: how many running requests hold it
        self.unheld: OrderedDict[Key, None] = OrderedDict()  # refs == 0, least recently used first
        self.hit_tokens = 0  # prompt tokens found in the cache at admission
        self.looked_up_tokens = 0  # prompt tokens of every admission (what could have been found)
        self.evictions = 0
        self.duplicate_tokens = 0  # tokens of shared blocks beyond their first holder (stored once)

    def lookup(self, request: Request, target: int) -> list[Key]:
        """The leading cached blocks of a prefill of ``target`` tokens of ``request``'s context (a hit stops
        at the first block not cached). At least one token is always left to compute: the first output
        token needs the last prompt token's pass."""
        return self.cached_prefix(self.hasher.keys(request), (target - 1) // self.block_tokens)

    def cached_prefix(self, keys: list[Key], blocks: int) -> list[Key]:
        """The leading cached keys among the first ``blocks`` of ``keys`` (a hit stops at the first block
        not cached). :meth:`lookup` passes a request's keys from the hasher; it is separate so that any
        chained block ids can be looked up the same way, such as a published trace's (the Mooncake trace
        gives one id per 512-token block, equal ids for equal prefixes:
        tests/calculators/simulator/test_prefix_cache_mooncake.py replays it through this cache)."""
        found: list[Key] = []
        refs = self.refs
        for key in keys[:blocks]:
            if key not in refs:
                break
            found.append(key)
        return found

    def matched_tokens(self, request: Request) -> int:
        """Tokens of ``request``'s prompt this cache holds now (what a cache-aware router asks)."""
        return len(self.lookup(request, request.prompt_tokens)) * self.block_tokens

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

    def keep(self, key: Key) -> bool:
        """A request that ends leaves its own full block ``key`` cached, unheld; False if that prefix is
        cached already (the block is then simply freed)."""
        if key in self.refs:
            return False
        self.refs[key] = 0
        self.unheld[key] = None
        return True

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
