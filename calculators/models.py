"""Model presets from their published config shapes, and the parameter counts derived from those shapes.

A model is described by the numbers in its ``config.json``; every total (parameters, active parameters,
KV-cache bytes per token) is computed from them, never typed in, and a test checks each derived total against
the published one. That is how we know the shapes were copied right.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from calculators.validation import bounded_number, choice, count, flag, positive_number, unknown_name

ATTENTION_KINDS = ("mha", "gqa", "mla")
# Bounds on a shape given by hand: far beyond any published model, far inside a float once multiplied out
# (a width squared, times layers, experts and a billion tokens).
MAX_WIDTH = 1_000_000
MAX_LAYERS = 10_000
MAX_EXPERTS = 100_000


@dataclass(frozen=True)
class MLAShape:
    """Multi-head latent attention (DeepSeek-V2/V3): keys and values are cached as one compressed latent."""

    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int

    def __post_init__(self) -> None:
        for name in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            count(f"MLA shape: {name}", getattr(self, name), maximum=MAX_WIDTH)


@dataclass(frozen=True)
class MoEShape:
    """Mixture of experts: each token is routed to ``experts_per_token`` of ``experts`` MLPs per layer."""

    experts: int
    experts_per_token: int
    expert_mlp_width: int
    shared_experts: int = 0
    dense_layers: int = 0  # leading layers that keep an ordinary dense MLP (DeepSeek's first_k_dense_replace)
    router_bias: bool = False  # DeepSeek-V3 stores a per-expert score-correction bias

    def __post_init__(self) -> None:
        count("MoE shape: experts", self.experts, maximum=MAX_EXPERTS)
        count("MoE shape: experts_per_token", self.experts_per_token, maximum=MAX_EXPERTS)
        count("MoE shape: expert_mlp_width", self.expert_mlp_width, maximum=MAX_WIDTH)
        count("MoE shape: shared_experts", self.shared_experts, minimum=0, maximum=MAX_EXPERTS)
        count("MoE shape: dense_layers", self.dense_layers, minimum=0, maximum=MAX_LAYERS)
        flag("MoE shape: router_bias", self.router_bias)
        if self.experts_per_token > self.experts:
            raise ValueError(
                f"MoE shape: experts_per_token ({self.experts_per_token}) must be at most experts "
                f"({self.experts}); a token is routed to some of the experts"
            )


@dataclass(frozen=True)
class Model:
    """A transformer decoder, by its config shape.

    ``rounded_params`` is set only for the lesson's nominal model, whose parameter count is a round number
    (8e9) by definition; every other model's count comes from its shapes.
    """

    key: str
    name: str
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    mlp_width: int
    vocab_size: int
    tied_embeddings: bool
    attention: str
    source: str
    published_params: float
    attention_bias: bool = False
    moe: MoEShape | None = None
    mla: MLAShape | None = None
    published_active_params: float | None = None
    sliding_window: int | None = None
    rounded_params: float | None = None
    shapes_known: bool = True  # False for a model given only by its size: its shapes are placeholders
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in (
            "layers",
            "hidden_size",
            "attention_heads",
            "kv_heads",
            "head_dim",
            "mlp_width",
            "vocab_size",
        ):
            count(
                f"{self.key}: {name}",
                getattr(self, name),
                maximum=MAX_LAYERS if name == "layers" else MAX_WIDTH,
            )
        choice(f"{self.key}: attention", self.attention, ATTENTION_KINDS)
        if (self.attention == "mla") != (self.mla is not None):
            raise ValueError(f"{self.key}: attention 'mla' needs an MLA shape, and only MLA has one")
        if self.moe is not None and not 1 <= self.moe.experts_per_token <= self.moe.experts:
            raise ValueError(f"{self.key}: experts_per_token must be between 1 and experts")
        if self.moe is not None and not isinstance(self.moe, MoEShape):
            raise ValueError(f"{self.key}: moe must be a MoEShape or None, got {self.moe!r}")
        if self.mla is not None and not isinstance(self.mla, MLAShape):
            raise ValueError(f"{self.key}: mla must be an MLAShape or None, got {self.mla!r}")
        if self.moe is not None and self.moe.dense_layers > self.layers:
            raise ValueError(
                f"{self.key}: moe.dense_layers ({self.moe.dense_layers}) must be at most layers "
                f"({self.layers})"
            )
        if self.sliding_window is not None:
            count(
                f"{self.key}: sliding_window (tokens each query attends to; None for full attention)",
                self.sliding_window,
            )

    # --- parameter counts, all from the shapes -------------------------------------------------------------
    @property
    def attention_params_per_layer(self) -> int:
        """Weights of one attention block (projections and, for MLA, the latent norms)."""
        h = self.hidden_size
        if self.mla is not None:
            m = self.mla
            q = (
                h * m.q_lora_rank
                + m.q_lora_rank
                + m.q_lora_rank * self.attention_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)
            )
            kv = (
                h * (m.kv_lora_rank + m.qk_rope_head_dim)
                + m.kv_lora_rank
                + m.kv_lora_rank * self.attention_heads * (m.qk_nope_head_dim + m.v_head_dim)
            )
            return q + kv + self.attention_heads * m.v_head_dim * h
        q_width = self.attention_heads * self.head_dim
        kv_width = self.kv_heads * self.head_dim
        params = h * q_width + 2 * h * kv_width + q_width * h
        if self.attention_bias:
            params += q_width + 2 * kv_width
        return params

    def _mlp_params(self, width: int) -> int:
        return 3 * self.hidden_size * width  # gate, up and down projections (SwiGLU)

    @property
    def attention_params(self) -> int:
        """Weights of every layer's attention block: ``layers`` x :attr:`attention_params_per_layer`."""
        return self.layers * self.attention_params_per_layer

    @property
    def dense_mlp_params_per_layer(self) -> int:
        """One dense layer's SwiGLU MLP: gate and up (hidden x width each) and down (width x hidden)."""
        return self._mlp_params(self.mlp_width)

    @property
    def dense_mlp_layers(self) -> int:
        return self.layers if self.moe is None else self.moe.dense_layers

    @property
    def router_params_per_layer(self) -> int:
        """An MoE layer's router: one score per expert from the hidden state; 0 if dense."""
        if self.moe is None:
            return 0
        return self.hidden_size * self.moe.experts + (self.moe.experts if self.moe.router_bias else 0)

    def _moe_layer_params(self, experts_counted: float) -> float:
        assert self.moe is not None
        moe = self.moe
        return self.router_params_per_layer + (experts_counted + moe.shared_experts) * self.expert_params

    @property
    def expert_params(self) -> int:
        """Weights of one routed expert in one layer (0 for a dense model)."""
        return 0 if self.moe is None else self._mlp_params(self.moe.expert_mlp_width)

    def mlp_params(self, experts_counted: float | None = None) -> float:
        """Weights of every layer's MLP: dense MLPs, and for an MoE its routers, shared and routed experts.

        ``experts_counted`` is the routed experts per MoE layer to count: all of them by default (what is
        stored), ``experts_per_token`` for what one token passes through.
        """
        dense = self.dense_mlp_layers * self.dense_mlp_params_per_layer
        if self.moe is None:
            return float(dense)
        counted = self.moe.experts if experts_counted is None else experts_counted
        return dense + (self.layers - self.moe.dense_layers) * self._moe_layer_params(counted)

    @property
    def norm_params(self) -> int:
        """The RMSNorm scales: two per layer (before attention and before the MLP) and a final one.

        One number per hidden dimension each, so a few hundred thousand in a model of billions: negligible,
        and counted only so that the total matches the published one exactly.
        """
        return (2 * self.layers + 1) * self.hidden_size

    @property
    def embedding_params(self) -> int:
        """The input embedding table: a lookup, so a pass reads only the rows of its tokens."""
        return self.vocab_size * self.hidden_size

    @property
    def lm_head_params(self) -> int:
        """The output projection to the vocabulary (shares the embedding's storage when tied)."""
        return self.vocab_size * self.hidden_size

    @property
    def stored_lm_head_params(self) -> int:
        """Parameters the output projection adds to the total: none when tied to the embedding."""
        return 0 if self.tied_embeddings else self.lm_head_params

    def _total(self, experts_counted: float | None) -> float:
        """The sum of the components above: the one place a model's total is added up."""
        return (
            self.attention_params
            + self.mlp_params(experts_counted)
            + self.norm_params
            + self.embedding_params
            + self.stored_lm_head_params
        )

    @property
    def params(self) -> float:
        """Total parameters N (the lesson's nominal model uses its round figure)."""
        if self.rounded_params is not None:
            return self.rounded_params
        return self.derived_params

    @property
    def derived_params(self) -> float:
        """Total parameters computed from the shapes alone."""
        return self._total(None)

    @property
    def active_params(self) -> float:
        """Parameters one token passes through: all of a dense model, the routed experts' share of an MoE."""
        if self.moe is None:
            return self.params
        return self._total(self.moe.experts_per_token)

    def params_with_experts(self, experts_read: float) -> float:
        """Total parameters (embedding included) if each MoE layer held only ``experts_read`` experts."""
        return self._total(experts_read)

    def matmul_params(self, experts_counted: float | None = None) -> float:
        """Parameters used as matrix weights by a pass: everything but the input embedding, lm_head included.

        The input embedding is a lookup (no FLOPs, one row read per token), while the output projection
        multiplies every token by the whole vocabulary matrix, even when it shares storage with the embedding
        (tied embeddings). ``experts_counted`` is the number of routed experts per MoE layer to count
        (all of them by default; ``experts_per_token`` gives the FLOPs of one token).
        """
        stored_apart = self.embedding_params + self.stored_lm_head_params
        return self._total(experts_counted) - stored_apart + self.lm_head_params

    # --- KV cache -------------------------------------------------------------------------------------------
    def kv_values_per_token(self) -> int:
        """Values cached per token across all layers: K and V per KV head, or MLA's latent plus RoPE key."""
        if self.mla is not None:
            return self.layers * (self.mla.kv_lora_rank + self.mla.qk_rope_head_dim)
        return 2 * self.layers * self.kv_heads * self.head_dim

    def kv_cache_bytes_per_token(self, bytes_per_value: float = 2.0) -> float:
        """Bytes of KV cache one token of context occupies (BF16 by default)."""
        return self.kv_values_per_token() * positive_number("bytes_per_value", bytes_per_value)

    def with_multi_head_attention(self) -> Model:
        """The same model with full multi-head attention: one key and one value head per query head.

        Grouped-query attention shares each K/V head among several query heads; this undoes the sharing, to
        show what GQA saves (Llama-3.1-8B: 8 KV heads for 32 query heads, so MHA would cache 4x more).
        The K and V projections grow with the heads, so the parameter count is derived anew from the shapes.
        MLA caches a latent rather than heads, so it has no such counterpart here.
        """
        if self.mla is not None:
            raise ValueError(
                f"{self.name} uses multi-head latent attention (MLA), which caches a compressed latent, not "
                "K/V heads; with_multi_head_attention applies to MHA and GQA models"
            )
        wide = replace(
            self,
            key=f"{self.key}-mha",
            name=f"{self.name} with multi-head attention",
            kv_heads=self.attention_heads,
            attention="mha",
            rounded_params=None,
            notes=(f"{self.name} with a K/V head per query head (a what-if, not a published model).",),
        )
        return replace(wide, published_params=wide.derived_params)

    def cached_tokens(self, context_tokens: int) -> int:
        """Tokens kept in the cache at this context length (a sliding window caps it)."""
        if self.sliding_window is None:
            return context_tokens
        return min(context_tokens, self.sliding_window)


