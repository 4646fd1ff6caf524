"""The engine: runs a workload through one or more instances of a setup, step by step.

Time advances one engine step at a time; a step's length is the cost model's time for what the scheduler put
in it. Between steps nothing happens but arrivals; when an instance has nothing to run, its clock jumps to
the next arrival. Replicas are independent (requests go to them in turn), so each runs to the end on its
own; disaggregated serving runs the prefill pool, sends each cache over its link, then runs the decode pool.
"""

from __future__ import annotations

from collections.abc import Iterable

from calculators.interconnect import send_time_s
from calculators.passes import Setup, make_setup
from calculators.simulator.kv_memory import KVMemory, MemoryConfig, kv_capacity_tokens
from calculators.simulator.results import SLO, SimulationResult, StepLog
from calculators.simulator.schedulers import ContinuousBatching, Disaggregated, Scheduler
from calculators.simulator.state import Instance, Sequence
from calculators.simulator.step_cost import StepCost
from calculators.simulator.workload import Request
from calculators.validation import count

DEFAULT_TIMELINE_STEPS = 1000
DEFAULT_MAX_STEPS = 5_000_000


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
) -> SimulationResult:
    """Serve ``requests`` on ``replicas`` copies of ``setup`` with ``scheduler``; return what happened.

    Defaults: the lesson's setup (8B model, one H100, BF16, spec peaks), continuous batching, paged KV memory
    in 16-token blocks, and an SLO of TTFT <= 1 s and TPOT <= 50 ms. The same inputs always give the same
    result. ``timeline_memory=True`` adds to each timeline step the KV cache every running request holds
    (reserved and filled tokens), which a memory map draws; it is off by default because it costs a list per
    step.
    """
    setup = setup if setup is not None else make_setup()
    if not isinstance(setup, Setup):
        raise ValueError(f"setup must be a Setup (see calculators.make_setup), got {setup!r}")
    scheduler = scheduler if scheduler is not None else ContinuousBatching()
    if not isinstance(scheduler, Scheduler):
        raise ValueError(f"scheduler must be one of the simulator's schedulers, got {scheduler!r}")
    memory = memory if memory is not None else MemoryConfig()
    slo = slo if slo is not None else SLO()
    replicas = count("replicas", replicas)
    timeline_steps = count("timeline_steps", timeline_steps, minimum=0)
    max_steps = count("max_steps", max_steps)
    reqs = _checked_requests(requests)

    capacity = kv_capacity_tokens(setup, memory)
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
        slots = KVMemory(memory, capacity, reserve).slots_for(need, r.prompt_tokens, r.output_tokens)
        slots *= memory.block_tokens if memory.kind == "paged" else 1
        if slots > capacity:
            raise ValueError(
                f"request {r.id} can never be served: it needs {slots:,} tokens of KV cache but one "
                f"instance holds {capacity:,}; use shorter requests, more GPUs per replica, or fp8"
            )

    cost = StepCost(setup)
    log = StepLog(timeline_steps, memory=bool(timeline_memory))
    budget = [max_steps]

    def new_instance(index: int, *, stop_after_prefill: bool = False) -> Instance:
        return Instance(index, KVMemory(memory, capacity, reserve), stop_after_prefill=stop_after_prefill)

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
        n_prefill = _pool_size("prefill_gpus", scheduler.prefill_gpus, setup)
        n_decode = _pool_size("decode_gpus", scheduler.decode_gpus, setup)
        prefill_pool = [new_instance(i, stop_after_prefill=True) for i in range(n_prefill)]
        handoffs: list[tuple[float, int, Sequence]] = []
        for i, inst in enumerate(prefill_pool):
            mine = [(r.arrival_s, sequences[r.id]) for r in ordered[i::n_prefill]]
            _run(inst, mine, scheduler.prefill_scheduler, cost, log, budget)
            link_free = 0.0
            for seq in sorted(inst.handoffs, key=lambda s: (s.prefill_done_s, s.id)):
                start = max(seq.prefill_done_s or 0.0, link_free)
                share = setup.kv_cache_bytes(1, seq.target) / setup.total_gpus  # each GPU sends its own
                link_free = start + send_time_s(share, scheduler.link, setup.communication_efficiency)
                transfers[seq.id] = link_free - start
                handoffs.append((link_free, seq.id, seq))
        handoffs.sort(key=lambda h: (h[0], h[1]))
        decode_pool = [new_instance(n_prefill + i) for i in range(n_decode)]
        for i, inst in enumerate(decode_pool):
            mine = [(t, seq) for t, _, seq in handoffs[i::n_decode]]
            _run(inst, mine, scheduler.decode_scheduler, cost, log, budget)
        instances = prefill_pool + decode_pool
        roles = ["prefill"] * n_prefill + ["decode"] * n_decode
    else:
        for i in range(replicas):
            inst = new_instance(i)
            mine = [(r.arrival_s, sequences[r.id]) for r in ordered[i::replicas]]
            _run(inst, mine, scheduler, cost, log, budget)
            instances.append(inst)
            roles.append("serve")

    return SimulationResult.build(
        setup=setup,
        scheduler=scheduler,
        memory=memory,
        slo=slo,
        capacity_tokens=capacity,
        sequences=[sequences[r.id] for r in reqs],
        instances=instances,
        roles=roles,
        log=log,
        transfers=transfers,
    )


def _pool_size(field: str, gpus: int, setup: Setup) -> int:
    per_replica = setup.total_gpus
    if gpus % per_replica:
        raise ValueError(
            f"{field}={gpus} is not a multiple of the setup's {per_replica} GPUs per replica; give a multiple"
        )
    return gpus // per_replica


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


def _run(
    inst: Instance,
    arrivals: list[tuple[float, Sequence]],
    scheduler: Scheduler,
    cost: StepCost,
    log: StepLog,
    budget: list[int],
) -> None:
    """Run one instance until every request that reaches it is done (or handed off)."""
    scheduler.prepare(inst)
    window = cost.window
    n = len(arrivals)
    ai = 0
    waiting = inst.waiting
    steps = log.new_instance(inst.index)
    starts, times, decode_tokens, prefill_tokens, used, stored, compute, memory = steps
    mem = inst.memory
    while True:
        now = inst.now
        while ai < n and arrivals[ai][0] <= now:
            waiting.append(arrivals[ai][1])
            ai += 1
        inst.arrivals_pending = ai < n
        if not waiting and not inst.prefilling and not inst.decoding:
            if ai < n:
                inst.now = arrivals[ai][0]
                continue
            return
        plan = scheduler.plan(inst)
        if plan.empty:
            if ai < n:
                inst.now = max(now, arrivals[ai][0])
                continue
            _stuck(inst)
        budget[0] -= 1
        if budget[0] < 0:
            raise ValueError(
                "the simulation ran past max_steps without finishing; the workload is too large for "
                "this setup, or raise max_steps"
            )
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
        dt, compute_s, memory_s = cost.time(rows, keys, chunks)
        if len(log.timeline) < log.timeline_limit:
            log.timeline_step(inst, now, dt, plan, chunks)
        else:
            log.truncated = True
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
