"""Display tables over seeds: summaries, per-seed values and curves over epochs.

Values are shown in the metric's display unit (``Metric.scale`` times the stored value:
accuracy in per cent); ``rank`` and the verdicts follow the metric's direction.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd

from ._common import _by, _pm, _require, _status_text
from .metrics import MetricLike, diff_unit, resolve_metric, value_label
from .verdicts import comparison_verdict


def summary_table(final: pd.DataFrame, by=("activation",), metric: MetricLike = None,
                  rank_within: Optional[Sequence[str]] = None) -> pd.DataFrame:
    """Mean +- standard deviation (ddof 1) of ``metric`` in its display unit per group, over the
    runs that did not diverge, with the number of runs, of seeds that trained and of diverged
    runs, and ``rank`` (1 = best in the metric's direction; groups with no trained run last).

    Groups keep the order of their first appearance in ``final`` (the grid's order).  Ranks are
    taken within ``rank_within`` (default: the ``by`` columns other than ``activation``, so that
    activations are ranked against each other within a cell).
    """
    metric = resolve_metric(metric, final)
    by = _by(by)
    _require(final, by + [metric.name, "status", "seed"], "summary_table")
    rows = []
    for key, g in final.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        vals = g.loc[g["status"] == "ok", metric.name].dropna().to_numpy(dtype=float) * metric.scale
        n_div = int((g["status"] == "diverged").sum())
        rows.append({**dict(zip(by, key)), "n_runs": len(g), "n_ok": len(vals), "n_diverged": n_div,
                     "mean": vals.mean() if len(vals) else np.nan,
                     "std": vals.std(ddof=1) if len(vals) > 1 else np.nan,
                     "min": vals.min() if len(vals) else np.nan, "max": vals.max() if len(vals) else np.nan,
                     "status": _status_text(n_div, len(g))})
    out = pd.DataFrame(rows, columns=by + ["n_runs", "n_ok", "n_diverged", "mean", "std", "min", "max", "status"])
    within = [c for c in by if c != "activation"] if rank_within is None else _by(rank_within)
    score = out["mean"] if metric.higher_is_better else -out["mean"]
    ranks = (score.groupby([out[c] for c in within], sort=False) if within else score.groupby(np.zeros(len(out))))
    out["rank"] = ranks.rank(method="min", ascending=False, na_option="bottom").astype(int) if len(out) else []
    out.attrs["metric"] = metric.as_dict()
    return out


def _diff_cells(x) -> dict:
    """The display cells of one row of a difference table."""
    if int(x["n_pairs"]) == 0:
        return {"diff": "diverged"}

    def p(v):
        return "" if v != v else f"{v:.2g}"

    return {"diff": f"{x['mean_diff']:+.2f}",
            "ci": "" if x["ci_low"] != x["ci_low"] else f"[{x['ci_low']:+.2f}, {x['ci_high']:+.2f}]",
            "p": p(x["t_p"]), "p_holm": p(x.get("p_holm", np.nan)), "tost_p": p(x.get("tost_p", np.nan)),
            "mde": "" if x.get("mde", np.nan) != x.get("mde", np.nan) else f"{x['mde']:.2f}",
            "verdict": comparison_verdict(x, name="candidate").form}


def format_summary(summary: pd.DataFrame, diffs: Optional[pd.DataFrame] = None, by=("activation",),
                   metric: MetricLike = None) -> pd.DataFrame:
    """A display table: 'mean ± std' in the metric's unit, seeds, status, and (when given) the
    paired difference from the baseline with its CI, p-value, Holm-corrected p-value (when the
    table holds more than one comparison), TOST p-value (when a margin was given), minimal
    detectable effect and the verdict's form (see :func:`comparison_verdict`)."""
    metric = resolve_metric(metric if metric is not None else summary.attrs.get("metric"), summary)
    by = _by(by)
    out = summary[by].copy()
    out[value_label(metric)] = [_pm(m, s) for m, s in zip(summary["mean"], summary["std"])]
    out["seeds"] = summary["n_runs"].astype(int)
    out["status"] = summary["status"]
    if diffs is None or not len(diffs):
        return out.reset_index(drop=True)
    key = by if "activation" in by else by + ["activation"]
    d = diffs.set_index(key)
    base = diffs["baseline"].iloc[0]
    level = f"{round(100 * float(diffs['confidence'].iloc[0]))}%"
    margin = float(diffs["margin"].iloc[0]) if "margin" in diffs else np.nan
    columns = {"diff": f"Δ vs {base} ({diff_unit(metric)})", "ci": f"{level} CI", "p": "paired t p"}
    if int(diffs.get("family_size", pd.Series([1])).iloc[0]) > 1:
        columns["p_holm"] = "Holm p"
    if margin == margin:
        columns["tost_p"] = f"TOST p (±{margin:g})"
    if "mde" in diffs and diffs["mde"].notna().any():
        columns["mde"] = "MDE"
    if "t_p" in diffs:
        columns["verdict"] = "verdict"
    cells = []
    for _, r in summary.iterrows():
        k = tuple(r[c] for c in key)
        k = k[0] if len(k) == 1 else k
        if k in d.index:
            cells.append(_diff_cells(d.loc[k]))
        else:
            cells.append({"diff": "baseline" if r["activation"] == base else ""})
    for field, title in columns.items():
        out[title] = [c.get(field, "") for c in cells]
    return out.reset_index(drop=True)


def per_seed_table(final: pd.DataFrame, index=("activation",), metric: MetricLike = None) -> pd.DataFrame:
    """The final metric in its display unit, one column per seed; a diverged run reads
    'diverged at step k'."""
    metric = resolve_metric(metric, final)
    index = _by(index)
    _require(final, index + ["seed", "status", metric.name], "per_seed_table")
    cells = final.copy()
    cells["cell"] = [f"{v * metric.scale:.2f}" if s == "ok"
                     else f"diverged at step {int(ds) if ds == ds and ds is not None else '?'}"
                     for v, s, ds in zip(cells[metric.name], cells["status"], cells["diverged_step"])]
    cells["seed"] = [f"seed {s}" for s in cells["seed"]]
    table = cells.pivot_table(index=index, columns="seed", values="cell", aggfunc="first", sort=False)
    table.columns.name = None
    return table.reset_index()


def curve_frame(frame: pd.DataFrame, metric: MetricLike = None, by=("activation",)) -> pd.DataFrame:
    """Mean and std over seeds of a per-epoch metric in its display unit, per group and epoch."""
    metric = resolve_metric(metric, frame)
    by = _by(by)
    _require(frame, by + ["epoch", metric.name], "curve_frame")
    f = frame.dropna(subset=["epoch"])
    g = f.groupby(by + ["epoch"], sort=False)[metric.name]
    return pd.DataFrame({"mean": g.mean() * metric.scale, "std": g.std(ddof=1) * metric.scale,
                         "n": g.count()}).reset_index()
