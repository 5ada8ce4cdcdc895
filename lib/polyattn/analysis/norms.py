"""Probe rows, norms against final accuracy and rank correlations."""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd

from ._common import _check_records, _require
from .frames import PERCENT, final_accuracy, run_info

PROBE_ID_COLUMNS = ("experiment", "run", "seed", "activation", "model", "seq_len", "status", "diverged_step")


def probe_frame(records: Iterable[dict], metrics: Optional[Sequence[str]] = None) -> pd.DataFrame:
    """The probe rows of every run (step, layer, head, metric, value) with the run's identifiers."""
    rows = []
    wanted = None if metrics is None else set(metrics)
    for rec in _check_records(records):
        info = run_info(rec)
        ids = {k: info[k] for k in PROBE_ID_COLUMNS}
        for p in rec.get("probes") or []:
            if wanted is None or p["metric"] in wanted:
                rows.append({**ids, "step": p["step"], "layer": p["layer"], "head": p["head"],
                             "metric": p["metric"], "value": p["value"]})
    return pd.DataFrame(rows, columns=list(PROBE_ID_COLUMNS) + ["step", "layer", "head", "metric", "value"])


def early_middle_last(layers: Iterable[int]) -> tuple[int, int, int]:
    """The first, middle and last of the probed layer indices (the paper shows 2, 7 and 12 of 12)."""
    ls = sorted(set(int(x) for x in layers))
    if not ls:
        raise ValueError("early_middle_last: no layers (the records carry no probe rows; "
                         "train with probe_every > 0)")
    return ls[0], ls[len(ls) // 2], ls[-1]


def probe_curves(probes: pd.DataFrame, metrics: Optional[Sequence[str]] = None,
                 layers: Optional[Sequence[int]] = None) -> pd.DataFrame:
    """Per activation, metric, layer and step: the mean over heads of each run, then the mean,
    std, min, max and count over runs (seeds).  (min and max make a band for log axes.)"""
    _require(probes, ["activation", "run", "metric", "layer", "step", "value"], "probe_curves")
    p = probes
    if metrics is not None:
        p = p[p["metric"].isin(list(metrics))]
    if layers is not None:
        p = p[p["layer"].isin(list(layers))]
    per_run = p.groupby(["activation", "metric", "layer", "step", "run"], sort=False)["value"].mean().reset_index()
    g = per_run.groupby(["activation", "metric", "layer", "step"], sort=False)["value"]
    return pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=1), "min": g.min(), "max": g.max(),
                         "n": g.count()}).reset_index()


NORM_METRICS = ("attn_fro_over_sqrt_n", "act_jac_fro", "param_jac_fro")


def norms_vs_accuracy(records: Iterable[dict], metrics: Sequence[str] = NORM_METRICS) -> pd.DataFrame:
    """One row per run: for each norm metric its mean over all probed steps, layers and heads
    (``<metric>_mean``) and its mean over layers and heads at the last probed step
    (``<metric>_final``), next to the run's final test accuracy (percent; NaN if diverged)."""
    records = _check_records(records)
    probes = probe_frame(records, metrics)
    final = final_accuracy(records).set_index("run")
    rows = []
    for run, g in probes.groupby("run", sort=False):
        row = {"run": run, "activation": final.loc[run, "activation"], "seed": final.loc[run, "seed"],
               "status": final.loc[run, "status"], "test_acc": final.loc[run, "test_acc"] * PERCENT}
        last = g["step"].max()
        for m in metrics:
            v = g[g["metric"] == m]
            row[f"{m}_mean"] = float(v["value"].mean()) if len(v) else np.nan
            row[f"{m}_final"] = float(v.loc[v["step"] == v["step"].max(), "value"].mean()) if len(v) else np.nan
        row["last_probe_step"] = last
        rows.append(row)
    cols = ["run", "activation", "seed", "status", "test_acc"] + [f"{m}_{k}" for m in metrics for k in ("mean", "final")]
    return pd.DataFrame(rows, columns=cols + ["last_probe_step"])


