"""The engine: runs a workload through one or more instances of a setup, step by step.

Time advances one engine step at a time; a step's length is the cost model's time for what the scheduler put
in it. Between steps nothing happens but arrivals; when an instance has nothing to run, its clock jumps to
the next arrival. Replicas are independent (requests go to them in turn), so each runs to the end on its
own; the two pools of disaggregated serving run together in time order, since a cache leaves the prefill
pool only when the decode pool has room for it (back-pressure).
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from calculators.passes import Setup, make_setup
from calculators.simulator.kv_memory import (
    KVMemory,
    MemoryConfig,
    SwapSpace,
    kv_capacity_tokens,
)
from calculators.simulator.kv_transfer import transfer_window
from calculators.simulator.pipeline import PipelinedStepCost, bubble_fraction, micro_batch_count
from calculators.simulator.prefix_cache import BlockHasher, PrefixCache
from calculators.simulator.results import SLO, SimulationResult, StepLog
from calculators.simulator.schedulers import (
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Scheduler,
)
from calculators.simulator.speculation import Speculation, SpeculativeInstance, Speculator
from calculators.simulator.state import Instance, Sequence
from calculators.simulator.step_cost import StepCost
from calculators.simulator.workload import Request
from calculators.validation import choice, count

DEFAULT_TIMELINE_STEPS = 1000
# About 40 s of simulation in CPython: far beyond any lesson's run (10,000 requests take ~100,000 steps).
DEFAULT_MAX_STEPS = 2_000_000
# Replicas, and the GPUs of each disaggregated pool: each is an engine instance with its own books.
MAX_INSTANCES = 4096
ROUTINGS = ("round-robin", "least-loaded", "cache-aware")
# Cache-aware routing (after SGLang's router): a request goes to the replica holding the longest cached
# prefix of its prompt if that covers at least this share of the prompt, unless the replicas' loads are out
# of balance, as they are when the busiest has more than BALANCE_ABS unfinished requests beyond the least
# busy and more than BALANCE_REL times as many. SGLang's router has thresholds of this form; these values
# are the simulator's own choice, stated so a lesson can quote them.
CACHE_MATCH_SHARE = 0.5
BALANCE_ABS = 8
BALANCE_REL = 1.5


def simulate(
    requests: Iterable[Request],
    setup: Setup | None = None,
    scheduler: Scheduler | None = None,
    *,
    memory: MemoryConfig | None = None,
    replicas: int = 1,
    slo: SLO | None = None,
    timeline_steps: int = DEFAULT_TIMELINE_STEPS,
    timeline_memory: bool = False,
    max_steps: int = DEFAULT_MAX_STEPS,
    prefix_caching: bool = False,
    routing: str = "round-robin",
    speculation: Speculation | None = None,
    micro_batches: int = 1,
) -> SimulationResult:
    """Serve ``requests`` on ``replicas`` copies of ``setup`` with ``scheduler``; return what happened.

    Defaults: the lesson's setup (8B model, one H100, BF16, spec peaks), continuous batching, paged KV memory
    in 16-token blocks, and an SLO of TTFT <= 1 s and TPOT <= 50 ms. The same inputs always give the same
    result. ``prefix_caching=True`` reuses the cached KV blocks of prompts' shared prefixes (see
    :mod:`.prefix_cache`; paged memory, one pool). ``timeline_memory=True`` adds to each timeline step the KV
    cache every running request holds (reserved and filled tokens), which a memory map draws; it is off by
    default because it costs a list per step.

    ``routing`` says which replica a request goes to: ``"round-robin"``, each in turn, in arrival order (the
    replicas then run independently); or ``"least-loaded"``, the replica with the fewest requests routed to
    it and not finished at the moment the request arrives (ties in turn), as a load balancer's
    least-request policy does (Envoy's LEAST_REQUEST, NGINX's least_conn; the routers in front of LLM
    engines, such as SGLang's, offer both). Least-loaded routing runs the replicas together in time order,
    and takes continuous batching or chunked prefill (a static batch waits for requests that the router may
    send elsewhere). ``"cache-aware"`` (with prefix caching) sends a request to the replica whose cache
    holds the longest prefix of its prompt, falling back to least-loaded when no replica holds enough of it
    or the loads are out of balance (see :data:`CACHE_MATCH_SHARE`), as SGLang's cache-aware router does.

    ``speculation`` (a :class:`~calculators.simulator.speculation.Speculation`) turns on speculative
    decoding: every decode step verifies k proposed tokens per sequence and writes a random number of them
    (see :mod:`.speculation`); it takes paged memory and a continuous, chunked or disaggregated scheduler.

    With pipeline stages (``setup.pipeline_stages`` > 1), ``micro_batches`` splits each step's batch into
    that many micro-batches that follow one another through the stages, with the synchronous schedule's
    bubble (see :mod:`.pipeline`); 1, the default, runs the batch as one pass through the stages.
    """
    setup = setup if setup is not None else make_setup()
    if not isinstance(setup, Setup):
        raise ValueError(f"setup must be a Setup (see calculators.make_setup), got {setup!r}")
    scheduler = scheduler if scheduler is not None else ContinuousBatching()
    if not isinstance(scheduler, Scheduler):
        raise ValueError(f"scheduler must be one of the simulator's schedulers, got {scheduler!r}")
    memory = memory if memory is not None else MemoryConfig()
    slo = slo if slo is not None else SLO()
    replicas = count("replicas", replicas, maximum=MAX_INSTANCES)
    choice("routing", routing, ROUTINGS)
    if routing != "round-robin" and not isinstance(scheduler, ContinuousBatching | ChunkedPrefill):
        raise ValueError(
            f"routing {routing!r} takes a continuous or chunked scheduler, not {scheduler.name}; use "
            "routing 'round-robin'"
        )
    if routing == "cache-aware" and not prefix_caching:
        raise ValueError(
            "routing 'cache-aware' routes by what each replica's prefix cache holds; turn prefix_caching on, "
            "or use routing 'least-loaded'"
        )
    timeline_steps = count("timeline_steps", timeline_steps, minimum=0)
    max_steps = count("max_steps", max_steps)
    reqs = _checked_requests(requests)
    if not isinstance(prefix_caching, bool):
        raise ValueError(f"prefix_caching must be True or False, got {prefix_caching!r}")
    if prefix_caching and (memory.kind != "paged" or isinstance(scheduler, Disaggregated)):
        raise ValueError(
            "prefix_caching needs paged KV memory on one pool: use memory kind 'paged' and a scheduler "
            "other than disaggregated"
        )
    if prefix_caching and memory.preemption == "swap":
        raise ValueError(
            "prefix_caching with preemption 'swap' is not simulated (a swapped sequence's shared prefix "
            "blocks would need their own books); use preemption 'recompute' with prefix caching"
        )

    speculator = _speculator(speculation, scheduler, memory)
    # Each pool's setup: disaggregated pools may have their own GPU or tensor-parallel degree.
    pools = _pool_setups(setup, scheduler)
    if speculator is not None:
        for pool in pools.values():
            speculator.check(pool)
    # A speculative step holds cache for a sequence's context and its k proposals: up to k - 1 tokens past
    # its prompt and output.
    lookahead = speculator.proposed - 1 if speculator is not None else 0
    capacities = {
        role: kv_capacity_tokens(pool, memory, None if speculator is None else speculator.memory_plan(pool))
        for role, pool in pools.items()
    }
    capacity = min(capacities.values())  # every request must fit every pool it goes through
    longest = max(r.prompt_tokens + r.output_tokens for r in reqs)
    reserve = memory.max_sequence_tokens or longest
    for r in reqs:
        need = r.prompt_tokens + r.output_tokens
        if need > reserve and memory.kind == "contiguous" and memory.reserve == "max":
            raise ValueError(
                f"request {r.id} needs {need:,} tokens of cache (prompt {r.prompt_tokens:,} + output "
                f"{r.output_tokens:,}) but the contiguous allocator reserves max_sequence_tokens="
                f"{reserve:,}; raise max_sequence_tokens"
            )
        kv = KVMemory(memory, capacity, reserve)
        slots = kv.slots_for(need + lookahead, r.prompt_tokens, r.output_tokens)
        slots *= memory.block_tokens if memory.kind == "paged" else 1
        if slots > capacity:
            ahead = f" (with {lookahead + 1} proposals)" if lookahead else ""
            raise ValueError(
                f"request {r.id} can never be served: it needs {slots:,} tokens of KV cache{ahead} but one "
                f"instance holds {capacity:,}; use shorter requests, more GPUs per replica, or fp8"
            )

    _check_chats(reqs)
    per_step = speculator.proposed + 1 if speculator is not None else 1
    _check_work(reqs, scheduler, replicas, pools, max_steps, per_step)
    costs = {role: _step_cost(pool, micro_batches, speculator) for role, pool in pools.items()}
    cost = costs["serve"] if "serve" in costs else costs["decode"]
    log = StepLog(timeline_steps, memory=bool(timeline_memory))
    budget = [max_steps]
    hasher = BlockHasher(memory.block_tokens, reqs) if prefix_caching else None

    def new_instance(index: int, role: str = "serve") -> Instance:
        kv = KVMemory(memory, capacities[role], reserve)
        if speculator is not None:
            inst = speculator.instance(index, kv, stop_after_prefill=role == "prefill")
        else:
            inst = Instance(index, kv, stop_after_prefill=role == "prefill")
        if hasher is not None:
            inst.prefix = PrefixCache(hasher)
        if memory.preemption == "swap":
            inst.swap = SwapSpace(pools[role], memory)
        return inst

    ordered = sorted(reqs, key=lambda r: (r.arrival_s, r.id))
    sequences = {r.id: Sequence(r) for r in reqs}
    instances: list[Instance] = []
    roles: list[str] = []
    transfers: dict[int, float] = {}
    if isinstance(scheduler, Disaggregated):
        if replicas != 1:
            raise ValueError(
                f"replicas={replicas} with disaggregated serving: size the pools with prefill_gpus and "
                "decode_gpus instead, and leave replicas at 1"
            )
        n_prefill = _pool_size("prefill_gpus", scheduler.prefill_gpus, pools["prefill"])
        n_decode = _pool_size("decode_gpus", scheduler.decode_gpus, pools["decode"])
        prefill_pool = [new_instance(i, "prefill") for i in range(n_prefill)]
        decode_pool = [new_instance(n_prefill + i, "decode") for i in range(n_decode)]
        prefill_arrivals = [[(r.arrival_s, r.id, sequences[r.id]) for r in ordered[i::n_prefill]]
                            for i in range(n_prefill)]  # fmt: skip
        _run_pools(
            pools, scheduler, prefill_pool, decode_pool, prefill_arrivals, transfers, costs, log, budget
        )
        instances = prefill_pool + decode_pool
        roles = ["prefill"] * n_prefill + ["decode"] * n_decode
    else:
        if routing != "round-robin":
            instances = [new_instance(i) for i in range(replicas)]
            _run_least_loaded(
                instances,
                [sequences[r.id] for r in ordered],
                scheduler,
                cost,
                log,
                budget,
                cache_aware=routing == "cache-aware",
            )
        else:
            for i in range(replicas):
                inst = new_instance(i)
                mine = [(r.arrival_s, r.id, sequences[r.id]) for r in ordered[i::replicas]]
                for _ in _steps(inst, mine, scheduler, cost, log, budget):
                    pass
                instances.append(inst)
        roles = ["serve"] * replicas

    result = SimulationResult.build(
        setup=setup,
        scheduler=scheduler,
        memory=memory,
        slo=slo,
        capacity_tokens=capacities["serve"] if "serve" in capacities else capacities["decode"],
        sequences=[sequences[r.id] for r in reqs],
        instances=instances,
        roles=roles,
        log=log,
        transfers=transfers,
    )
    if prefix_caching:
        caches = [inst.prefix for inst in instances if inst.prefix is not None]
        hits = sum(c.hit_tokens for c in caches)
        looked_up = sum(c.looked_up_tokens for c in caches)
        result.summary["prefix_cache"] = {
            "hit_tokens": hits,
            "miss_tokens": looked_up - hits,
            "hit_rate": hits / looked_up if looked_up else 0.0,
            "evicted_blocks": sum(c.evictions for c in caches),
            "cached_blocks_at_end": sum(len(c.refs) for c in caches),
        }
    if speculator is not None:
        result.config["speculation"] = speculator.config.describe()
        result.summary["speculation"] = speculator.summary()
    stages = max(pool.pipeline_stages for pool in pools.values())
    if stages > 1:
        m = micro_batch_count(micro_batches)
        result.config["pipeline"] = {
            "stages": stages,
            "micro_batches": m,
            "bubble_fraction": bubble_fraction(stages, m),  # with equal micro-batches
        }
    if isinstance(scheduler, Disaggregated):
        result.summary["kv_capacity_tokens_by_role"] = dict(capacities)
    if memory.preemption == "swap":
        spaces = [inst.swap for inst in instances if inst.swap is not None]
        result.summary["swap"] = {
            "swap_space_tokens": sum(s.total for s in spaces) * memory.block_tokens,
            "swapped_out": sum(inst.swaps for inst in instances),
            "recomputed": sum(inst.swap_fallbacks for inst in instances),
            "copy_time_s": math.fsum(inst.copy_total_s for inst in instances),
        }
    return result


def _step_cost(pool: Setup, micro_batches: object, speculator: Speculator | None) -> StepCost:
    """The step cost of one pool: micro-batched through its pipeline stages where it has them."""
    m = micro_batch_count(micro_batches)
    if m > 1 and pool.pipeline_stages < 2:
        raise ValueError(
            f"micro_batches={m} needs pipeline stages to flow through: give the setup pipeline_stages > 1 "
            "(simulate --pipeline-parallel P), or leave micro_batches at 1"
        )
    if m > 1 and speculator is not None:
        raise ValueError(
            "micro_batches with speculative decoding is not simulated; leave micro_batches at 1 or turn "
            "speculation off"
        )
    if pool.pipeline_stages > 1 and speculator is None:
        return PipelinedStepCost(pool, m)
    return StepCost(pool)


def _speculator(
    speculation: Speculation | None, scheduler: Scheduler, memory: MemoryConfig
) -> Speculator | None:
    if speculation is None:
        return None
    if not isinstance(speculation, Speculation):
        raise ValueError(
            "speculation must be a Speculation (calculators.simulator.speculation) or None, got "
            f"{speculation!r}"
        )
    if memory.kind != "paged":
        raise ValueError(
            "speculative decoding needs paged KV memory (the proposals' blocks are taken and freed every "
            "step); use memory kind 'paged'"
        )
    if not isinstance(scheduler, ContinuousBatching | ChunkedPrefill | Disaggregated):
        raise ValueError(
            "speculative decoding takes a continuous, chunked or disaggregated scheduler, not "
            f"{scheduler.name} (a static batch computes its finished rows to the end); use another scheduler"
        )
    return Speculator(speculation)


def _pool_setups(setup: Setup, scheduler: Scheduler) -> dict[str, Setup]:
    """The setup of each role's replicas: ``serve`` for a colocated engine; ``prefill`` and ``decode`` for
    disaggregated serving, each the scheduler's own setup for that pool or else ``setup``.

    The pools must hold the same cache (the same model, the same bytes per token), since one pool's cache
    is the other's input.
    """
    if not isinstance(scheduler, Disaggregated):
        return {"serve": setup}
    prefill = scheduler.prefill_setup or setup
    decode = scheduler.decode_setup or setup
    if prefill.model != decode.model or prefill.kv_bytes_per_token != decode.kv_bytes_per_token:
        raise ValueError(
            f"the prefill pool serves {prefill.model.name} with {prefill.kv_bytes_per_token:,.0f} bytes of "
            f"KV cache per token and the decode pool {decode.model.name} with "
            f"{decode.kv_bytes_per_token:,.0f}: a cache sent from one must fit the other; give both pools "
            "the same model and KV-cache format"
        )
    return {"prefill": prefill, "decode": decode}


def _pool_size(field: str, gpus: int, setup: Setup) -> int:
    per_replica = setup.total_gpus
    if gpus % per_replica:
        raise ValueError(
            f"{field}={gpus} is not a multiple of the setup's {per_replica} GPUs per replica; give a multiple"
        )
    if gpus // per_replica > MAX_INSTANCES:
        raise ValueError(
            f"{field}={gpus:,} makes {gpus // per_replica:,} replicas in one pool; at most {MAX_INSTANCES:,} "
            "are simulated, give fewer GPUs"
        )
    return gpus // per_replica


def _check_work(
    reqs: list[Request],
    scheduler: Scheduler,
    replicas: int,
    pools: dict[str, Setup],
    max_steps: int,
    per_step: int = 1,
) -> None:
    """Refuse at once a run that cannot finish within ``max_steps`` steps, rather than after minutes.

    A lower bound on the steps: every instance runs its longest output's decode steps, and its prompts'
    tokens at most a step's prompt budget per step (a token budget of 1 over 131,072-token prompts would
    need 131,072 steps each), save that prefill-first batching runs a prompt longer than its budget alone.
    A decode step writes at most ``per_step`` tokens of a sequence (k + 1 when speculating).
    """
    if isinstance(scheduler, Disaggregated):
        replicas = max(
            1,
            min(
                scheduler.prefill_gpus // pools["prefill"].total_gpus,
                scheduler.decode_gpus // pools["decode"].total_gpus,
            ),
        )
        scheduler = scheduler.prefill_scheduler
    if isinstance(scheduler, ChunkedPrefill):
        budget = scheduler.token_budget
    elif isinstance(scheduler, ContinuousBatching):
        budget = scheduler.max_batch_tokens
    else:
        budget = max(r.prompt_tokens for r in reqs) * len(reqs)  # static: a batch's prefill is one step
    instances = min(replicas, len(reqs))
    if isinstance(scheduler, ContinuousBatching):  # a prompt longer than the budget runs alone, in one step
        alone = sum(1 for r in reqs if r.prompt_tokens > budget)
        shared = sum(r.prompt_tokens for r in reqs if r.prompt_tokens <= budget) / budget
    else:
        alone, shared = 0, sum(r.prompt_tokens for r in reqs) / budget
    prompt_steps = math.ceil((alone + shared) / instances)
    least = prompt_steps + -(-(max(r.output_tokens for r in reqs) - 1) // per_step)
    if least > max_steps:
        raise ValueError(
            f"this run needs at least {least:,} engine steps and max_steps is {max_steps:,}; give fewer or "
            "shorter requests, a larger token budget, more replicas, or raise max_steps"
        )


def _check_chats(reqs: list[Request]) -> None:
    """A follow-up must follow a request of the workload that comes before it, and its prompt must hold that
    request's prompt and answer."""
    by_id = {r.id: r for r in reqs}
    for r in reqs:
        if r.follows is None:
            continue
        previous = by_id.get(r.follows)
        if previous is None:
            raise ValueError(
                f"request {r.id} follows request {r.follows}, which is not in the workload; give the id of "
                "the chat's previous turn"
            )
        if (previous.arrival_s, previous.id) >= (r.arrival_s, r.id):
            raise ValueError(
                f"request {r.id} follows request {r.follows}, which arrives after it (or with it and a "
                "higher id); a chat's next turn comes after the turn it follows"
            )
        context = previous.prompt_tokens + previous.output_tokens
        if r.prompt_tokens < context:
            raise ValueError(
                f"request {r.id} follows request {r.follows} but its prompt ({r.prompt_tokens:,} tokens) is "
                f"shorter than that turn's prompt and answer ({context:,}); a next turn's prompt holds both"
            )


