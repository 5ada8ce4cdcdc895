"""Chapter 09, "Scale sensitivity, on one axis": the paper's constants on the axis k = c·sqrt(N),
and the scale sweep's records (chapter 04) read for the factor of 2 in k around the paper's rule.
"""
from __future__ import annotations

import numpy as np

from ...analysis import critiques as crit
from ...analysis.tables import interval_cell, number_cell
from ...book.deliver import styled
from ...measures import critique_scale as measured
from .page import first_only, nothing_stored


def constants_table():
    """The paper's constants on the axis k = c·sqrt(N) (:func:`polyattn.analysis.critiques.paper_constants`)."""
    consts = crit.paper_constants()
    return styled([{"setting": setting, "c": r["c"], "N (patches)": int(r["patch_tokens"]),
                    "k = c·√N": number_cell(r["k_patches"]), "k with CLS (N + 1)": number_cell(r["k_with_cls"], ".4g")}
                   for setting, (_, r) in zip(first_only(consts["setting"]), consts.iterrows())],
                  "The paper's constants on the axis k = c·√N (the paper does not say which patch size it used)")


def scale_table(records, preset: str):
    """Per sequence length of the scale sweep: the factor of 2 in k from 1 to 2 (each seed's curve
    interpolated in log k) with its interval, and the whole grid's best constant and range."""
    if not records:
        return nothing_stored()
    effects = measured.factor_effects(measured.sweep_final(records))
    e12 = effects[effects["k_low"] == measured.K_LOW]
    rows = [{"N": int(r["seq_len"]), "k = 1 → 2: Δ accuracy (points) [95% CI]":
             interval_cell(r["diff"], r["ci_low"], r["ci_high"], "+.1f"), "seeds": int(r["n_seeds"]),
             "best k on the grid": number_cell(r["best_k"]), "best accuracy (%)": f"{r['best_mean']:.1f}",
             "best − worst (points)": f"{r['range']:.1f}", "constants differ, F-test p": number_cell(r["f_test_p"], ".2g")}
            for _, r in e12.iterrows()]
    c = records[0]["config"]
    return styled(rows, f"A factor of 2 in k around the paper's rule, and the whole grid of constants (a factor of 256 "
                        f"in k), per sequence length: scale sweep, micro ViT, {c['train_subset']:,} Fashion-MNIST images, "
                        f"{c['epochs']} epochs (far from convergence), preset {preset}; the paper's own sweep is not "
                        "published")


def scale_figure(records, preset: str):
    """Final accuracy against k (log scale), one line per sequence length, with the paper's constants."""
    if not records:
        return None
    import matplotlib.pyplot as plt

    from ... import plotting

    final = measured.sweep_final(records)
    cells = (final[final["status"] == "ok"].groupby(["seq_len", "k"])["test_acc"]
             .agg(["mean", "std", "count"]).reset_index())
    fig, ax = plt.subplots(figsize=(7, 2.7))
    lengths = sorted(cells["seq_len"].unique())
    colours = dict(zip(lengths, plt.cm.viridis(np.linspace(0.1, 0.8, len(lengths)))))
    for n, g in cells.groupby("seq_len"):
        ax.errorbar(g["k"], 100 * g["mean"], yerr=100 * g["std"].fillna(0), color=colours[n], marker="o",
                    capsize=3, label=f"N = {n}")
    for k in measured.paper_k_values():
        ax.axvline(k, color="grey", linestyle=":", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k = c·√N (log scale); dotted: the paper's constants")
    ax.set_ylabel("final test accuracy (%)")
    plotting.legend_outside(ax)
    fig.tight_layout()
    plotting.stamp(ax, preset, "mean ± sd over seeds; short training")
    return fig
