"""The calibrated mode against published measurements it was not fitted to, and the spec-peak bound below all.

The calibration (calculators.calibration.FITTED) was fitted once to the summary points in
calculators.calibration_points: Llama-2-7B and Llama-2-70B linear and element-wise kernels on A100 and H100,
Llama-2-7B attention on an A100, and all-reduces over 2 and 8 GPUs of a DGX A100 and a DGX H100. None of the
figures below is among them, and no case gets its own efficiency. Target: calibrated within 15 % on at least
80 % of the rows; the spec-peak bound at or below the measurement on every row.

Held-out rows (31):

- 20 linear-layer figures of models the fit never saw (Vidur, microsoft/vidur at 7d475133,
  data/profiling/compute/{gpu}/{model}/mlp.csv; the figure is one decoder layer's four linear layers, the sum
  of the median attn_pre_proj, attn_post_proj, mlp_up_proj and mlp_down_proj, ms, FP16, at the stated token
  count and tensor-parallel degree). Meta-Llama-3-70B is not used: its linear layers have Llama-2-70B's
  shapes, which the fit saw. All 20 within 15 %.
- 10 all-reduces over 4 GPUs (the fit used 2 and 8), data/profiling/network/{a100_dgx,h100_dgx}/
  all_reduce.csv, median over one power-of-two bin of message size: a decode-sized message (94 KB) and
  the prefill-sized ones from 1.5 to 12.5 MB. Larger messages are left out: Vidur's times there imply a bus
  bandwidth above the NVLink spec (633 GB/s on NVLink 4's 450), which no ring reaches, so even the spec-peak
  bound would sit above them. 5 of 10 within 15 %.
- 1 end-to-end figure: vLLM (Kwon et al., SOSP 2023), Fig. 13a: OPT-13B on an A100-40GB at 2 requests/s of
  ShareGPT (338 output tokens on average) batches 30.42 requests, so by Little's law a step takes
  30.42 / (2 x 338) = 45 ms. Calibrated: 21.5 ms at batch 30 (simple level, context 500). Missed by 52 %.

The largest misses and their cause:

1. vLLM OPT-13B step, 0.48x: the 2023 engine's per-step CPU overhead (scheduling, input preparation,
   sampling, Python-side output handling), which Vidur does not publish and the as-published calibration
   therefore leaves out; the kernels alone account for half the step.
2. All-reduce, 94 KB over 4 A100s, 1.98x: Vidur's small-message times are noisy (16-61 us between adjacent
   bins); one latency per link (40 us on NVLink 3) is their median, not each bin.
3. All-reduce, 12.5 MB over 4 H100s, 1.27x: the measured large-message bandwidth beats the NVLink spec the
   calibrated mode is capped at (see above).
4. All-reduce, 1.5 MB over 4 H100s, 0.71x, and 94 KB, 0.64x: the 4-GPU latency (about 40 us) is above the
   24 us fitted over 2 and 8 GPUs.
5. All-reduce, 1.5 MB over 4 A100s, 1.17x: the same latency noise.
"""

from __future__ import annotations

import pytest

from calculators import calibration, custom_dense_model, custom_gpu, decode_step, make_setup

# (GPU, model, hidden, MLP width, heads, KV heads, tokens, tensor-parallel degree, measured ms per layer)
LINEAR_LAYERS = (
    ("a100", "CodeLlama-34B", 8192, 22016, 64, 8, 1, 2, 0.434),
    ("a100", "CodeLlama-34B", 8192, 22016, 64, 8, 256, 4, 0.468),
    ("a100", "CodeLlama-34B", 8192, 22016, 64, 8, 2048, 1, 12.21),
    ("h100", "CodeLlama-34B", 8192, 22016, 64, 8, 1, 2, 0.246),
    ("h100", "CodeLlama-34B", 8192, 22016, 64, 8, 256, 4, 0.1845),
    ("h100", "CodeLlama-34B", 8192, 22016, 64, 8, 2048, 1, 4.08),
    ("a100", "Qwen-72B", 8192, 24576, 64, 64, 1, 4, 0.284),
    ("a100", "Qwen-72B", 8192, 24576, 64, 64, 128, 8, 0.225),
    ("a100", "Qwen-72B", 8192, 24576, 64, 64, 4096, 2, 15.4),
    ("h100", "Qwen-72B", 8192, 24576, 64, 64, 1, 4, 0.164),
    ("h100", "Qwen-72B", 8192, 24576, 64, 64, 128, 8, 0.103),
    ("h100", "Qwen-72B", 8192, 24576, 64, 64, 4096, 2, 4.88),
    ("a100", "InternLM-20B", 5120, 13824, 40, 40, 1, 1, 0.4045),
    ("a100", "InternLM-20B", 5120, 13824, 40, 40, 512, 2, 0.7565),
    ("h100", "InternLM-20B", 5120, 13824, 40, 40, 1, 1, 0.233),
    ("h100", "InternLM-20B", 5120, 13824, 40, 40, 512, 2, 0.282),
    ("a100", "Meta-Llama-3-8B", 4096, 14336, 32, 8, 16, 1, 0.2905),
    ("a100", "Meta-Llama-3-8B", 4096, 14336, 32, 8, 1024, 1, 2.175),
    ("h100", "CodeLlama-34B", 8192, 22016, 64, 8, 16, 8, 0.075),
    ("a100", "InternLM-20B", 5120, 13824, 40, 40, 4096, 4, 2.697),
)

