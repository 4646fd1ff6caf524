"""The state of one engine instance while it runs: queues, the running batch, KV memory, and what happened.

Sequences in decode are never touched one by one per step: each keeps the decode-step index it joined at,
its context then and its tokens then, so its context and tokens at any later decode step follow by adding
the steps since. Finishing and needing a new KV block are events on two heaps keyed by decode-step index.
That keeps a step's bookkeeping independent of the batch size (10,000 requests run in seconds), while the
result is the same as advancing every sequence every step.
"""

from __future__ import annotations

import heapq
from array import array
from collections import deque

from calculators.simulator.kv_memory import KVMemory, SwapSpace
from calculators.simulator.prefix_cache import Key, PrefixCache
from calculators.simulator.workload import Request


class Sequence:
    """A request as it goes through an engine: prefill (possibly in chunks, possibly again after
    preemption), then decode.

    ``target`` is the tokens the current prefill must process: the prompt, or after a preemption by recompute
    the prompt plus every token written so far. Times are seconds from the start of the simulation.
    """

    __slots__ = (
        "arrival_s",
        "bursts",
        "ctx_at_join",
        "finish_s",
        "first_scheduled_s",
        "first_token_s",
        "gaps",
        "gen_at_join",
        "generated",
        "id",
        "join",
        "last_chunk",
        "last_token_s",
        "output",
        "preemptions",
        "prefill_done_s",
        "prefilled",
        "prompt",
        "recompute_token_s",
        "request",
        "residence",
        "segments",
        "shared",
        "slots",
        "swapped",
        "target",
    )

    def __init__(self, request: Request, arrival_s: float | None = None) -> None:
        self.request = request
        self.id = request.id
        self.arrival_s = request.arrival_s if arrival_s is None else arrival_s
        self.prompt = request.prompt_tokens
        self.output = request.output_tokens
        self.target = request.prompt_tokens
        self.prefilled = 0
        self.generated = 0
        self.slots = 0  # KV slots this sequence holds alone
        self.swapped = 0  # blocks of its cache in CPU swap space, while preempted by swap
        self.shared: list[Key] = []  # cached prefix blocks it holds with others (prefix caching)
        self.join = -1  # decode-step index of the first decode step in the current stay in the batch
        self.gen_at_join = 0
        self.ctx_at_join = 0
        self.residence = 0  # bumped on every leave, so stale heap entries can be skipped
        self.first_scheduled_s: float | None = None
        self.first_token_s: float | None = None
        self.last_token_s = 0.0
        self.finish_s: float | None = None
        self.prefill_done_s: float | None = None
        self.last_chunk = 0  # tokens of the step that finished its prefill (layer-wise KV transfer)
        # Each stay in the decode batch: (instance, first, last decode-step index); its tokens came at those
        # steps' ends, so the latencies after the first are the gaps between consecutive decode-step ends.
        self.segments: list[tuple[int, int, int]] = []
        # Inter-token latencies of the tokens that did not follow a decode step of the same stay: the first
        # of each stay and the first after a recompute.
        self.gaps: list[float] = []
        self.recompute_token_s: list[float] = []  # when the tokens written by a recompute prefill came
        # Speculative decoding: (instance, decode-step index, tokens beyond the first) of each decode step
        # that wrote more than one token (they all came at that step's end). Empty without speculation.
        self.bursts: list[tuple[int, int, int]] = []
        self.preemptions = 0


