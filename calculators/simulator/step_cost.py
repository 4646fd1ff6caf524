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
- Where attention is counted, a decode-only step of n sequences is a sum over operators of max(compute,
  memory), each affine in the keys attended. Between two key counts where no operator changes which side of
  its max it is on, the step time is therefore affine too, and a step in between is interpolated from the
  two ends (exact up to float rounding). The adapter checks the two ends with the cost model and keeps the
  line only when every operator is on the same side at both.

The simulator manages KV memory itself (blocks, admission, preemption), so it asks the cost model to time
steps with ``ignore_memory``: a step never holds more cache than the simulator's budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from calculators.passes import Setup, mixed_step
from calculators.speculative import (
    attention_at_least,
    draft_kernels_s,
    verify_chunk,
    verify_decode_contexts,
)

# (seconds, compute seconds, memory seconds) of one step; a tuple, because the engine builds one per step.
StepTime = tuple[float, float, float]

_MEMO_LIMIT = 50_000
_LINE_STEPS = 512  # a line covers this many decode steps of its batch (keys grow by n per step)


class StepCost:
    """The time of one step for ``setup``, from the cost model.

    ``needs_keys`` says whether the time depends on the decode contexts at all (the refined level and KV
    traffic count attention over the cache); ``window`` is the model's sliding window, which caps the keys
    each context contributes, so the engine must then sum them itself.
    """

    def __init__(self, setup: Setup, *, kernels_only: bool = False) -> None:
        self.setup = replace(setup, ignore_memory=True)
        self.window = setup.model.sliding_window
        self.needs_keys = setup.level != "simple" or setup.kv_traffic
        # A draft model's steps inside the target's engine step: kernels only, no per-step overhead.
        self.kernels_only = kernels_only
        self._memo: dict[tuple[int, int, tuple[tuple[int, int], ...]], StepTime] = {}
        # Decode-only steps by batch size: (keys at one end, keys at the other, times at each end).
        self._lines: dict[int, tuple[int, int, StepTime, StepTime]] = {}
        # Speculative verification passes by (batch, proposed): as _lines, by the contexts' total.
        self._verify_lines: dict[tuple[int, int], tuple[int, int, StepTime, StepTime]] = {}

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
        if self.needs_keys and decode_tokens and not chunks:
            return self._decode_only(decode_tokens, decode_keys)
        key = (decode_tokens, decode_keys if self.needs_keys else 0, chunks)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        timing, _ = self._exact(decode_tokens, decode_keys, chunks)
        if len(self._memo) < _MEMO_LIMIT:
            self._memo[key] = timing
        return timing

    def verify_time(
        self, contexts: Sequence[int], proposed: int, prefill_chunks: Sequence[tuple[int, int]] = ()
    ) -> StepTime:
        """Seconds for a speculative verification pass of sequences at ``contexts`` (each checks its last
        token and ``proposed`` proposals), plus ``prefill_chunks``: as
        :func:`calculators.speculative.speculative_decoding` prices it, the faster of its chunk form (k + 1
        tokens on each cached context, its attention at least the plain step's) and its decode form (k + 1
        decode tokens each).

        With full attention and no prompt chunks the pass depends on the contexts only through their total
        (a list with the same count and total is handed over), so a step between two totals where no operator
        changes side (nor the form taken, nor the attention floor) is interpolated, as decode steps are.
        """
        chunks = tuple(prefill_chunks)
        if self.window is None and not chunks:
            n, total = len(contexts), sum(contexts)
            if not self.needs_keys:
                total = n  # the time does not depend on the contexts: one entry per batch size
            return self._on_line(
                self._verify_lines,
                (n, proposed),
                total,
                n * _LINE_STEPS,
                None,
                lambda at: self._verify_exact(_even(n, at), proposed, ()),
            )
        timing, _ = self._verify_exact(list(contexts), proposed, chunks)
        return timing

    def _verify_exact(
        self, contexts: list[int], proposed: int, chunks: tuple[tuple[int, int], ...]
    ) -> tuple[StepTime, tuple[bool, ...]]:
        plain = mixed_step(self.setup, decode_contexts=contexts, prefill_chunks=chunks)
        verifying = [verify_chunk(c, proposed) for c in contexts]
        as_chunk = mixed_step(self.setup, prefill_chunks=[*verifying, *chunks])
        floored = attention_at_least(as_chunk, plain)
        tokens = [x for c in contexts for x in verify_decode_contexts(c, proposed)]
        as_decode = mixed_step(self.setup, decode_contexts=tokens, prefill_chunks=chunks)
        verify = min(floored, as_decode, key=lambda p: p.time_s)
        forms = (plain, as_chunk, as_decode)
        sides = [op.compute_time_s > op.memory_time_s for result in forms for op in result.operators]
        sides += [verify is as_decode, floored is not as_chunk]  # the form taken, the attention floor
        return (verify.time_s, verify.compute_time_s, verify.memory_time_s), tuple(sides)

    def _decode_only(self, n: int, keys: int) -> StepTime:
        # no context attends more than the window
        cap = None if self.window is None else n * self.window
        return self._on_line(self._lines, n, keys, n * _LINE_STEPS, cap, lambda at: self._exact(n, at, ()))

    def _on_line(
        self,
        lines: dict[Any, tuple[int, int, StepTime, StepTime]],
        line_key: object,
        x: int,
        reach: int,
        cap: int | None,
        exact: Callable[[int], tuple[StepTime, tuple[bool, ...]]],
    ) -> StepTime:
        """A step that is affine in ``x`` (the decode keys of a batch, or its contexts' total) between two
        points where ``exact`` finds every operator on the same side of its max."""
        line = lines.get(line_key)
        if line is not None:
            lo, hi, at_lo, at_hi = line
            if lo <= x <= hi:
                f = (x - lo) / (hi - lo)
                return (
                    at_lo[0] + (at_hi[0] - at_lo[0]) * f,
                    at_lo[1] + (at_hi[1] - at_lo[1]) * f,
                    at_lo[2] + (at_hi[2] - at_lo[2]) * f,
                )
        timing, sides = exact(x)
        far = x + reach
        if cap is not None:
            far = min(far, cap)
        if far > x:
            at_far, far_sides = exact(far)
            if far_sides == sides:
                lines[line_key] = (x, far, timing, at_far)
        return timing

    def _exact(
        self, n: int, keys: int, chunks: tuple[tuple[int, int], ...]
    ) -> tuple[StepTime, tuple[bool, ...]]:
        """The cost model's time for the step, and which side of its max each operator is on."""
        contexts: list[int] = []
        if n:
            q, r = divmod(keys, n)
            contexts = [q + 1] * r + [q] * (n - r)
        result = mixed_step(self.setup, decode_contexts=contexts, prefill_chunks=chunks)
        sides = tuple(op.compute_time_s > op.memory_time_s for op in result.operators)
        seconds = draft_kernels_s(result) if self.kernels_only else result.time_s
        return (seconds, result.compute_time_s, result.memory_time_s), sides


def _even(n: int, total: int) -> list[int]:
    """``n`` whole numbers that add up to ``total``, as even as can be."""
    q, r = divmod(total, n)
    return [q + 1] * r + [q] * (n - r)
