"""Schedulers: which sequences run in the next step, behind one small interface.

Each scheduler looks at an :class:`~calculators.simulator.state.Instance` and returns a :class:`StepPlan`: the
prefill chunks to run and whether the decoding sequences run too. The instance keeps the books (memory,
preemption, tokens); the scheduler only decides. So a lesson can serve one workload with each of them and
compare what changes.

- :class:`StaticBatching`: wait for a full batch (or, with a batching timeout, until the oldest request has
  waited that long), run it until its longest request ends (finished rows are still computed, and every
  prompt is padded to the longest, as in engines that pad a batch), then take the next batch.
- :class:`ContinuousBatching`: at every step, admit waiting requests as soon as memory allows (Orca, Yu et
  al., OSDI 2022); a step with new prompts runs only their prefill, and the decoding requests wait one step
  (prefill-first, as vLLM's original scheduler does).
- :class:`ChunkedPrefill`: every step runs all decoding requests first, then fills a token budget with
  pieces of prompts (Sarathi-Serve, Agrawal et al., OSDI 2024), so decodes never stall behind a long prompt.
- :class:`Disaggregated`: prefill and decode on separate pools of GPUs, with each request's KV cache sent over
  a link in between (DistServe, Zhong et al., OSDI 2024; Splitwise). The engine runs the pools; this class
  says their sizes and the link.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from calculators.interconnect import Interconnect, get_interconnect
from calculators.passes import Setup
from calculators.simulator.kv_transfer import KV_TRANSFERS, LINK_SHARINGS
from calculators.simulator.state import Instance, Sequence
from calculators.validation import choice, count, non_negative_number

# The two engine limits vLLM exposes, at the defaults vLLM sets when they are not given
# (``EngineArgs.get_batch_defaults`` in vllm/engine/arg_utils.py, V1 engine, 2025): ``max_num_seqs``, the most
# requests in one step, 256; ``max_num_batched_tokens``, the most tokens one step processes, 8,192 for the
# offline ``LLM`` class (2,048 for the OpenAI-compatible server). Those are its values for GPUs under 70 GiB
# and for the A100; on larger GPUs (H100, H200, MI300X) it sets 1,024 sequences and 16,384 (8,192) tokens.
# The simulator keeps the first row whatever the GPU, so every figure the lessons quote stays put; give
# ``max_sequences`` and ``max_batch_tokens`` (``--max-sequences``, ``--max-batch-tokens``) to follow another.
MAX_TIMEOUT_S = 86_400.0  # a batching timeout of a day: far past any serving run's patience
DEFAULT_MAX_SEQUENCES = 256  # vLLM's max_num_seqs
DEFAULT_MAX_BATCH_TOKENS = 8192  # vLLM's max_num_batched_tokens: prompt tokens a prefill-first step takes


@dataclass
class StepPlan:
    """What one step runs: (sequence, chunk tokens) prefill pieces, and whether the decode batch runs."""

    prefill: list[tuple[Sequence, int]] = field(default_factory=list)
    decode: bool = False
    # Static batching: every prompt of the step is padded to the longest, and the padding is computed too.
    pad_prompts: bool = False
    # An empty plan that waits for a time, not only for the next arrival (a batching timeout running out).
    wake_s: float | None = None

    @property
    def empty(self) -> bool:
        return not self.prefill and not self.decode


class Scheduler:
    """The interface: ``plan(instance)`` decides the next step. ``name`` labels results and charts."""

    name = "scheduler"

    def plan(self, instance: Instance) -> StepPlan:  # pragma: no cover - the interface
        raise NotImplementedError

    def describe(self) -> dict[str, object]:
        return {"name": self.name}

    def prepare(self, instance: Instance) -> None:
        """Set up a fresh instance before its first step."""


def _admit_with_kv(instance: Instance, max_sequences: int) -> None:
    """Sequences whose cache is already filled (sent by a prefill pool) join the batch when memory allows.

    A cache that landed holds the blocks it took when it was sent, so it joins first, wherever it stands in
    the queue: behind a preempted sequence that waits for memory it would hold its blocks idle, and with
    nothing running to free any, the decode pool would wait forever. A preempted sequence joins again only
    with room for its next step too (its k proposals when speculating): with room for its cache alone, the
    step preempted it again at once, and planning looped until Python's recursion limit (a decode pool of
    8 blocks, 4 held by a cache still in flight, a swapped sequence of exactly 4).
    """
    waiting = instance.waiting
    if instance.incoming:
        for seq in [s for s in waiting if s.id in instance.incoming and s.prefilled >= s.target]:
            if instance.running() >= max_sequences:
                return
            waiting.remove(seq)
            waiting.appendleft(seq)
            instance.admit(seq)
    while waiting and waiting[0].prefilled >= waiting[0].target and instance.running() < max_sequences:
        seq = waiting[0]
        if not instance.can_reserve(seq, seq.target + instance.decode_lookahead()):
            break
        instance.admit(seq)


class StaticBatching(Scheduler):
    """Wait for ``batch_size`` requests (or the last ones), prefill them together, decode until all finish.

    Without ``timeout_s`` a partial batch starts only when no more requests will arrive, so at low load a
    request can wait a long time for company: that wait is the price this scheduler teaches. With it, a
    partial batch also starts once its oldest request has waited ``timeout_s`` seconds, as a serving
    system's batcher does (NVIDIA Triton's dynamic batcher: ``max_queue_delay_microseconds``, 0 by default,
    is the longest a request waits in the queue for others to join its batch). The batch is a rectangle, as
    in FasterTransformer-style engines: its prefill computes every prompt padded to the longest (batch x
    longest prompt tokens), and its decode steps compute the rows of requests that have finished; the next
    batch starts only when the whole batch has ended.
    """

    name = "static"

    def __init__(self, batch_size: int = 32, timeout_s: float | None = None) -> None:
        self.batch_size = count("batch_size", batch_size)
        self.timeout_s = (
            None if timeout_s is None else non_negative_number("timeout_s", timeout_s, MAX_TIMEOUT_S)
        )

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "batch_size": self.batch_size, "timeout_s": self.timeout_s}

    def prepare(self, instance: Instance) -> None:
        instance.pad_rows = True

    def plan(self, instance: Instance) -> StepPlan:
        if instance.decoding:
            instance.reserve_decode_step()
            if instance.decoding:
                return StepPlan(decode=True)
        if instance.prefilling:
            pieces = [(s, s.target - s.prefilled) for s in instance.prefilling.values()]
            return StepPlan(prefill=pieces, pad_prompts=True)
        waiting = instance.waiting
        if len(waiting) < self.batch_size and instance.arrivals_pending:
            if self.timeout_s is None:
                return StepPlan()
            deadline = waiting[0].arrival_s + self.timeout_s  # the oldest request's wait runs out
            if instance.now < deadline:
                return StepPlan(wake_s=deadline)
        chunks: list[tuple[Sequence, int]] = []
        while waiting and len(chunks) < self.batch_size:
            seq = waiting[0]
            if not instance.can_reserve(seq, seq.target):
                break
            instance.admit(seq)
            if seq.id in instance.prefilling:
                chunks.append((seq, seq.target - seq.prefilled))
        return StepPlan(prefill=chunks, decode=bool(instance.decoding) and not chunks, pad_prompts=True)


class ContinuousBatching(Scheduler):
    """Iteration-level scheduling, prefill first: new prompts join at any step where memory allows.

    A step with new prompts runs only their prefill (up to ``max_batch_tokens`` prompt tokens; a longer
    prompt runs alone), and decoding requests wait for it; otherwise every decoding request writes a token.
    At most ``max_sequences`` requests run at once (prefilling or decoding): the rest wait in the queue even
    when memory has room. These are vLLM's ``max_num_seqs`` and ``max_num_batched_tokens`` (see
    :data:`DEFAULT_MAX_SEQUENCES`); vLLM refuses a prompt longer than its token budget when prefill is not
    chunked, where this scheduler runs it alone, so that no request of a workload is lost.
    """

    name = "continuous"

    def __init__(
        self, max_sequences: int = DEFAULT_MAX_SEQUENCES, max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS
    ) -> None:
        self.max_sequences = count("max_sequences", max_sequences)
        self.max_batch_tokens = count("max_batch_tokens", max_batch_tokens)

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "max_sequences": self.max_sequences,
            "max_batch_tokens": self.max_batch_tokens,
        }

    def plan(self, instance: Instance) -> StepPlan:
        _admit_with_kv(instance, self.max_sequences)
        chunks: list[tuple[Sequence, int]] = []
        budget = self.max_batch_tokens
        waiting = instance.waiting
        while waiting and instance.running() < self.max_sequences:
            seq = waiting[0]
            need = seq.target - seq.prefilled
            if need > budget and chunks:
                break
            if not instance.can_reserve(seq, seq.target + (0 if need else instance.decode_lookahead())):
                break
            instance.admit(seq)
            if seq.id in instance.prefilling:
                need = seq.target - seq.prefilled  # less a cached prefix, if one was found
                chunks.append((seq, need))
                budget -= need
        if chunks:
            return StepPlan(prefill=chunks)
        if instance.decoding:
            instance.reserve_decode_step()
            if not instance.decoding:  # every decoding request was preempted: admit again
                return self.plan(instance)
        return StepPlan(decode=bool(instance.decoding))


class ChunkedPrefill(Scheduler):
    """Decode first, then prompt pieces up to a token budget per step (Sarathi-Serve's stall-free batching).

    Every decoding request writes a token at every step (with speculative decoding, its k + 1 verified
    tokens count against the budget, as in vLLM); what is left of ``token_budget`` goes to prompts,
    oldest first, a chunk at a time. A request reserves cache for its whole prompt when it is admitted.
    ``token_budget`` is vLLM's ``max_num_batched_tokens`` with chunked prefill on, and ``max_sequences`` its
    ``max_num_seqs``; vLLM requires the budget to be at least the sequences, so that the decodes always fit:
    here a budget below the decoding requests still runs them all, and no prompt piece that step.
    """

    name = "chunked"

    def __init__(self, token_budget: int = 512, max_sequences: int = DEFAULT_MAX_SEQUENCES) -> None:
        self.token_budget = count("token_budget", token_budget)
        self.max_sequences = count("max_sequences", max_sequences)

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "token_budget": self.token_budget, "max_sequences": self.max_sequences}

    def plan(self, instance: Instance) -> StepPlan:
        _admit_with_kv(instance, self.max_sequences)
        if instance.decoding:
            instance.reserve_decode_step()
        budget = self.token_budget - instance.decode_rows()
        chunks: list[tuple[Sequence, int]] = []
        for seq in instance.prefilling.values():
            if budget <= 0:
                break
            piece = min(seq.target - seq.prefilled, budget)
            chunks.append((seq, piece))
            budget -= piece
        waiting = instance.waiting
        while budget > 0 and waiting and instance.running() < self.max_sequences:
            seq = waiting[0]
            if seq.prefilled >= seq.target or not instance.can_reserve(seq, seq.target):
                break
            instance.admit(seq)
            piece = min(seq.target - seq.prefilled, budget)
            chunks.append((seq, piece))
            budget -= piece
        return StepPlan(prefill=chunks, decode=bool(instance.decoding))


class Disaggregated(Scheduler):
    """Prefill on ``prefill_gpus`` GPUs, decode on ``decode_gpus``, KV caches sent over ``link``.

    ``link`` is an interconnect preset (:data:`calculators.INTERCONNECTS`: "nvlink4" inside one node,
    "infiniband-ndr" between nodes ...) or an :class:`~calculators.Interconnect`. Each pool is made of
    replicas of the setup (``setup.total_gpus`` GPUs each), so the GPU counts must be multiples of it.
    Requests go to prefill replicas in turn; each replica sends one cache at a time, every GPU its own share
    over its own link (the link's latency plus share / bandwidth), to the next decode replica in turn that
    has room for it. The prefill pool runs ``prefill_scheduler`` (continuous batching by default), the
    decode pool continuous batching of sequences whose cache is already there. A full decode pool holds
    back the prefill pool: a finished prefill keeps its cache on the prefill GPU until a decode replica has
    room, so the prefill GPU admits fewer new prompts (back-pressure, as DistServe's prefill instances keep
    a cache until the decode instance pulls it).

    ``max_sequences`` caps the requests running at once on every replica of both pools, and
    ``max_batch_tokens`` the prompt tokens of one prefill step when the prefill pool runs its default
    continuous batching (vLLM's ``max_num_seqs`` and ``max_num_batched_tokens``, each instance its own).

    ``prefill_setup`` and ``decode_setup`` give a pool its own setup (another GPU, another tensor-parallel
    degree: Splitwise runs prefill on H100s and decode on A100s, DistServe picks each phase's parallelism);
    by default both are the setup the simulation is given. Both must serve the same model with the same KV
    cache, and a cache crosses as many links at once as the smaller side's GPUs.

    ``kv_transfer`` is "whole" (a cache leaves once its prefill is done; the default) or "layerwise" (each
    layer's cache leaves once that layer is computed, overlapping the prefill), and ``link_sharing`` is
    "sender" (each prefill replica's links carry one cache at a time; the default), "endpoints" (each decode
    replica's too) or "shared" (all caches queue for the same links): see :mod:`.kv_transfer`.
    """

    name = "disaggregated"

    def __init__(
        self,
        prefill_gpus: int = 1,
        decode_gpus: int = 1,
        link: Interconnect | str = "nvlink4",
        *,
        max_sequences: int = DEFAULT_MAX_SEQUENCES,
        max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
        prefill_scheduler: Scheduler | None = None,
        prefill_setup: Setup | None = None,
        decode_setup: Setup | None = None,
        kv_transfer: str = "whole",
        link_sharing: str = "sender",
    ) -> None:
        self.kv_transfer = choice("kv_transfer", kv_transfer, KV_TRANSFERS)
        self.link_sharing = choice("link_sharing", link_sharing, LINK_SHARINGS)
        for field_name, pool in (("prefill_setup", prefill_setup), ("decode_setup", decode_setup)):
            if pool is not None and not isinstance(pool, Setup):
                raise ValueError(f"{field_name} must be a Setup (see calculators.make_setup), got {pool!r}")
        self.prefill_setup = prefill_setup
        self.decode_setup = decode_setup
        self.prefill_gpus = count("prefill_gpus", prefill_gpus)
        self.decode_gpus = count("decode_gpus", decode_gpus)
        self.link = get_interconnect(link)
        self.max_sequences = count("max_sequences", max_sequences)
        self.max_batch_tokens = count("max_batch_tokens", max_batch_tokens)
        self.prefill_scheduler = prefill_scheduler or ContinuousBatching(max_sequences, max_batch_tokens)
        self.decode_scheduler = ContinuousBatching(max_sequences)

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "prefill_gpus": self.prefill_gpus,
            "decode_gpus": self.decode_gpus,
            "link": {
                "key": self.link.key,
                "name": self.link.name,
                "bandwidth_bytes_per_s": self.link.bandwidth_bytes_per_s,
                "latency_s": self.link.latency_s,
            },
            "max_sequences": self.max_sequences,
            "prefill_scheduler": self.prefill_scheduler.describe(),
            **({"kv_transfer": self.kv_transfer} if self.kv_transfer != "whole" else {}),
            **({"link_sharing": self.link_sharing} if self.link_sharing != "sender" else {}),
            **{
                field_name: {"gpu": pool.gpu.key, "tensor_parallel": pool.gpus, "gpus": pool.total_gpus}
                for field_name, pool in (
                    ("prefill_setup", self.prefill_setup),
                    ("decode_setup", self.decode_setup),
                )
                if pool is not None
            },
        }

    def plan(self, instance: Instance) -> StepPlan:  # pragma: no cover - the engine runs the two pools
        raise RuntimeError("Disaggregated is run by the engine as two pools; it plans no step itself")
