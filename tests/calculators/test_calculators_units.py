"""Display units: what a reader sees of a computed value (the values themselves are in base SI units)."""

from __future__ import annotations

import pytest

from calculators.units import format_duration, format_value


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (0.004776119, "ms", "4.78 ms"),  # the lesson's decode step
        (295.343, "FLOP/byte", "295 FLOP/byte"),
        (16e9, "GB", "16.0 GB"),  # decimal: 1 GB = 1e9 bytes
        (13_400.6, "tokens/s", "13,400 tokens/s"),  # thousands separated, 3 significant figures
        (0.0034, "%", "0.340%"),
    ],
)
def test_values_show_in_their_unit_to_three_significant_figures(value: float, unit: str, shown: str) -> None:
    assert format_value(value, unit) == shown


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.00048, "480 µs"),
        (0.004776119, "4.78 ms"),
        (0.0323, "32.3 ms"),
        (2.587, "2.59 s"),  # a long prefill: not "2,590 ms"
        (0.9996, "1.00 s"),  # rounds to 1,000 ms, so it moves up a unit
        (125.3, "125 s"),
    ],
)
def test_durations_pick_the_unit_their_size_reads_best_in(seconds: float, shown: str) -> None:
    assert format_duration(seconds) == shown
