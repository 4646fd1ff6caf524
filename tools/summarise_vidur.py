"""Summarise Vidur's published profiling data into the points the calibrated mode is fitted to.

Run by hand, never by the build:
``python3 tools/summarise_vidur.py VIDUR_GIT_DIR SPLITWISE_SIM_GIT_DIR > calculators/calibration_points.py``.
It reads
the CSV files of the ``microsoft/vidur`` repository (``data/profiling/``, measured on A100 and H100 with the
PyTorch/vLLM-era kernels its authors profiled) through ``git show`` and prints
``calculators/calibration_points.py``: a few hundred summary points, their provenance, nothing else. Only
measurements are taken; no code of Vidur is used or copied.

What is kept, and why:

- Linear layers (``mlp.csv``, columns ``attn_pre_proj``, ``attn_post_proj``, ``mlp_up_proj``,
  ``mlp_down_proj``, median ms, FP16): Llama-2-7B and Llama-2-70B, tensor-parallel degrees 1, 2, 4 and 8,
  token counts from 1 to 4,096. CodeLlama-34B and Qwen-72B are left out on purpose: the validation test holds
  them out to check the fit on shapes it never saw.
- Element-wise kernels (``mlp_act``, ``input_layernorm``, ``add``) of the same rows, as (bytes, ms).
- All-reduce (``network/{a100,h100}_dgx/all_reduce.csv``, single node): medians over bins of one power of
  two in message size, for 2 and 8 GPUs; 4 GPUs are held out for the validation test.
- Attention: the repository's attention CSV files are too large to be mirrored here; the points below were
  read from a public copy of Vidur's ``data/profiling/compute/a100/meta-llama/Llama-2-7b-hf/attention.csv``
  (``sw5sh/cs378-assignment3`` at 7ac2fe9f, byte offsets 0, 560000, 1200000, 2130000, 2350000, 10664000),
  median ``attn_decode`` and ``attn_prefill`` per layer, FlashAttention backend, block size 16.
- Engine overhead: Splitwise's measured performance model (Patel et al., ISCA 2024; its simulator's
  ``data/perf_model.csv`` in ``Mutinifni/splitwise-sim``, vLLM on a DGX-A100), Llama-2-70B on 2 A100s,
  128 output tokens: the median ``token_time`` (time between tokens, ms) of each prompt size at batch 1
  and of each batch up to 32 at a 512-token prompt. Batch 64 is left out (its prompt times fall eightfold:
  another regime of their harness). The 2-GPU H100 rows, the 8-GPU rows and every prompt time are held out
  for the validation test.
- The host's launch floor of the same engine (eager PyTorch: the CPU issues every kernel): the same
  selection on 4 GPUs, on the DGX-A100 and the DGX-H100 (``SPLITWISE_HOST``). At 4 GPUs the kernels are
  shorter than the host's issue time, so these rows measure the host; no validation row has 4 GPUs.
- The "current" calibration's overhead: one published step of vLLM 0.23 on an A100 40GB (CURRENT_DECODE
  below, hand-transcribed with its source); a step of another current engine on an H100 is held out.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
import subprocess
import sys

MODELS = ("meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-70b-hf")
HELD_OUT_MODELS = ("codellama/CodeLlama-34b-Instruct-hf", "Qwen/Qwen-72B")
TOKENS = (1, 16, 64, 128, 256, 512, 1024, 2048, 4096)
DEGREES = (1, 2, 4, 8)
GPUS = ("a100", "h100")
NODES = {"nvlink3": "a100_dgx", "nvlink4": "h100_dgx"}
FITTED_GPU_COUNTS = (2, 8)

# (GPU, KV heads on the GPU, head dim, batch, KV tokens per sequence, ms per layer): attn_decode medians.
ATTENTION_DECODE = (
    ("a100", 32, 128, 1, 32, 0.009),
    ("a100", 32, 128, 8, 32, 0.018),
    ("a100", 32, 128, 16, 32, 0.028),
    ("a100", 32, 128, 32, 32, 0.048),
    ("a100", 32, 128, 64, 32, 0.097),
    ("a100", 32, 128, 16, 800, 0.151),
    ("a100", 32, 128, 20, 800, 0.171),
    ("a100", 32, 128, 32, 800, 0.260),
    ("a100", 32, 128, 48, 800, 0.372),
    ("a100", 32, 128, 64, 800, 0.471),
    ("a100", 32, 128, 100, 800, 0.692),
    ("a100", 32, 128, 66, 2240, 1.324),
    ("a100", 32, 128, 96, 2240, 1.843),
    ("a100", 32, 128, 128, 2240, 2.364),
    ("a100", 32, 128, 1, 2304, 0.034),
    ("a100", 32, 128, 2, 2304, 0.062),
    ("a100", 32, 128, 4, 2304, 0.120),
    ("a100", 32, 128, 8, 2304, 0.239),
    ("a100", 32, 128, 16, 2304, 0.381),
    ("a100", 32, 128, 24, 2304, 0.542),
)
# (GPU, query heads on the GPU, head dim, chunk tokens, tokens already cached, ms per layer): attn_prefill.
ATTENTION_PREFILL = (
    ("a100", 32, 128, 544, 2112, 0.296),
    ("a100", 32, 128, 544, 3008, 0.349),
    ("a100", 32, 128, 544, 3520, 0.393),
    ("a100", 32, 128, 576, 0, 0.124),
    ("a100", 32, 128, 576, 512, 0.157),
    ("a100", 32, 128, 576, 1024, 0.204),
    ("a100", 32, 128, 576, 2048, 0.277),
    ("a100", 32, 128, 576, 2304, 0.295),
    ("a100", 32, 128, 1024, 2560, 0.552),
    ("a100", 32, 128, 1024, 3072, 0.612),
    ("a100", 32, 128, 1088, 0, 0.298),
    ("a100", 32, 128, 1088, 512, 0.356),
    ("a100", 32, 128, 1088, 1024, 0.426),
    ("a100", 32, 128, 1088, 2048, 0.564),
    ("a100", 32, 128, 1088, 3008, 0.675),
    ("a100", 32, 128, 1152, 0, 0.308),
    ("a100", 4, 128, 3520, 416, 0.414),
    ("a100", 4, 128, 3584, 0, 0.379),
    ("a100", 4, 128, 3584, 512, 0.414),
    ("a100", 4, 128, 3648, 0, 0.378),
    ("a100", 4, 128, 3840, 0, 0.430),
    ("a100", 4, 128, 4032, 0, 0.470),
)


CURRENT_DECODE = ("llama-3.1-8b", 312, 1.555, 40, 1, 1024 + 64, round(1000 / 75, 2))


def _commit(git_dir: str) -> str:
    return subprocess.run(
        ["git", "-C", git_dir, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def _rows(git_dir: str, path: str) -> list[dict[str, str]]:
    text = subprocess.run(
        ["git", "-C", git_dir, "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout
    return list(csv.DictReader(io.StringIO(text)))


def linear_shapes(row: dict[str, str]) -> dict[str, tuple[int, int]]:
    """(inputs, outputs per GPU) of the four linear layers of one row of ``mlp.csv``."""
    h, f = int(row["n_embd"]), int(row["n_expanded_embd"])
    heads, kv_heads = int(row["n_head"]), int(row["n_kv_head"])
    tp = int(row["num_tensor_parallel_workers"])
    d = h // heads
    return {
        "attn_pre_proj": (h, (heads + 2 * kv_heads) * d // tp),
        "attn_post_proj": (h // tp, h),
        "mlp_up_proj": (h, 2 * f // tp),
        "mlp_down_proj": (f // tp, h),
    }


def _selected(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    seen: set[tuple[int, int]] = set()
    kept = []
    for row in rows:
        key = (int(row["num_tokens"]), int(row["num_tensor_parallel_workers"]))
        if key[0] in TOKENS and key[1] in DEGREES and key not in seen:
            seen.add(key)
            kept.append(row)
    return kept


def matmul_points(git_dir: str, gpu: str, models: tuple[str, ...]) -> list[tuple[int, int, int, float]]:
    points = []
    for model in models:
        for row in _selected(_rows(git_dir, f"data/profiling/compute/{gpu}/{model}/mlp.csv")):
            tokens = int(row["num_tokens"])
            for op, (k, n) in linear_shapes(row).items():
                points.append((k, n, tokens, float(row[f"time_stats.{op}.median"])))
    return points


def elementwise_points(git_dir: str, gpu: str) -> list[tuple[int, float]]:
    points = []
    for model in MODELS:
        for row in _selected(_rows(git_dir, f"data/profiling/compute/{gpu}/{model}/mlp.csv")):
            t, h = int(row["num_tokens"]), int(row["n_embd"])
            f = int(row["n_expanded_embd"]) // int(row["num_tensor_parallel_workers"])
            sizes = {"mlp_act": 3 * f * t * 2, "input_layernorm": 2 * h * t * 2, "add": 3 * h * t * 2}
            for op, size in sizes.items():
                points.append((size, float(row[f"time_stats.{op}.median"])))
    return points


def all_reduce_points(git_dir: str, node: str, gpus: int) -> list[tuple[int, float]]:
    """Median (bytes, ms) per power-of-two bin of message size, one node of ``gpus`` GPUs, FP16 buffers."""
    bins: dict[int, list[tuple[int, float]]] = {}
    for row in _rows(git_dir, f"data/profiling/network/{node}/all_reduce.csv"):
        if int(row["num_workers"]) != gpus or int(row["devices_per_node"]) != gpus:
            continue
        size = 2 * int(row["size"])  # elements of FP16
        bins.setdefault(int(math.log2(size)), []).append((size, float(row["time_stats.all_reduce.median"])))
    return [
        (int(statistics.median(s for s, _ in pts)), round(statistics.median(t for _, t in pts), 4))
        for _, pts in sorted(bins.items())
    ]


SPLITWISE_HARDWARE = {"a100-80gb": "a100-sxm-80gb", "h100-80gb": "h100-sxm"}


def splitwise_decode_points(
    git_dir: str, hardware: str = "a100-80gb", gpus: int = 2
) -> list[tuple[str, int, int, int, float]]:
    """(GPU preset, GPUs, prompt, batch, median ms between tokens): Llama-2-70B on ``gpus`` GPUs of
    ``hardware``, 128 output tokens, every prompt at batch 1 and batches up to 32 at a 512-token prompt."""
    groups: dict[tuple[int, int], list[float]] = {}
    for row in _rows(git_dir, "data/perf_model.csv"):
        if (row["model"], row["hardware"], row["tensor_parallel"], row["token_size"]) != (
            "llama2-70b",
            hardware,
            str(gpus),
            "128",
        ):
            continue
        prompt, batch = int(row["prompt_size"]), int(row["batch_size"])
        if batch == 1 or (prompt == 512 and batch <= 32):
            groups.setdefault((prompt, batch), []).append(float(row["token_time"]))
    return [
        (SPLITWISE_HARDWARE[hardware], gpus, prompt, batch, round(statistics.median(times), 3))
        for (prompt, batch), times in sorted(groups.items())
    ]


def main(git_dir: str, splitwise_dir: str) -> None:
    commit = _commit(git_dir)
    out = [
        '"""Summary points of the profiling data Vidur published: what the calibrated mode is fitted to.',
        "",
        "Generated by tools/summarise_vidur.py (see its docstring for what is kept and why); do not edit by",
        "hand. Times are medians in milliseconds as Vidur measured them; shapes are per GPU. calculators.",
        "calibration fits its coefficients to these points, and a test re-derives them.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f'VIDUR_COMMIT = "{commit}"',
        'VIDUR_REPOSITORY = "https://github.com/microsoft/vidur"',
        "",
        "# GPU -> (inputs K, outputs N per GPU, tokens T, ms): linear layers of Llama-2-7B and -70B, FP16.",
        "# Source: data/profiling/compute/{gpu}/meta-llama/Llama-2-{7b,70b}-hf/mlp.csv, columns",
        "# time_stats.{attn_pre_proj,attn_post_proj,mlp_up_proj,mlp_down_proj}.median, n_embd, n_head,",
        "# n_kv_head, n_expanded_embd, num_tokens, num_tensor_parallel_workers.",
        "MATMUL = {",
    ]
    for gpu in GPUS:
        out.append(f'    "{gpu}": (')
        out += [f"        {p!r}," for p in matmul_points(git_dir, gpu, MODELS)]
        out.append("    ),")
    out += [
        "}",
        "",
        "# GPU -> (bytes read and written, ms): mlp_act, input_layernorm and add of the same rows.",
        "ELEMENTWISE = {",
    ]
    for gpu in GPUS:
        out.append(f'    "{gpu}": (')
        out += [f"        {p!r}," for p in elementwise_points(git_dir, gpu)]
        out.append("    ),")
    out += [
        "}",
        "",
        "# link -> GPUs -> (bytes per GPU, ms): single-node all-reduce, median per power-of-two size bin.",
        "# Source: data/profiling/network/{a100_dgx,h100_dgx}/all_reduce.csv (size in FP16 elements).",
        "ALL_REDUCE = {",
    ]
    for link, node in NODES.items():
        out.append(f'    "{link}": {{')
        for gpus in FITTED_GPU_COUNTS:
            out.append(f"        {gpus}: (")
            out += [f"            {p!r}," for p in all_reduce_points(git_dir, node, gpus)]
            out.append("        ),")
        out.append("    },")
    out += [
        "}",
        "",
        "# Attention on an A100, per layer, FlashAttention backend, paged KV cache (block 16), FP16;",
        "# read from a public copy of data/profiling/compute/a100/meta-llama/Llama-2-7b-hf/attention.csv",
        "# (too large for the mirror): sw5sh/cs378-assignment3 at 7ac2fe9f.",
        "# (GPU, KV heads, head dim, batch, KV tokens, ms).",
        "ATTENTION_DECODE = (",
        *(f"    {p!r}," for p in ATTENTION_DECODE),
        ")",
        "# (GPU, query heads, head dim, chunk tokens, tokens already cached, ms).",
        "ATTENTION_PREFILL = (",
        *(f"    {p!r}," for p in ATTENTION_PREFILL),
        ")",
        "",
        "# Engine overhead: the time between tokens Splitwise measured (vLLM, DGX-A100), Llama-2-70B on",
        "# 2 GPUs, 128 output tokens; Mutinifni/splitwise-sim data/perf_model.csv at "
        + _commit(splitwise_dir)[:8]
        + ", median token_time.",
        "# (GPU preset, GPUs, prompt tokens, batch, ms between tokens).",
        "SPLITWISE_DECODE = (",
        *(f"    {p!r}," for p in splitwise_decode_points(splitwise_dir)),
        ")",
        "",
        "# The host launch floor of the same engine: the same selection on 4 GPUs, where the kernels are",
        "# shorter than the time the host takes to issue them. Measured GPU -> (GPU preset, GPUs, prompt",
        "# tokens, batch, ms between tokens).",
        "SPLITWISE_HOST = {",
        *(
            line
            for like, hardware in (("a100", "a100-80gb"), ("h100", "h100-80gb"))
            for line in (
                f'    "{like}": (',
                *(f"        {p!r}," for p in splitwise_decode_points(splitwise_dir, hardware, 4)),
                "    ),",
            )
        ),
        "}",
        "",
        "# Per-step overhead of the current calibration: one measured step of a CUDA-graph engine of today.",
        "# J. Musgrave, 'vLLM throughput-latency sweep on NVIDIA A100' (johnmusgrave.com): vLLM 0.23.0,",
        "# Llama-3.1-8B-Instruct BF16 on one A100 40GB (1,555 GB/s), 1,024-token prompts, 128 output tokens,",
        "# one request at a time: 'about 75 tokens/sec', 13.3 ms between tokens.",
        "# (model preset, GPU: BF16 TFLOP/s, TB/s, GB, batch, context tokens, ms between tokens).",
        f"CURRENT_DECODE = ({CURRENT_DECODE!r},)",
    ]
    print("\n".join(out).replace("'", '"'))  # the house style's double quotes


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
