"""The calibrated mode against published measurements it was not fitted to, and the spec-peak bound below all.

The calibration (calculators.calibration.FITTED) was fitted once to the summary points in
calculators.calibration_points: Llama-2-7B and Llama-2-70B linear and element-wise kernels on A100 and H100,
Llama-2-7B attention on an A100, all-reduces over 2 and 8 GPUs of a DGX A100 and a DGX H100 (all Vidur,
microsoft/vidur at 7d475133), the engine's per-step overhead from Splitwise's times between tokens of
Llama-2-70B on 2 A100s, and the host's launch floor from the same measurements on 4 A100s and on 4 H100s.
None of the figures below is among them, and no case gets its own efficiency.
Target: calibrated within 15 % on at least 80 % of the rows; the spec-peak bound below every measurement.
Result: 48 of 59 (81 %); the bound is below all 59. (Before the host's launch floor: 46 of 59, 78 %; it
moved the two 8-GPU times between tokens from 0.57x and 0.62x to 0.98x and 0.98x, and no other row.)
Without the seven attention rows of another kernel library (below) it would be 44 of 52 (85 %): they are
kept, because an engine of 2024 ran either library.

Held-out rows (59), ms; ratio = calibrated / measured:

| source, setting (ms) | measured | spec-peak | calibrated | ratio |
| --- | --- | --- | --- | --- |
| Vidur mlp.csv: 20 linear-layer rows, 5 unseen models | 0.075-15.4 | 0.052-11.5 | 0.076-15.3 | 0.91-1.06 |
| Vidur attention, Llama-3-8B, FlashInfer, batch 1-15 | 0.024-0.051 | 0.002-0.024 | 0.01-0.04 | 0.43-0.75 |
| same, batch 120 / 128 / 256 / 512, KV 768 | 0.236-0.929 | 0.185-0.791 | 0.236-0.981 | 1.00 0.98 1.04 1.06 |
| Vidur all-reduce, 4 A100s: 94 KB | 0.0205 | 0.0080 | 0.0405 | 1.97 |
| same, 1.5 / 3.1 / 6.3 / 12.6 MB | 0.041-0.114 | 0.016-0.071 | 0.048-0.103 | 1.17 1.09 0.99 0.91 |
| Vidur all-reduce, 4 H100s: 94 KB | 0.039 | 0.0078 | 0.0238 | 0.61 |
| same, 1.5 / 3.1 / 6.3 / 12.6 MB | 0.033-0.052 | 0.014-0.050 | 0.029-0.065 | 0.68 1.03 1.11 1.26 |
| Splitwise 70B, 2 H100s, between tokens, prompt 512, batch 1 | 37.0 | 21.6 | 33.8 | 0.91 |
| same, batch 2 / 4 / 8 / 16 / 32 | 37.4-52.3 | 21.6-22.8 | 34.3-49.3 | 0.88-0.98 |
| same, batch 1, prompt 128 / 2,048 / 8,192 | 37.2-37.8 | 21.5-21.9 | 33.8-34.2 | 0.90-0.91 |
| Splitwise 70B, 2 A100s, prompt 128 / 512 tokens | 81.1 / 197 | 37.1 / 120 | 88.1 / 210 | 1.09 1.07 |
| same, prompt 2,048 / 8,192 tokens | 688 / 2,990 | 483 / 2,033 | 716 / 2,998 | 1.04 1.00 |
| Splitwise 70B, 2 H100s, prompt 128 / 512 tokens | 48.3 / 83.8 | 23.1 / 40.6 | 53.3 / 87.5 | 1.10 1.04 |
| same, prompt 2,048 / 8,192 tokens | 310 / 1,340 | 161 / 673 | 256 / 1,010 | 0.82 0.75 |
| Splitwise 70B, 8 A100s, prompt 512, TBT / prompt | 44.9 / 94.3 | 9.9 / 39.6 | 44.2 / 84.3 | 0.98 0.89 |
| Splitwise 70B, 8 H100s, same | 29.8 / 53.4 | 6.5 / 17.1 | 29.2 / 47.9 | 0.98 0.90 |
| vLLM Fig. 13a, OPT-13B, A100-40GB: step by Little's law | 45.0 | 16.7 | 36.2 | 0.80 |

Sources:

- Vidur (Agrawal et al., MLSys 2024), data/profiling/compute/{gpu}/{model}/mlp.csv: one decoder layer's
  four linear layers, the sum of the median attn_pre_proj, attn_post_proj, mlp_up_proj and mlp_down_proj,
  ms, FP16, at the stated token count and tensor-parallel degree, for CodeLlama-34B, Qwen-72B,
  InternLM-20B and Meta-Llama-3-8B (Meta-Llama-3-70B is not used: its linear layers have Llama-2-70B's
  shapes, which the fit saw). All 20 within 15 %.
- Vidur's A100 attention profile of Meta-Llama-3-8B (grouped-query, FlashInfer), see ATTENTION_DECODE_GQA:
  every batch of one page of the file. 4 of 7 within 15 %.
- Vidur, data/profiling/network/{a100_dgx,h100_dgx}/all_reduce.csv, 4 GPUs (the fit used 2 and 8), median
  over one power-of-two bin of message size: a decode-sized message (94 KB) and the prefill-sized ones from
  1.5 to 12.5 MB. Larger messages are left out: Vidur's times there imply a bus bandwidth above the NVLink
  spec (633 GB/s on NVLink 4's 450), which no ring reaches, so even the bound would sit above them.
- Splitwise (Patel et al., ISCA 2024): its simulator's measured performance model (Mutinifni/splitwise-sim
  at 8f99e7dc, data/perf_model.csv; vLLM on a DGX-A100 and a DGX-H100), median of the repeated runs. The
  fit takes its 2-GPU A100 times between tokens (the engine overhead) and its 4-GPU times between tokens
  on both nodes (the host's launch floor, calculators.calibration.host_floor_s); the rows below have 2 or
  8 GPUs, and every prompt time is held out.
- vLLM (Kwon et al., SOSP 2023), Fig. 13a: OPT-13B on an A100-40GB at 2 requests/s of ShareGPT (338 output
  tokens on average) batches 30.42 requests, so by Little's law a step takes 30.42 / (2 x 338) = 45 ms.

The largest misses and their cause:

0. Decode attention of one sequence under FlashInfer, 0.43x (and 0.69x, 0.75x at batch 8 and 15):
   FlashInfer's floor per layer is about 20 us where FlashAttention's, which the fit saw, is 8 us; at
   batch 120 and more the two libraries agree with the fitted curve within 6 %. In a whole decode step of
   an 8B model at batch 1 the difference is about 0.4 ms of 9.
1. All-reduce of 94 KB over 4 A100s, 1.98x: Vidur's small-message times are noisy (16-61 us between
   adjacent bins); one latency per link (40 us on NVLink 3) is their median, not each bin.
   The all-reduce fit is a ring's (a fixed latency plus one per step, 2 (G - 1) steps): on NVLink 4 the
   fitted step, 0.66 us, agrees with NCCL's own tuning constant for NVLink, 0.6 us (NVIDIA/nccl
   src/graph/tuning.cc), two sources that never saw each other; on NVLink 3 Vidur's times hardly grow from 2
   to 8 GPUs and the fitted step is 0.01 us. The spec-peak bound is the faster of a ring and a tree at the
   link presets' latencies (calculators.interconnect).
2. All-reduce of 94 KB and 1.5 MB over 4 H100s, 0.61x and 0.68x: the 4-GPU latency (about 40 us) is above
   the 24 us the ring fit gives at 4 GPUs (21 us at 2, 29 at 8).
3. Splitwise prompts of 8,192 and 2,048 tokens on 2 H100s, 0.75x and 0.83x: Vidur's H100 linear layers
   reach 0.79 of the peak, Splitwise's vLLM of 2023 about 0.5 on long prompts (kernels not yet tuned for
   Hopper); H100 attention is extrapolated from the A100 profile.
4. vLLM OPT-13B step, 0.80x: vLLM's first release (2023) spent more per step than the 2024 Splitwise stack
   the overhead was fitted to; OPT-13B is given by its size only, so its shapes are placeholders.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from calculators import calibration, custom_dense_model, custom_gpu, decode_step, make_setup, prefill
from calculators import calibration_points as points
from calculators.calibration_fit import llama_2_70b
from calculators.interconnect import all_reduce_time_s, get_interconnect, ring_all_reduce_time_s

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

# Decode attention of a model and backend the fit never saw: Vidur's A100 profile of Meta-Llama-3-8B (32
# query and 8 KV heads of 128, FlashInfer; the fit used Llama-2-7B's 32 KV heads under FlashAttention), median
# attn_decode per layer, read from the public copy sw5sh/cs378-assignment3 at 7ac2fe9f of
# data/profiling/compute/a100/meta-llama/Meta-Llama-3-8B/attention.csv (offset 1500000), every batch of that
# page at two KV lengths. (batch, KV tokens per sequence, measured ms per layer).
ATTENTION_DECODE_GQA = (
    (1, 800, 0.024),
    (8, 800, 0.035),
    (15, 800, 0.051),
    (120, 768, 0.236),
    (128, 768, 0.257),
    (256, 768, 0.476),
    (512, 768, 0.929),
)

# Splitwise (Patel et al., ISCA 2024), its simulator's measured performance model: Mutinifni/splitwise-sim
# at 8f99e7dc, data/perf_model.csv, vLLM on a DGX-A100 and a DGX-H100, Llama-2-70B, 128 output tokens,
# median of the repeated runs. "tbt": token_time, the mean time between tokens of a batch (context: the
# prompt plus half the output); "prompt": prompt_time, the prefill of one prompt (time to first token with
# no queue). (kind, GPU preset, GPUs, prompt tokens, batch, measured ms). The A100 two-GPU times between
# tokens are the engine-overhead fit's points (calculators.calibration_points.SPLITWISE_DECODE), so none is
# here.
SPLITWISE = (
    ("tbt", "h100-sxm", 2, 512, 1, 37.0),
    ("tbt", "h100-sxm", 2, 512, 2, 37.39),
    ("tbt", "h100-sxm", 2, 512, 4, 39.98),
    ("tbt", "h100-sxm", 2, 512, 8, 40.4),
    ("tbt", "h100-sxm", 2, 512, 16, 41.97),
    ("tbt", "h100-sxm", 2, 512, 32, 52.3),
    ("tbt", "h100-sxm", 2, 128, 1, 37.24),
    ("tbt", "h100-sxm", 2, 2048, 1, 37.37),
    ("tbt", "h100-sxm", 2, 8192, 1, 37.8),
    ("prompt", "a100-sxm-80gb", 2, 128, 1, 81.08),
    ("prompt", "a100-sxm-80gb", 2, 512, 1, 196.9),
    ("prompt", "a100-sxm-80gb", 2, 2048, 1, 688.1),
    ("prompt", "a100-sxm-80gb", 2, 8192, 1, 2990.0),
    ("prompt", "h100-sxm", 2, 128, 1, 48.33),
    ("prompt", "h100-sxm", 2, 512, 1, 83.83),
    ("prompt", "h100-sxm", 2, 2048, 1, 310.3),
    ("prompt", "h100-sxm", 2, 8192, 1, 1340.0),
    ("tbt", "a100-sxm-80gb", 8, 512, 1, 44.85),
    ("prompt", "a100-sxm-80gb", 8, 512, 1, 94.31),
    ("tbt", "h100-sxm", 8, 512, 1, 29.76),
    ("prompt", "h100-sxm", 8, 512, 1, 53.39),
)

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


def _decode_attention(row: tuple[int, int, float]) -> tuple[float, float]:
    """(calibrated, spec-peak bound) seconds of one layer's decode attention over a GQA cache on an A100."""
    batch, kv, _ = row
    kv_bytes = batch * (kv + 1) * 2 * 8 * 128 * 2  # K and V of 8 heads of 128, BF16, the new token's too
    flops = batch * kv * 32 * 4 * 128
    peak, bandwidth = calibration.A100_PEAKS
    fitted = calibration.FITTED["attention-decode/a100"]
    estimate = calibration.decode_attention_time_s(fitted, kv_bytes, batch, 1, bandwidth)
    return estimate, max(flops / peak, kv_bytes / bandwidth)


