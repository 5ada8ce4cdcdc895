"""The sqrt(N) scaling across training lengths (chapter 07): bits per character against the training
length T per variant, and how a paired difference changes with log2 T.

Records are those of the ``causal_length_sweep`` grid: one position-free character model per
variant, training length and seed, each evaluated at T, 2T and 4T.  The grid trains for hours, so
every function here accepts any subset of its records (none, some lengths, some seeds, diverged
runs) and says what it could not compute instead of failing:

    frame = sweep_frame(records)                       # one row per stored run
    progress(frame, planned=36)                        # stored, ok and diverged runs, by name
    paired_by_length(frame, "x³", "x³/√(i+1)")         # per T: mean paired difference, 95% interval
    slope_over_log_length(frame, "x³", "x³/√(i+1)")    # per seed and mean: growth per doubling of T
    position_slope(records, "x³", "x³/√(i+1)", 1024)   # the same, over log2 of the position in the window
    sweep_figure(frame, lengths=(64, 256, 1024))       # None when no run trained
"""
from __future__ import annotations

import math
from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd

from .stats import t_interval

#: The variants of the sweep by (activation spec, reading of N), in the order a figure shows them.
VARIANTS = {("softmax", "row"): "softmax", ("poly:p=3,c=1", "row"): "x³", ("poly:p=3", "row"): "x³/√(i+1)",
            ("poly:p=3", "fixed"): "x³/√T", ("uniform", "row"): "uniform"}
#: The spec each variant's colour is taken from (the two readings of N share one, told apart by dashes).
COLOUR_SPECS = {"softmax": "softmax", "x³": "poly:p=3,c=1", "x³/√(i+1)": "poly:p=3", "x³/√T": "poly:p=3",
                "uniform": "uniform"}
DASHED = ("x³/√T",)
METRICS = {"test_bpc": "T", "test_bpc_x2": "2T", "test_bpc_x4": "4T"}
#: The paired differences the figure's right panel draws: (candidate, baseline, metric, legend).
PAIRED = (("x³", "x³/√(i+1)", "test_bpc", "x³ − x³/√(i+1), at T"),
          ("x³/√T", "x³/√(i+1)", "test_bpc_x2", "x³/√T − x³/√(i+1), at 2T"))


def sweep_frame(records: Iterable[dict]) -> pd.DataFrame:
    """One row per stored run: ``variant``, ``T``, ``seed``, ``status`` and the last bits/char at T,
    2T and 4T (NaN for a run that diverged)."""
    rows = []
    for r in records:
        cfg = r["config"]
        last = (r.get("metrics") or [{}])[-1] if r["status"] == "ok" else {}
        rows.append({"variant": VARIANTS.get((cfg["activation"], cfg.get("n_mode", "row")), cfg["activation"]),
                     "T": int(cfg["options"]["context"]), "seed": int(cfg["seed"]), "status": r["status"],
                     **{m: float(last.get(m, math.nan)) for m in METRICS}})
    frame = pd.DataFrame(rows, columns=["variant", "T", "seed", "status", *METRICS])
    order = {v: i for i, v in enumerate(VARIANTS.values())}
    frame["_order"] = frame["variant"].map(lambda v: order.get(v, len(order)))
    return frame.sort_values(["_order", "T", "seed"]).drop(columns="_order").reset_index(drop=True)


def progress(frame: pd.DataFrame, planned: int) -> dict:
    """How far the grid is: ``stored``, ``planned``, ``ok`` and ``diverged`` runs, and the diverged
    runs named ("x³ at T = 1024, seed 1") in ``diverged_runs``."""
    bad = frame[frame["status"] != "ok"]
    return {"stored": int(len(frame)), "planned": int(planned), "ok": int((frame["status"] == "ok").sum()),
            "diverged": int(len(bad)),
            "diverged_runs": [f"{r.variant} at T = {r.T}, seed {r.seed}" for r in bad.itertuples()]}


def _t_half(values: np.ndarray) -> float:
    """Half the width of the 95% t-interval of the mean (:func:`polyattn.analysis.stats.t_interval`;
    NaN for fewer than two values)."""
    _, low, high = t_interval(values)
    return (high - low) / 2


def levels_by_length(frame: pd.DataFrame, metric: str = "test_bpc") -> pd.DataFrame:
    """Per variant and training length: mean ``metric`` over the runs that trained, its 95%
    t-interval (NaN below two runs), the runs that trained (``n``) and those that diverged."""
    out = []
    for (variant, t), g in frame.groupby(["variant", "T"], sort=False):
        vals = g.loc[g["status"] == "ok", metric].dropna().to_numpy(dtype=float)
        mean = float(vals.mean()) if len(vals) else math.nan
        half = _t_half(vals)
        out.append({"variant": variant, "T": int(t), "mean": mean, "ci_low": mean - half, "ci_high": mean + half,
                    "n": len(vals), "diverged": int((g["status"] != "ok").sum())})
    return pd.DataFrame(out, columns=["variant", "T", "mean", "ci_low", "ci_high", "n", "diverged"])


def _differences(frame: pd.DataFrame, candidate: str, baseline: str, metric: str, by: str) -> dict:
    """``{group: same-seed differences}``: ``by`` "T" gives per length a Series over seeds, ``by``
    "seed" per seed a Series over lengths; runs that diverged drop out of their pairs."""
    out = {}
    other = "seed" if by == "T" else "T"
    for key, g in frame.groupby(by):
        c = g[g["variant"] == candidate].set_index(other)[metric]
        b = g[g["variant"] == baseline].set_index(other)[metric]
        out[key] = (c - b).dropna().sort_index()
    return out


def paired_by_length(frame: pd.DataFrame, candidate: str, baseline: str, metric: str = "test_bpc") -> pd.DataFrame:
    """Per training length: the mean paired difference ``candidate - baseline`` (same seed), its 95%
    t-interval (NaN below two pairs) and the number of pairs; lengths without a pair are left out."""
    out = []
    for t, d in _differences(frame, candidate, baseline, metric, "T").items():
        if not len(d):
            continue
        mean, half = float(d.mean()), _t_half(d.to_numpy(dtype=float))
        out.append({"T": int(t), "difference": mean, "ci_low": mean - half, "ci_high": mean + half, "pairs": len(d)})
    return pd.DataFrame(out, columns=["T", "difference", "ci_low", "ci_high", "pairs"])


def seed_slopes(frame: pd.DataFrame, candidate: str, baseline: str, metric: str = "test_bpc") -> pd.DataFrame:
    """Each seed's least-squares slope of ``candidate - baseline`` on log2 T (bits/char per doubling of
    T), over the lengths that seed has in both arms (at least two), with those lengths."""
    out = []
    for seed, d in _differences(frame, candidate, baseline, metric, "seed").items():
        if len(d) >= 2:
            x = np.log2(np.asarray(d.index, dtype=float))
            out.append({"seed": int(seed), "slope": float(np.polyfit(x, d.to_numpy(dtype=float), 1)[0]),
                        "lengths": tuple(int(t) for t in d.index)})
    return pd.DataFrame(out, columns=["seed", "slope", "lengths"])


def slope_over_log_length(frame: pd.DataFrame, candidate: str, baseline: str, metric: str = "test_bpc") -> dict:
    """How the paired difference grows per doubling of T: :func:`seed_slopes`, then the mean slope over
    seeds with its 95% t-interval (NaN below two seeds; ``slope`` NaN with none) and ``per_seed``."""
    per_seed = seed_slopes(frame, candidate, baseline, metric)
    slopes = per_seed["slope"].to_numpy(dtype=float)
    n = len(slopes)
    mean = float(slopes.mean()) if n else math.nan
    half = _t_half(slopes)
    return {"slope": mean, "ci_low": mean - half, "ci_high": mean + half, "seeds": n,
            "per_seed": dict(zip(per_seed["seed"], per_seed["slope"]))}


def change_with_length(frame: pd.DataFrame, short: int, long: int, metric: str = "test_bpc") -> pd.DataFrame:
    """Per variant: how its ``metric`` moves from training length ``short`` to ``long``, paired by seed
    (the same seed at both lengths; runs that diverged drop out): the mean change, its 95% t-interval
    (NaN below two pairs) and the pairs. Variants without a pair are left out. A gate that asks a model
    to stay within some distance of its own short-length result reads these changes."""
    ok = frame[frame["status"] == "ok"]
    out = []
    for variant in dict.fromkeys(ok["variant"]):
        v = ok[ok["variant"] == variant]
        a = v[v["T"] == short].set_index("seed")[metric]
        b = v[v["T"] == long].set_index("seed")[metric]
        d = (b - a).dropna()
        if len(d):
            mean, low, high = t_interval(d.to_numpy(dtype=float))
            out.append({"variant": variant, "change": mean, "ci_low": low, "ci_high": high, "pairs": len(d),
                        "short": float(a[d.index].mean()), "long": float(b[d.index].mean())})
    return pd.DataFrame(out, columns=["variant", "change", "ci_low", "ci_high", "pairs", "short", "long"])


