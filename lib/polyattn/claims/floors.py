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

:mod:`polyattn.task_floors` computes them (``python -m polyattn floors``) and writes
:data:`polyattn.results.FLOORS_PATH`; :func:`floor` reads a stored value (the register reads its gates
from there).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from ..results import FLOORS_PATH  # noqa: F401  (read from here too)

NGRAM_ORDERS = (1, 2, 3, 4, 5)
#: The words each n-gram floor is named by in gates and sentences.
NGRAM_NAMES = {1: "the count-based unigram", 2: "the count-based bigram", 3: "the count-based trigram",
               4: "the count-based 4-gram", 5: "the count-based 5-gram"}


def floor(*keys: str, path: Optional[Path] = None) -> float:
    """A stored floor, e.g. ``floor("charlm", "ngram", "3", "bits_per_char")``."""
    path = FLOORS_PATH if path is None else Path(path)
    if not path.exists():
        raise ValueError(f"no floors stored at {path}; compute them with `python -m polyattn floors`")
    v = json.loads(path.read_text())
    for k in keys:
        if not isinstance(v, dict) or k not in v:
            raise ValueError(f"no floor {'/'.join(keys)} in {path}; it holds {sorted(v) if isinstance(v, dict) else v}")
        v = v[k]
    return float(v)


def ngram_floor(order: int) -> float:
    """The count-based ``order``-gram's bits/char on the character LM's test stream (stored)."""
    return floor("charlm", "ngram", str(order), "bits_per_char")
