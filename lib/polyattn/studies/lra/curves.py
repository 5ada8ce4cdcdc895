"""Chapter 05, "Learning curves": test accuracy after every epoch, one panel per task whose
curves say more than a table.

    fig, left_out = curve_figure(runs)
"""
from __future__ import annotations

from ...analysis import lra as lra_analysis
from .page import Runs, shared_legend, task_name, variant_lines

#: A learning-curve panel whose curves all stay within this many points of one another is left out.
FLAT_POINTS = lra_analysis.FLAT_CURVE_POINTS


WHY_LEFT_OUT = {"one epoch": "one epoch", "flat": "flat", "no runs": "no runs"}


def curve_figure(runs: Runs):
    """Test accuracy after every epoch, mean over seeds, one panel per task whose curves say more
    than a table (several epochs, curves not all level); returns ``(figure or None, the tasks left
    out with why)``."""
    if not runs.trains:
        return None, runs.not_run
    import matplotlib.pyplot as plt

    epochs = lra_analysis.lra_epochs(runs.records)
    curves = epochs.groupby(["lra_task", "variant", "epoch"], sort=False)["test_acc"].mean().reset_index()
    panels = lra_analysis.curve_panels(epochs)
    drawn = [t for t in runs.tasks if panels.get(t, "no runs") is None]
    left = ", ".join(f"{task_name(t)} ({WHY_LEFT_OUT[panels.get(t, 'no runs')]})" for t in runs.tasks
                     if t not in drawn) or "none"
    if not drawn:
        return None, left
    fig, axes = plt.subplots(1, len(drawn), figsize=(3.4 * len(drawn), 3.4), squeeze=False)
    axes = axes[0]
    for ax, t in zip(axes, drawn):
        c = curves[curves["lra_task"] == t]
        variant_lines(ax, c, "epoch", "test_acc", 100)
        if t in runs.chance:
            ax.axhline(100 * runs.chance[t], color="grey", ls=":", lw=1, label="chance")
        ax.set_title(task_name(t))
        ax.set_xlabel("epoch")
        ax.set_xticks(sorted(c["epoch"].unique()))
    axes[0].set_ylabel("test accuracy (%)")
    shared_legend(fig, axes)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig, left
