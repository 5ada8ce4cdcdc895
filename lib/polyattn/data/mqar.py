"""Multi-query associative recall (MQAR), the synthetic task of the Zoology benchmark
(Arora, Eyuboglu et al., "Zoology: Measuring and Improving Recall in Efficient Language
Models", ICLR 2024, arXiv:2312.04927; generator rules of HazyResearch/zoology,
``zoology/data/multiquery_ar.py``), written anew with a seeded generator.

One example of length L with K key-value pairs and vocabulary V:

* positions 0 .. 2K-1 hold the pairs ``k_1 v_1 k_2 v_2 ...``; the K keys are distinct,
  drawn from [1, V/2); the K values are distinct, drawn from [V/2, V) (token 0 is never
  a key, so keys and values come from disjoint halves of the vocabulary);
* each key appears once more as a query, at position 2K + 2g for a gap g drawn without
  replacement from {0, .., (L - 2K)/2 - 1} with P(g) proportional to (g + 1)^(a - 1)
  (a = 0.01: most queries come soon after the pairs, a power-law tail far away);
* the label at a query position is the value bound to that key (the model predicts it
  as the next token); every other label is -100, the ignore index of
  ``torch.nn.functional.cross_entropy``;
* all other positions are filler: uniform random tokens from [0, V) as in Zoology
  (``random_non_queries=True``; a filler may coincide with a key or value, which makes
  the task no easier: labels sit only at query positions), or 0 with ``random_fillers=False``.

Zoology needs L even, V > L and 4K <= L.  Its standard mixtures are :data:`TRAIN_MIX`
and :data:`TEST_SETS` (vocabulary 8192).  The same seed gives the same examples.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
import torch

IGNORE_INDEX = -100
VOCAB_SIZE = 8192
POWER_A = 0.01

#: Zoology's training mixture: (sequence length, key-value pairs, examples).
TRAIN_MIX = ((64, 4, 100_000), (128, 8, 20_000), (256, 16, 20_000), (256, 32, 20_000), (256, 64, 20_000))
#: Zoology's test sets: (sequence length, key-value pairs), 1000 examples each.
TEST_SETS = ((64, 4), (64, 8), (64, 16), (128, 32), (256, 64), (512, 128), (1024, 256))
TEST_EXAMPLES = 1000


@dataclass(frozen=True)
class MQARBatch:
    """``inputs`` and ``labels``: int64 ``[examples, seq_len]``; ``keys``/``values``/``gaps``:
    int64 ``[examples, num_kv_pairs]`` (pair i is ``keys[:, i] -> values[:, i]``, queried at
    position ``2 * num_kv_pairs + 2 * gaps[:, i]``)."""

    inputs: torch.Tensor
    labels: torch.Tensor
    keys: torch.Tensor
    values: torch.Tensor
    gaps: torch.Tensor
    vocab_size: int
    num_kv_pairs: int

    @property
    def query_positions(self) -> torch.Tensor:
        return 2 * self.num_kv_pairs + 2 * self.gaps

    def __len__(self) -> int:
        return self.inputs.shape[0]


def _check(num_examples, seq_len, num_kv_pairs, vocab_size, power_a):
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {num_examples}")
    if seq_len % 2:
        raise ValueError(f"seq_len must be even, got {seq_len}")
    if num_kv_pairs < 1 or 4 * num_kv_pairs > seq_len:
        raise ValueError(f"need 1 <= num_kv_pairs and 4 * num_kv_pairs <= seq_len (pairs, then a query slot "
                         f"per pair), got num_kv_pairs={num_kv_pairs}, seq_len={seq_len}")
    if vocab_size <= seq_len:
        raise ValueError(f"vocab_size must exceed seq_len (as in Zoology), got {vocab_size} <= {seq_len}")
    if num_kv_pairs > vocab_size // 2 - 1:
        raise ValueError(f"vocab_size {vocab_size} has only {vocab_size // 2 - 1} key tokens for "
                         f"{num_kv_pairs} pairs")
    if not power_a > 0:
        raise ValueError(f"power_a must be > 0, got {power_a}")


def gap_probabilities(space: int, power_a: float = POWER_A) -> np.ndarray:
    """P(g) for g = 0 .. space-1, proportional to (g + 1)^(a - 1)."""
    p = np.arange(1, space + 1, dtype=np.float64) ** (power_a - 1)
    return p / p.sum()


def _weighted_without_replacement(rng: np.random.Generator, rows: int, log_p: np.ndarray, k: int) -> np.ndarray:
    # Gumbel top-k: the k largest of log p + Gumbel noise, in decreasing order, are a draw
    # without replacement with the law of drawing one at a time proportionally to p.
    scores = log_p + rng.gumbel(size=(rows, len(log_p)))
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1)


def _distinct_uniform(rng: np.random.Generator, rows: int, n: int, k: int) -> np.ndarray:
    """k distinct draws from range(n) per row, uniform over ordered k-tuples."""
    if k * k > n:
        # a tuple of k iid draws repeats a token with probability ~ 1 - exp(-k^2 / 2n):
        # rejection would loop, and Gumbel top-k would need [rows, n] memory
        return np.stack([rng.choice(n, size=k, replace=False) for _ in range(rows)])
    # few repeats expected: redraw, all at once, the rows that repeat a token
    out = rng.integers(0, n, size=(rows, k))
    while True:
        repeats = (np.diff(np.sort(out, axis=1), axis=1) == 0).any(axis=1)
        if not repeats.any():
            return out
        out[repeats] = rng.integers(0, n, size=(int(repeats.sum()), k))


def multiquery_ar(num_examples: int, seq_len: int, num_kv_pairs: int, vocab_size: int = VOCAB_SIZE,
                  seed: int = 0, power_a: float = POWER_A, random_fillers: bool = True) -> MQARBatch:
    """``num_examples`` MQAR sequences (see the module docstring); deterministic in ``seed``."""
    _check(num_examples, seq_len, num_kv_pairs, vocab_size, power_a)
    rng = np.random.default_rng(seed)
    b, kk, half = num_examples, num_kv_pairs, vocab_size // 2
    keys = 1 + _distinct_uniform(rng, b, half - 1, kk)
    values = half + _distinct_uniform(rng, b, vocab_size - half, kk)
    context = 2 * kk
    space = (seq_len - context) // 2
    gaps = _weighted_without_replacement(rng, b, np.log(gap_probabilities(space, power_a)), kk)

    inputs = np.zeros((b, seq_len), dtype=np.int64)
    inputs[:, 0:context:2] = keys
    inputs[:, 1:context:2] = values
    if random_fillers:
        inputs[:, context:] = rng.integers(0, vocab_size, size=(b, seq_len - context))
    positions = context + 2 * gaps
    np.put_along_axis(inputs, positions, keys, axis=1)
    labels = np.full((b, seq_len), IGNORE_INDEX, dtype=np.int64)
    np.put_along_axis(labels, positions, values, axis=1)
    t = torch.from_numpy
    return MQARBatch(t(inputs), t(labels), t(keys), t(values), t(gaps), vocab_size, kk)


def mixture(configs: Iterable[tuple[int, int, int]], vocab_size: int = VOCAB_SIZE, seed: int = 0,
            power_a: float = POWER_A) -> list[MQARBatch]:
    """One batch per (seq_len, num_kv_pairs, num_examples), each with its own seed derived
    from ``seed`` and its position, so adding a config does not change the others."""
    out = []
    for i, (seq_len, pairs, count) in enumerate(configs):
        sub = int(np.random.SeedSequence([seed, i, seq_len, pairs]).generate_state(1)[0])
        out.append(multiquery_ar(count, seq_len, pairs, vocab_size, seed=sub, power_a=power_a))
    return out


def query_accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    """Zoology's metric: the share of query positions (labels != -100) predicted exactly."""
    at = labels != IGNORE_INDEX
    if not at.any():
        raise ValueError("no query position (every label is the ignore index)")
    return (logits.argmax(-1)[at] == labels[at]).float().mean().item()
