"""The simulator experiments that serving lessons quote, behind calls a calculator expression can make.

A lesson's figures are expressions of plain names, numbers and strings (no lists, no subscripts), so a lesson
cannot build a workload and pass it to :func:`~calculators.simulator.simulate` itself. Each function here runs
one kind of experiment from a few numbers and returns an object whose attributes are the figures a lesson
states (``prefill_stall(8000).stall_steps``). A whole workload served at one rate is
:func:`calculators.simulator.named.served`. The charts of the same lessons call the same functions, so a
figure in the prose and the point on the chart beside it are one computation. Results are cached: the
simulator is deterministic, and a page quoting ten figures of one run should run it once.

Every experiment uses the course's default setup (an 8B model in BF16 on one H100 SXM, the cost model's
simple level, under the active model setting: :mod:`calculators.setting`; results are cached per setting)
unless told otherwise, and one shared workload,
:data:`calculators.simulator.named.COURSE_WORKLOAD`, so
the latency lesson and the disaggregation lesson compare like with like.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.interconnect import get_interconnect, send_time_s
from calculators.passes import Setup, make_setup, mixed_step
from calculators.setting import cache_per_setting
from calculators.simulator.engine import simulate
from calculators.simulator.named import course_lengths, pipeline_stage_count, scheduler_named
from calculators.simulator.pipeline import PipelinedStepCost, bubble_fraction, micro_batch_count
from calculators.simulator.results import SLO, SimulationResult
from calculators.simulator.schedulers import ChunkedPrefill, ContinuousBatching, Scheduler
from calculators.simulator.sweep import max_rate_meeting_slo
from calculators.simulator.workload import trace_workload
from calculators.validation import choice, count

SCHEDULERS = ("continuous", "chunked", "disaggregated")

# The stall experiment: requests already decoding, then one long prompt arrives.
STALL_SHORT_PROMPT = 128  # the decoding requests' own prompts: short, so they are decoding within a step
STALL_OUTPUT = 400  # long enough that they are still decoding when the long prompt is done
STALL_ARRIVAL_S = 0.2  # the long prompt arrives here, when the others are well into their answers
STALL_TIMELINE_STEPS = 5000  # every step of the run: the decodes' 400 steps plus the prompt's chunks


def _setup(model: str, gpu: str) -> Setup:
    return make_setup(model, gpu)


# ------------------------------------------------------------------------------------------ the stall


@dataclass(frozen=True)
class Stall:
    """What one long prompt does to requests already decoding on the same GPU.

    ``longest_gap_s`` is the longest wait between two tokens of a decoding request; ``decode_step_s`` is a
    plain decode step of that batch, so ``stall_steps`` is the gap counted in the steps it replaced.
    ``ttft_s`` is the long prompt's own time to first token, and ``prefill_steps`` the number of steps its
    prompt was spread over (one without chunks).
    """

    prompt: int
    decoding: int
    token_budget: int | None
    longest_gap_s: float
    decode_step_s: float
    ttft_s: float
    prefill_steps: int
    result: SimulationResult

    @property
    def stall_steps(self) -> float:
        return self.longest_gap_s / self.decode_step_s

    @property
    def ttft_steps(self) -> float:
        return self.ttft_s / self.decode_step_s


@cache_per_setting(64)
def prefill_stall(
    prompt: int = 8000,
    decoding: int = 16,
    token_budget: int | None = None,
    *,
    model: str = "dense-8b",
    gpu: str = "h100-sxm",
) -> Stall:
    """``decoding`` requests are writing their answers when a ``prompt``-token prompt arrives.

    Without ``token_budget`` the engine schedules prefill first (continuous batching): the whole prompt runs
    in one step and the decoding requests wait for it. With one, it is chunked prefill with that budget: the
    decodes run every step and the prompt fills what is left of the budget.
    """
    prompt = count("prompt", prompt)
    decoding = count("decoding", decoding)
    rows = [(0.0, STALL_SHORT_PROMPT, STALL_OUTPUT)] * decoding + [(STALL_ARRIVAL_S, prompt, 16)]
    scheduler: Scheduler = ContinuousBatching() if token_budget is None else ChunkedPrefill(token_budget)
    setup = _setup(model, gpu)
    result = simulate(trace_workload(rows), setup, scheduler, timeline_steps=STALL_TIMELINE_STEPS)
    gaps = [r["longest_gap_s"] for r in result.requests[:decoding]]
    long_id = result.requests[-1]["id"]
    carried = sum(1 for step in result.timeline if any(piece[0] == long_id for piece in step["prefill"]))
    step = mixed_step(setup, decode_contexts=[STALL_SHORT_PROMPT + STALL_OUTPUT // 2] * decoding).time_s
    return Stall(
        prompt,
        decoding,
        token_budget,
        max(float(g) for g in gaps),
        step,
        float(result.requests[-1]["ttft_s"]),
        carried,
        result,
    )


@cache_per_setting(64)
def chunk_step_s(decoding: int, chunk: int, *, model: str = "dense-8b", gpu: str = "h100-sxm") -> float:
    """Seconds of one step that decodes ``decoding`` requests and prefills ``chunk`` fresh prompt tokens."""
    chunks = [(count("chunk", chunk), 0)] if chunk else []
    contexts = [STALL_SHORT_PROMPT] * count("decoding", decoding, minimum=0)
    return mixed_step(_setup(model, gpu), decode_contexts=contexts, prefill_chunks=chunks).time_s


# ------------------------------------------------------------------------------------------- goodput


@cache_per_setting(64)
def max_good_rate(
    scheduler: str = "chunked",
    *,
    gpus: int = 2,
    token_budget: int = 512,
    prefill_gpus: int = 1,
    link: str = "nvlink4",
    ttft_slo: float = 0.5,
    tpot_slo: float = 0.02,
    attainment: float = 0.9,
    model: str = "dense-8b",
    gpu: str = "h100-sxm",
    pipeline_stages: int = 1,
    micro_batches: int = 1,
) -> float:
    """DistServe's goodput: the highest arrival rate (requests/s) at which ``attainment`` of the course
    workload's requests meet the SLO, on ``gpus`` GPUs. Zero if even a trickle misses it.

    Each trial rate serves 20 s of arrivals (at most 1,000 requests); bisection in 9 halvings between 0.5
    and 500 requests/s puts the answer within about 1.4% of the crossing.

    With ``pipeline_stages`` above 1 each replica (and each disaggregated pool's replica) is that many GPUs
    holding the layers one after another, so ``gpus`` (and ``prefill_gpus``) must be multiples of it;
    ``micro_batches`` splits each step's batch through the stages (see :mod:`.pipeline`).
    """
    gpus = count("gpus", gpus)
    choice("scheduler", scheduler, SCHEDULERS)
    stages = pipeline_stage_count(model, pipeline_stages)
    if scheduler != "disaggregated" and gpus % stages:
        raise ValueError(
            f"gpus={gpus} does not split into replicas of {stages} pipeline stages (one GPU each); give a "
            f"multiple of {stages}"
        )
    sched = scheduler_named(
        scheduler,
        token_budget=token_budget,
        prefill_gpus=prefill_gpus,
        decode_gpus=gpus - prefill_gpus,
        link=link,
    )
    prompt, output = course_lengths()
    row = max_rate_meeting_slo(
        prompt=prompt,
        output=output,
        setup=make_setup(model, gpu, pipeline_stages=stages),
        scheduler=sched,
        replicas=1 if scheduler == "disaggregated" else gpus // stages,
        micro_batches=micro_batches,
        slo=SLO(ttft_s=ttft_slo, tpot_s=tpot_slo),
        attainment=attainment,
        duration_s=20.0,
        max_requests=1000,
        low_per_s=0.5,
        high_per_s=500.0,
        steps=9,
    )
    rate = row["rate_per_s"]
    return float(rate) if rate is not None else 0.0


# Eleven capped simulations (at most 1,000 requests each): bounded, but longer than a plain calculation, so
# an expression that names this function may run this long (see calculators.expressions).
max_good_rate.time_limit_s = 120.0  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------------- the KV handoff


@dataclass(frozen=True)
class Handoff:
    """One request's KV cache sent from a prefill GPU to a decode GPU: its size and the time on a link."""

    prompt: int
    link: str
    bytes: float
    time_s: float
    decode_step_s: float

    @property
    def decode_steps(self) -> float:
        """The transfer time counted in decode steps at batch size 1."""
        return self.time_s / self.decode_step_s


@cache_per_setting(64)
def kv_handoff(
    prompt: int = 2000, link: str = "nvlink4", *, model: str = "dense-8b", gpu: str = "h100-sxm"
) -> Handoff:
    """The cache of a ``prompt``-token prompt, sent over ``link`` as the disaggregated simulator sends it."""
    setup = _setup(model, gpu)
    size = setup.kv_cache_bytes(1, count("prompt", prompt))
    connection = get_interconnect(link)
    seconds = send_time_s(size / setup.total_gpus, connection, setup.communication_efficiency)
    return Handoff(prompt, connection.key, size, seconds, mixed_step(setup, decode_contexts=[1]).time_s)


# ------------------------------------------------------------------------------------ pipeline stages


@dataclass(frozen=True)
class Pipelined:
    """One engine step through ``stages`` pipeline stages, its batch split into ``micro_batches``.

    ``step_s`` is the step as the simulator's synchronous schedule times it (:mod:`.pipeline`), ``pass_s``
    the same batch run as one pass through the stages (no micro-batches: the latency a sequence of it sees
    per step), and ``tokens`` what the step processes (prompt tokens, or one token per decoding sequence).
    """

    stages: int
    micro_batches: int
    tokens: int
    step_s: float
    pass_s: float

    @property
    def tokens_per_s(self) -> float:
        """Tokens the step processes per second of step."""
        return self.tokens / self.step_s

    @property
    def speedup(self) -> float:
        """How much more the step gets through than the same batch as one pass (below 1: less)."""
        return self.pass_s / self.step_s

    @property
    def bubble_fraction(self) -> float:
        """The share of the step each stage idles with equal micro-batches, ``(P - 1) / (m + P - 1)``."""
        return bubble_fraction(self.stages, self.micro_batches)


@cache_per_setting(256)
def pipeline_step(
    stages: int = 2,
    micro_batches: int = 1,
    *,
    prompts: int = 0,
    prompt: int = 2000,
    decoding: int = 0,
    context: int = 1000,
    gpus: int = 8,
    model: str = "llama-3.1-405b",
    gpu: str = "h100-sxm",
) -> Pipelined:
    """One step of ``prompts`` fresh prompts of ``prompt`` tokens (prefill) or of ``decoding`` sequences at
    ``context`` tokens each (decode), on ``stages`` pipeline stages of ``gpus`` tensor-parallel GPUs each
    (the refined level), split into ``micro_batches`` as the simulator splits a step (:mod:`.pipeline`).

    Give prompts or decoding sequences, not both. The step must fit in the stages' memory.
    """
    stages = count("stages", stages)
    m = micro_batch_count(micro_batches)
    prompts = count("prompts", prompts, minimum=0)
    decoding = count("decoding", decoding, minimum=0)
    prompt, context = count("prompt", prompt), count("context", context)
    if (prompts == 0) == (decoding == 0):
        raise ValueError(
            "pipeline_step times a prefill step or a decode step: give prompts (e.g. prompts=8) or "
            "decoding (e.g. decoding=64), not both and not neither"
        )
    if m > 1 and stages < 2:
        raise ValueError(f"micro_batches={m} needs pipeline stages to flow through: give stages > 1")
    setup = make_setup(model, gpu, level="refined", gpus=count("gpus", gpus), pipeline_stages=stages)
    cached = prompts * setup.model.cached_tokens(prompt) + decoding * setup.model.cached_tokens(context)
    setup.memory.check(cached, lambda: "this pipeline step")
    chunks = [(prompt, 0)] * prompts
    keys = decoding * context
    tokens = prompts * prompt + decoding
    step = PipelinedStepCost(setup, m).time(decoding, keys, chunks)[0]
    whole = PipelinedStepCost(setup, 1).time(decoding, keys, chunks)[0]
    return Pipelined(stages, m, tokens, step, whole)
