"""Chapter 03's tables, figures and glued values (norms during training).

Each section of the chapter loads what it shows with one call, so that it reruns on its own
after the chapter's setup cell:

    sweep = scale_sweep(page, seeds, recompute)        # Figure 1's sweep of c at several lengths
    glue_values(sweep_values(sweep)); scale_figure(sweep); best_constant_table(sweep)
    glue_values(fig1_values(finding))                  # chapter 04's verdict on Figure 1, as ch03_fig1_*
    t1 = table1_runs(page, seeds, recompute)           # Table 1's runs, with their probes
    norms_figure(t1); glue_values(bound_values(t1))    # Figures 2 and 3
    correlation_figure(t1); correlation_table(t1); glue_values(norms_values(finding))
    iv = intervention_runs()                           # the book's committed intervention records
    accuracy_table(iv); norm_check_table(iv); k_figure(iv); glue_values(intervention_values(iv))
    maps = attention_maps(page, recompute); maps_figure(maps); glue_values(map_values(maps))

``page`` is the chapter's :class:`polyattn.presets.Prologue` (preset, device, whether it trains,
and the phrase that stands for a number it does not compute).  A figure function returns the
figure (None when there is nothing to draw); a table function returns a styled table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Optional

import numpy as np
import pandas as pd

from ..analysis.tables import bracket_cell, interval_cell, number_cell
from ..display import name
from .shown import glue_keyed

#: The norms of Figures 2 and 3, by probe metric: the label of a row of panels and softmax's
#: bounds as (value as a multiple of sqrt(N), legend, line style).
NORM_PANELS = {
    "attn_fro": ("‖A‖_F", ((1.0, "Thm 4.1 (1): ‖A‖_F ≤ √N", "--"),)),
    "attn_fro_over_sqrt_n": ("‖A‖_F / √N", ((None, "Thm 4.1 (1) over √N: 1", "--"),)),
    "act_jac_fro": ("‖∂φ(S)/∂S‖_F", ((2.0, "Thm 4.1 (2) as stated: 2√N", "--"),
                                      (0.5, "sharp bound (chapter 02): √N/2", ":"))),
    "param_jac_fro": ("‖∂A/∂W_Q‖_F", ()),
}
#: The norms correlated with accuracy (each run's mean over its probes), as a reader names them;
#: the columns and the order of :data:`polyattn.measures.norms.NORMS`.
CORRELATED = {"attn_fro_over_sqrt_n_mean": "‖A‖_F / √N", "act_jac_fro_mean": "‖∂φ(S)/∂S‖_F",
              "param_jac_fro_mean": "‖∂A/∂W_Q‖_F"}
#: The activations drawn in colour in the correlation figure (every other one in grey).
HIGHLIGHT = ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1")
#: Glue keys of the finding's numbers of each norm of ``norms_predict``.
NORM_KEYS = {"attention norm": "attn", "activation Jacobian": "act_jac", "parameter Jacobian": "param_jac"}
#: The smallest font of any figure text, in points.
SMALL = 9


#: Glue each value under its key, for the page's ``{glue:text}`` and ``{glue:md}`` references.
glue_values = glue_keyed


def signed(x: float, digits: int = 2) -> str:
    """``+0.21`` / ``−0.06`` with a typographic minus; "none" for a missing number."""
    from ..display import typographic

    return typographic(f"{x:+.{digits}f}") if x == x and x is not None else "none"


def plural(n: int, noun: str) -> str:
    """"1 epoch", "6 epochs"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def times(x: float) -> str:
    """A ratio as a reader reads it: two significant digits, "none" for a missing one."""
    return f"{x:.2g}" if x == x else "none"


# --- Figure 1: the best constant at several lengths -------------------------------------------------


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
    from .. import analysis
    from ..experiments import vit
    from ..runs import page_records

    if not page.trains:
        return Sweep(vit.scale_sweep("book"), [], None, page.preset, page.not_run)
    grid = page.on_device(vit.scale_sweep(page.preset, seeds))
    records = page_records(grid, page.preset, recompute=recompute, desc="scale sweep", progress=False)
    best = (analysis.best_constant(analysis.final_accuracy(records), n_boot=1000, seed=0) if records else None)
    return Sweep(grid, records, best, page.preset, analysis.grid_caption(grid, records, page.preset))


