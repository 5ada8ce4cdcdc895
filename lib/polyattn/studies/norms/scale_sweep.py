"""Chapter 03's Figure 1 analogue: the sweep of the constant c in c·x³ at several sequence
lengths (its figure, the table of the best constant per length and the grid in words), and
chapter 04's measured claim on Figure 1 under this chapter's names."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import analysis
from ...analysis import activation_constant
from ...analysis.tables import interval_cell, number_cell
from ...book.deliver import styled
from ...runs import page_records
from .page import SMALL, compact, plural, signed


@dataclass
class Sweep:
    """Figure 1's sweep as the page shows it: the configs, their records, ``best``
    (:func:`polyattn.analysis.best_constant`, None without runs) and the grid's caption."""

    grid: list
    records: list
    best: object
    preset: str
    caption: str


def scale_sweep(page, seeds=None, recompute: bool = False) -> Sweep:
    """The sweep of c in c·x³ at the page's preset: the stored runs at ``book``, trained under
    ``smoke``; the book's grid without runs where the page trains nothing."""
    from ...experiments import vit
    if not page.trains:
        return Sweep(vit.scale_sweep("book"), [], None, page.preset, page.not_run)
    grid = page.on_device(vit.scale_sweep(page.preset, seeds))
    records = page_records(grid, page.preset, recompute=recompute, desc="scale sweep", progress=False)
    best = (analysis.best_constant(analysis.final_accuracy(records), n_boot=1000, seed=0) if records else None)
    return Sweep(grid, records, best, page.preset, analysis.grid_caption(grid, records, page.preset))


def sweep_values(sweep: Sweep) -> dict:
    """The grid of the sweep in words: its constants, patch sizes, lengths and the factor between
    neighbouring constants, and its caption."""
    constants = sorted({activation_constant(c.activation) for c in sweep.grid})
    factor = f"{constants[1][0] / constants[0][0]:g}" if len(constants) > 1 else "none"
    return {"ch03_constants": "{" + ", ".join(label for _, label in constants) + "}",
            "ch03_patches": ", ".join(str(p) for p in sorted({c.patch_size for c in sweep.grid})),
            "ch03_n_lengths": len({c.seq_len for c in sweep.grid}), "ch03_n_constants": len(constants),
            "ch03_grid_factor": factor, "ch03_scale_caption": sweep.caption}


def scale_figure(sweep: Sweep):
    """Accuracy against the constant c at each length N (mean ± sd over seeds), with c = 1/√N
    dotted, the interpolated optimum starred and diverged runs crossed."""
    if sweep.best is None:
        return None
    import matplotlib.pyplot as plt

    from ...plotting import legend_outside, stamp

    cells, table = sweep.best.cells, sweep.best.table
    lengths = sorted(cells["seq_len"].unique())
    colours = dict(zip(lengths, plt.cm.viridis(np.linspace(0.1, 0.8, len(lengths)))))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for k, n in enumerate(lengths):
        g = cells[cells["seq_len"] == n].sort_values("c")
        col = colours[n]
        dodge = 1.03 ** (k - (len(lengths) - 1) / 2)      # a small horizontal offset keeps error bars apart
        ax.errorbar(g["c"] * dodge, g["mean"], yerr=g["std"].fillna(0), color=col, marker="o", capsize=3,
                    label=f"N = {n}")
        for _, r in g[g["n_diverged"] > 0].iterrows():
            y = r["mean"] if r["mean"] == r["mean"] else np.nanmin(cells["mean"])
            ax.scatter([r["c"]], [y], marker="x", s=80, color=col, zorder=5)
            ax.annotate(f"{int(r['n_diverged'])}/{int(r['n_runs'])} diverged", (r["c"], y), fontsize=SMALL,
                        color=col, xytext=(4, -10), textcoords="offset points")
        ax.axvline(1 / math.sqrt(n), color=col, linestyle=":", linewidth=1)
        row = table[table["seq_len"] == n].iloc[0]
        ax.scatter([row["c_star"]], [row["best_mean"]], marker="*", s=140, color=col, edgecolor="black", zorder=6)
    ax.set_xscale("log", base=2)
    ticks = cells.drop_duplicates("c").sort_values("c")
    ax.set_xticks(ticks["c"], ticks["c_label"])
    ax.minorticks_off()
    ax.set_xlabel("multiplier c in c·x³ (log scale)\ndotted: c = 1/√N; star: interpolated optimum")
    ax.set_ylabel("final test accuracy (%)")
    legend_outside(ax, title="length")  # beside the axes: inside, it covered error bars
    ax.set_title("Accuracy against the constant of c·x³ (mean ± sd over seeds)")
    stamp(ax, sweep.preset, "x: diverged runs")
    return fig


