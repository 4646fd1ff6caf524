"""How long one engine step takes: the cost model's time for the step's actual mix of work.

A step runs some decode tokens (one per running sequence, each attending its own context) and some prefill
chunks (each ``chunk`` new prompt tokens after ``cached`` tokens already in the cache) through the model
together, reading the weights once. The simulator never times a step itself: it asks this adapter, which
asks the cost model, so a step here is the same step a lesson computes by hand.

The adapter memoises: many steps share a mix (the same number of decode tokens, no prefill), and the cost
model is pure, so a repeated mix is looked up rather than recomputed.
"""

from __future__ import annotations

from collections.abc import Sequence

from calculators.passes import Setup, decode_step, prefill
from calculators.roofline import roofline_time

# (seconds, compute seconds, memory seconds) of one step; a tuple, because the engine builds one per step.
StepTime = tuple[float, float, float]

_MEMO_LIMIT = 50_000


class StepCost:
    """The time of one step for ``setup``, from the cost model.

    ``needs_contexts`` says whether the time depends on each decode sequence's context (the refined level
    counts KV-cache reads and attention); at the simple level only the token counts matter, and the engine
    can skip building the list of contexts.
    """

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.needs_contexts = setup.level != "simple"
        self._memo: dict[tuple[int, int, tuple[tuple[int, int], ...]], StepTime] = {}
        self.weight_bytes = prefill(setup, 1).weight_bytes

    def time(
        self,
        decode_tokens: int,
        decode_context_sum: int,
        prefill_chunks: Sequence[tuple[int, int]] = (),
    ) -> StepTime:
        """Seconds for a step of ``decode_tokens`` decode sequences whose contexts add up to
        ``decode_context_sum``, plus ``prefill_chunks`` as (chunk tokens, tokens cached before) pairs.
        """
        chunks = tuple(prefill_chunks)
        key = (decode_tokens, decode_context_sum if self.needs_contexts else 0, chunks)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        result = self._compute(decode_tokens, decode_context_sum, chunks)
        if len(self._memo) < _MEMO_LIMIT:
            self._memo[key] = result
        return result

    def _compute(
        self, decode_tokens: int, decode_context_sum: int, chunks: tuple[tuple[int, int], ...]
    ) -> StepTime:
        # Temporary adapter over the one-phase passes until the cost model's mixed step lands: the decode
        # part is a decode step at the mean context, the prefill part one prefill pass over all chunk
        # tokens, and the weights are counted once. Exact at the simple level; at the refined level it
        # leaves out attention from a chunk to the tokens cached before it.
        s = self.setup
        flops = 0.0
        bytes_moved = 0.0
        parts = 0
        if decode_tokens:
            mean = max(1, round(decode_context_sum / decode_tokens))
            d = decode_step(s, batch=decode_tokens, context_tokens=mean)
            flops += d.flops
            bytes_moved += d.bytes_moved
            parts += 1
        prefill_tokens = sum(c for c, _ in chunks)
        if prefill_tokens:
            p = prefill(s, prefill_tokens)
            flops += p.flops
            bytes_moved += p.bytes_moved
            parts += 1
        if parts == 0:
            raise ValueError("a step needs at least one decode token or one prefill chunk")
        bytes_moved -= (parts - 1) * self.weight_bytes  # one step reads the weights once
        r = roofline_time(
            flops,
            bytes_moved,
            s.gpu,
            s.precision,
            gpus=s.gpus,
            compute_efficiency=s.compute_efficiency,
            memory_efficiency=s.memory_efficiency,
        )
        return (r.time_s, r.compute_time_s, r.memory_time_s)
