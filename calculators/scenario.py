"""A scenario: one model on one GPU setup, with every quantity a lesson, quiz or widget asks of it.

This is the object that lesson expressions, quiz answers, notebooks and the browser widgets all use, so that a
number means the same thing wherever it appears. It only delegates to the passes and serving modules.
"""

from __future__ import annotations

from calculators.hardware import GPU
from calculators.interconnect import get_interconnect, send_time_s
from calculators.models import Model
from calculators.passes import PassResult, decode_step, make_setup, prefill, tensor_parallel_all_reduce
from calculators.serving import (
    MemoryFootprint,
    RequestTiming,
    attention_takes_over,
    compute_bound_batch,
    longest_compute_bound_context,
    max_batch,
    memory_footprint,
    request_timing,
)
from calculators.speculative import (
    SpeculativeResult,
    best_proposed,
    break_even_batch,
    speculative_decoding,
    speculative_max_batch,
)
from calculators.utilisation import Utilisation, utilisation


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
        """The GPU's ridge point in the arithmetic format (not the weight format), at these efficiencies.

        Weight-only INT4 computes in BF16, so its ridge is BF16's; it is the same figure every pass reports.
        """
        return self.setup.ridge_point_flop_per_byte

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

    def decode_utilisation(self, batch: int = 1, context_tokens: int = 1) -> Utilisation:
        """MFU and MBU of one decode step (see :mod:`calculators.utilisation`)."""
        return utilisation(self.setup, self.decode(batch, context_tokens))

    def prefill_utilisation(self, prompt_tokens: int, batch: int = 1) -> Utilisation:
        """MFU and MBU of one prefill pass (see :mod:`calculators.utilisation`)."""
        return utilisation(self.setup, self.prefill(prompt_tokens, batch))

    def request(self, prompt_tokens: int, output_tokens: int = 1, batch: int = 1) -> RequestTiming:
        """A whole request: time to first token, time per output token, total time, throughput."""
        return request_timing(self.setup, prompt_tokens, output_tokens, batch=batch)

    def memory(self, batch: int = 1, context_tokens: int = 1) -> MemoryFootprint:
        """Weights plus KV cache against GPU memory."""
        return memory_footprint(self.setup, batch=batch, context_tokens=context_tokens)

    def max_batch(self, context_tokens: int) -> int:
        """Largest batch that fits in memory at ``context_tokens`` each."""
        return max_batch(self.setup, context_tokens)

    def decode_tokens_per_s(self, batch: int = 1, context_tokens: int = 1) -> float:
        """Output tokens per second of the whole setup while ``batch`` sequences decode together.

        Each step writes one token per sequence, so it is the batch over one step's time; one sequence sees
        ``1 / step`` of them. Memory is checked like :meth:`decode` (``ignore_memory`` for a what-if).
        """
        return batch / self.decode(batch, context_tokens).time_s

    def max_decode_tokens_per_s(self, context_tokens: int) -> float:
        """Output tokens per second at the largest batch that fits at ``context_tokens`` each; 0 if none fits.

        What a format's capacity is worth: fewer bytes per weight or per cached value let more sequences in,
        and each step of the larger batch writes more tokens, until the step turns compute-bound.
        """
        largest = self.max_batch(context_tokens)
        return self.decode_tokens_per_s(largest, context_tokens) if largest else 0.0

    def compute_bound_batch(self, context_tokens: int = 1) -> int:
        """Smallest decode batch that is compute-bound at ``context_tokens`` each; 0 when none is."""
        return compute_bound_batch(self.setup, context_tokens)

    def longest_compute_bound_context(self) -> int:
        """Longest context at which some decode batch is still compute-bound (0 when none)."""
        return longest_compute_bound_context(self.setup)

    def attention_takes_over(self, phase: str = "prefill", batch: int = 1) -> int:
        """Shortest context at which attention takes longer than the weight products (0: none found)."""
        return attention_takes_over(self.setup, phase, batch)

    def prompt_tokens_per_decode_step(self) -> float:
        """Prompt tokens prefill can process in the time of one decode step (the lesson's "about 300")."""
        step = self.decode().time_s
        per_token = self.prefill(1).compute_time_s
        return step / per_token

    # --- the KV cache -------------------------------------------------------------------------------------
    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token of context occupies over all the GPUs, in the KV-cache format.

        2 x layers x KV heads x head size x bytes per value for MHA and GQA; layers x (latent + RoPE key) x
        bytes for MLA. Tensor parallelism adds the copies it keeps (KV heads or the MLA latent replicated).
        """
        return self.setup.kv_bytes_per_token

    def kv_cache_bytes(self, context_tokens: int, batch: int = 1) -> float:
        """Bytes of KV cache of ``batch`` sequences of ``context_tokens`` tokens each (a window caps it)."""
        return self.setup.kv_cache_bytes(batch, context_tokens)

    @property
    def kv_budget_bytes(self) -> float:
        """Memory left for the KV cache over all GPUs, as an engine reserves it (see calculators.memory)."""
        return self.setup.memory.kv_budget_bytes

    @property
    def kv_budget_bytes_per_gpu(self) -> float:
        """Memory left for the KV cache on each GPU, after weights, runtime reserve and activations."""
        plan = self.setup.memory
        return plan.kv_budget_bytes / plan.gpus

    def kv_transfer_time_s(self, prompt_tokens: int, link: str = "infiniband-ndr", batch: int = 1) -> float:
        """Seconds to hand the KV cache of ``batch`` prefilled prompts to another machine over ``link``.

        Disaggregated serving pays this between the prefill and the decode GPUs. Each GPU of this setup
        sends its share of the cache over its own link, in parallel, at the setup's communication efficiency;
        one link latency is added (see :func:`calculators.interconnect.send_time_s`).
        """
        plan = self.setup.memory
        share = self.kv_cache_bytes(prompt_tokens, batch) / plan.gpus
        return send_time_s(share, get_interconnect(link), self.setup.communication_efficiency)

    # --- speculative decoding -----------------------------------------------------------------------------
    def all_reduce_time_s(self, tokens: int = 1) -> float:
        """Seconds of one tensor-parallel all-reduce of ``tokens`` tokens' activations over this setup's GPUs
        (a decode step at batch B reduces B tokens, twice per layer), in the setup's mode; 0 on one GPU."""
        return tensor_parallel_all_reduce(self.setup, tokens)[0]

    def all_reduce_algorithm(self, tokens: int = 1) -> str:
        """The algorithm that all-reduce runs: "ring", "tree" (the faster for small messages), or "none"."""
        return tensor_parallel_all_reduce(self.setup, tokens)[1]

    def speculative(
        self,
        acceptance: float,
        proposed: int,
        batch: int = 1,
        context_tokens: int = 1,
        drafter: str = "heads",
        draft_model: str | None = None,
        draft_layers: float = 1.0,
    ) -> SpeculativeResult:
        """One speculative step against a plain decode step (see :mod:`calculators.speculative`).

        ``acceptance`` is the chance each proposed token is accepted, ``proposed`` the tokens k proposed per
        step; ``drafter`` is "heads" (each draft step costs ``draft_layers`` of the target's layers and its
        output layer), "model" (with ``draft_model``, a smaller preset) or "ngram" (free).
        """
        return speculative_decoding(
            self.setup, acceptance=acceptance, proposed=proposed, batch=batch, context_tokens=context_tokens,
            drafter=drafter, draft_model=draft_model, draft_layers=draft_layers,
        )  # fmt: skip

    def best_speculative(
        self,
        acceptance: float,
        batch: int = 1,
        context_tokens: int = 1,
        drafter: str = "heads",
        draft_model: str | None = None,
        draft_layers: float = 1.0,
    ) -> SpeculativeResult:
        """The speculative step with the best k (1 to 16) at this acceptance rate and batch."""
        return best_proposed(
            self.setup, acceptance=acceptance, batch=batch, context_tokens=context_tokens, drafter=drafter,
            draft_model=draft_model, draft_layers=draft_layers,
        )  # fmt: skip

    def speculative_max_batch(
        self,
        proposed: int,
        context_tokens: int,
        drafter: str = "heads",
        draft_model: str | None = None,
        draft_layers: float = 1.0,
    ) -> int:
        """Largest batch that fits while speculating, beside the drafter and with each sequence caching its
        ``proposed`` tokens too (plain decoding's limit is :meth:`max_batch`)."""
        return speculative_max_batch(
            self.setup, context_tokens=context_tokens, proposed=proposed, drafter=drafter,
            draft_model=draft_model, draft_layers=draft_layers,
        )  # fmt: skip

    def speculative_break_even_batch(
        self,
        acceptance: float,
        proposed: int,
        context_tokens: int = 1,
        drafter: str = "heads",
        draft_model: str | None = None,
        draft_layers: float = 1.0,
    ) -> int:
        """Smallest batch at which speculation is slower than plain decoding; 0 when none up to 65,536.

        Memory is not checked: compare with :meth:`speculative_max_batch` to see whether that batch fits.
        """
        batch = break_even_batch(
            self.setup, acceptance=acceptance, proposed=proposed, context_tokens=context_tokens,
            drafter=drafter, draft_model=draft_model, draft_layers=draft_layers,
        )  # fmt: skip
        return 0 if batch is None else batch
