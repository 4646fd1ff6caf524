"""One matrix product (GEMM) on its own: FLOPs, bytes, intensity, and how tiles and waves waste its maths.

A linear layer multiplies the activations of T tokens (an M x K matrix, M = T, K = d_in) by a weight
(K x N, N = d_out). It does 2 M N K FLOPs and, if each matrix is read or written once, moves
b (M K + K N + M N) bytes for b bytes per value. While T is much smaller than both widths the weight's
K N term dominates the bytes, so the intensity is about 2 M N K / (b K N) = 2 T / b: the token count, in
BF16. The product turns compute-bound at the ridge point, so the token count where it does (the critical
batch, :func:`critical_tokens`) is the ridge times b / 2.

A GPU computes a GEMM in output tiles (NVIDIA, "Matrix Multiplication Background User's Guide",
DU-09799-001, February 2023: chapter 2.1 "GPU implementation" and 2.3 "Typical tile dimensions in cuBLAS",
tiles such as 256x128 and 128x128): each thread block computes one tile of C, and the tiles are spread over
the streaming multiprocessors (SMs). Two things waste the maths units (chapter 3, "Dimension quantization
effects"):

- **tile quantisation** (3.1): an output dimension that is not a multiple of the tile is padded to one, and
  the padding is computed for nothing (M = 1 token in a 128-row tile uses 1/128 of it);
- **wave quantisation** (3.2): the tiles run in waves of one per SM, so a tile count just past a multiple
  of the SM count runs a last wave that leaves most SMs idle, and takes as long as a full one.

:func:`gemm` counts both, with one tile per SM at a time as the guide's wave example assumes (256x128 tiles,
one per SM of an A100; its tile example uses 128x128). Real libraries pick the tile per shape (2.3), may run
several small tiles per SM, or split K over thread blocks when the output has too few tiles (CUTLASS,
"Efficient GEMM in CUDA", Parallelized Reductions); the tile here is an input, so the lesson's figures are
illustrations of the effect, not cuBLAS's choice. The calibrated time is the
course's curve fitted to Vidur's measured linear layers (:mod:`calculators.calibration`), which already
contains whatever these effects cost on the measured shapes; the two are shown side by side, never
multiplied.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators import calibration as fitted
from calculators.hardware import GPU, GPUS, get_gpu
from calculators.precision import get_precision
from calculators.roofline import ridge_point, roofline_time
from calculators.setting import active_setting
from calculators.validation import choice, count

DEFAULT_TILE = (128, 128)  # one of the guide's typical cuBLAS tiles (2.3); 256x128 is another
MAX_DIMENSION = 1 << 24  # 16.8 million rows or columns: past any layer of any model


@dataclass(frozen=True)
class Gemm:
    """One M x K by K x N product on one GPU: its work, its roofline and what its tiles and waves waste."""

    m: int  # rows of the output: the tokens of a linear layer
    n: int  # columns of the output: the layer's d_out
    k: int  # the shared dimension: the layer's d_in
    gpu: str  # the GPU's name
    precision: str  # the format of every value and of the maths
    tile_m: int
    tile_n: int
    sms: int  # streaming multiprocessors the tiles are spread over
    flops: float  # 2 M N K
    bytes_moved: float  # bytes per value x (M K + K N + M N): each matrix read or written once
    intensity_flop_per_byte: float
    ridge_point_flop_per_byte: float
    bound: str  # "compute" or "memory", at spec peaks
    tiles: int  # ceil(M / tile_m) x ceil(N / tile_n)
    waves: int  # ceil(tiles / SMs): one tile per SM at a time
    tile_efficiency: float  # M N over the padded tiles' area: the share of tile work that is real
    wave_efficiency: float  # tiles over the SM slots of all the waves
    compute_time_s: float  # FLOPs at the spec peak
    memory_time_s: float  # bytes at the spec bandwidth
    bound_time_s: float  # the spec-peak roofline: max of the two
    quantised_compute_time_s: float  # the maths of every padded tile and wave slot at the spec peak
    quantised_time_s: float  # the roofline with that maths: max of it and the memory time
    calibrated_time_s: float  # the course's fitted curve for one linear-layer kernel
    calibration: str  # which calibration that curve uses
    mode: str  # which of the two times ``time_s`` is

    @property
    def quantised_efficiency(self) -> float:
        """The share of the tensor cores' work in the waves that is the product's own: tile x wave."""
        return self.tile_efficiency * self.wave_efficiency

    @property
    def time_s(self) -> float:
        """The product's time in its mode: the calibrated estimate, or the spec-peak bound."""
        return self.calibrated_time_s if self.mode == "calibrated" else self.bound_time_s

    @property
    def achieved_flops_per_s(self) -> float:
        """FLOPs over :attr:`time_s`: what the product reaches in its mode."""
        return self.flops / self.time_s


def sm_count(gpu: str | GPU) -> int:
    """The GPU's streaming multiprocessors, from its preset's anatomy (:mod:`calculators.gpu_anatomy`, which
    cites NVIDIA's architecture whitepapers); a GPU without one raises ``ValueError``."""
    chip = get_gpu(gpu)
    if chip.anatomy is None:
        raise ValueError(
            f"no published SM count for {chip.name} in its preset; give sms=... or use a GPU with one: "
            + ", ".join(sorted(key for key, preset in GPUS.items() if preset.anatomy is not None))
        )
    return chip.anatomy.sm_count


