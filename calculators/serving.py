"""What a user and an operator feel: time to first token, time per output token, throughput, memory.

These are built from the passes in :mod:`calculators.passes`; nothing here has a roofline formula of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from calculators.passes import PassResult, Setup, decode_step, prefill
from calculators.validation import count


@dataclass(frozen=True)
class RequestTiming:
    """One batch of identical requests from prompt to last output token, all times in seconds."""

    prompt_tokens: int  # tokens in each prompt
    output_tokens: int  # tokens each request writes, the first one (made by prefill) included
    batch: int  # identical requests served together
    prefill: PassResult  # the prefill pass over every prompt of the batch
    first_decode: PassResult  # the step right after prefill, at context prompt_tokens + 1
    decode_time_s: float  # all decode steps together
    decode_steps: int  # output_tokens - 1: prefill already produced the first token

    @property
    def time_to_first_token_s(self) -> float:
        """Prefill produces the first output token, so it arrives when prefill ends (no queueing)."""
        return self.prefill.time_s

    @property
    def time_per_output_token_s(self) -> float:
        """Mean time between output tokens after the first (one decode step each)."""
        if self.decode_steps == 0:
            return 0.0
        return self.decode_time_s / self.decode_steps

    @property
    def total_time_s(self) -> float:
        """Seconds from the request's start to its last output token (prefill plus every decode step)."""
        return self.prefill.time_s + self.decode_time_s

    @property
    def tokens_per_s_per_request(self) -> float:
        """Output tokens per second one user sees during decode (1 / time per output token)."""
        return 0.0 if self.decode_steps == 0 else 1.0 / self.time_per_output_token_s

    @property
    def tokens_per_s_total(self) -> float:
        """Output tokens per second over the whole batch and the whole request, prefill included."""
        return self.batch * self.output_tokens / self.total_time_s

    @property
    def prefill_cost_in_decode_steps(self) -> float:
        """How many decode steps take as long as this prefill: the lesson's "2,000 tokens = 7 steps"."""
        return self.prefill.time_s / self.first_decode.time_s

    def as_dict(self) -> dict[str, float | int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "batch": self.batch,
            "prefill_time_s": self.prefill.time_s,
            "decode_step_time_s": self.first_decode.time_s,
            "decode_steps": self.decode_steps,
            "time_to_first_token_s": self.time_to_first_token_s,
            "time_per_output_token_s": self.time_per_output_token_s,
            "total_time_s": self.total_time_s,
            "tokens_per_s_per_request": self.tokens_per_s_per_request,
            "tokens_per_s_total": self.tokens_per_s_total,
            "prefill_cost_in_decode_steps": self.prefill_cost_in_decode_steps,
        }


def request_timing(
    setup: Setup, prompt_tokens: int, output_tokens: int = 1, *, batch: int = 1
) -> RequestTiming:
    """Time ``batch`` identical requests: one prefill, then ``output_tokens - 1`` decode steps.

    Decode steps get slower as the context grows when KV traffic is counted (refined level); their sum is
    computed exactly, in closed form over the stretches where the step time is affine in the context.
    """
    prompt = count("prompt_tokens", prompt_tokens)
    output = count("output_tokens", output_tokens)
    batch = count("batch", batch)
    setup.check_fits(batch, prompt + output)
    first_pass = prefill(setup, prompt, batch=batch)
    first_decode = decode_step(setup, batch=batch, context_tokens=prompt + 1)
    steps = output - 1
    decode_total = _sum_decode_steps(setup, batch, first_context=prompt + 1, steps=steps)
    return RequestTiming(prompt, output, batch, first_pass, first_decode, decode_total, steps)


def _sum_decode_steps(setup: Setup, batch: int, *, first_context: int, steps: int) -> float:
    """Sum of decode step times for contexts ``first_context`` .. ``first_context + steps - 1``, exactly.

    A step's compute time and memory time are each affine in the tokens it attends to, which is the context
    up to the sliding window and constant beyond it. So the step time is the larger of two affine functions
    on at most two stretches; on each it switches bound at most once, and between switches it is affine, where
    a sum of n terms is n times the mean of the first and last. That needs a handful of passes instead of
    one per step, which keeps a widget fast at 100,000 output tokens.
    """
    if steps <= 0:
        return 0.0
    last = first_context + steps - 1
    window = setup.model.sliding_window
    stretches = [(first_context, last)]
    if window is not None and first_context < window < last:
        stretches = [(first_context, window), (window + 1, last)]
    return sum(_sum_affine_stretch(setup, batch, lo, hi) for lo, hi in stretches)


