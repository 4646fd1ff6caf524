"""Fitting the calibrated mode's coefficients to the published summary points, stdlib only.

:mod:`calculators.calibration` holds the curves and the fitted coefficients (``FITTED``); this module
re-derives every coefficient from :mod:`calculators.calibration_points` (a test checks they agree), so a
change of data or curve shows in one diff. Kernel curves are fitted by least squares on log time (coordinate
descent with golden-section steps: deterministic); the engine's per-step overhead is a straight line through
what a published end-to-end step time leaves over once the calibrated kernels are subtracted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from calculators import calibration_points as points
from calculators.calibration import (
    A100_PEAKS,
    PEAKS,
    all_reduce_fit_time_s,
    decode_attention_time_s,
    matmul_time_s,
    prefill_attention_time_s,
    streaming_time_s,
)
from calculators.hardware import custom_gpu
from calculators.models import MODELS, Model
from calculators.passes import decode_step, make_setup


def _loss(
    model: Callable[[Sequence[float]], list[float]], measured: Sequence[float], p: Sequence[float]
) -> float:
    return sum(math.log(m / y) ** 2 for m, y in zip(model(p), measured, strict=True)) / len(measured)


def fit(
    model: Callable[[Sequence[float]], list[float]],
    measured: Sequence[float],
    start: Sequence[float],
    bounds: Sequence[tuple[float, float]],
    rounds: int = 8,
) -> tuple[float, ...]:
    """Least squares on log time by coordinate descent with golden-section steps (deterministic, stdlib)."""
    p = list(start)
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(rounds):
        for i, (lo, hi) in enumerate(bounds):
            a, b = lo, hi
            for _ in range(36):
                c, d = b - ratio * (b - a), a + ratio * (b - a)
                pc, pd = p[:], p[:]
                pc[i], pd[i] = c, d
                if _loss(model, measured, pc) < _loss(model, measured, pd):
                    b = d
                else:
                    a = c
            p[i] = (a + b) / 2.0
    return tuple(float(f"{v:.4g}") for v in p)


def _linear_flops_bytes(k: int, n: int, t: int) -> tuple[float, float]:
    return 2.0 * t * k * n, 2.0 * (k * n + t * k + t * n)


def fit_matmul(gpu: str) -> tuple[float, ...]:
    peak, bandwidth = PEAKS[gpu]
    rows = points.MATMUL[gpu]

    def model(p: Sequence[float]) -> list[float]:
        return [matmul_time_s(p, *_linear_flops_bytes(k, n, t), t, peak, bandwidth) for k, n, t, _ in rows]

    return fit(model, [ms * 1e-3 for *_, ms in rows], (4.0, 0.8, 10.0, 0.85, 0.3),
               ((0.0, 30.0), (0.3, 1.0), (0.0, 2000.0), (0.3, 1.0), (0.0, 1.0)))  # fmt: skip


def fit_elementwise(gpu: str) -> tuple[float, ...]:
    _, bandwidth = PEAKS[gpu]
    rows = points.ELEMENTWISE[gpu]

    def model(p: Sequence[float]) -> list[float]:
        return [streaming_time_s(p, size, bandwidth) for size, _ in rows]

    return fit(model, [ms * 1e-3 for _, ms in rows], (4.0, 0.8), ((0.0, 30.0), (0.2, 1.0)))


def fit_decode_attention() -> tuple[float, ...]:
    _, bandwidth = A100_PEAKS
    rows = points.ATTENTION_DECODE

    def model(p: Sequence[float]) -> list[float]:
        return [
            decode_attention_time_s(p, batch * kv * 2 * heads * dim * 2, batch, 1, bandwidth)
            for _, heads, dim, batch, kv, _ in rows
        ]

    return fit(model, [ms * 1e-3 for *_, ms in rows], (8.0, 1.0, 0.9),
               ((0.0, 50.0), (0.0, 10.0), (0.3, 1.0)))  # fmt: skip


def fit_prefill_attention() -> tuple[float, ...]:
    peak, _ = A100_PEAKS
    rows = points.ATTENTION_PREFILL

    def model(p: Sequence[float]) -> list[float]:
        out = []
        for _, heads, dim, chunk, cached, _ in rows:
            pairs = chunk * cached + chunk * (chunk + 1) / 2.0
            out.append(prefill_attention_time_s(p, 4.0 * heads * dim * pairs, chunk * heads, 1, peak))
        return out

    return fit(model, [ms * 1e-3 for *_, ms in rows], (20.0, 1.0, 0.5),
               ((0.0, 300.0), (0.0, 20.0), (0.05, 1.0)))  # fmt: skip


def fit_all_reduce(link: str) -> tuple[float, ...]:
    rows = [(size, gpus, ms) for gpus, pts in points.ALL_REDUCE[link].items() for size, ms in pts]

    def model(p: Sequence[float]) -> list[float]:
        return [all_reduce_fit_time_s(p, size, gpus) for size, gpus, _ in rows]

    return fit(model, [ms * 1e-3 for *_, ms in rows], (20.0, 1.0, 200.0),
               ((1.0, 100.0), (0.0, 10.0), (20.0, 2000.0)))  # fmt: skip


def llama_2_70b() -> Model:
    """Llama-2-70B, the model of Splitwise's measurements: Llama-3.1-70B's layer shapes (hidden 8,192, 80
    layers, 64 query and 8 KV heads, MLP 28,672) with Llama-2's 32,000-token vocabulary (its config.json)."""
    return replace(MODELS["llama-3.1-70b"], key="llama-2-70b", name="Llama-2 70B", vocab_size=32000)


