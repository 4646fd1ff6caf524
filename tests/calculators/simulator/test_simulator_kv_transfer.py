"""Disaggregated serving's KV transfer worked by hand: layer-wise overlap with the prefill, and caches that
queue for a shared link.

The setup is the lesson's (the 8B model in BF16 on one H100 SXM at spec peaks, simple level; see
test_simulator.py): a prefill of P > 295 tokens takes P x 16.1714 us, any step of up to 295 tokens
4.7761 ms. The model has L = 32 layers and 131,072 bytes of cache per token (32 layers x 8 KV heads x 128
x 2 (K, V) x 2 B), so 4,096 bytes per token per layer.
"""

from __future__ import annotations

import json
import random

import pytest

from calculators import ChunkedPrefill, Disaggregated, Interconnect, Request, simulate
from calculators.cli import main
from calculators.simulator.kv_transfer import transfer_window

PER_PROMPT_TOKEN = 1.6e10 / 989.4e12  # seconds per prompt token, compute-bound
STEP = 16e9 / 3.35e12  # a memory-bound step: 4.7761 ms
SLOW = Interconnect("slow", "1 GB/s test link", 1e9, 0.001, "hand-worked")  # 1 GB/s, 1 ms latency
FAST = Interconnect("fast", "100 GB/s test link", 100e9, 0.001, "hand-worked")  # 100 GB/s, 1 ms latency
CACHE_1000 = 1000 * 131072  # bytes of a 1,000-token cache: 131.072 MB


def trace(*rows: tuple[float, int, int]) -> list[Request]:
    return [Request(i, t, p, o) for i, (t, p, o) in enumerate(rows)]


def second_token(kv_transfer: str, link: Interconnect, **options: object) -> float:
    """When the decode GPU writes the second token of one 1,000-token prompt."""
    result = simulate(
        trace((0.0, 1000, 3)), scheduler=Disaggregated(1, 1, link, kv_transfer=kv_transfer, **options)
    )
    return result.token_times(0)[1]


# --- layer-wise transfer ---------------------------------------------------------------------------------
def test_layerwise_over_a_fast_link_leaves_only_the_last_layer_after_the_prefill() -> None:
    # Prefill T = 1,000 x 16.1714 us = 16.171 ms, a layer every T / 32 = 0.5054 ms. Over 100 GB/s one layer's
    # cache (4,096,000 B) takes x = 40.96 us < 0.5054 ms, so each layer is sent before the next is computed:
    # the last lands T + x + 1 ms after the start, not T + 32 x + 1 ms = T + 2.31 ms as the whole cache does.
    prefill = 1000 * PER_PROMPT_TOKEN
    x = CACHE_1000 / 32 / 100e9
    assert second_token("whole", FAST) == pytest.approx(prefill + 0.001 + CACHE_1000 / 100e9 + STEP)
    assert second_token("layerwise", FAST) == pytest.approx(prefill + x + 0.001 + STEP)


def test_layerwise_over_a_slow_link_saves_the_first_layers_compute() -> None:
    # Over 1 GB/s one layer takes x = 4.096 ms > T / 32 = 0.5054 ms: the link, not the prefill, sets the
    # pace. Layer 1 leaves at T / 32 and the 32 follow back to back: sent at T / 32 + 32 x = T / 32 +
    # 131.072 ms, landed 1 ms later. After the prefill that is 132.072 ms - 31 T / 32 = 116.41 ms, against
    # 132.072 ms for the whole cache.
    prefill = 1000 * PER_PROMPT_TOKEN
    whole = 0.001 + CACHE_1000 / 1e9
    assert second_token("whole", SLOW) == pytest.approx(prefill + whole + STEP)
    assert second_token("layerwise", SLOW) == pytest.approx(prefill / 32 + whole + STEP)
    assert second_token("layerwise", SLOW) - STEP - prefill == pytest.approx(0.116405, abs=1e-6)


def test_layerwise_sends_the_earlier_chunks_when_the_last_chunk_starts() -> None:
    # Chunked prefill of 512 tokens a step: 512 x 16.1714 us = 8.2798 ms, then 488 tokens, 7.8916 ms. The
    # 512 tokens of the first chunk (51.2% of the cache: 67.109 ms over 1 GB/s) are ready when the second
    # step starts at 8.2798 ms and leave then; the second chunk's 32 layers (1.9989 ms each) are all
    # computed by 16.171 ms, long before the link is free at 8.2798 + 67.109 ms. So the cache is sent at
    # 8.2798 + 131.072 ms and lands 1 ms later, 7.89 ms before the whole cache would.
    chunked = ChunkedPrefill(512)
    first = 512 * PER_PROMPT_TOKEN
    whole = 0.001 + CACHE_1000 / 1e9
    assert second_token("layerwise", SLOW, prefill_scheduler=chunked) == pytest.approx(first + whole + STEP)
    assert second_token("whole", SLOW, prefill_scheduler=chunked) == pytest.approx(
        1000 * PER_PROMPT_TOKEN + whole + STEP
    )


