"""Ridgepoint's calculators: the single source of every number in the course.

The math core (every module of this package except ``calculators.charts`` and ``calculators.browser``) uses
only the Python standard library, so the same code runs at build time on CPython and in the reader's browser
under Pyodide. Units are decimal SI; FLOP/s are dense.

>>> lesson = Scenario("dense-8b", "h100-sxm")
>>> round(lesson.decode().time_s * 1e3, 2)  # one decode step of an 8B BF16 model on an H100, in ms
4.78
>>> round(lesson.ridge_point_flop_per_byte)
295
"""

from calculators.efficiency import Efficiency
from calculators.expressions import ExpressionError, evaluate, evaluate_number
from calculators.hardware import GPU, GPUS, custom_gpu, get_gpu
from calculators.interconnect import (
    INTERCONNECTS,
    Interconnect,
    all_reduce_algorithm,
    all_reduce_time_s,
    get_interconnect,
)
from calculators.memory import MemoryPlan
from calculators.models import MODELS, Model, custom_dense_model, get_model
from calculators.operators import Operator
from calculators.passes import PassResult, Setup, decode_step, make_setup, mixed_step, prefill
from calculators.precision import FORMATS, PRECISIONS, NumberFormat, get_format, get_precision
from calculators.roofline import RooflineTime, attainable_flops_per_s, bound_at, ridge_point, roofline_time
from calculators.scenario import Scenario
from calculators.serving import MemoryFootprint, RequestTiming, max_batch, memory_footprint, request_timing
from calculators.simulator import (
    SLO,
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Lengths,
    MemoryConfig,
    Request,
    SimulationResult,
    StaticBatching,
    burst_workload,
    max_rate_meeting_slo,
    poisson_workload,
    simulate,
    sweep_rates,
    trace_workload,
)
from calculators.units import UNITS, format_value

__all__ = [
    "FORMATS",
    "GPU",
    "GPUS",
    "INTERCONNECTS",
    "MODELS",
    "PRECISIONS",
    "SLO",
    "UNITS",
    "ChunkedPrefill",
    "ContinuousBatching",
    "Disaggregated",
    "Efficiency",
    "ExpressionError",
    "Interconnect",
    "Lengths",
    "MemoryConfig",
    "MemoryFootprint",
    "MemoryPlan",
    "Model",
    "NumberFormat",
    "Operator",
    "PassResult",
    "Request",
    "RequestTiming",
    "RooflineTime",
    "Scenario",
    "Setup",
    "SimulationResult",
    "StaticBatching",
    "all_reduce_algorithm",
    "all_reduce_time_s",
    "attainable_flops_per_s",
    "bound_at",
    "burst_workload",
    "custom_dense_model",
    "custom_gpu",
    "decode_step",
    "evaluate",
    "evaluate_number",
    "format_value",
    "get_format",
    "get_gpu",
    "get_interconnect",
    "get_model",
    "get_precision",
    "make_setup",
    "max_batch",
    "max_rate_meeting_slo",
    "memory_footprint",
    "mixed_step",
    "poisson_workload",
    "prefill",
    "request_timing",
    "ridge_point",
    "roofline_time",
    "simulate",
    "sweep_rates",
    "trace_workload",
]
