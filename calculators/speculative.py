"""Speculative decoding: a cheap drafter proposes k tokens, the target model checks them all in one pass.

Why it pays: a decode step at a small batch is memory-bound, so the target reads its weights once whether it
processes one token per sequence or k + 1. Verifying k proposed tokens costs about one decode step, and with
per-token acceptance rate a the step yields (1 - a^(k+1)) / (1 - a) tokens on average when each proposal is
accepted independently [@speculative-decoding]. Why it stops paying: as the batch grows the verification
pass, batch x (k + 1) tokens, crosses the ridge point and becomes compute-bound, and then every rejected
token costs FLOPs the plain decode step never spends; the speed-up shrinks and turns into a slow-down.

Three drafters, each costed with the same pass model (:mod:`calculators.passes`) as the target:

``model``  a second, smaller model on the same GPUs: k of its own decode steps at the batch (kernels only:
           the engine's per-step overhead is paid once per speculative step).
``heads``  draft heads (Medusa/EAGLE-style): each of k draft steps reads ``draft_layers`` decoder layers of
           the target's size and the target's output layer (vocabulary x hidden), which turns the head's
           hidden state into a token (EAGLE's drafter is one decoder layer and reuses the target's output
           layer: 1.0; a Medusa head is one residual block and its own output layer), taken as that share of
           the target's weights, and so of a target decode step.
``ngram``  n-gram (prompt) lookup: no GPU work to propose.

Memory: a speculating engine holds more than a plain one, and a batch that fits for plain decoding may not
(:func:`drafter_memory_plan`): each sequence caches its k proposals too, a draft model's weights sit beside
the target's and it keeps a KV cache of its own for every sequence, and EAGLE-style heads keep one for their
``draft_layers`` layers; n-gram lookup holds nothing on the GPU.

The verifier is one :func:`calculators.passes.mixed_step` of batch x (k + 1) tokens on the cached contexts
(as a chunk per sequence or as k + 1 decode tokens each, whichever is faster), so attention and the
compute/memory balance are those of the rest of the course, in both modes (the spec-peak bound and the
calibrated estimate). Its attention is never taken as cheaper than the plain step's: it reads the same caches
with more queries, so it pays at least what decoding pays for them (in the calibrated mode, decode attention's
fixed cost per sequence, which the prefill fit of the chunk form does not carry). The verifier therefore never
costs less than a plain decode step, and the speed-up never exceeds the expected tokens per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from calculators.memory import MemoryPlan
from calculators.models import Model, get_model
from calculators.passes import PassResult, Setup, decode_step, mixed_step
from calculators.validation import bounded_number, choice, count

__all__ = [
    "DRAFTERS",
    "MAX_PROPOSED",
    "SpeculativeResult",
    "acceptance_for_tokens",
    "attention_at_least",
    "best_proposed",
    "break_even_batch",
    "checked_drafter",
    "draft_contexts",
    "draft_kernels_s",
    "drafter_memory_plan",
    "expected_tokens_per_step",
    "heads_draft_share",
    "speculative_decoding",
    "speculative_max_batch",
    "verify_chunk",
    "verify_decode_contexts",
]

DRAFTERS = ("model", "heads", "ngram")
MAX_PROPOSED = 64  # no engine proposes more per step; it bounds every search below
# break_even_batch looks no further: far past the hundreds of sequences engines batch
MAX_SEARCH_BATCH = 1 << 16


def _acceptance(value: object) -> float:
    """The per-token acceptance rate, checked: a number in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(
            f"acceptance must be a number in [0, 1) (the chance each proposed token is accepted), "
            f"got {value!r}"
        )
    if not 0 <= value < 1:
        raise ValueError(
            f"acceptance must be in [0, 1) (the chance each proposed token is accepted), got {value!r}; "
            "1 would mean the drafter is never wrong: use a value below 1 such as 0.8"
        )
    return float(value)


def expected_tokens_per_step(acceptance: float, proposed: int) -> float:
    """Tokens one verification step yields on average: (1 - a^(k+1)) / (1 - a) for independent acceptance.

    The accepted prefix of the k proposals plus the one token the target adds itself (the correction at the
    first rejection, or a bonus token when all k pass): 1 + a + a^2 + ... + a^k.
    """
    a = _acceptance(acceptance)
    k = count("proposed", proposed, maximum=MAX_PROPOSED)
    return (1.0 - a ** (k + 1)) / (1.0 - a)