MAX_PARAMS_BILLION = 1e6  # a thousand trillion parameters: far beyond any model, far inside a float
MIN_PARAMS_BILLION = 1e-6  # a thousand parameters


def custom_dense_model(*, params_billion: float, name: str = "custom dense model") -> Model:
    """A dense model given only by its size, for the simple (lesson) level of detail.

    Its shapes are placeholders (the nominal 8B model's) and ``rounded_params`` carries the size, so only the
    simple (lesson) level can use it: :class:`calculators.passes.Setup` rejects it at the refined level,
    which needs real shapes.
    """
    n = bounded_number("params_billion", params_billion, MAX_PARAMS_BILLION, MIN_PARAMS_BILLION) * 1e9
    return replace(
        MODELS["dense-8b"],
        key="custom",
        name=name,
        rounded_params=n,
        published_params=n,
        source="given by the user",
        shapes_known=False,
        notes=(),
    )


_LLAMA_NOTE = (
    "Shapes from the model's config.json on Hugging Face; the total matches its safetensors parameter count."
)

_LLAMA_31_8B = Model(
    key="llama-3.1-8b",
    name="Llama-3.1 8B",
    layers=32,
    hidden_size=4096,
    attention_heads=32,
    kv_heads=8,
    head_dim=128,
    mlp_width=14336,
    vocab_size=128256,
    tied_embeddings=False,
    attention="gqa",
    published_params=8_030_261_248,
    source="https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json",
    notes=(_LLAMA_NOTE,),
)

