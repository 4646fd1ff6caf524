"""How unevenly routed experts load the GPUs of expert parallelism.

With expert parallelism the E routed experts are split over G GPUs (E / G each) and a step waits for the
busiest GPU. Routing is taken as uniform and independent: each token picks k distinct experts, every
k-subset equally likely. At small batch the split is far from even: one DeepSeek-V3 token (256 routed
experts, top-8, plus 1 shared expert that every GPU holds) touches 1 expert per GPU on average over 8 GPUs,
but the busiest GPU holds 2.6 of them on average, so it reads 2.6x the mean weights.

What is computed, and how exactly:

- one GPU's distinct experts touched after T tokens: exact, a Markov chain over "experts of this GPU
  touched so far" (each token picks j of the GPU's experts with hypergeometric probability, of which some
  are new), raised to the T-th power by repeated squaring;
- the busiest GPU's expected count at T = 1: exact, the multivariate hypergeometric by a generating
  polynomial (P(max <= m) is the x^k coefficient of prod_g sum_{c <= m} C(M_g, c) x^c over C(E, k));
- at T > 1 the GPUs are treated as independent: P(max <= m) = prod_g P(count_g <= m). The counts are in
  truth negatively correlated (a token's k picks are shared out), so this understates the maximum:
  against a seeded simulation of DeepSeek-V3's shape (E = 256, k = 8, G = 8) by about 5 % at T = 2, 3 %
  at T = 4 and under 1.5 % from T = 16 (tests/test_expert_load.py bounds it);
- token-expert pairs on the busiest GPU: the same, with each GPU's pairs the T-fold convolution of the
  hypergeometric (exact while the support is small, else a normal approximation with continuity
  correction, which is accurate there since the pairs are a sum of many independent per-token counts).

Real routers are skewed (and DeepSeek-V3 balances them with a bias), so this is an uniform-routing model,
not a measurement. Stdlib only and deterministic.
"""

from __future__ import annotations

import math
from functools import lru_cache

from calculators.validation import count

_EXACT_PAIRS_SUPPORT = 512  # convolve exactly while a GPU's pairs can number at most this many


def experts_per_gpu(experts: int, gpus: int) -> tuple[int, ...]:
    """How many experts each GPU holds: E / G, the first E mod G GPUs one more when it does not divide."""
    base, extra = divmod(experts, gpus)
    return tuple(base + (1 if g < extra else 0) for g in range(gpus))


def _picks_on_gpu(held: int, experts: int, per_token: int) -> list[float]:
    """P(one token picks j of a GPU's ``held`` experts), j = 0..min(k, held): the hypergeometric."""
    total = math.comb(experts, per_token)
    return [
        math.comb(held, j) * math.comb(experts - held, per_token - j) / total
        for j in range(min(per_token, held) + 1)
    ]


def _mat_mul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    n = len(a)
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        row, a_i = out[i], a[i]
        for m in range(i, n):  # both matrices are upper triangular (touched experts never decrease)
            a_im = a_i[m]
            if a_im:
                b_m = b[m]
                for j in range(m, n):
                    row[j] += a_im * b_m[j]
    return out


@lru_cache(maxsize=256)
def touched_distribution(held: int, experts: int, per_token: int, tokens: int) -> tuple[float, ...]:
    """P(exactly c of a GPU's ``held`` experts are touched by ``tokens`` tokens), c = 0..held (exact)."""
    picks = _picks_on_gpu(held, experts, per_token)
    n = held + 1
    step = [[0.0] * n for _ in range(n)]
    for s in range(n):
        for j, p_j in enumerate(picks):
            if not p_j:
                continue
            # The token's j picks on this GPU are a uniform j-subset of its experts: `new` of them are
            # among the held - s not yet touched.
            ways = math.comb(held, j)
            for new in range(max(0, j - s), min(j, held - s) + 1):
                step[s][s + new] += p_j * math.comb(held - s, new) * math.comb(s, j - new) / ways
    result = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    power, t = step, tokens
    while t:
        if t & 1:
            result = _mat_mul(result, power)
        t >>= 1
        if t:
            power = _mat_mul(power, power)
    return tuple(result[0])


def _expected_max(cdfs: list[list[float]]) -> float:
    """E[max] of independent counts on 0..n from their CDFs: sum over m of P(max > m)."""
    top = max(len(c) for c in cdfs)
    total = 0.0
    for m in range(top - 1):
        below = 1.0
        for c in cdfs:
            below *= c[m] if m < len(c) else 1.0
        total += 1.0 - below
    return total


def _cdf(pmf: list[float] | tuple[float, ...]) -> list[float]:
    out, acc = [], 0.0
    for p in pmf:
        acc += p
        out.append(min(acc, 1.0))
    return out