def _rank_corr(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import rankdata

    if len(x) < 3:
        return np.nan
    rx, ry = rankdata(x), rankdata(y)
    sx, sy = rx.std(), ry.std()
    if sx == 0 or sy == 0:
        return np.nan
    return float(((rx - rx.mean()) * (ry - ry.mean())).mean() / (sx * sy))


def spearman_ci(x, y, n_boot: int = 2000, seed: int = 0, confidence: float = 0.95, clusters=None) -> dict:
    """Spearman's rank correlation with a percentile bootstrap CI (seeded, so reproducible).

    Pairs with a non-finite value are dropped (``n`` counts those kept).  With ``clusters``
    (e.g. the activation of each run) the bootstrap resamples whole clusters, which respects
    that runs of one activation are not independent of each other.  Returns ``rho``,
    ``ci_low``, ``ci_high``, ``p`` (scipy's asymptotic p-value), ``n`` and ``n_clusters``.
    """
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"spearman_ci: x and y differ in length ({x.shape} vs {y.shape})")
    keep = np.isfinite(x) & np.isfinite(y)
    cl = None if clusters is None else np.asarray(list(clusters), dtype=object)[keep]
    x, y = x[keep], y[keep]
    n = len(x)
    out = {"rho": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan, "n": n,
           "n_clusters": n if cl is None else len(set(cl)), "confidence": confidence}
    if n < 3:
        return out
    rho = _rank_corr(x, y)
    out["rho"] = rho
    if rho == rho:
        with np.errstate(all="ignore"):
            out["p"] = float(stats.spearmanr(x, y).pvalue)
    rng = np.random.default_rng(seed)
    if cl is None:
        groups = [np.array([i]) for i in range(n)]
    else:
        groups = [np.flatnonzero(cl == c) for c in dict.fromkeys(cl)]
    boots = []
    for _ in range(n_boot):
        pick = rng.integers(0, len(groups), len(groups))
        idx = np.concatenate([groups[i] for i in pick])
        boots.append(_rank_corr(x[idx], y[idx]))
    boots = np.asarray(boots)
    boots = boots[np.isfinite(boots)]
    if len(boots):
        a = (1 - confidence) / 2
        out["ci_low"], out["ci_high"] = (float(v) for v in np.quantile(boots, [a, 1 - a]))
    return out


def correlation_table(norms: pd.DataFrame, columns: Sequence[str], y: str = "test_acc", n_boot: int = 2000,
                      seed: int = 0, cluster: Optional[str] = "activation") -> pd.DataFrame:
    """:func:`spearman_ci` of ``y`` against each of ``columns``; bootstrap over runs and, when
    ``cluster`` is given, also over its groups (whole activations)."""
    rows = []
    for col in columns:
        r = spearman_ci(norms[col], norms[y], n_boot=n_boot, seed=seed)
        row = {"norm": col, "rho": r["rho"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "p": r["p"], "n": r["n"]}
        if cluster:
            rc = spearman_ci(norms[col], norms[y], n_boot=n_boot, seed=seed, clusters=norms[cluster])
            row.update({"cluster_ci_low": rc["ci_low"], "cluster_ci_high": rc["ci_high"],
                        "n_clusters": rc["n_clusters"]})
        rows.append(row)
    return pd.DataFrame(rows)


def correlation_verdict(row, label: Optional[str] = None) -> str:
    """A sentence from one row of :func:`correlation_table`."""
    row = dict(row)
    label = label or row["norm"]
    rho, lo, hi, n = row["rho"], row["ci_low"], row["ci_high"], int(row["n"])
    if rho != rho:
        return f"{label}: too few runs with finite values (n = {n}) for a rank correlation"
    ci = row.get("cluster_ci_low", lo), row.get("cluster_ci_high", hi)
    lo2, hi2 = (ci if ci[0] == ci[0] else (lo, hi))
    what = ("resampling whole activations" if "cluster_ci_low" in row and row["cluster_ci_low"] == row["cluster_ci_low"]
            else "resampling runs")
    if lo2 > 0:
        kind = "a positive rank correlation with final accuracy"
    elif hi2 < 0:
        kind = "a negative rank correlation with final accuracy"
    else:
        kind = "no rank correlation with final accuracy that the interval can distinguish from zero"
    return (f"{label} shows {kind}: Spearman rho = {rho:+.2f} over {n} runs "
            f"(95% bootstrap CI {lo2:+.2f} to {hi2:+.2f}, {what})")
