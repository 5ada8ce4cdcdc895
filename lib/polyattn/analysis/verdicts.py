"""Verdict sentences built from the numbers of a comparison.

:func:`comparison_verdict` turns one row of :func:`~polyattn.analysis.paired_difference` or
:func:`~polyattn.analysis.pooled_difference` into a :class:`Verdict` whose form is the
comparison's result by the book's one rule (:func:`polyattn.analysis.results.comparison_result`,
the rule the claim register applies), so that a description table and the register read the
same comparison alike:

* ``equivalent``: the TOST against the margin stated up front rejects (p < alpha);
* ``better`` / ``worse``: the (Holm-corrected, in a family) paired test rejects no difference
  and the 95% interval lies beyond the margin;
* ``better, size unclear`` / ``worse, size unclear``: a detectable difference, not equivalent
  either: its 95% interval crosses the margin's edge, so its size against the margin is unclear;
* ``inconclusive``: neither; the sentence gives the minimal detectable effect, the size of a
  difference these seeds would have found;
* ``not comparable``: no pair of runs trained (divergence).

"Better" follows the metric's direction (lower bits per character is better).  A row without a
margin has no "size unclear": a detectable difference is ``better`` or ``worse``.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np
import pandas as pd

from ..display import typographic
from .metrics import MetricLike, diff_unit, resolve_metric
from .results import comparison_result
from .stats import ALPHA, POWER

FORMS = ("equivalent", "better", "worse", "better, size unclear", "worse, size unclear", "inconclusive",
         "not comparable")
#: How each form reads in the book's verdict vocabulary (:data:`polyattn.book.verdict_rows.FORMS`);
#: a comparison whose runs diverged says nothing about the scale it was run at.
BOOK_FORMS = {"equivalent": "equivalent within the margin", "better": "better", "worse": "worse",
              "better, size unclear": "better, size unclear",
              "worse, size unclear": "worse, size unclear",
              "inconclusive": "inconclusive at this power", "not comparable": "inconclusive at this scale"}


@dataclass(frozen=True)
class Verdict:
    """A comparison's verdict: its ``form`` (one of :data:`FORMS`), the numbers it rests on
    (``estimate`` = candidate - baseline in ``unit``; ``ci``; ``p`` the paired t-test, ``p_holm``
    its Holm correction; ``tost_p`` against ``margin``; ``mde``; ``n`` pairs) and ``text``."""

    form: str
    name: str
    baseline: str
    estimate: float
    ci: tuple
    p: float
    p_holm: float
    tost_p: float
    margin: float
    mde: float
    n: int
    unit: str
    text: str

    def __str__(self) -> str:
        return self.text

    def as_dict(self) -> dict:
        return asdict(self)


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _units(x: float, unit: str) -> str:
    return "point" if unit == "points" and abs(x) == 1 else unit


def _row(row, name, baseline, metric):
    index_name = getattr(row, "name", None)
    row = dict(row)
    if "activation" not in row and isinstance(index_name, str):   # a row of a frame indexed by activation
        row["activation"] = index_name
    if "higher_is_better" in row and metric is None:
        higher = bool(row["higher_is_better"])
        unit = row.get("unit") or "points"
    else:
        m = resolve_metric(metric if metric is not None else row.get("metric"))
        higher, unit = m.higher_is_better, diff_unit(m)
    return row, name or row["activation"], baseline or row["baseline"], higher, unit


def _divergence_text(row, name, baseline, n_seeds) -> str:
    extra = ""
    if row.get("n_diverged"):
        extra = f"; {name} diverged in {int(row['n_diverged'])} of {n_seeds} seeds"
    if row.get("n_baseline_diverged"):
        extra += f"; {baseline} diverged in {int(row['n_baseline_diverged'])} of {n_seeds} seeds"
    return extra


def comparison_verdict(row, name: Optional[str] = None, baseline: Optional[str] = None,
                       metric: MetricLike = None, alpha: float = ALPHA) -> Verdict:
    """The :class:`Verdict` of one row of :func:`paired_difference` or :func:`pooled_difference`.

    The form is the comparison's result by the book's one rule
    (:func:`~polyattn.analysis.results.comparison_result`): no pairs -> ``not comparable``; TOST
    p < alpha (when the row carries a margin) -> ``equivalent``; the paired test (Holm-corrected in
    a family of more than one comparison) below alpha -> ``better`` or ``worse`` in the metric's
    direction when the 95% interval lies beyond the margin, ``..., size unclear`` when it
    crosses the margin's edge; otherwise ``inconclusive``, with the minimal detectable effect at power
    ``row["power"]``.
    """
    row, name, baseline, higher, unit = _row(row, name, baseline, metric)
    n = int(row["n_pairs"])
    n_seeds = int(row.get("n_seeds", n))
    est = float(row["mean_diff"]) if n else np.nan
    lo, hi = float(row.get("ci_low", np.nan)), float(row.get("ci_high", np.nan))
    p, p_holm = float(row.get("t_p", np.nan)), float(row.get("p_holm", np.nan))
    tost_p, margin = float(row.get("tost_p", np.nan)), float(row.get("margin", np.nan))
    mde = float(row.get("mde", np.nan))
    family = int(row.get("family_size", 1) or 1)
    level = f"{round(100 * float(row.get('confidence', 0.95)))}%"
    power = float(row.get("power", POWER))
    extra = _divergence_text(row, name, baseline, n_seeds)
    cells = f" in {int(row['n_cells'])} cells" if _finite(row.get("n_cells")) else ""
    het = row.get("heterogeneity_p")
    if _finite(het):
        # a pooled number can hide cells whose differences point in opposite directions
        extra += (f"; the cells disagree (F-test p = {het:.2g}), so the pooled difference averages unlike effects"
                  if het < alpha else f"; the cells do not disagree detectably (F-test p = {het:.2g})")
    n_txt = f"n = {n} seed pairs{cells}" if cells else f"n = {n} seeds"

    def make(form, text, extra=extra):
        return Verdict(form, name, baseline, est, (lo, hi), p, p_holm, tost_p, margin, mde, n, unit,
                       typographic(text + extra))

    if n == 0:
        why = (f"{name} diverged in {int(row['n_diverged'])} of {n_seeds} seeds" if row.get("n_diverged")
               else f"{name} and {baseline} share no seed that trained")
        return make("not comparable", f"{why}, so it cannot be compared with {baseline}", extra="")
    if not _finite(lo):
        return make("inconclusive", f"{name} against {baseline}: inconclusive, {est:+.2f} {unit} on "
                                    f"{n} pair(s){cells} without an interval (too few pairs to estimate the spread)")
    ci_txt = f"{level} CI {lo:+.2f} to {hi:+.2f} {unit}"
    test = "t-test with cell effects" if cells else "paired t-test"
    p_txt = f", {test} p = {p:.2g}" if _finite(p) else ""
    holm_txt = f", Holm-corrected over {family} comparisons p = {p_holm:.2g}" if family > 1 and _finite(p_holm) else ""
    direction = "" if higher else ", lower is better"
    margin_txt = f"±{margin:g} {_units(margin, unit)}" if _finite(margin) else ""
    excludes = lo > 0 or hi < 0
    holm = p_holm if family > 1 and _finite(p_holm) else p
    if not _finite(holm):           # no test stored with the row: its interval alone says whether 0 is excluded
        holm = 0.0 if excludes else math.nan
    result = comparison_result(n=n, mean=est, ci_low=lo, ci_high=hi, holm_p=holm,
                               equivalent=_finite(tost_p) and tost_p < alpha, alpha=alpha,
                               margin=margin if _finite(margin) else 0.0, higher_is_better=higher)
    if result == "equivalent":
        note = ("; the interval excludes 0, so the difference is real but smaller than the margin" if excludes
                else "")
        level_eq = f"{round(100 * (1 - 2 * alpha))}%"       # TOST at alpha: that interval inside the margin
        return make("equivalent", f"{name} is equivalent to {baseline} within {margin_txt} (TOST p = {tost_p:.2g}, "
                                  f"so its {level_eq} interval lies inside the margin): "
                                  f"difference {est:+.2f} {unit}{direction} ({ci_txt}, {n_txt}){note}")
    if result != "inconclusive":
        word = result.split(",")[0]
        within = (f"; its interval reaches inside the margin of {margin_txt}, so the difference may be smaller "
                  f"than the margin" if result.endswith("size unclear") else "")
        return make(result, f"{name} is {word} than {baseline} by {abs(est):.2f} {unit} "
                            f"(difference {est:+.2f} {unit}{direction}; {ci_txt}, {n_txt}{p_txt}{holm_txt}){within}")
    text = (f"{name} against {baseline} is inconclusive at this power: difference {est:+.2f} {unit}{direction} "
            f"({ci_txt}, {n_txt}{p_txt}{holm_txt})")
    if excludes:
        text += f"; the interval excludes 0 but the Holm-corrected p does not reach {alpha:g}"
    if _finite(mde):
        text += (f"; these seeds could have detected a difference of ±{mde:.2f} {_units(mde, unit)} "
                 f"(paired t, alpha {alpha:g}, power {power:g})")
    if margin_txt:
        tp = f" (TOST p = {tost_p:.2g})" if _finite(tost_p) else ""
        text += f"; equivalence within {margin_txt} is not shown{tp}"
    return make("inconclusive", text)


def short(v, digits: int = 3) -> str:
    """A verdict's number in a few words: estimate, 95% CI, pairs, Holm p when corrected."""
    lo, hi = v.ci
    if not v.n:
        return "not comparable (diverged)"
    if lo != lo:
        return f"{v.estimate:+.{digits}f} {v.unit} ({v.n} pair(s), no interval)"
    holm_txt = f", Holm p = {v.p_holm:.2g}" if v.p_holm == v.p_holm and v.p_holm != v.p else ""
    return f"{v.estimate:+.{digits}f} {v.unit} (95% CI {lo:+.{digits}f} to {hi:+.{digits}f}, {v.n} pairs{holm_txt})"


def verdict_frame(diffs: pd.DataFrame, names: Optional[dict] = None, baseline: Optional[str] = None,
                  alpha: float = ALPHA) -> pd.DataFrame:
    """``diffs`` with the columns ``verdict`` (the form) and ``verdict_text``, one per row;
    ``names`` maps activations to the names the sentences use."""
    names = names or {}
    vs = [comparison_verdict(r, name=names.get(r["activation"]), baseline=baseline, alpha=alpha)
          for _, r in diffs.iterrows()]
    out = diffs.copy()
    out["verdict"] = [v.form for v in vs]
    out["verdict_text"] = [v.text for v in vs]
    return out


