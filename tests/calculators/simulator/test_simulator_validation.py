"""The serving simulator against published results, each with its source and an honest tolerance.

The simulator runs at spec-sheet peaks unless a case states efficiencies, and real engines are slower than
the roofline, so absolute rates differ from measured ones; what carries over is how memory is used (nearly
analytical) and how schedulers compare (ratios and orderings). Where ours differs, the case says by how much
and why. Figures quoted here were checked against the papers' text.

| case | published | ours | tolerance |
| --- | --- | --- | --- |
| vLLM Fig. 2, KV memory holding tokens: Orca (Max) | 20.4% (22.4% of allocated) | 22.1% | +-3 points |
| same, Orca (Pow2) | 26.8% (46.0% of allocated) | 45.8% | +-3 points |
| same, Orca (Oracle) | 38.2% (60.3% of allocated) | 59.8% | +-3 points |
| same, vLLM (paged) | 96.3% | 98.4% | 95-100% |
| vLLM Fig. 13a, requests batched: Orca (Max) | 7.00 | 6.83 | +-5% |
| same, Max < Pow2 < Oracle < vLLM | 7.00, 9.81, 13.62, 30.42 | 6.83, 14.1, 17.4, 21.3 | order |
| continuous over static batching, throughput | up to 22x (vLLM over FT) | 9.1x | > 2x |
| Sarathi-Serve Fig. 10/12: capacity, strict TBT | 2.6x-3.5x over vLLM | 3.5x-3.9x | 2.6x holds, 5x not |
| Sarathi-Serve: longest stall, chunked / prefill-first | "stall-free" | 29x shorter | < 1/2 |
| DistServe Sec. 1: per-GPU goodput, 2P + 1D GPUs | 2.1x colocated | 1.9x | 1.3x-3x |

Why ours differs:

- vLLM Fig. 2 counts a buddy allocator's external fragmentation ("external frag. & others": 8.9%, 41.6% and
  36.6% of memory for Max, Pow2 and Oracle); our contiguous allocator has none, so we compare with the share
  of the *allocated* memory that holds tokens (token states over token states + reservation + internal
  fragmentation), which the same figure gives. Our paged waste is only the last block's unused slots; the
  paper's 3.7% includes more.
- vLLM Fig. 13a's batch sizes are set by memory for Orca (Max) (15.7K slots / 2,048 = 7.7 at most), which we
  reproduce; for the others they also depend on step time, which comes from the calibrated mode (kernels
  fitted to Vidur's profiles and an engine overhead fitted to Splitwise's, fixed before this case; no
  efficiency is chosen for it). The paper's own vLLM batch implies by Little's law 30.42 requests / (2 req/s
  x 338 tokens) = 45 ms per step; the calibrated step of OPT-13B at that load is about 33 ms (16.7 ms at
  spec peaks), so our paged batch is 21, not 30: vLLM's first release spent more per step than the 2024
  stack the overhead was fitted to. Our contiguous baselines batch more than the paper's: they have no
  external fragmentation.
- Continuous over static: Orca and vLLM measured against FasterTransformer with its own batching, at equal
  latency; we compare saturated throughput with a 32-request static batch reserving 2,048 tokens each.
- Sarathi-Serve: same definition of capacity (highest Poisson rate with P99 inter-token latency within 5x a
  decode iteration at 4K context and batch 32, and median queueing <= 2 s), but at spec peaks, with no kernel
  overheads for chunking (the paper measures up to 25% for 512-token chunks), a log-normal prompt with the
  paper's median (1,730 tokens) and outputs of our choosing, and a short trace (300 requests; 3.9x with
  300, 3.5x with 600, the longer trace being the fairer).
- DistServe: the paper's example (13B, A100-80GB, 512 in / 64 out, 90% attainment) does not state its two
  SLOs in the text; we use TTFT <= 0.2 s and TPOT <= 20 ms (tight, as for summaries). The gain shrinks to
  none as the SLOs loosen (1.45x at 0.25 s / 25 ms, 1.0x at 0.4 s / 40 ms), which is DistServe's point too.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from calculators import (
    SLO,
    ChunkedPrefill,
    ContinuousBatching,
    Disaggregated,
    Lengths,
    MemoryConfig,
    Request,
    StaticBatching,
    burst_workload,
    custom_dense_model,
    custom_gpu,
    make_setup,
    max_rate_meeting_slo,
    mixed_step,
    poisson_workload,
    simulate,
    sweep_rates,
)

# --- vLLM (Kwon et al., SOSP 2023, "Efficient Memory Management for Large Language Model Serving with
# PagedAttention"): OPT-13B on one A100-40GB, 15.7K KV slots (Table 1), ShareGPT lengths with means 161.31 in
# and 337.99 out (Fig. 11), at most 2,048 tokens per sequence, 2 requests/s (Fig. 13a).
OPT_13B_A100 = make_setup(
    custom_dense_model(params_billion=13),
    custom_gpu(bf16_tflops=312, memory_bandwidth_tb_per_s=1.555, memory_gb=40, name="A100-40GB"),
    mode="calibrated",  # kernels fitted to Vidur's profiles, fixed before this case; see the docstring
)
SLOTS = 15_700


def sharegpt(rate: float, count: int) -> list[Request]:
    """ShareGPT-like requests (log-normal, the paper's means, our spread), each at most 2,048 tokens."""
    work = poisson_workload(
        rate, count, Lengths.lognormal(161.31, 160, cap=1024), Lengths.lognormal(337.99, 330), seed=0
    )
    return [
        Request(r.id, r.arrival_s, r.prompt_tokens, min(r.output_tokens, 2048 - r.prompt_tokens))
        for r in work
    ]


@pytest.fixture(scope="module")
def vllm_runs() -> dict[str, dict[str, float]]:
    work = sharegpt(2.0, 800)
    memories = {
        "max": MemoryConfig("contiguous", capacity_tokens=SLOTS, max_sequence_tokens=2048),
        "pow2": MemoryConfig("contiguous", capacity_tokens=SLOTS, reserve="pow2"),
        "oracle": MemoryConfig("contiguous", capacity_tokens=SLOTS, reserve="oracle"),
        "paged": MemoryConfig(capacity_tokens=SLOTS),
    }
    return {
        name: simulate(work, OPT_13B_A100, memory=memory, timeline_steps=0).summary
        for name, memory in memories.items()
    }


# Fig. 2: token states, reservation, internal fragmentation, external fragmentation & others (% of memory).
FIG_2 = {"max": (20.4, 13.3, 57.3, 8.9), "pow2": (26.8, 17.9, 13.6, 41.6), "oracle": (38.2, 25.2, 0.0, 36.6)}


@pytest.mark.parametrize("name", ["max", "pow2", "oracle"])
def test_vllm_fig2_contiguous_memory_holding_tokens(
    vllm_runs: dict[str, dict[str, float]], name: str
) -> None:
    tokens, reservation, internal, _external = FIG_2[name]
    allocated_share = tokens / (tokens + reservation + internal)  # 0.224, 0.460, 0.603
    ours = 1.0 - vllm_runs[name]["kv_waste_fraction"]
    assert ours == pytest.approx(allocated_share, abs=0.03)


def test_vllm_fig2_paged_memory_is_nearly_all_tokens(vllm_runs: dict[str, dict[str, float]]) -> None:
    ours = 1.0 - vllm_runs["paged"]["kv_waste_fraction"]
    assert 0.95 <= ours <= 1.0  # the paper: 96.3%


def test_vllm_fig13a_batched_requests(vllm_runs: dict[str, dict[str, float]]) -> None:
    batch = {name: run["mean_decode_batch"] for name, run in vllm_runs.items()}
    assert batch["max"] == pytest.approx(7.00, rel=0.05)  # memory-bound: 15,700 // 2,048 = 7 slabs
    assert batch["max"] < batch["pow2"] < batch["oracle"] < batch["paged"]  # 7.00 < 9.81 < 13.62 < 30.42
    # The paper: 30.42 / 7.00 = 4.3x. Ours, calibrated: 21.3 / 6.83 = 3.1x. Little's law puts the paged
    # batch at rate x output x step = 2 req/s x 338 tokens x 33 ms (the calibrated step at batch 21: 21.2 ms
    # of kernels, 4.5 + 0.34 x 21 ms of engine overhead) = 22; the paper's 30.42 implies a 45 ms step
    # (see the docstring and tests/calculators/test_calibration_validation.py, where this step is a held-out
    # row).
    assert batch["paged"] / batch["max"] > 2.7


def test_continuous_batching_outserves_static_batching() -> None:
    # Offline: 400 ShareGPT-like requests at once on the lesson's setup. Static: batches of 32, each
    # reserving 2,048 tokens, run to their longest request; continuous: paged, admitted every step.
    work = burst_workload(
        400, Lengths.lognormal(161.31, 160, cap=1024), Lengths.lognormal(337.99, 330, cap=1024)
    )
    static = simulate(
        work, scheduler=StaticBatching(32), memory=MemoryConfig("contiguous", max_sequence_tokens=2048)
    )
    continuous = simulate(work, scheduler=ContinuousBatching())
    ratio = continuous.summary["throughput_rps"] / static.summary["throughput_rps"]
    assert ratio > 2.0  # ours 9.1x; vLLM reports up to 22x over FasterTransformer, Orca 36.9x on GPT-3 175B


# --- Sarathi-Serve (Agrawal et al., OSDI 2024, "Taming Throughput-Latency Tradeoff in LLM Inference with
# Sarathi-Serve"): Mistral-7B on one A100-80GB, strict SLO = 5x a decode iteration (4K context, batch 32),
# token budget 512, capacity = highest rate with P99 TBT within the SLO and median scheduling delay <= 2 s.
MISTRAL_A100 = make_setup("mistral-7b", "a100-sxm-80gb", level="refined")
OPENCHAT_PROMPT = Lengths.lognormal(1730 * math.sqrt(2), 1730 * math.sqrt(2), cap=6000)  # median 1,730
OUTPUT = Lengths.lognormal(400, 400, cap=2000)  # our assumption


def sustains(scheduler: ContinuousBatching | ChunkedPrefill, rate: float, tbt_slo_s: float) -> bool:
    """Sarathi-Serve's test of a load: P99 TBT within the SLO and median scheduling delay <= 2 s."""
    row = sweep_rates(
        [rate], 300, prompt=OPENCHAT_PROMPT, output=OUTPUT, setup=MISTRAL_A100, scheduler=scheduler
    )[0]
    return (row["itl_p99_s"] or 0.0) <= tbt_slo_s and (row["queueing_p50_s"] or 0.0) <= 2.0


def test_sarathi_chunked_prefill_capacity_under_strict_tbt() -> None:
    strict = 5 * mixed_step(MISTRAL_A100, decode_contexts=[4096] * 32).time_s  # 5 x 15.5 ms = 77.5 ms
    lo, hi = 0.5, 8.0  # prefill-first capacity by bisection on a log scale, to within 16^(1/16) = 19%
    for _ in range(4):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if sustains(ContinuousBatching(), mid, strict) else (lo, mid)
    # Chunked prefill sustains 2.6x that load (the paper's lower figure) but not 5x (ours lands at 3.5x).
    assert sustains(ChunkedPrefill(token_budget=512), 2.6 * lo, strict)
    assert not sustains(ChunkedPrefill(token_budget=512), 5.0 * hi, strict)


def test_sarathi_chunked_prefill_removes_generation_stalls() -> None:
    work = poisson_workload(2.0, 80, OPENCHAT_PROMPT, OUTPUT, seed=1)
    stalls = {
        s.name: simulate(work, MISTRAL_A100, s, timeline_steps=0).summary["longest_stall_s"]
        for s in (ContinuousBatching(), ChunkedPrefill(token_budget=512))
    }
    assert stalls["chunked"] < stalls["continuous"] / 2


# --- DistServe (Zhong et al., OSDI 2024, "DistServe: Disaggregating Prefill and Decoding for
# Goodput-optimized Large Language Model Serving"), Section 1: a 13B model on A100-80GB, 512 tokens in and 64
# out, goodput at 90% SLO attainment: colocated 1.6 requests/s; 2 prefill GPUs + 1 decode GPU 10 requests/s,
# 3.3 per GPU, 2.1x.
def test_distserve_disaggregation_raises_per_gpu_goodput_under_tight_slos() -> None:
    setup = make_setup(custom_dense_model(params_billion=13), "a100-sxm-80gb")
    kwargs: dict[str, Any] = {
        "prompt": 512,
        "output": 64,
        "setup": setup,
        "memory": MemoryConfig(capacity_tokens=100_000),
        "slo": SLO(ttft_s=0.2, tpot_s=0.02),
        "duration_s": 20,
        "low_per_s": 0.5,
        "high_per_s": 60,
        "steps": 6,
    }
    colocated = max_rate_meeting_slo(scheduler=ContinuousBatching(), **kwargs)["rate_per_s"]
    split = max_rate_meeting_slo(scheduler=Disaggregated(2, 1, "nvlink3"), **kwargs)["rate_per_s"]
    assert colocated is not None
    assert split is not None
    assert 1.3 <= (split / 3) / colocated <= 3.0  # the paper: 2.1x per GPU
