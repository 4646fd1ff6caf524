"""Workloads: requests arriving over time, each with a prompt length and an output length.

A workload is plain data (a tuple of :class:`Request`), so the same one can be served by every scheduler and a
lesson can compare them fairly. Random draws come from ``random.Random`` objects seeded from the stated seed,
one per stream (arrivals, prompts, outputs), so changing the output lengths leaves the arrival times alone,
and the same inputs give the same workload in CPython and in Pyodide.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from calculators.validation import MAX_COUNT, bounded_number, choice, count, non_negative_number

# A workload this large would take far longer to simulate than any lesson or widget can wait.
MAX_REQUESTS = 1_000_000
# The latest arrival accepted, about three years: a float's resolution there is 15 ns, so a step of a
# microsecond still moves the clock (at 1e15 s, a whole decode step would vanish in rounding).
MAX_ARRIVAL_S = 1e8
MAX_RATE_PER_S = 1e9  # arrivals per second: a nanosecond apart, far beyond any engine


def arrival_time(field: str, value: object) -> float:
    """``value`` as seconds if it is a finite number from 0 to :data:`MAX_ARRIVAL_S`; else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{field} must be a finite number of seconds >= 0, got {value!r}")
    if value > MAX_ARRIVAL_S:
        raise ValueError(
            f"{field} must be at most {MAX_ARRIVAL_S:g} s (about three years), got {value!r}; "
            "start the trace nearer 0"
        )
    return float(value)


@dataclass(frozen=True)
class Request:
    """One request: when it arrives and how many tokens it reads and writes.

    ``output_tokens`` counts every token the request writes, the first one (made by prefill) included, as
    :func:`calculators.request_timing` does.
    """

    id: int
    arrival_s: float
    prompt_tokens: int
    output_tokens: int
    # The first ``prefix_tokens`` of the prompt are the same tokens in every request with this
    # ``prefix_id`` (a shared system prompt): what a prefix cache can reuse. None: nothing is shared.
    prefix_id: int | None = None
    prefix_tokens: int = 0
    # A chat's next turn: the id of the request whose prompt and answer this prompt starts with (then come
    # the turn's new tokens). Its system prompt, if any, is the first turn's. None: not a follow-up.
    follows: int | None = None

    def __post_init__(self) -> None:
        where = f"request {self.id!r}"
        if isinstance(self.id, bool) or not isinstance(self.id, int):
            raise ValueError(f"{where}: id must be a whole number")
        arrival_time(f"{where}: arrival_s", self.arrival_s)
        count(f"{where}: prompt_tokens", self.prompt_tokens)
        count(f"{where}: output_tokens", self.output_tokens)
        if self.follows is not None:
            if isinstance(self.follows, bool) or not isinstance(self.follows, int):
                raise ValueError(f"{where}: follows must be a request id or None, got {self.follows!r}")
            if self.follows == self.id:
                raise ValueError(f"{where}: follows its own id; give the id of the chat's previous turn")
            if self.prefix_id is not None or self.prefix_tokens:
                raise ValueError(
                    f"{where}: a follow-up (follows={self.follows}) takes its system prompt from the chat's "
                    "first turn; leave prefix_id and prefix_tokens unset"
                )
        if self.prefix_id is None:
            if self.prefix_tokens != 0:
                raise ValueError(f"{where}: prefix_tokens={self.prefix_tokens!r} needs a prefix_id")
            return
        if isinstance(self.prefix_id, bool) or not isinstance(self.prefix_id, int):
            raise ValueError(f"{where}: prefix_id must be a whole number or None, got {self.prefix_id!r}")
        count(f"{where}: prefix_tokens", self.prefix_tokens, minimum=0)
        if self.prefix_tokens > self.prompt_tokens:
            raise ValueError(
                f"{where}: prefix_tokens={self.prefix_tokens:,} is longer than the prompt "
                f"({self.prompt_tokens:,} tokens); a shared prefix is part of the prompt"
            )

    def as_dict(self) -> dict[str, float | int]:
        row: dict[str, float | int] = {
            "id": self.id,
            "arrival_s": self.arrival_s,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
        }
        if self.prefix_id is not None:
            row["prefix_id"] = self.prefix_id
            row["prefix_tokens"] = self.prefix_tokens
        if self.follows is not None:
            row["follows"] = self.follows
        return row