def sweep_figure(frame: pd.DataFrame, lengths: Optional[Sequence[int]] = None, margin: Optional[float] = None,
                 paired: Sequence[tuple] = PAIRED, chance: Optional[float] = None):
    """Test bits/char at the training length against T per variant (mean over the runs that trained,
    95% t-interval from two runs on, each run a dot; ``chance``, a model that has learned nothing
    beyond character frequencies, dotted), and beside it the paired differences of ``paired``
    against T (each seed a dot, the band ``±margin``).

    Whatever part of the grid is stored: the right panel is left out while no seed has a pair, and
    there is no figure (``None``) while no run has trained.  ``lengths``: the grid's training lengths,
    the ticks of both panels (default: those stored)."""
    import matplotlib.pyplot as plt

    from ..plotting import activation_color

    ok = frame[frame["status"] == "ok"].dropna(subset=["test_bpc"])
    if ok.empty:
        return None
    lengths = sorted(set(lengths or ok["T"]))
    drawn = [(c, b, m, lbl, paired_by_length(frame, c, b, m)) for c, b, m, lbl in paired]
    drawn = [d for d in drawn if len(d[4])]
    fig, axes = plt.subplots(1, 2 if drawn else 1, figsize=(10.5 if drawn else 5.6, 4.2), squeeze=False)
    left = axes[0, 0]
    levels = levels_by_length(frame)
    for variant, g in levels[levels["n"] > 0].groupby("variant", sort=False):
        colour = activation_color(COLOUR_SPECS.get(variant, variant))
        err = np.vstack([g["mean"] - g["ci_low"], g["ci_high"] - g["mean"]])
        left.errorbar(g["T"], g["mean"], yerr=None if np.isnan(err).all() else np.nan_to_num(err), marker="o",
                      capsize=3, label=variant, color=colour, linestyle="--" if variant in DASHED else "-")
        runs = ok[ok["variant"] == variant]
        left.scatter(runs["T"], runs["test_bpc"], color=colour, s=12, alpha=0.5, zorder=3)
    if chance is not None:
        left.axhline(chance, color="grey", ls=":", lw=1.2, label="unigram model")
    left.set_ylabel("test bits per character at T")
    left.set_title("each variant at its training length")
    left.legend(frameon=False, fontsize=10)
    for ax in axes.flat:
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths, [str(t) for t in lengths])
        ax.minorticks_off()
        ax.set_xlim(lengths[0] / 1.5, lengths[-1] * 1.5)
        ax.set_xlabel("training length T (characters)")
    if drawn:
        right = axes[0, 1]
        if margin:
            right.axhspan(-margin, margin, color="grey", alpha=0.15, lw=0, label=f"±{margin:g} (margin)")
        right.axhline(0, color="black", lw=0.8)
        for c, b, m, lbl, p in drawn:
            colour = activation_color(COLOUR_SPECS.get(c, c))
            err = np.vstack([p["difference"] - p["ci_low"], p["ci_high"] - p["difference"]])
            right.errorbar(p["T"], p["difference"], yerr=None if np.isnan(err).all() else np.nan_to_num(err),
                           marker="o", capsize=3, color=colour, linestyle="--" if c in DASHED else "-", label=lbl)
            for t, d in _differences(frame, c, b, m, "T").items():
                right.scatter(np.full(len(d), t), d, color=colour, s=12, alpha=0.5, zorder=3)
        right.set_ylabel("difference (bits/char, same seed)")
        right.set_title("paired differences")
        right.legend(frameon=False, fontsize=10)
    fig.tight_layout()
    return fig


# --- the loss by position in the window (the rotary-position sweep stores it) -----------------------------


