"""FLOPs and bytes of one forward pass, for prefill and for a decode step, at two levels of detail.

``simple`` is the lesson's model: a pass does 2N FLOPs per token it processes and reads every weight once
(N x bytes per weight), and nothing else. It is what the prefill-vs-decode lesson computes by hand, and it is
why prefill intensity is P FLOP/byte in BF16 and decode intensity is B (the batch).

``refined`` is what a careful engineer counts on top of that; each choice below is a deliberate one:

- Weights come from the config shapes (the nominal 8B model uses Llama-3.1-8B's, 8.03e9 parameters).
- The input embedding is a row lookup: a pass reads one row per distinct token (at most the whole table) and
  does no FLOPs there. The output projection (lm_head) is a full matmul, read whole even when it is tied.
- Attention does FLOPs that grow with context: for each query/key pair, 2 x d_qk for the score and 2 x d_v for
  the weighted sum of V, per head and layer. Prefill is causal (token i attends to i tokens, or the window).
  MLA is counted the way it is served: prefill expands the latent into per-head keys and values
  (d_qk = 128 + 64, d_v = 128 for DeepSeek-V3); decode uses the absorbed form, which scores against the
  cached latent and RoPE key (576 values) and sums over the latent (512), so a decode step does more attention
  FLOPs per key but reads only the small latent cache.
- KV-cache traffic is sized by the attention kind (GQA: 2 x kv_heads x head_dim values per token and layer;
  MLA: the latent plus the RoPE key), stored at the weights' precision. Prefill writes the prompt's K/V once
  and the attention kernel reads every prompt token's K/V once (tiles re-read from on-chip cache are free).
  A decode step reads the cached K/V of its whole context (the new token's own K/V is written first, as
  paged-attention kernels do) and writes one token's K/V. A sliding window caps what is cached and read.
- An MoE layer reads only the experts its tokens are routed to: with T tokens each picking k of E experts
  uniformly, E x (1 - (1 - k/E)^T) experts are touched on average. Batch 1 decode of Mixtral reads 2 of 8
  experts; a large batch reads nearly all. FLOPs always use k experts per token (plus shared experts).
- Tensor parallelism over G GPUs splits FLOPs and bytes evenly (G times the peak and the bandwidth). Each GPU
  needs the K/V of the heads it computes: with more GPUs than KV heads, heads are replicated (G / kv_heads
  copies), and MLA's latent, shared by all heads, is held by every GPU (G copies).

Activations, communication between GPUs and kernel launch overheads are ignored at both levels.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.hardware import GPU, get_gpu
from calculators.models import Model, get_model
from calculators.precision import get_precision
from calculators.roofline import RooflineTime, roofline_time
from calculators.validation import choice, count, fraction

LEVELS = ("simple", "refined")


@dataclass(frozen=True)
class Setup:
    """A model served on a GPU: everything a pass needs besides its token counts.

    ``gpus`` is the tensor-parallel degree; the efficiency factors scale the spec-sheet peaks (1.0 = peak).
    """

    model: Model
    gpu: GPU
    precision: str = "bf16"
    level: str = "simple"
    gpus: int = 1
    compute_efficiency: float = 1.0
    memory_efficiency: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.model, Model):
            raise ValueError(f"model must be a Model or a preset name, got {self.model!r}")
        if not isinstance(self.gpu, GPU):
            raise ValueError(f"gpu must be a GPU or a preset name, got {self.gpu!r}")
        get_precision(self.precision)
        self.gpu.peak_flops_per_s(self.precision)
        choice("level", self.level, LEVELS)
        count("gpus", self.gpus)
        fraction("compute_efficiency", self.compute_efficiency)
        fraction("memory_efficiency", self.memory_efficiency)
        if self.level == "refined" and not self.model.shapes_known:
            raise ValueError(
                f"level 'refined' needs the model's layer shapes, but {self.model.name!r} is given "
                "only by its "
                "size; use level 'simple' or a model preset"
            )

    @property
    def bytes_per_value(self) -> float:
        """Bytes per weight and per KV-cache value at this precision (2 for BF16, 1 for FP8)."""
        return get_precision(self.precision).bytes_per_value

    @property
    def params(self) -> float:
        """N at this level: the lesson's round figure (simple) or the one from the shapes (refined)."""
        return self.model.params if self.level == "simple" else self.model.derived_params

    @property
    def weight_bytes(self) -> float:
        """Bytes of all weights stored (N x bytes per weight), over all GPUs."""
        return self.params * self.bytes_per_value

    @property
    def kv_replication(self) -> float:
        """Copies of each cached K/V value the G GPUs hold together (1 without tensor parallelism)."""
        if self.model.attention == "mla":
            return float(self.gpus)  # the latent is shared by all heads, so every GPU holds all of it
        return max(1.0, self.gpus / self.model.kv_heads)  # more GPUs than KV heads: heads are copied

    def kv_cache_bytes(self, batch: int, context_tokens: int) -> float:
        """Bytes of KV cache for ``batch`` sequences of ``context_tokens`` tokens, over all GPUs.

        A model given only by its size has no shapes, so its cache is unknown and counted as 0 bytes.
        """
        if not self.model.shapes_known:
            return 0.0
        cached = self.model.cached_tokens(context_tokens)
        per_token = self.model.kv_cache_bytes_per_token(self.bytes_per_value)
        return batch * cached * per_token * self.kv_replication

    @property
    def memory_capacity_bytes(self) -> float:
        """Memory of all G GPUs together, in bytes."""
        return self.gpu.memory_capacity_bytes * self.gpus

    def check_fits(self, batch: int, context_tokens: int) -> None:
        """Raise ``ValueError`` if weights plus KV cache exceed the GPUs' memory."""
        kv = self.kv_cache_bytes(batch, context_tokens)
        needed = self.weight_bytes + kv
        if needed > self.memory_capacity_bytes:
            raise ValueError(
                f"batch {batch} at a context of {context_tokens:,} tokens does not fit: it needs "
                f"{needed / 1e9:,.1f} GB (weights {self.weight_bytes / 1e9:,.1f} GB + KV cache "
                f"{kv / 1e9:,.1f} GB) but {self.gpus} x {self.gpu.name} hold "
                f"{self.memory_capacity_bytes / 1e9:,.0f} GB; use a smaller batch or context, more "
                "GPUs, or fp8"
            )


