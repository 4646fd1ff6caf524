"""One description of a served run, shared by a single run, a sweep across rates and the goodput search.

A run is its arrivals (a rate and a number of requests, or a burst) and everything else: the workload's
lengths, system prompts and chats, and the options of :func:`~calculators.simulator.simulate` (setup, with
its pipeline stages; scheduler; KV memory; replicas and routing; SLO; prefix caching; speculative decoding;
micro-batches). :class:`RunOptions` holds everything else, once: ``simulate --rate``, ``simulate --sweep``
(:func:`~calculators.simulator.sweep.sweep_rates`), the highest rate meeting an SLO
(:func:`~calculators.simulator.sweep.max_rate_meeting_slo`) and the lessons' named runs
(:func:`~calculators.simulator.named.run_named`) all build their requests and call the simulator through it,
so an option added here reaches every one of them, and none can drop it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from calculators.passes import Setup
from calculators.simulator.engine import DEFAULT_MAX_STEPS, simulate
from calculators.simulator.kv_memory import MemoryConfig
from calculators.simulator.results import SLO, SimulationResult
from calculators.simulator.schedulers import Scheduler
from calculators.simulator.speculation import Speculation
from calculators.simulator.workload import (
    Chats,
    Lengths,
    Request,
    SharedPrefix,
    burst_workload,
    poisson_workload,
)


@dataclass(frozen=True)
class RunOptions:
    """Everything a generated run is besides its arrival rate and number of requests.

    The workload: ``prompt`` and ``output`` lengths (tokens, or :class:`Lengths`), its ``seed``, system
    prompts (``shared_prefix``) and multi-turn ``chats``. The serving: every keyword of
    :func:`~calculators.simulator.simulate` but the timeline's (pipeline stages are the setup's
    ``pipeline_stages``, split into ``micro_batches``). ``None`` is the simulator's default. The values are
    checked where they are used, by the workload generators and the simulator, with their messages.
    """

    prompt: Lengths | int = 512
    output: Lengths | int = 128
    seed: int = 0
    shared_prefix: SharedPrefix | None = None
    chats: Chats | None = None
    setup: Setup | None = None
    scheduler: Scheduler | None = None
    memory: MemoryConfig | None = None
    replicas: int = 1
    slo: SLO | None = None
    prefix_caching: bool = False
    routing: str = "round-robin"
    speculation: Speculation | None = None
    micro_batches: int = 1

    @classmethod
    def of(cls, options: RunOptions | None = None, **changes: Any) -> RunOptions:
        """``options`` (or the defaults) with ``changes`` over them; an unknown name is refused by name."""
        if options is not None and not isinstance(options, RunOptions):
            raise ValueError(
                f"options must be a RunOptions (calculators.simulator.RunOptions), got {options!r:.80}; "
                "give the workload's lengths by name, e.g. prompt=512, output=128"
            )
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(changes) - set(known))
        if unknown:
            raise ValueError(f"unknown run option {unknown[0]!r}; known: {', '.join(known)}")
        return replace(options if options is not None else cls(), **changes)

    def poisson(self, rate_per_s: float, count: int) -> tuple[Request, ...]:
        """``count`` requests arriving as a Poisson process at ``rate_per_s``, with this workload."""
        return poisson_workload(
            rate_per_s,
            count,
            self.prompt,
            self.output,
            seed=self.seed,
            shared_prefix=self.shared_prefix,
            chats=self.chats,
        )

    def burst(self, count: int) -> tuple[Request, ...]:
        """``count`` requests of this workload all arriving at t = 0 (not with chats: they need time)."""
        if self.chats is not None:
            raise ValueError(
                "chats need arrivals over time (a rate): a burst has no time between a chat's turns"
            )
        return burst_workload(
            count, self.prompt, self.output, seed=self.seed, shared_prefix=self.shared_prefix
        )

    def simulate(
        self,
        requests: tuple[Request, ...],
        *,
        timeline_steps: int = 0,
        timeline_memory: bool = False,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> SimulationResult:
        """Serve ``requests`` with these options; what the record keeps (``timeline_steps``,
        ``timeline_memory``) and the step limit as :func:`~calculators.simulator.simulate` takes them."""
        return simulate(
            requests,
            self.setup,
            self.scheduler,
            memory=self.memory,
            replicas=self.replicas,
            slo=self.slo,
            prefix_caching=self.prefix_caching,
            routing=self.routing,
            speculation=self.speculation,
            micro_batches=self.micro_batches,
            timeline_steps=timeline_steps,
            timeline_memory=timeline_memory,
            max_steps=max_steps,
        )