def _checked_requests(requests: Iterable[Request]) -> list[Request]:
    reqs = list(requests)
    if not reqs:
        raise ValueError("the workload has no requests; give at least one")
    seen: set[int] = set()
    for r in reqs:
        if not isinstance(r, Request):
            raise ValueError(
                "requests must be Request objects (from poisson_workload, burst_workload or "
                f"trace_workload), got {r!r}"
            )
        if r.id in seen:
            raise ValueError(f"request id {r.id} appears twice; every request needs its own id")
        seen.add(r.id)
    return reqs


def _steps(
    inst: Instance,
    arrivals: list[tuple[float, int, Sequence]],
    scheduler: Scheduler,
    cost: StepCost,
    log: StepLog,
    budget: list[int],
    more: Callable[[], bool] | None = None,
    *,
    in_time_order: bool = False,
) -> Iterator[bool]:
    """Run one instance step by step (it yields True after each) until every request that reaches it is done.

    ``arrivals`` is a heap of (time, id, sequence), sorted at the start; the pools of disaggregated serving
    push onto it as caches are sent. ``more()`` says whether something may still come from outside (a cache
    for a decode instance, a landed cache freeing memory on a prefill one): with nothing to do until then,
    the instance yields False without advancing, and the caller resumes it once something has come.

    ``in_time_order`` (the pools of disaggregated serving): an idle instance that moves its clock on to its
    next arrival or wake-up yields True before stepping, so the caller first runs whatever comes earlier,
    and goes back to an earlier arrival or release that came meanwhile. Without it a decode instance
    jumped to a cache landing late and stepped, and a cache sent after that one but landing earlier (a
    shorter prompt) waited for that step's end, the decode GPU idle in between.
    """
    scheduler.prepare(inst)
    window = cost.window
    waiting = inst.waiting
    steps = log.new_instance(inst.index)
    starts, times, decode_tokens, prefill_tokens, used, stored, compute, memory, in_decode = steps
    mem = inst.memory
    idle_from: float | None = None  # in_time_order: when the instance went idle and moved its clock on
    while True:
        if idle_from is not None:
            # Something that came meanwhile may come before the time it moved on to: go back to it (it did
            # nothing since idle_from).
            soon = min(
                arrivals[0][0] if arrivals else math.inf,
                inst.releases[0][0] if inst.releases else math.inf,
            )
            if soon < inst.now:
                inst.now = max(idle_from, soon)
        now = inst.now
        if inst.releases:
            inst.release_landed(now)
        while arrivals and arrivals[0][0] <= now:
            waiting.append(heapq.heappop(arrivals)[2])
        outside = more is not None and more()
        inst.arrivals_pending = bool(arrivals) or outside
        if not waiting and not inst.prefilling and not inst.decoding:
            if arrivals:
                if outside and in_time_order:
                    idle_from = now if idle_from is None else idle_from
                    inst.now = arrivals[0][0]
                    yield True  # what comes from outside before then comes first (see above)
                    continue
                inst.now = arrivals[0][0]
                continue
            if outside:
                yield False
                continue
            return
        plan = scheduler.plan(inst)
        if plan.empty:
            wake = min(
                arrivals[0][0] if arrivals else math.inf,
                inst.releases[0][0] if inst.releases else math.inf,
                math.inf if plan.wake_s is None else plan.wake_s,
            )
            if wake < math.inf:
                if outside and in_time_order:
                    idle_from = now if idle_from is None else idle_from
                    inst.now = max(now, wake)
                    yield True
                    continue
                inst.now = max(now, wake)
                continue
            if outside:
                yield False
                continue
            _stuck(inst)
        idle_from = None
        budget[0] -= 1
        if budget[0] < 0:
            raise ValueError(
                "the simulation ran past max_steps without finishing; the workload is too large for "
                "this setup, or raise max_steps"
            )
        in_decode.append(len(inst.decoding))
        nd = len(inst.decoding) if plan.decode else 0
        if plan.decode:
            rows = nd + inst.pad_tokens
            if window is None:
                keys = inst.decode_context_sum() + sum(inst.pad_contexts)
            else:
                contexts = inst.decode_contexts() + inst.pad_contexts
                keys = sum(c if c < window else window for c in contexts)
        else:
            rows = keys = 0
        chunks = [(c, s.prefilled) for s, c in plan.prefill]
        if plan.decode and isinstance(inst, SpeculativeInstance):
            dt, compute_s, memory_s = inst.speculator.step_time(inst, cost, chunks)
        elif plan.pad_prompts and chunks:
            longest = max(c for c, _ in chunks)  # a padded batch computes every prompt at the longest
            dt, compute_s, memory_s = cost.time(rows, keys, [(longest, cached) for _, cached in chunks])
        else:
            dt, compute_s, memory_s = cost.time(rows, keys, chunks)
        if inst.swap is not None:
            dt += inst.take_copy_time()  # swap copies run before the step's compute, as in vLLM's V0 worker
        log.timeline_step(inst, now, dt, plan, chunks)
        inst.now = end = now + dt
        if plan.decode:
            inst.finish_decode_step(end)
        if chunks:
            for seq, c in plan.prefill:
                inst.finish_prefill_chunk(seq, c, end)
            prefill_tokens.append(sum(c for c, _ in chunks))
        else:
            prefill_tokens.append(0)
        starts.append(now)
        times.append(dt)
        decode_tokens.append(nd)
        used.append((mem.total - mem.free) * mem.unit)
        stored.append(inst.stored_tokens())
        compute.append(compute_s)
        memory.append(memory_s)
        yield True


