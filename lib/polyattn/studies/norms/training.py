"""Chapter 03's Figures 2 and 3 analogue: the norms of the attention matrix and of its Jacobians
during training, in an early, a middle and the last layer, against softmax's bounds, and the
numbers the section discusses."""
from __future__ import annotations

import math

import numpy as np

from ... import analysis
from ...analysis.tables import number_cell
from ...display import name
from .page import SMALL, Table1

#: The norms of Figures 2 and 3, by probe metric: the label of a row of panels and softmax's
#: bounds as (value as a multiple of sqrt(N), legend, line style).
NORM_PANELS = {
    "attn_fro": ("‖A‖_F", ((1.0, "Thm 4.1 (1): ‖A‖_F ≤ √N", "--"),)),
    "attn_fro_over_sqrt_n": ("‖A‖_F / √N", ((None, "Thm 4.1 (1) over √N: 1", "--"),)),
    "act_jac_fro": ("‖∂φ(S)/∂S‖_F", ((2.0, "Thm 4.1 (2) as stated: 2√N", "--"),
                                      (0.5, "sharp bound (chapter 02): √N/2", ":"))),
    "param_jac_fro": ("‖∂A/∂W_Q‖_F", ()),
}


def times(x: float) -> str:
    """A ratio as a reader reads it: two significant digits, "none" for a missing one."""
    return f"{x:.2g}" if x == x else "none"


def norms_figure(t1: Table1):
    """Figures 2 and 3: each norm of :data:`NORM_PANELS` (rows) in the first, a middle and the
    last layer (columns) during training, for softmax, x³/√N and the unscaled x³, with softmax's
    bounds as reference lines."""
    if not t1:
        return None
    import matplotlib.pyplot as plt

    from ...experiments import vit
    from ...plotting import activation_color, stamp

    probes = t1.probes
    layers = analysis.early_middle_last(probes["layer"])
    curves = analysis.probe_curves(probes[probes["activation"].isin(vit.NORM_ACTIVATIONS)], metrics=list(NORM_PANELS),
                                   layers=layers)
    root_n = math.sqrt(analysis.record_seq_len(t1.records[0]))
    n_layers = int(probes["layer"].max()) + 1
    fig, axes = plt.subplots(len(NORM_PANELS), len(layers), figsize=(11, 11), sharex=True, sharey="row")
    for i, (metric, (label, refs)) in enumerate(NORM_PANELS.items()):
        for j, layer in enumerate(layers):
            ax = axes[i, j]
            for act in vit.NORM_ACTIVATIONS:
                g = curves[(curves["metric"] == metric) & (curves["layer"] == layer)
                           & (curves["activation"] == act)].sort_values("step")
                col = activation_color(act)
                ax.plot(g["step"], g["mean"], color=col, marker="o", markersize=3, label=name(act))
                ax.fill_between(g["step"], g["min"], g["max"], color=col, alpha=0.15, linewidth=0)
            for factor, ref_label, style in refs:
                value = 1.0 if factor is None else factor * root_n      # None: the bound after dividing by √N
                ax.axhline(value, color="black", linestyle=style, linewidth=1, label=ref_label)
            if refs and j == 0:
                ax.legend(handles=ax.get_lines()[-len(refs):], fontsize=SMALL, frameon=False, loc="lower right")
            ax.set_yscale("log")
            if i == 0:
                ax.set_title(f"layer {layer + 1} of {n_layers}")
            if j == 0:
                ax.set_ylabel(label)
            if i == len(NORM_PANELS) - 1:
                ax.set_xlabel("training step")
    # the figure legend names the activations; each panel's own legend names its bounds
    handles, shown = axes[-1, 0].get_legend_handles_labels()
    fig.legend(handles, shown, loc="upper center", ncol=len(shown), frameon=False, bbox_to_anchor=(0.5, 1.02))
    fig.tight_layout(rect=(0, 0.03, 1, 0.98))
    stamp(fig, t1.preset, "line: mean over heads, then over seeds; band: min to max over seeds")
    return fig


def bound_values(t1: Table1) -> dict:
    """The numbers the Figures 2 and 3 section discusses: softmax's largest ‖A‖_F/√N and
    activation-Jacobian norm against its bounds (with the word "within" or "above"), the two
    cubics' largest ‖A‖_F/√N, the unscaled over the scaled cubic's activation Jacobian and their
    final accuracies."""
    keys = ("ch03_softmax_max_ratio", "ch03_softmax_bound_word", "ch03_softmax_jac_sharp", "ch03_softmax_jac_word",
            "ch03_softmax_jac_paper", "ch03_poly_max_ratio", "ch03_unscaled_max_ratio", "ch03_unscaled_jac_ratio",
            "ch03_unscaled_acc", "ch03_scaled_acc")
    out = {"ch03_t1_caption": t1.caption, **{k: t1.missing for k in keys}}
    if not t1:
        return out
    probes = t1.probes
    ratio = probes[probes["metric"] == "attn_fro_over_sqrt_n"].groupby("activation")["value"].max()
    soft_jac = probes[(probes["metric"] == "act_jac_fro") & (probes["activation"] == "softmax")]["value"]
    sharp = float(soft_jac.max() / (math.sqrt(analysis.record_seq_len(t1.records[0])) / 2)) if len(soft_jac) else np.nan
    by_act = analysis.norms_vs_accuracy(t1.records).groupby("activation", sort=False).mean(numeric_only=True)

    def value(act, column):
        return float(by_act.loc[act, column]) if act in by_act.index else np.nan

    def accuracy(act):
        acc = value(act, "test_acc")
        return f"{acc:.1f}%" if acc == acc else "none (every run diverged)"

    soft = float(ratio.get("softmax", np.nan))
    out.update({"ch03_softmax_max_ratio": f"{soft:.3f}", "ch03_softmax_bound_word": within_or_above(soft, 1.0),
                "ch03_softmax_jac_sharp": f"{sharp:.2f}", "ch03_softmax_jac_word": within_or_above(sharp, 1.0),
                "ch03_softmax_jac_paper": f"{sharp / 4:.2f}",           # 2√N is four times √N/2
                "ch03_poly_max_ratio": number_cell(float(ratio.get("poly:p=3", np.nan))),
                "ch03_unscaled_max_ratio": number_cell(float(ratio.get("poly:p=3,c=1", np.nan))),
                "ch03_unscaled_jac_ratio": times(value("poly:p=3,c=1", "act_jac_fro_mean")
                                                 / value("poly:p=3", "act_jac_fro_mean")),
                "ch03_unscaled_acc": accuracy("poly:p=3,c=1"), "ch03_scaled_acc": accuracy("poly:p=3")})
    return out


def within_or_above(value: float, bound: float) -> str:
    """"within" when ``value`` is at most ``bound``, "above" when it exceeds it, "not measured" without a value."""
    return "not measured" if value != value else ("within" if value <= bound else "above")
