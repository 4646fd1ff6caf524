"""How long one engine step takes: the cost model's time for the step's actual mix of work.

A step runs some decode tokens (one per running sequence, each attending its own context) and some prefill
chunks (each ``chunk`` new prompt tokens after ``cached`` tokens already in the cache) through the model
together, reading the weights once. The simulator never times a step itself: it asks
:func:`calculators.mixed_step`, so a step here is the same step a lesson computes by hand.

Two things keep this fast without changing any answer:

- The cost model sees the decode contexts only through the keys they attend to in total (each context, or
  the sliding window when shorter). So the adapter hands it a list with the same count and the same total
  ([q + 1] x r + [q] x (n - r)) instead of building each sequence's context every step.
- Steps repeat: at the simple level without KV traffic the time depends only on the token counts, and the
  cost model is pure, so a repeated mix is looked up rather than recomputed.

The simulator manages KV memory itself (blocks, admission, preemption), so it asks the cost model to time
steps with ``ignore_memory``: a step never holds more cache than the simulator's budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from calculators.passes import Setup, mixed_step

# (seconds, compute seconds, memory seconds) of one step; a tuple, because the engine builds one per step.
StepTime = tuple[float, float, float]

_MEMO_LIMIT = 50_000


class StepCost:
    """The time of one step for ``setup``, from the cost model.

    ``needs_keys`` says whether the time depends on the decode contexts at all (the refined level and KV
    traffic count attention over the cache); ``window`` is the model's sliding window, which caps the keys
    each context contributes, so the engine must then sum them itself.
    """

    def __init__(self, setup: Setup) -> None:
        self.setup = replace(setup, ignore_memory=True)
        self.window = setup.model.sliding_window
        self.needs_keys = setup.level != "simple" or setup.kv_traffic
        self._memo: dict[tuple[int, int, tuple[tuple[int, int], ...]], StepTime] = {}

    def time(
        self,
        decode_tokens: int,
        decode_keys: int,
        prefill_chunks: Sequence[tuple[int, int]] = (),
    ) -> StepTime:
        """Seconds for a step of ``decode_tokens`` decoding sequences attending ``decode_keys`` tokens in
        total (each context, capped at the sliding window), plus ``prefill_chunks`` as (chunk tokens, tokens
        cached before) pairs.
        """
        chunks = tuple(prefill_chunks)
        key = (decode_tokens, decode_keys if self.needs_keys else 0, chunks)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        contexts: list[int] = []
        if decode_tokens:
            q, r = divmod(decode_keys, decode_tokens)
            contexts = [q + 1] * r + [q] * (decode_tokens - r)
        result = mixed_step(self.setup, decode_contexts=contexts, prefill_chunks=chunks)
        timing = (result.time_s, result.compute_time_s, result.memory_time_s)
        if len(self._memo) < _MEMO_LIMIT:
            self._memo[key] = timing
        return timing
