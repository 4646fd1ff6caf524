"""Speculative decoding in the simulator: each decode step verifies k proposed tokens per sequence.

A drafter (a draft model, or draft heads on the target; see :mod:`calculators.speculative`, whose cost
functions are used here) proposes k tokens for every decoding sequence, and the target checks them all in
one pass. Per sequence and step, each proposal is accepted with the request's acceptance rate a until the
first rejection, and the target adds one token of its own (the correction, or a bonus token when all k
pass), so a step writes 1 + (accepted prefix) tokens, at most what the request has left to write; on
average (1 - a^(k+1)) / (1 - a) [@speculative-decoding]. Each request's a is fixed, or drawn once from a
Beta distribution with the given mean (prompts differ in how predictable their answers are), from a
generator seeded by the run's seed and the request's id, so a run is reproducible.

What a step costs: the verifier is one step of the existing step cost model with k + 1 tokens per sequence
(the faster of its two forms, a chunk of k + 1 tokens on the cached context or k + 1 decode tokens, as
:func:`calculators.speculative.speculative_decoding` takes it), plus the drafter's k steps at the batch (a
draft model's kernels, or draft heads as a share of a target decode step), plus any prompt chunks the
scheduler put in the step. Its KV cache: before the step each sequence takes the blocks for its context and
the k proposals; after it, the blocks past what was accepted are freed. The step's tokens come together at
its end (their inter-token latencies after the first are 0), and a chunked-prefill budget counts k + 1
tokens per decoding sequence, as vLLM's does.

The books stay those of :class:`~calculators.simulator.state.Instance`, whose decode bookkeeping assumes one
token per step: a sequence that writes more moves its anchors (``gen_at_join``, ``ctx_at_join``) forward by
the extra tokens, so every formula there (contexts, tokens generated, cache stored) still holds. Unlike
plain decoding each step visits every decoding sequence (it draws their tokens), so a step costs time in
proportion to the batch.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.models import get_model
from calculators.simulator.kv_memory import KVMemory
from calculators.simulator.state import Instance, Sequence
from calculators.simulator.step_cost import StepCost, StepTime
from calculators.speculative import (
    DRAFTERS,
    MAX_PROPOSED,
    checked_drafter,
    draft_contexts,
    drafter_memory_plan,
    expected_tokens_per_step,
    heads_draft_share,
)
from calculators.validation import bounded_number, choice, count

if TYPE_CHECKING:
    from calculators.memory import MemoryPlan
    from calculators.passes import Setup

MAX_CONCENTRATION = 1e6  # a Beta this concentrated is a fixed value to many digits
MIN_CONCENTRATION = 1e-2
MAX_SEED = 2**63


def accepted_prefix(rng: random.Random, acceptance: float, proposed: int) -> int:
    """How many of ``proposed`` tokens are accepted: each with chance ``acceptance``, up to the first
    rejection (a uniform draw at or above ``acceptance`` rejects)."""
    accepted = 0
    while accepted < proposed and rng.random() < acceptance:
        accepted += 1
    return accepted


@dataclass(frozen=True)
class Speculation:
    """Speculative decoding for :func:`calculators.simulate`: k ``proposed`` tokens per step from ``drafter``.

    ``acceptance`` is the mean per-token acceptance rate, in (0, 1). Without ``acceptance_concentration``
    every request accepts with that rate; with it, each request's rate is drawn from Beta(a x c, (1 - a) x c)
    (mean a; a larger c, less spread). ``drafter`` is "heads" (each draft step costs ``draft_layers`` of the
    target's layers), "model" (``draft_model``, a preset, runs k decode steps) or "ngram" (free). ``seed``
    seeds the draws.
    """

    acceptance: float
    proposed: int = 4
    drafter: str = "heads"
    draft_model: str | None = None
    draft_layers: float = 1.0
    acceptance_concentration: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        a = self.acceptance
        if isinstance(a, bool) or not isinstance(a, int | float) or not 0 < a < 1:
            raise ValueError(
                f"speculation acceptance must be a number strictly between 0 and 1 (the chance each proposed "
                f"token is accepted), got {a!r}; use a value such as 0.7"
            )
        count("speculation proposed", self.proposed, maximum=MAX_PROPOSED)
        choice("speculation drafter", self.drafter, DRAFTERS)
        if self.drafter == "model":
            if self.draft_model is None:
                raise ValueError(
                    "speculation drafter 'model' needs draft_model, a smaller model preset (e.g. "
                    "'llama-3.1-8b'); or use drafter 'heads' or 'ngram'"
                )
            if not isinstance(self.draft_model, str):
                raise ValueError(f"draft_model must be a model preset's name, got {self.draft_model!r}")
            try:
                get_model(self.draft_model)  # an unknown name is refused here, with the known ones
            except ValueError as error:
                raise ValueError(f"speculation draft_model: {error}") from None
        elif self.draft_model is not None:
            raise ValueError(f"draft_model is only for drafter 'model'; drafter {self.drafter!r} takes none")
        bounded_number("speculation draft_layers", self.draft_layers, float(MAX_PROPOSED), 1e-3)
        if self.acceptance_concentration is not None:
            bounded_number(
                "speculation acceptance_concentration",
                self.acceptance_concentration,
                MAX_CONCENTRATION,
                MIN_CONCENTRATION,
            )
        count("speculation seed", self.seed, minimum=0, maximum=MAX_SEED)

    def describe(self) -> dict[str, object]:
        return {
            "drafter": self.drafter,
            "draft_model": self.draft_model,
            "draft_layers": self.draft_layers,
            "proposed": self.proposed,
            "acceptance": self.acceptance,
            "acceptance_concentration": self.acceptance_concentration,
            "seed": self.seed,
        }


class Speculator:
    """One run's speculative decoding: each request's acceptance and draws, the drafter's costs, the tally."""

    def __init__(self, config: Speculation) -> None:
        self.config = config
        self.proposed = config.proposed
        self._requests: dict[int, tuple[random.Random, float]] = {}
        self._drafts: dict[int, tuple[StepCost | None, float]] = {}  # by id of the target's StepCost
        self._costs: list[StepCost] = []  # keeps those ids alive and distinct
        self.sequence_steps = 0  # (sequence, decode step) pairs
        self.tokens = 0  # tokens those wrote
        self.accepted = 0  # proposals accepted (before capping at the request's end)
        self.draft_s = 0.0

    def check(self, setup: Setup) -> None:
        """Refuse a drafter that cannot draft for ``setup`` (a draft model for a size-only target ...)."""
        c = self.config
        checked_drafter(setup, c.drafter, c.draft_model, c.draft_layers)

    def memory_plan(self, setup: Setup) -> MemoryPlan:
        """``setup``'s memory with the drafter beside the target (its weights, and its cache for every
        token the target caches), so the pool admits only what fits with it."""
        c = self.config
        draft, layers = checked_drafter(setup, c.drafter, c.draft_model, c.draft_layers)
        return drafter_memory_plan(setup, c.drafter, draft, layers)

    def instance(self, index: int, memory: KVMemory, *, stop_after_prefill: bool = False) -> Instance:
        return SpeculativeInstance(index, memory, self, stop_after_prefill=stop_after_prefill)

    def _request(self, seq: Sequence) -> tuple[random.Random, float]:
        state = self._requests.get(seq.id)
        if state is None:
            c = self.config
            rng = random.Random(f"speculation/{c.seed}/{seq.id}")
            a = c.acceptance
            if c.acceptance_concentration is not None:
                drawn = rng.betavariate(a * c.acceptance_concentration, (1 - a) * c.acceptance_concentration)
                a = drawn if 0.0 <= drawn <= 1.0 else a  # (a float overflow in the draw: keep the mean)
            state = self._requests[seq.id] = (rng, a)
        return state

    def step_tokens(self, seq: Sequence, left: int) -> int:
        """Tokens ``seq`` writes in this step: 1 + its accepted prefix, at most ``left``."""
        rng, a = self._request(seq)
        accepted = accepted_prefix(rng, a, self.proposed)
        self.sequence_steps += 1
        self.accepted += accepted
        tokens = min(1 + accepted, left)
        self.tokens += tokens
        return tokens

    def _draft(self, cost: StepCost) -> tuple[StepCost | None, float]:
        found = self._drafts.get(id(cost))
        if found is None:
            c = self.config
            draft, layers = checked_drafter(cost.setup, c.drafter, c.draft_model, c.draft_layers)
            found = (StepCost(draft, kernels_only=True) if draft is not None else None, layers)
            self._drafts[id(cost)] = found
            self._costs.append(cost)
        return found

    def step_time(self, inst: Instance, cost: StepCost, chunks: list[tuple[int, int]]) -> StepTime:
        """A speculative step of ``inst``'s decoding sequences, with ``chunks`` of prompts beside them."""
        contexts = inst.decode_contexts()
        verify = cost.verify_time(contexts, self.proposed, chunks)
        draft = self._draft_time(cost, contexts)
        self.draft_s += draft[0]
        return (verify[0] + draft[0], verify[1] + draft[1], verify[2] + draft[2])

    def _draft_time(self, cost: StepCost, contexts: list[int]) -> StepTime:
        """The drafter's k steps at this batch (see :func:`calculators.speculative.speculative_decoding`)."""
        c = self.config
        n = len(contexts)
        if c.drafter == "ngram" or not n:
            return (0.0, 0.0, 0.0)
        draft, layers = self._draft(cost)
        if draft is None:  # heads: a share of the target's plain decode step at this batch
            share = heads_draft_share(cost.setup, self.proposed, layers)
            plain = cost.time(n, _capped(contexts, cost.window))
            return (share * plain[0], share * plain[1], share * plain[2])
        steps = list(zip(*(draft_contexts(ctx, self.proposed) for ctx in contexts), strict=True))
        total = [0.0, 0.0, 0.0]
        for step in steps:
            seconds, compute, memory = draft.time(n, _capped(step, draft.window))
            total[0] += seconds
            total[1] += compute
            total[2] += memory
        return (total[0], total[1], total[2])

    def summary(self) -> dict[str, object]:
        c = self.config
        drawn = [a for _, a in self._requests.values()]
        steps = self.sequence_steps
        return {
            **c.describe(),
            "expected_tokens_per_step": expected_tokens_per_step(c.acceptance, c.proposed),
            "mean_request_acceptance": math.fsum(drawn) / len(drawn) if drawn else None,
            "tokens_per_step": self.tokens / steps if steps else None,
            "accepted_share": self.accepted / (steps * c.proposed) if steps else None,
            "draft_time_s": self.draft_s,
        }


def _capped(contexts: Iterable[int], window: int | None) -> int:
    """Keys the contexts attend to in total: each context, or the sliding window when shorter."""
    if window is None:
        return sum(contexts)
    return sum(x if x < window else window for x in contexts)


class SpeculativeInstance(Instance):
    """An engine instance whose decode steps verify k proposals per sequence (see the module's notes)."""

    def __init__(
        self, index: int, memory: KVMemory, speculator: Speculator, *, stop_after_prefill: bool = False
    ) -> None:
        super().__init__(index, memory, stop_after_prefill=stop_after_prefill)
        self.speculator = speculator

    def decode_rows(self) -> int:
        return len(self.decoding) * (self.speculator.proposed + 1)

    def decode_lookahead(self) -> int:
        return self.speculator.proposed

    def _join_decode(self, seq: Sequence) -> None:
        # Only the bookkeeping every instance does: a step's token count is drawn, so no finish step or
        # block need can be scheduled ahead as the one-token-a-step instance does.
        self._enter_decode(seq)

    def _keep(self, seq: Sequence, tokens: int) -> None:
        """Free the private blocks ``seq`` holds past ``tokens`` tokens of cache (rejected proposals)."""
        keep = self.memory.slots_for(tokens, seq.prompt, seq.output) - len(seq.shared)
        if seq.slots > keep >= 0:
            self.memory.free += seq.slots - keep
            seq.slots = keep

    def reserve_decode_step(self) -> None:
        """Give each decoding sequence blocks for its context and the k proposals, preempting (the most
        recently arrived running sequence first) when the blocks run out."""
        j = len(self.decode_ends)
        k = self.speculator.proposed
        mem = self.memory
        for seq in list(self.decoding.values()):
            if seq.id not in self.decoding:  # preempted to make room for an earlier one
                continue
            context = seq.ctx_at_join + j - seq.join
            need = mem.slots_for(context + k, seq.prompt, seq.output) - seq.slots - len(seq.shared)
            if need <= 0:
                continue
            while mem.free < need:
                victim = self._latest_running()
                self.preempt(victim)
                if victim is seq:
                    break
            if seq.id not in self.decoding:
                continue
            mem.free -= need
            seq.slots += need
            if self.prefix is not None:
                self.prefix.evict_to(mem.free)

    def _leave_decode(self, seq: Sequence, last: int) -> None:
        super()._leave_decode(seq, last)
        self._keep(seq, seq.prompt + seq.generated - 1)  # a preempted sequence gives its lookahead back

    def finish_decode_step(self, now: float) -> None:
        """Record a verification step that ended at ``now``: draw each sequence's tokens, free the blocks of
        rejected proposals, and retire the sequences that wrote their last token."""
        self.decode_ends.append(now)
        j = len(self.decode_ends) - 1
        done: list[Sequence] = []
        speculator = self.speculator
        for seq in self.decoding.values():
            before = seq.gen_at_join + j - seq.join  # tokens written before this step
            tokens = speculator.step_tokens(seq, seq.output - before)
            if tokens > 1:
                extra = tokens - 1
                seq.gen_at_join += extra
                seq.ctx_at_join += extra
                self.offset_sum += extra
                seq.bursts.append((self.index, j, extra))
            if before + tokens >= seq.output:
                done.append(seq)
            else:  # the cache keeps the context and the accepted proposals: the next context less one
                self._keep(seq, seq.ctx_at_join + j - seq.join)
        for seq in done:
            self._leave_decode(seq, j)
            self._finish(seq, now)