def sweep_values(sweep: Sweep) -> dict:
    """The grid of the sweep in words: its constants, patch sizes, lengths and the factor between
    neighbouring constants, and its caption."""
    from ..analysis import activation_constant

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

    from ..plotting import stamp

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
    ax.legend(frameon=False)
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
    from ..book.deliver import styled

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


def compact(table):
    """A table with many columns, in a smaller type so that it fits the page's column."""
    return table.set_table_styles([{"selector": "th, td", "props": "font-size: 0.82em"}], overwrite=False)


# --- Figures 2 and 3: norms during training ---------------------------------------------------------


@dataclass
class Table1:
    """Table 1's runs as the page shows them: the configs, their records, the probe frame and
    the grid's caption (records and probes empty where the page trains nothing)."""

    grid: list
    records: list
    preset: str
    caption: str
    probes: pd.DataFrame = field(default_factory=pd.DataFrame)
    missing: str = "no run stored"      # what stands for a number the page cannot compute

    def __bool__(self) -> bool:
        return bool(self.records)


def table1_runs(page, seeds=None, recompute: bool = False) -> Table1:
    """Table 1's runs at the page's preset (stored at ``book``, trained under ``smoke``), with
    their probes."""
    from .. import analysis
    from ..experiments import vit
    from ..runs import page_records

    if not page.trains:
        return Table1(vit.table1("book"), [], page.preset, page.not_run, missing=page.not_run)
    grid = page.on_device(vit.table1(page.preset, seeds))
    records = page_records(grid, page.preset, recompute=recompute, desc="table 1", progress=False)
    probes = analysis.probe_frame(records) if records else pd.DataFrame()
    return Table1(grid, records, page.preset, analysis.grid_caption(grid, records, page.preset), probes)


def norms_figure(t1: Table1):
    """Figures 2 and 3: each norm of :data:`NORM_PANELS` (rows) in the first, a middle and the
    last layer (columns) during training, for softmax, x³/√N and the unscaled x³, with softmax's
    bounds as reference lines."""
    if not t1:
        return None
    import matplotlib.pyplot as plt

    from .. import analysis
    from ..experiments import vit
    from ..plotting import activation_color, stamp

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
    from .. import analysis

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


# --- do the norms predict accuracy? -----------------------------------------------------------------


def run_norms(t1: Table1) -> pd.DataFrame:
    """One row per run: its norms averaged over training and its final accuracy
    (:func:`polyattn.analysis.norms_vs_accuracy`)."""
    from .. import analysis

    return analysis.norms_vs_accuracy(t1.records) if t1 else pd.DataFrame()


def correlation_figure(t1: Table1):
    """Final accuracy against each norm of :data:`CORRELATED`, one point per run; the activations
    of :data:`HIGHLIGHT` in colour, the others in grey."""
    if not t1:
        return None
    import matplotlib.pyplot as plt

    from ..plotting import activation_color, legend_outside, stamp

    norms = run_norms(t1)
    fig, axes = plt.subplots(1, len(CORRELATED), figsize=(12, 3.8), sharey=True)
    rest = norms[~norms["activation"].isin(HIGHLIGHT)]
    for ax, (col, label) in zip(axes, CORRELATED.items()):
        ax.scatter(rest[col], rest["test_acc"], color="#bbbbbb", s=16, label="the other activations")
        for act in HIGHLIGHT:
            g = norms[norms["activation"] == act]
            if len(g):
                ax.scatter(g[col], g["test_acc"], color=activation_color(act), label=name(act), s=26)
        ax.set_xscale("log")
        ax.set_xlabel(f"{label} (mean over training)")
    axes[0].set_ylabel("final test accuracy (%)")
    legend_outside(axes[-1], title="activation")
    fig.tight_layout()
    stamp(axes[0], t1.preset, loc="upper left")
    return fig