def _context_gap(result: PassResult) -> float:
    """Compute minus memory time of the operators that grow with context (attention over the KV cache).

    Every other operator of a decode step costs the same at any context, so the step time is a constant
    plus max(compute, memory) of attention: affine in the context on either side of this gap's sign change.
    """
    return sum(op.compute_time_s - op.memory_time_s for op in result.operators if op.kind == "attention")


def _sum_affine_stretch(setup: Setup, batch: int, lo: int, hi: int) -> float:
    """Sum of step times over contexts lo..hi, where compute and memory time are affine in context."""
    a = decode_step(setup, batch=batch, context_tokens=lo)
    b = decode_step(setup, batch=batch, context_tokens=hi)
    gap_lo = _context_gap(a)
    gap_hi = _context_gap(b)
    if hi == lo or (gap_lo >= 0) == (gap_hi >= 0):
        return (hi - lo + 1) * (a.time_s + b.time_s) / 2.0
    # The bound switches inside the stretch: split at the last context before the affine gap changes sign.
    split = lo + int(gap_lo / (gap_lo - gap_hi) * (hi - lo))
    split = min(max(split, lo), hi - 1)
    return _sum_affine_stretch(setup, batch, lo, split) + _sum_affine_stretch(setup, batch, split + 1, hi)


@dataclass(frozen=True)
class MemoryFootprint:
    """Bytes that must sit in GPU memory to serve ``batch`` sequences of ``context_tokens`` tokens.

    ``capacity_bytes`` is what an engine leaves for weights and KV cache over all GPUs: the memory the devices
    report, times the utilisation cap, less the runtime reserve and the activation workspace
    (see :mod:`calculators.memory`).
    """

    weight_bytes: float  # all weights in their formats, every copy the GPUs hold, bytes
    kv_cache_bytes: float  # KV cache of every sequence at its context length, bytes
    capacity_bytes: float  # memory left for weights and KV cache over all GPUs, bytes

    @property
    def total_bytes(self) -> float:
        """Weights plus KV cache, bytes."""
        return self.weight_bytes + self.kv_cache_bytes

    @property
    def fits(self) -> bool:
        """Whether weights and KV cache fit in the GPUs' memory."""
        return self.total_bytes <= self.capacity_bytes

    def as_dict(self) -> dict[str, float | bool]:
        return {
            "weight_bytes": self.weight_bytes,
            "kv_cache_bytes": self.kv_cache_bytes,
            "total_bytes": self.total_bytes,
            "capacity_bytes": self.capacity_bytes,
            "fits": self.fits,
        }


def memory_footprint(setup: Setup, *, batch: int = 1, context_tokens: int = 1) -> MemoryFootprint:
    """Weights plus KV cache, against the memory an engine leaves for them on all the setup's GPUs."""
    batch = count("batch", batch)
    context = count("context_tokens", context_tokens)
    plan = setup.memory
    weights = plan.weight_bytes_per_gpu * plan.gpus
    capacity = weights + plan.kv_budget_bytes
    return MemoryFootprint(weights, setup.kv_cache_bytes(batch, context), capacity)


def max_batch(setup: Setup, context_tokens: int) -> int:
    """The largest batch whose KV cache fits at ``context_tokens`` each, in closed form (0 if the weights
    alone don't fit)."""
    context = count("context_tokens", context_tokens)
    if not setup.model.shapes_known:
        raise ValueError(
            f"max_batch needs the KV cache size, but {setup.model.name!r} is given only by its size; "
            "use a model preset"
        )
    return setup.memory.max_sequences(context)


# A decode step of more sequences than this is beyond any engine's batch (vLLM's default is 256).
COMPUTE_BOUND_SEARCH_LIMIT = 1 << 20


def compute_bound_batch(setup: Setup, context_tokens: int) -> int:
    """The smallest batch at which a decode step at ``context_tokens`` each is compute-bound; 0 if none is.

    Memory is not checked (this asks where the bound changes, not what fits; compare :func:`max_batch`).
    With weights only, a step turns compute-bound at the ridge point. Counting attention over the KV cache
    (``kv_traffic`` or the refined level) adds reads that grow with the batch as fast as the weights'
    FLOPs do and are never compute-bound themselves (a cached token is read for a handful of FLOPs), so
    past a context of a few hundred tokens no batch is compute-bound at all: then this returns 0.
    The step's bound only moves from memory to compute as the batch grows, so a doubling search then a
    bisection finds the first compute-bound batch with a few dozen steps.
    """
    context = count("context_tokens", context_tokens)
    what_if = replace(setup, ignore_memory=True)

    def compute_bound(batch: int) -> bool:
        return decode_step(what_if, batch=batch, context_tokens=context).bound == "compute"

    high = 1
    while not compute_bound(high):
        if high >= COMPUTE_BOUND_SEARCH_LIMIT:
            return 0
        high *= 2
    low = high // 2  # memory-bound (or 0)
    while high - low > 1:
        middle = (low + high) // 2
        if compute_bound(middle):
            high = middle
        else:
            low = middle
    return high


def longest_compute_bound_context(setup: Setup) -> int:
    """The longest context at which some decode batch is still compute-bound (0 if even 1 token is not).

    Beyond it the KV-cache reads outweigh the weights' arithmetic at every batch size.
    """
    if not compute_bound_batch(setup, 1):
        return 0
    low, high = 1, 2
    while compute_bound_batch(setup, high):
        if high >= COMPUTE_BOUND_SEARCH_LIMIT:
            return high
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if compute_bound_batch(setup, middle):
            low = middle
        else:
            high = middle
    return low


# Contexts beyond this are beyond any model's (Llama-3.1's is 131,072; the longest published, a few million).
ATTENTION_SEARCH_LIMIT = 1 << 23
PHASES = ("prefill", "decode")


def attention_takes_over(setup: Setup, phase: str = "prefill", batch: int = 1) -> int:
    """The shortest context at which attention takes longer than the weight products; 0 if none up to
    :data:`ATTENTION_SEARCH_LIMIT` tokens.

    ``phase="prefill"``: a prefill of ``batch`` prompts of that many tokens. Its weight products grow with
    the prompt and its causal attention with its square (every query attends to the keys before it), so
    attention wins past a prompt of about 4N / (attention FLOPs per key) tokens at spec peaks, where N
    counts the weights multiplied per token.

    ``phase="decode"``: one decode step of ``batch`` sequences at that context each. The weights are read
    once for the whole batch but each sequence reads its own cache, so attention wins past about
    (weight bytes) / (batch x KV bytes per token) at spec peaks.

    Times are the setup's mode (spec peaks or calibrated), so the two modes give different contexts: the
    calibrated attention kernels reach a smaller share of peak than the weight products. Memory is not checked
    (this asks where the times cross, not what fits; compare :func:`max_batch`), and attention is counted even
    where the setup leaves it out (the simple level without ``kv_traffic``), since it is what is asked about.
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")
    batch = count("batch", batch)
    what_if = replace(setup, ignore_memory=True, kv_traffic=True)

    def attention_wins(context: int) -> bool:
        if phase == "prefill":
            result = prefill(what_if, context, batch=batch)
        else:
            result = decode_step(what_if, batch=batch, context_tokens=context)
        return result.attention_time_s > result.weights_time_s

    # Below the crossing attention's share only shrinks towards short contexts (its fixed launch cost is
    # the one term that does not grow), so a doubling search then a bisection finds where it passes.
    low, high = 1, 2
    if attention_wins(low):
        return low
    while not attention_wins(high):
        if high >= ATTENTION_SEARCH_LIMIT:
            return 0
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if attention_wins(middle):
            high = middle
        else:
            low = middle
    return high