def _all_reduce(row: tuple[str, int, int, float]) -> tuple[float, float]:
    """(calibrated, spec-peak bound) seconds: the ring Vidur's NCCL ran, and the faster algorithm at spec."""
    link, gpus, size, _ = row
    spec = get_interconnect(link)
    latency, hop, bandwidth = calibration.collective_latency_and_bandwidth(
        link, spec.latency_s, spec.hop_latency_s, spec.bandwidth_bytes_per_s, "as-published"
    )
    fitted = replace(spec, latency_s=latency, hop_latency_s=hop, bandwidth_bytes_per_s=bandwidth)
    return ring_all_reduce_time_s(size, gpus, fitted), all_reduce_time_s(size, gpus, spec)


def _splitwise(row: tuple[str, str, int, int, int, float]) -> tuple[float, float]:
    kind, gpu, gpus, prompt, batch, _ = row
    setup = make_setup(llama_2_70b(), gpu, level="refined", gpus=gpus, mode="calibrated", ignore_memory=True)
    if kind == "tbt":
        result = decode_step(setup, batch=batch, context_tokens=prompt + 64)
    else:
        result = prefill(setup, prompt)
    return result.time_s, result.bound_time_s


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
    for att in ATTENTION_DECODE_GQA:
        estimate, bound = _decode_attention(att)
        rows.append((f"decode attention GQA batch {att[0]} KV {att[1]}", att[2] * 1e-3, bound, estimate))
    for ar in ALL_REDUCES:
        estimate, bound = _all_reduce(ar)
        rows.append((f"all-reduce {ar[0]} x{ar[1]} {ar[2]:,} B", ar[3] * 1e-3, bound, estimate))
    for sw in SPLITWISE:
        estimate, bound = _splitwise(sw)
        rows.append(
            (
                f"Splitwise {sw[0]} {sw[1]} x{sw[2]} prompt {sw[3]} batch {sw[4]}",
                sw[5] * 1e-3,
                bound,
                estimate,
            )
        )
    estimate, bound = _vllm_step()
    rows.append(("vLLM OPT-13B step, batch 30", VLLM_OPT_13B_STEP_MS * 1e-3, bound, estimate))
    return rows