def acceptance_for_tokens(tokens_per_step: float, proposed: int) -> float:
    """The per-token acceptance rate a at which k proposals yield ``tokens_per_step`` on average.

    Papers and benchmarks often report the mean accepted length (tokens per verification step, tau) rather
    than a; this inverts (1 - a^(k+1)) / (1 - a) = tau, which rises with a, by bisection.
    """
    k = count("proposed", proposed, maximum=MAX_PROPOSED)
    tau = bounded_number("tokens_per_step", tokens_per_step, float(k + 1), 1.0)
    if tau >= k + 1:
        raise ValueError(
            f"tokens_per_step must be below proposed + 1 = {k + 1} (every proposal accepted), got "
            f"{tokens_per_step!r}; use a larger proposed"
        )
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        if (1.0 - middle ** (k + 1)) / (1.0 - middle) < tau:
            low = middle
        else:
            high = middle
        if high - low < 1e-15:
            break
    return low


@dataclass(frozen=True)
class SpeculativeResult:
    """One speculative decoding step against a plain decode step of the same batch and context."""

    drafter: str  # "model", "heads" or "ngram"
    acceptance: float  # per-token acceptance rate a
    proposed: int  # tokens proposed per step, k
    batch: int
    context_tokens: int
    expected_tokens_per_step: float  # (1 - a^(k+1)) / (1 - a)
    draft_time_s: float  # the drafter's k steps (0 for n-gram lookup)
    verify: PassResult  # the target's pass over batch x (k + 1) tokens
    plain: PassResult  # the target's plain decode step at the same batch
    draft_bound_time_s: float  # the drafter's time at spec peaks
    verify_bound_time_s: float  # the verifier's time at spec peaks (its faster form there)
    warnings: tuple[str, ...]
    mode: str  # the setup's mode: "peak" (a bound) or "calibrated" (an estimate)

    @property
    def step_time_s(self) -> float:
        """Seconds of one speculative step: the drafter's k steps, then the verification pass."""
        return self.draft_time_s + self.verify.time_s

    @property
    def time_per_token_s(self) -> float:
        """Seconds per output token of each sequence with speculation."""
        return self.step_time_s / self.expected_tokens_per_step

    @property
    def plain_time_per_token_s(self) -> float:
        """Seconds per output token of plain decoding: one decode step."""
        return self.plain.time_s

    @property
    def speedup(self) -> float:
        """Plain time per token over speculative time per token (below 1: a slow-down)."""
        return self.plain.time_s * self.expected_tokens_per_step / self.step_time_s

    @property
    def bound_speedup(self) -> float:
        """The same ratio with every pass at spec peaks (equal to ``speedup`` in peak mode)."""
        step = self.draft_bound_time_s + self.verify_bound_time_s
        return self.plain.bound_time_s * self.expected_tokens_per_step / step

    def as_dict(self) -> dict[str, object]:
        """Flat record with unit-suffixed keys, for JSON output and the browser."""
        return {
            "drafter": self.drafter,
            "acceptance": self.acceptance,
            "proposed": self.proposed,
            "batch": self.batch,
            "context_tokens": self.context_tokens,
            "expected_tokens_per_step": self.expected_tokens_per_step,
            "draft_time_s": self.draft_time_s,
            "verify_time_s": self.verify.time_s,
            "verify_bound": self.verify.bound,
            "plain_step_time_s": self.plain.time_s,
            "plain_step_bound": self.plain.bound,
            "step_time_s": self.step_time_s,
            "time_per_token_s": self.time_per_token_s,
            "plain_time_per_token_s": self.plain_time_per_token_s,
            "speedup": self.speedup,
            "bound_speedup": self.bound_speedup,
            "mode": self.mode,
            "warnings": list(self.warnings),
        }