@dataclass(frozen=True)
class Lengths:
    """A distribution of token counts: fixed, uniform between two bounds, or log-normal.

    Build one with :meth:`fixed`, :meth:`uniform` or :meth:`lognormal`. Every draw is a whole number of at
    least 1 and at most ``cap`` when one is given (a log-normal has a long right tail).
    """

    kind: str
    a: float
    b: float = 0.0
    cap: int | None = None

    def __post_init__(self) -> None:
        """Checks a Lengths built directly as the class methods check theirs."""
        choice("lengths kind", self.kind, ("fixed", "uniform", "lognormal"))
        if self.kind == "lognormal":
            bounded_number("mean", self.a, MAX_COUNT, 1.0)
            bounded_number("spread", self.b, MAX_COUNT)
        else:
            count("low" if self.kind == "uniform" else "tokens", self.a)
        if self.kind == "uniform" and not self.a <= count("high", self.b):
            raise ValueError(f"uniform lengths need low <= high, got low={self.a} and high={self.b}")
        if self.cap is not None:
            count("cap", self.cap)

    @classmethod
    def fixed(cls, tokens: int) -> Lengths:
        """Every request has exactly ``tokens`` tokens."""
        return cls("fixed", count("tokens", tokens))

    @classmethod
    def uniform(cls, low: int, high: int) -> Lengths:
        """Whole numbers from ``low`` to ``high`` inclusive, each equally likely."""
        lo = count("low", low)
        hi = count("high", high)
        if hi < lo:
            raise ValueError(f"uniform lengths need low <= high, got low={lo} and high={hi}")
        return cls("uniform", lo, hi)

    @classmethod
    def lognormal(cls, mean: float, spread: float, *, cap: int | None = None) -> Lengths:
        """A log-normal with the stated mean and standard deviation (``spread``), both in tokens.

        Token counts of real chat traffic are skewed: most are short, a few very long. The log-normal with
        mean m and standard deviation s has sigma^2 = ln(1 + s^2/m^2) and mu = ln(m) - sigma^2/2.
        Rounding and the floor of 1 token move the mean of the draws slightly.
        """
        m = bounded_number("mean", mean, MAX_COUNT, 1.0)
        s = bounded_number("spread", spread, MAX_COUNT)
        if cap is not None:
            count("cap", cap)
        return cls("lognormal", m, s, cap)

    def describe(self) -> str:
        if self.kind == "fixed":
            return f"{int(self.a)}"
        if self.kind == "uniform":
            return f"uniform {int(self.a)}-{int(self.b)}"
        cap = f", cap {self.cap}" if self.cap else ""
        return f"log-normal mean {self.a:g} sd {self.b:g}{cap}"

    def sample(self, rng: random.Random) -> int:
        """One draw, using ``rng`` (the caller owns the seeded stream)."""
        if self.kind == "fixed":
            return int(self.a)
        if self.kind == "uniform":
            return rng.randint(int(self.a), int(self.b))
        sigma2 = math.log(1.0 + (self.b / self.a) ** 2)
        value = max(1, round(rng.lognormvariate(math.log(self.a) - sigma2 / 2.0, math.sqrt(sigma2))))
        return min(
            value, self.cap if self.cap is not None else MAX_COUNT
        )  # the tail ends at the largest count