def make_setup(
    model: str | Model = "dense-8b",
    gpu: str | GPU = "h100-sxm",
    *,
    precision: str = "bf16",
    level: str = "simple",
    gpus: int = 1,
    compute_efficiency: float = 1.0,
    memory_efficiency: float = 1.0,
) -> Setup:
    """Build a :class:`Setup` from preset names (or objects); defaults are the lesson's scenario."""
    return Setup(
        get_model(model), get_gpu(gpu), precision, level, gpus, compute_efficiency, memory_efficiency
    )


@dataclass(frozen=True)
class PassResult:
    """One forward pass: what it computes, what it moves, and how long it takes on the roofline."""

    phase: str  # "prefill" or "decode"
    level: str  # "simple" (the lesson's model) or "refined"
    tokens_processed: int  # tokens that go through the weights in this pass
    weight_bytes: float  # weight bytes read (MoE: only the experts the tokens are routed to)
    kv_cache_bytes: float  # KV-cache bytes read and written (0 at the simple level)
    embedding_bytes: float  # embedding rows looked up, bytes (0 at the simple level)
    matmul_flops: float  # FLOPs of the weight matrix products (2 per active parameter per token)
    attention_flops: float  # FLOPs of attention scores and weighted sums (0 at the simple level)
    roofline: RooflineTime  # the pass placed on the roofline: both candidate times and the bound

    @property
    def flops(self) -> float:
        """FLOPs of the pass: matmuls plus attention, over all GPUs."""
        return self.roofline.flops

    @property
    def bytes_moved(self) -> float:
        """Bytes read and written from memory by the pass: weights, KV cache and embedding rows."""
        return self.roofline.bytes_moved

    @property
    def intensity_flop_per_byte(self) -> float:
        """Arithmetic intensity, FLOP per byte moved: P for a simple prefill, B for a decode step."""
        return self.roofline.intensity_flop_per_byte

    @property
    def ridge_point_flop_per_byte(self) -> float:
        """The GPU's ridge point at this precision and efficiency, FLOP per byte."""
        return self.roofline.ridge_point_flop_per_byte

    @property
    def compute_time_s(self) -> float:
        """Seconds the maths alone would take at (efficiency x) peak FLOP/s."""
        return self.roofline.compute_time_s

    @property
    def memory_time_s(self) -> float:
        """Seconds the memory traffic alone would take at (efficiency x) peak bandwidth."""
        return self.roofline.memory_time_s

    @property
    def time_s(self) -> float:
        """Seconds the pass takes on the roofline: the larger of compute and memory time."""
        return self.roofline.time_s

    @property
    def time_ms(self) -> float:
        """The same time in milliseconds."""
        return self.roofline.time_s * 1e3

    @property
    def bound(self) -> str:
        """Which limit sets the time: "compute" at or above the ridge point, else "memory"."""
        return self.roofline.bound

    def as_dict(self) -> dict[str, float | int | str]:
        """Flat record with unit-suffixed keys, for JSON output and the browser."""
        return {
            "phase": self.phase,
            "level": self.level,
            "tokens_processed": self.tokens_processed,
            "flops": self.flops,
            "bytes_moved": self.bytes_moved,
            "weight_bytes": self.weight_bytes,
            "kv_cache_bytes": self.kv_cache_bytes,
            "embedding_bytes": self.embedding_bytes,
            "matmul_flops": self.matmul_flops,
            "attention_flops": self.attention_flops,
            "intensity_flop_per_byte": self.intensity_flop_per_byte,
            "ridge_point_flop_per_byte": self.ridge_point_flop_per_byte,
            "compute_time_s": self.compute_time_s,
            "memory_time_s": self.memory_time_s,
            "time_s": self.time_s,
            "bound": self.bound,
        }