def _run_least_loaded(
    replicas: list[Instance],
    ordered: list[Sequence],
    scheduler: Scheduler,
    cost: StepCost,
    log: StepLog,
    budget: list[int],
    *,
    cache_aware: bool = False,
) -> None:
    """Run the replicas together in time order, sending each request, as it arrives, to the replica with
    the fewest requests routed to it and unfinished then (ties: the next in turn after the last choice).
    ``cache_aware``: to the replica whose prefix cache holds the longest prefix of the request's prompt
    instead, while that covers at least :data:`CACHE_MATCH_SHARE` of it and the loads are in balance.

    Every step that starts before an arrival runs before the arrival is routed, and a request counts as
    finished only from its last token's time on, so the router sees each replica as it is at that moment.
    """
    n = len(replicas)
    heaps: list[list[tuple[float, int, Sequence]]] = [[] for _ in replicas]
    pending = deque(ordered)
    routed = [0] * n
    finished = [0] * n  # requests of each replica known finished by the current arrival (a prefix of done)

    def more() -> bool:
        return bool(pending)

    runners = [
        _steps(inst, heap, scheduler, cost, log, budget, more)
        for inst, heap in zip(replicas, heaps, strict=True)
    ]
    active = set(range(n))  # replicas that can step now (not finished, not idle until a request comes)
    last = n - 1

    def load(k: int, now: float) -> int:
        done = replicas[k].done
        while finished[k] < len(done) and (done[finished[k]].finish_s or 0.0) <= now:
            finished[k] += 1
        return routed[k] - finished[k]

    while True:
        first_step = min(((replicas[k].now, k) for k in active), default=None)
        if pending and (first_step is None or pending[0].arrival_s <= first_step[0]):
            seq = pending.popleft()
            t = seq.arrival_s
            loads = [load(k, t) for k in range(n)]
            k = min(range(n), key=lambda k: (loads[k], (k - last - 1) % n))
            if cache_aware and not _out_of_balance(loads):
                k = _best_cached(replicas, seq, k, loads)
            heapq.heappush(heaps[k], (t, seq.id, seq))
            routed[k] += 1
            last = k
            active.add(k)
            continue
        if first_step is None:
            break
        k = first_step[1]
        try:
            if not next(runners[k]):
                active.discard(k)  # idle until the router sends it a request
        except StopIteration:
            active.discard(k)
    if any(inst.waiting or inst.prefilling or inst.decoding for inst in replicas):
        raise RuntimeError("the replicas stalled with requests in flight; this is a bug in the simulator")