class Instance:
    """One engine (one replica of the setup): its queues, its batch, its KV memory and its decode steps.

    The scheduler decides each step; this class keeps the books consistent whatever it decides.
    """

    def __init__(self, index: int, memory: KVMemory, *, stop_after_prefill: bool = False) -> None:
        self.index = index
        self.memory = memory
        self.stop_after_prefill = stop_after_prefill  # a prefill-pool instance of disaggregated serving
        self.now = 0.0
        self.waiting: deque[Sequence] = deque()
        self.prefilling: dict[int, Sequence] = {}
        self.decoding: dict[int, Sequence] = {}
        # Sum over decoding of (ctx_at_join - join): the contexts at decode step j add up to this + n * j.
        self.offset_sum = 0
        self.finish_heap: list[tuple[int, int, int, Sequence]] = []
        self.block_heap: list[tuple[int, int, int, Sequence]] = []
        self.pad_tokens = 0  # static batching: finished rows still computed until the batch ends
        self.pad_contexts: list[int] = []
        self.decode_ends = array("d")  # end time of each step that included decode
        self.done: list[Sequence] = []
        self.handoffs: list[Sequence] = []  # prefill-pool instances: sequences whose prefill is done
        # Prefill-pool instances: KV slots a finished prefill still holds, until its cache has left. By id
        # while the decode pool has no room for it; then (time it lands, id, slots) on a heap.
        self.held: dict[int, int] = {}
        self.releases: list[tuple[float, int, int, int]] = []  # (lands, id, slots, tokens)
        self.held_tokens = 0  # tokens of those caches (they are filled: stored, not waste)
        # Decode-pool instances: slots promised to caches sent here and not yet admitted, by id.
        self.incoming: dict[int, int] = {}
        self.incoming_slots = 0
        self.preemptions = 0
        self.arrivals_pending = False  # set by the engine: more requests will still arrive here
        self.prefix: PrefixCache | None = None  # set by the engine when prefix caching is on
        # Preemption by swap (set by the engine): the CPU swap space, the seconds of copies the next step
        # makes before it computes, and how many preemptions swapped or found the space full.
        self.swap: SwapSpace | None = None
        self.copy_s = 0.0
        self.copy_total_s = 0.0
        self.swaps = 0
        self.swap_fallbacks = 0

    # --- queries the schedulers use --------------------------------------------------------------------
    @property
    def next_decode(self) -> int:
        """Index the next decode step will get."""
        return len(self.decode_ends)

    def decode_context_sum(self) -> int:
        """Contexts (tokens attended, the new one included) of every decoding sequence at the next step."""
        return self.offset_sum + len(self.decoding) * len(self.decode_ends)

    def decode_contexts(self) -> list[int]:
        """Each decoding sequence's context at the next step (for a sliding window, which caps each)."""
        j = len(self.decode_ends)
        return [s.ctx_at_join + j - s.join for s in self.decoding.values()]

    def running(self) -> int:
        return len(self.decoding) + len(self.prefilling)

    def decode_rows(self) -> int:
        """Tokens the decoding sequences put through the next step (k + 1 each when speculating)."""
        return len(self.decoding)

    def decode_lookahead(self) -> int:
        """Tokens of cache a decoding sequence needs past its target for its next step: none here (its
        blocks are scheduled token by token), the k proposals when speculating."""
        return 0

    def can_reserve(self, seq: Sequence, tokens: int) -> bool:
        """Whether ``seq`` can hold ``tokens`` tokens of cache and still leave the watermark free (with
        nothing else running, the watermark protects no one, so it is waived).
        """
        need = (
            self.memory.slots_for(tokens, seq.prompt, seq.output)
            - seq.slots
            - len(seq.shared)
            - self.incoming.get(seq.id, 0)
        )
        if self.prefix is not None and not seq.shared and seq.prefilled == 0:
            hits = self.prefix.lookup(seq.request, seq.target)
            need += self.prefix.unheld_among(hits) - len(hits)  # an unheld cached block counts as free
        left = self.memory.free - need
        return need <= 0 or left >= self.memory.watermark_slots or (left >= 0 and not self.running())

    # --- admission and prefill -------------------------------------------------------------------------
    def admit(self, seq: Sequence) -> None:
        """Take ``seq`` from the head of the queue and reserve cache for its whole prefill target.

        A sequence that arrives with its cache already filled (the decode pool of disaggregated serving)
        joins the decode batch at once.
        """
        popped = self.waiting.popleft()
        assert popped is seq
        if seq.swapped:  # back from CPU memory: the copy is part of this step
            swap = self.swap
            assert swap is not None
            swap.free += seq.swapped
            self.copy_s += swap.seconds(seq.swapped, self.memory.unit)
            seq.swapped = 0
        if self.incoming and seq.id in self.incoming:  # its blocks were taken when its cache was sent
            slots = self.incoming.pop(seq.id)
            self.incoming_slots -= slots
            seq.slots += slots
        if self.prefix is not None and not seq.shared and seq.prefilled == 0:
            self._take_cached_prefix(seq, self.prefix)
        self._reserve(seq, seq.target)
        if seq.first_scheduled_s is None:
            seq.first_scheduled_s = self.now
        if seq.prefilled >= seq.target:
            self._join_decode(seq)
        else:
            self.prefilling[seq.id] = seq

    # --- the handoff of disaggregated serving -----------------------------------------------------------
    def send_held(self, seq: Sequence, lands_s: float) -> None:
        """``seq``'s cache starts to leave: its slots here are free once it lands at ``lands_s``."""
        heapq.heappush(self.releases, (lands_s, seq.id, self.held.pop(seq.id), seq.target))

    def release_landed(self, now: float) -> None:
        """Free the slots of every cache that has landed on the decode pool by ``now``."""
        releases = self.releases
        while releases and releases[0][0] <= now:
            _, _, slots, tokens = heapq.heappop(releases)
            self.memory.free += slots
            self.held_tokens -= tokens

    def can_receive(self, seq: Sequence) -> bool:
        """Whether this decode-pool instance has free blocks for ``seq``'s cache (the caches already on
        their way hold theirs; the watermark is kept free, unless nothing runs or is coming)."""
        left = self.memory.free - self.memory.slots_for(seq.target, seq.prompt, seq.output)
        busy = self.running() or self.incoming_slots
        return left >= self.memory.watermark_slots or (left >= 0 and not busy)

    def receive(self, seq: Sequence) -> None:
        """Take blocks for ``seq``'s cache as it is sent: a cache that lands must have blocks to land in.

        Promising the room without taking it let the running requests' growth use it first, and the caches
        that then landed overflowed the pool (by up to 8% in issue 25's reproducer).
        """
        slots = self.memory.slots_for(seq.target, seq.prompt, seq.output)
        self.memory.free -= slots
        self.incoming[seq.id] = slots
        self.incoming_slots += slots

    def _reserve(self, seq: Sequence, tokens: int) -> None:
        need = self.memory.slots_for(tokens, seq.prompt, seq.output) - seq.slots - len(seq.shared)
        if need > 0:
            self.memory.free -= need
            seq.slots += need
            if self.prefix is not None:
                self.prefix.evict_to(self.memory.free)

    def _release(self, seq: Sequence, stored: int = 0) -> None:
        """Free ``seq``'s blocks. With prefix caching, the full blocks of the ``stored`` tokens its cache
        holds stay cached (unheld, so free to take), the tail before the head in the LRU order."""
        self.memory.free += seq.slots
        seq.slots = 0
        prefix = self.prefix
        if prefix is None:
            return
        keys = prefix.hasher.keys(seq.request)
        full = min(stored // prefix.block_tokens, len(keys))
        shared = seq.shared
        for b in range(max(full, len(shared)) - 1, -1, -1):  # the tail goes unheld first: evicted first
            if b >= len(shared):
                prefix.keep(keys[b])  # one of its own blocks (already counted free above)
            elif prefix.drop(shared[b]):
                self.memory.free += 1  # still cached, but free to take
        seq.shared = []

    # --- prefix caching ------------------------------------------------------------------------------
    def _take_cached_prefix(self, seq: Sequence, prefix: PrefixCache) -> None:
        """Hold the leading cached blocks of ``seq``'s prompt: its prefill starts after them."""
        keys = prefix.lookup(seq.request, seq.target)
        for key in keys:
            if prefix.hold(key):
                self.memory.free -= 1
        seq.shared = keys
        hit = len(keys) * prefix.block_tokens
        seq.prefilled = hit
        prefix.hit_tokens += hit
        prefix.looked_up_tokens += seq.target

    def _share_computed_prefix(self, seq: Sequence, prefix: PrefixCache) -> None:
        """Put the full blocks ``seq``'s prefill has just computed in the cache, where any request with the
        same prefix can take them at once; a block another request computed meanwhile replaces ``seq``'s own
        copy (which is freed)."""
        keys = prefix.hasher.keys(seq.request)
        full = min(seq.prefilled // prefix.block_tokens, len(keys))
        for b in range(len(seq.shared), full):
            key = keys[b]
            if key in prefix.refs:
                if prefix.hold(key):
                    self.memory.free -= 1
                self.memory.free += 1
            else:
                prefix.insert(key)
            seq.slots -= 1
            seq.shared.append(key)

    def finish_prefill_chunk(self, seq: Sequence, tokens: int, now: float) -> None:
        """Account a prefill chunk that ended at ``now``; the last chunk writes a token."""
        seq.prefilled += tokens
        if self.prefix is not None:
            self._share_computed_prefix(seq, self.prefix)
        if seq.prefilled < seq.target:
            return
        del self.prefilling[seq.id]
        seq.generated += 1
        if seq.first_token_s is None:
            seq.first_token_s = now
        else:
            seq.gaps.append(now - seq.last_token_s)  # the first token after a preemption
            seq.recompute_token_s.append(now)
        seq.last_token_s = now
        if seq.generated >= seq.output:
            self._finish(seq, now)
        elif self.stop_after_prefill:
            seq.prefill_done_s = now
            seq.last_chunk = tokens
            self.held[seq.id] = seq.slots  # the cache stays here until the decode pool takes it
            self.held_tokens += seq.target
            seq.slots = 0
            self.handoffs.append(seq)
        else:
            self._join_decode(seq)

    # --- decode ------------------------------------------------------------------------------------------
    def _enter_decode(self, seq: Sequence) -> int:
        """Put ``seq`` among the decoding sequences as of the next step; returns that step's index."""
        j = len(self.decode_ends)
        seq.join = j
        seq.gen_at_join = seq.generated
        seq.ctx_at_join = seq.prompt + seq.generated  # the newest token is the next step's input
        self.decoding[seq.id] = seq
        self.offset_sum += seq.ctx_at_join - j
        return j

    def _join_decode(self, seq: Sequence) -> None:
        j = self._enter_decode(seq)
        last = j + seq.output - seq.generated - 1
        heapq.heappush(self.finish_heap, (last, seq.residence, seq.id, seq))
        self._push_block_need(seq)

    def _push_block_need(self, seq: Sequence) -> None:
        """Schedule the decode step at which ``seq`` outgrows the slots it holds (paged memory only)."""
        if not self.memory.paged:
            return
        held_tokens = (seq.slots + len(seq.shared)) * self.memory.unit
        step = seq.join + held_tokens + 1 - seq.ctx_at_join
        last = seq.join + seq.output - seq.gen_at_join - 1
        if step <= last:
            heapq.heappush(self.block_heap, (max(step, seq.join), seq.residence, seq.id, seq))

    def reserve_decode_step(self) -> None:
        """Give every decoding sequence the cache its next token needs, preempting by recompute if the
        blocks run out (the most recently arrived running sequence first, as vLLM does).
        """
        j = len(self.decode_ends)
        heap = self.block_heap
        while heap and heap[0][0] <= j:
            _, residence, _, seq = heapq.heappop(heap)
            if residence != seq.residence or seq.id not in self.decoding:
                continue
            while self.memory.free < 1:
                victim = self._latest_running()
                self.preempt(victim)
                if victim is seq:
                    break
            if seq.id not in self.decoding:
                continue
            self.memory.free -= 1
            seq.slots += 1
            if self.prefix is not None:
                self.prefix.evict_to(self.memory.free)
            self._push_block_need(seq)

    def _latest_running(self) -> Sequence:
        candidates = list(self.decoding.values()) + list(self.prefilling.values())
        return max(candidates, key=lambda s: (s.arrival_s, s.id))

    def preempt(self, seq: Sequence) -> None:
        """Free ``seq``'s cache and put it at the head of the queue: to prefill again from scratch, or, when
        preempting by swap and the CPU swap space has room, to copy its blocks back and go on where it was.
        """
        decoding = seq.id in self.decoding
        if decoding:
            j = len(self.decode_ends)
            self._leave_decode(seq, j - 1)
        else:
            del self.prefilling[seq.id]
        # Tokens its cache holds: every token but the newest (the next step's input), or its prefill so far.
        stored = seq.prompt + seq.generated - 1 if decoding else seq.prefilled
        swap = self.swap
        # A decoding sequence swaps every block it holds; one in prefill only those its chunks have filled.
        blocks = seq.slots if decoding else -(-seq.prefilled // self.memory.unit)
        if swap is not None and not decoding and not blocks:
            pass  # nothing computed yet: nothing to copy, nothing to recompute
        elif swap is not None and blocks <= swap.free and not seq.shared:
            self.copy_s += swap.seconds(blocks, self.memory.unit)
            swap.free -= blocks
            seq.swapped = blocks
            self.swaps += 1
            if decoding:  # its cache holds every token but the newest, the next decode step's input
                seq.target = seq.prompt + seq.generated
                seq.prefilled = seq.target
        else:
            if swap is not None:
                self.swap_fallbacks += 1
            seq.target = seq.prompt + seq.generated
            seq.prefilled = 0
        self._release(seq, stored)
        seq.residence += 1
        seq.preemptions += 1
        self.preemptions += 1
        self.waiting.appendleft(seq)

    def take_copy_time(self) -> float:
        """Seconds of swap copies the step being run makes (then none are pending)."""
        seconds, self.copy_s = self.copy_s, 0.0
        self.copy_total_s += seconds
        return seconds

    def _leave_decode(self, seq: Sequence, last: int) -> None:
        """Close the current stay in the batch after decode step ``last`` (none if last < join)."""
        del self.decoding[seq.id]
        self.offset_sum -= seq.ctx_at_join - seq.join
        if last >= seq.join:
            seq.gaps.append(self.decode_ends[seq.join] - seq.last_token_s)  # the stay's first token
            seq.segments.append((self.index, seq.join, last))
            seq.generated = seq.gen_at_join + last - seq.join + 1
            seq.last_token_s = self.decode_ends[last]
        seq.residence += 1

    def finish_decode_step(self, now: float) -> None:
        """Record a decode step that ended at ``now`` and retire the sequences that wrote their last token."""
        self.decode_ends.append(now)
        j = len(self.decode_ends) - 1
        heap = self.finish_heap
        while heap and heap[0][0] <= j:
            _, residence, _, seq = heapq.heappop(heap)
            if residence != seq.residence or seq.id not in self.decoding:
                continue
            if self.pad_rows:
                self.pad_tokens += 1
                self.pad_contexts.append(seq.ctx_at_join + j - seq.join + 1)
            self._leave_decode(seq, j)
            self._finish(seq, now)
        if self.pad_rows and not self.decoding:
            self.pad_tokens = 0
            self.pad_contexts = []

    pad_rows = False  # set by static batching

    def _finish(self, seq: Sequence, now: float) -> None:
        seq.finish_s = now
        self._release(seq, seq.prompt + seq.output - 1)  # its last token is never read back
        self.done.append(seq)

    def stored_tokens(self) -> int:
        """Tokens actually held in the cache now (what a perfect allocator would need): each decoding
        sequence's next context less the token it has yet to write, and every prefill so far.
        """
        n = len(self.decoding)
        held = self.offset_sum + n * (len(self.decode_ends) - 1)
        if self.prefilling:
            held += sum(s.prefilled for s in self.prefilling.values())
        if self.prefix is not None:
            held -= self.prefix.duplicate_tokens  # a shared block is stored once
        return held + self.held_tokens
