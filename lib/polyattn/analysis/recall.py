"""Multi-query associative recall (chapter 07): accuracy per variant and test set, read against
the two levels a model passes on its way to recall.

With K key-value pairs and a vocabulary of V tokens (values from the upper half):

* **guessing** a value: 2 / V (a value drawn uniformly from the V / 2 value tokens);
* the **copy plateau**: 1 / K (a value copied from the K values of the context, without
  matching the queried key); models that learn to read the context reach it first;
* **recall**: towards 100%, once the queried key is matched.

    levels(config)                # [(set name, L, K, guess, plateau)] of a config's test sets
    recall_table(final, config)   # per variant and test set: mean [95% t-interval] and its level

A variant whose seeds fall on both sides of the copy plateau (some learned recall, some did not)
has no level: a mean and t-interval over a bimodal outcome describe no seed (an interval of
[-32%, 182%] around 75% would read as "at guessing").  Its level is :data:`SPLIT`, and it is read
per seed: how many learned recall, and the range of the seeds.
"""
from __future__ import annotations

import pandas as pd

from ..grid_constants import MQAR_PLATEAU_BAND
from ..labels import MQAR_DEFAULTS, mqar_set_names
from .stats import t_interval

#: The copy plateau's band: 1/K divided or multiplied by this factor.
PLATEAU_BAND = MQAR_PLATEAU_BAND
#: What a test set's interval says, in the order of the levels above.
LEVELS = ("at guessing", "above guessing, below the copy plateau", "at the copy plateau", "above the copy plateau")
#: The level of a variant whose seeds fall on both sides of the copy plateau, judged per seed.
SPLIT = "split across the copy plateau"


def levels(config) -> list[tuple[str, int, int, float, float]]:
    """(name, length, pairs, guessing, copy plateau) per test set of an MQAR ``config`` (a TrainConfig
    or a record's config dict), its options completed by the task's defaults."""
    options = config.get("options") if isinstance(config, dict) else config.options
    o = {**MQAR_DEFAULTS, **(options or {})}
    v, sets = int(o["vocab_size"]), [(int(L), int(K)) for L, K in o["test_sets"]]
    return [(name, L, K, 2.0 / v, 1.0 / K) for name, (L, K) in zip(mqar_set_names(sets), sets)]


def level_of(low: float, high: float, guess: float, plateau: float) -> str:
    """Where a 95% interval [low, high] of recall accuracy lies among the levels of :data:`LEVELS`.
    Guessing is a point: an interval that reaches down to it is *at* it.  The copy plateau is a
    band, 1/K divided or multiplied by :data:`PLATEAU_BAND` (a model that copies a value without
    matching the key gets 1/K only in the limit): an interval overlapping it is *at* it."""
    if low <= guess:                # an interval wholly below guessing reads as guessing too
        return LEVELS[0]
    if high < plateau / PLATEAU_BAND:
        return LEVELS[1]
    if low <= plateau * PLATEAU_BAND:
        return LEVELS[2]
    return LEVELS[3]


def recall_table(final: pd.DataFrame, config) -> pd.DataFrame:
    """One row per variant (``activation`` holds the label) and test set: mean accuracy over seeds
    and its 95% t-interval (fractions), the seeds' range, how many seeds are above the copy plateau
    (each read as a point), the guessing and copy-plateau levels, and the level: :func:`level_of`
    of the interval, or :data:`SPLIT` when some seeds are above the plateau and some are not."""
    rows = []
    for variant, g in final.groupby("activation", sort=False):
        for name, L, K, guess, plateau in levels(config):
            vals = g[f"acc_{name}"].astype(float)
            mean, lo, hi = t_interval(vals)
            lo_, hi_ = (mean, mean) if lo != lo else (lo, hi)
            seen = vals.dropna()
            above = int(sum(level_of(a, a, guess, plateau) == LEVELS[3] for a in seen))
            level = ("diverged" if mean != mean else SPLIT if 0 < above < len(seen)
                     else level_of(lo_, hi_, guess, plateau))
            rows.append({"variant": variant, "test_set": name, "length": L, "pairs": K, "mean": mean, "ci_low": lo,
                         "ci_high": hi, "seed_min": float(seen.min()) if len(seen) else float("nan"),
                         "seed_max": float(seen.max()) if len(seen) else float("nan"), "above": above,
                         "n": len(seen), "guess": guess, "plateau": plateau, "level": level})
    return pd.DataFrame(rows)


def seeds_above_plateau(final: pd.DataFrame, config) -> dict[str, list[tuple[int, int, int, float]]]:
    """Per variant (``activation`` holds the label, as in :func:`recall_table`), per test set:
    (length, seeds above the copy plateau, seeds, best accuracy), each seed's accuracy read as a
    point by :func:`level_of`.  A run above the plateau has learned recall."""
    out: dict[str, list[tuple[int, int, int, float]]] = {}
    for variant, g in final.groupby("activation", sort=False):
        for name, L, _, guess, plateau in levels(config):
            accs = g[f"acc_{name}"].astype(float)
            k = sum(level_of(a, a, guess, plateau) == LEVELS[3] for a in accs)
            out.setdefault(variant, []).append((L, int(k), len(accs), float(accs.max())))
    return out