def _out_of_balance(loads: list[int]) -> bool:
    low, high = min(loads), max(loads)
    return high - low > BALANCE_ABS and high > BALANCE_REL * low


def _best_cached(replicas: list[Instance], seq: Sequence, least: int, loads: list[int]) -> int:
    """The replica holding the longest cached prefix of ``seq``'s prompt (ties: the less loaded, then the
    lower index), if it covers at least :data:`CACHE_MATCH_SHARE` of the prompt; else ``least``."""
    best, best_tokens = least, 0
    for k, inst in enumerate(replicas):
        assert inst.prefix is not None
        tokens = inst.prefix.matched_tokens(seq.request)
        if tokens > best_tokens or (tokens == best_tokens and tokens and loads[k] < loads[best]):
            best, best_tokens = k, tokens
    return best if best_tokens >= CACHE_MATCH_SHARE * seq.request.prompt_tokens else least


def _run_pools(
    pools: dict[str, Setup],
    scheduler: Disaggregated,
    prefill_pool: list[Instance],
    decode_pool: list[Instance],
    prefill_arrivals: list[list[tuple[float, int, Sequence]]],
    transfers: dict[int, float],
    costs: dict[str, StepCost],
    log: StepLog,
    budget: list[int],
) -> None:
    """Run the two pools of disaggregated serving together, in time order, with back-pressure.

    A finished prefill keeps its cache on the prefill GPU until a decode replica has room for it besides
    the caches already coming to it (the next one in turn that has, keeping its watermark free); only then
    is the cache sent, one at a time per prefill replica, and the prefill GPU's slots are free once it
    lands. So a full decode pool holds caches on the prefill pool, which then admits fewer new prompts, and
    requests queue for prefill: no request holds a cache in more memory than there is. While the decode
    pool has room, a cache leaves as soon as its prefill is done and its link is free.
    """
    decode_arrivals: list[list[tuple[float, int, Sequence]]] = [[] for _ in decode_pool]
    ready: list[deque[Sequence]] = [deque() for _ in prefill_pool]  # prefilled, cache not yet sent
    seen = [0] * len(prefill_pool)  # handoffs already moved to ready
    # When each link is free, by owner: ("prefill", p), ("decode", d), or ("shared",) (see link_sharing).
    link_free: dict[tuple[int, ...], float] = {}
    sharing = scheduler.link_sharing
    seq_step: dict[int, float] = {}  # ready caches: the length of the prefill step that finished them
    blocked: set[int] = set()  # caches that found no room at first and waited for the decode pool
    turn = [0]  # the decode replica next in turn
    prefill_done = [False] * len(prefill_pool)

    def upstream() -> bool:
        return not all(prefill_done) or any(ready)

    def holding(inst: Instance) -> Callable[[], bool]:
        return lambda: bool(inst.held)

    runners: dict[int, Iterator[bool]] = {}
    for inst, mine in zip(prefill_pool, prefill_arrivals, strict=True):
        runners[inst.index] = _steps(
            inst,
            mine,
            scheduler.prefill_scheduler,
            costs["prefill"],
            log,
            budget,
            holding(inst),
            in_time_order=True,
        )
    for inst, mine in zip(decode_pool, decode_arrivals, strict=True):
        runners[inst.index] = _steps(
            inst, mine, scheduler.decode_scheduler, costs["decode"], log, budget, upstream, in_time_order=True
        )
    # A cache crosses as many links at once as the smaller side has GPUs (each GPU sends or takes its share).
    sender = pools["prefill"]
    lanes = min(sender.total_gpus, pools["decode"].total_gpus)
    layers = sender.model.layers
    steps = log.columns  # each instance's step columns: (start_s, time_s, ...)

    def links(p: int, d: int | None) -> list[tuple[int, ...]]:
        """The links a cache from prefill replica ``p`` to decode replica ``d`` occupies (see
        :mod:`.kv_transfer`); ``d`` None: those known before a decode replica is chosen."""
        own: list[tuple[int, ...]] = [(0, p)]
        if sharing == "shared":
            own.append((2,))
        elif sharing == "endpoints" and d is not None:
            own.append((1, d))
        return own

    def free_at(p: int, d: int | None) -> float:
        return max(link_free.get(key, 0.0) for key in links(p, d))

    everyone = {inst.index: inst for inst in (*prefill_pool, *decode_pool)}
    active = set(everyone)  # instances that can step now (not finished, not waiting for the other pool)
    decode_moved = True  # a decode step ran since the last cache that found no room

    def try_send(p: int) -> bool:
        """Send the oldest ready cache of prefill replica ``p`` if a decode replica has room for it."""
        seq = ready[p][0]
        n = len(decode_pool)
        for k in range(n):
            d = (turn[0] + k) % n
            target = decode_pool[d]
            if target.can_receive(seq):
                break
        else:
            blocked.add(seq.id)
            return False
        ready[p].popleft()
        free = free_at(p, d)
        if seq.id in blocked:
            free = max(free, target.now)  # room came with a decode step that ended then
        start, lands = transfer_window(
            mode=scheduler.kv_transfer,
            free_s=free,
            prefill_done_s=seq.prefill_done_s or 0.0,
            step_s=seq_step.pop(seq.id, 0.0),
            earlier_fraction=1.0 - seq.last_chunk / seq.target,
            layers=layers,
            share_bytes=sender.kv_cache_bytes(1, seq.target) / lanes,
            link=scheduler.link,
            efficiency=sender.communication_efficiency,
        )
        target.receive(seq)
        prefill_pool[p].send_held(seq, lands)
        for key in links(p, d):
            link_free[key] = lands
        transfers[seq.id] = lands - start
        heapq.heappush(decode_arrivals[d], (lands, seq.id, seq))
        turn[0] = (d + 1) % n
        active.update((prefill_pool[p].index, target.index))
        return True

    while True:
        # The earliest cache that could leave now, against the earliest instance that could step.
        sends = [
            (max(ready[p][0].prefill_done_s or 0.0, free_at(p, None)), ready[p][0].id, p)
            for p in range(len(prefill_pool))
            if ready[p] and (decode_moved or ready[p][0].id not in blocked)
        ]
        first_send = min(sends) if sends else None
        first_step = min(((everyone[i].now, i) for i in active), default=None)
        if first_send is not None and (first_step is None or first_send[0] <= first_step[0]):
            if not try_send(first_send[2]):
                decode_moved = False
            continue
        if first_step is None:
            break
        index = first_step[1]
        try:
            stepped = next(runners[index])
        except StopIteration:
            active.discard(index)
            if index < len(prefill_pool):
                prefill_done[index] = True
                active.update(inst.index for inst in decode_pool)  # they learn nothing more will come
            continue
        inst = everyone[index]
        if index < len(prefill_pool):
            new = inst.handoffs[seen[index] :]
            seen[index] = len(inst.handoffs)
            for seq in new:  # the step that finished them: its layers set when each layer's cache is ready
                seq_step[seq.id] = steps[index][1][-1]
            ready[index].extend(sorted(new, key=lambda s: (s.prefill_done_s, s.id)))
        else:
            decode_moved = True
        if not stepped:
            active.discard(index)  # it waits for the other pool
    if any(ready) or any(inst.waiting or inst.prefilling or inst.decoding for inst in everyone.values()):
        raise RuntimeError("the pools stalled with requests in flight; this is a bug in the simulator")


def _stuck(inst: Instance) -> None:
    seq = inst.waiting[0] if inst.waiting else None
    if seq is None:
        raise RuntimeError("the engine stalled with requests in flight; this is a bug in the simulator")
    mem = inst.memory
    need = mem.slots_for(seq.target, seq.prompt, seq.output) * mem.unit
    raise ValueError(
        f"request {seq.id} cannot be admitted: it needs {need:,} tokens "
        f"of KV cache and {mem.free * mem.unit:,} of {mem.total * mem.unit:,} are free with nothing left "
        "running; give more memory or shorter requests"
    )
