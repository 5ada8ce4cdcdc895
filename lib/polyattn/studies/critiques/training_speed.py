"""Chapter 09, "Training speed: the gap to softmax against the budget": the measured claim
``training_speed`` (:mod:`polyattn.measures.training_speed`) drawn and put in words, from its
finding's numbers alone (the page computes nothing of its own).

    speed = deliver("training_speed")
    speed_figure(speed.verdict.numbers); speed_values(speed.verdict.numbers)
"""
from __future__ import annotations

import math
from typing import Mapping

from ...analysis.tables import number_cell
from ...measures import training_speed as measure

#: The smallest font of the figure (points).
FONT = 9
#: The figure's width in pixels at its resolution: the page's column, so it is never shrunk to fit.
WIDTH_PX = 752
DPI = 100


def panels() -> list[tuple]:
    """One panel per (task, quantity): ``(task, quantity, [series])`` in the tasks' order."""
    out = []
    for task in measure.tasks():
        for quantity in dict.fromkeys(s.quantity for s in task.series):
            out.append((task, quantity, [s for s in task.series if s.quantity == quantity]))
    return out


def _points(numbers: Mapping, series) -> list[dict]:
    """A series' budgets from the finding: budget, gap, interval, pairs and learned seeds."""
    rows = []
    for tier in series.tiers:
        key = f"{series.id} at {tier.grid}"
        if f"{key}: gap" not in numbers:
            continue
        rows.append({"budget": numbers[f"{key}: budget"], "gap": numbers[f"{key}: gap"],
                     "low": numbers[f"{key}: gap CI low"], "high": numbers[f"{key}: gap CI high"],
                     "pairs": numbers[f"{key}: pairs"], "cand": numbers[f"{key}: candidate learned"],
                     "base": numbers[f"{key}: baseline learned"], "label": tier.label})
    return [r for r in rows if r["pairs"] and math.isfinite(r["gap"]) and math.isfinite(r["budget"])]


def _y_label(task) -> str:
    return "difference in log10 rMAE" if task.transform == "log10" else "difference (points)"


def _budget_tick(x: float) -> str:
    """A budget on the axis: 9.9k, 1.2M, 160."""
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if x >= size:
            v = x / size
            return f"{v:.0f}{suffix}" if v >= 10 else f"{v:.2g}{suffix}"
    return f"{x:.0f}"


def speed_figure(numbers: Mapping, preset: str = "book"):
    """The gap against the training budget (log scale), one panel per task and quantity: the mean
    paired difference with its 95% interval at each budget, a zero line and the task's margin
    shaded; a hollow marker where some seed did not learn (read as counts: the cube's learned seeds
    are written beside it)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    from ... import plotting

    shown = panels()
    ncols = 2
    nrows = math.ceil((len(shown) + 1) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(WIDTH_PX / DPI, 3.3 * nrows), dpi=DPI, squeeze=False)
    flat = list(axes.ravel())
    for ax, (task, quantity, series) in zip(flat, shown):
        margin = numbers.get(f"{task.id}: margin", math.nan)
        if math.isfinite(margin):
            ax.axhspan(-margin, margin, color="#999999", alpha=0.18, lw=0, label=f"margin ±{margin:.2g}")
        ax.axhline(0, color="black", lw=0.9)
        budgets = set()
        for i, s in enumerate(series):
            pts = _points(numbers, s)
            if not pts:
                continue
            color = plotting.activation_color(s.color_spec)
            shift = 1.1 ** i  # a small offset on the log axis keeps two series' bars apart
            xs = [p["budget"] * shift for p in pts]
            budgets.update(p["budget"] for p in pts)
            err = [[max(p["gap"] - p["low"], 0) if math.isfinite(p["low"]) else 0 for p in pts],
                   [max(p["high"] - p["gap"], 0) if math.isfinite(p["high"]) else 0 for p in pts]]
            ax.errorbar(xs, [p["gap"] for p in pts], yerr=err, color=color, lw=1.3, capsize=3, zorder=3,
                        label=s.label)
            for x, p in zip(xs, pts):
                learned = p["cand"] == p["base"] == p["pairs"]
                ax.plot([x], [p["gap"]], marker="o", ms=5.5, color=color, zorder=4,
                        markerfacecolor=color if learned else "white")
                if not learned:
                    ax.annotate(f"{p['cand']}/{p['pairs']}", (x, p["gap"]), textcoords="offset points",
                                xytext=(6, 2 - 11 * i), fontsize=FONT, color=color)
        ax.set_xscale("log")
        ticks = sorted(budgets)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.set_xticklabels([_budget_tick(x) for x in ticks])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
        if ticks:
            ax.set_xlim(ticks[0] / 1.6, ticks[-1] * 1.8)
        ax.set_title(task.name if quantity == "gap to softmax" else f"{task.name}: unscaled against scaled cube",
                     fontsize=FONT + 1)
        ax.set_xlabel(task.budget_unit, fontsize=FONT)
        ax.set_ylabel(_y_label(task), fontsize=FONT)
        ax.tick_params(labelsize=FONT)
        if budgets:
            ax.legend(fontsize=FONT, loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False, handlelength=1.2)
        else:
            ax.text(0.5, 0.5, "no runs stored", ha="center", va="center", fontsize=FONT, transform=ax.transAxes)
    for ax in flat[len(shown):]:
        ax.axis("off")
    flat[-1].text(0.02, 0.95, "Each point: the mean paired difference\nover seeds, with its 95% interval.\n"
                              "Accuracy below 0, or log10 rMAE above 0:\nthe cube is worse.\nHollow: some seed did "
                              "not learn; the\ncube's learned seeds are written beside\nit (read as counts).\n"
                              "Grey band: the task's margin.\nThe character language models have\none budget: not "
                              "drawn.", va="top", ha="left", fontsize=FONT, transform=flat[-1].transAxes)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    plotting.stamp(fig, preset, "committed records; the ViT's tiers differ in more than the budget")
    return fig


def speed_values(numbers: Mapping) -> dict[str, str]:
    """The finding's numbers the section states, as text (``ch09_speed_*``): per task its change
    (means or counts), p and Holm p and verdict, and the counts of tasks by verdict."""
    def num(x, fmt=".2f"):
        return number_cell(x, fmt) if isinstance(x, (int, float)) and math.isfinite(x) else "–"

    out = {"ch09_speed_tasks": str(numbers["tasks"]), "ch09_speed_undecided": str(numbers["tasks undecided"]),
           "ch09_speed_shrinking": str(numbers["tasks shrinking"]), "ch09_speed_alpha": f"{numbers['alpha']:g}"}
    for task in measure.tasks():
        t = task.id
        out.update({f"ch09_speed_{t}_p": num(numbers[f"{t}: p"], ".2g"),
                    f"ch09_speed_{t}_holm": num(numbers[f"{t}: Holm p"], ".2g"),
                    f"ch09_speed_{t}_verdict": numbers[f"{t}: verdict"]})
        if numbers[f"{t}: reading"] == "means":
            low, high = numbers[f"{t}: change CI low"], numbers[f"{t}: change CI high"]
            out[f"ch09_speed_{t}_change"] = f"{num(numbers[f'{t}: change'], '+.2f')} ({num(low, '+.2f')} to {num(high, '+.2f')})"
        for s in task.series:
            for tier in s.tiers:
                key = f"{s.id} at {tier.grid}"
                if f"{key}: gap" not in numbers:
                    continue
                g = f"ch09_speed_{s.id}_{tier.grid}"
                out[f"{g}_gap"] = (f"{num(numbers[f'{key}: gap'], '+.2f')} ({num(numbers[f'{key}: gap CI low'], '+.2f')}"
                                   f" to {num(numbers[f'{key}: gap CI high'], '+.2f')})")
                out[f"{g}_learned"] = f"{numbers[f'{key}: candidate learned']} of {numbers[f'{key}: pairs']}"
    return out