def _draft_setup(setup: Setup, draft_model: str | Model) -> Setup:
    """The draft model on the target's GPUs, formats, level and mode (its memory is checked beside the
    target's, by :func:`drafter_memory_plan`)."""
    model = get_model(draft_model)
    if setup.level == "refined" and not model.shapes_known:
        raise ValueError(
            f"draft_model {model.name!r} is given only by its size; level 'refined' needs a model preset"
        )
    expert_parallel = setup.expert_parallel and model.moe is not None
    return replace(setup, model=model, pipeline_stages=1, expert_parallel=expert_parallel, ignore_memory=True)


def checked_drafter(
    setup: Setup, drafter: str, draft_model: str | Model | None, draft_layers: float
) -> tuple[Setup | None, float]:
    """The drafter's setup (drafter "model": the draft model on the target's GPUs; else None) and its
    ``draft_layers``, checked; every wrong value gets a message naming the field."""
    if not isinstance(setup, Setup):
        raise ValueError(f"setup must be a Setup (see make_setup), got {setup!r}")
    choice("drafter", drafter, DRAFTERS)
    draft: Setup | None = None
    if drafter == "model":
        if draft_model is None:
            raise ValueError(
                "drafter 'model' needs draft_model, a smaller model preset (e.g. 'llama-3.1-8b'); "
                "or use drafter 'heads' or 'ngram'"
            )
        draft = _draft_setup(setup, draft_model)
    elif draft_model is not None:
        raise ValueError(f"draft_model is only for drafter 'model'; drafter {drafter!r} takes none")
    layers = bounded_number("draft_layers", draft_layers, float(setup.model.layers), 1e-3)
    return draft, layers


def verify_chunk(context_tokens: int, proposed: int) -> tuple[int, int]:
    """The verifier's work for one sequence as a prefill chunk: (tokens, tokens cached before).

    The last accepted token (the input a plain decode step would take, at context ``context_tokens``) and the
    k proposals on top of it, k + 1 tokens, after the ``context_tokens - 1`` tokens already cached.
    """
    return (proposed + 1, context_tokens - 1)


def verify_decode_contexts(context_tokens: int, proposed: int) -> list[int]:
    """The verifier's work for one sequence as decode tokens: k + 1 of them, each attending one more key."""
    return [context_tokens + i for i in range(proposed + 1)]


def draft_contexts(context_tokens: int, proposed: int) -> list[int]:
    """The context of each of a draft model's k decode steps for a sequence at ``context_tokens``."""
    return [context_tokens + i for i in range(proposed)]


def draft_kernels_s(step: PassResult) -> float:
    """Seconds a draft model's decode step adds inside the target's engine step: its kernels only.

    The drafter runs inside the target's engine step, so the per-step overhead (scheduling, sampling; the
    calibrated mode's engine overhead) is paid once per speculative step, by the verifier, not once per
    draft token.
    """
    return step.time_s - step.overhead_s


def heads_draft_share(setup: Setup, proposed: int, draft_layers: float) -> float:
    """Draft heads' k steps as a share of one target decode step: k x (``draft_layers`` decoder layers and
    the target's output layer), see :func:`_head_step_share`."""
    return proposed * _head_step_share(setup, draft_layers)


def drafter_memory_plan(setup: Setup, drafter: str, draft: Setup | None, layers: float) -> MemoryPlan:
    """The target's memory plan with its drafter beside it: a draft model's weights on the same GPUs and its
    KV cache for every token the target caches; draft heads' ``layers`` decoder layers of the target's mean
    size, and their cache for those layers (EAGLE's drafter is a decoder layer with its own cache); n-gram
    lookup adds nothing."""
    plan = setup.memory
    if draft is not None:
        weights, kv_per_token = draft.weight_bytes, draft.kv_bytes_per_token
    elif drafter == "heads" and setup.model.shapes_known:
        weights = layers * _mean_layer_params(setup) * setup.weight_bytes / setup.params
        kv_per_token = setup.kv_bytes_per_token * layers / setup.model.layers
    else:
        return plan
    return replace(
        plan,
        weight_bytes_per_gpu=plan.weight_bytes_per_gpu + weights / plan.gpus,
        kv_bytes_per_token=plan.kv_bytes_per_token + kv_per_token,
    )


