"""Paired comparisons over seeds: intervals, tests and their power."""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from .. import activations
from ._common import _by, _require, _status_text
from .frames import PERCENT

#: The smallest number of pairs for which a two-sided Wilcoxon signed-rank test can reach
#: p < 0.05 (its smallest exact p-value is 2 / 2^n: 0.25 for n = 3, 0.031 for n = 6).
WILCOXON_MIN_N = 6


def t_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the t-based confidence interval of the mean (NaN bounds when n < 2)."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return np.nan, np.nan, np.nan
    m = float(x.mean())
    if len(x) < 2:
        return m, np.nan, np.nan
    half = float(stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return m, m - half, m + half


def paired_difference(final: pd.DataFrame, baseline: str = "softmax", by=None, metric: str = "test_acc",
                      compare: Optional[Sequence[str]] = None, confidence: float = 0.95) -> pd.DataFrame:
    """Per activation (and group ``by``), the same-seed differences from ``baseline`` in points.

    Columns: ``n_pairs`` (seeds where both trained), ``n_diverged`` / ``n_baseline_diverged``
    (seeds lost to divergence), ``mean_diff``, ``sd_diff``, the t-based ``ci_low``/``ci_high``,
    ``t_p`` (paired t-test, ``scipy.stats.ttest_rel``; NaN for fewer than 2 pairs or zero
    spread), ``wilcoxon_p`` (only for n >= :data:`WILCOXON_MIN_N`; with fewer pairs it cannot
    reach 0.05 and is NaN), ``low_power`` (n < WILCOXON_MIN_N) and ``status``.
    """
    from scipy import stats

    canon = activations.canonical(baseline)
    by = _by(by)
    _require(final, by + ["activation", "seed", "status", metric], "paired_difference")
    if not (final["activation"] == canon).any():
        raise ValueError(f"paired_difference: the baseline {canon!r} has no runs; activations present: "
                         f"{list(dict.fromkeys(final['activation']))}")
    wanted = None if compare is None else [activations.canonical(a) for a in compare]
    rows = []
    groups = final.groupby(by, sort=False) if by else [((), final)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        base = g[g["activation"] == canon].set_index("seed")
        for act in dict.fromkeys(g["activation"]):
            if act == canon or (wanted is not None and act not in wanted):
                continue
            other = g[g["activation"] == act].set_index("seed")
            seeds = sorted(set(other.index) & set(base.index))
            a = other.loc[seeds, metric].to_numpy(dtype=float) * PERCENT
            b = base.loc[seeds, metric].to_numpy(dtype=float) * PERCENT
            both = np.isfinite(a) & np.isfinite(b)
            d = a[both] - b[both]
            n = len(d)
            mean, lo, hi = t_interval(d, confidence)
            sd = float(d.std(ddof=1)) if n > 1 else np.nan
            t_p = np.nan
            if n > 1 and sd > 0:
                t_p = float(stats.ttest_rel(a[both], b[both]).pvalue)
            w_p = np.nan
            if n >= WILCOXON_MIN_N and np.any(d != 0):
                w_p = float(stats.wilcoxon(d).pvalue)
            n_div = int((other.loc[seeds, "status"] == "diverged").sum())
            n_bdiv = int((base.loc[seeds, "status"] == "diverged").sum())
            rows.append({**dict(zip(by, key)), "activation": act, "baseline": canon, "n_seeds": len(seeds),
                         "n_pairs": n, "n_diverged": n_div, "n_baseline_diverged": n_bdiv, "mean_diff": mean,
                         "sd_diff": sd, "ci_low": lo, "ci_high": hi, "t_p": t_p, "wilcoxon_p": w_p,
                         "low_power": n < WILCOXON_MIN_N, "status": _status_text(n_div, len(seeds)),
                         "confidence": confidence})
    cols = by + ["activation", "baseline", "n_seeds", "n_pairs", "n_diverged", "n_baseline_diverged", "mean_diff",
                 "sd_diff", "ci_low", "ci_high", "t_p", "wilcoxon_p", "low_power", "status", "confidence"]
    return pd.DataFrame(rows, columns=cols)