def best_constant_rows(best) -> list[dict]:
    """One row per length N: the best constant with its accuracy, the runner-up, the margin
    between them with its paired interval, the interpolated optimum beside 1/√N, and whether the
    best constant sits at the grid's edge."""
    def excludes_zero(r) -> str:
        return {True: "yes", False: "no"}.get(r.resolved, "one seed: no interval")

    def yes_no(flag) -> str:
        return "n/a" if flag is None or flag != flag else ("yes" if flag else "no")

    rows = []
    for r in best.table.sort_values("seq_len").itertuples():
        sd = f" ± {number_cell(r.best_std, '.2g')}" if r.best_std == r.best_std else ""
        rows.append({"N": int(r.seq_len), "best c": r.best_c_label, "accuracy (%) ± sd": number_cell(r.best_mean) + sd,
                     "runner-up c": r.runner_up_c_label,
                     "margin (points) [95% CI]": interval_cell(r.margin, r.margin_ci_low, r.margin_ci_high, ".3g"),
                     "interval excludes 0": excludes_zero(r),
                     "interpolated c* (1/√N)": f"{number_cell(r.c_star, missing='none')} ({number_cell(r.inv_sqrt_n)})",
                     "best at grid edge": yes_no(r.at_edge)})
    return rows


def best_constant_table(sweep: Sweep):
    """:func:`best_constant_rows` for the page, captioned with the sweep's data and scale."""
    if sweep.best is None:
        return None
    cfg = sweep.grid[0]
    seeds = len({c.seed for c in sweep.grid})
    return compact(styled(best_constant_rows(sweep.best), (
        f"The best constant c at each length N and its margin over the runner-up: description, not a test "
        f"(preset {sweep.preset}; {cfg.model} ViT on {cfg.train_subset:,} Fashion-MNIST images, not ImageNet, "
        f"{plural(cfg.epochs, 'epoch')}, {plural(seeds, 'seed')} per constant)")))


def fig1_values(finding) -> dict:
    """Chapter 04's measured claim on Figure 1 (``fig1_scale``) under this chapter's names: its
    form, the sweep that decides with its scale and stored runs, the best constant per length and
    the slope of log c* on log N with its interval."""
    from IPython.display import Markdown

    found = finding.numbers
    lengths = sorted(int(k.removeprefix("best c at N = ")) for k in found if k.startswith("best c at N = "))
    slope = found.get("slope", float("nan"))
    lo, hi = found.get("slope CI low", float("nan")), found.get("slope CI high", float("nan"))
    if slope != slope:
        slope_text = "not fitted (fewer than two lengths have an optimum inside the grid)"
    else:
        interval = f"{signed(lo)} to {signed(hi)}" if lo == lo and hi == hi and hi > lo else "none"
        slope_text = f"{signed(slope)} (95% bootstrap interval over seeds: {interval})"
    return {"ch03_fig1_form": finding.form, "ch03_fig1_sweep": Markdown(f"`{found['deciding sweep']}`"),
            "ch03_fig1_scale": Markdown(found["deciding sweep scale"]),
            "ch03_fig1_stored": f"{found['deciding sweep runs stored']} of {found['deciding sweep runs planned']}",
            "ch03_fig1_best": ", ".join(f"{found[f'best c at N = {n}']} at N = {n}" for n in lengths) or "none",
            "ch03_fig1_slope": slope_text}