def speculative_max_batch(
    setup: Setup,
    *,
    context_tokens: int,
    proposed: int,
    drafter: str = "heads",
    draft_model: str | Model | None = None,
    draft_layers: float = 1.0,
) -> int:
    """The largest batch that fits while speculating: each sequence caching ``context_tokens`` plus the k
    proposals, beside the drafter (:func:`drafter_memory_plan`); 0 when none does."""
    draft, layers = checked_drafter(setup, drafter, draft_model, draft_layers)
    k = count("proposed", proposed, maximum=MAX_PROPOSED)
    context = count("context_tokens", context_tokens)
    return drafter_memory_plan(setup, drafter, draft, layers).max_sequences(context + k)


def speculative_decoding(
    setup: Setup,
    *,
    acceptance: float,
    proposed: int,
    batch: int = 1,
    context_tokens: int = 1,
    drafter: str = "heads",
    draft_model: str | Model | None = None,
    draft_layers: float = 1.0,
) -> SpeculativeResult:
    """One speculative step of ``batch`` sequences at ``context_tokens`` tokens, against plain decoding.

    ``acceptance`` is the per-token acceptance rate a (0 <= a < 1), ``proposed`` the tokens k proposed per
    step. ``drafter`` is "model" (with ``draft_model``, a preset name or :class:`Model`), "heads" (each draft
    step costs ``draft_layers`` target layers and the target's output layer) or "ngram" (free). Times follow
    ``setup.mode``; the spec-peak figure is always beside them (``bound_speedup``).
    """
    draft, layers = checked_drafter(setup, drafter, draft_model, draft_layers)
    tokens = expected_tokens_per_step(acceptance, proposed)
    k = count("proposed", proposed, maximum=MAX_PROPOSED)
    batch = count("batch", batch)
    context = count("context_tokens", context_tokens)
    plan = drafter_memory_plan(setup, drafter, draft, layers)
    cached = plan.cached_tokens(context + k)
    memory = plan.check(batch * cached, lambda: f"speculating on {batch:,} sequences of {context:,} tokens")
    plain = decode_step(setup, batch=batch, context_tokens=context)
    # The verifier: per sequence, the last accepted token and the k proposals on top of the cached context.
    # The pass model has two forms for it, and each over-counts something a verification kernel does not:
    # a chunk of k + 1 tokens reads the cache once but takes prefill attention (MLA re-expands the whole
    # cached latent; one logits row per chunk), k + 1 decode tokens take the decode kernels but read the
    # cache k + 1 times. An engine runs whichever kernel suits, so the faster form is taken.
    as_chunk = mixed_step(setup, prefill_chunks=[verify_chunk(context, k)] * batch)
    as_chunk = attention_at_least(as_chunk, plain)  # the same caches, more queries: never cheaper
    # (The decode form would count each sequence's cache k + 1 times against memory: the chunk form checks.)
    unchecked = replace(setup, ignore_memory=True)
    as_decode = mixed_step(unchecked, decode_contexts=verify_decode_contexts(context, k) * batch)
    verify = min(as_chunk, as_decode, key=lambda p: p.time_s)
    verify_bound = min(as_chunk.bound_time_s, as_decode.bound_time_s)
    warnings = list(dict.fromkeys([*memory, *plain.warnings, *as_chunk.warnings]))
    if draft is not None:
        # The drafter runs inside the target's engine step: its kernels only (see draft_kernels_s).
        steps = [decode_step(draft, batch=batch, context_tokens=c) for c in draft_contexts(context, k)]
        draft_time = sum(draft_kernels_s(s) for s in steps)
        draft_bound = sum(s.bound_time_s - draft.step_overhead_s for s in steps)
        if draft.model.params >= setup.model.params:
            warnings.append(
                f"the draft model {draft.model.name} is not smaller than the target {setup.model.name}"
            )
    elif drafter == "heads":
        if not setup.model.shapes_known:
            warnings.append(
                f"{setup.model.name} is given by its size only: the heads' cost is a share of "
                f"{setup.model.layers} layers, a placeholder count"
            )
        share = heads_draft_share(setup, k, layers)
        draft_time, draft_bound = share * plain.time_s, share * plain.bound_time_s
    else:
        draft_time = draft_bound = 0.0
    return SpeculativeResult(
        drafter, float(acceptance), k, batch, context, tokens, draft_time, verify, plain, draft_bound,
        verify_bound, tuple(warnings), setup.mode,
    )  # fmt: skip


