"""Paired comparisons over seeds: intervals, tests, equivalence and power.

A seed fixes a run's initialisation and data order, so two activations trained with the same
seed form a pair, and every comparison here works on the same-seed differences
``candidate - baseline`` in the metric's display unit (percentage points for accuracy).  What
each quantity answers:

* the t-interval and the paired t-test: is there a difference, and how large could it be;
* :func:`tost` (two one-sided tests): is the difference inside a margin fixed before looking,
  i.e. can the two be called equivalent (a wide interval around 0 is *not* equivalence);
* :func:`minimal_detectable_effect`: how large a true difference these seeds would have found
  with power 0.8, which says what an inconclusive result still rules out;
* :func:`holm`: p-values corrected for the number of comparisons in one table;
* :func:`pooled_difference`: the same comparison repeated in several cells (model x recipe),
  pooled with cell fixed effects into one estimate with more degrees of freedom.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from .. import specs
from ._common import _by, _require, _status_text
from .metrics import MetricLike, diff_unit, resolve_metric

#: The smallest number of pairs for which a two-sided Wilcoxon signed-rank test can reach
#: p < 0.05 (its smallest exact p-value is 2 / 2^n: 0.25 for n = 3, 0.031 for n = 6).
WILCOXON_MIN_N = 6
ALPHA = 0.05
POWER = 0.8


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


def _check_margin(margin) -> Optional[float]:
    if margin is None:
        return None
    m = float(margin)
    if not m > 0 or not math.isfinite(m):
        raise ValueError(f"the equivalence margin must be a positive number in the metric's unit, got {margin!r}")
    return m


def _tost_p(estimate: float, se: float, df: float, margin: float) -> tuple[float, float]:
    """p-values of the two one-sided tests H0: d <= -margin and H0: d >= +margin."""
    from scipy import stats

    if not (df >= 1 and math.isfinite(estimate) and math.isfinite(se)):
        return np.nan, np.nan
    if se == 0:
        # no spread: the estimate is the difference itself
        return float(estimate <= -margin), float(estimate >= margin)
    p_lower = float(stats.t.sf((estimate + margin) / se, df))
    p_upper = float(stats.t.cdf((estimate - margin) / se, df))
    return p_lower, p_upper


def tost(differences, margin: float, alpha: float = ALPHA) -> dict:
    """Two one-sided t-tests (TOST) that the mean paired difference lies within ``±margin``.

    The margin is in the unit of the differences and must be chosen before seeing them.
    Equivalence is shown when both one-sided tests reject at ``alpha``, i.e. when the
    ``1 - 2 alpha`` t-interval lies inside the margin.  Returns ``estimate``, ``p`` (the larger
    of the two one-sided p-values), ``p_lower``, ``p_upper``, ``equivalent``, ``ci_low`` /
    ``ci_high`` (the ``1 - 2 alpha`` interval), ``n``, ``df``, ``margin`` and ``alpha``.
    """
    if margin is None:
        raise ValueError("tost: give the equivalence margin (in the unit of the differences), chosen before the data")
    margin = _check_margin(margin)
    d = np.asarray(differences, dtype=float)
    d = d[np.isfinite(d)]
    n = len(d)
    est = float(d.mean()) if n else np.nan
    se = float(d.std(ddof=1) / math.sqrt(n)) if n > 1 else np.nan
    p_lo, p_hi = _tost_p(est, se, n - 1, margin)
    _, lo, hi = t_interval(d, 1 - 2 * alpha)
    p = max(p_lo, p_hi) if p_lo == p_lo else np.nan
    return {"estimate": est, "p": p, "p_lower": p_lo, "p_upper": p_hi, "equivalent": bool(p < alpha),
            "ci_low": lo, "ci_high": hi, "n": n, "df": n - 1, "margin": margin, "alpha": alpha}


def minimal_detectable_effect(sd: float, n: int, alpha: float = ALPHA, power: float = POWER,
                              df: Optional[float] = None) -> float:
    """The smallest true mean difference a two-sided paired t-test at ``alpha`` detects with
    probability ``power``, for ``n`` pairs whose differences have standard deviation ``sd``.

    Exact under normality (non-central t with ``df`` degrees of freedom, ``n - 1`` unless
    given, e.g. ``n - k`` after removing ``k`` cell means); the standard error is
    ``sd / sqrt(n)``.  NaN when it cannot be computed (n < 2, no spread estimate).
    """
    from scipy import optimize, stats

    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must lie in (0, 1), got alpha={alpha}, power={power}")
    df = n - 1 if df is None else df
    if n < 2 or df < 1 or not math.isfinite(sd):
        return np.nan
    if sd == 0:
        return 0.0
    se = sd / math.sqrt(n)
    crit = stats.t.ppf(1 - alpha / 2, df)

    def shortfall(delta):
        nc = delta / se
        # scipy's non-central t returns NaN for some negligible lower tails (df = 1): count them as 0
        lower = stats.nct.cdf(-crit, df, nc)
        return stats.nct.sf(crit, df, nc) + (lower if math.isfinite(lower) else 0.0) - power

    hi = se * (crit + 4.0)
    while shortfall(hi) < 0:          # few degrees of freedom need more than the normal guess
        hi *= 2
    return float(optimize.brentq(shortfall, 0.0, hi, xtol=1e-10 * se))


def holm(pvalues) -> np.ndarray:
    """Holm's step-down correction of one family of p-values (NaN entries are not counted).

    The sorted p-values are multiplied by ``m, m - 1, ..., 1`` and made monotone, so the family
    error rate is controlled without assuming independence.
    """
    p = np.asarray(pvalues, dtype=float).copy()
    ok = np.isfinite(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError(f"holm: p-values must lie in [0, 1], got {p[ok][(p[ok] < 0) | (p[ok] > 1)].tolist()}")
    idx = np.flatnonzero(ok)
    order = idx[np.argsort(p[idx], kind="stable")]
    m = len(order)
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.full(p.shape, np.nan)
    out[order] = adjusted
    return out


def _t_summary(estimate: float, se: float, df: float, sd: float, n: int, confidence: float,
               margin: Optional[float], alpha: float, power: float) -> dict:
    """Interval, two-sided t-test, TOST and MDE from an estimate, its standard error and df."""
    from scipy import stats

    out = {"se": se, "df": df, "ci_low": np.nan, "ci_high": np.nan, "t_p": np.nan, "tost_p": np.nan,
           "equivalent": False, "mde": minimal_detectable_effect(sd, n, alpha, power, df) if n > 1 else np.nan}
    if not (df >= 1 and math.isfinite(se)):
        return out
    half = float(stats.t.ppf(0.5 + confidence / 2, df) * se)
    out["ci_low"], out["ci_high"] = estimate - half, estimate + half
    if se > 0:
        out["t_p"] = float(2 * stats.t.sf(abs(estimate) / se, df))
    if margin is not None:
        out["tost_p"] = max(_tost_p(estimate, se, df, margin))
        out["equivalent"] = bool(out["tost_p"] < alpha)
    return out


def _pairs(base: pd.DataFrame, other: pd.DataFrame, metric) -> tuple[np.ndarray, list, int, int]:
    """Same-seed differences in display units, the seeds shared, and the diverged counts."""
    seeds = sorted(set(other.index) & set(base.index))
    a = other.loc[seeds, metric.name].to_numpy(dtype=float) * metric.scale
    b = base.loc[seeds, metric.name].to_numpy(dtype=float) * metric.scale
    both = np.isfinite(a) & np.isfinite(b)
    n_div = int((other.loc[seeds, "status"] == "diverged").sum())
    n_bdiv = int((base.loc[seeds, "status"] == "diverged").sum())
    return a[both] - b[both], seeds, n_div, n_bdiv


def _setup(final, baseline, by, metric, compare, what, key="activation"):
    """The metric, the baseline (a canonical spec when ``key`` is the activation, else the
    label as given), ``by`` as a list and the compared values of ``key`` (None: all)."""
    metric = resolve_metric(metric, final)
    spec = key == "activation"
    canon = specs.canonical(baseline) if spec else baseline
    by = _by(by)
    _require(final, by + [key, "seed", "status", metric.name], what)
    if not (final[key] == canon).any():
        raise ValueError(f"{what}: the baseline {canon!r} has no runs; {key}s present: "
                         f"{list(dict.fromkeys(final[key]))}")
    wanted = None if compare is None else [specs.canonical(a) if spec else a for a in compare]
    return metric, canon, by, wanted


def _metric_columns(metric, canon, confidence, margin, alpha, power) -> dict:
    return {"baseline": canon, "metric": metric.name, "unit": diff_unit(metric),
            "higher_is_better": metric.higher_is_better, "margin": np.nan if margin is None else margin,
            "confidence": confidence, "alpha": alpha, "power": power}


def _with_holm(rows: list[dict], cols: list[str], metric) -> pd.DataFrame:
    out = pd.DataFrame(rows, columns=cols)
    out["p_holm"] = holm(out["t_p"].to_numpy(dtype=float)) if len(out) else []
    out["family_size"] = int(out["t_p"].notna().sum())
    out.attrs["metric"] = metric.as_dict()
    return out


SUMMARY_COLUMNS = ["mean_diff", "sd_diff", "se", "df", "ci_low", "ci_high", "t_p", "tost_p", "equivalent", "mde"]
TAIL_COLUMNS = ["baseline", "metric", "unit", "higher_is_better", "margin", "confidence", "alpha", "power"]


def paired_difference(final: pd.DataFrame, baseline: str = "softmax", by=None, metric: MetricLike = None,
                      compare: Optional[Sequence[str]] = None, confidence: float = 0.95,
                      margin: Optional[float] = None, alpha: float = ALPHA, power: float = POWER,
                      key: str = "activation") -> pd.DataFrame:
    """Per activation (and group ``by``), the same-seed differences from ``baseline``.

    ``key``: the column that names what is compared (default the activation spec; e.g.
    ``"variant"`` where one spec runs under two readings of N): the table then has that column
    too, and ``activation`` holds its value so that verdicts name it.

    ``metric``: a :class:`~polyattn.metric_specs.Metric` (or its name; default the frame's primary
    metric, accuracy for image records).  Differences are ``candidate - baseline`` in the
    metric's display unit (``unit``: points for accuracy); ``higher_is_better`` says which sign
    is better.  Columns: ``n_pairs`` (seeds where both trained), ``n_diverged`` /
    ``n_baseline_diverged``, ``mean_diff``, ``sd_diff``, ``se``, ``df``, the t-based
    ``ci_low``/``ci_high``, ``t_p`` (paired t-test; NaN for fewer than 2 pairs or zero spread),
    ``p_holm`` (Holm over the rows of this table, ``family_size`` of them), ``tost_p`` and
    ``equivalent`` (TOST against ``±margin`` when a margin is given), ``mde`` (the minimal
    detectable effect at ``alpha`` and ``power`` from the observed spread), ``wilcoxon_p``
    (only for n >= :data:`WILCOXON_MIN_N`; fewer pairs cannot reach 0.05), ``low_power``
    (n < WILCOXON_MIN_N) and ``status``.
    """
    from scipy import stats

    metric, canon, by, wanted = _setup(final, baseline, by, metric, compare, "paired_difference", key)
    margin = _check_margin(margin)
    keyed = [] if key == "activation" else [key]      # the extra column naming the compared values
    rows = []
    groups = final.groupby(by, sort=False) if by else [((), final)]
    for group, g in groups:
        group = group if isinstance(group, tuple) else (group,)
        base = g[g[key] == canon].set_index("seed")
        if base.empty:
            continue
        for act in dict.fromkeys(g[key]):
            if act == canon or (wanted is not None and act not in wanted):
                continue
            d, seeds, n_div, n_bdiv = _pairs(base, g[g[key] == act].set_index("seed"), metric)
            n = len(d)
            mean = float(d.mean()) if n else np.nan
            sd = float(d.std(ddof=1)) if n > 1 else np.nan
            summ = _t_summary(mean, sd / math.sqrt(n) if n > 1 else np.nan, n - 1, sd, n, confidence, margin,
                              alpha, power)
            w_p = float(stats.wilcoxon(d).pvalue) if n >= WILCOXON_MIN_N and np.any(d != 0) else np.nan
            rows.append({**dict(zip(by, group)), **{k: act for k in keyed}, "activation": act,
                         "n_seeds": len(seeds), "n_pairs": n,
                         "n_diverged": n_div, "n_baseline_diverged": n_bdiv, "mean_diff": mean, "sd_diff": sd,
                         **summ, "wilcoxon_p": w_p, "low_power": n < WILCOXON_MIN_N,
                         "status": _status_text(n_div, len(seeds)),
                         **_metric_columns(metric, canon, confidence, margin, alpha, power)})
    cols = (by + keyed + ["activation", "n_seeds", "n_pairs", "n_diverged", "n_baseline_diverged"] + SUMMARY_COLUMNS
            + ["wilcoxon_p", "low_power", "status"] + TAIL_COLUMNS)
    return _with_holm(rows, cols, metric)


def pooled_difference(final: pd.DataFrame, baseline: str = "softmax", cells=("model", "augment"),
                      metric: MetricLike = None, compare: Optional[Sequence[str]] = None, confidence: float = 0.95,
                      margin: Optional[float] = None, alpha: float = ALPHA, power: float = POWER) -> pd.DataFrame:
    """The same comparison repeated in several cells, pooled with cell fixed effects.

    Within each cell (the columns ``cells``, e.g. model x recipe) runs are paired by seed.  The
    model is ``d[c, s] = tau_c + e[c, s]``: every cell may have its own difference ``tau_c``,
    and the pooled estimate is their average weighted by pairs (the mean of all same-seed
    differences).  Its standard error comes from the residuals around the cell means,
    ``sd_diff = sqrt(RSS / (n - k))`` with ``df = n - k`` for n pairs in k cells, which is the
    OLS of the differences on cell dummies.  The answer is about these cells, not a population
    of cells.  ``heterogeneity_p`` (one-way F-test on the differences) says whether the cells
    disagree, in which case one pooled number hides opposite effects.

    One row per compared activation, with the columns of :func:`paired_difference` (``p_holm``
    over the rows of this table) plus ``n_cells`` and ``heterogeneity_p``.
    """
    from scipy import stats

    cells = _by(cells)
    if not cells:
        raise ValueError("pooled_difference: name the columns that define a cell, e.g. cells=('model', 'augment')")
    metric, canon, cells, wanted = _setup(final, baseline, cells, metric, compare, "pooled_difference")
    margin = _check_margin(margin)
    acts = [a for a in dict.fromkeys(final["activation"])
            if a != canon and (wanted is None or a in wanted)]
    rows = []
    for act in acts:
        diffs, n_div, n_seeds = [], 0, 0
        for _, g in final.groupby(cells, sort=False):
            d, seeds, nd, _ = _pairs(g[g["activation"] == canon].set_index("seed"),
                                     g[g["activation"] == act].set_index("seed"), metric)
            n_div, n_seeds = n_div + nd, n_seeds + len(seeds)
            if len(d):
                diffs.append(d)
        n, k = sum(len(d) for d in diffs), len(diffs)
        mean = float(np.concatenate(diffs).mean()) if n else np.nan
        rss = sum(float(((d - d.mean()) ** 2).sum()) for d in diffs)
        df = n - k
        sd = math.sqrt(rss / df) if df > 0 else np.nan
        summ = _t_summary(mean, sd / math.sqrt(n) if df > 0 else np.nan, df, sd, n, confidence, margin,
                          alpha, power)
        het_p = np.nan
        if k > 1 and df > 0 and sd > 0:
            between = sum(len(d) * (d.mean() - mean) ** 2 for d in diffs) / (k - 1)
            het_p = float(stats.f.sf(between / sd ** 2, k - 1, df))
        rows.append({"activation": act, "n_cells": k, "n_seeds": n_seeds, "n_pairs": n, "n_diverged": n_div,
                     "mean_diff": mean, "sd_diff": sd, **summ, "heterogeneity_p": het_p,
                     "status": _status_text(n_div, n_seeds),
                     **_metric_columns(metric, canon, confidence, margin, alpha, power)})
    cols = (["activation", "n_cells", "n_seeds", "n_pairs", "n_diverged"] + SUMMARY_COLUMNS
            + ["heterogeneity_p", "status"] + TAIL_COLUMNS)
    return _with_holm(rows, cols, metric)


def binomial_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a rate from ``k`` events in ``n`` trials: the
    rates these trials cannot exclude.  0 failures in 5 seeds leave failure rates up to 52%."""
    from scipy import stats

    if not (0 <= k <= n) or n < 1:
        raise ValueError(f"binomial_interval needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
    a = 1 - confidence
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a proportion ``k`` of ``n``; NaN for n = 0."""
    from scipy import stats

    if n == 0:
        return np.nan, np.nan
    a = 1 - confidence
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi
