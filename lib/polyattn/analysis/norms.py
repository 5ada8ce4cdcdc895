"""Probe rows, norms against final accuracy and rank correlations.

Whether norms predict accuracy is two questions: between activations (do activations whose
runs have larger norms end better?) and within an activation (among the seeds of one
activation, does the run with the larger norm end better?).  :func:`correlation_table` gives
both, plus the run-level correlation with a bootstrap over whole activations.
"""
from __future__ import annotations

import math
from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd

from ._common import _check_records, _require
from .frames import final_metrics, run_info
from .metrics import MetricLike, resolve_metric

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


def norms_vs_accuracy(records: Iterable[dict], metrics: Sequence[str] = NORM_METRICS,
                      target: MetricLike = None) -> pd.DataFrame:
    """One row per run: for each norm metric its mean over all probed steps, layers and heads
    (``<metric>_mean``) and its mean over layers and heads at the last probed step
    (``<metric>_final``), next to the run's final ``target`` metric (default the records'
    primary metric, test accuracy for image records) in its display unit (NaN if diverged)."""
    records = _check_records(records)
    probes = probe_frame(records, metrics)
    final = final_metrics(records)
    target = resolve_metric(target, final)
    final = final.set_index("run")
    rows = []
    for run, g in probes.groupby("run", sort=False):
        row = {"run": run, "activation": final.loc[run, "activation"], "seed": final.loc[run, "seed"],
               "status": final.loc[run, "status"], target.name: final.loc[run, target.name] * target.scale}
        last = g["step"].max()
        for m in metrics:
            v = g[g["metric"] == m]
            row[f"{m}_mean"] = float(v["value"].mean()) if len(v) else np.nan
            row[f"{m}_final"] = float(v.loc[v["step"] == v["step"].max(), "value"].mean()) if len(v) else np.nan
        row["last_probe_step"] = last
        rows.append(row)
    cols = ["run", "activation", "seed", "status", target.name] + [f"{m}_{k}" for m in metrics
                                                                    for k in ("mean", "final")]
    out = pd.DataFrame(rows, columns=cols + ["last_probe_step"])
    out.attrs["metric"] = target.as_dict()
    return out


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
    """Spearman's rank correlation over runs with a percentile bootstrap CI (seeded, so reproducible).

    This is the run-level view: do runs with larger x end with larger y, whatever makes them
    differ (mostly the activation, when runs of several activations are pooled).  Pairs with a
    non-finite value are dropped (``n`` counts those kept).  With ``clusters`` (e.g. the
    activation of each run) the bootstrap resamples whole clusters, which respects that runs of
    one activation are not independent of each other: the interval then says how much the
    correlation depends on which activations happen to be in the set.  Returns ``rho``,
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


def _centred_ranks(x: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """Ranks within each group minus the group's mean rank, concatenated over the groups."""
    from scipy.stats import rankdata

    return np.concatenate([rankdata(x[g]) - (len(g) + 1) / 2 for g in groups]) if groups else np.zeros(0)


def _pooled_corr(cx: np.ndarray, cy: np.ndarray) -> float:
    den = math.sqrt(float((cx ** 2).sum() * (cy ** 2).sum()))
    return float((cx * cy).sum() / den) if den > 0 else np.nan