def correlation_rows(corr: pd.DataFrame) -> list[dict]:
    """One row per norm of :func:`polyattn.analysis.correlation_table`: Spearman's ρ over runs
    with its interval and p, the interval when whole activations are resampled, and ρ within an
    activation with its interval and permutation p."""
    return [{"norm": CORRELATED.get(r["norm"], r["norm"]),
             "ρ over runs [95% CI]": interval_cell(r["rho"], r["ci_low"], r["ci_high"]),
             "p": number_cell(r["p"], ".2g"),
             "95% CI, activations resampled": bracket_cell(r["cluster_ci_low"], r["cluster_ci_high"], missing="none"),
             "ρ within activations [95% CI]": interval_cell(r["within_rho"], r["within_ci_low"], r["within_ci_high"],
                                                            missing="none (one run per activation)"),
             "p within (permutation)": number_cell(r["within_p"], ".2g", missing="none")}
            for _, r in corr.iterrows()]


def correlation_table(t1: Table1):
    """The rank correlations of the page's runs, with the measured claim's bootstrap draws and
    seed (:mod:`polyattn.measures.norms`), captioned with the runs they read."""
    from .. import analysis
    from ..book.deliver import styled
    from ..measures import norms as measured

    if not t1:
        return None
    norms = run_norms(t1)
    corr = analysis.correlation_table(norms, list(CORRELATED), n_boot=measured.N_BOOT, seed=measured.SEED,
                                      cluster="activation")
    trained = norms[norms["test_acc"].notna()]
    cfg = t1.grid[0]
    return compact(styled(correlation_rows(corr), (
        f"Spearman correlation of each norm (mean over training) with final test accuracy over "
        f"{len(trained)} runs of {trained['activation'].nunique()} activations ({len(norms) - len(trained)} diverged "
        f"runs left out); {measured.N_BOOT:,} bootstrap draws; preset {t1.preset}, {cfg.model} ViT on "
        f"{cfg.train_subset:,} Fashion-MNIST images (not Tiny-ImageNet), {plural(cfg.epochs, 'epoch')}")))


def norms_values(numbers: Mapping[str, object]) -> dict:
    """The numbers of the measured claim ``norms_predict`` that the page's prose glues: per norm
    ρ over runs with its two intervals, ρ within activations with its interval and p; the runs,
    activations and diverged runs; how many norms separate activations."""
    out = {}
    for norm, key in NORM_KEYS.items():
        if f"{norm}: rho" not in numbers:
            for part in ("", "_ci", "_cluster_ci", "_within", "_within_ci", "_within_p"):
                out[f"ch03_rho_{key}{part}"] = "none"
            continue
        out.update({f"ch03_rho_{key}": signed(numbers[f"{norm}: rho"]),
                    f"ch03_rho_{key}_ci": f"{signed(numbers[f'{norm}: CI low'])} to {signed(numbers[f'{norm}: CI high'])}",
                    f"ch03_rho_{key}_cluster_ci": f"{signed(numbers[f'{norm}: CI over activations low'])} to "
                                                  f"{signed(numbers[f'{norm}: CI over activations high'])}",
                    f"ch03_rho_{key}_within": signed(numbers[f"{norm}: rho within activations"]),
                    f"ch03_rho_{key}_within_ci": f"{signed(numbers[f'{norm}: within CI low'])} to "
                                                 f"{signed(numbers[f'{norm}: within CI high'])}",
                    f"ch03_rho_{key}_within_p": f"{numbers[f'{norm}: within p']:.2g}"})
    out.update({"ch03_norms_runs": numbers.get("runs", 0), "ch03_n_activations": numbers.get("activations", 0),
                "ch03_n_excluded": numbers.get("diverged runs left out", 0),
                "ch03_norms_separating": numbers.get("norms separating activations", 0),
                "ch03_norms_count": numbers.get("norms", len(NORM_KEYS))})
    return out


# --- the mechanism, by intervention -----------------------------------------------------------------


@dataclass
class Intervention:
    """The intervention grid's committed records beside the converged tier's softmax and x³/√N
    (the same recipe and seeds): the planned grid, the records, and the final metrics."""

    grid: list
    records: list
    converged: list
    final: pd.DataFrame

    def __bool__(self) -> bool:
        return bool(len(self.final))


