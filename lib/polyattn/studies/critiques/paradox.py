"""Chapter 09, "The norm paradox": Table 1's records (chapter 04) read for the attention norm, the
activation Jacobian and the gradient arriving at the attention weights of each cubic against
x/sqrt(N), cell by cell and over training, and each norm's correlation with accuracy.
"""
from __future__ import annotations

import pandas as pd

from ... import analysis
from ...analysis import critiques as crit
from ...analysis.tables import interval_cell, number_cell
from ...book.deliver import styled
from ...display import name
from ...measures import critique_paradox as measured
from ...measures.critique_common import LINEAR
from .page import SMALL_TYPE, TABLE1_DEVIATION, compact, first_only, nothing_stored

#: The norm paradox's activations, x/sqrt(N) (the paper's x/16) first.
PARADOX = measured.PARADOX_ACTIVATIONS
#: The probe metrics compared with x/sqrt(N), as a reader names them.
NORM_LABELS = {"attn_fro": "‖A‖_F", "act_jac_fro": "‖∂φ(S)/∂S‖_F", "grad_attn_fro": "‖∂L/∂A‖_F"}
#: The norms correlated with accuracy (each run's mean over its probes), as a reader names them.
CORRELATED = {"attn_fro_over_sqrt_n_mean": "‖A‖_F/√N", "act_jac_fro_mean": "‖∂φ(S)/∂S‖_F",
              "grad_attn_fro_mean": "‖∂L/∂A‖_F"}
#: The members of the family c·x^p in Table 1: they differ only in the power and the scale.
FAMILY = ("poly:p=1", "poly:p=2", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1")
FAMILY_LABEL, ALL_LABEL = "c·xᵖ family", "all activations"


def paradox_accuracy_table(records, preset: str):
    """Final accuracy (mean ± sd over seeds) of each activation of :data:`PARADOX`, its paired
    difference from x/sqrt(N) and each norm averaged over every probe, layer and head."""
    if not records:
        return nothing_stored()
    final = analysis.final_accuracy(records)
    acc = analysis.summary_table(final[final["activation"].isin(list(PARADOX))]).set_index("activation")
    diffs = measured.paradox_accuracy(records).set_index("activation")
    probes = analysis.probe_frame([r for r in records if r["config"]["activation"] in PARADOX], list(NORM_LABELS))
    means = probes.groupby(["activation", "metric"])["value"].mean().unstack()
    ref = name(LINEAR)
    rows = [{"activation": name(a), "accuracy (%), mean ± sd": f"{acc.loc[a, 'mean']:.2f} ± {acc.loc[a, 'std']:.2f}",
             f"Δ vs {ref} (points) [95% CI]": "" if a == LINEAR else interval_cell(
                 *diffs.loc[a, ["mean_diff", "ci_low", "ci_high"]]),
             **{f"{lbl}, mean over training": number_cell(means.loc[a, m]) for m, lbl in NORM_LABELS.items()}}
            for a in PARADOX if a in acc.index]
    seeds = len({r["seed"] for r in records})
    return styled(rows, f"Final accuracy over {seeds} seeds and each norm averaged over every probe, layer and head "
                        f"(Table 1 records, preset {preset}); the differences are description, the register's "
                        "verdict reads the correlations" + TABLE1_DEVIATION)


def paradox_order(records) -> pd.DataFrame:
    """Each cubic of :data:`PARADOX` against x/sqrt(N), cell by cell
    (:func:`polyattn.analysis.critiques.norm_order`)."""
    probes = analysis.probe_frame([r for r in records if r["config"]["activation"] in PARADOX], list(NORM_LABELS))
    cubics = [a for a in PARADOX if a not in (LINEAR, "softmax")]
    return pd.concat([crit.norm_order(probes, a, LINEAR, list(NORM_LABELS)) for a in cubics],
                     ignore_index=True)


def paradox_order_table(records, detailed: bool = False):
    """:func:`paradox_order` for people: per cubic, the share of cells where each norm is below
    x/sqrt(N)'s at the first probe and at the later ones; ``detailed``: one row per cubic and norm,
    with the cells and the ratio of the norms."""
    if not records:
        return nothing_stored()
    order = paradox_order(records)
    ref = name(LINEAR)
    caption = (f"Each cubic against {ref}, cell by cell (one seed, layer and probed step, mean over heads; Table 1 "
               "records, book preset)" + TABLE1_DEVIATION)
    if not detailed:
        rows = [{"activation": name(act), "cells": int(g["n_cells"].iloc[0]),
                 **{NORM_LABELS[r["metric"]]: f"{r['share_lower_first']:.0%} / {r['share_lower_rest']:.0%}"
                    for _, r in g.iterrows()}}
                for act, g in order.groupby("activation", sort=False)]
        return compact(styled(rows, caption + f": the share of cells where the cubic's norm is below {ref}'s, at the "
                                              "first probe / at the later ones"))
    rows = [{"activation": shown, "norm": NORM_LABELS[r["metric"]], "cells": int(r["n_cells"]),
             f"share below {ref}, first probe": f"{r['share_lower_first']:.0%}",
             "share below, later probes": f"{r['share_lower_rest']:.0%}",
             "ratio, median (min to max)": f"{number_cell(r['median_ratio'])} ({number_cell(r['min_ratio'])} to "
                                           f"{number_cell(r['max_ratio'])})"}
            for shown, (_, r) in zip(first_only(order["activation"].map(name)), order.iterrows())]
    return styled(rows, caption + f"; ratio: the cubic's norm over {ref}'s")


def norm_curves(records) -> pd.DataFrame:
    """Per activation of :data:`PARADOX`, norm and probed step: the mean over layers and heads of
    each run, then its mean, min and max over seeds."""
    probes = analysis.probe_frame([r for r in records if r["config"]["activation"] in PARADOX], list(NORM_LABELS))
    steps = probes.groupby(["activation", "metric", "step", "run"])["value"].mean().reset_index()
    return steps.groupby(["activation", "metric", "step"])["value"].agg(["mean", "min", "max"]).reset_index()


def norm_figure(records, preset: str):
    """The three norms of :data:`PARADOX` over training (mean over layers and heads, then seeds;
    band: min to max over seeds), one panel per norm."""
    if not records:
        return None
    import matplotlib.pyplot as plt

    from ... import plotting
    curves = norm_curves(records)
    fig, axes = plt.subplots(1, len(NORM_LABELS), figsize=(7, 2.8))
    for ax, (metric, label) in zip(axes, NORM_LABELS.items()):
        for act in PARADOX:
            g = curves[(curves["activation"] == act) & (curves["metric"] == metric)].sort_values("step")
            col = plotting.activation_color(act)
            ax.plot(g["step"], g["mean"], color=col, marker="o", markersize=3, label=name(act))
            ax.fill_between(g["step"], g["min"], g["max"], color=col, alpha=0.15, linewidth=0)
        ax.set_yscale("log")
        ax.set_xlabel("training step")
        ax.set_title(label)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.tight_layout(rect=(0, 0.09, 1, 0.95))
    plotting.stamp(fig, preset, "mean over layers, heads and seeds; band: min to max over seeds", loc="upper right")
    return fig


def norm_correlations(records, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Spearman's rho of each norm of :data:`CORRELATED` with final accuracy, among the family
    c·x^p and over all activations (:func:`polyattn.analysis.correlation_table`), with the subset
    (``subset``) and its number of activations."""
    if not records:
        return pd.DataFrame()
    norms = analysis.norms_vs_accuracy(records, metrics=tuple(c.removesuffix("_mean") for c in CORRELATED))
    out = []
    for subset, frame in ((FAMILY_LABEL, norms[norms["activation"].isin(FAMILY)]), (ALL_LABEL, norms)):
        c = analysis.correlation_table(frame, list(CORRELATED), n_boot=n_boot, seed=seed, cluster="activation")
        out.append(c.assign(subset=subset, activations=frame["activation"].nunique()))
    return pd.concat(out, ignore_index=True)


def correlation_table(corr: pd.DataFrame, n_boot: int, preset: str):
    """:func:`norm_correlations` for people (the p-values left out for the page's width: the
    intervals beside them carry the same reading)."""
    if corr.empty:
        return nothing_stored()
    rows = [{"activations": r["subset"], **{k: v for k, v in row.items() if k not in ("p", "p within (permutation)")}}
            for row, (_, r) in zip(analysis.correlation_rows(corr, CORRELATED), corr.iterrows())]
    table = styled(rows, f"Spearman's ρ of each norm (mean over a run's probes) with test accuracy; intervals by "
                         f"bootstrap over runs ({n_boot} resamples) and over whole activations; Table 1 records, "
                         f"preset {preset}" + TABLE1_DEVIATION)
    return table.set_table_styles(SMALL_TYPE, overwrite=False)


def correlation_numbers(corr: pd.DataFrame) -> dict:
    """The rows of :func:`norm_correlations` as numbers ``<subset>_<norm>_<what>`` (subset
    ``family`` or ``all``; norm ``attention``, ``jacobian`` or ``gradient``; what ``rho``,
    ``ci_low``/``ci_high`` over runs, ``activations_ci_low``/``high``, ``within_rho``, ``runs``),
    with ``family_activations`` and ``family_attention_direction``: the accuracy ("lower" or
    "higher") that goes with a larger attention norm across the family's runs."""
    if corr.empty:
        return {}
    keys = dict(zip(CORRELATED, ("attention", "jacobian", "gradient")))
    out = {}
    for _, r in corr.iterrows():
        stem = f"{'family' if r['subset'] == FAMILY_LABEL else 'all'}_{keys[r['norm']]}"
        out.update({f"{stem}_rho": float(r["rho"]), f"{stem}_ci_low": float(r["ci_low"]),
                    f"{stem}_ci_high": float(r["ci_high"]), f"{stem}_activations_ci_low": float(r["cluster_ci_low"]),
                    f"{stem}_activations_ci_high": float(r["cluster_ci_high"]),
                    f"{stem}_within_rho": float(r["within_rho"]), f"{stem}_runs": int(r["n"])})
    out["family_activations"] = int(corr.loc[corr["subset"] == FAMILY_LABEL, "activations"].iloc[0])
    rho = out.get("family_attention_rho", float("nan"))
    out["family_attention_direction"] = "lower" if rho < 0 else "higher" if rho > 0 else "the same"
    return out


#: The correlation numbers the page's prose glues (prefix ``ch09_corr``).
CORRELATION_FORMATS = {"family_attention_rho": "+.2f", "family_attention_ci_low": "+.2f",
                       "family_attention_ci_high": "+.2f", "family_attention_runs": "d", "family_activations": "d",
                       "family_attention_direction": "", "all_gradient_rho": "+.2f",
                       "all_gradient_activations_ci_low": "+.2f", "all_gradient_activations_ci_high": "+.2f"}
