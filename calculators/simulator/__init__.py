"""A step-level serving simulator: many requests sharing the steps, memory and GPUs of a serving engine.

It runs a workload (:mod:`.workload`) through a scheduler (:mod:`.schedulers`) with KV memory in blocks
(:mod:`.kv_memory`); each step's time is the cost model's time for that step's mix (:mod:`.step_cost`). The
engine (:mod:`.engine`) is deterministic: the same inputs always give the same :class:`SimulationResult`
(:mod:`.results`), in CPython and in Pyodide. :mod:`.sweep` runs one setup across arrival rates;
:mod:`.run_options` describes a run once, for a single run, a sweep and the goodput search.

A new scheduler is a subclass of :class:`Scheduler` whose ``plan(instance)`` returns a :class:`StepPlan`;
the instance (:mod:`.state`) offers what a plan needs: the queue, ``can_reserve``, ``admit`` and
``reserve_decode_step`` (which preempts when blocks run out).
"""

from calculators.simulator.engine import simulate
from calculators.simulator.kv_memory import MemoryConfig
from calculators.simulator.results import SLO, SimulationResult
from calculators.simulator.run_options import RunOptions
from calculators.simulator.schedulers import (
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Scheduler,
    StaticBatching,
    StepPlan,
)
from calculators.simulator.speculation import Speculation
from calculators.simulator.sweep import max_rate_meeting_slo, sweep_rates
from calculators.simulator.workload import (
    Chats,
    Lengths,
    Request,
    SharedPrefix,
    burst_workload,
    poisson_workload,
    trace_workload,
)

__all__ = [
    "SLO",
    "Chats",
    "ChunkedPrefill",
    "ContinuousBatching",
    "Disaggregated",
    "Lengths",
    "MemoryConfig",
    "Request",
    "RunOptions",
    "Scheduler",
    "SharedPrefix",
    "SimulationResult",
    "Speculation",
    "StaticBatching",
    "StepPlan",
    "burst_workload",
    "max_rate_meeting_slo",
    "poisson_workload",
    "simulate",
    "sweep_rates",
    "trace_workload",
]
