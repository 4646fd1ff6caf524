"""The parameter counter: a model's parameters by component and its FLOPs per token, from its configuration.

The reader types the shape a ``config.json`` gives (layers, hidden size, query and key-value heads, head size,
the MLP's inner width, the vocabulary, tied or untied output layer) and a context length. The widget counts
the parameters component by component with :class:`calculators.models.Model` (the one place they are
counted), and the FLOPs of one decoded token with the cost model's own refined decode step (weight products
and attention over the context), so its figures are the lesson's. A dense GQA decoder with a SwiGLU MLP and
no biases, as Llama's; the starting shape is Llama-3.1-8B's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from calculators.browser.inputs import flag, in_range, number
from calculators.models import MAX_LAYERS, MODELS, Model
from calculators.scenario import Scenario
from calculators.units import format_value

NAME = "parameter-counter"
BASE = "llama-3.1-8b"  # the shape the widget starts from, and whose source it cites
DEFAULTS: dict[str, Any] = {
    "layers": 32,
    "hidden": 4096,
    "heads": 32,
    "kv_heads": 8,
    "head_dim": 128,
    "mlp_width": 14336,
    "vocab": 128256,
    "tied": False,
    "context": 8192,
}
MAX_WIDTH = 65536  # far beyond any published hidden size or head count, still a quick count
MAX_VOCAB = 1_048_576
MAX_CONTEXT = 1_048_576
# Control name -> (label, smallest, largest): the labels are the widget's words in its messages too.
FIELDS: dict[str, tuple[str, int, int]] = {
    "layers": ("Layers", 1, min(MAX_LAYERS, 1000)),
    "hidden": ("Hidden size", 1, MAX_WIDTH),
    "heads": ("Query heads", 1, 1024),
    "kv_heads": ("Key and value heads", 1, 1024),
    "head_dim": ("Head size", 1, 1024),
    "mlp_width": ("MLP inner width", 1, 4 * MAX_WIDTH),
    "vocab": ("Vocabulary", 1, MAX_VOCAB),
    "context": ("Context tokens", 1, MAX_CONTEXT),
}
RESULTS: tuple[tuple[str, str], ...] = (
    ("attention", "Attention (all layers)"),
    ("mlp", "MLP (all layers)"),
    ("embedding", "Embedding"),
    ("output_layer", "Output layer (stored)"),
    ("norms", "Norms"),
    ("total", "Total parameters"),
    ("weight_bytes", "Weights in BF16"),
    ("weight_flops", "Weight FLOPs per token"),
    ("attention_flops", "Attention FLOPs per token at this context"),
    ("attention_share", "Attention's share of the token's FLOPs"),
    ("crossover", "Context where attention equals the weights"),
)
ASSUMPTIONS = (
    "A dense decoder like Llama's: grouped-query attention without biases, a SwiGLU MLP (three matrices), "
    "two RMSNorms per layer. A decoded token costs two FLOPs per weight it is multiplied by (the embedding "
    "is a lookup; the output layer runs once) plus 4 × layers × query heads × head size FLOPs per token of "
    "context; the softmax is left out. BF16 stores two bytes per parameter."
)


def state_from(raw: dict[str, Any]) -> dict[str, Any]:
    """The widget state with defaults filled in, numbers parsed, and unknown keys dropped."""
    merged = {**DEFAULTS, **{key: value for key, value in raw.items() if key in DEFAULTS}}
    state = {key: number(merged[key]) for key in FIELDS}
    return {**state, "tied": flag(merged["tied"])}


def checked(state: dict[str, Any]) -> dict[str, Any]:
    """Every value within what its control's hint states, or a message in the widget's words."""
    values = {
        key: in_range(label, state[key], low, high, whole=True) for key, (label, low, high) in FIELDS.items()
    }
    if state["heads"] % state["kv_heads"]:
        raise ValueError(
            f"Key and value heads: {state['kv_heads']} does not divide the {state['heads']} query heads; "
            "each key and value head serves a whole group of query heads."
        )
    return {**values, "tied": state["tied"]}


def model_for(state: dict[str, Any]) -> Model:
    """The configured model: the base preset's kind of model with the reader's shape."""
    return replace(
        MODELS[BASE],
        key="configured",
        name="the configured model",
        layers=state["layers"],
        hidden_size=state["hidden"],
        attention_heads=state["heads"],
        kv_heads=state["kv_heads"],
        head_dim=state["head_dim"],
        mlp_width=state["mlp_width"],
        vocab_size=state["vocab"],
        tied_embeddings=state["tied"],
        attention="gqa" if state["kv_heads"] < state["heads"] else "mha",
        published_params=0.0,
        source="given by the reader",
        notes=(),
    )


def python_source(state: dict[str, Any]) -> str:
    """The calculator calls behind the numbers, as a reader can edit and run them."""
    shape = ", ".join(
        f"{field}={state[key]!r}"
        for key, field in (
            ("layers", "layers"),
            ("hidden", "hidden_size"),
            ("heads", "attention_heads"),
            ("kv_heads", "kv_heads"),
            ("head_dim", "head_dim"),
            ("mlp_width", "mlp_width"),
            ("vocab", "vocab_size"),
            ("tied", "tied_embeddings"),
        )
    )
    return (
        "from dataclasses import replace\n"
        "\n"
        "from calculators import Scenario, get_model\n"
        "\n"
        f"model = replace(get_model({BASE!r}), key='configured', {shape})\n"
        'print(f"attention {model.attention_params:,}, MLP {model.mlp_params():,.0f}, total '
        '{model.derived_params:,.0f}")\n'
        f"token = Scenario(model, level='refined', ignore_memory=True).decode(1, {state['context']!r})\n"
        'print(f"weights {token.matmul_flops / 1e9:.1f} GFLOP, attention {token.attention_flops / 1e9:.2f} '
        'GFLOP")\n'
    )


def compute(raw: dict[str, Any]) -> dict[str, Any]:
    """Everything the counter shows for ``raw`` control values; raises the calculators' ``ValueError``."""
    state = checked(state_from(raw))
    model = model_for(state)
    scenario = Scenario(model, level="refined", ignore_memory=True)
    token = scenario.decode(1, state["context"])
    per_context_token = scenario.decode(1, 1).attention_flops
    total = model.derived_params
    values = {
        "attention": float(model.attention_params),
        "mlp": model.mlp_params(),
        "embedding": float(model.embedding_params),
        "output_layer": float(model.stored_lm_head_params),
        "norms": float(model.norm_params),
        "total": total,
        "weight_bytes": scenario.weight_bytes,
        "weight_flops": token.matmul_flops,
        "attention_flops": token.attention_flops,
        "attention_share": token.attention_flops / (token.attention_flops + token.matmul_flops),
        "crossover": token.matmul_flops / per_context_token,
    }

    def count(key: str) -> str:
        return f"{format_value(values[key], 'B')} ({format_value(values[key] / total, '%')})"

    shown = {
        **{key: count(key) for key in ("attention", "mlp", "embedding", "output_layer")},
        **({"output_layer": "none (tied to the embedding)"} if state["tied"] else {}),
        "norms": f"{format_value(values['norms'], 'number', decimals=0)} "
        f"({format_value(values['norms'] / total, '%')})",
        "total": f"{format_value(total, 'number', decimals=0)} ({format_value(total, 'B')})",
        "weight_bytes": format_value(values["weight_bytes"], "GB"),
        "weight_flops": format_value(values["weight_flops"], "GFLOP"),
        "attention_flops": format_value(values["attention_flops"], "GFLOP"),
        "attention_share": format_value(values["attention_share"], "%"),
        "crossover": format_value(values["crossover"], "tokens", digits=2),
    }
    context = format_value(state["context"], "tokens", decimals=0)
    summary = (
        f"{shown['total']} parameters, {shown['weight_bytes']} in BF16. A decoded token costs "
        f"{shown['weight_flops']} of weight products; at {context} of context attention adds "
        f"{shown['attention_flops']}, {shown['attention_share']} of the token, and it would equal the "
        f"weights at about {shown['crossover']}."
    )
    return {
        "state": state,
        "values": values,
        "shown": shown,
        "summary": summary,
        "python": python_source(state),
        "charts": {},
    }