def _head_step_share(setup: Setup, layers: float) -> float:
    """One draft step of draft heads as a share of the target's weights (those a token passes through):
    ``layers`` decoder layers of the target's mean size, plus the target's output layer (vocabulary x hidden),
    which every head needs to turn its hidden state into a token."""
    model = setup.model
    weights = setup.params if model.moe is None else model.active_params
    output = float(model.vocab_size * model.hidden_size)
    return (layers * _mean_layer_params(setup, weights) + output) / weights


def _mean_layer_params(setup: Setup, weights: float | None = None) -> float:
    """One decoder layer's parameters, on average: ``weights`` (all of the target's by default) less its
    embedding and output layers, over its layers."""
    model = setup.model
    total = setup.params if weights is None else weights
    output = float(model.vocab_size * model.hidden_size)
    return (total - output * (1 if model.tied_embeddings else 2)) / model.layers


def attention_at_least(verify: PassResult, plain: PassResult) -> PassResult:
    """The chunk-form verifier with its attention raised, where needed, to the plain step's attention time.

    The check attends over the same caches as the plain step, with k + 1 queries per sequence instead of one,
    so its attention costs at least as much; the prefill-chunk form can price it lower only because the
    calibrated prefill fit has no fixed cost per sequence, which the decode fit has (Vidur's profiles).
    """
    ops = [op for op in verify.operators if op.kind == "attention"]
    extra = plain.attention_time_s - verify.attention_time_s
    if extra <= 0 or len(ops) != 1:
        return verify
    raised = [
        op._replace(time_s=op.time_s + extra) if op.kind == "attention" else op for op in verify.operators
    ]
    bound = verify.bound_time_s + (extra if verify.mode == "peak" else 0.0)
    return replace(verify, operators=tuple(raised), time_s=verify.time_s + extra, bound_time_s=bound)


def best_proposed(
    setup: Setup,
    *,
    acceptance: float,
    batch: int = 1,
    context_tokens: int = 1,
    drafter: str = "heads",
    draft_model: str | Model | None = None,
    draft_layers: float = 1.0,
    max_proposed: int = 16,
) -> SpeculativeResult:
    """The k in 1..``max_proposed`` with the highest speed-up at this acceptance rate and batch.

    More proposals add tokens with diminishing returns (a^k) while the drafter's cost grows with k and the
    verifier's once it is compute-bound, so the best k falls as acceptance falls and as the batch grows.
    """
    most = count("max_proposed", max_proposed, maximum=MAX_PROPOSED)

    def at(k: int) -> SpeculativeResult:
        return speculative_decoding(
            setup, acceptance=acceptance, proposed=k, batch=batch, context_tokens=context_tokens,
            drafter=drafter, draft_model=draft_model, draft_layers=draft_layers,
        )  # fmt: skip

    results = [at(k) for k in range(1, most + 1)]
    return max(results, key=lambda r: r.speedup)


def break_even_batch(
    setup: Setup,
    *,
    acceptance: float,
    proposed: int,
    context_tokens: int = 1,
    drafter: str = "heads",
    draft_model: str | Model | None = None,
    draft_layers: float = 1.0,
) -> int | None:
    """The smallest batch at which speculation is slower than plain decoding (speed-up below 1).

    Memory is not checked here (the batch may not fit: compare with the setup's ``max_sequences``). None
    when speculation still pays at 65,536 sequences: far past any engine's batch, and the verifying step is
    costed sequence by sequence, so looking further would outrun an expression's 2-second budget (a million
    took 5 s). Already slower at batch 1 returns 1. The speed-up falls as the batch grows, so the batch is
    found by doubling and then bisection.
    """
    loose = replace(setup, ignore_memory=True)

    def slower(batch: int) -> bool:
        result = speculative_decoding(
            loose, acceptance=acceptance, proposed=proposed, batch=batch, context_tokens=context_tokens,
            drafter=drafter, draft_model=draft_model, draft_layers=draft_layers,
        )  # fmt: skip
        return result.speedup < 1.0

    if slower(1):
        return 1
    low, high = 1, 2
    while not slower(high):
        if high >= MAX_SEARCH_BATCH:
            return None
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if slower(middle):
            high = middle
        else:
            low = middle
    return high