# The lesson's nominal model is Llama-3.1-8B's architecture with the round size the lesson computes with.
_NOMINAL_8B = replace(
    _LLAMA_31_8B,
    key="dense-8b",
    name="Nominal 8B dense model (the lesson's)",
    rounded_params=8e9,
    published_params=8e9,
    source="The prefill-vs-decode lesson's model: N = 8e9 parameters in BF16 (16 GB). "
    "Its layer shapes, used only at the refined level, are Llama-3.1-8B's "
    "(huggingface.co/meta-llama/Llama-3.1-8B).",
    notes=("The simple level uses N = 8e9 exactly; the shapes alone give 8.03e9.",),
)


MODELS: Mapping[str, Model] = MappingProxyType(
    {
        m.key: m
        for m in (
            _NOMINAL_8B,
            _LLAMA_31_8B,
            Model(
                key="llama-3.1-70b",
                name="Llama-3.1 70B",
                layers=80,
                hidden_size=8192,
                attention_heads=64,
                kv_heads=8,
                head_dim=128,
                mlp_width=28672,
                vocab_size=128256,
                tied_embeddings=False,
                attention="gqa",
                published_params=70_553_706_496,
                source="https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json",
                notes=(_LLAMA_NOTE,),
            ),
            Model(
                key="llama-3.1-405b",
                name="Llama-3.1 405B",
                layers=126,
                hidden_size=16384,
                attention_heads=128,
                kv_heads=8,
                head_dim=128,
                mlp_width=53248,
                vocab_size=128256,
                tied_embeddings=False,
                attention="gqa",
                published_params=405_853_388_800,
                source="https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json",
                notes=(_LLAMA_NOTE,),
            ),
            Model(
                key="llama-3.3-70b",
                name="Llama-3.3 70B Instruct",
                layers=80,
                hidden_size=8192,
                attention_heads=64,
                kv_heads=8,
                head_dim=128,
                mlp_width=28672,
                vocab_size=128256,
                tied_embeddings=False,
                attention="gqa",
                published_params=70_553_706_496,
                source="https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct/blob/main/config.json",
                notes=(
                    _LLAMA_NOTE,
                    "Same shapes as Llama-3.1 70B (new weights, same architecture).",
                ),
            ),
            Model(
                key="qwen2.5-72b",
                name="Qwen2.5 72B",
                layers=80,
                hidden_size=8192,
                attention_heads=64,
                kv_heads=8,
                head_dim=128,
                mlp_width=29568,
                vocab_size=152064,
                tied_embeddings=False,
                attention="gqa",
                attention_bias=True,
                published_params=72_706_203_648,
                source="https://huggingface.co/Qwen/Qwen2.5-72B/blob/main/config.json; safetensors parameter "
                "count 72,706,203,648 (model card: 72.7B total, 70.0B non-embedding)",
            ),
            Model(
                key="mistral-7b",
                name="Mistral-7B v0.1",
                layers=32,
                hidden_size=4096,
                attention_heads=32,
                kv_heads=8,
                head_dim=128,
                mlp_width=14336,
                vocab_size=32000,
                tied_embeddings=False,
                attention="gqa",
                sliding_window=4096,
                published_params=7_241_732_096,
                source="https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json",
                notes=(
                    "v0.1 attends over a 4,096-token sliding window, which caps its KV cache;",
                    "v0.3 has a 32,768-word vocabulary (7.25B parameters).",
                ),
            ),
            Model(
                key="mixtral-8x7b",
                name="Mixtral-8x7B v0.1",
                layers=32,
                hidden_size=4096,
                attention_heads=32,
                kv_heads=8,
                head_dim=128,
                mlp_width=14336,
                vocab_size=32000,
                tied_embeddings=False,
                attention="gqa",
                moe=MoEShape(experts=8, experts_per_token=2, expert_mlp_width=14336),
                published_params=46_702_792_704,
                published_active_params=12.9e9,
                source="https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json; "
                "Mistral AI, 'Mixtral of experts' (46.7B total, 12.9B active)",
                notes=("The shapes give 46,702,792,704 total and 12,879,925,248 active (2 of 8 experts).",),
            ),
            Model(
                key="qwen2.5-7b",
                name="Qwen2.5 7B",
                layers=28,
                hidden_size=3584,
                attention_heads=28,
                kv_heads=4,
                head_dim=128,
                mlp_width=18944,
                vocab_size=152064,
                tied_embeddings=False,
                attention="gqa",
                attention_bias=True,
                published_params=7_615_616_512,
                source="https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json; "
                "safetensors parameter count 7,615,616,512 (the model card rounds it to 7.61B total, "
                "6.53B non-embedding)",
            ),
            Model(
                key="deepseek-v3",
                name="DeepSeek-V3",
                layers=61,
                hidden_size=7168,
                attention_heads=128,
                kv_heads=128,
                head_dim=128,
                mlp_width=18432,
                vocab_size=129280,
                tied_embeddings=False,
                attention="mla",
                mla=MLAShape(
                    q_lora_rank=1536,
                    kv_lora_rank=512,
                    qk_nope_head_dim=128,
                    qk_rope_head_dim=64,
                    v_head_dim=128,
                ),
                moe=MoEShape(
                    experts=256,
                    experts_per_token=8,
                    expert_mlp_width=2048,
                    shared_experts=1,
                    dense_layers=3,
                    router_bias=True,
                ),
                published_params=671e9,
                published_active_params=37e9,
                source="https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json; DeepSeek-V3 "
                "technical report, arXiv:2412.19437 (671B total, 37B activated per token)",
                notes=(
                    "The Hugging Face page says 685B: that adds the 14B multi-token-prediction "
                    "module, left out here.",
                    "DeepSeek serves FP8 weights natively.",
                    "The report's '37B activated' is rounded: the shapes give 37.55B (embedding and lm_head "
                    "included, 8 routed + 1 shared expert).",
                ),
            ),
        )
    }
)


def get_model(key: str | Model) -> Model:
    """Return the model preset called ``key`` (or ``key`` itself if it is already a Model)."""
    if isinstance(key, Model):
        return key
    if not isinstance(key, str):
        raise ValueError(f"model must be a preset name such as 'llama-3.1-8b', got {key!r}")
    try:
        return MODELS[key]
    except KeyError:
        raise unknown_name("model", key, MODELS) from None
