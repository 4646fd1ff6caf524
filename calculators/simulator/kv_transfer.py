"""When a prefilled request's KV cache lands on the decode pool of disaggregated serving.

Two choices the :class:`~calculators.simulator.Disaggregated` scheduler takes:

``kv_transfer`` -- what is sent when:

- ``"whole"``: the cache leaves once its prefill is done, all of it (the worst case, and what the course's
  lessons assume): it lands the link's latency plus share / bandwidth after it starts.
- ``"layerwise"``: each layer's cache leaves as soon as that layer of the last prefill step is computed, so
  the transfer overlaps the prefill (Splitwise [@splitwise], DistServe [@distserve] and Mooncake
  [@mooncake] all stream the cache layer by layer). The step's layers are taken to take equal time, and
  each layer's share of the cache to be equal; the link carries one layer at a time, in order, so layer
  ``i`` starts once it is computed and layer ``i - 1`` has been sent. The cache of tokens prefilled in
  earlier steps (chunked prefill) is ready when the last step starts and goes first (counted as ready then,
  not earlier: a little pessimistic). The latency is paid once, by the last layer: the layers follow one
  another down the same connection. With a link faster than the prefill, only the last layer's share and
  the latency remain once the prefill ends; with a slower one, the whole transfer less the time the first
  ``L - 1`` of ``L`` layers took to compute.

``link_sharing`` -- which transfers queue for the same links. Every cache crosses ``lanes`` links at once
(one per GPU of the smaller side), and a link carries one cache at a time, first come first served:

- ``"sender"``: each prefill replica has its own links (and each decode replica takes any number of caches
  at once), so a replica's caches queue behind each other only;
- ``"endpoints"``: each decode replica's links take one cache at a time too, so caches from several
  prefill replicas to the same decode replica queue there;
- ``"shared"``: every cache crosses the same links (two pools joined by one link per GPU), so all caches
  queue behind each other.

A queue, not a share of the bandwidth: with processor sharing two caches sent together would both land at
twice one's time, but the simulator fixes a cache's landing time when it is sent (the decode replica books
the blocks and the prefill replica frees its own then), which a later cache would change under sharing;
first come first served lands the first at once and the second at twice one's time, the same total, and is
what an engine that sends one cache at a time per connection does.
"""

from __future__ import annotations

from calculators.interconnect import Interconnect, send_time_s

KV_TRANSFERS = ("whole", "layerwise")
LINK_SHARINGS = ("sender", "endpoints", "shared")


def transfer_window(
    *,
    mode: str,
    free_s: float,
    prefill_done_s: float,
    step_s: float,
    earlier_fraction: float,
    layers: int,
    share_bytes: float,
    link: Interconnect,
    efficiency: float,
) -> tuple[float, float]:
    """(start, lands): when the first byte of one cache goes onto its links and when the cache lands.

    ``free_s`` is when the links it needs are free, ``prefill_done_s`` the end of the step that finished
    its prefill, ``step_s`` that step's length, ``earlier_fraction`` the share of its tokens prefilled by
    earlier steps, ``share_bytes`` the bytes one link carries (the cache over the lanes).

    Layer-wise, with x = the seconds one layer's share of the last step's tokens takes on the link, T the
    step, t0 = ``prefill_done_s`` - T, a the time the links are free and the earlier tokens are sent, and
    c_i = t0 + i T / L when layer i is computed: the last layer is sent at
    max(a + L x, max over i of c_i + (L - i + 1) x), the last term linear in i, so largest at i = 1 or L.
    """
    seconds = share_bytes / (link.bandwidth_bytes_per_s * efficiency)
    if mode == "whole" or step_s <= 0 or free_s >= prefill_done_s:
        # Whole, or layer-wise with the links busy until the prefill is done: every layer is ready.
        start = max(prefill_done_s, free_s)
        return start, start + send_time_s(share_bytes, link, efficiency)
    t0 = prefill_done_s - step_s
    earlier = seconds * earlier_fraction
    x = (seconds - earlier) / layers
    if earlier > 0:
        start = max(t0, free_s)
        ready = start + earlier
    else:
        start = max(t0 + step_s / layers, free_s)
        ready = free_s
    sent = max(ready + layers * x, t0 + step_s / layers + layers * x, prefill_done_s + x)
    return start, sent + link.latency_s
