"""FLOPs and bytes of one forward pass, for prefill and for a decode step, at two levels of detail.

``simple`` is the lesson's model: a pass does 2N FLOPs per token it processes and reads every weight once
(N x bytes per weight), and nothing else. It is what the prefill-vs-decode lesson computes by hand.

``refined`` is what a careful engineer counts on top of that:
- the input embedding is a row lookup: a pass reads one row per token, not the whole table;
- attention does FLOPs that grow with context (QK^T and the weighted sum of V), causal in prefill;
- the KV cache is read and written, sized by the attention kind (GQA shares K/V heads, MLA caches a latent);
- an MoE layer reads only the experts its tokens are routed to (uniform routing is assumed);
- under tensor parallelism the work splits over G GPUs, and KV heads fewer than G are replicated.
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
        get_precision(self.precision)
        self.gpu.peak_flops_per_s(self.precision)
        choice("level", self.level, LEVELS)
        count("gpus", self.gpus)
        fraction("compute_efficiency", self.compute_efficiency)
        fraction("memory_efficiency", self.memory_efficiency)

    @property
    def bytes_per_value(self) -> float:
        return get_precision(self.precision).bytes_per_value

    @property
    def weight_bytes(self) -> float:
        """Bytes of all weights stored (N x bytes per weight), over all GPUs."""
        return self.model.params * self.bytes_per_value

    def kv_cache_bytes(self, batch: int, context_tokens: int) -> float:
        """Bytes of KV cache for ``batch`` sequences of ``context_tokens`` tokens, over all GPUs."""
        cached = self.model.cached_tokens(context_tokens)
        return batch * cached * self.model.kv_cache_bytes_per_token(self.bytes_per_value) * self._kv_replication

    @property
    def _kv_replication(self) -> float:
        # With more GPUs than KV heads, each GPU keeps a full copy of at least one head's K and V.
        if self.model.attention == "mla":
            return float(self.gpus)  # the latent is shared by all heads, so every GPU holds all of it
        return max(1.0, self.gpus / self.model.kv_heads)

    @property
    def memory_capacity_bytes(self) -> float:
        return self.gpu.memory_capacity_bytes * self.gpus

    def check_fits(self, batch: int, context_tokens: int) -> None:
        """Raise ``ValueError`` if weights plus KV cache exceed the GPUs' memory."""
        needed = self.weight_bytes + self.kv_cache_bytes(batch, context_tokens)
        if needed > self.memory_capacity_bytes:
            raise ValueError(
                f"batch {batch} at a context of {context_tokens:,} tokens does not fit: it needs "
                f"{needed / 1e9:,.1f} GB (weights {self.weight_bytes / 1e9:,.1f} GB + KV cache "
                f"{self.kv_cache_bytes(batch, context_tokens) / 1e9:,.1f} GB) but {self.gpus} x {self.gpu.name} "
                f"hold {self.memory_capacity_bytes / 1e9:,.0f} GB; use a smaller batch or context, more GPUs, or fp8"
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
    level: str
    tokens_processed: int  # tokens that go through the weights in this pass
    weight_bytes: float
    kv_cache_bytes: float
    embedding_bytes: float
    matmul_flops: float
    attention_flops: float
    roofline: RooflineTime

    @property
    def flops(self) -> float:
        return self.roofline.flops

    @property
    def bytes_moved(self) -> float:
        return self.roofline.bytes_moved

    @property
    def intensity_flop_per_byte(self) -> float:
        return self.roofline.intensity_flop_per_byte

    @property
    def ridge_point_flop_per_byte(self) -> float:
        return self.roofline.ridge_point_flop_per_byte

    @property
    def compute_time_s(self) -> float:
        return self.roofline.compute_time_s

    @property
    def memory_time_s(self) -> float:
        return self.roofline.memory_time_s

    @property
    def time_s(self) -> float:
        return self.roofline.time_s

    @property
    def time_ms(self) -> float:
        return self.roofline.time_s * 1e3

    @property
    def bound(self) -> str:
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


def _expected_experts_touched(moe_experts: int, per_token: int, tokens: int) -> float:
    """Expected distinct experts a layer reads when ``tokens`` tokens each pick ``per_token`` of them uniformly."""
    return moe_experts * (1.0 - (1.0 - per_token / moe_experts) ** tokens)


def _attention_flops_per_key(model: Model) -> float:
    """FLOPs for one query token attending to one cached token, over all layers (scores plus weighted sum)."""
    if model.mla is not None:
        # Absorbed MLA (how it is served): scores against the latent plus RoPE key, values from the latent.
        width = (model.mla.kv_lora_rank + model.mla.qk_rope_head_dim) + model.mla.kv_lora_rank
    else:
        width = 2 * model.head_dim
    return 2.0 * model.layers * model.attention_heads * width


def _pass(
    setup: Setup, phase: str, tokens: int, keys_attended: float, kv_read_tokens: float, kv_written_tokens: float
) -> PassResult:
    model = setup.model
    bpv = setup.bytes_per_value
    if setup.level == "simple":
        weight_bytes = model.params * bpv
        matmul_flops = 2.0 * model.params * tokens
        attention_flops = kv_bytes = embedding_bytes = 0.0
    else:
        stored_in_layers = model.params - model.embedding_params  # the lm_head stays: it is a real matmul
        if model.moe is not None:
            touched = _expected_experts_touched(model.moe.experts, model.moe.experts_per_token, tokens)
            stored_in_layers = model.params_with_experts(touched) - model.embedding_params
        weight_bytes = stored_in_layers * bpv
        embedding_bytes = tokens * model.hidden_size * bpv
        matmul_flops = 2.0 * (model.active_params - model.embedding_params) * tokens
        attention_flops = _attention_flops_per_key(model) * keys_attended
        per_token = model.kv_cache_bytes_per_token(bpv) * setup._kv_replication
        kv_bytes = (kv_read_tokens + kv_written_tokens) * per_token
    total_bytes = weight_bytes + kv_bytes + (embedding_bytes if setup.level == "refined" else 0.0)
    result = roofline_time(
        matmul_flops + attention_flops,
        total_bytes,
        setup.gpu,
        setup.precision,
        gpus=setup.gpus,
        compute_efficiency=setup.compute_efficiency,
        memory_efficiency=setup.memory_efficiency,
    )
    return PassResult(phase, setup.level, tokens, weight_bytes, kv_bytes, embedding_bytes, matmul_flops,
                      attention_flops, result)


def prefill(setup: Setup, prompt_tokens: int, *, batch: int = 1) -> PassResult:
    """One prefill pass over ``batch`` prompts of ``prompt_tokens`` tokens each.

    Every prompt token is known in advance, so all of them go through the weights together: the weights are
    read once and used ``batch x prompt_tokens`` times. Attention is causal: token i attends to i tokens.
    """
    prompt = count("prompt_tokens", prompt_tokens)
    batch = count("batch", batch)
    setup.check_fits(batch, prompt)
    cached = setup.model.cached_tokens
    window = setup.model.sliding_window
    if window is None or prompt <= window:
        keys = prompt * (prompt + 1) / 2.0
    else:
        keys = window * (window + 1) / 2.0 + (prompt - window) * window
    # The prompt's K and V are written once; the attention kernel reads them back once.
    return _pass(setup, "prefill", batch * prompt, batch * keys, batch * cached(prompt), batch * cached(prompt))


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
    return _pass(setup, "decode", batch, batch * attended, batch * attended, float(batch))
