"""Pipeline parallelism in the serving simulator: each step's batch split into micro-batches that follow
one another through the stages.

A replica of ``P`` pipeline stages (``Setup.pipeline_stages``) holds ``1 / P`` of the layers on each stage.
The cost model times one pass as the stages one after another (and the sends between them), so a step
run as one batch keeps every stage but one idle: the step lasts the whole pass. Split the step's batch
into ``m`` micro-batches and the stages work on different micro-batches at once, as in GPipe's
synchronous schedule [@gpipe]: with ``m`` equal micro-batches, each taking ``t`` on the whole pass and so
``t / P`` on one stage, the step lasts ``(m + P - 1) t / P``, and each stage idles for the bubble,
``(P - 1) / (m + P - 1)`` of the step.

With unequal micro-batches (a decode batch that does not divide by ``m``, prompts of other lengths) the
step is the longest path through the grid of stages and micro-batches: micro-batch ``k`` takes ``t_k / P``
on every stage, stage ``s`` starts ``k`` once it has finished ``k - 1`` and stage ``s - 1`` has finished
``k``, so the step lasts ``(sum of t_k + (P - 1) max t_k) / P``.

How a step's work is split: the decode rows as evenly as can be (the first ``n mod m`` micro-batches one
more), each keeping its own context; then each prefill chunk, whole, to the micro-batch with the fewest
tokens so far (the first of those). A micro-batch left empty is not run. Each micro-batch reads its
stage's weights again, so micro-batches shorten a compute-bound step (prefill) and lengthen a memory-bound
one (decode): each pass costs about the same whatever its batch.

What the step reports as compute and memory time is one stage's: the sum over micro-batches of the
pass's time, over ``P``.
"""

from __future__ import annotations

from collections.abc import Sequence

from calculators.passes import Setup
from calculators.simulator.step_cost import StepCost, StepTime
from calculators.validation import count

MAX_MICRO_BATCHES = 1024


def micro_batch_count(micro_batches: object) -> int:
    """``micro_batches`` checked: a whole number from 1 to :data:`MAX_MICRO_BATCHES`."""
    return count("micro_batches", micro_batches, maximum=MAX_MICRO_BATCHES)


def split_step(
    decode_tokens: int, decode_keys: int, prefill_chunks: Sequence[tuple[int, int]], micro_batches: int
) -> list[tuple[int, int, tuple[tuple[int, int], ...]]]:
    """The step's work as (decode rows, their keys, prefill chunks) per non-empty micro-batch.

    The keys of the decode rows are spread as the cost model spreads them (``q + 1`` for the first ``r``
    rows, ``q`` for the others, ``q, r = divmod(keys, rows)``), and a micro-batch takes consecutive rows.
    """
    m = micro_batches
    rows = [decode_tokens // m + (1 if k < decode_tokens % m else 0) for k in range(m)]
    keys = []
    first = 0
    q, r = divmod(decode_keys, decode_tokens) if decode_tokens else (0, 0)
    for n in rows:
        last = first + n
        keys.append(n * q + max(0, min(last, r) - min(first, r)))
        first = last
    chunks: list[list[tuple[int, int]]] = [[] for _ in range(m)]
    tokens = list(rows)
    for chunk in prefill_chunks:
        k = min(range(m), key=lambda i: (tokens[i], i))
        chunks[k].append(chunk)
        tokens[k] += chunk[0]
    return [(rows[k], keys[k], tuple(chunks[k])) for k in range(m) if rows[k] or chunks[k]]


def pipelined_step(times: Sequence[StepTime], stages: int) -> StepTime:
    """One step of micro-batches whose passes take ``times`` through ``stages`` equal stages: (seconds,
    one stage's compute seconds, one stage's memory seconds)."""
    passes = [t[0] for t in times]
    # One micro-batch: the pass itself (not (t + (P - 1) t) / P, which may round differently).
    seconds = passes[0] if len(passes) == 1 else (sum(passes) + (stages - 1) * max(passes)) / stages
    return seconds, sum(t[1] for t in times) / stages, sum(t[2] for t in times) / stages


class PipelinedStepCost(StepCost):
    """A :class:`StepCost` whose steps run as ``micro_batches`` micro-batches through the setup's
    pipeline stages (see the module's docstring)."""

    def __init__(self, setup: Setup, micro_batches: int) -> None:
        super().__init__(setup)
        self.stages = setup.pipeline_stages
        self.micro_batches = micro_batches

    def time(
        self,
        decode_tokens: int,
        decode_keys: int,
        prefill_chunks: Sequence[tuple[int, int]] = (),
    ) -> StepTime:
        parts = split_step(decode_tokens, decode_keys, prefill_chunks, self.micro_batches)
        if not parts:
            return super().time(decode_tokens, decode_keys, prefill_chunks)
        return pipelined_step([super(PipelinedStepCost, self).time(*part) for part in parts], self.stages)


def bubble_fraction(stages: int, micro_batches: int) -> float:
    """The share of a synchronous pipeline's step each stage idles with equal micro-batches:
    (P - 1) / (m + P - 1)."""
    return (stages - 1) / (micro_batches + stages - 1)
