"""The floors of each task: the levels a model without attention reaches, on the split it trains on.

A comparison is informative only when its baseline learned beyond such a floor (its *gate*,
:class:`polyattn.claims.spec.Gate`).  The floors, each in the metric's display unit:

* character LM (King James Bible, the book split of :mod:`polyattn.data.charlm`): count-based
  n-gram models, n = 1 to 5, counts fitted on the training stream with add-k smoothing (k chosen
  from :data:`ADD_K` on the validation stream), bits/char on the whole test stream;
* classification: chance and the majority class of the test labels (Fashion-MNIST's ten
  balanced classes; each shortened LRA task's majority class);
* the marked garment (:mod:`polyattn.data.marked`): chance, the majority class of the test labels,
  and the garment-set floor: naming the most frequent class of a test scene's four garments, the
  best a model can do that sees which garments are there but not which one is marked;
* MQAR: guessing one of the value tokens, and the copy plateau: copying *a* value of the
  context scores 1/K at a query with K pairs, pooled over the test sets' queries;
* PDEs: log10 of the relative error (rMAE) of predicting zero everywhere (0 by definition) and
  of predicting the solution's mean over the test grid.

``python -m polyattn floors`` computes them and writes :data:`polyattn.results.FLOORS_PATH`;
:mod:`polyattn.claims.floors` reads a stored value (the register reads its gates from there).
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from .claims.constants import FASHION_MNIST_CHANCE, LRA_CHANCE, MQAR_VOCAB, mqar_value_tokens
from .claims.floors import NGRAM_ORDERS
from .data.bible import books as bible_books
from .data.charlm import build_corpus
from .data.fashion_mnist import load_fashion_mnist
from .data.marked import DEFAULT_SCENES, SCENE_SEED, garment_set_floor, marked_scenes
from .data.pde import get_pde, rmae
from .experiments.mqar import BOOK_TESTS
from .results import FLOORS_PATH

#: The add-k constants tried for each n-gram order (the one with the lowest validation bits/char is kept).
ADD_K = (1.0, 0.1, 0.01, 0.001)


def _context_codes(ids: np.ndarray, order: int, vocab: int) -> np.ndarray:
    """For each position i >= order - 1, the preceding ``order - 1`` ids as one integer."""
    n = len(ids) - (order - 1)
    code = np.zeros(n, dtype=np.int64)
    for j in range(order - 1):
        code = code * vocab + ids[j:j + n].astype(np.int64)
    return code


def ngram_bits_per_char(train: Sequence[int], test: Sequence[int], order: int, vocab: int, k: float) -> float:
    """Bits/char on ``test`` of a count-based ``order``-gram model fitted on ``train`` with add-k
    smoothing over a ``vocab``-symbol alphabet: p(c | h) = (n(h, c) + k) / (n(h) + k V).  Each test
    character is predicted from the ``order - 1`` characters before it (the first few, which
    have fewer, are left out)."""
    if order < 1 or k <= 0 or vocab < 2:
        raise ValueError(f"ngram_bits_per_char needs order >= 1, k > 0 and vocab >= 2, got {order}, {k}, {vocab}")
    tr, te = np.asarray(train, dtype=np.int64), np.asarray(test, dtype=np.int64)
    if len(te) < order or len(tr) < order:
        raise ValueError(f"a {order}-gram needs streams of at least {order} characters")
    if max(int(tr.max()), int(te.max())) >= vocab:
        raise ValueError(f"an id is outside the vocabulary of {vocab}")
    h_tr = _context_codes(tr, order, vocab)
    joint_tr = h_tr * vocab + tr[order - 1:]
    h_te = _context_codes(te, order, vocab)
    joint_te = h_te * vocab + te[order - 1:]

    def counts(keys_sorted, counts_sorted, query):
        idx = np.searchsorted(keys_sorted, query)
        idx_c = np.minimum(idx, len(keys_sorted) - 1)
        hit = keys_sorted[idx_c] == query
        return np.where(hit, counts_sorted[idx_c], 0)

    jk, jc = np.unique(joint_tr, return_counts=True)
    hk, hc = np.unique(h_tr, return_counts=True)
    p = (counts(jk, jc, joint_te) + k) / (counts(hk, hc, h_te) + k * vocab)
    return float(-np.log2(p).mean())


def charlm_floors(books=None, orders: Sequence[int] = NGRAM_ORDERS, add_k: Sequence[float] = ADD_K) -> dict:
    """The count-based n-gram floors of the character LM on the book split (``books``: the mapping
    the task reads; default the King James Bible)."""
    if books is None:
        books = bible_books()
    corpus = build_corpus(books)
    v = len(corpus.vocab)
    train, val, test = (corpus.stream(s).numpy() for s in ("train", "validation", "test"))
    out = {}
    for n in orders:
        k = min(add_k, key=lambda kk: ngram_bits_per_char(train, val, n, v, kk))
        out[str(n)] = {"bits_per_char": ngram_bits_per_char(train, test, n, v, k), "k": k}
    return {"ngram": out, "vocab": v, "split": "counts on the training stream, k on the validation stream, "
                                              "bits/char on the whole test stream"}


def mqar_floors(test_sets: Sequence[tuple], value_tokens: int) -> dict:
    """Guessing a value token, and the copy plateau pooled over the test sets' queries (``test_sets``:
    (length, K) pairs with the same number of examples each: K queries of which 1/K are right)."""
    queries = sum(k for _, k in test_sets)
    return {"guess": 100.0 / value_tokens, "copy_plateau": 100.0 * len(test_sets) / queries}


def marked_floors() -> dict:
    """Chance, the majority class and the garment-set floor (%) on the marked-garment test scenes (the
    default number, which the book preset uses)."""
    _, _, images, labels = load_fashion_mnist()
    _, y, classes, _ = marked_scenes(images, labels, DEFAULT_SCENES[1], SCENE_SEED + 1)
    return {"chance": 10.0, "majority": 100.0 * int(y.bincount().max()) / len(y),
            "garment_set": garment_set_floor(classes)}


def pde_floors(spec: str, test_grid: tuple = (101, 101)) -> dict:
    """log10 rMAE of the zero and the mean predictors of one PDE on its test grid."""
    problem = get_pde(spec)
    grid = problem.test_grid(*test_grid)
    u = problem.solution(grid.x, grid.t).double().flatten()
    return {"zero": math.log10(rmae(u, 0 * u)), "mean": math.log10(rmae(u, 0 * u + u.mean()))}


def compute_floors(charlm: bool = True) -> dict:
    """Every task's floors (``charlm=False`` leaves out the n-gram models, which need the corpus)."""
    out = {"fashion_mnist": {"chance": FASHION_MNIST_CHANCE, "majority": FASHION_MNIST_CHANCE},
           "lra": {t: {"majority": v} for t, v in LRA_CHANCE.items()},
           "mqar": mqar_floors(BOOK_TESTS, mqar_value_tokens(MQAR_VOCAB)),
           "pde": {s: pde_floors(s) for s in ("convection:beta=30", "reaction", "wave")},
           "fashion_marked": marked_floors()}
    if charlm:
        out["charlm"] = charlm_floors()
    return out


def write_floors(path: Optional[Path] = None, charlm: bool = True) -> dict:
    path = FLOORS_PATH if path is None else Path(path)
    floors = compute_floors(charlm)
    path.write_text(json.dumps(floors, indent=1, sort_keys=True) + "\n")
    return floors


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m polyattn floors", description=__doc__.split("\n")[0])
    parser.add_argument("--no-charlm", action="store_true", help="leave out the n-gram floors (no corpus needed)")
    parser.add_argument("--out", type=Path, default=None, help=f"where to write them (default {FLOORS_PATH})")
    args = parser.parse_args(argv)
    floors = write_floors(args.out, charlm=not args.no_charlm)
    print(json.dumps(floors, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
