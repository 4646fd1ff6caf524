"""Quantisation recipes: the formats a serving setup stores its weights in and multiplies them in, by name.

Papers and engines name a recipe by two formats, W for the weights and A for the activations (the
number-formats lesson): W4A16 stores INT4 weights and multiplies in BF16, W8A8-FP8 stores and multiplies FP8.
Which limit a recipe relieves follows from those two: the weight format sets the bytes a decode step reads
(memory-bound work), the arithmetic format the peak a prefill runs at (compute-bound work). The KV cache's
format is a separate choice in every engine (vLLM's ``--kv-cache-dtype``, SGLang's ``--kv-cache-dtype``), so a
recipe leaves it to the caller.

A recipe is nothing but a set of :class:`calculators.passes.Setup` options: every byte and every second is
computed by the passes and memory modules, so a recipe cannot disagree with ``Scenario(precision=...)``.
Dequantising inside a weight-only kernel is not costed (the kernels are taken to hide it, as Marlin's do up to
batches of 16-32); published kernels lose part of the gain past that, so large-batch figures for the
weight-only recipes are optimistic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.precision import get_precision
from calculators.validation import choice

if TYPE_CHECKING:
    from calculators.scenario import Scenario

KV_FORMATS = ("bf16", "fp8")
"""KV-cache formats engines offer for a whole cache: BF16 (vLLM's ``auto`` for a BF16 model) and FP8 E4M3."""


@dataclass(frozen=True)
class Recipe:
    """One quantisation recipe: the weight format, the format the matrix products run in, and where from."""

    key: str  # the name charts and calls use: "w4a16"
    name: str  # how the text writes it: "W4A16"
    weight_format: str  # a key of calculators.precision.PRECISIONS
    arithmetic_format: str  # the format the weight products run in (PRECISIONS, one GPUs compute in)
    description: str

    def __post_init__(self) -> None:
        get_precision(self.weight_format, f"{self.key}: weight_format")
        if not get_precision(self.arithmetic_format, f"{self.key}: arithmetic_format").arithmetic:
            raise ValueError(f"{self.key}: arithmetic_format {self.arithmetic_format!r} is storage-only")

    @property
    def weight_only(self) -> bool:
        """True when the weights are dequantised and multiplied in BF16: fewer bytes, the same peak."""
        return self.weight_format != self.arithmetic_format

    def options(self, kv_format: str = "bf16") -> dict[str, str]:
        """The Setup options of this recipe with the KV cache in ``kv_format`` (bf16 or fp8)."""
        kv = choice("kv_format", kv_format, KV_FORMATS)
        return {
            "precision": self.weight_format,
            "arithmetic_format": self.arithmetic_format,
            "kv_cache_format": kv,
        }

    def scenario(
        self, model: str = "llama-3.1-8b", gpu: str = "h100-sxm", kv_format: str = "bf16", **options: object
    ) -> Scenario:
        """``Scenario(model, gpu, ...)`` in this recipe; ``options`` are any other Scenario keywords."""
        from calculators.scenario import Scenario  # scenario imports nothing of this module; keep it one-way

        clash = sorted(set(options) & {"precision", "weight_format", "arithmetic_format", "kv_cache_format"})
        if clash:
            raise ValueError(
                f"recipe {self.key!r} sets {clash[0]!r} itself; pick another recipe or call Scenario directly"
            )
        return Scenario(model, gpu, **self.options(kv_format), **options)  # type: ignore[arg-type]


RECIPES: dict[str, Recipe] = {
    recipe.key: recipe
    for recipe in (
        Recipe("bf16", "BF16", "bf16", "bf16", "no quantisation: BF16 weights, BF16 maths"),
        Recipe(
            "w8a16", "W8A16", "int8", "bf16",
            "INT8 weights with a scale per output channel, dequantised to BF16 for the maths (weight-only)",
        ),
        Recipe(
            "w4a16", "W4A16", "int4", "bf16",
            "INT4 weights in groups of 128 (GPTQ, AWQ), dequantised to BF16 for the maths (weight-only)",
        ),
        Recipe(
            "w8a8-int8", "W8A8-INT8", "int8", "int8",
            "INT8 weights and activations (SmoothQuant-style), multiplied at the INT8 peak",
        ),
        Recipe(
            "w8a8-fp8", "W8A8-FP8", "fp8", "fp8",
            "FP8 E4M3 weights and activations, multiplied at the FP8 peak (Hopper, Ada, Blackwell, MI300)",
        ),
        Recipe(
            "w4a4-fp4", "W4A4-FP4", "fp4", "fp4",
            "NVFP4 weights and activations, multiplied at the FP4 peak (Blackwell only)",
        ),
    )
}  # fmt: skip


def get_recipe(key: str, field: str = "recipe") -> Recipe:
    """The recipe called ``key`` (bf16, w8a16, w4a16, w8a8-int8, w8a8-fp8, w4a4-fp4)."""
    return RECIPES[choice(field, key, RECIPES)]


CROSSOVER_SEARCH_LIMIT = 1 << 16  # sequences: far past any engine's batch (vLLM's default is 256)


def crossover_batch(
    model: str = "llama-3.1-8b",
    gpu: str = "h100-sxm",
    leader: str = "w4a16",
    challenger: str = "w8a8-fp8",
    context_tokens: int = 1,
    kv_format: str = "bf16",
    level: str = "simple",
) -> int:
    """Smallest decode batch at which ``challenger`` steps faster than ``leader``; 0 when none up to 65,536.

    The lesson's question: a weight-only recipe reads the fewest bytes, so it leads at batch 1, but it
    multiplies at the BF16 peak, so once its step is compute-bound an arithmetic recipe (FP8) overtakes it.
    At spec peaks, weights only, W4A16 against W8A8-FP8 on an H100 that is at the BF16 ridge over 2: W4A16
    is compute-bound there (2 N B / peak_bf16) while FP8 still reads its N bytes (N / bandwidth).
    ``level`` is the Scenario's ("refined": the output layer in BF16, as checkpoints keep it). Memory is not
    checked (compare with ``Scenario.max_batch``). Once overtaken, the leader stays behind (its
    step grows with the batch at a lower peak), so a doubling search then a bisection finds the batch.
    """
    first = get_recipe(leader, "leader").scenario(model, gpu, kv_format, level=level, ignore_memory=True)
    second = get_recipe(challenger, "challenger").scenario(
        model, gpu, kv_format, level=level, ignore_memory=True
    )

    def ahead(batch: int) -> bool:
        return second.decode(batch, context_tokens).time_s < first.decode(batch, context_tokens).time_s

    if ahead(1):
        return 1
    low, high = 1, 2
    while not ahead(high):
        if high >= CROSSOVER_SEARCH_LIMIT:
            return 0
        low, high = high, min(2 * high, CROSSOVER_SEARCH_LIMIT)
    while high - low > 1:  # ahead(high) and not ahead(low)
        middle = (low + high) // 2
        low, high = (low, middle) if ahead(middle) else (middle, high)
    return high
