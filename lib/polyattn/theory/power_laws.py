"""Power-law fits on log-log axes, with confidence intervals for the exponent."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class PowerLawFit:
    """y ~ prefactor * x^exponent, fitted on log-log axes."""

    exponent: float
    se: float
    ci_lo: float
    ci_hi: float
    prefactor: float
    chi2_red: float
    n_points: int
    level: float = 0.95

    def as_dict(self) -> dict:
        return dict(exponent=self.exponent, se=self.se, ci_lo=self.ci_lo, ci_hi=self.ci_hi,
                    prefactor=self.prefactor, chi2_red=self.chi2_red, n_points=self.n_points)


def fit_power_law(x, y, y_se=None, level: float = 0.95) -> PowerLawFit:
    """Fit log y = log c + k log x by (weighted) least squares; return k with a confidence interval.

    With ``y_se`` (standard errors of y) the points are weighted by 1/se(log y)^2,
    se(log y) = y_se / y, and the covariance is inflated by the reduced chi^2 when it exceeds 1
    (so lack of fit widens the interval); without, ordinary least squares.  The interval uses
    Student's t with (points - 2) degrees of freedom.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"fit_power_law needs 1-d x and y of the same length, got {x.shape} and {y.shape}")
    if len(x) < 3:
        raise ValueError(f"fit_power_law needs at least 3 points for an interval, got {len(x)}")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("fit_power_law needs positive x and y (it fits on log-log axes)")
    lx, ly = np.log(x), np.log(y)
    design = np.column_stack([np.ones_like(lx), lx])
    if y_se is None:
        w = np.ones_like(lx)
    else:
        sl = np.asarray(y_se, dtype=np.float64) / y
        if sl.shape != y.shape or np.any(~np.isfinite(sl)) or np.any(sl <= 0):
            raise ValueError("y_se must be positive and finite, one per point")
        w = 1.0 / sl ** 2
    wd = design * w[:, None]
    cov = np.linalg.inv(design.T @ wd)
    beta = cov @ (wd.T @ ly)
    resid = ly - design @ beta
    dof = len(x) - 2
    chi2_red = float((w * resid ** 2).sum() / dof) if dof > 0 else float("nan")
    if y_se is None:
        cov = cov * chi2_red
    elif chi2_red > 1:
        cov = cov * chi2_red
    se = float(math.sqrt(cov[1, 1]))
    tq = stats.t.ppf(0.5 + level / 2, dof)
    k = float(beta[1])
    return PowerLawFit(k, se, k - tq * se, k + tq * se, float(math.exp(beta[0])),
                       chi2_red if y_se is not None else float("nan"), len(x), level)


def fit_exponents(df: pd.DataFrame, x: str, by: Sequence[str], y: str = "mean", y_se: Optional[str] = "se",
                  level: float = 0.95) -> pd.DataFrame:
    """:func:`fit_power_law` of ``y`` against ``x`` in each group of ``by``: one row per group."""
    rows = []
    for key, sub in df.groupby(list(by)):
        sub = sub.sort_values(x)
        fit = fit_power_law(sub[x], sub[y], sub[y_se] if y_se else None, level)
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), **fit.as_dict()})
    return pd.DataFrame(rows)



def exponent_rows(fits: pd.DataFrame, expected: Optional[str] = "expected") -> list[dict]:
    """:func:`fit_exponents`' rows for readers: the group keys, the exponent with its interval in one
    cell, the expected exponent, the reduced chi-squared and the number of points."""
    keys = [c for c in fits.columns if c not in {"exponent", "se", "ci_lo", "ci_hi", "prefactor", "chi2_red",
                                                 "n_points", "level", expected}]
    rows = []
    for r in fits.to_dict("records"):
        row = {("scaled by 1/√N" if k == "scaled" else k): ("yes" if r[k] is True else "no" if r[k] is False else r[k])
               for k in keys}
        row["exponent [95% CI]"] = f"{r['exponent']:.3f} [{r['ci_lo']:.3f}, {r['ci_hi']:.3f}]".replace("-", "−")
        if expected and expected in r:
            row["expected"] = f"{r[expected]:g}"
        row["χ²/dof"] = f"{r['chi2_red']:.2g}" if r["chi2_red"] == r["chi2_red"] else "n/a"
        row["points"] = int(r["n_points"])
        rows.append(row)
    return rows