def expected_experts_touched(experts: int, per_token: int, tokens: int) -> float:
    """Expected distinct experts an MoE layer reads when ``tokens`` tokens each pick ``per_token``.

    Routing is taken as uniform and independent between tokens: an expert escapes one token with probability
    1 - k/E, so it escapes all T tokens with probability (1 - k/E)^T.
    """
    return experts * (1.0 - (1.0 - per_token / experts) ** tokens)


def attention_flops_per_key(model: Model, phase: str) -> float:
    """FLOPs for one query token attending to one cached token, over all heads and layers.

    Scores cost 2 x d_qk and the weighted sum of values 2 x d_v, per head. MLA depends on the phase: prefill
    expands the latent into ordinary heads, decode works on the latent directly (the absorbed form).
    """
    if model.mla is None:
        d_qk = d_v = model.head_dim
    elif phase == "prefill":
        d_qk = model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim
        d_v = model.mla.v_head_dim
    else:
        d_qk = model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
        d_v = model.mla.kv_lora_rank
    return 2.0 * model.layers * model.attention_heads * (d_qk + d_v)


def _pass(
    setup: Setup,
    phase: str,
    tokens: int,
    keys_attended: float,
    kv_read_tokens: float,
    kv_written_tokens: float,
) -> PassResult:
    """Count one pass's FLOPs and bytes at the setup's level, then time it on the roofline."""
    model = setup.model
    bpv = setup.bytes_per_value
    if setup.level == "simple":
        weight_bytes = setup.params * bpv
        matmul_flops = 2.0 * setup.params * tokens
        attention_flops = kv_bytes = embedding_bytes = 0.0
    else:
        experts_read: float | None = None
        experts_computed: float | None = None
        if model.moe is not None:
            experts_read = expected_experts_touched(model.moe.experts, model.moe.experts_per_token, tokens)
            experts_computed = model.moe.experts_per_token
        weight_bytes = model.matmul_params(experts_read) * bpv
        embedding_bytes = min(tokens, model.vocab_size) * model.hidden_size * bpv
        matmul_flops = 2.0 * model.matmul_params(experts_computed) * tokens
        attention_flops = attention_flops_per_key(model, phase) * keys_attended
        per_token = model.kv_cache_bytes_per_token(bpv) * setup.kv_replication
        kv_bytes = (kv_read_tokens + kv_written_tokens) * per_token
    result = roofline_time(
        matmul_flops + attention_flops,
        weight_bytes + kv_bytes + embedding_bytes,
        setup.gpu,
        setup.precision,
        gpus=setup.gpus,
        compute_efficiency=setup.compute_efficiency,
        memory_efficiency=setup.memory_efficiency,
    )
    return PassResult(
        phase,
        setup.level,
        tokens,
        weight_bytes,
        kv_bytes,
        embedding_bytes,
        matmul_flops,
        attention_flops,
        result,
    )


def prefill(setup: Setup, prompt_tokens: int, *, batch: int = 1) -> PassResult:
    """One prefill pass over ``batch`` prompts of ``prompt_tokens`` tokens each.

    Every prompt token is known in advance, so all of them go through the weights together: the weights are
    read once and used ``batch x prompt_tokens`` times. Attention is causal: token i attends to i tokens
    (at most the sliding window). Every prompt token's K/V is read once; the cache keeps the last window.
    """
    prompt = count("prompt_tokens", prompt_tokens)
    batch = count("batch", batch)
    setup.check_fits(batch, prompt)
    window = setup.model.sliding_window
    if window is None or prompt <= window:
        keys = prompt * (prompt + 1) / 2.0
    else:
        keys = window * (window + 1) / 2.0 + (prompt - window) * window
    written = setup.model.cached_tokens(prompt)
    return _pass(
        setup, "prefill", batch * prompt, batch * keys, float(batch * prompt), float(batch * written)
    )


def decode_step(setup: Setup, *, batch: int = 1, context_tokens: int = 1) -> PassResult:
    """One decode step: each of ``batch`` sequences produces one token, attending ``context_tokens`` tokens.

    ``context_tokens`` counts the tokens the new token attends to, itself included. The step reads all weights
    (or, for an MoE, the experts its ``batch`` tokens are routed to), reads the cached K/V of the context and
    writes the new token's K/V.
    """
    batch = count("batch", batch)
    context = count("context_tokens", context_tokens)
    setup.check_fits(batch, context)
    attended = setup.model.cached_tokens(context)
    return _pass(setup, "decode", batch, float(batch * attended), float(batch * attended), float(batch))
