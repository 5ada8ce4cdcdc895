"""Chapter 05, "Accuracy against length": test accuracy per variant and bin of real length on
the tasks whose sequences vary in length.

    length_figure(runs); length_tables(runs)
"""
from __future__ import annotations

import pandas as pd

from ...analysis import lra as lra_analysis
from ...book.deliver import styled
from ...experiments import lra as grids
from .page import FONT, Runs, shared_legend, task_name, variant_lines, variant_name


def length_frame(runs: Runs) -> pd.DataFrame:
    """:func:`polyattn.analysis.lra.length_table` of the variable-length tasks."""
    records = [r for r in runs.records if grids.task_of(r["config"]) in grids.VARIABLE_LENGTH_TASKS]
    return lra_analysis.length_table(lra_analysis.length_accuracy(records))


def length_tables(runs: Runs) -> list:
    """One table per variable-length task: test accuracy per variant and length bin."""
    if not runs.trains:
        return []
    frame = length_frame(runs)
    out = []
    for t in [t for t in runs.tasks if t in grids.VARIABLE_LENGTH_TASKS]:
        sub = frame[frame["lra_task"] == t] if len(frame) else frame
        if sub.empty:
            continue
        rows = [{"Variant": variant_name(v), **{f"{lbl} tokens": f"{a:.1f}" for lbl, a in zip(g["bin_label"], g["acc"])}}
                for v, g in sub.groupby("variant", sort=False)]
        out.append(styled(rows, runs.caption(f"{task_name(t)}: test accuracy (%) by real length, mean over seeds")))
    return out


def length_figure(runs: Runs):
    """Test accuracy against real length, one panel per variable-length task (None without runs)."""
    if not runs.trains:
        return None
    import matplotlib.pyplot as plt

    frame = length_frame(runs)
    tasks = [t for t in runs.tasks if t in grids.VARIABLE_LENGTH_TASKS and len(frame)
             and (frame["lra_task"] == t).any()]
    if not tasks:
        return None
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.6 * len(tasks), 3.6), squeeze=False)
    axes = axes[0]
    for ax, t in zip(axes, tasks):
        sub = frame[frame["lra_task"] == t]
        variant_lines(ax, sub, "bin", "acc")
        bins = sub.drop_duplicates("bin").sort_values("bin")
        ax.set_xticks(list(bins["bin"]))
        ax.set_xticklabels(list(bins["bin_label"]), fontsize=FONT)
        ax.set_title(task_name(t))
        ax.set_xlabel("real length (tokens)")
    axes[0].set_ylabel("test accuracy (%)")
    shared_legend(fig, axes)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig
