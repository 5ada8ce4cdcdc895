"""The trained critique grids of chapter 09 (:mod:`polyattn.experiments.critiques`).

``critique_powers`` trains x^p/sqrt(N) for p = 1..7 (and the sign-keeping form for even p):

    power_of("poly_odd:p=4")          # (4, True): the power and whether the sign is kept
    power_slope(final)                # accuracy against p within each seed, then over seeds
    gradient_change(curves)           # a probe metric at the first and last probed step, per layer

``critique_qk_controls`` sets two alternatives to the 1/sqrt(N) scale, acting on the query and
key projections only, against x^3/sqrt(N):

    qk_frame(records)                 # one row per run, named by its variant (``variant``)
    qk_differences(frame, margin)     # each variant minus x^3/sqrt(N), paired by seed, Holm
"""
from __future__ import annotations

import re
from typing import Iterable

import numpy as np
import pandas as pd

from ._common import _require
from .frames import final_metrics
from .stats import paired_difference, t_interval

_POWER = re.compile(r"^(poly|poly_odd):p=(\d+)$")


def power_of(spec: str) -> tuple[int, bool]:
    """(p, sign kept) of ``poly:p=P`` or ``poly_odd:p=P`` (the 1/sqrt(N) forms the powers grid trains)."""
    m = _POWER.match(spec)
    if not m:
        raise ValueError(f"power_of: {spec!r} is not one of the powers grid's specs 'poly:p=P' or 'poly_odd:p=P'")
    return int(m.group(2)), m.group(1) == "poly_odd"


def power_slope(final: pd.DataFrame, metric: str = "test_acc", scale: float = 100.0,
                confidence: float = 0.95) -> dict:
    """The least-squares slope of ``metric`` (times ``scale``: points for accuracy) against p over the
    plain powers ``poly:p=P``, within each seed; then the mean over seeds, its t interval and the
    one-sample t-test of slope 0.  A seed with a diverged run, or with fewer than 3 powers, is left out."""
    from scipy import stats

    _require(final, ["activation", "seed", "status", metric], "power_slope")
    slopes = {}
    for seed, g in final.groupby("seed", sort=True):
        g = g[[_POWER.match(a) is not None and not power_of(a)[1] for a in g["activation"]]]
        if len(g) < 3 or (g["status"] != "ok").any():
            continue
        p = np.array([power_of(a)[0] for a in g["activation"]], dtype=float)
        slopes[int(seed)] = float(np.polyfit(p, g[metric].to_numpy(dtype=float) * scale, 1)[0])
    vals = np.array(list(slopes.values()))
    mean, lo, hi = t_interval(vals, confidence) if len(vals) else (np.nan, np.nan, np.nan)
    t_p = float(stats.ttest_1samp(vals, 0.0).pvalue) if len(vals) > 1 and vals.std() > 0 else np.nan
    return {"slope": mean, "ci_low": lo, "ci_high": hi, "n_seeds": len(vals), "t_p": t_p, "per_seed": slopes}


def gradient_change(curves: pd.DataFrame, metric: str = "grad_attn_fro") -> pd.DataFrame:
    """Per activation and layer, from :func:`~polyattn.analysis.norms.probe_curves`: the mean over
    seeds of ``metric`` at the first and at the last probed step, and last / first."""
    _require(curves, ["activation", "metric", "layer", "step", "mean"], "gradient_change")
    c = curves[curves["metric"] == metric]
    if c.empty:
        raise ValueError(f"gradient_change: no probe rows of {metric!r}; the metrics present: "
                         f"{sorted(set(curves['metric']))}")
    rows = []
    for (act, layer), g in c.groupby(["activation", "layer"], sort=False):
        g = g.sort_values("step")
        first, last = float(g["mean"].iloc[0]), float(g["mean"].iloc[-1])
        rows.append({"activation": act, "layer": int(layer), "first_step": int(g["step"].iloc[0]),
                     "last_step": int(g["step"].iloc[-1]), "first": first, "last": last,
                     "ratio": last / first if first else np.nan})
    return pd.DataFrame(rows)


def qk_frame(records: Iterable[dict]) -> pd.DataFrame:
    """:func:`~polyattn.analysis.final_metrics` of the ``critique_qk_controls`` records, with each
    run's variant label (:func:`polyattn.experiments.critiques.qk_label`) in ``variant``, in the
    grid's variant order."""
    from ..experiments.critiques import qk_label, qk_variants

    records = list(records)
    frame = final_metrics(records)
    frame["variant"] = [qk_label(r["config"]) for r in records]
    order = {label: i for i, (label, _, _) in enumerate(qk_variants())}
    frame["_order"] = [order.get(v, len(order)) for v in frame["variant"]]
    out = frame.sort_values(["_order", "seed"], kind="stable").drop(columns="_order").reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    return out


def qk_differences(frame: pd.DataFrame, margin: float, baseline: str = "x^3/sqrt(N)") -> pd.DataFrame:
    """Every variant minus ``baseline`` in test accuracy (points), paired by seed, Holm over the rows,
    TOST against ``margin``: :func:`~polyattn.analysis.paired_difference` over ``variant``."""
    return paired_difference(frame, baseline=baseline, metric="test_acc", margin=margin, key="variant")
