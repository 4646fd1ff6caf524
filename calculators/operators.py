"""A forward pass as a list of operators, each timed on the roofline on its own.

A pass is a sequence of kernels: the embedding lookup, the norms, the QKV projection, attention over the KV
cache, the output projection, the MLP or the routed experts, the output layer, and the collectives between
GPUs. Each kernel waits on whichever of its maths or its memory traffic is slower, and the kernels run one
after another, so the pass takes the **sum** over operators of max(compute time, memory time), plus the
communication. One max over the whole pass (the lessons' simple view) assumes one kernel's maths hides
another's memory traffic; at large batch that is 12-18 % optimistic.

Every operator here counts its FLOPs and bytes summed over the GPUs that share the work; its time is that
share on one GPU (work is split evenly). Bytes are weights (in their storage format), KV-cache values (in
the KV-cache format) and activations (BF16, read once as input and written once as output per operator).

Counting choices, each deliberate:

- Weights come from the config shapes. Quantised formats apply to the linear layers of the blocks; the
  embedding, the output layer, the norms and the MoE routers stay in BF16 (as FP8 and AWQ checkpoints do).
- The embedding is a lookup: one row read per token (at most the table), no FLOPs.
- The output layer runs for the last token of each sequence only (serving engines compute logits only where
  a token is sampled); a prefill chunk counts as one sequence.
- Attention FLOPs grow with context: 2 x d_qk for the score and 2 x d_v for the weighted sum, per head,
  layer and (query, key) pair; prefill is causal, a sliding window caps the keys. Attention maths runs at the
  BF16 peak whatever the weight format. MLA prefill expands the latent into ordinary heads (and re-expands a
  cached prefix); decode uses the absorbed form on the latent.
- KV-cache traffic: a decode step reads the cached K/V of its context (its own new K/V written first) and
  writes one token's K/V; a prefill chunk writes its tokens' K/V and reads the cached prefix plus its own.
  With more GPUs than KV heads the heads are copied, and MLA's latent sits on every GPU (unless attention
  is data-parallel).
- An MoE layer reads the experts its tokens touch: with T tokens each picking k of E experts uniformly,
  E (1 - (1 - k/E)^T) on average; FLOPs use k experts per token, plus shared experts and the router.
  With expert parallelism the routed experts are timed on the busiest GPU (calculators/expert_load.py).
- Communication (refined level): a tensor-parallel ring all-reduce of the T x hidden activations after
  attention and after the MLP in each layer and after the embedding; expert parallelism and data-parallel
  attention replace MoE all-reduces by two all-to-alls per layer (balanced routing assumed: an
  approximation); pipeline stages hand activations to the next stage. Collectives do not overlap compute.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from calculators.models import Model

ACTIVATION_BYTES = 2.0  # activations and BF16-kept tensors (embedding, output layer, norms, routers)


class Operator(NamedTuple):
    """One kernel (or family of kernels over all layers) of a pass, placed on the roofline."""

    name: str  # what it is, e.g. "QKV projection"
    kind: str  # "weights", "attention", "elementwise" or "communication"
    flops: float  # FLOPs over all GPUs
    bytes_moved: float  # bytes read and written over all GPUs (for communication: bytes each GPU sends)
    compute_time_s: float  # seconds of maths on one GPU at the reachable peak
    memory_time_s: float  # seconds of memory traffic on one GPU (for communication: time on the link)
    time_s: float  # max(compute, memory): the operator's time
    bound: str  # "compute", "memory" or "communication"

    def as_dict(self) -> dict[str, float | str]:
        return self._asdict()


class ModelShape(NamedTuple):
    """Per-layer parameter counts a pass needs, derived once per model from its config shapes."""

    layers: int
    hidden: int
    vocab: int
    heads: int
    qkv_params: float  # per layer, norms of MLA latents included
    qkv_out_width: int  # activation width the QKV projection writes
    o_params: float  # per layer
    d_qk_decode: int
    d_v_decode: int
    d_qk_prefill: int
    d_v_prefill: int
    mla_expand_params: float  # MLA: kv_b parameters per layer, re-applied to a cached prefix in prefill
    dense_layers: int
    mlp_params: float  # per dense layer
    mlp_width: int
    moe_layers: int
    experts: int
    experts_per_token: int
    shared_experts: int
    expert_params: float  # one routed expert, one layer
    expert_width: int
    router_params: float  # per MoE layer
    norm_count: int
    kv_values_per_token: int


@lru_cache(maxsize=64)
def model_shape(model: Model) -> ModelShape:
    """The per-layer counts of ``model``; they add up to ``model.derived_params`` (a test checks it)."""
    h = model.hidden_size
    if model.mla is not None:
        m = model.mla
        o_params = model.attention_heads * m.v_head_dim * h
        dqk_dec, dv_dec = m.kv_lora_rank + m.qk_rope_head_dim, m.kv_lora_rank
        dqk_pre, dv_pre = m.qk_nope_head_dim + m.qk_rope_head_dim, m.v_head_dim
        qkv_out = model.attention_heads * dqk_pre + m.kv_lora_rank + m.qk_rope_head_dim
        expand = m.kv_lora_rank * model.attention_heads * (m.qk_nope_head_dim + m.v_head_dim)
    else:
        o_params = model.attention_heads * model.head_dim * h
        dqk_dec = dv_dec = dqk_pre = dv_pre = model.head_dim
        qkv_out = (model.attention_heads + 2 * model.kv_heads) * model.head_dim
        expand = 0
    qkv_params = model.attention_params_per_layer - o_params
    moe = model.moe
    dense_layers = model.dense_mlp_layers
    return ModelShape(
        layers=model.layers,
        hidden=h,
        vocab=model.vocab_size,
        heads=model.attention_heads,
        qkv_params=float(qkv_params),
        qkv_out_width=qkv_out,
        o_params=float(o_params),
        d_qk_decode=dqk_dec,
        d_v_decode=dv_dec,
        d_qk_prefill=dqk_pre,
        d_v_prefill=dv_pre,
        mla_expand_params=float(expand),
        dense_layers=dense_layers,
        mlp_params=float(model.dense_mlp_params_per_layer),
        mlp_width=model.mlp_width,
        moe_layers=0 if moe is None else model.layers - moe.dense_layers,
        experts=0 if moe is None else moe.experts,
        experts_per_token=0 if moe is None else moe.experts_per_token,
        shared_experts=0 if moe is None else moe.shared_experts,
        expert_params=float(model.expert_params),
        expert_width=0 if moe is None else moe.expert_mlp_width,
        router_params=float(model.router_params_per_layer),
        norm_count=2 * model.layers + 1,
        kv_values_per_token=model.kv_values_per_token(),
    )


def expected_experts_touched(experts: int, per_token: int, tokens: float) -> float:
    """Expected distinct experts an MoE layer reads when ``tokens`` tokens each pick ``per_token``.

    Routing is taken as uniform and independent between tokens: an expert escapes one token with probability
    1 - k/E, so it escapes all T tokens with probability (1 - k/E)^T. Real routers are skewed, so a batch
    touches somewhat fewer experts than this.
    """
    if experts <= 0:
        return 0.0
    escape: float = (1.0 - per_token / experts) ** tokens
    return experts * (1.0 - escape)


def causal_keys(cached: int, chunk: int, window: int | None) -> float:
    """(query, key) pairs of a causal chunk of ``chunk`` tokens after ``cached`` tokens: sum of min(p, W).

    Query i (1-based) of the chunk sits at position cached + i and attends to that many keys, or to the
    window W if that is smaller.
    """
    lo, hi = cached + 1, cached + chunk
    if window is None or hi <= window:
        return (lo + hi) * chunk / 2.0
    if lo > window:
        return float(chunk * window)
    return (lo + window) * (window - lo + 1) / 2.0 + (hi - window) * window


def make_operator(
    name: str, kind: str, flops: float, bytes_moved: float, peak: float, bandwidth: float
) -> Operator:
    """One operator's roofline time on one GPU; ``peak`` and ``bandwidth`` are per-GPU figures times the
    number of GPUs sharing the operator."""
    compute = flops / peak
    memory = bytes_moved / bandwidth
    bound = (
        "compute" if compute > memory or bytes_moved == 0 else "memory"
    )  # only when the maths takes longer
    return Operator(
        name, kind, flops, bytes_moved, compute, memory, compute if compute > memory else memory, bound
    )


def communication_operator(name: str, bytes_sent: float, time_s: float) -> Operator:
    """A collective or send: no FLOPs, ``bytes_sent`` per GPU, ``time_s`` on the link."""
    return Operator(name, "communication", 0.0, bytes_sent, 0.0, time_s, time_s, "communication")