def gemm(
    m: int,
    n: int,
    k: int,
    gpu: str | GPU = "h100-sxm",
    precision: str = "bf16",
    *,
    tile_m: int = DEFAULT_TILE[0],
    tile_n: int = DEFAULT_TILE[1],
    sms: int | None = None,
    mode: str | None = None,
    calibration: str | None = None,
) -> Gemm:
    """An ``m`` x ``k`` by ``k`` x ``n`` product in ``precision`` on ``gpu``, with tiles and waves counted.

    ``sms`` defaults to the GPU's published SM count (:func:`sm_count`); ``mode`` and ``calibration``
    default to the active model setting (else spec peaks and "current"), so :attr:`Gemm.time_s` follows
    the course's setting like every other figure.
    """
    m = count("m", m, maximum=MAX_DIMENSION)
    n = count("n", n, maximum=MAX_DIMENSION)
    k = count("k", k, maximum=MAX_DIMENSION)
    tile_m = count("tile_m", tile_m, maximum=1024)
    tile_n = count("tile_n", tile_n, maximum=1024)
    chip = get_gpu(gpu)
    if sms is None:
        sms = sm_count(chip)
    sms = count("sms", sms, maximum=10_000)
    setting = active_setting()
    mode = choice("mode", mode or (setting.mode if setting else "peak"), fitted.MODES)
    calibration = choice(
        "calibration", calibration or (setting.calibration if setting else "current"), fitted.CALIBRATIONS
    )
    value_bytes = get_precision(precision).bytes_per_value
    peak = chip.peak_flops_per_s(precision)
    bandwidth = chip.memory_bandwidth_bytes_per_s

    flops = 2.0 * m * n * k
    bytes_moved = value_bytes * (m * k + k * n + m * n)
    roofline = roofline_time(flops, bytes_moved, chip, precision)
    tiles_m, tiles_n = math.ceil(m / tile_m), math.ceil(n / tile_n)
    tiles = tiles_m * tiles_n
    waves = math.ceil(tiles / sms)
    tile_efficiency = (m * n) / (tiles * tile_m * tile_n)
    wave_efficiency = tiles / (waves * sms)
    quantised_compute = roofline.compute_time_s / (tile_efficiency * wave_efficiency)

    like = fitted.measured_like(chip.key, chip.peak_flops_per_s("bf16") / bandwidth)
    curve = fitted.FITTED[f"matmul/{like}"]
    params = (curve[0] * fitted.launch_scale(calibration), *curve[1:])
    calibrated = fitted.matmul_time_s(params, flops, bytes_moved, m, peak, bandwidth)

    return Gemm(
        m=m,
        n=n,
        k=k,
        gpu=chip.name,
        precision=precision,
        tile_m=tile_m,
        tile_n=tile_n,
        sms=sms,
        flops=flops,
        bytes_moved=bytes_moved,
        intensity_flop_per_byte=roofline.intensity_flop_per_byte,
        ridge_point_flop_per_byte=roofline.ridge_point_flop_per_byte,
        bound=roofline.bound,
        tiles=tiles,
        waves=waves,
        tile_efficiency=tile_efficiency,
        wave_efficiency=wave_efficiency,
        compute_time_s=roofline.compute_time_s,
        memory_time_s=roofline.memory_time_s,
        bound_time_s=roofline.time_s,
        quantised_compute_time_s=quantised_compute,
        quantised_time_s=max(quantised_compute, roofline.memory_time_s),
        calibrated_time_s=calibrated,
        calibration=calibration,
        mode=mode,
    )


def critical_tokens(d_in: int, d_out: int, gpu: str | GPU = "h100-sxm", precision: str = "bf16") -> float:
    """Tokens at which a d_in x d_out weight product reaches the ridge point and turns compute-bound.

    With D = d_in d_out, S = d_in + d_out and b bytes per value, T tokens give the intensity
    2 T D / (b (D + T S)); setting it equal to the ridge R and solving for T gives R b D / (2 D - R b S).
    For widths much larger than R b that is about R b / 2: the ridge itself in BF16, whatever the layer.
    If 2 D <= R b S the product never reaches the ridge (its intensity tends to 2 D / (b S) as T grows).
    """
    d_in = count("d_in", d_in, maximum=MAX_DIMENSION)
    d_out = count("d_out", d_out, maximum=MAX_DIMENSION)
    chip = get_gpu(gpu)
    value_bytes = get_precision(precision).bytes_per_value
    ridge = ridge_point(chip, precision)
    weights, widths = float(d_in * d_out), float(d_in + d_out)
    denominator = 2.0 * weights - ridge * value_bytes * widths
    if denominator <= 0:
        raise ValueError(
            f"a {d_in} x {d_out} product never reaches the {ridge:.0f} FLOP/byte ridge of {chip.name}: "
            "its intensity levels off below it; use wider layers"
        )
    return ridge * value_bytes * weights / denominator
