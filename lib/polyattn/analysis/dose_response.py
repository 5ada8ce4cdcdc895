"""The norm bound as a dose (chapter 03): softmax times k, with its output projection started at 1/k,
against k, and the cube uncapped, capped and with rows of norm 1, in the character language model
with rotary positions (grid ``causal_dose_response``).

Every function accepts any subset of the grid's records (none, some seeds, diverged runs) and says
what it could not compute instead of failing:

    frame = dose_frame(records)          # one row per stored run: arm, k (NaN for the cubes), seed
    by_k(frame)                          # per k: mean paired difference from k = 1, 95% interval, pairs
    cube_contrasts(frame)                # capped and unit rows against the uncapped cube, per seed
    dose_figure(frame, margin)           # None while no pair is stored
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable, Optional

import numpy as np
import pandas as pd

from .stats import t_interval

#: The cube arms by activation spec, in the order the figure shows them.
CUBES = {"poly:p=3": "uncapped", "poly_cap:p=3": "capped at row norm 1", "poly_unit:p=3": "rows of norm 1"}


def _k(spec: str) -> float:
    """k of ``softmax`` (1) and ``softmax:k=<fraction>``; NaN for any other activation."""
    if spec == "softmax":
        return 1.0
    if spec.startswith("softmax:k="):
        return float(Fraction(spec.split("=", 1)[1]))
    return math.nan


def dose_frame(records: Iterable[dict]) -> pd.DataFrame:
    """One row per stored run: ``arm`` (``softmax·k`` or the cube's name), ``k`` (NaN for a cube),
    ``seed``, ``status`` and the final ``test_bpc`` (NaN for a run that diverged)."""
    rows = []
    for r in records:
        cfg = r["config"]
        spec = cfg["activation"]
        k = _k(spec)
        last = (r.get("metrics") or [{}])[-1] if r["status"] == "ok" else {}
        arm = f"softmax·{Fraction(k).limit_denominator()}" if not math.isnan(k) else CUBES.get(spec, spec)
        rows.append({"arm": arm, "k": k, "seed": int(cfg["seed"]), "status": r["status"],
                     "test_bpc": float(last.get("test_bpc", math.nan))})
    return pd.DataFrame(rows, columns=["arm", "k", "seed", "status", "test_bpc"])


def _paired(frame: pd.DataFrame, candidate: pd.Series, baseline: pd.Series) -> pd.Series:
    c = frame[candidate].set_index("seed")["test_bpc"]
    b = frame[baseline].set_index("seed")["test_bpc"]
    return (c - b).dropna().sort_index()


def _summary(d: pd.Series) -> dict:
    values = d.to_numpy(dtype=float)
    mean, low, high = t_interval(values) if len(values) else (math.nan, math.nan, math.nan)
    return {"difference": mean, "ci_low": low, "ci_high": high, "pairs": len(values),
            "per_seed": dict(zip(d.index.astype(int), values))}


def by_k(frame: pd.DataFrame) -> pd.DataFrame:
    """Per k of softmax·k (k = 1 left out): the mean paired difference from k = 1 (same seed), its 95%
    t-interval (NaN below two pairs) and the pairs; k without a pair are left out."""
    soft = frame[frame["k"].notna()]
    out = []
    for k in sorted(set(soft["k"]) - {1.0}):
        d = _paired(soft, soft["k"] == k, soft["k"] == 1.0)
        if len(d):
            out.append({"k": k, "log2_k": math.log2(k), **_summary(d)})
    return pd.DataFrame(out, columns=["k", "log2_k", "difference", "ci_low", "ci_high", "pairs", "per_seed"])


def asymmetry(frame: pd.DataFrame, high: float = 8.0, low: float = 1 / 8) -> dict:
    """softmax·``high`` − softmax·``low`` per seed, with its mean and 95% t-interval: the bound
    hypothesis predicts it positive (lifting the bound hurts, tightening it does not)."""
    return _summary(_paired(frame, frame["k"] == high, frame["k"] == low))


def cube_contrasts(frame: pd.DataFrame) -> pd.DataFrame:
    """The capped cube and the cube with rows of norm 1, each minus the uncapped cube (same seed)."""
    out = []
    for arm in list(CUBES.values())[1:]:
        d = _paired(frame, frame["arm"] == arm, frame["arm"] == CUBES["poly:p=3"])
        if len(d):
            out.append({"arm": arm, **_summary(d)})
    return pd.DataFrame(out, columns=["arm", "difference", "ci_low", "ci_high", "pairs", "per_seed"])


def dose_figure(frame: pd.DataFrame, margin: Optional[float] = None):
    """Left: softmax·k minus softmax against log2 k (mean over seeds with its 95% t-interval, each seed
    a dot, the band ±``margin``); right: the capped cube and the cube with rows of norm 1 against the
    uncapped one.  None while no pair is stored."""
    import matplotlib.pyplot as plt

    from ..plotting import activation_color

    doses, cubes = by_k(frame), cube_contrasts(frame)
    if doses.empty and cubes.empty:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.8, 3.6), gridspec_kw={"width_ratios": (3, 2)})
    for ax in (left, right):
        if margin:
            ax.axhspan(-margin, margin, color="grey", alpha=0.15, lw=0)
        ax.axhline(0, color="black", lw=0.8)
    colour = activation_color("softmax")
    if len(doses):
        err = np.vstack([doses["difference"] - doses["ci_low"], doses["ci_high"] - doses["difference"]])
        left.errorbar(doses["log2_k"], doses["difference"], yerr=None if np.isnan(err).all() else np.nan_to_num(err),
                      marker="o", capsize=3, color=colour, linestyle="none")
        for row in doses.itertuples():
            left.scatter([row.log2_k] * row.pairs, list(row.per_seed.values()), color=colour, s=10, alpha=0.4)
    ticks = [-3, -1, 0, 1, 3]
    left.set_xticks(ticks, ["1/8", "1/2", "1", "2", "8"])
    left.set_xlim(-3.6, 3.6)
    left.set_xlabel("k of softmax·k (bound k√N)")
    left.set_ylabel("minus softmax (bits/char, same seed)")
    left.set_title("softmax·k, output started at 1/k")
    cube_colour = activation_color("poly:p=3")
    if len(cubes):
        xs = np.arange(len(cubes))
        err = np.vstack([cubes["difference"] - cubes["ci_low"], cubes["ci_high"] - cubes["difference"]])
        right.errorbar(xs, cubes["difference"], yerr=None if np.isnan(err).all() else np.nan_to_num(err),
                       marker="o", capsize=3, color=cube_colour, linestyle="none")
        for x, row in zip(xs, cubes.itertuples()):
            right.scatter([x] * row.pairs, list(row.per_seed.values()), color=cube_colour, s=10, alpha=0.4)
        right.set_xticks(xs, [a.replace(" at ", "\nat ").replace(" of ", "\nof ") for a in cubes["arm"]])
        right.set_xlim(-0.6, len(cubes) - 0.4)
    right.set_title("x³/√(i+1), minus uncapped")
    fig.tight_layout()
    return fig
