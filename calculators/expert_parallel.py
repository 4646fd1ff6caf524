"""Expert parallelism in numbers: which experts a batch touches, the busiest GPU, and the all-to-alls.

With expert parallelism (EP) each of G GPUs holds E / G of an MoE layer's routed experts. Attention is
usually run data-parallel beside it: every GPU holds the attention weights and its own sequences, so a
token's hidden state lives on one GPU while its k experts live on others. Each MoE layer then costs two
all-to-alls: the *dispatch* sends every token's hidden state to the GPUs of its k experts, the *combine*
sends the k expert outputs back to be summed. Each moves T k h values for T tokens of width h.

Only the pairs whose expert sits on another GPU cross a link: (G - 1) / G of them on average. A step
waits for the slowest GPU, which is the one that receives the most pairs, so the time is set by the
busiest GPU's pairs (calculators/expert_load.py), not the mean. Past one NVLink domain (8 GPUs on an HGX
board) the GPUs of other nodes are reached over the inter-node network: of the pairs a GPU receives,
(G - D) / G come from other nodes and (D - 1) / G from its own, over links that work at once, so the
slower share sets the time (a two-tier alpha-beta model; DeepSeek-V3 overlaps the two the same way and
caps each token at 4 nodes, which this uniform-routing model does not).

Routing is taken as uniform (see calculators/expert_load.py): real routers are skewed, so the busiest GPU
here is a floor on the real one. Stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.expert_load import busiest_gpu_experts, busiest_gpu_pairs, mean_gpu_experts
from calculators.interconnect import Interconnect
from calculators.models import Model, get_model
from calculators.operators import ACTIVATION_BYTES, expected_experts_touched
from calculators.validation import count, fraction, positive_number


def dispatch_bytes(tokens: float, experts_per_token: int, hidden: int, bytes_per_value: float) -> float:
    """Bytes one MoE layer's dispatch carries over all GPUs: each token's hidden state to each of its k
    experts (T k h values; the combine carries as many back). Pairs whose expert is local never leave."""
    return tokens * experts_per_token * hidden * bytes_per_value


def all_to_all_time_s(
    busiest_pairs: float,
    hidden: int,
    bytes_per_value: float,
    gpus: int,
    domain_gpus: int,
    nvlink: Interconnect,
    network: Interconnect,
    efficiency: float = 1.0,
) -> float:
    """Seconds for one dispatch (or one combine) of one MoE layer, set by the GPU receiving the most pairs.

    That GPU receives ``busiest_pairs`` hidden states, of which (G - 1) / G on average from other GPUs:
    (D - 1) / G over NVLink from its own node and (G - D) / G over ``network`` from other nodes, where
    D = min(G, ``domain_gpus``). The two links carry their shares at once, so the slower sets the time,
    plus the latency of the link crossed (the network's once any pair leaves the node).
    """
    gpus, domain_gpus = count("gpus", gpus), count("domain_gpus", domain_gpus)
    fraction("communication_efficiency", efficiency)
    if gpus == 1:
        return 0.0
    per_pair = hidden * bytes_per_value
    domain = min(gpus, domain_gpus)
    inside = busiest_pairs * (domain - 1) / gpus * per_pair
    outside = busiest_pairs * (gpus - domain) / gpus * per_pair
    nvlink_s = inside / (nvlink.bandwidth_bytes_per_s * efficiency)
    network_s = outside / (network.bandwidth_bytes_per_s * efficiency)
    latency = network.latency_s if outside else nvlink.latency_s
    return latency + max(nvlink_s, network_s)


@dataclass(frozen=True)
class ExpertLoad:
    """One MoE layer's routed experts under a batch of ``tokens`` tokens, spread over ``gpus`` GPUs
    (uniform random routing)."""

    model: str
    gpus: int
    tokens: int
    experts: int  # routed experts per MoE layer
    experts_per_token: int  # k
    experts_touched: float  # distinct experts the batch touches, all GPUs: E (1 - (1 - k/E)^T)
    mean_gpu_experts: float  # the same per GPU, averaged over GPUs
    busiest_gpu_experts: float  # expected distinct experts on the busiest GPU (it reads their weights)
    busiest_gpu_pairs: float  # expected token-expert pairs on the busiest GPU (it computes and receives them)
    dispatch_bytes: float  # one layer's dispatch over all GPUs, BF16 activations: T k h x 2 bytes

    @property
    def touched_share(self) -> float:
        """Share of the routed experts the batch touches: what share of their weights a step reads."""
        return self.experts_touched / self.experts

    @property
    def imbalance(self) -> float:
        """Busiest GPU's distinct experts over the mean: how much longer than balanced its weights take."""
        return self.busiest_gpu_experts / self.mean_gpu_experts if self.mean_gpu_experts else 1.0

    @property
    def pairs_imbalance(self) -> float:
        """Busiest GPU's token-expert pairs over the mean T k / G."""
        mean = self.tokens * self.experts_per_token / self.gpus
        return self.busiest_gpu_pairs / mean if mean else 1.0


def expert_load(model: str | Model, gpus: int = 8, tokens: int = 1) -> ExpertLoad:
    """The routed-expert load of one MoE layer of ``model`` when ``tokens`` tokens run on ``gpus`` GPUs of
    expert parallelism: experts touched, the mean and busiest GPU's share, and the dispatch's bytes."""
    m = get_model(model)
    if m.moe is None:
        raise ValueError(f"expert_load needs an MoE model; {m.name} is dense: pick e.g. 'mixtral-8x7b'")
    gpus, tokens = count("gpus", gpus), count("tokens", tokens)
    moe = m.moe
    e, k = moe.experts, moe.experts_per_token
    return ExpertLoad(
        m.key,
        gpus,
        tokens,
        e,
        k,
        expected_experts_touched(e, k, tokens),
        mean_gpu_experts(e, gpus, k, tokens),
        busiest_gpu_experts(e, gpus, k, tokens),
        busiest_gpu_pairs(e, gpus, k, tokens),
        dispatch_bytes(tokens, k, _hidden(m), ACTIVATION_BYTES),
    )


def _hidden(model: Model) -> int:
    """The model's hidden width, which the all-to-alls carry."""
    hidden = model.hidden_size
    positive_number(f"{model.key}: hidden_size", hidden)
    return int(hidden)
