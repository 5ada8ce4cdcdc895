"""Chapter 10's "Accuracy per architecture and variant": the architectures grid's final test
accuracy per architecture and variant, each run's, softmax's gap between DeiT and ViT, and the
same-seed differences from softmax (description: the register tests them pooled):

    accuracy_table(runs); per_seed_table(runs); deit_values(runs); accuracy_figure(runs)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis import architectures as arch
from ...analysis import per_seed_table as per_seed
from ...book.deliver import styled
from ...claims import claim
from ...display import label
from .page import FONT, OWN, SMALL, SOFTMAX, TOKENS, Runs, architecture_name, not_run, plural, readable


def differences(runs: Runs) -> pd.DataFrame:
    """Every variant minus softmax on the same architecture, paired by seed
    (:func:`polyattn.analysis.architectures.vs_softmax`)."""
    return arch.vs_softmax(runs.final)


def accuracy_rows(runs: Runs) -> list[dict]:
    """One row per architecture: its own N (x³/√N's, the first attention layer's) and each
    variant's final test accuracy, mean ± sd over seeds, with any diverged runs (XCiT's N = tokens
    with its N)."""
    summary = arch.accuracy_summary(runs.final)
    n = runs.final.groupby(["architecture", "variant"], sort=False)["seq_len"].first()
    variants = [v for v in arch.VARIANTS if v in set(summary["variant"])]
    rows = {}
    for _, r in summary.iterrows():
        a, v = r["architecture"], r["variant"]
        row = rows.setdefault(a, {"Architecture": architecture_name(a),
                                  "N": int(n[(a, OWN)]) if (a, OWN) in n.index else "",
                                  **dict.fromkeys(map(readable, variants), "")})
        acc = "" if r["mean"] != r["mean"] else f"{r['mean']:.1f}" + ("" if r["std"] != r["std"] else f" ± {r['std']:.1f}")
        if r["n_diverged"]:
            acc += f" ({r['n_diverged']} diverged)"
        if v == TOKENS:
            acc += f" (N = {int(n[(a, v)])})"
        row[readable(v)] = acc
    return list(rows.values())


def accuracy_table(runs: Runs):
    """:func:`accuracy_rows`, styled, with a caption that says what the rows are."""
    if not runs.trains:
        return not_run(runs)
    return styled(accuracy_rows(runs), runs.caption(
        "Final test accuracy (%), mean ± sd over seeds, per architecture and variant; N: the architecture's own, as "
        "x³/√N used it")).set_table_styles(SMALL, overwrite=False)


def per_seed_table(runs: Runs):
    """Each run's final test accuracy (%), one column per seed."""
    if not runs.trains:
        return not_run(runs)
    table = per_seed(runs.final, index=["architecture", "variant"])
    rows = [{"Architecture": architecture_name(r["architecture"]), "Variant": readable(r["variant"]),
             **{k: v for k, v in r.items() if str(k).startswith("seed ")}} for r in table.to_dict("records")]
    return styled(rows, runs.caption("Each run's final test accuracy (%)"))


def deit_values(runs: Runs) -> dict[str, str]:
    """Softmax's mean accuracy on ViT and on DeiT (the same model, DeiT with its augmentation and
    drop-path), the gap between them and whether DeiT is ``below`` or ``above``."""
    if not runs.trains:
        return {k: runs.not_run for k in ("vit", "deit", "gap", "direction")}
    summary = arch.accuracy_summary(runs.final)
    soft = summary[summary["variant"] == SOFTMAX].set_index("architecture")["mean"]
    gap = float(soft["deit"] - soft["vit"])
    return {"vit": f"{soft['vit']:.1f}%", "deit": f"{soft['deit']:.1f}%", "gap": f"{abs(gap):.1f}",
            "direction": "below" if gap < 0 else "above"}


def accuracy_figure(runs: Runs):
    """Two panels: each run's final accuracy per architecture and variant (bars: mean ± sd), and
    the same-seed differences from softmax with their 95% intervals and the margin's band."""
    import matplotlib.pyplot as plt

    from ... import plotting
    if not runs.trains:
        return None
    final, diffs, margin = runs.final, differences(runs), claim("table2_architectures").margin
    archs = list(dict.fromkeys(final["architecture"]))
    variants = [v for v in arch.VARIANTS if v in set(final["variant"])]
    colours = {v: plt.get_cmap("tab10")(i) for i, v in enumerate(variants)}
    width = 0.8 / len(variants)
    pairs = final.pivot_table(index=["architecture", "seed"], columns="variant", values="test_acc") * 100.0
    fig, (ax, ax_d) = plt.subplots(1, 2, figsize=(11, 4.2))
    for j, v in enumerate(variants):
        for i, a in enumerate(archs):
            sub = final[(final["architecture"] == a) & (final["variant"] == v)]
            if sub.empty:
                continue
            x = i + (j - (len(variants) - 1) / 2) * width
            vals = sub["test_acc"].to_numpy(dtype=float) * 100.0
            vals = vals[np.isfinite(vals)]
            ax.scatter(np.full(len(vals), x), vals, color=colours[v], s=16, alpha=0.6)
            if len(vals):
                ax.errorbar(x, vals.mean(), yerr=vals.std(ddof=1) if len(vals) > 1 else 0, fmt="_", markersize=14,
                            color=colours[v], capsize=4)
            d = diffs[(diffs["architecture"] == a) & (diffs["variant"] == v)]
            if v == SOFTMAX or d.empty:
                continue
            per_seed = (pairs.loc[a, v] - pairs.loc[a, SOFTMAX]).dropna().to_numpy()
            ax_d.scatter(np.full(len(per_seed), x), per_seed, color=colours[v], s=16, alpha=0.6)
            lo, hi, m = (float(d[k].iloc[0]) for k in ("ci_low", "ci_high", "mean_diff"))
            if lo == lo:
                ax_d.errorbar(x, m, yerr=[[m - lo], [hi - m]], fmt="_", markersize=14, color=colours[v], capsize=4)
    ax_d.axhspan(-margin, margin, color="grey", alpha=0.15, lw=0)
    ax_d.axhline(0, color="grey", lw=0.8)
    own_n = final[final["variant"] == OWN].groupby("architecture")["seq_len"].first()
    ticks = [f"{architecture_name(a)}\nN = {int(own_n[a])}" if a in own_n.index else architecture_name(a) for a in archs]
    for a_ in (ax, ax_d):
        a_.set_xticks(range(len(archs)))
        a_.set_xticklabels(ticks, fontsize=FONT + 1)
        a_.tick_params(labelsize=FONT + 1)
    for v in variants:
        ax_d.scatter([], [], color=colours[v], label=label(v))
    ax.set_ylabel("final test accuracy (%)", fontsize=FONT + 1)
    ax.set_title("Accuracy\neach dot a seed; bars mean ± sd", fontsize=FONT + 1)
    ax_d.set_ylabel("minus softmax, same seed (points)", fontsize=FONT + 1)
    ax_d.set_title(f"Paired differences\nbars 95% CI; band ±{margin:g}", fontsize=FONT + 1)
    plotting.legend_outside(ax_d, title="variant")
    c0 = runs.configs[0]
    # under the right panel, reaching left under the other: a stamp wider than one panel fits the figure
    plotting.stamp(ax_d, runs.preset, f"Fashion-MNIST, {c0.train_subset:,} images, {plural(c0.epochs, 'epoch')}")
    fig.tight_layout()
    return fig

