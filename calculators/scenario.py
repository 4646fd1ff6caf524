"""A scenario: one model on one GPU setup, with every quantity a lesson, quiz or widget asks of it.

This is the object that lesson expressions, quiz answers, notebooks and the browser widgets all use, so that a
number means the same thing wherever it appears. It only delegates to the passes and serving modules.
"""

from __future__ import annotations

from calculators.hardware import GPU
from calculators.models import Model
from calculators.passes import PassResult, decode_step, make_setup, prefill
from calculators.roofline import ridge_point
from calculators.serving import (
    MemoryFootprint,
    RequestTiming,
    compute_bound_batch,
    longest_compute_bound_context,
    max_batch,
    memory_footprint,
    request_timing,
)


class Scenario:
    """``Scenario("dense-8b", "h100-sxm")`` is the prefill-vs-decode lesson's setting (BF16, spec peaks).

    Keyword arguments are those of :func:`calculators.passes.make_setup`: ``precision`` (the weight format),
    ``level`` ("simple" or "refined"), ``gpus``, ``compute_efficiency``, ``memory_efficiency``, and any
    :class:`calculators.passes.Setup` field (``kv_cache_format``, ``kv_traffic``, ``pipeline_stages``,
    ``ignore_memory``...).
    """

    def __init__(
        self,
        model: str | Model = "dense-8b",
        gpu: str | GPU = "h100-sxm",
        *,
        precision: str = "bf16",
        level: str = "simple",
        gpus: int = 1,
        compute_efficiency: float = 1.0,
        memory_efficiency: float = 1.0,
        **options: object,
    ) -> None:
        self.setup = make_setup(
            model,
            gpu,
            precision=precision,
            level=level,
            gpus=gpus,
            compute_efficiency=compute_efficiency,
            memory_efficiency=memory_efficiency,
            **options,  # type: ignore[arg-type]
        )

    def __repr__(self) -> str:
        s = self.setup
        return (
            f"Scenario({s.model.key!r}, {s.gpu.key!r}, precision={s.precision!r}, level={s.level!r}, "
            f"gpus={s.gpus})"
        )

    @property
    def model(self) -> Model:
        return self.setup.model

    @property
    def gpu(self) -> GPU:
        return self.setup.gpu

    @property
    def ridge_point_flop_per_byte(self) -> float:
        """The GPU's ridge point at this precision and these efficiencies."""
        s = self.setup
        return ridge_point(
            s.gpu, s.precision, compute_efficiency=s.compute_efficiency, memory_efficiency=s.memory_efficiency
        )

    @property
    def weight_bytes(self) -> float:
        """Bytes of all weights at this precision (2N in BF16)."""
        return self.setup.weight_bytes

    def prefill(self, prompt_tokens: int, batch: int = 1) -> PassResult:
        """One prefill pass over ``batch`` prompts of ``prompt_tokens`` tokens."""
        return prefill(self.setup, prompt_tokens, batch=batch)

    def decode(self, batch: int = 1, context_tokens: int = 1) -> PassResult:
        """One decode step for ``batch`` sequences attending ``context_tokens`` tokens each."""
        return decode_step(self.setup, batch=batch, context_tokens=context_tokens)

    def request(self, prompt_tokens: int, output_tokens: int = 1, batch: int = 1) -> RequestTiming:
        """A whole request: time to first token, time per output token, total time, throughput."""
        return request_timing(self.setup, prompt_tokens, output_tokens, batch=batch)

    def memory(self, batch: int = 1, context_tokens: int = 1) -> MemoryFootprint:
        """Weights plus KV cache against GPU memory."""
        return memory_footprint(self.setup, batch=batch, context_tokens=context_tokens)

    def max_batch(self, context_tokens: int) -> int:
        """Largest batch that fits in memory at ``context_tokens`` each."""
        return max_batch(self.setup, context_tokens)

    def compute_bound_batch(self, context_tokens: int = 1) -> int:
        """Smallest decode batch that is compute-bound at ``context_tokens`` each; 0 when none is."""
        return compute_bound_batch(self.setup, context_tokens)

    def longest_compute_bound_context(self) -> int:
        """Longest context at which some decode batch is still compute-bound (0 when none)."""
        return longest_compute_bound_context(self.setup)

    def prompt_tokens_per_decode_step(self) -> float:
        """Prompt tokens prefill can process in the time of one decode step (the lesson's "about 300")."""
        step = self.decode().time_s
        per_token = self.prefill(1).compute_time_s
        return step / per_token