def _streams(seed: int) -> tuple[random.Random, random.Random, random.Random]:
    """Three independent seeded streams: arrivals, prompt lengths, output lengths."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be a whole number, got {seed!r}")
    return (
        random.Random(f"{seed}/arrivals"),
        random.Random(f"{seed}/prompts"),
        random.Random(f"{seed}/outputs"),
    )


def _lengths(field: str, value: Lengths | int) -> Lengths:
    if isinstance(value, Lengths):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Lengths.fixed(value)
    raise ValueError(f"{field} must be a Lengths or a whole number of tokens, got {value!r}")


def _count_requests(requests: int) -> int:
    n = count("count", requests)
    if n > MAX_REQUESTS:
        raise ValueError(f"count must be at most {MAX_REQUESTS:,} requests, got {n:,}")
    return n


@dataclass(frozen=True)
class SharedPrefix:
    """System prompts shared by part of a workload, for prefix caching.

    Each request, with probability ``share``, starts its prompt with one of ``prefixes`` system prompts of
    ``tokens`` tokens each (drawn uniformly); its drawn prompt length is the part after the system prompt,
    so its ``prompt_tokens`` is ``tokens`` plus the draw. The draws come from their own seeded stream, so a
    workload with a shared prefix has the same arrivals and output lengths as the same workload without.
    """

    tokens: int
    share: float = 1.0
    prefixes: int = 1

    def __post_init__(self) -> None:
        count("shared prefix tokens", self.tokens)
        bounded_number("prefix share", self.share, 1.0)
        count("prefixes", self.prefixes, maximum=MAX_REQUESTS)

    def apply(self, requests: tuple[Request, ...], seed: int) -> tuple[Request, ...]:
        """``requests`` with this prefix prepended to each chosen one."""
        rng = random.Random(f"{seed}/prefixes")
        out = []
        for r in requests:
            if rng.random() < self.share:
                which = rng.randrange(self.prefixes)
                r = Request(
                    r.id, r.arrival_s, r.prompt_tokens + self.tokens, r.output_tokens, which, self.tokens
                )
            out.append(r)
        return tuple(out)


MAX_THINK_S = 86_400.0  # a day between two turns of one chat: past that it is a new conversation


@dataclass(frozen=True)
class Chats:
    """Multi-turn conversations: each next turn's prompt is the previous turn's prompt, its answer, and the
    user's new message, so a prefix cache can reuse everything but the new message.

    ``turns`` requests make one conversation; its first turn arrives as the workload's arrivals do, and each
    next turn ``think_s`` seconds after the one before (the user reading and typing). It is an open-loop
    trace, as replayed traces are: a turn that arrives before its previous answer is finished finds that
    answer's blocks not yet cached.
    """

    turns: int = 4
    think_s: float = 10.0

    def __post_init__(self) -> None:
        count("turns", self.turns, maximum=MAX_REQUESTS)
        non_negative_number("think_s", self.think_s, MAX_THINK_S)


def _chat_requests(
    firsts: list[float],
    n: int,
    chats: Chats,
    prompts: Lengths,
    outputs: Lengths,
    prompt_rng: random.Random,
    output_rng: random.Random,
    shared: SharedPrefix | None,
    seed: int,
) -> tuple[Request, ...]:
    """``n`` requests in conversations starting at ``firsts``; ids in order of arrival."""
    prefix_rng = random.Random(f"{seed}/prefixes")
    rows: list[tuple[float, int, int, int, int, int | None, int]] = []  # arrival, chat, turn, ...
    left = n
    for c, first in enumerate(firsts):
        turns = min(chats.turns, left)
        left -= turns
        pid: int | None = None
        if shared is not None and prefix_rng.random() < shared.share:
            pid = prefix_rng.randrange(shared.prefixes)
        context = 0  # the previous turn's prompt and answer
        for t in range(turns):
            arrival = first + t * chats.think_s
            if arrival > MAX_ARRIVAL_S:
                raise ValueError(
                    f"turn {t} of conversation {c} would arrive after {MAX_ARRIVAL_S:g} s (about three "
                    "years); give a higher rate, fewer requests or a shorter think_s"
                )
            new = prompts.sample(prompt_rng)
            if t == 0 and pid is not None:
                assert shared is not None
                new += shared.tokens
            out = outputs.sample(output_rng)
            prompt = context + new
            if prompt > MAX_COUNT:
                raise ValueError(
                    f"turn {t} of conversation {c} has a prompt of {prompt:,} tokens, over {MAX_COUNT:,}; "
                    "give fewer turns or shorter prompts and outputs"
                )
            rows.append((arrival, c, t, prompt, out, pid if t == 0 else None, new))
            context = prompt + out
    rows.sort(key=lambda row: (row[0], row[1], row[2]))
    ids = {(row[1], row[2]): i for i, row in enumerate(rows)}
    requests = []
    for i, (arrival, c, t, prompt, out, pid, _) in enumerate(rows):
        requests.append(
            Request(
                i,
                arrival,
                prompt,
                out,
                pid,
                shared.tokens if pid is not None and shared is not None else 0,
                ids[(c, t - 1)] if t else None,
            )
        )
    return tuple(requests)


def _prefixed(requests: tuple[Request, ...], shared: SharedPrefix | None, seed: int) -> tuple[Request, ...]:
    if shared is None:
        return requests
    if not isinstance(shared, SharedPrefix):
        raise ValueError(f"shared_prefix must be a SharedPrefix or None, got {shared!r}")
    return shared.apply(requests, seed)


def poisson_workload(
    rate_per_s: float,
    count: int,
    prompt: Lengths | int = 512,
    output: Lengths | int = 128,
    *,
    seed: int = 0,
    shared_prefix: SharedPrefix | None = None,
    chats: Chats | None = None,
) -> tuple[Request, ...]:
    """``count`` requests arriving as a Poisson process at ``rate_per_s`` (exponential gaps), from t = 0.

    The first request arrives after one gap, not at zero, as a Poisson process does. ``shared_prefix``
    prepends system prompts to a share of them (see :class:`SharedPrefix`). ``chats`` groups them into
    conversations of ``chats.turns`` turns (see :class:`Chats`) whose first turns arrive as a Poisson process
    at ``rate_per_s / turns``, so requests still arrive at ``rate_per_s`` on average once chats overlap; the
    prompt lengths drawn are then each turn's new message, and a system prompt goes before a first turn's.
    """
    if isinstance(rate_per_s, int | float) and not isinstance(rate_per_s, bool) and rate_per_s == 0:
        raise ValueError(
            "rate_per_s is 0: no request would ever arrive; give a rate above 0, or use burst_workload "
            "for requests that all arrive together"
        )
    rate = bounded_number("rate_per_s", rate_per_s, MAX_RATE_PER_S)
    n = _count_requests(count)
    prompts, outputs = _lengths("prompt", prompt), _lengths("output", output)
    arrivals, prompt_rng, output_rng = _streams(seed)
    if chats is not None:
        if not isinstance(chats, Chats):
            raise ValueError(f"chats must be a Chats or None, got {chats!r}")
        if shared_prefix is not None and not isinstance(shared_prefix, SharedPrefix):
            raise ValueError(f"shared_prefix must be a SharedPrefix or None, got {shared_prefix!r}")
        firsts = []
        t = 0.0
        for _ in range(-(-n // chats.turns)):
            t += arrivals.expovariate(rate / chats.turns)
            firsts.append(t)
        return _chat_requests(firsts, n, chats, prompts, outputs, prompt_rng, output_rng, shared_prefix, seed)
    requests = []
    t = 0.0
    for i in range(n):
        t += arrivals.expovariate(rate)
        if t > MAX_ARRIVAL_S:
            raise ValueError(
                f"at rate_per_s={rate:g}, request {i} would arrive after {MAX_ARRIVAL_S:g} s (about three "
                "years); give a higher rate or fewer requests"
            )
        requests.append(Request(i, t, prompts.sample(prompt_rng), outputs.sample(output_rng)))
    return _prefixed(tuple(requests), shared_prefix, seed)


def burst_workload(
    count: int,
    prompt: Lengths | int = 512,
    output: Lengths | int = 128,
    *,
    at_s: float = 0.0,
    seed: int = 0,
    shared_prefix: SharedPrefix | None = None,
) -> tuple[Request, ...]:
    """``count`` requests that all arrive at ``at_s``: the offline, throughput-only case."""
    n = _count_requests(count)
    at_s = arrival_time("at_s", at_s)
    prompts, outputs = _lengths("prompt", prompt), _lengths("output", output)
    _, prompt_rng, output_rng = _streams(seed)
    requests = tuple(
        Request(i, at_s, prompts.sample(prompt_rng), outputs.sample(output_rng)) for i in range(n)
    )
    return _prefixed(requests, shared_prefix, seed)


def trace_workload(
    rows: Iterable[Mapping[str, float | int] | Sequence[float | int]],
) -> tuple[Request, ...]:
    """Requests from an explicit list: each row is ``(arrival_s, prompt_tokens, output_tokens)`` or a mapping
    with those keys. Rows may come in any order; ids follow the order given.
    """
    if isinstance(rows, str | bytes | Mapping) or not isinstance(rows, Iterable):
        raise ValueError(
            f"a trace is a list of rows (arrival_s, prompt_tokens, output_tokens), got {type(rows).__name__}"
        )
    requests = []
    for i, row in enumerate(rows):
        where = f"trace row {i}"
        if i >= MAX_REQUESTS:  # stop reading here: the rest of a huge trace is never looked at
            raise ValueError(
                f"the trace has more than {MAX_REQUESTS:,} rows; at most {MAX_REQUESTS:,} are allowed"
            )
        if isinstance(row, Mapping):
            missing = [k for k in ("arrival_s", "prompt_tokens", "output_tokens") if k not in row]
            if missing:
                raise ValueError(
                    f"{where} lacks {', '.join(missing)}; give arrival_s, prompt_tokens and output_tokens"
                )
            values = (row["arrival_s"], row["prompt_tokens"], row["output_tokens"])
        else:
            if not isinstance(row, list | tuple):
                raise ValueError(
                    f"{where} is {row!r:.60}; give a list [arrival_s, prompt_tokens, output_tokens] or a "
                    "mapping with those keys"
                )
            values = tuple(row)
            if len(values) != 3:
                raise ValueError(
                    f"{where} has {len(values)} values; give (arrival_s, prompt_tokens, output_tokens)"
                )
        requests.append(
            Request(
                i,
                arrival_time(f"{where}: arrival_s", values[0]),
                count(f"{where}: prompt_tokens", values[1]),
                count(f"{where}: output_tokens", values[2]),
            )
        )
    if not requests:
        raise ValueError("the trace has no rows; give at least one (arrival_s, prompt_tokens, output_tokens)")
    return tuple(requests)
