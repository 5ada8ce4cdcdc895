"""Statistics and tidy tables from result records (chapters 03 and 04).

Every function takes result records (see :mod:`polyattn.results`) or the frames built from
them and returns a pandas DataFrame, a dict or a sentence built from the numbers:

    frame = records_to_frame(records)          # one row per (run, epoch)
    final = final_accuracy(records)            # one row per run; diverged runs kept, accuracy NaN
    summary_table(final)                       # mean +- std over seeds, n seeds, n diverged
    paired_difference(final, "softmax")        # same-seed differences, t CI, paired t-test, Wilcoxon
    difference_verdict(row)                    # "matches softmax within the 95% CI ..." from the numbers
    probe_frame(records); probe_curves(...)    # tidy probe rows with run identifiers; curves over steps
    norms_vs_accuracy(records); spearman_ci(x, y)
    best_constant(final_of_sweep)              # the best c of c*x^3 per sequence length, slope of log c
    compute_budget(records); budget_text(...)  # wall-clock hours and hardware from the provenance

Units: accuracies in the input frames are fractions (as stored); the summaries, differences
and verdicts report percent and percentage points ("points").  A run that diverged keeps its
row with ``status == "diverged"`` and its ``diverged_step``; its final accuracy is NaN, so it
never enters a mean silently, and every summary counts it.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd

from . import activations
from .results import config_hash

PERCENT = 100.0
#: The smallest number of pairs for which a two-sided Wilcoxon signed-rank test can reach
#: p < 0.05 (its smallest exact p-value is 2 / 2^n: 0.25 for n = 3, 0.031 for n = 6).
WILCOXON_MIN_N = 6

RUN_COLUMNS = ("experiment", "run", "config_hash", "seed", "activation", "model", "augment", "patch_size",
               "image_size", "seq_len", "c", "c_label", "scale", "train_subset", "test_subset", "epochs",
               "batch_size", "preset", "status", "diverged_step", "n_params", "wall_s")
EPOCH_COLUMNS = ("epoch", "step", "train_loss", "train_acc", "test_loss", "test_acc", "elapsed_s")


# --- records -> frames ------------------------------------------------------------------------

def _seq_len(config: dict) -> int:
    image, patch = int(config.get("image_size", 28)), int(config.get("patch_size", 4))
    return (image // patch) ** 2 + (config.get("pool", "cls") == "cls")


def activation_constant(spec: str) -> tuple[float, Optional[str]]:
    """``(c, label)`` of a fixed-scale polynomial ``poly:p=P,c=C``; ``(nan, None)`` otherwise."""
    act = activations.get(spec)
    c = act.params.get("c") if act.family == "poly" else None
    if c is None:
        return float("nan"), None
    return float(Fraction(c)), str(c)


def activation_scale(spec: str, seq_len: int) -> float:
    """The multiplier of s^p in a polynomial activation: c, or 1/sqrt(N) for ``poly:p=P``; NaN otherwise."""
    act = activations.get(spec)
    if act.family != "poly":
        return float("nan")
    c, _ = activation_constant(spec)
    return c if not math.isnan(c) else 1.0 / math.sqrt(seq_len)


def run_info(record: dict) -> dict:
    """The identifiers of one run: what it trained, how, and how it ended."""
    cfg = record["config"]
    spec = activations.canonical(cfg["activation"])
    seq_len = _seq_len(cfg)
    c, c_label = activation_constant(spec)
    prov = record.get("provenance") or {}
    return {
        "experiment": record["experiment"], "run": f"{record['config_hash']}-seed{record['seed']}",
        "config_hash": record["config_hash"], "seed": int(record["seed"]), "activation": spec,
        "model": cfg.get("model"), "augment": cfg.get("augment", "none"), "patch_size": cfg.get("patch_size"),
        "image_size": cfg.get("image_size"), "seq_len": seq_len, "c": c, "c_label": c_label,
        "scale": activation_scale(spec, seq_len), "train_subset": cfg.get("train_subset"),
        "test_subset": cfg.get("test_subset"), "epochs": cfg.get("epochs"), "batch_size": cfg.get("batch_size"),
        "preset": record.get("preset"), "status": record["status"], "diverged_step": record.get("diverged_step"),
        "n_params": record.get("n_params"), "wall_s": prov.get("wall_s", float("nan")),
    }


def _check_records(records) -> list[dict]:
    records = list(records)
    bad = [i for i, r in enumerate(records) if not isinstance(r, dict) or "config" not in r or "metrics" not in r]
    if bad:
        raise ValueError(f"records {bad[:5]} are not result records (dicts with 'config' and 'metrics'); "
                         "load them with polyattn.results.load_or_run_all or load_records")
    return records


def records_to_frame(records: Iterable[dict]) -> pd.DataFrame:
    """One row per (run, epoch) with the run's identifiers.

    A run that diverged before its first evaluation keeps one row with ``epoch`` NaN, so that
    it stays visible in every table built from the frame.
    """
    rows = []
    for rec in _check_records(records):
        info = run_info(rec)
        metrics = rec["metrics"] or [{}]
        for m in metrics:
            rows.append({**info, "epoch": m.get("epoch", np.nan), "step": m.get("step", np.nan),
                         "train_loss": m.get("train_loss", np.nan), "train_acc": m.get("train_acc", np.nan),
                         "test_loss": m.get("test_loss", np.nan), "test_acc": m.get("test_acc", np.nan),
                         "elapsed_s": m.get("wall_s", np.nan)})
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS + EPOCH_COLUMNS))


def final_accuracy(records: Iterable[dict]) -> pd.DataFrame:
    """One row per run: the final test accuracy (NaN for a diverged run) and the last one it reached."""
    rows = []
    for rec in _check_records(records):
        info = run_info(rec)
        metrics = rec["metrics"]
        last = metrics[-1] if metrics else {}
        ok = rec["status"] == "ok"
        rows.append({**info, "epochs_done": len(metrics),
                     "test_acc": last.get("test_acc", np.nan) if ok else np.nan,
                     "train_acc": last.get("train_acc", np.nan) if ok else np.nan,
                     "test_loss": last.get("test_loss", np.nan) if ok else np.nan,
                     "last_test_acc": last.get("test_acc", np.nan)})
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS) + ["epochs_done", "test_acc", "train_acc", "test_loss",
                                                            "last_test_acc"])


def _by(by) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def _require(frame: pd.DataFrame, cols: Sequence[str], what: str):
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: the frame lacks the columns {missing} (it has {list(frame.columns)}); "
                         "build it with final_accuracy(records)")


# --- summaries ----------------------------------------------------------------------------------

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


def _status_text(n_div: int, n: int) -> str:
    if n_div == 0:
        return "ok"
    return f"diverged in {n_div} of {n}"


def _pm(mean, std, digits=2) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "diverged"
    if std is None or math.isnan(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def t_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the t-based confidence interval of the mean (NaN bounds when n < 2)."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return np.nan, np.nan, np.nan
    m = float(x.mean())
    if len(x) < 2:
        return m, np.nan, np.nan
    half = float(stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return m, m - half, m + half


def paired_difference(final: pd.DataFrame, baseline: str = "softmax", by=None, metric: str = "test_acc",
                      compare: Optional[Sequence[str]] = None, confidence: float = 0.95) -> pd.DataFrame:
    """Per activation (and group ``by``), the same-seed differences from ``baseline`` in points.

    Columns: ``n_pairs`` (seeds where both trained), ``n_diverged`` / ``n_baseline_diverged``
    (seeds lost to divergence), ``mean_diff``, ``sd_diff``, the t-based ``ci_low``/``ci_high``,
    ``t_p`` (paired t-test, ``scipy.stats.ttest_rel``; NaN for fewer than 2 pairs or zero
    spread), ``wilcoxon_p`` (only for n >= :data:`WILCOXON_MIN_N`; with fewer pairs it cannot
    reach 0.05 and is NaN), ``low_power`` (n < WILCOXON_MIN_N) and ``status``.
    """
    from scipy import stats

    canon = activations.canonical(baseline)
    by = _by(by)
    _require(final, by + ["activation", "seed", "status", metric], "paired_difference")
    if not (final["activation"] == canon).any():
        raise ValueError(f"paired_difference: the baseline {canon!r} has no runs; activations present: "
                         f"{list(dict.fromkeys(final['activation']))}")
    wanted = None if compare is None else [activations.canonical(a) for a in compare]
    rows = []
    groups = final.groupby(by, sort=False) if by else [((), final)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        base = g[g["activation"] == canon].set_index("seed")
        for act in dict.fromkeys(g["activation"]):
            if act == canon or (wanted is not None and act not in wanted):
                continue
            other = g[g["activation"] == act].set_index("seed")
            seeds = sorted(set(other.index) & set(base.index))
            a = other.loc[seeds, metric].to_numpy(dtype=float) * PERCENT
            b = base.loc[seeds, metric].to_numpy(dtype=float) * PERCENT
            both = np.isfinite(a) & np.isfinite(b)
            d = a[both] - b[both]
            n = len(d)
            mean, lo, hi = t_interval(d, confidence)
            sd = float(d.std(ddof=1)) if n > 1 else np.nan
            t_p = np.nan
            if n > 1 and sd > 0:
                t_p = float(stats.ttest_rel(a[both], b[both]).pvalue)
            w_p = np.nan
            if n >= WILCOXON_MIN_N and np.any(d != 0):
                w_p = float(stats.wilcoxon(d).pvalue)
            n_div = int((other.loc[seeds, "status"] == "diverged").sum())
            n_bdiv = int((base.loc[seeds, "status"] == "diverged").sum())
            rows.append({**dict(zip(by, key)), "activation": act, "baseline": canon, "n_seeds": len(seeds),
                         "n_pairs": n, "n_diverged": n_div, "n_baseline_diverged": n_bdiv, "mean_diff": mean,
                         "sd_diff": sd, "ci_low": lo, "ci_high": hi, "t_p": t_p, "wilcoxon_p": w_p,
                         "low_power": n < WILCOXON_MIN_N, "status": _status_text(n_div, len(seeds)),
                         "confidence": confidence})
    cols = by + ["activation", "baseline", "n_seeds", "n_pairs", "n_diverged", "n_baseline_diverged", "mean_diff",
                 "sd_diff", "ci_low", "ci_high", "t_p", "wilcoxon_p", "low_power", "status", "confidence"]
    return pd.DataFrame(rows, columns=cols)


def difference_verdict(row, name: Optional[str] = None, baseline: Optional[str] = None) -> str:
    """A sentence from one row of :func:`paired_difference`: matches within the CI, worse or
    better by how many points, or diverged; with the CI, n and the p-value."""
    index_name = getattr(row, "name", None)
    row = dict(row)
    if "activation" not in row and isinstance(index_name, str):   # a row of a frame indexed by activation
        row["activation"] = index_name
    name = name or row["activation"]
    baseline = baseline or row["baseline"]
    n, n_seeds = int(row["n_pairs"]), int(row["n_seeds"])
    level = f"{round(100 * float(row.get('confidence', 0.95)))}%"
    extra = ""
    if row["n_diverged"]:
        extra = f"; {name} diverged in {int(row['n_diverged'])} of {n_seeds} seeds"
    if row.get("n_baseline_diverged"):
        extra += f"; {baseline} diverged in {int(row['n_baseline_diverged'])} of {n_seeds} seeds"
    if n == 0:
        if row["n_diverged"]:
            return f"{name} diverged in {int(row['n_diverged'])} of {n_seeds} seeds, so it cannot be compared with {baseline}"
        return f"{name} and {baseline} share no seed that trained, so they cannot be compared"
    d = float(row["mean_diff"])
    if n == 1:
        return f"{name} differs from {baseline} by {d:+.2f} points on the one seed that trained (no interval){extra}"
    lo, hi = float(row["ci_low"]), float(row["ci_high"])
    p = row["t_p"]
    ptxt = f", paired t-test p = {p:.2g}" if p == p else ""
    stats_txt = f"{level} CI {lo:+.2f} to {hi:+.2f} points, n = {n} seeds{ptxt}"
    if lo <= 0 <= hi:
        return f"{name} matches {baseline} within the {level} CI: difference {d:+.2f} points ({stats_txt}){extra}"
    if hi < 0:
        return f"{name} is worse than {baseline} by {-d:.2f} points ({stats_txt}){extra}"
    return f"{name} is better than {baseline} by {d:.2f} points ({stats_txt}){extra}"


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


# --- probes and norms ---------------------------------------------------------------------------

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


# --- the scale sweep ----------------------------------------------------------------------------

@dataclass
class BestConstant:
    """The result of :func:`best_constant`.

    ``table``: per sequence length N the best constant of the grid (``best_c``, its label, its
    mean accuracy), the runner-up, the margin with its standard error and ``resolved`` (margin
    above two standard errors; None when one seed gives no error), the interpolated optimum ``c_star`` (vertex of
    a parabola in log c through the best grid point and its neighbours; the grid value when the
    best is at the grid's edge, flagged ``at_edge``), and 1/sqrt(N).  ``cells``: mean, std and
    counts per (N, c).  ``slope``: least-squares slope of log c_star against log N, with a
    bootstrap CI over seeds (``slope_ci``); ``slope_grid`` the same for the grid's best c.
    ``direction``: how the best grid c moves as N grows: "falls", "rises", "flat" or "mixed".
    """

    table: pd.DataFrame
    cells: pd.DataFrame
    slope: float
    slope_ci: tuple
    slope_grid: float
    direction: str
    theory_slope: float = -0.5
    n_boot: int = 0
    confidence: float = 0.95
    notes: list = field(default_factory=list)


def _cell_stats(final: pd.DataFrame, metric: str) -> pd.DataFrame:
    rows = []
    for (n, c), g in final.groupby(["seq_len", "c"], sort=True):
        vals = g.loc[g["status"] == "ok", metric].dropna().to_numpy(dtype=float) * PERCENT
        rows.append({"seq_len": int(n), "c": float(c), "c_label": g["c_label"].iloc[0], "n_runs": len(g),
                     "n_ok": len(vals), "n_diverged": int((g["status"] == "diverged").sum()),
                     "mean": vals.mean() if len(vals) else np.nan,
                     "std": vals.std(ddof=1) if len(vals) > 1 else np.nan})
    return pd.DataFrame(rows)


@dataclass
class _Grid:
    """One sequence length of a sweep as arrays: constants ascending, accuracy [c, seed] in
    percent (NaN for a diverged or missing run) and the diverged flags."""

    seq_len: int
    cs: np.ndarray
    labels: list
    acc: np.ndarray
    diverged: np.ndarray


def _grids(final: pd.DataFrame, metric: str) -> list[_Grid]:
    out = []
    for n, g in final.groupby("seq_len", sort=True):
        cs = np.array(sorted(g["c"].unique()), dtype=float)
        seeds = sorted(g["seed"].unique())
        acc = np.full((len(cs), len(seeds)), np.nan)
        div = np.zeros((len(cs), len(seeds)), dtype=bool)
        labels = []
        for i, c in enumerate(cs):
            cell = g[g["c"] == c]
            labels.append(cell["c_label"].iloc[0])
            for _, r in cell.iterrows():
                j = seeds.index(r["seed"])
                div[i, j] = r["status"] == "diverged"
                if r["status"] == "ok":
                    acc[i, j] = float(r[metric]) * PERCENT
        out.append(_Grid(int(n), cs, labels, acc, div))
    return out


def _nanmean_rows(acc: np.ndarray) -> np.ndarray:
    ok = np.isfinite(acc)
    cnt = ok.sum(1)
    tot = np.where(ok, acc, 0.0).sum(1)
    return np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)


def _ranking(cs: np.ndarray, means: np.ndarray, n_div: np.ndarray) -> np.ndarray:
    """Indices best first: fewest diverged runs, then highest mean; all-diverged constants last."""
    missing = ~np.isfinite(means)
    return np.lexsort((cs, -np.where(missing, 0.0, means), n_div, missing))


def _interpolated_optimum(cs: np.ndarray, means: np.ndarray, i: int) -> tuple[float, bool]:
    """The vertex (in log c) of the parabola through the best constant and its two neighbours."""
    if i == 0 or i == len(cs) - 1:
        return float(cs[i]), True
    x3, y3 = np.log(cs[i - 1:i + 2]), means[i - 1:i + 2]
    if not np.all(np.isfinite(y3)):
        return float(cs[i]), False
    a, b, _ = np.polyfit(x3, y3, 2)
    if a >= 0:
        return float(cs[i]), False
    return float(math.exp(np.clip(-b / (2 * a), x3[0], x3[-1]))), False


def _best_of(grid: _Grid, acc: np.ndarray, div: np.ndarray):
    means = _nanmean_rows(acc)
    order = _ranking(grid.cs, means, div.sum(1))
    c_star, edge = _interpolated_optimum(grid.cs, means, int(order[0]))
    return order, means, c_star, edge


def _fit_slope(ns, cs) -> float:
    ns, cs = np.asarray(ns, dtype=float), np.asarray(cs, dtype=float)
    if len(ns) < 2 or np.any(~np.isfinite(cs)) or np.any(cs <= 0):
        return np.nan
    return float(np.polyfit(np.log(ns), np.log(cs), 1)[0])


def _direction(values: Sequence[float]) -> str:
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return "flat"
    steps = np.diff(v)
    if np.all(steps == 0):
        return "flat"
    if np.all(steps <= 0):
        return "falls"
    if np.all(steps >= 0):
        return "rises"
    return "mixed"


def best_constant(sweep_final: pd.DataFrame, metric: str = "test_acc", n_boot: int = 1000, seed: int = 0,
                  confidence: float = 0.95) -> BestConstant:
    """The best constant c of ``poly:p=3,c=C`` per sequence length, and how it scales with N.

    ``sweep_final`` is :func:`final_accuracy` of a sweep over c and patch size (rows without a
    fixed c are ignored).  Ranking: fewest diverged seeds first, then the highest mean accuracy.
    The slope CI resamples seeds with replacement (the same resampled seeds for every c of one
    N, since a seed fixes the data order) and recomputes the interpolated optima and the slope.
    Theory (c proportional to 1/sqrt(N)) predicts a slope of -1/2.
    """
    _require(sweep_final, ["seq_len", "c", "c_label", "seed", "status", metric], "best_constant")
    f = sweep_final[np.isfinite(sweep_final["c"].to_numpy(dtype=float))]
    if f.empty:
        raise ValueError("best_constant: no runs with a fixed constant (activation poly:p=P,c=C); "
                         "pass final_accuracy() of the scale sweep")
    grids = _grids(f, metric)
    cells = _cell_stats(f, metric)
    rows = []
    for gr in grids:
        order, means, c_star, edge = _best_of(gr, gr.acc, gr.diverged)
        b = int(order[0])
        s2 = int(order[1]) if len(order) > 1 else None
        ok = np.isfinite(gr.acc[b])
        margin, se = np.nan, np.nan
        if s2 is not None:
            margin = means[b] - means[s2]
            parts = [gr.acc[i][np.isfinite(gr.acc[i])] for i in (b, s2)]
            if all(len(x) > 1 for x in parts):
                se = math.sqrt(sum(x.var(ddof=1) / len(x) for x in parts))
        resolved = (bool(margin > 2 * se) if se == se else (False if margin == 0 else None))
        rows.append({"seq_len": gr.seq_len, "best_c": float(gr.cs[b]), "best_c_label": gr.labels[b],
                     "best_mean": means[b], "best_std": gr.acc[b][ok].std(ddof=1) if ok.sum() > 1 else np.nan,
                     "best_n_diverged": int(gr.diverged[b].sum()),
                     "runner_up_c_label": None if s2 is None else gr.labels[s2],
                     "margin": margin, "margin_se": se, "resolved": resolved,
                     "c_star": c_star, "at_edge": edge, "inv_sqrt_n": 1 / math.sqrt(gr.seq_len)})
    table = pd.DataFrame(rows)
    slope = _fit_slope(table["seq_len"], table["c_star"])
    slope_grid = _fit_slope(table["seq_len"], table["best_c"])
    notes = []
    if table["at_edge"].any():
        edge = table.loc[table["at_edge"], "seq_len"].tolist()
        notes.append(f"the best c lies at the edge of the grid for N = {edge}: the optimum may lie beyond it")
    if len(table) < 3:
        notes.append(f"only {len(table)} sequence lengths: the slope is a line through {len(table)} points")
    rng = np.random.default_rng(seed)
    boots = []
    if n_boot and all(gr.acc.shape[1] > 1 for gr in grids):
        ns = [gr.seq_len for gr in grids]
        for _ in range(n_boot):
            stars = []
            for gr in grids:
                pick = rng.integers(0, gr.acc.shape[1], gr.acc.shape[1])
                stars.append(_best_of(gr, gr.acc[:, pick], gr.diverged[:, pick])[2])
            boots.append(_fit_slope(ns, stars))
    boots = np.asarray(boots, dtype=float)
    boots = boots[np.isfinite(boots)]
    a = (1 - confidence) / 2
    ci = tuple(float(v) for v in np.quantile(boots, [a, 1 - a])) if len(boots) else (np.nan, np.nan)
    if not len(boots):
        notes.append("one seed per cell: no bootstrap interval for the slope")
    return BestConstant(table=table, cells=cells, slope=slope, slope_ci=ci, slope_grid=slope_grid,
                        direction=_direction(table["best_c"].to_numpy()), n_boot=len(boots),
                        confidence=confidence, notes=notes)


def scale_verdict(bc: BestConstant) -> str:
    """A sentence on Figure 1's question from :func:`best_constant`: which c wins at which N,
    the direction it moves, whether the grid separates the winner from the runner-up, the
    fitted slope against -1/2, and what that means for the paper's wording (a multiplier c and
    its divisor 1/c move in opposite directions)."""
    t = bc.table.sort_values("seq_len")
    best = ", ".join(f"c = {lbl} at N = {n}" for lbl, n in zip(t["best_c_label"], t["seq_len"]))
    lo_n, hi_n = int(t["seq_len"].iloc[0]), int(t["seq_len"].iloc[-1])
    if bc.direction == "falls":
        trend = (f"the best multiplier c falls as N grows (it rises as N falls from {hi_n} to {lo_n}), "
                 "the direction of c ∝ 1/sqrt(N); read as a divisor 1/c, the best scale falls as N falls")
    elif bc.direction == "rises":
        trend = "the best multiplier c rises as N grows, against the direction of c ∝ 1/sqrt(N)"
    elif bc.direction == "flat":
        trend = "the same c wins at every N, so this grid resolves no trend with N"
    else:
        trend = "the best c does not move monotonically with N"
    resolved = t["resolved"].tolist() if "resolved" in t else []
    tied = [int(n) for n, r in zip(t["seq_len"], resolved) if r is False]
    unknown = [int(n) for n, r in zip(t["seq_len"], resolved) if r is None]
    sep = ""
    if tied:
        sep += (f"; at N = {tied} the best and the runner-up constant are tied or within two standard errors of "
                "each other, so the winner there is not resolved")
    if unknown:
        sep += f"; at N = {unknown} one seed per constant gives no standard error"
    fit = ""
    if bc.slope == bc.slope:
        lo, hi = bc.slope_ci
        fit = f"; the slope of log c* against log N is {bc.slope:+.2f}"
        if lo == lo and hi > lo:
            consistent = "consistent with" if lo <= bc.theory_slope <= hi else "not consistent with"
            fit += f" (95% bootstrap CI over seeds {lo:+.2f} to {hi:+.2f}), {consistent} the -1/2 of c ∝ 1/sqrt(N)"
        elif lo == lo:
            fit += " (every bootstrap resample of the seeds picks the same constants, so no interval), against -1/2 in theory"
        else:
            fit += " (no interval), against -1/2 in theory"
    notes = "".join(f"; note: {n}" for n in bc.notes)
    return f"Best constant: {best}; {trend}{sep}{fit}{notes}"


# --- compute budget and configurations ----------------------------------------------------------

def compute_budget(records: Iterable[dict]) -> dict:
    """Total wall-clock time of the runs (hours, from ``provenance.wall_s``) and where they ran."""
    records = _check_records(records)
    walls = [float((r.get("provenance") or {}).get("wall_s", np.nan)) for r in records]
    hw = [(r.get("provenance") or {}).get("hardware", {}) for r in records]
    pk = [(r.get("provenance") or {}).get("packages", {}) for r in records]
    commits = sorted({str((r.get("provenance") or {}).get("git_commit"))[:12] for r in records})

    def uniq(vals):
        return sorted({str(v) for v in vals if v is not None})

    return {"n_runs": len(records), "wall_hours": float(np.nansum(walls)) / 3600.0,
            "wall_s_max": float(np.nanmax(walls)) if walls and np.isfinite(walls).any() else np.nan,
            "cpu": uniq(h.get("cpu") for h in hw), "cores": uniq(h.get("cores") for h in hw),
            "torch_threads": uniq(h.get("torch_threads") for h in hw), "device": uniq(h.get("device") for h in hw),
            "gpu": uniq(h.get("gpu") for h in hw), "torch": uniq(p.get("torch") for p in pk),
            "git_commits": commits,
            "git_dirty": any(bool((r.get("provenance") or {}).get("git_dirty")) for r in records)}


def budget_text(budget: dict) -> str:
    """One line: runs, wall-clock hours, hardware."""
    if not budget["n_runs"]:
        return "no runs"
    where = ", ".join(budget["gpu"] or budget["cpu"]) or "unknown hardware"
    cores = "/".join(budget["cores"])
    threads = "/".join(budget["torch_threads"])
    return (f"{budget['n_runs']} runs, {budget['wall_hours']:.2f} hours of wall-clock time in total "
            f"(longest run {budget['wall_s_max'] / 60:.1f} min) on {where} ({cores} cores, "
            f"{threads} torch thread(s) per run, torch {'/'.join(budget['torch'])})")


def _values(configs, name) -> list:
    return list(dict.fromkeys(getattr(c, name, None) for c in configs))


def _join(vals) -> str:
    return ", ".join(str(v) for v in vals)


OVERVIEW_FIELDS = ("dataset", "train_subset", "test_subset", "image_size", "patch_size", "model", "epochs",
                   "batch_size", "lr", "weight_decay", "warmup_epochs", "label_smoothing", "augment", "drop_path",
                   "activation", "seed", "clip_grad", "pool")


def config_overview(configs) -> dict:
    """The distinct values (in grid order) of the fields that describe a grid of :class:`TrainConfig`."""
    configs = list(configs)
    if not configs:
        raise ValueError("config_overview: no configurations")
    out = {name: _values(configs, name) for name in OVERVIEW_FIELDS}
    out["seq_len"] = _values(configs, "seq_len")
    return out


def _model_text(m, n_params=None) -> str:
    from .models.vit import VIT_SIZES

    s = VIT_SIZES.get(m)
    if not s:
        return str(m)
    extra = f", {n_params[m] / 1e3:.0f}k parameters" if n_params and m in n_params else ""
    return f"{m} (dim {s['dim']}, depth {s['depth']}, heads {s['heads']}{extra})"


def _tokens_text(configs) -> str:
    seen = dict.fromkeys((c.image_size, c.patch_size, getattr(c, "pool", "cls") == "cls") for c in configs)
    return "; ".join(f"{i} px, patch {p}: {(i // p) ** 2} patches{' + CLS' if cls else ''}" for i, p, cls in seen)


def _subset_text(ov) -> str:
    def one(v):
        return "all" if v is None else str(v)
    return f"train subset {_join(one(v) for v in ov['train_subset'])}, test subset {_join(one(v) for v in ov['test_subset'])}"


def _seeds_per_config(configs) -> str:
    """The distinct numbers of seeds a configuration (everything but the seed) is run with."""
    return _join(set(Counter(config_hash(c) for c in configs).values()))


def deviations_table(configs, paper_configs, n_params: Optional[dict] = None) -> pd.DataFrame:
    """What the paper trained against what this book trains, both from configuration grids.

    ``configs``: the book's :class:`TrainConfig` grid; ``paper_configs``: the paper's (from
    :func:`polyattn.experiments.vit.paper_configs`); ``n_params``: optional
    ``{model: parameter count}`` (from the records).
    """
    book, paper = config_overview(configs), config_overview(paper_configs)

    def recipe(ov):
        return _join("DeiT-style augmentation" if a == "deit" else "no augmentation" for a in ov["augment"])

    rows = [
        ("dataset", f"{_join(paper['dataset'])}", f"{_join(book['dataset'])} ({_subset_text(book)})"),
        ("images and tokens", _tokens_text(paper_configs), _tokens_text(configs)),
        ("models", "; ".join(_model_text(m) for m in paper["model"]),
         "; ".join(_model_text(m, n_params) for m in book["model"])),
        ("epochs", _join(paper["epochs"]), _join(book["epochs"])),
        ("batch size", _join(paper["batch_size"]), _join(book["batch_size"])),
        ("learning rate (AdamW)", _join(paper["lr"]), _join(book["lr"])),
        ("weight decay", _join(paper["weight_decay"]), _join(book["weight_decay"])),
        ("warm-up epochs", _join(paper["warmup_epochs"]), _join(book["warmup_epochs"])),
        ("recipe", recipe(paper), recipe(book)),
        ("activations", _join(paper["activation"]), _join(book["activation"])),
        ("seeds per configuration", _seeds_per_config(paper_configs), _seeds_per_config(configs)),
    ]
    return pd.DataFrame(rows, columns=["", "paper", "this book"])


def grid_caption(configs, records=(), preset: Optional[str] = None) -> str:
    """One line that states what a grid trains: dataset and subsets, tokens, models (with their
    parameter counts when records are given), epochs, optimiser, seeds, preset and compute."""
    configs = list(configs)
    ov = config_overview(configs)
    records = list(records)
    n_params = {}
    for r in records:
        n_params.setdefault(r["config"].get("model"), r.get("n_params"))
    n_params = {k: v for k, v in n_params.items() if v}
    preset = preset or _join(dict.fromkeys(getattr(c, "preset", None) for c in configs))
    recipe = _join("DeiT-style augmentation" if a == "deit" else "no augmentation" for a in ov["augment"])
    text = (f"{_join(ov['dataset'])} ({_subset_text(ov)}), {_tokens_text(configs)} "
            f"(N = {_join(ov['seq_len'])} tokens); model {'; '.join(_model_text(m, n_params) for m in ov['model'])}; "
            f"{_join(ov['epochs'])} epoch(s), batch {_join(ov['batch_size'])}, AdamW lr {_join(ov['lr'])}, "
            f"weight decay {_join(ov['weight_decay'])}, {recipe}; {len(ov['seed'])} seed(s) per configuration; "
            f"preset {preset}")
    if records:
        text += f"; compute: {budget_text(compute_budget(records))}"
    return text


# --- attention maps -----------------------------------------------------------------------------

def train_with_model(config, data=None):
    """Train ``config`` (no stored record, no resume) and return ``(record, model)`` in eval mode."""
    from .train import run

    rec = run(config, progress=False, resume=False, data=data, return_model=True)
    model = rec.pop("model")
    model.eval()
    return rec, model


def cls_attention(model, images, layer: int):
    """The CLS query's weights on the patches in ``layer``, as ``[B, H, g, g]`` patch grids.

    ``images`` are the model's (normalised) input; the CLS token is token 0.  Weights keep
    their sign (the polynomial's are negative for negative scores).
    """
    from .probes import record_attention_maps

    maps = record_attention_maps(model, images, layers=[layer])[0]     # [B, H, N, N]
    n = maps.shape[-1] - 1
    g = int(round(math.sqrt(n)))
    if g * g != n:
        raise ValueError(f"cls_attention: {n} patch tokens do not form a square grid; the model must pool "
                         "with a CLS token (pool='cls') on square images")
    return maps[:, :, 0, 1:].reshape(maps.shape[0], maps.shape[1], g, g)
