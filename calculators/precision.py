"""Number formats a model can be stored and computed in.

The format sets two things the roofline needs: how many bytes one weight (or cache entry) takes, and which
peak FLOP/s figure of the GPU applies. Keeping both in one table means they can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.validation import choice


@dataclass(frozen=True)
class Precision:
    """A number format: its name and its size in bytes per value."""

    name: str
    bytes_per_value: float
    description: str


PRECISIONS: dict[str, Precision] = {
    "bf16": Precision(
        "bf16", 2.0, "16-bit brain floating point: 2 bytes per value, the usual serving format"
    ),
    "fp8": Precision(
        "fp8", 1.0, "8-bit floating point: 1 byte per value, on Hopper, Ada, Blackwell and MI300"
    ),
}


def get_precision(name: str) -> Precision:
    """Return the precision called ``name`` ("bf16" or "fp8")."""
    return PRECISIONS[choice("precision", name, PRECISIONS)]
