"""ListOps as the Long Range Arena generates it (Tay et al. 2020, after Nangia and Bowman 2018).

An expression is a tree of operators over the digits 0-9, written in prefix form with a
closing bracket, e.g. ``[MAX 2 9 [MIN 4 7 ] 0 ]``; the label is its value (10 classes).

The rules of the published generator:

* operators MIN, MAX, MED (the integer part of the median: ``[MED 1 2 3 4]`` is 2) and SM
  (sum modulo 10); FIRST and LAST exist there but are switched off;
* a tree grows from depth 1: below ``max_depth`` (10) a node is an operator with probability
  ``value_p`` (0.25), and then has ``randint(2, max_args)`` children (``max_args`` 10, both ends
  included); every other node, and every node at ``max_depth``, is a digit;
* the length counts 2 per operator (the operator and its ``]``) and 1 per digit, which is the
  number of tokens here; an expression is kept when ``min_length < length < max_length``
  (500 and 2000, both strict);
* 96,000 / 2,000 / 2,000 distinct expressions (duplicates are dropped through a set).

The published script is unseeded and iterates over a Python set, so its files cannot be
remade; here one seeded ``random.Random`` draws the test split first, then validation, then
training, each expression new to all before it, so the test set does not change when the
training set grows.  A tree that passes ``max_length`` is abandoned as soon as it does
(it would be rejected anyway), which leaves the accepted expressions' distribution unchanged.

Vocabulary (``VOCAB``, 16 ids): 0 padding, 1-10 the digits 0-9, 11 ``[MIN``, 12 ``[MAX``,
13 ``[MED``, 14 ``[SM``, 15 ``]``.
"""
from __future__ import annotations

import random
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

OPERATORS = ("[MIN", "[MAX", "[MED", "[SM")
END = "]"
VOCAB = ("<pad>",) + tuple(str(d) for d in range(10)) + OPERATORS + (END,)
TOKEN_ID = {t: i for i, t in enumerate(VOCAB)}
VOCAB_SIZE = len(VOCAB)
NUM_CLASSES = 10
DEFAULTS = dict(min_length=500, max_length=2000, max_depth=10, max_args=10, value_p=0.25)
SIZES = (96_000, 2_000, 2_000)

_TOKEN_RE = re.compile(r"\[[A-Za-z]+|\]|\d+|\S")


class _TooLong(Exception):
    pass


def tokenize(expr: str | Sequence) -> list[str]:
    """Tokens of an expression given as text (spaces before ``]`` optional), tokens or ids."""
    if isinstance(expr, str):
        tokens = _TOKEN_RE.findall(expr)
    else:
        # anything that is not a string is an id (ints of Python, NumPy or torch alike)
        tokens = [t if isinstance(t, str) else VOCAB[int(t)] for t in expr]
    for t in tokens:
        if t not in TOKEN_ID or t == VOCAB[0]:
            raise ValueError(f"not a ListOps token: {t!r} (tokens are {', '.join(VOCAB[1:])})")
    return tokens


def encode(expr: str | Sequence) -> list[int]:
    return [TOKEN_ID[t] for t in tokenize(expr)]


def decode(ids: Iterable[int]) -> str:
    return " ".join(VOCAB[i] for i in ids if i != 0)


def _apply(op: str, args: list[int]) -> int:
    if op == "[MIN":
        return min(args)
    if op == "[MAX":
        return max(args)
    if op == "[SM":
        return sum(args) % 10
    s = sorted(args)
    mid = len(s) // 2
    # the median of an even count is the mean of the middle pair; its integer part is a floor
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) // 2


def evaluate(expr: str | Sequence) -> int:
    """The value of an expression (text, tokens or ids); ValueError if it is not well formed."""
    stack: list = []
    for t in tokenize(expr):
        if t == END:
            args = []
            while stack and isinstance(stack[-1], int):
                args.append(stack.pop())
            if not stack or not args:
                raise ValueError("']' without an operator and at least one argument")
            stack.append(_apply(stack.pop(), args[::-1]))
        else:
            stack.append(int(t) if t.isdigit() else t)
    if len(stack) != 1 or not isinstance(stack[0], int):
        raise ValueError("not one complete expression")
    return stack[0]