def intervention_runs(intervention: Optional[list] = None, converged: Optional[list] = None) -> Intervention:
    """The book's committed records of the intervention (``vit_norm_intervention``) and of the
    converged tier (read at every preset: the section trains nothing); ``intervention`` and
    ``converged`` stand for them in tests."""
    from ..analysis import intervention as iv
    from ..experiments import vit
    from ..results import load_records

    records = load_records("vit_norm_intervention") if intervention is None else list(intervention)
    conv = load_records("vit_converged") if converged is None else list(converged)
    return Intervention(vit.intervention("book"), records, conv, iv.intervention_final(conv, records))


def _order(acts) -> list:
    """Softmax, x³/√N, the capped cubic, then k·softmax by k."""
    from ..analysis import intervention as iv

    def key(a):
        k = iv.softmax_factor(a)
        return (0 if a == iv.BASELINE else 1 if a == "poly:p=3" else 2 if a == iv.CAPPED else 3, k or 0)

    return sorted(acts, key=key)


def _recipe_caption(iv_runs: Intervention) -> str:
    from ..data import split_sizes

    c0 = iv_runs.grid[0]
    train, _ = split_sizes(c0.dataset, c0.train_subset, c0.test_subset)
    return (f"{c0.model} ViT, the converged tier's recipe: all {train:,} Fashion-MNIST training images, "
            f"{c0.epochs} epochs, gradients clipped at norm {c0.clip_grad:g} (the paper does not clip); the book "
            "preset's committed records")


def accuracy_table(iv_runs: Intervention):
    """Final test accuracy (mean ± sd over seeds) of softmax, x³/√N and each intervention."""
    from .. import analysis
    from ..book.deliver import styled

    if not iv_runs:
        return None
    summary = analysis.format_summary(analysis.summary_table(iv_runs.final)).set_index("activation")
    rows = [{"activation": name(a), **summary.loc[a].to_dict()} for a in _order(summary.index)]
    return styled(rows, "Final test accuracy of softmax and x³/√N (converged tier) and of each intervention, mean ± sd "
                        f"over seeds; {_recipe_caption(iv_runs)}")


def norm_check(iv_runs: Intervention) -> pd.DataFrame:
    """:func:`polyattn.analysis.intervention.norm_check` of the activations the section compares."""
    from ..analysis import intervention as iv

    acts = set(iv_runs.final["activation"]) if iv_runs else set()
    checks = iv.norm_check([r for r in iv_runs.converged + iv_runs.records if r["config"]["activation"] in acts])
    return checks.set_index("activation").loc[_order(checks["activation"])].reset_index()


def norm_check_table(iv_runs: Intervention):
    """The manipulation check: ‖A‖_F/√N at the last probe, mean over runs and the largest run."""
    from ..book.deliver import styled

    checks = norm_check(iv_runs)
    if checks.empty:
        return None
    rows = [{"activation": name(r.activation), "probed runs": int(r.runs),
             "‖A‖_F/√N at the last probe: mean (largest run)": f"{r.norm_final_mean:.3g} ({r.norm_final_max:.3g})"}
            for r in checks.itertuples()]
    return styled(rows, "The norm each activation leaves at the end of training (mean over layers and heads of a run); "
                        "a value above 1 is one that Theorem 4.1 rules out for softmax; same runs as above")


def k_figure(iv_runs: Intervention):
    """Final accuracy of k·softmax against k (one point per seed, the mean joined), with the capped
    cubic at k = 1; None with fewer than two values of k."""
    from ..analysis import intervention as iv

    final = iv_runs.final
    if not iv_runs:
        return None
    k_rows = final.assign(k=final["activation"].map(iv.softmax_factor)).dropna(subset=["k"])
    if k_rows["k"].nunique() < 2:
        return None
    import matplotlib.pyplot as plt

    from ..data import split_sizes
    from ..plotting import activation_color, legend_outside, stamp

    fig, ax = plt.subplots(figsize=(6, 3.6))
    colour = activation_color("softmax")
    ax.scatter(k_rows["k"], 100 * k_rows["test_acc"], color=colour, s=22, label="k·softmax (one point per seed)")
    means = k_rows.groupby("k")["test_acc"].mean()
    ax.plot(means.index, 100 * means.values, color=colour)
    cap = final[final["activation"] == iv.CAPPED]
    if len(cap):
        ax.scatter([1] * len(cap), 100 * cap["test_acc"], marker="x", color=activation_color("poly:p=3"),
                   label=f"{name(iv.CAPPED)} (at k = 1)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(means.index), [f"{k:g}" for k in sorted(means.index)])
    ax.minorticks_off()
    ax.set_xlabel("k")
    ax.set_ylabel("final test accuracy (%)")
    legend_outside(ax)
    c0 = iv_runs.grid[0]
    _, test = split_sizes(c0.dataset, c0.train_subset, c0.test_subset)
    stamp(ax, "book", f"converged tier, all {test:,} test images")
    return fig


def intervention_values(iv_runs: Intervention) -> dict:
    """The grid's recipe and factors k, the claim's margin, how many of its runs are stored (in
    all and per activation), and the norm check's numbers the prose discusses."""
    from ..analysis import intervention as iv
    from ..claims import claim
    from ..data import split_sizes
    from ..experiments import vit

    grid, c0 = iv_runs.grid, iv_runs.grid[0]
    train, _ = split_sizes(c0.dataset, c0.train_subset, c0.test_subset)
    margin = claim("norm_intervention").margin
    stored = pd.Series([r["config"]["activation"] for r in iv_runs.records], dtype=object).value_counts()
    planned = pd.Series([c.activation for c in grid], dtype=object).value_counts()
    checks = norm_check(iv_runs).set_index("activation")

    def final_norm(act, column="norm_final_mean"):
        return f"{checks.loc[act, column]:.2f}" if act in checks.index else "not probed"

    return {"ch03_int_recipe": f"all {train:,} training images, {c0.epochs} epochs, batch {c0.batch_size}, gradients "
                               f"clipped at norm {c0.clip_grad:g}, seeds "
                               + ", ".join(str(s) for s in sorted({c.seed for c in grid})),
            "ch03_int_ks": ", ".join(f"{iv.softmax_factor(a):g}" for a in vit.INTERVENTION_ACTIVATIONS
                                     if iv.softmax_factor(a)),
            "ch03_int_margin": f"±{margin:g} accuracy point{'' if margin == 1 else 's'}",
            "ch03_int_stored": f"{len(iv_runs.records)} of {len(grid)}",
            "ch03_int_stored_by_activation": "; ".join(f"{name(a)}: {stored.get(a, 0)} of {n}"
                                                       for a, n in planned[_order(planned.index)].items()),
            "ch03_int_norm_softmax": final_norm(iv.BASELINE), "ch03_int_norm_cube": final_norm("poly:p=3"),
            "ch03_int_norm_k8": final_norm("softmax:k=8"), "ch03_int_norm_capped_max": final_norm(iv.CAPPED,
                                                                                                   "norm_final_max")}


# --- attention maps ---------------------------------------------------------------------------------


@dataclass
class Maps:
    """The CLS token's attention on a few test images, per activation, from the short retrainings'
    records: ``maps`` (activation -> array [images, g, g]), the images, the test accuracies and
    what the caption states."""

    maps: dict
    images: object
    accuracy: dict
    config: object
    layer: int
    head: int
    seconds: float
    preset: str


def attention_maps(page, recompute: bool = False, layer: int = -1, head: int = 0, n_images: int = 4,
                   records: Optional[list] = None) -> Optional[Maps]:
    """The maps of head ``head`` in layer ``layer`` (-1: the last probed) for the activations of
    Figures 2 and 3, from the stored short retrainings (trained only when a record is missing or
    under ``recompute``); None where the page trains nothing.  ``records`` stand for the stored
    ones in tests."""
    from ..analysis import PERCENT
    from ..analysis import critiques as critique_analysis
    from ..data import load_dataset
    from ..experiments import short_retrain, vit
    from ..runs import page_records

    if not page.trains:
        return None
    grid = [c for c in page.on_device(short_retrain.short_retrain(page.preset)) if c.activation in vit.NORM_ACTIVATIONS]
    if records is None:
        records = page_records(grid, page.preset, recompute=recompute, desc="short retrainings", progress=False)
    if not records:
        return None
    stored = critique_analysis.short_maps(records)
    maps, accuracy, shown_layer = {}, {}, None
    for rec in records:
        act = rec["config"]["activation"]
        m = stored[act]
        index = len(m["layers"]) - 1 if layer == -1 else m["layers"].index(layer)
        shown_layer = m["layers"][index]
        maps[act] = np.asarray(m["cls"][index, :n_images, head])
        accuracy[act] = rec["metrics"][-1]["test_acc"] * PERCENT if rec["status"] == "ok" else float("nan")
    cfg = grid[0]
    images = load_dataset(cfg.dataset, cfg.train_subset, cfg.test_subset).test_x[:n_images]
    return Maps(maps, np.asarray(images), accuracy, cfg, int(shown_layer), head,
                float(sum(r["provenance"]["wall_s"] for r in records)), page.preset)


def maps_figure(maps: Optional[Maps]):
    """The test images (top row) and, per activation, the CLS token's attention on each image's
    patches on a colour scale centred at zero (red positive, blue negative)."""
    if maps is None:
        return None
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    from ..plotting import stamp

    acts = list(maps.maps)
    n_images = len(maps.images)
    fig, axes = plt.subplots(len(acts) + 1, n_images, figsize=(2.2 * n_images + 1.2, 2.2 * (len(acts) + 1)),
                             squeeze=False)
    for k in range(n_images):
        axes[0, k].imshow(maps.images[k, 0], cmap="gray")
        axes[0, k].set_axis_off()
    axes[0, 0].set_title("test image", fontsize="small", loc="left")
    for i, act in enumerate(acts, start=1):
        m = maps.maps[act]
        vmax = float(np.abs(m).max()) or 1.0
        norm = TwoSlopeNorm(vmin=-vmax, vcenter=0.0, vmax=vmax)
        for k in range(n_images):
            im = axes[i, k].imshow(m[k], cmap="RdBu_r", norm=norm)
            axes[i, k].set_xticks([])
            axes[i, k].set_yticks([])
        axes[i, 0].set_ylabel(name(act), fontsize="small")
        fig.colorbar(im, ax=list(axes[i, :]), fraction=0.025, pad=0.01)
    stamp(fig, maps.preset, "short retraining, see caption")
    return fig


def map_values(maps: Optional[Maps], not_run: str = "not run") -> dict:
    """What the maps' caption and prose state: the retraining's model, images, epochs, seed and
    training time, each activation's test accuracy, the head and layer shown, and the fraction of
    negative CLS weights per activation."""
    keys = ("ch03_map_model", "ch03_map_preset", "ch03_map_images", "ch03_map_epochs", "ch03_map_seed",
            "ch03_map_seconds", "ch03_map_test_images", "ch03_map_accuracy", "ch03_map_head", "ch03_map_layer",
            "ch03_neg_frac_softmax", "ch03_neg_frac_poly", "ch03_neg_frac_unscaled")
    if maps is None:
        return {k: not_run for k in keys}
    cfg = maps.config
    negative = {a: f"{float((m < 0).mean()):.2f}" for a, m in maps.maps.items()}
    return {"ch03_map_model": cfg.model, "ch03_map_preset": maps.preset, "ch03_map_images": f"{cfg.train_subset:,}",
            "ch03_map_epochs": cfg.epochs, "ch03_map_seed": cfg.seed, "ch03_map_seconds": f"{maps.seconds:.0f}",
            "ch03_map_test_images": f"{cfg.test_subset:,}",
            "ch03_map_accuracy": ", ".join(f"{name(a)} {v:.1f}%" if v == v else f"{name(a)} diverged"
                                           for a, v in maps.accuracy.items()),
            "ch03_map_head": maps.head + 1, "ch03_map_layer": maps.layer + 1,
            "ch03_neg_frac_softmax": negative.get("softmax", "not stored"),
            "ch03_neg_frac_poly": negative.get("poly:p=3", "not stored"),
            "ch03_neg_frac_unscaled": negative.get("poly:p=3,c=1", "not stored")}
