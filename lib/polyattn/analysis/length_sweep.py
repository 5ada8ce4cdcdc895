"""The sqrt(N) scaling across training lengths (chapter 07): bits per character against the training
length T per variant, and how a paired difference changes with log2 T.

Records are those of the ``causal_length_sweep`` grid: one position-free character model per
variant, training length and seed, each evaluated at T, 2T and 4T.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import pandas as pd

#: The variants of the sweep by (activation spec, reading of N), in the order a figure shows them.
VARIANTS = {("softmax", "row"): "softmax", ("poly:p=3,c=1", "row"): "x³", ("poly:p=3", "row"): "x³/√(i+1)",
            ("poly:p=3", "fixed"): "x³/√T"}
METRICS = {"test_bpc": "T", "test_bpc_x2": "2T", "test_bpc_x4": "4T"}


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


def paired_by_length(frame: pd.DataFrame, candidate: str, baseline: str, metric: str = "test_bpc") -> pd.DataFrame:
    """Per training length: the mean paired difference ``candidate - baseline`` (same seed), its 95%
    t-interval and the number of pairs."""
    from scipy import stats

    out = []
    for t, g in frame.groupby("T"):
        c = g[g["variant"] == candidate].set_index("seed")[metric]
        b = g[g["variant"] == baseline].set_index("seed")[metric]
        d = (c - b).dropna()
        n = len(d)
        mean = float(d.mean()) if n else math.nan
        half = float(stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / math.sqrt(n)) if n >= 2 else math.nan
        out.append({"T": int(t), "difference": mean, "ci_low": mean - half, "ci_high": mean + half, "pairs": n})
    return pd.DataFrame(out, columns=["T", "difference", "ci_low", "ci_high", "pairs"])


def slope_over_log_length(frame: pd.DataFrame, candidate: str, baseline: str, metric: str = "test_bpc") -> dict:
    """How the paired difference grows per doubling of T: each seed's least-squares slope of
    ``candidate - baseline`` on log2 T (over the lengths that seed has in both arms, at least two),
    then the mean slope over seeds with its 95% t-interval."""
    from scipy import stats

    slopes = []
    for _, g in frame.groupby("seed"):
        c = g[g["variant"] == candidate].set_index("T")[metric]
        b = g[g["variant"] == baseline].set_index("T")[metric]
        d = (c - b).dropna()
        if len(d) >= 2:
            x = np.log2(np.asarray(d.index, dtype=float))
            slopes.append(float(np.polyfit(x, d.to_numpy(dtype=float), 1)[0]))
    n = len(slopes)
    mean = float(np.mean(slopes)) if n else math.nan
    half = float(stats.t.ppf(0.975, n - 1) * np.std(slopes, ddof=1) / math.sqrt(n)) if n >= 2 else math.nan
    return {"slope": mean, "ci_low": mean - half, "ci_high": mean + half, "seeds": n}


def sweep_figure(frame: pd.DataFrame, candidate: str = "x³", baseline: str = "x³/√(i+1)"):
    """Two panels: test bits/char at the training length against T per variant (mean over seeds,
    95% t-interval), and the paired difference ``candidate - baseline`` against T."""
    import matplotlib.pyplot as plt
    from scipy import stats

    from ..plotting import activation_color

    colours = {"softmax": activation_color("softmax"), "x³": activation_color("poly:p=3,c=1"),
               "x³/√(i+1)": activation_color("poly:p=3"), "x³/√T": activation_color("poly:p=3")}
    styles = {"x³/√T": "--"}
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 4.0))
    for variant, g in frame[frame["status"] == "ok"].groupby("variant", sort=False):
        agg = g.groupby("T")["test_bpc"].agg(["mean", "std", "count"]).reset_index()
        half = [stats.t.ppf(0.975, k - 1) * s / math.sqrt(k) if k >= 2 else 0.0
                for s, k in zip(agg["std"], agg["count"])]
        left.errorbar(agg["T"], agg["mean"], yerr=half, marker="o", capsize=3, label=variant,
                      color=colours.get(variant), linestyle=styles.get(variant, "-"))
    left.set_xscale("log", base=2)
    left.set_xlabel("training length T")
    left.set_ylabel("test bits per character at T")
    left.legend(frameon=False, fontsize=9)
    paired = paired_by_length(frame, candidate, baseline)
    right.errorbar(paired["T"], paired["difference"], yerr=[paired["difference"] - paired["ci_low"],
                                                             paired["ci_high"] - paired["difference"]],
                   marker="o", capsize=3, color=colours.get(candidate))
    right.axhline(0, color="black", lw=0.8)
    right.set_xscale("log", base=2)
    right.set_xlabel("training length T")
    right.set_ylabel(f"{candidate} − {baseline} (bits/char, same seed)")
    fig.tight_layout()
    return fig
