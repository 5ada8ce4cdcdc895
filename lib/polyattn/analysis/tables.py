"""Display tables over seeds: summaries, per-seed values and curves over epochs, and the rows
of the chapters' tables for people (one dict per row, cells as text).

Values are shown in the metric's display unit (``Metric.scale`` times the stored value:
accuracy in per cent); ``rank`` and the verdicts follow the metric's direction.  Numbers in
cells for people are written by :mod:`polyattn.numbers` (a true minus sign, "n/a" where a number
is missing; "diverged" where every run diverged).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd

from .. import numbers
from ..display import label, name, typographic
from ._common import _by, _require, _status_text
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


def value_cell(mean, sd, n_ok: int, n_diverged: int) -> str:
    """A group's 'mean ± sd' (:func:`polyattn.numbers.plus_minus`); "diverged" when no run gave a
    value and some diverged, "n/a" when none gave one for another reason."""
    status = numbers.DIVERGED if n_ok == 0 and n_diverged > 0 else numbers.MISSING
    return numbers.plus_minus(mean, sd, missing=status)


def _diff_cells(x) -> dict:
    """The display cells of one row of a difference table ("n/a" for a missing number)."""
    if int(x["n_pairs"]) == 0:
        return {"diff": numbers.DIVERGED}

    def p(v):
        return numbers.number(v, ".2g")

    return {"diff": numbers.number(x["mean_diff"], "+.2f"),
            "ci": numbers.interval(x["ci_low"], x["ci_high"], "+.2f"),
            "p": p(x["t_p"]), "p_holm": p(x.get("p_holm", np.nan)), "tost_p": p(x.get("tost_p", np.nan)),
            "mde": numbers.number(x.get("mde", np.nan), ".2f"),
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
    out[value_label(metric)] = [value_cell(m, s, n_ok, n_div) for m, s, n_ok, n_div
                                in zip(summary["mean"], summary["std"], summary["n_ok"], summary["n_diverged"])]
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
    cells["cell"] = [numbers.number(v * metric.scale, ".2f") if s == "ok"
                     else f"diverged at step {int(ds) if ds == ds and ds is not None else '?'}"
                     for v, s, ds in zip(cells[metric.name], cells["status"], cells["diverged_step"])]
    cells["seed"] = [f"seed {s}" for s in cells["seed"]]
    table = cells.pivot_table(index=index, columns="seed", values="cell", aggfunc="first", sort=False)
    table.columns.name = None
    return table.reset_index()


# --- rows for people --------------------------------------------------------------------------

#: A number for a table cell (:func:`polyattn.numbers.number`; "n/a" when missing).
number_cell = numbers.number
#: An interval alone, "[−0.49, +0.01]" (:func:`polyattn.numbers.interval`).
bracket_cell = numbers.interval
#: An estimate and its interval in one cell, "−0.24 [−0.49, +0.01]" (:func:`polyattn.numbers.estimate`).
interval_cell = numbers.estimate


def correlation_rows(corr: pd.DataFrame, names: dict) -> list[dict]:
    """:func:`~polyattn.analysis.correlation_table` for people, one row per norm (``names`` maps a
    column to what a reader calls it): the runs and activations, Spearman's ρ over runs with its
    bootstrap interval, the interval when whole activations are resampled, and ρ within an
    activation with its permutation p."""
    return [{"norm": names.get(r["norm"], r["norm"]),
             "runs (activations)": f"{int(r['n'])} ({int(r['n_within_groups'])})",
             "ρ [95% CI]": interval_cell(r["rho"], r["ci_low"], r["ci_high"]),
             "p": number_cell(r["p"], ".2g"),
             "CI, activations resampled": bracket_cell(r["cluster_ci_low"], r["cluster_ci_high"]),
             "ρ within activations [95% CI]": interval_cell(r["within_rho"], r["within_ci_low"], r["within_ci_high"]),
             "p within (permutation)": number_cell(r["within_p"], ".2g")}
            for _, r in corr.iterrows()]


def verdict_cell(form: str, mde: str = "") -> str:
    """A verdict's form, with the minimal detectable effect when the seeds cannot decide."""
    return f"{form} (MDE {mde})" if form == "inconclusive" and mde and mde != numbers.MISSING else form


def recipe_label(model: str, augment: str) -> str:
    """A Table 2 cell as a reader sees it: "mini, DeiT-style aug." or "micro, no aug."."""
    return f"{model}, {'DeiT-style aug.' if augment == 'deit' else 'no aug.'}"


def registered_cell(row: dict) -> str:
    """The difference of a registered claim's comparison (a row of
    :func:`polyattn.claims.report.comparison_rows`) in a chapter's table, marked ‡."""
    return row["Difference [95% CI]"].removesuffix(" points") + " ‡"


def summary_rows(summary: pd.DataFrame, diffs: Optional[pd.DataFrame] = None,
                 claims: Optional[dict] = None) -> list[dict]:
    """One row per activation of :func:`summary_table` (by activation) for people: the metric
    (with the status of a diverged run), the difference from the baseline with its interval in
    one cell, the p-value (Holm's when the table holds several comparisons), the TOST p-value and
    the verdict, with the minimal detectable effect when inconclusive.

    ``claims`` maps an activation to its registered comparison (a row of
    :func:`polyattn.claims.report.comparison_rows`): that row shows the claim's difference
    (marked ‡), Holm p, TOST p and result, and the p column is then headed "Holm p"."""
    claims = claims or {}
    f = format_summary(summary, diffs)
    value = f.columns[1]
    delta = next((c for c in f.columns if c.startswith("Δ vs")), None)
    ci = next((c for c in f.columns if c.endswith("% CI")), None)
    p_col = "Holm p" if "Holm p" in f.columns else "paired t p"
    p_head = "Holm p" if claims else p_col
    tost = next((c for c in f.columns if c.startswith("TOST p")), None)
    rows = []
    for _, r in f.iterrows():
        row = {"Activation": name(r["activation"]),
               value[:1].upper() + value[1:]: r[value] + ("" if r["status"] == "ok" else f" ({r['status']})")}
        if delta is not None:
            reg = claims.get(r["activation"])
            d_col = f"{delta} [{ci}]" if ci else delta
            if reg is not None:
                row[d_col] = registered_cell(reg)
                row[p_head] = reg["Holm p"]
                if tost:
                    row[tost] = reg["TOST p"]
                row["Verdict"] = reg["Result"]
            else:
                interval = r.get(ci, "") or ""
                interval = "" if interval == numbers.MISSING else interval
                row[d_col] = typographic(f"{r[delta]} {interval}".strip())
                row[p_head] = r.get(p_col, "")
                if tost:
                    row[tost] = r[tost]
                row["Verdict"] = verdict_cell(r.get("verdict", ""), r.get("MDE", ""))
        rows.append(row)
    return rows


def per_seed_rows(final: pd.DataFrame, index=("activation",), metric: MetricLike = None) -> list[dict]:
    """:func:`per_seed_table` for people: the activation by name (after the model and recipe when
    ``index`` holds ``model``), one column per seed, "–" for a seed the group did not run."""
    index = _by(index)
    rows = []
    for r in per_seed_table(final, index=index, metric=metric).to_dict("records"):
        row = {"Model, recipe": recipe_label(r["model"], r["augment"])} if "model" in index else {}
        row["Activation"] = name(r["activation"])
        row.update({k: (v if isinstance(v, str) else "–") for k, v in r.items() if str(k).startswith("seed ")})
        rows.append(row)
    return rows


def difference_rows(diffs: pd.DataFrame, keys: Sequence[str], heading: str, margin: float) -> list[dict]:
    """One row per comparison of a paired-difference table for people: the ``keys`` columns (a
    ``variant`` by its label as a reader sees it), the seed pairs, the difference with its 95%
    interval under ``heading`` ("not comparable" without pairs), Holm p, TOST p against
    ``margin``, the minimal detectable effect and, when the table has one, the verdict."""
    twice = sorted({k for k in keys if list(diffs.columns).count(k) > 1})
    if twice:
        raise ValueError(f"the differences name the column(s) {twice} more than once, so a cell would hold a whole "
                         "row; drop or rename the duplicate before making the table")
    return [{**{k: label(r[k]) if k == "variant" else r[k] for k in keys},
             "seed pairs": int(r["n_pairs"]),
             f"{heading} [95% CI]": interval_cell(r["mean_diff"], r["ci_low"], r["ci_high"], missing="not comparable"),
             "Holm p": number_cell(r["p_holm"], ".2g"), f"TOST p (±{margin:g})": number_cell(r["tost_p"], ".2g"),
             "MDE": number_cell(r["mde"], ".2f"), **({"verdict": r["verdict"]} if "verdict" in r else {})}
            for _, r in diffs.iterrows()]
