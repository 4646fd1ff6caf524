"""Number formats a model's weights, its KV cache and its arithmetic can use, kept apart.

A serving setup picks three formats, and they often differ:

- the **weight format** sets the bytes each weight takes (FP8 checkpoints keep the embedding, the output
  layer, the norms and the MoE routers in BF16; see :data:`HIGH_PRECISION_TENSORS`);
- the **KV-cache format** sets the bytes per cached value (vLLM's ``--kv-cache-dtype auto`` follows the
  activations, so BF16 unless FP8 is asked for);
- the **arithmetic format** picks which of the GPU's peaks the matrix products run at. Weight-only formats
  (W4A16: INT4 weights, BF16 maths) read few bytes but compute at the BF16 peak.

Two layers, so that a size is computed in one place. A :class:`NumberFormat` is how one value is stored: its
bits of sign, exponent and mantissa (or of an integer) and, for block formats, the scale a block of values
shares. Its :attr:`~NumberFormat.bits_per_value` counts that scale: NVFP4 stores an FP8 scale per 16 values,
4 + 8/16 = 4.5 bits; MXFP4 an 8-bit power of two per 32, 4 + 8/32 = 4.25 bits; INT4 with a 16-bit scale and a
16-bit zero point per group of 128 weights, 4 + 32/128 = 4.25 bits. A :class:`Precision` is a name a setup
uses (``"fp4"``), pointing at the format it stores and saying whether GPUs compute in it; its bytes per value
are its format's, which every cost (weights, KV cache) reads.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from calculators.validation import choice, count

FLOAT_SPECIALS = ("ieee", "nan-only", "none")
"""How a float format spends its top exponent: IEEE 754's infinities and NaNs; only one NaN pattern (OCP's
E4M3, which gains range by keeping the top exponent for numbers); or nothing (E2M1, whose 16 codes are all
numbers)."""


@dataclass(frozen=True)
class NumberFormat:
    """How one value is stored: its bit layout and, for a block format, the scale a block of values shares.

    Floats store a sign, ``exponent_bits`` and ``mantissa_bits``: more exponent bits buy range (the largest
    and smallest numbers), more mantissa bits buy precision (the gap between neighbouring numbers). Integers
    store a sign and ``mantissa_bits`` more bits, evenly spaced; a scale maps them onto the real values.
    A scale shared by a whole tensor or a whole output channel (thousands of values) is counted as free
    (``block_size`` 0): 32 bits over a 4,096-value channel add 0.008 bits per value.
    """

    key: str  # the name expressions use: "bf16", "fp8-e4m3", "nvfp4"
    name: str  # how the text writes it: "FP8 E4M3"
    kind: str  # "float" or "int"
    exponent_bits: int  # 0 for integers
    mantissa_bits: int  # floats: the stored fraction bits; integers: the bits besides the sign
    block_size: int  # values that share one stored scale; 0: a scale per tensor or per channel (free)
    scale_bits: int  # bits stored per block beside its values: the scale, and a zero point where there is one
    scale: str  # the scale, in words ("an E8M0 power of two per 32 values")
    source: str  # the document that defines the layout
    specials: str = "ieee"  # floats: see FLOAT_SPECIALS

    def __post_init__(self) -> None:
        choice(f"{self.key}: kind", self.kind, ("float", "int"))
        choice(f"{self.key}: specials", self.specials, FLOAT_SPECIALS)
        count(f"{self.key}: mantissa_bits", self.mantissa_bits, maximum=63)
        count(f"{self.key}: exponent_bits", self.exponent_bits, minimum=0, maximum=15)
        count(f"{self.key}: block_size", self.block_size, minimum=0, maximum=1 << 20)
        count(f"{self.key}: scale_bits", self.scale_bits, minimum=0, maximum=64)
        if (self.kind == "float") != (self.exponent_bits > 0):
            raise ValueError(f"{self.key}: a float has exponent bits and an integer none")
        if (self.block_size == 0) != (self.scale_bits == 0):
            raise ValueError(f"{self.key}: a block format stores scale bits, and only a block format")

    @property
    def element_bits(self) -> int:
        """Bits of one stored value, the sign included, without the block's scale."""
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def scale_bits_per_value(self) -> float:
        """The block's scale spread over its values: what the block format adds to every value."""
        return self.scale_bits / self.block_size if self.block_size else 0.0

    @property
    def bits_per_value(self) -> float:
        """Bits one value costs in memory, its share of the block's scale included (NVFP4: 4 + 8/16 = 4.5)."""
        return self.element_bits + self.scale_bits_per_value

    @property
    def bytes_per_value(self) -> float:
        """Bytes one value costs in memory (BF16: 2; FP8: 1; NVFP4: 4.5 / 8 = 0.5625)."""
        return self.bits_per_value / 8

    def with_block(self, block_size: int, scale_bits: int) -> NumberFormat:
        """The same values with another scale granularity: ``block_size`` values share ``scale_bits`` bits.

        Finer blocks track the data's local size more closely and cost more bits per value: INT4 with a 16-bit
        scale per 32 values is 4 + 16/32 = 4.5 bits, per 128 values 4.125 bits.
        """
        size = count("block_size", block_size, maximum=1 << 20)
        bits = count("scale_bits", scale_bits, maximum=64)
        return replace(self, block_size=size, scale_bits=bits, scale=f"{bits} bits per {size} values")

    @property
    def exponent_bias(self) -> int:
        """What the stored exponent is offset by (2^(e-1) - 1: 7 for E4M3, 127 for BF16); 0 for integers."""
        return (1 << (self.exponent_bits - 1)) - 1 if self.kind == "float" else 0

    @property
    def max_value(self) -> float:
        """The largest finite value one element holds, before any scale (E4M3: 448; E5M2: 57,344; INT8: 127).

        IEEE-style floats keep the top exponent for infinities and NaNs, so their largest number has the
        exponent below it and an all-ones mantissa; E4M3 keeps only the all-ones mantissa of the top exponent
        for NaN; E2M1 keeps nothing back.
        """
        if self.kind == "int":
            return float((1 << self.mantissa_bits) - 1)
        top = (1 << self.exponent_bits) - 1 - self.exponent_bias  # the top exponent, unbiased
        if self.specials == "ieee":
            return 2.0 ** (top - 1) * (2 - 2.0**-self.mantissa_bits)
        if self.specials == "nan-only":
            return 2.0**top * (2 - 2.0 ** (1 - self.mantissa_bits))
        return 2.0**top * (2 - 2.0**-self.mantissa_bits)

    @property
    def min_normal(self) -> float:
        """The smallest positive value with full precision (2^(1 - bias)); 1 for integers."""
        return 2.0 ** (1 - self.exponent_bias) if self.kind == "float" else 1.0

    @property
    def relative_step(self) -> float:
        """The gap between neighbouring values relative to their size: 2^-m for a float (BF16: 1/128).

        For an integer it is the step relative to the largest value (INT8: 1/127): its values are evenly
        spaced, so small values are coarser than that.
        """
        if self.kind == "float":
            return 2.0**-self.mantissa_bits
        return 1.0 / self.max_value

    @property
    def range_ratio(self) -> float:
        """Largest over smallest normal value: the span of sizes one element holds at full precision."""
        return self.max_value / self.min_normal


IEEE_754 = "IEEE 754-2019 (binary32 and binary16 interchange formats)"
OCP_FP8 = (
    "OCP 8-bit Floating Point Specification (OFP8) rev. 1.0, 2023, table 1 (E4M3: bias 7, max 448, no "
    "infinities; E5M2: bias 15, max 57,344, IEEE specials); Micikevicius et al., FP8 Formats for Deep "
    "Learning, arXiv:2209.05433"
)
OCP_MX = (
    "OCP Microscaling Formats (MX) Specification v1.0, 2023, section 5 (MXFP4: 32 E2M1 elements and one "
    "E8M0 scale; E2M1 max 6, no infinities or NaNs)"
)
NVFP4_SOURCE = (
    "NVIDIA technical blog, Introducing NVFP4 for Efficient and Accurate Low-Precision Inference, 2025 "
    "(E2M1 values, an E4M3 scale per 16-value micro-block and an FP32 scale per tensor), and the NVIDIA "
    "Blackwell architecture technical brief"
)

FORMATS: dict[str, NumberFormat] = {
    fmt.key: fmt
    for fmt in (
        NumberFormat("fp32", "FP32", "float", 8, 23, 0, 0, "none", IEEE_754),
        NumberFormat(
            "bf16", "BF16", "float", 8, 7, 0, 0, "none",
            "Google's bfloat16: FP32's sign and 8 exponent bits with 7 mantissa bits (Kalamkar et al., "
            "A Study of BFLOAT16 for Deep Learning Training, arXiv:1905.12322)",
        ),
        NumberFormat("fp16", "FP16", "float", 5, 10, 0, 0, "none", IEEE_754),
        NumberFormat(
            "fp8-e4m3", "FP8 E4M3", "float", 4, 3, 0, 0, "one FP32 scale per tensor", OCP_FP8,
            specials="nan-only",
        ),
        NumberFormat(
            "fp8-e5m2", "FP8 E5M2", "float", 5, 2, 0, 0, "one FP32 scale per tensor", OCP_FP8
        ),
        NumberFormat(
            "nvfp4", "NVFP4", "float", 2, 1, 16, 8,
            "an FP8 (E4M3) scale per 16 values, and one FP32 scale per tensor", NVFP4_SOURCE,
            specials="none",
        ),
        NumberFormat(
            "mxfp4", "MXFP4", "float", 2, 1, 32, 8, "an E8M0 power of two per 32 values", OCP_MX,
            specials="none",
        ),
        NumberFormat(
            "int8", "INT8", "int", 0, 7, 0, 0,
            "a scale per tensor or per output channel (weights), per token (activations)",
            "SmoothQuant (Xiao et al., arXiv:2211.10438), table 2: W8A8 after a per-channel smoothing that "
            "moves the activations' outliers into the weights, then per-tensor weight scales and per-token "
            "(O1) or per-tensor (O2, O3) activation scales",
        ),
        NumberFormat(
            "int4", "INT4 (group 128)", "int", 0, 3, 128, 32,
            "a 16-bit scale and a 16-bit zero point per 128 weights",
            "GPTQ (Frantar et al., arXiv:2210.17323) and AWQ (Lin et al., arXiv:2306.00978): group size 128. "
            "Counting the zero point as 16 bits is an upper estimate: GPTQ and AWQ checkpoints pack it in 4 "
            "bits (4 + 20/128 = 4.16 bits) and symmetric ones store none (4.125 bits)",
        ),
    )
}  # fmt: skip


def get_format(key: str, field: str = "format") -> NumberFormat:
    """Return the number format called ``key`` (bf16, fp16, fp8-e4m3, nvfp4, mxfp4, int8, int4...)."""
    return FORMATS[choice(field, key, FORMATS)]


@dataclass(frozen=True)
class Precision:
    """A format a setup names: the layout it stores, and whether GPUs compute in it.

    ``arithmetic`` False marks a storage-only format: weights are stored in it and dequantised to BF16 for the
    maths (weight-only quantisation, W4A16), so its matrix products run at the BF16 peak.
    """

    name: str
    format: str  # the key of the NumberFormat it stores (FORMATS)
    description: str
    arithmetic: bool = True  # False: a storage-only format (the maths runs in BF16 after dequantising)

    @property
    def number_format(self) -> NumberFormat:
        """The layout this precision stores."""
        return FORMATS[self.format]

    @property
    def bytes_per_value(self) -> float:
        """Bytes per value, scales included: the one figure every weight and KV-cache cost reads."""
        return self.number_format.bytes_per_value


PRECISIONS: dict[str, Precision] = {
    "bf16": Precision(
        "bf16", "bf16", "16-bit brain floating point: 2 bytes per value, the usual serving format"
    ),
    "fp8": Precision(
        "fp8",
        "fp8-e4m3",
        "8-bit floating point (E4M3): 1 byte per value, on Hopper, Ada, Blackwell and MI300",
    ),
    "int8": Precision("int8", "int8", "8-bit integers (W8A8 SmoothQuant-style): 1 byte per value"),
    "int4": Precision(
        "int4",
        "int4",
        "4-bit integers with group-128 scales and zero points (AWQ/GPTQ, W4A16): about 4.25 bits per "
        "weight; weight-only, the maths runs in BF16",
        arithmetic=False,
    ),
    "fp4": Precision(
        "fp4",
        "nvfp4",
        "4-bit floating point with an FP8 scale per 16 values (NVFP4): 4.5 bits per value; Blackwell "
        "computes in it, older GPUs dequantise to BF16",
    ),
}  # fmt: skip

# Tensors a quantised checkpoint keeps in BF16 whatever its weight format: FP8 recipes (llm-compressor's
# ``ignore=["lm_head"]``, DeepSeek-V3's own FP8 release) and AWQ/GPTQ quantise only the linear layers of the
# transformer blocks.
HIGH_PRECISION_TENSORS = ("embedding", "output layer", "norms", "MoE routers")


def get_precision(name: str, field: str = "precision") -> Precision:
    """Return the number format called ``name`` (bf16, fp8, int8, int4, fp4); ``field`` names it in errors."""
    return PRECISIONS[choice(field, name, PRECISIONS)]
