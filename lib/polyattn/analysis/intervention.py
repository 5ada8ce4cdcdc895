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

:func:`mechanism_verdict` states what the records support, prediction by prediction, and
:func:`norm_check` measures that the interventions did change the norm.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np
import pandas as pd

from ._common import _check_records
from .frames import final_metrics
from .norms import norms_vs_accuracy
from .stats import ALPHA, paired_difference, t_interval
from .verdicts import comparison_verdict, short

BASELINE = "softmax"
CAPPED = "poly_cap:p=3"
_SCALED = re.compile(r"^softmax:k=([0-9.]+)$")
#: what the records can say of each prediction (:func:`_combine` turns the two into the claim's form)
OUTCOMES = ("holds", "contradicted", "inconclusive", "pending")


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


@dataclass(frozen=True)
class Mechanism:
    """What the records say about the two predictions, and the claim's form."""

    necessity: str       # one of OUTCOMES
    sufficiency: str     # one of OUTCOMES
    form: str            # a form of polyattn.book.verdict_rows.FORMS (or "pending")
    text: str            # the sentences, with the numbers
    summary: str         # one sentence with the key numbers, Markdown with maths


def _combine(necessity: str, sufficiency: str) -> str:
    both = {necessity, sufficiency}
    if "pending" in both:
        return "pending"
    if both == {"holds"}:
        return "holds"
    if "holds" in both and "contradicted" in both:
        return "mixed"
    if "contradicted" in both:
        return "not supported"
    return "inconclusive at this power"


def _power(v, outcome: str) -> str:
    """The detectable effect, said where a prediction is inconclusive."""
    return f", detectable $\\pm${v.mde:.1f} points" if outcome == "inconclusive" and v.mde == v.mde else ""


def mechanism_verdict(final: pd.DataFrame, margin: float, alpha: float = ALPHA, min_pairs: int = 2,
                      scale: str = "") -> Mechanism:
    """The two predictions tested on ``final`` (:func:`intervention_final`) with ``margin`` points.

    Necessity holds when the slope's interval lies below 0 and the largest ``k`` is worse than
    softmax (Holm-corrected); it is contradicted when the largest ``k`` is equivalent to (or
    better than) softmax.  Sufficiency holds when ``poly_cap`` is equivalent to (or better than)
    softmax and is contradicted when it is worse.  Anything else is inconclusive; a prediction
    with fewer than ``min_pairs`` seed pairs is pending.  The form: both hold -> ``holds``; one holds and
    one is contradicted -> ``mixed``; contradicted and not held -> ``not supported``; else
    ``inconclusive at this power`` (``pending`` while records are missing).  ``scale`` (the
    recipe and preset) closes the summary.
    """
    if min_pairs < 2:
        raise ValueError(f"min_pairs={min_pairs}: a paired interval needs at least 2 seed pairs; pass min_pairs >= 2")
    diffs = intervention_differences(final, margin)
    acts = set(final["activation"]) if len(final) else set()
    ks = sorted(k for k in (softmax_factor(a) for a in acts) if k is not None and k > 1)
    kmax = ks[-1] if ks else None
    texts, brief = [], []

    def row_of(act):
        if diffs.empty or act not in set(diffs["activation"]):
            return None
        return diffs[diffs["activation"] == act].iloc[0]

    # necessity
    top = row_of(f"softmax:k={kmax:g}") if kmax else None
    if top is None or int(top["n_pairs"]) < min_pairs:
        necessity = "pending"
        texts.append("necessity (softmax times k): too few paired runs yet")
    else:
        v = comparison_verdict(top, name=f"{kmax:g} x softmax", baseline="softmax", alpha=alpha)
        sl = k_slope(final)
        slope_txt = (f"accuracy changes by {sl['slope']:+.2f} points per doubling of k (95% CI {sl['ci_low']:+.2f} "
                     f"to {sl['ci_high']:+.2f}, {sl['n']} seeds, k = {', '.join(f'{k:g}' for k in sl['ks'])})")
        if v.form in ("equivalent", "better"):
            necessity = "contradicted"
        elif v.form == "worse" and sl["ci_high"] < 0:
            necessity = "holds"
        else:
            necessity = "inconclusive"
        texts.append(f"necessity ({necessity}): {slope_txt}; {v.text}")
        # with k = 1 and one K only, the slope is that one difference over log2 K: say so
        two_ks = (f" (from $k$ = {' and '.join(f'{k:g}' for k in sl['ks'])} alone)" if len(sl["ks"]) == 2 else "")
        brief.append(f"necessity {necessity}: ${kmax:g}\\cdot\\mathrm{{softmax}}$ against softmax {short(v, 2)}, "
                     f"{sl['slope']:+.2f} points per doubling of $k${two_ks}{_power(v, necessity)}")
    # sufficiency
    cap = row_of(CAPPED)
    if cap is None or int(cap["n_pairs"]) < min_pairs:
        sufficiency = "pending"
        texts.append("sufficiency (x^3/sqrt(N) with rows capped at norm 1): too few paired runs yet")
    else:
        v = comparison_verdict(cap, name="capped x^3/sqrt(N)", baseline="softmax", alpha=alpha)
        sufficiency = {"equivalent": "holds", "better": "holds", "worse": "contradicted"}.get(v.form, "inconclusive")
        texts.append(f"sufficiency ({sufficiency}): {v.text}")
        brief.append(f"sufficiency {sufficiency}: $x^3/\\sqrt{{N}}$ with rows capped at norm 1 against softmax "
                     f"{short(v, 2)}, TOST p = {v.tost_p:.2g}{_power(v, sufficiency)}")
    closing = f"margin $\\pm${margin:g} point{'' if margin == 1 else 's'}" + (f"; {scale}" if scale else "")
    summary = "; ".join(brief) + f" ({closing})." if brief else ""
    summary = summary[:1].upper() + summary[1:]
    return Mechanism(necessity, sufficiency, _combine(necessity, sufficiency), "; ".join(texts), summary)


__all__ = ["BASELINE", "CAPPED", "Mechanism", "OUTCOMES", "intervention_differences", "intervention_final",
           "k_slope", "mechanism_verdict", "norm_check", "softmax_factor"]