# (link, GPUs, bytes per GPU, measured ms): Vidur's 4-GPU all-reduces, median per size bin.
ALL_REDUCES = (
    ("nvlink3", 4, 94208, 0.0205),
    ("nvlink3", 4, 1568768, 0.041),
    ("nvlink3", 4, 3112960, 0.051),
    ("nvlink3", 4, 6258688, 0.072),
    ("nvlink3", 4, 12550144, 0.1135),
    ("nvlink4", 4, 94208, 0.039),
    ("nvlink4", 4, 1568768, 0.042),
    ("nvlink4", 4, 3112960, 0.033),
    ("nvlink4", 4, 6258688, 0.04),
    ("nvlink4", 4, 12550144, 0.052),
)
SPEC_LATENCY_S = 5e-6  # the link presets' small-collective latency (calculators.interconnect)

VLLM_OPT_13B_STEP_MS = 30.42 / (2 * 337.99) * 1e3  # vLLM Fig. 13a by Little's law: 45.0 ms


def _linear_layers(row: tuple[object, ...]) -> tuple[float, float]:
    """(calibrated, spec-peak bound) seconds of one decoder layer's four linear layers."""
    gpu, _, h, f, heads, kv_heads, tokens, tp, _ = row
    assert isinstance(gpu, str)
    assert all(isinstance(v, int) for v in (h, f, heads, kv_heads, tokens, tp))
    assert isinstance(h, int)
    assert isinstance(f, int)
    assert isinstance(heads, int)
    assert isinstance(kv_heads, int)
    assert isinstance(tokens, int)
    assert isinstance(tp, int)
    d = h // heads
    shapes = ((h, (heads + 2 * kv_heads) * d // tp), (h // tp, h), (h, 2 * f // tp), (f // tp, h))
    peak, bandwidth = calibration.PEAKS[gpu]
    fitted = calibration.FITTED[f"matmul/{gpu}"]
    estimate = bound = 0.0
    for k, n in shapes:
        flops, moved = 2.0 * tokens * k * n, 2.0 * (k * n + tokens * k + tokens * n)
        estimate += calibration.matmul_time_s(fitted, flops, moved, tokens, peak, bandwidth)
        bound += max(flops / peak, moved / bandwidth)
    return estimate, bound


def _all_reduce(row: tuple[str, int, int, float]) -> tuple[float, float]:
    link, gpus, size, _ = row
    spec = calibration.LINK_SPEC[link]
    latency, bandwidth = calibration.collective_latency_and_bandwidth(
        link, SPEC_LATENCY_S, spec, "as-published"
    )
    sent = 2.0 * (gpus - 1) / gpus * size
    return latency + sent / bandwidth, SPEC_LATENCY_S + sent / spec


def _vllm_step() -> tuple[float, float]:
    gpu = custom_gpu(bf16_tflops=312, memory_bandwidth_tb_per_s=1.555, memory_gb=40, name="A100-40GB")
    setup = make_setup(custom_dense_model(params_billion=13), gpu, mode="calibrated")
    step = decode_step(setup, batch=30, context_tokens=500)
    return step.time_s, step.bound_time_s


def table() -> list[tuple[str, float, float, float]]:
    """(case, measured s, spec-peak bound s, calibrated s) for every held-out row."""
    rows = []
    for row in LINEAR_LAYERS:
        estimate, bound = _linear_layers(row)
        rows.append((f"{row[0]} {row[1]} T={row[6]} TP{row[7]}", row[8] * 1e-3, bound, estimate))
    for ar in ALL_REDUCES:
        estimate, bound = _all_reduce(ar)
        rows.append((f"all-reduce {ar[0]} x{ar[1]} {ar[2]:,} B", ar[3] * 1e-3, bound, estimate))
    estimate, bound = _vllm_step()
    rows.append(("vLLM OPT-13B step, batch 30", VLLM_OPT_13B_STEP_MS * 1e-3, bound, estimate))
    return rows


def test_the_validation_set_is_large_enough_and_held_out() -> None:
    rows = table()
    assert len(rows) >= 20
    fitted_models = {(k, n) for pts in calibration.points.MATMUL.values() for k, n, _, _ in pts}
    for row in LINEAR_LAYERS:
        _, _, h, f, _, _, _, tp, _ = row
        assert (h, 2 * f // tp) not in fitted_models  # an MLP shape the fit never saw
    assert all(gpus not in calibration.points.ALL_REDUCE[link] for link, gpus, _, _ in ALL_REDUCES)


def test_the_spec_peak_bound_is_below_every_measurement() -> None:
    for case, measured, bound, _ in table():
        assert bound <= measured, case


def test_calibrated_within_15_percent_on_at_least_80_percent() -> None:
    rows = table()
    within = [case for case, measured, _, estimate in rows if abs(estimate / measured - 1.0) <= 0.15]
    assert len(within) / len(rows) >= 0.80, sorted(set(c for c, *_ in rows) - set(within))


def test_linear_layers_of_unseen_models_within_15_percent() -> None:
    for row in LINEAR_LAYERS:
        estimate, _ = _linear_layers(row)
        assert estimate == pytest.approx(row[8] * 1e-3, rel=0.15), row[:8]


def test_the_largest_miss_is_the_engine_overhead_the_calibration_leaves_out() -> None:
    estimate, bound = _vllm_step()
    measured = VLLM_OPT_13B_STEP_MS * 1e-3
    assert bound < estimate < measured  # bound 16.7 ms < calibrated 21.5 ms < measured 45 ms
    assert estimate / measured == pytest.approx(0.48, abs=0.03)