def random_tree(rng: random.Random, max_depth: int = 10, max_args: int = 10, value_p: float = 0.25,
                limit: int | None = None) -> list[str] | None:
    """One tree by the published recursion, as tokens; None once it reaches ``limit`` tokens."""
    out: list[str] = []

    def node(depth: int) -> None:
        # the published test is "value if r > value_p", so an operator when r <= value_p
        if depth < max_depth and rng.random() <= value_p:
            n = rng.randint(2, max_args)
            out.append(rng.choice(OPERATORS))
            for _ in range(n):
                node(depth + 1)
            out.append(END)
        else:
            out.append(str(rng.randrange(10)))
        if limit is not None and len(out) >= limit:
            raise _TooLong

    try:
        node(1)
    except _TooLong:
        return None
    return out


@dataclass
class ListOpsSample:
    """Generated expressions (as id lists) with their labels and what the generator rejected."""
    ids: list[list[int]]
    labels: list[int]
    candidates: int = 0          # trees drawn
    too_short: int = 0
    too_long: int = 0
    duplicates: int = 0
    params: dict = field(default_factory=dict)


def generate(n: int, seed: int = 0, *, min_length: int = 500, max_length: int = 2000, max_depth: int = 10,
             max_args: int = 10, value_p: float = 0.25, rng: random.Random | None = None,
             seen: set | None = None) -> ListOpsSample:
    """``n`` distinct expressions with ``min_length < len < max_length`` tokens.

    ``seen`` (a set of token tuples) is shared across calls to keep splits disjoint."""
    if not 0 <= min_length < max_length - 1:
        raise ValueError(f"need 0 <= min_length < max_length - 1, got {min_length}, {max_length}")
    rng = rng if rng is not None else random.Random(seed)
    seen = seen if seen is not None else set()
    params = dict(min_length=min_length, max_length=max_length, max_depth=max_depth, max_args=max_args, value_p=value_p)
    out = ListOpsSample([], [], params=params)
    while len(out.ids) < n:
        out.candidates += 1
        tree = random_tree(rng, max_depth, max_args, value_p, limit=max_length)
        if tree is None:
            out.too_long += 1
            continue
        if len(tree) <= min_length:
            out.too_short += 1
            continue
        key = tuple(tree)
        if key in seen:
            out.duplicates += 1
            continue
        seen.add(key)
        out.ids.append([TOKEN_ID[t] for t in tree])
        out.labels.append(evaluate(tree))
    return out


def generate_splits(sizes: Sequence[int] = SIZES, seed: int = 0, **params) -> dict[str, ListOpsSample]:
    """Train, validation and test samples, pairwise disjoint; drawn test first (see above)."""
    rng, seen = random.Random(seed), set()
    test = generate(sizes[2], rng=rng, seen=seen, **params)
    val = generate(sizes[1], rng=rng, seen=seen, **params)
    train = generate(sizes[0], rng=rng, seen=seen, **params)
    return {"train": train, "val": val, "test": test}


def statistics_of(sample: ListOpsSample, bins: int = 6) -> dict:
    """Acceptance rate, length distribution (deciles and a histogram of ``bins`` equal bins
    between the bounds) and label balance of a generated sample."""
    lengths = [len(x) for x in sample.ids]
    counts = Counter(sample.labels)
    n = len(lengths)
    qs = statistics.quantiles(lengths, n=10, method="inclusive") if n > 1 else lengths * 9
    lo, hi = sample.params.get("min_length", 0), sample.params.get("max_length", max(lengths, default=0) + 1)
    edges = [round(lo + (hi - lo) * k / bins) for k in range(bins + 1)]
    hist = [sum(a <= v < b for v in lengths) for a, b in zip(edges[:-1], edges[1:])]
    return {
        "n": n,
        "params": dict(sample.params),
        "candidates": sample.candidates,
        "acceptance_rate": n / sample.candidates if sample.candidates else 0.0,
        "rejected_too_short": sample.too_short,
        "rejected_too_long": sample.too_long,
        "rejected_duplicates": sample.duplicates,
        "length": {"min": min(lengths, default=0), "max": max(lengths, default=0),
                   "mean": statistics.fmean(lengths) if n else 0.0,
                   "median": statistics.median(lengths) if n else 0.0,
                   "deciles": [float(q) for q in qs], "bin_edges": edges, "histogram": hist},
        "label_counts": [counts.get(k, 0) for k in range(NUM_CLASSES)],
        "label_fractions": [counts.get(k, 0) / n if n else 0.0 for k in range(NUM_CLASSES)],
        "majority_fraction": max(counts.values()) / n if n else 0.0,
    }


def listops_statistics(n: int = 2000, seed: int = 0, **params) -> dict:
    """:func:`statistics_of` a fresh seeded sample of ``n`` expressions (published rules unless
    ``params`` say otherwise), so a chapter can state them."""
    return statistics_of(generate(n, seed, **{**DEFAULTS, **params}))