def kernel_step_s(gpu: str, gpus: int, prompt: int, batch: int) -> float:
    """The calibrated kernels of one decode step of Llama-2-70B (context: the prompt plus half the 128
    output tokens), without any engine overhead."""
    setup = make_setup(llama_2_70b(), gpu, level="refined", gpus=gpus, mode="calibrated", ignore_memory=True)
    step = decode_step(setup, batch=batch, context_tokens=prompt + 64)
    return step.time_s - step.overhead_s


def fit_engine_overhead() -> tuple[float, ...]:
    """(a ms, b ms per sequence): the per-step engine overhead, a straight line (least squares) through
    Splitwise's measured time between tokens minus the calibrated kernels of the same step."""
    rows = points.SPLITWISE_DECODE
    xs = [float(batch) for _, _, _, batch, _ in rows]
    ys = [ms - 1e3 * kernel_step_s(gpu, gpus, prompt, batch) for gpu, gpus, prompt, batch, ms in rows]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return tuple(float(f"{v:.4g}") for v in (my - slope * mx, slope))


def fit_host_floor(like: str) -> tuple[float, ...]:
    """(h ms per layer,): the host's launch floor of the as-published engine on the node of ``like``, fitted
    (least squares on log time) to Splitwise's 4-GPU steps of that node, modelled as
    ``max(kernels, layers x h) + a + b x batch`` with the overhead ``a + b x batch`` of
    :func:`fit_engine_overhead` (fitted on 2 GPUs, where the kernels are longer than the host's issue: a test
    checks it, so fitting one after the other is exact)."""
    a_ms, b_ms = fit_engine_overhead()
    rows = points.SPLITWISE_HOST[like]
    layers = llama_2_70b().layers
    kernels = [1e3 * kernel_step_s(gpu, gpus, prompt, batch) for gpu, gpus, prompt, batch, _ in rows]

    def model(p: Sequence[float]) -> list[float]:
        return [
            (max(k, layers * p[0]) + a_ms + b_ms * batch) * 1e-3
            for k, (*_, batch, _) in zip(kernels, rows, strict=True)
        ]

    return fit(model, [ms * 1e-3 for *_, ms in rows], (0.3,), ((0.0, 2.0),))


def fit_current_overhead() -> tuple[float, ...]:
    """(a ms, 0): the "current" calibration's per-step overhead, what the published step of a current
    engine leaves over the "current" kernels (one point, so a constant)."""
    residuals = []
    for model, tflops, tb_per_s, gb, batch, context, ms in points.CURRENT_DECODE:
        gpu = custom_gpu(bf16_tflops=tflops, memory_bandwidth_tb_per_s=tb_per_s, memory_gb=gb, name="A100")
        setup = make_setup(model, gpu, level="refined", mode="calibrated", calibration="current")
        step = decode_step(setup, batch=batch, context_tokens=context)
        residuals.append(ms - 1e3 * (step.time_s - step.overhead_s))
    return (float(f"{sum(residuals) / len(residuals):.4g}"), 0.0)


def refit() -> dict[str, tuple[float, ...]]:
    """Every coefficient, re-derived from the summary points (what ``FITTED`` holds; a test compares)."""
    out = {f"matmul/{g}": fit_matmul(g) for g in PEAKS}
    out.update({f"elementwise/{g}": fit_elementwise(g) for g in PEAKS})
    out["attention-decode/a100"] = fit_decode_attention()
    out["attention-prefill/a100"] = fit_prefill_attention()
    out.update({f"all-reduce/{link}": fit_all_reduce(link) for link in points.ALL_REDUCE})
    out["engine-overhead/as-published"] = fit_engine_overhead()
    out.update({f"engine-host/{like}": fit_host_floor(like) for like in points.SPLITWISE_HOST})
    out["engine-overhead/current"] = fit_current_overhead()
    return out
