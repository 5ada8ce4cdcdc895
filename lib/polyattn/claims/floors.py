"""The stored floors of each task, as the register reads them: the levels a model without attention
reaches, on the split it trains on (what each one is: :mod:`polyattn.task_floors`, which computes them
with ``python -m polyattn floors`` and writes :data:`polyattn.results.FLOORS_PATH`).

A comparison is informative only when its baseline learned beyond such a floor (its *gate*,
:class:`polyattn.claims.spec.Gate`); :func:`floor` reads a stored value in the metric's display unit.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from ..results import FLOORS_PATH

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