def within_spearman(x, y, groups, n_boot: int = 2000, n_perm: int = 2000, seed: int = 0,
                    confidence: float = 0.95) -> dict:
    """Rank correlation of x and y *within* groups (e.g. among the seeds of one activation).

    Ranks are taken inside each group and centred on the group's mean rank, so every
    difference between groups (one activation's norms and accuracy against another's) is
    removed; the statistic is the correlation of the pooled centred ranks.  It answers: among
    runs of the same activation, does a run with a larger x end with a larger y?  A
    between-activation pattern (:func:`spearman_ci` over runs) can exist without any
    within-activation one, and the reverse.

    Groups with fewer than two runs carry no within-group information and are dropped.  ``p``
    is a permutation p-value (y shuffled within groups, ``n_perm`` draws); the CI resamples
    runs within each group (stratified bootstrap).  Returns ``rho``, ``ci_low``, ``ci_high``,
    ``p``, ``n`` (runs used) and ``n_groups``.
    """
    from scipy.stats import rankdata

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    labels = np.asarray(list(groups), dtype=object)
    if not (x.shape == y.shape == labels.shape):
        raise ValueError(f"within_spearman: x, y and groups differ in length ({x.shape}, {y.shape}, {labels.shape})")
    keep = np.isfinite(x) & np.isfinite(y)
    x, y, labels = x[keep], y[keep], labels[keep]
    idx = [np.flatnonzero(labels == g) for g in dict.fromkeys(labels)]
    idx = [g for g in idx if len(g) >= 2]
    n = int(sum(len(g) for g in idx))
    out = {"rho": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan, "n": n, "n_groups": len(idx),
           "confidence": confidence}
    if n < 3:
        return out
    cx, cy = _centred_ranks(x, idx), _centred_ranks(y, idx)
    rho = _pooled_corr(cx, cy)
    out["rho"] = rho
    if rho != rho:
        return out
    rng = np.random.default_rng(seed)
    bounds = np.cumsum([0] + [len(g) for g in idx])
    # shuffling y within a group permutes its centred ranks within that group
    perm = np.tile(cy, (n_perm, 1))
    for a, b in zip(bounds[:-1], bounds[1:]):
        perm[:, a:b] = rng.permuted(perm[:, a:b], axis=1)
    den = math.sqrt(float((cx ** 2).sum() * (cy ** 2).sum()))
    null = perm @ cx / den
    out["p"] = float((1 + np.sum(np.abs(null) >= abs(rho) - 1e-12)) / (1 + n_perm))
    if n_boot:
        bx, by = [], []
        for g in idx:
            pick = g[rng.integers(0, len(g), (n_boot, len(g)))]
            rx, ry = rankdata(x[pick], axis=1), rankdata(y[pick], axis=1)
            bx.append(rx - rx.mean(1, keepdims=True))
            by.append(ry - ry.mean(1, keepdims=True))
        bx, by = np.concatenate(bx, 1), np.concatenate(by, 1)
        with np.errstate(all="ignore"):
            boots = (bx * by).sum(1) / np.sqrt((bx ** 2).sum(1) * (by ** 2).sum(1))
        boots = boots[np.isfinite(boots)]
        if len(boots):
            a = (1 - confidence) / 2
            out["ci_low"], out["ci_high"] = (float(v) for v in np.quantile(boots, [a, 1 - a]))
    return out


def correlation_table(norms: pd.DataFrame, columns: Sequence[str], y: Optional[str] = None, n_boot: int = 2000,
                      seed: int = 0, cluster: Optional[str] = "activation",
                      within: Optional[str] = "activation") -> pd.DataFrame:
    """Three views of the association of each of ``columns`` with ``y`` (default the frame's
    target metric, e.g. ``test_acc`` from :func:`norms_vs_accuracy`):

    * run level (``rho``, ``ci_low``/``ci_high`` bootstrap over runs, ``p``): :func:`spearman_ci`;
    * the same rho with a bootstrap over whole ``cluster`` groups (``cluster_ci_low``/``high``,
      ``n_clusters``): how much it depends on which activations are in the set;
    * within ``within`` groups (``within_rho``, ``within_ci_low``/``high``, ``within_p``,
      ``n_within_groups``): :func:`within_spearman`, the association among seeds of one
      activation, with every between-activation difference removed.
    """
    y = y or (norms.attrs.get("metric") or {}).get("name", "test_acc")
    _require(norms, list(columns) + [y] + [c for c in (cluster, within) if c], "correlation_table")
    rows = []
    for col in columns:
        r = spearman_ci(norms[col], norms[y], n_boot=n_boot, seed=seed)
        row = {"norm": col, "y": y, "rho": r["rho"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "p": r["p"],
               "n": r["n"]}
        if cluster:
            rc = spearman_ci(norms[col], norms[y], n_boot=n_boot, seed=seed, clusters=norms[cluster])
            row.update({"cluster_ci_low": rc["ci_low"], "cluster_ci_high": rc["ci_high"],
                        "n_clusters": rc["n_clusters"]})
        if within:
            rw = within_spearman(norms[col], norms[y], norms[within], n_boot=n_boot, n_perm=n_boot, seed=seed)
            row.update({"within_rho": rw["rho"], "within_ci_low": rw["ci_low"], "within_ci_high": rw["ci_high"],
                        "within_p": rw["p"], "n_within": rw["n"], "n_within_groups": rw["n_groups"]})
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs = dict(norms.attrs)
    return out


def _sign_of(lo: float, hi: float) -> int:
    return 1 if lo > 0 else (-1 if hi < 0 else 0)


