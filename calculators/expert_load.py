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
- the busiest GPU's expected distinct experts: exact, by counting sets. Every set of s experts is equally
  likely to be exactly the set a batch touches, with probability r(s) = sum_j (-1)^(s-j) C(s, j) q(j)^T,
  q(j) = C(j, k) / C(E, k) the chance that one token stays inside a given j-set (inclusion-exclusion). So
  P(busiest <= m) = sum_s N_m(s) r(s), with N_m(s) the number of s-sets holding at most m experts on every
  GPU: the x^s coefficient of prod_g sum_{c <= m} C(M_g, c) x^c. Regrouped by j the integer weights are the
  coefficients of N_m(x - 1), cached per split. The alternating sum cancels heavily, so it is evaluated in
  decimal arithmetic with enough digits (E log10 3 + 40) that rounding stays below 1e-30.
  Past 512 experts (no preset comes near) the GPUs are taken as independent instead, which understates
  the maximum: the counts are negatively correlated, a token's k picks being shared out (about 4 % at
  T = 2 for DeepSeek-V3's shape, under 1 % from T = 64);
- token-expert pairs on the busiest GPU: exact at T = 1 (the multivariate hypergeometric by a generating
  polynomial), else the GPUs taken as independent (understating it by about 5 % at T = 2 for
  DeepSeek-V3's shape, under 1.5 % from T = 16), each GPU's pairs the T-fold convolution of the
  hypergeometric (exact while the support is small, else a normal approximation with continuity
  correction, which is accurate there since the pairs are a sum of many independent per-token counts).

Real routers are skewed (and DeepSeek-V3 balances them with a bias), so this is a uniform-routing model,
not a measurement: an upper bound on the experts a batch touches (for independent tokens the uniform split
maximises it) and a floor on the busiest expert's or GPU's load. Published measurements bear both out by a
wide margin (tests/calculators/test_expert_load_published.py: NLLB-MoE's decoder left more than 90 of 128
experts idle at batch 96, where uniform routing touches 99.8; Mixtral's consecutive tokens share an expert
more often than random ones). Stdlib only and deterministic.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from functools import lru_cache

from calculators.validation import count

_EXACT_PAIRS_SUPPORT = 512  # convolve exactly while a GPU's pairs can number at most this many
_EXACT_TOUCHED_EXPERTS = 512  # count sets exactly up to this many experts (DeepSeek-V3 has 256)


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


def _pack(coefficients: list[int], bits: int) -> int:
    packed = 0
    for c in reversed(coefficients):
        packed = (packed << bits) + c
    return packed


def _unpack(packed: int, bits: int, length: int) -> list[int]:
    """The signed coefficients back from a packed integer (each below 2^(bits - 1) in size)."""
    full, half = 1 << bits, 1 << (bits - 1)
    out = []
    for _ in range(length):
        c = packed & (full - 1)
        if c >= half:
            c -= full
        out.append(c)
        packed = (packed - c) >> bits
    return out


@lru_cache(maxsize=64)
def _stay_inside_weights(sizes: tuple[int, ...], most: int) -> tuple[Decimal, ...]:
    """A(j), j = 0..E, with P(busiest GPU touches <= ``most`` experts) = sum_j A(j) q(j)^T (exact integers).

    N(s), the number of s-sets holding at most ``most`` experts on every GPU, has the generating polynomial
    N(x) = prod_g sum_{c <= most} C(M_g, c) x^c, and sum_s N(s) r(s) regroups by j into sum_j A(j) q(j)^T
    with A(x) = N(x - 1). Each GPU's factor is shifted by x -> x - 1, then the factors are multiplied as
    integers by packing each polynomial into one big integer (Kronecker substitution): |A(j)| <= 3^E, so
    2 E bits a slot keep the coefficients apart. Independent of k and T, so cached per (split, most).
    """
    experts = sum(sizes)
    bits = 2 * experts + 2
    product = 1
    for held in sizes:
        top = min(most, held)
        # sum_c C(M, c) (x - 1)^c has x^j coefficient sum_c C(M, c) C(c, j) (-1)^(c - j)
        # = C(M, j) sum_i C(M - j, i) (-1)^i over i <= top - j, = C(M, j) (-1)^(top - j) C(M - j - 1, top - j)
        # (the partial alternating sum of a binomial row), or 1 when j = M.
        shifted = [
            1 if j == held else math.comb(held, j) * (-1) ** (top - j) * math.comb(held - j - 1, top - j)
            for j in range(top + 1)
        ]
        product *= _pack(shifted, bits)
    return tuple(Decimal(a) for a in _unpack(product, bits, experts + 1))  # exact: Decimal(int) is


def _digits(experts: int, tokens: int) -> int:
    # Terms A(j) q(j)^T reach 3^E in size before cancelling; 40 spare digits keep rounding below 1e-30.
    return int(experts * math.log10(3.0)) + len(str(tokens)) + 40


def _busiest_touched_exact(sizes: tuple[int, ...], experts: int, per_token: int, tokens: int) -> float:
    """Exact E[max over GPUs of distinct experts touched]: sum over m of 1 - P(max <= m)."""
    with localcontext() as ctx:
        ctx.prec = _digits(experts, tokens)
        total = Decimal(math.comb(experts, per_token))
        inside = [(Decimal(math.comb(j, per_token)) / total) ** tokens for j in range(experts + 1)]
        expected = Decimal(0)
        for most in range(max(sizes)):
            weights = _stay_inside_weights(sizes, most)
            expected += 1 - sum((q * a for a, q in zip(weights, inside, strict=True) if q), Decimal(0))
        return float(expected)


@lru_cache(maxsize=256)
def busiest_gpu_experts(experts: int, gpus: int, per_token: int, tokens: int) -> float:
    """Expected distinct experts touched on the busiest of ``gpus`` GPUs when ``tokens`` tokens each pick
    ``per_token`` of ``experts`` (exact up to 512 experts, else GPUs taken as independent; see the module)."""
    experts, gpus = count("experts", experts), count("gpus", gpus)
    per_token, tokens = count("experts_per_token", per_token), count("tokens", tokens, minimum=0)
    if per_token > experts:
        raise ValueError(
            f"experts_per_token ({per_token}) must be at most experts ({experts}); "
            "a token picks distinct experts"
        )
    sizes = experts_per_gpu(experts, gpus)
    if tokens == 0:
        return 0.0
    if tokens == 1:
        return _busiest_one_token(sizes, experts, per_token)
    if experts <= _EXACT_TOUCHED_EXPERTS:
        return _busiest_touched_exact(sizes, experts, per_token, tokens)
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