def position_frame(records: Iterable[dict]) -> pd.DataFrame:
    """One row per run and position bin: ``variant``, ``T``, ``seed``, the bin's last position + 1
    (``upper``: the keys the bin's last query sees) and the test bits/char of its predictions;
    runs that diverged or stored no binned loss are left out."""
    rows = []
    for r in records:
        pos = (r.get("final") or {}).get("position_bpc")
        if r.get("status") != "ok" or not pos:
            continue
        cfg = r["config"]
        variant = VARIANTS.get((cfg["activation"], cfg.get("n_mode", "row")), cfg["activation"])
        for upper, bpc in zip(pos["edges"][1:], pos["bpc"]):
            rows.append({"variant": variant, "T": int(cfg["options"]["context"]), "seed": int(cfg["seed"]),
                         "upper": int(upper), "bpc": float(bpc)})
    return pd.DataFrame(rows, columns=["variant", "T", "seed", "upper", "bpc"])


def position_differences(positions: pd.DataFrame, candidate: str, baseline: str, context: int) -> pd.DataFrame:
    """At training length ``context``: per seed and position bin, ``candidate - baseline`` (same seed)."""
    at = positions[positions["T"] == context]
    c = at[at["variant"] == candidate].set_index(["seed", "upper"])["bpc"]
    b = at[at["variant"] == baseline].set_index(["seed", "upper"])["bpc"]
    d = (c - b).dropna()
    return d.rename("difference").reset_index()


def position_slope(records: Iterable[dict], candidate: str, baseline: str, context: int) -> dict:
    """How the paired difference grows with the position in the window at training length ``context``:
    each seed's least-squares slope of ``candidate - baseline`` on log2 of the bins' ``upper`` ends
    (bits/char per doubling of the keys a query sees), then the mean over seeds with its 95% t-interval
    (NaN below two seeds), as :func:`slope_over_log_length` gives it over T."""
    d = position_differences(position_frame(records), candidate, baseline, context)
    per_seed = {}
    for seed, g in d.groupby("seed"):
        if len(g) >= 2:
            per_seed[int(seed)] = float(np.polyfit(np.log2(g["upper"].to_numpy(dtype=float)),
                                                   g["difference"].to_numpy(dtype=float), 1)[0])
    slopes = np.array(list(per_seed.values()), dtype=float)
    mean = float(slopes.mean()) if len(slopes) else math.nan
    half = _t_half(slopes)
    return {"slope": mean, "ci_low": mean - half, "ci_high": mean + half, "seeds": len(slopes), "per_seed": per_seed}


def position_figure(records: Sequence[dict], candidate: str, baseline: str, margin: Optional[float] = None):
    """``candidate - baseline`` by position in the window, one line per training length (mean over
    seeds, 95% t-interval from two seeds on, each seed a dot); None while no seed has a pair."""
    import matplotlib.pyplot as plt

    positions = position_frame(records)
    lengths = sorted(positions["T"].unique()) if len(positions) else []
    curves = [(t, position_differences(positions, candidate, baseline, t)) for t in lengths]
    curves = [(t, d) for t, d in curves if len(d)]
    if not curves:
        return None
    fig, ax = plt.subplots(figsize=(7.6, 3.6))
    if margin:
        ax.axhspan(-margin, margin, color="grey", alpha=0.15, lw=0, label=f"±{margin:g} (margin)")
    ax.axhline(0, color="black", lw=0.8)
    shades = plt.get_cmap("viridis")(np.linspace(0.1, 0.8, len(curves)))
    for (t, d), colour in zip(curves, shades):
        stats = d.groupby("upper")["difference"].agg(["mean", list])
        half = np.array([_t_half(np.asarray(v, dtype=float)) for v in stats["list"]])
        ax.errorbar(stats.index, stats["mean"], yerr=None if np.isnan(half).all() else np.nan_to_num(half),
                    marker="o", capsize=3, color=colour, label=f"T = {t}")
        ax.scatter(d["upper"], d["difference"], color=colour, s=10, alpha=0.4, zorder=3)
    ax.set_xscale("log", base=2)
    ax.minorticks_off()
    ax.set_xlabel("keys the query sees, i + 1 (last position of each bin)")
    ax.set_ylabel(f"{candidate} − {baseline}\n(bits/char, same seed)")
    ax.legend(frameon=False, fontsize=10, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig
