"""Chapter 06, "Loss curves": the training loss and the test rMAE after each evaluated L-BFGS
step, median over seeds.

    curve_figure(runs)
"""
from __future__ import annotations

from ...analysis import physics as pa
from ...labels import PINN_LABEL, PINNSFORMER_VARIANTS
from .page import FONT, POLY, SOFTMAX, Runs, variant_name

#: The variants whose loss curves the page draws (the claim's two, the paper's fixed scale, the
#: PINN): more lines than these make a panel unreadable; every variant is in the tables.
CURVE_VARIANTS = (SOFTMAX, POLY, "x^3/14", PINN_LABEL)


def curve_figure(runs: Runs, variants=CURVE_VARIANTS):
    """Per problem, the training loss (top) and the test rMAE (bottom) after each evaluated
    L-BFGS step, median over seeds, for ``variants``; the failure threshold dotted."""
    if not runs.trains:
        return None
    import matplotlib.pyplot as plt

    from ... import plotting

    epochs = pa.physics_epochs(runs.records)
    curves = epochs.groupby(["pde", "variant", "step"], sort=False)[["train_loss", "rMAE"]].median().reset_index()
    specs = dict(PINNSFORMER_VARIANTS)
    fig, axes = plt.subplots(2, len(runs.pdes), figsize=(4.0 * len(runs.pdes), 5.2), squeeze=False)
    for j, name in enumerate(runs.pdes):
        for label in variants:
            c = curves[(curves["pde"] == name) & (curves["variant"] == label)]
            style = dict(color=plotting.activation_color(specs[label]) if label in specs else "black", lw=1.4,
                         ls="--" if label == PINN_LABEL else "-", label=variant_name(label))
            axes[0, j].plot(c["step"], c["train_loss"], **style)
            axes[1, j].plot(c["step"], c["rMAE"], **style)
        axes[0, j].set_yscale("log")
        axes[1, j].set_yscale("log")
        axes[0, j].set_title(name, fontsize=FONT + 1)
        axes[1, j].axhline(pa.FAIL_RMAE, color="grey", ls=":", lw=1)
        axes[1, j].set_xlabel("L-BFGS step", fontsize=FONT)
    axes[0, 0].set_ylabel("training loss (median)", fontsize=FONT)
    axes[1, 0].set_ylabel("test rMAE (median)", fontsize=FONT)
    axes[0, -1].legend(fontsize=FONT)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    plotting.stamp(fig, runs.preset, "dotted: the failure threshold")
    return fig