def _busiest_one_token(sizes: tuple[int, ...], experts: int, per_token: int) -> float:
    """Exact E[max over GPUs of experts picked] for one token (multivariate hypergeometric)."""
    total = math.comb(experts, per_token)
    expected = 0.0
    for m in range(per_token):
        poly = [1]  # integer coefficients: exact
        for held in sizes:
            factor = [math.comb(held, c) for c in range(min(m, held) + 1)]
            new = [0] * min(len(poly) + len(factor) - 1, per_token + 1)
            for i, a in enumerate(poly):
                for j, b in enumerate(factor):
                    if i + j <= per_token:
                        new[i + j] += a * b
            poly = new
        at_most_m = poly[per_token] / total if len(poly) > per_token else 0.0
        expected += 1.0 - at_most_m
    return expected


@lru_cache(maxsize=256)
def busiest_gpu_experts(experts: int, gpus: int, per_token: int, tokens: int) -> float:
    """Expected distinct experts touched on the busiest of ``gpus`` GPUs when ``tokens`` tokens each pick
    ``per_token`` of ``experts`` (exact for one token, else GPUs taken as independent; see the module)."""
    experts, gpus = count("experts", experts), count("gpus", gpus)
    per_token, tokens = count("experts_per_token", per_token), count("tokens", tokens, minimum=0)
    sizes = experts_per_gpu(experts, gpus)
    if tokens == 0:
        return 0.0
    if tokens == 1:
        return _busiest_one_token(sizes, experts, per_token)
    by_size = {held: _cdf(touched_distribution(held, experts, per_token, tokens)) for held in set(sizes)}
    return _expected_max([by_size[held] for held in sizes])


def mean_gpu_experts(experts: int, gpus: int, per_token: int, tokens: int) -> float:
    """Expected distinct experts touched per GPU, averaged over GPUs: E (1 - (1 - k/E)^T) / G (exact)."""
    return experts * (1.0 - (1.0 - per_token / experts) ** tokens) / gpus


def _pairs_pmf(held: int, experts: int, per_token: int, tokens: int) -> list[float]:
    """Exact P(a GPU receives n token-expert pairs), by convolving the per-token hypergeometric."""
    one = _picks_on_gpu(held, experts, per_token)
    result, power, t = [1.0], one, tokens
    while t:
        if t & 1:
            result = _convolve(result, power)
        t >>= 1
        if t:
            power = _convolve(power, power)
    return result


def _convolve(a: list[float], b: list[float]) -> list[float]:
    out = [0.0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@lru_cache(maxsize=256)
def busiest_gpu_pairs(experts: int, gpus: int, per_token: int, tokens: int) -> float:
    """Expected token-expert pairs routed to the busiest GPU (the tokens its experts must run).

    The mean is T k / G; see the module for the method.
    """
    experts, gpus = count("experts", experts), count("gpus", gpus)
    per_token, tokens = count("experts_per_token", per_token), count("tokens", tokens, minimum=0)
    sizes = experts_per_gpu(experts, gpus)
    if tokens == 0:
        return 0.0
    if tokens == 1:
        return _busiest_one_token(sizes, experts, per_token)
    cdfs: dict[int, list[float]] = {}
    for held in set(sizes):
        most = tokens * min(per_token, held)
        if most <= _EXACT_PAIRS_SUPPORT:
            cdfs[held] = _cdf(_pairs_pmf(held, experts, per_token, tokens))
            continue
        one = _picks_on_gpu(held, experts, per_token)
        mean = sum(j * p for j, p in enumerate(one))
        var = sum(j * j * p for j, p in enumerate(one)) - mean * mean
        mu, sigma = tokens * mean, math.sqrt(tokens * var)
        top = min(most, int(mu + 12.0 * sigma) + 2)
        cdfs[held] = [_normal_cdf((m + 0.5 - mu) / sigma) if sigma else float(m >= mu) for m in range(top)]
        cdfs[held].append(1.0)
    return _expected_max([cdfs[held] for held in sizes])


def busiest_gpu_factors(experts: int, gpus: int, per_token: int, tokens: int) -> tuple[float, float]:
    """(busiest / mean distinct experts touched, busiest / mean token-expert pairs) on ``gpus`` GPUs: how
    much longer than the balanced split the busiest GPU reads weights and computes. Both are >= 1 and tend
    to 1 as the batch grows."""
    if gpus <= 1 or tokens <= 0:
        return 1.0, 1.0
    touched = busiest_gpu_experts(experts, gpus, per_token, tokens) / mean_gpu_experts(
        experts, gpus, per_token, tokens
    )
    pairs = busiest_gpu_pairs(experts, gpus, per_token, tokens) / (tokens * per_token / gpus)
    return max(touched, 1.0), max(pairs, 1.0)
