"""Display tables over seeds: summaries, per-seed values and curves over epochs."""
from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ._common import _by, _pm, _require, _status_text
from .frames import PERCENT

def summary_table(final: pd.DataFrame, by=("activation",), metric: str = "test_acc") -> pd.DataFrame:
    """Mean +- standard deviation (ddof 1) of ``metric`` in percent per group, over the runs that
    did not diverge, with the number of runs, of seeds that trained and of diverged runs.

    Groups keep the order of their first appearance in ``final`` (the grid's order).
    """
    by = _by(by)
    _require(final, by + [metric, "status", "seed"], "summary_table")
    rows = []
    for key, g in final.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        vals = g.loc[g["status"] == "ok", metric].dropna().to_numpy(dtype=float) * PERCENT
        n_div = int((g["status"] == "diverged").sum())
        rows.append({**dict(zip(by, key)), "n_runs": len(g), "n_ok": len(vals), "n_diverged": n_div,
                     "mean": vals.mean() if len(vals) else np.nan,
                     "std": vals.std(ddof=1) if len(vals) > 1 else np.nan,
                     "min": vals.min() if len(vals) else np.nan, "max": vals.max() if len(vals) else np.nan,
                     "status": _status_text(n_div, len(g))})
    return pd.DataFrame(rows, columns=by + ["n_runs", "n_ok", "n_diverged", "mean", "std", "min", "max", "status"])


def format_summary(summary: pd.DataFrame, diffs: Optional[pd.DataFrame] = None, by=("activation",)) -> pd.DataFrame:
    """A display table: 'mean ± std' in percent, seeds, status, and (when given) the paired
    difference from the baseline with its CI and p-value."""
    by = _by(by)
    out = summary[by].copy()
    out["test accuracy (%)"] = [_pm(m, s) for m, s in zip(summary["mean"], summary["std"])]
    out["seeds"] = summary["n_runs"].astype(int)
    out["status"] = summary["status"]
    if diffs is not None and len(diffs):
        key = by if "activation" in by else by + ["activation"]
        d = diffs.set_index(key)
        base = diffs["baseline"].iloc[0]
        level = f"{round(100 * float(diffs['confidence'].iloc[0]))}%"
        diff_col, ci_col, p_col = f"Δ vs {base} (points)", f"{level} CI", "paired t p"
        vals, cis, ps = [], [], []
        for _, r in summary.iterrows():
            k = tuple(r[c] for c in key)
            k = k[0] if len(k) == 1 else k
            if k not in d.index:
                vals.append("baseline" if r["activation"] == base else "")
                cis.append("")
                ps.append("")
                continue
            x = d.loc[k]
            if int(x["n_pairs"]) == 0:
                vals.append("diverged")
                cis.append("")
                ps.append("")
                continue
            vals.append(f"{x['mean_diff']:+.2f}")
            cis.append("" if x["ci_low"] != x["ci_low"] else f"[{x['ci_low']:+.2f}, {x['ci_high']:+.2f}]")
            ps.append("" if x["t_p"] != x["t_p"] else f"{x['t_p']:.2g}")
        out[diff_col], out[ci_col], out[p_col] = vals, cis, ps
    return out.reset_index(drop=True)


def per_seed_table(final: pd.DataFrame, index=("activation",), metric: str = "test_acc") -> pd.DataFrame:
    """Final accuracy in percent, one column per seed; a diverged run reads 'diverged at step k'."""
    index = _by(index)
    _require(final, index + ["seed", "status", metric], "per_seed_table")
    cells = final.copy()
    cells["cell"] = [f"{v * PERCENT:.2f}" if s == "ok" else f"diverged at step {int(ds) if ds == ds and ds is not None else '?'}"
                     for v, s, ds in zip(cells[metric], cells["status"], cells["diverged_step"])]
    cells["seed"] = [f"seed {s}" for s in cells["seed"]]
    table = cells.pivot_table(index=index, columns="seed", values="cell", aggfunc="first", sort=False)
    table.columns.name = None
    return table.reset_index()


def curve_frame(frame: pd.DataFrame, metric: str = "test_acc", by=("activation",)) -> pd.DataFrame:
    """Mean and std over seeds of a per-epoch metric (percent for accuracies), per group and epoch."""
    by = _by(by)
    _require(frame, by + ["epoch", metric], "curve_frame")
    f = frame.dropna(subset=["epoch"])
    scale = PERCENT if metric.endswith("acc") else 1.0
    g = f.groupby(by + ["epoch"], sort=False)[metric]
    out = pd.DataFrame({"mean": g.mean() * scale, "std": g.std(ddof=1) * scale, "n": g.count()}).reset_index()
    return out