def test_the_validation_set_is_large_enough_and_held_out() -> None:
    rows = table()
    assert len(rows) >= 20
    fitted_models = {(k, n) for pts in points.MATMUL.values() for k, n, _, _ in pts}
    for row in LINEAR_LAYERS:
        _, _, h, f, _, _, _, tp, _ = row
        assert (h, 2 * f // tp) not in fitted_models  # an MLP shape the fit never saw
    assert all(gpus not in points.ALL_REDUCE[link] for link, gpus, _, _ in ALL_REDUCES)
    fitted_steps = {(gpu, gpus, prompt, batch) for gpu, gpus, prompt, batch, _ in points.SPLITWISE_DECODE}
    assert all(
        row[0] == "prompt" or (row[1], row[2], row[3], row[4]) not in fitted_steps for row in SPLITWISE
    )
    host_steps = {(gpu, gpus) for pts in points.SPLITWISE_HOST.values() for gpu, gpus, *_ in pts}
    assert host_steps == {("a100-sxm-80gb", 4), ("h100-sxm", 4)}
    assert all((row[1], row[2]) not in host_steps for row in SPLITWISE)  # no 4-GPU row is held out


def test_the_spec_peak_bound_is_below_every_measurement() -> None:
    for case, measured, bound, _ in table():
        assert bound <= measured, case


def test_calibrated_within_15_percent_on_48_of_59() -> None:
    """The target, 80 % (48 of 59), is reached with no row to spare (see the docstring's misses): a change
    that loses one of them fails here."""
    rows = table()
    within = [case for case, measured, _, estimate in rows if abs(estimate / measured - 1.0) <= 0.15]
    assert len(rows) == 59
    assert len(within) >= 48, sorted(set(c for c, *_ in rows) - set(within))
    assert len(within) / len(rows) >= 0.8


@pytest.mark.parametrize("gpu", ["a100-sxm-80gb", "h100-sxm"])
def test_eight_gpu_steps_wait_for_the_host_fitted_on_four(gpu: str) -> None:
    """On 8 GPUs each GPU's share of the kernels is far shorter than the time the 2023 engine's host takes
    to issue them, so the step is the host's floor (fitted on the same node's 4-GPU steps) plus the engine
    overhead (fitted on 2 A100s): 44.2 ms against 44.85 measured on A100s, 29.2 against 29.76 on H100s. The
    kernels alone are 0.46x of the measured step on both nodes; with the overhead and no floor the step was
    0.57x and 0.62x."""
    row = next(r for r in SPLITWISE if r[:3] == ("tbt", gpu, 8))
    setup = make_setup(llama_2_70b(), gpu, level="refined", gpus=8, mode="calibrated", ignore_memory=True)
    step = decode_step(setup, batch=1, context_tokens=512 + 64)
    like = calibration.measured_like(gpu, 0.0)
    floor = calibration.host_floor_s("as-published", like, 80)
    assert step.host_wait_s > 0
    assert step.time_s - step.overhead_s + step.host_wait_s == pytest.approx(floor)
    assert step.time_s == pytest.approx(floor + calibration.step_overhead_s("as-published", 1))
    assert step.time_s / (row[5] * 1e-3) == pytest.approx(1.0, abs=0.15)


def test_linear_layers_of_unseen_models_within_15_percent() -> None:
    for row in LINEAR_LAYERS:
        estimate, _ = _linear_layers(row)
        assert estimate == pytest.approx(row[8] * 1e-3, rel=0.15), row[:8]


def test_the_engine_overhead_fitted_on_a100s_carries_to_h100s() -> None:
    """The overhead was fitted to A100 steps; on H100s the kernels alone would miss by 20 %, with it 9 %."""
    row = SPLITWISE[0]  # 2 H100s, prompt 512, batch 1: 37.0 ms between tokens
    estimate, bound = _splitwise(row)
    kernels = estimate - calibration.step_overhead_s("as-published", 1)
    measured = row[5] * 1e-3
    assert bound < kernels < estimate < measured
    assert kernels / measured < 0.85
    assert estimate / measured == pytest.approx(0.91, abs=0.02)


# The "current" calibration (CUDA-graph engines of today) has its own held-out check. InferenceBench's
# concurrency-sweep recipe (yobitelcomm.github.io/bench, recipes/concurrency-sweep): vLLM 0.21.0,
# Llama-3.1-8B-Instruct in FP16 on one H100-80GB HBM3, its chatbot-short workload, median time per output
# token at 1 and 4 concurrent requests. The workload's lengths are not stated; at these batches the context
# hardly matters (the step grows by 0.2 % from 200 to 1,000 tokens), 500 is used. Its one fitted point is an
# A100 40GB step of vLLM 0.23 (calculators.calibration_points.CURRENT_DECODE).
CURRENT_ENGINE_H100 = ((1, 6.48), (4, 6.59))  # (concurrent requests, median ms per output token)


@pytest.mark.parametrize(("batch", "measured_ms"), CURRENT_ENGINE_H100)
def test_the_current_calibration_against_a_current_engine(batch: int, measured_ms: float) -> None:
    def step(mode: str, calibration_name: str = "as-published") -> tuple[float, float]:
        setup = make_setup(
            "llama-3.1-8b", "h100-sxm", level="refined", mode=mode, calibration=calibration_name
        )
        result = decode_step(setup, batch=batch, context_tokens=500)
        return result.time_s * 1e3, result.bound_time_s * 1e3

    current, bound = step("calibrated", "current")
    as_published, _ = step("calibrated")
    assert bound < measured_ms
    assert current == pytest.approx(measured_ms, rel=0.15)  # 6.56 and 6.71 ms: 1.01x and 1.02x
    assert as_published > 1.5 * measured_ms  # 11.0 and 12.2 ms: the 2023-24 engines' overhead is gone
