"""Number formats a model's weights, its KV cache and its arithmetic can use, kept apart.

A serving setup picks three formats, and they often differ:

- the **weight format** sets the bytes each weight takes (FP8 checkpoints keep the embedding, the output
  layer, the norms and the MoE routers in BF16; see :data:`HIGH_PRECISION_TENSORS`);
- the **KV-cache format** sets the bytes per cached value (vLLM's ``--kv-cache-dtype auto`` follows the
  activations, so BF16 unless FP8 is asked for);
- the **arithmetic format** picks which of the GPU's peaks the matrix products run at. Weight-only formats
  (W4A16: INT4 weights, BF16 maths) read few bytes but compute at the BF16 peak.

Sizes include the scales that block formats store beside the values: INT4 with one 16-bit scale per group of
128 weights is 4 + 16/128 = 4.125 bits, and with an AWQ/GPTQ zero point about 4.25 bits, the figure used here;
NVFP4 stores an FP8 scale per 16 values, 4 + 8/16 = 4.5 bits (MXFP4: 4.25 bits).
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.validation import choice


@dataclass(frozen=True)
class Precision:
    """A number format: its name, its bytes per value (scales included), and whether GPUs compute in it."""

    name: str
    bytes_per_value: float
    description: str
    arithmetic: bool = True  # False: a storage-only format (the maths runs in BF16 after dequantising)


PRECISIONS: dict[str, Precision] = {
    "bf16": Precision(
        "bf16", 2.0, "16-bit brain floating point: 2 bytes per value, the usual serving format"
    ),
    "fp8": Precision(
        "fp8", 1.0, "8-bit floating point (E4M3): 1 byte per value, on Hopper, Ada, Blackwell and MI300"
    ),
    "int8": Precision("int8", 1.0, "8-bit integers (W8A8 SmoothQuant-style): 1 byte per value"),
    "int4": Precision(
        "int4",
        4.25 / 8,
        "4-bit integers with group-128 scales and zero points (AWQ/GPTQ, W4A16): about 4.25 bits per "
        "weight; weight-only, the maths runs in BF16",
        arithmetic=False,
    ),
    "fp4": Precision(
        "fp4",
        4.5 / 8,
        "4-bit floating point with an FP8 scale per 16 values (NVFP4): 4.5 bits per value; Blackwell "
        "computes in it, older GPUs dequantise to BF16",
    ),
}

# Tensors a quantised checkpoint keeps in BF16 whatever its weight format: FP8 recipes (llm-compressor's
# ``ignore=["lm_head"]``, DeepSeek-V3's own FP8 release) and AWQ/GPTQ quantise only the linear layers of the
# transformer blocks.
HIGH_PRECISION_TENSORS = ("embedding", "output layer", "norms", "MoE routers")


def get_precision(name: str, field: str = "precision") -> Precision:
    """Return the number format called ``name`` (bf16, fp8, int8, int4, fp4); ``field`` names it in errors."""
    return PRECISIONS[choice(field, name, PRECISIONS)]
