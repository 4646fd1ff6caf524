"""A slider move computes each setup and pass once (issue 23); every answer stays the one computed without.

The worker answers a move with the widget's numbers and its charts, which ask for the same setups and passes
again (under the calibrated mode and at spec peaks); ``calculators.passes.memoised`` looks the repeats up for
the length of one request. These tests hold the answers byte for byte to the ones computed without it, and
hold the memory to what makes that true: the active model setting is part of a setup's key, and nothing is
remembered outside the block.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest

from calculators.browser import protocol
from calculators.passes import decode_step, make_setup, memoised, prefill
from calculators.setting import COURSE_SETTING, SPEC_PEAK, using
from calculators.validation import choice

# Requests as the widgets send them: defaults, slider moves (prompt, output, batch, context, intensity), a
# switch, other presets, a what-if that does not fit, and bad input (the error text must not change either).
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("prefill-decode", {}),
    *[("prefill-decode", {"prompt": 300 + (i * 37) % 600}) for i in range(4)],
    ("prefill-decode", {"prompt": 131072, "output": 131072, "batch": 4096}),
    ("prefill-decode", {"prompt": 1, "output": 1, "batch": 1, "kv": False}),
    ("prefill-decode", {"model": "llama-3.1-70b", "gpu": "a100-sxm-80gb", "batch": 64}),
    ("prefill-decode", {"prompt": 0}),
    ("kv-cache", {}),
    ("kv-cache", {"context": 32000, "batch": 8}),
    ("kv-cache", {"kv_format": "fp8", "batch": 200}),
    ("roofline-explorer", {}),
    ("roofline-explorer", {"intensity": 3}),
    ("parameter-counter", {"layers": 40}),
    ("serving-simulator", {"requests": 20, "rate": 5.0}),
]


def without_memo(request: str, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as patch:
        patch.setattr(protocol, "memoised", contextlib.nullcontext)
        return protocol.handle(request)


@pytest.mark.parametrize(("widget", "state"), REQUESTS)
def test_an_answer_is_the_same_with_and_without_the_memory(
    widget: str, state: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    request = json.dumps({"widget": widget, "state": state})
    assert protocol.handle(request) == without_memo(request, monkeypatch)


def test_moves_in_a_row_each_get_their_own_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    # The memory is one request's: a move back to an earlier prompt gets that prompt's answer, not the last.
    answers = [
        protocol.handle(json.dumps({"widget": "prefill-decode", "state": {"prompt": p}}))
        for p in (500, 900, 500)
    ]
    assert answers[0] == answers[2] != answers[1]
    assert answers[1] == without_memo(
        json.dumps({"widget": "prefill-decode", "state": {"prompt": 900}}), monkeypatch
    )


def test_inside_the_block_a_setup_and_its_passes_are_built_once() -> None:
    with using(COURSE_SETTING), memoised():
        setup = make_setup("dense-8b", "h100-sxm", kv_traffic=True, ignore_memory=True)
        assert make_setup("dense-8b", "h100-sxm", kv_traffic=True, ignore_memory=True) is setup
        assert prefill(setup, 2000) is prefill(setup, 2000)
        assert decode_step(setup, batch=4, context_tokens=2001) is decode_step(
            setup, batch=4, context_tokens=2001
        )
        # Any argument that differs is another pass.
        assert prefill(setup, 2000) is not prefill(setup, 2001)
        assert prefill(setup, 2000, batch=2) is not prefill(setup, 2000)
        assert decode_step(setup, batch=4, context_tokens=2001) is not decode_step(
            setup, batch=4, context_tokens=2
        )
        assert make_setup("dense-8b", "h100-sxm", kv_traffic=False, ignore_memory=True) is not setup


def test_the_active_setting_is_part_of_a_setups_key() -> None:
    # The bound beside each time is the same call under the spec-peak setting: it must not get the calibrated
    # setup remembered a moment before.
    with memoised():
        with using(COURSE_SETTING):
            calibrated = make_setup("dense-8b", "h100-sxm")
        with using(SPEC_PEAK):
            peak = make_setup("dense-8b", "h100-sxm")
    assert (calibrated.mode, peak.mode) == ("calibrated", "peak")
    assert prefill(peak, 2000).time_s < prefill(calibrated, 2000).time_s


def test_nothing_is_remembered_outside_the_block() -> None:
    with using(COURSE_SETTING):
        setup = make_setup("dense-8b", "h100-sxm")
        assert make_setup("dense-8b", "h100-sxm") is not setup
        assert prefill(setup, 2000) is not prefill(setup, 2000)
        with memoised():
            inside = make_setup("dense-8b", "h100-sxm")
        assert make_setup("dense-8b", "h100-sxm") is not inside


def test_an_answer_with_a_non_finite_number_still_becomes_valid_json() -> None:
    # Only an answer that needs it is walked: NaN and infinity become null, as before.
    text = protocol._json({"ok": True, "result": {"a": [1.0, float("nan")], "b": {"c": float("inf")}}})
    assert json.loads(text) == {"ok": True, "result": {"a": [1.0, None], "b": {"c": None}}}


def test_a_choice_is_checked_against_any_collection_and_named_sorted() -> None:
    # Every pass checks its formats with ``choice``; it sorts the names only for the message now.
    assert choice("gpu", "b", {"c": 1, "b": 2}) == "b"
    assert choice("gpu", "b", (name for name in ("c", "b"))) == "b"  # an iterator, read once
    with pytest.raises(ValueError, match=r"gpu must be one of a, b, c; got 'd'"):
        choice("gpu", "d", ["c", "a", "b"])
    with pytest.raises(ValueError, match="must be one of"):
        choice("gpu", "ab", "abc")  # a text stands for its letters, as before, not its substrings