def _layer_by_layer(
    free: float, done: float, step: float, earlier: float, layers: int, seconds: float, latency: float
) -> tuple[float, float]:
    """The definition, layer by layer: the earlier tokens' cache goes once the last step starts and the
    link is free; layer i once it is computed (at t0 + i T / L) and layer i - 1 has been sent."""
    t0 = done - step
    link, start = free, None
    if earlier > 0:
        start = max(t0, link)
        link = start + seconds * earlier
    x = seconds * (1 - earlier) / layers
    for i in range(1, layers + 1):
        begin = max(t0 + i * step / layers, link)
        start = begin if start is None else start
        link = begin + x
    assert start is not None
    return start, link + latency


def test_layerwise_window_matches_the_layer_by_layer_definition() -> None:
    rng = random.Random(25)
    for _ in range(2000):
        layers = rng.randint(1, 128)
        step = rng.uniform(1e-4, 0.5)
        done = rng.uniform(step, 2.0)
        free = rng.uniform(0.0, done * 1.2)
        earlier = rng.choice([0.0, rng.uniform(0.0, 0.99)])
        bandwidth = rng.choice([1e9, 50e9, 450e9])
        link = Interconnect("t", "test", bandwidth, rng.uniform(0, 1e-3), "test")
        share = rng.uniform(1e5, 1e9)
        got = transfer_window(
            mode="layerwise",
            free_s=free,
            prefill_done_s=done,
            step_s=step,
            earlier_fraction=earlier,
            layers=layers,
            share_bytes=share,
            link=link,
            efficiency=1.0,
        )
        want = _layer_by_layer(free, done, step, earlier, layers, share / bandwidth, link.latency_s)
        if free >= done:  # the link frees after the prefill: every layer is ready, the whole cache goes
            want = (free, free + share / bandwidth + link.latency_s)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
        # Never later than sending it whole, never before the prefill ends plus the last layer's share.
        whole = transfer_window(
            mode="whole",
            free_s=free,
            prefill_done_s=done,
            step_s=step,
            earlier_fraction=earlier,
            layers=layers,
            share_bytes=share,
            link=link,
            efficiency=1.0,
        )
        assert got[1] <= whole[1] * (1 + 1e-12)
        assert got[1] >= done + link.latency_s - 1e-12


def test_one_layer_layerwise_is_whole() -> None:
    link = Interconnect("t", "test", 1e9, 0.002, "test")
    args = {"free_s": 0.0, "prefill_done_s": 0.1, "step_s": 0.1, "earlier_fraction": 0.0, "layers": 1}
    common = {"share_bytes": 1e6, "link": link, "efficiency": 0.5}
    # 1 MB at 1 GB/s x 0.5 = 2 ms, + 2 ms latency, from 0.1 s.
    assert transfer_window(mode="layerwise", **args, **common) == pytest.approx((0.1, 0.104))
    assert transfer_window(mode="whole", **args, **common) == pytest.approx((0.1, 0.104))


# --- shared links ------------------------------------------------------------------------------------------
def _second_tokens(prefill_gpus: int, decode_gpus: int, sharing: str) -> list[float]:
    # Two 1,000-token prompts at once, one on each prefill GPU when there are two.
    result = simulate(
        trace((0.0, 1000, 3), (0.0, 1000, 3)),
        scheduler=Disaggregated(prefill_gpus, decode_gpus, SLOW, link_sharing=sharing),
    )
    return sorted(result.token_times(i)[1] for i in range(2))


@pytest.mark.parametrize(
    ("prefill_gpus", "decode_gpus", "sharing", "queued"),
    [
        # Each prefill GPU has its own link: both caches land 132.072 ms after their prefills.
        (2, 1, "sender", False),
        (2, 2, "sender", False),
        # Both go to the one decode GPU, whose link takes one at a time: the second lands at 2 x 132.072 ms.
        (2, 1, "endpoints", True),
        # Two decode GPUs (requests go to them in turn): two senders, two receivers, no queue.
        (2, 2, "endpoints", False),
        # One link for every cache: the second waits for the first even with two of each.
        (2, 2, "shared", True),
    ],
)
def test_caches_queue_for_a_shared_link(
    prefill_gpus: int, decode_gpus: int, sharing: str, queued: bool
) -> None:
    prefill = 1000 * PER_PROMPT_TOKEN  # both prefills end together, each on its own GPU
    transfer = 0.001 + CACHE_1000 / 1e9  # 132.072 ms each
    # A decode GPU that takes both one after the other runs a step for the first alone before the second
    # lands (5 ms < 132 ms).
    expected = [prefill + transfer + STEP, prefill + (2 if queued else 1) * transfer + STEP]
    assert _second_tokens(prefill_gpus, decode_gpus, sharing) == pytest.approx(expected)


def test_one_prefill_gpu_always_sends_one_cache_at_a_time() -> None:
    # Both prompts prefill together on one GPU (2 x 16.171 ms), and its link carries one cache at a time
    # whatever the sharing: 132.072 ms then 2 x 132.072 ms after the prefill.
    prefill = 2000 * PER_PROMPT_TOKEN
    transfer = 0.001 + CACHE_1000 / 1e9
    for sharing in ("sender", "endpoints", "shared"):
        assert _second_tokens(1, 2, sharing) == pytest.approx(
            [prefill + transfer + STEP, prefill + 2 * transfer + STEP]
        )


# --- options and errors -------------------------------------------------------------------------------------
def test_bad_options_name_the_field_and_the_choices() -> None:
    with pytest.raises(ValueError, match="kv_transfer must be one of layerwise, whole; got 'layers'"):
        Disaggregated(kv_transfer="layers")
    with pytest.raises(ValueError, match="link_sharing must be one of endpoints, sender, shared"):
        Disaggregated(link_sharing="fifo")


def test_defaults_are_described_as_before_and_options_when_set() -> None:
    assert "kv_transfer" not in Disaggregated().describe()
    assert "link_sharing" not in Disaggregated().describe()
    described = Disaggregated(kv_transfer="layerwise", link_sharing="shared").describe()
    assert (described["kv_transfer"], described["link_sharing"]) == ("layerwise", "shared")


def test_cli_takes_kv_transfer_and_link_sharing(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--requests", "4", "--burst", "--prompt", "1000", "--output", "3"]
    argv += ["--scheduler", "disaggregated", "--link", "infiniband-ndr", "--json"]
    assert main(argv) == 0
    whole = json.loads(capsys.readouterr().out)
    assert main([*argv, "--kv-transfer", "layerwise", "--link-sharing", "shared"]) == 0
    layerwise = json.loads(capsys.readouterr().out)
    assert layerwise["config"]["scheduler"]["kv_transfer"] == "layerwise"
    assert layerwise["config"]["scheduler"]["link_sharing"] == "shared"
    assert layerwise["summary"]["ttft_s"]["mean"] == whole["summary"]["ttft_s"]["mean"]  # the first token
    assert layerwise["summary"]["e2e_s"]["mean"] < whole["summary"]["e2e_s"]["mean"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--kv-transfer", "layerwise"], "--kv-transfer is for disaggregated serving"),
        (["--link-sharing", "shared"], "--link-sharing is for disaggregated serving"),
        (["--scheduler", "disaggregated", "--kv-transfer", "eager"], "invalid choice: 'eager'"),
        (["--scheduler", "disaggregated", "--link-sharing", "ps"], "invalid choice: 'ps'"),
    ],
)
def test_cli_bad_kv_transfer_input_is_one_clear_line(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "--requests", "2", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


# --- time order between the pools --------------------------------------------------------------------------
def test_a_cache_that_lands_first_decodes_first() -> None:
    # Two prefill GPUs, one decode GPU, the 1 GB/s link. Request 0 (1,000 tokens at 0) is prefilled by
    # 16.171 ms and its cache lands at 16.171 + 132.072 = 148.24 ms. Request 1 (10 tokens at 20 ms) is
    # prefilled in one memory-bound step by 24.776 ms and its 1,310,720-byte cache lands 1 + 1.311 ms later,
    # at 27.087 ms: the decode GPU writes its tokens 2 and 3 at 27.087 + 4.776 and + 2 x 4.776 ms. The
    # decode GPU used to move its clock on to the first cache sent (request 0's, at 148.24 ms) and step
    # there, so request 1 waited until 153.02 ms for its second token.
    result = simulate(trace((0.0, 1000, 3), (0.02, 10, 3)), scheduler=Disaggregated(2, 1, SLOW))
    lands = 0.02 + STEP + 0.001 + 10 * 131072 / 1e9
    assert result.token_times(1) == pytest.approx([0.02 + STEP, lands + STEP, lands + 2 * STEP])
    first = 1000 * PER_PROMPT_TOKEN + 0.001 + CACHE_1000 / 1e9
    assert result.token_times(0)[1:] == pytest.approx([first + STEP, first + 2 * STEP])


def test_caches_that_land_together_decode_together() -> None:
    # Two 1,000-token prompts at once on two prefill GPUs: both caches land at 148.24 ms, and the decode GPU
    # runs them in the same steps (it used to step the first alone, the second a step later).
    result = simulate(trace((0.0, 1000, 3), (0.0, 1000, 3)), scheduler=Disaggregated(2, 1, SLOW))
    lands = 1000 * PER_PROMPT_TOKEN + 0.001 + CACHE_1000 / 1e9
    for i in range(2):
        assert result.token_times(i)[1:] == pytest.approx([lands + STEP, lands + 2 * STEP])
