"""The mechanism by intervention: is bounding ``||A||_F`` what makes softmax train well?

The paper's argument is causal: softmax works *because* ``||softmax(S)||_F <= sqrt(N)``.  A
correlation between norms and accuracy cannot show that; changing the norm and nothing else
can.  Two interventions on the converged tier's recipe (``polyattn.experiments.vit.intervention``)
make two predictions if the paper is right:

* **necessity**: ``k * softmax`` keeps positivity, normalisation (up to the factor) and
  sparsity but lets ``||A||_F`` reach ``k sqrt(N)``; its accuracy should fall as ``k`` grows
  (tested by the per-seed slope of accuracy on ``log2 k``, ``k = 1`` being softmax itself,
  and by ``k = 8`` against softmax);
* **sufficiency**: ``x^3/sqrt(N)`` with each row rescaled to norm at most 1 (``poly_cap``)
  has ``||A||_F <= sqrt(N)`` without any of softmax's three properties; it should be
  equivalent to softmax within the margin.

:func:`intervention_differences` (paired by seed) and :func:`k_slope` (accuracy per doubling of
k) describe the records; the claim register decides the verdicts (``norm_intervention`` and
``intervention_unclipped``, by its one rule); :func:`norm_check` measures that the interventions
did change the norm.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional

import numpy as np
import pandas as pd

from ._common import _check_records
from .frames import final_metrics
from .norms import norms_vs_accuracy
from .stats import paired_difference, t_interval

BASELINE = "softmax"
CAPPED = "poly_cap:p=3"
_SCALED = re.compile(r"^softmax:k=([0-9.]+)$")
def softmax_factor(spec: str) -> Optional[float]:
    """``k`` of ``softmax:k=K`` (1 for ``softmax``), None for any other activation."""
    if spec == BASELINE:
        return 1.0
    m = _SCALED.match(spec)
    return float(m.group(1)) if m else None


def intervention_final(converged: Iterable[dict], intervention: Iterable[dict]) -> pd.DataFrame:
    """One row per run (final metrics): softmax and ``x^3/sqrt(N)`` from the converged tier and
    every run of the intervention grid, which shares the converged tier's recipe."""
    conv = [r for r in _check_records(converged) if r["config"]["activation"] in (BASELINE, "poly:p=3")]
    recs = conv + _check_records(intervention)
    if not recs:
        return pd.DataFrame(columns=["activation", "seed", "status", "test_acc"])
    return final_metrics(recs)


def intervention_differences(final: pd.DataFrame, margin: float) -> pd.DataFrame:
    """Every intervention against softmax, paired by seed, with Holm over these comparisons and
    TOST at ``margin`` (the uncapped ``x^3/sqrt(N)`` is context, not a test of the mechanism)."""
    if final.empty or BASELINE not in set(final["activation"]):
        return pd.DataFrame()
    tested = [a for a in dict.fromkeys(final["activation"]) if a == CAPPED or (softmax_factor(a) or 1) > 1]
    if not tested:
        return pd.DataFrame()
    return paired_difference(final, baseline=BASELINE, margin=margin, compare=tested)


def k_slope(final: pd.DataFrame, metric: str = "test_acc", scale: float = 100.0,
            confidence: float = 0.95) -> dict:
    """The per-seed least-squares slope of ``metric`` (times ``scale``: points) on ``log2 k``
    over softmax (k = 1) and every ``softmax:k=K``, then the t interval over seeds.

    Only seeds with at least two values of k that trained enter (a diverged run has no
    final accuracy); ``n`` counts them.  With two values (softmax and one ``K``) a seed's
    slope is its paired difference divided by ``log2 K``.  Returns ``slope`` (points per doubling of k),
    ``ci_low``, ``ci_high``, ``p`` (one-sample t-test of the slopes against 0), ``n`` and ``ks``.
    """
    from scipy import stats

    f = final.assign(k=final["activation"].map(softmax_factor)).dropna(subset=["k"])
    f = f[np.isfinite(f[metric].astype(float))]
    slopes = []
    for _, g in f.groupby("seed"):
        if g["k"].nunique() >= 2:
            x, y = np.log2(g["k"].to_numpy(float)), scale * g[metric].to_numpy(float)
            slopes.append(float(np.polyfit(x, y, 1)[0]))
    out = {"slope": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan, "n": len(slopes),
           "ks": sorted(set(f["k"]))}
    if slopes:
        out["slope"], out["ci_low"], out["ci_high"] = t_interval(slopes, confidence)
    if len(slopes) >= 2 and np.std(slopes) > 0:
        out["p"] = float(stats.ttest_1samp(slopes, 0.0).pvalue)
    return out


def norm_check(records: Iterable[dict]) -> pd.DataFrame:
    """Per activation: ``||A||_F/sqrt(N)`` at the last probe (mean over layers and heads of a
    run), its mean and largest value over runs, and how many runs were probed: the
    manipulation check (``softmax:k=K`` may exceed 1, ``poly_cap`` may not)."""
    recs = [r for r in _check_records(records) if r.get("probes")]
    cols = ["activation", "runs", "norm_final_mean", "norm_final_max"]
    if not recs:
        return pd.DataFrame(columns=cols)
    nv = norms_vs_accuracy(recs, ["attn_fro_over_sqrt_n"])
    g = nv.groupby("activation", sort=False)["attn_fro_over_sqrt_n_final"]
    return pd.DataFrame({"runs": g.count(), "norm_final_mean": g.mean(),
                         "norm_final_max": g.max()}).reset_index()[cols]


__all__ = ["BASELINE", "CAPPED", "intervention_differences", "intervention_final",
           "k_slope", "norm_check", "softmax_factor"]
