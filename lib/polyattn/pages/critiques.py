"""Chapter 09's tables, figures and glued values (the reviewers' remaining objections).

The verdicts and the numbers of their sentences come from :mod:`polyattn.measures.critiques`
and the claim register; this module shapes what the page shows beside them.  Each section of
the chapter loads what it shows with one call, so that it reruns on its own after the setup
cell (``page`` is the chapter's :class:`polyattn.presets.Prologue`):

    table1_records(page); sweep_records(page)            # committed records, never trained here
    short_runs(page, recompute)                          # the short retrainings of Table 1's model
    trained_runs(page, "critique_powers", seeds, recompute)   # a trained critique grid (Runs)
    glue_values(source_numbers(page, recompute))         # what the chapter computes from

and then, per section, one table (``*_table``), at most one figure (``*_figure``) and the numbers
its prose glues (``*_numbers``, or :func:`glue_numbers` over a finding's numbers with
:data:`FORMATS`).  A comparison the register does not hold is shown as description (difference,
interval, pairs) without a result word; the register's own comparisons come from
:func:`polyattn.book.deliver.deliver` (:func:`register_table`, :func:`alternatives_table`,
:func:`comparison_cell`).  What the page folds away (detail tables, the register's full tables)
is glued with :func:`glue_folded`; the closing table is :func:`findings_table`.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

import numpy as np
import pandas as pd

from ..measures import critiques as measured
from .shown import fold, glue_keyed

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
#: Table 1's activations whose activation Jacobian is followed step by step.
JACOBIAN_ACTIVATIONS = ("softmax", "poly:p=1", "poly:p=2", "poly:p=3")
#: The powers drawn in the random-score figure (every power is in the survey's record).
SURVEY_POWERS = ("poly:p=1", "poly:p=3", "poly:p=5", "poly:p=7")
#: The powers drawn per layer over training (the table holds every power).
LAYER_POWERS = ("poly:p=1", "poly:p=3", "poly:p=5", "poly:p=7")
#: What "the place" of the outlier test is called on the page.
PLACES = {"embedding": "embedding", "attention_input": "attention input", "scores": "scores"}
#: The six claims this page measures (their forms fill the checklist's "this page" verdicts).
MEASURED_CLAIMS = ("norm_paradox", "scale_sensitivity", "powers_gradients", "softmax_saturation", "outliers",
                   "attention_maps")
#: The unscaled cube of the reviewers' objections and the paper's x^3/sqrt(N).
UNSCALED, SCALED = "poly:p=3,c=1", "poly:p=3"

#: What each caption says of the runs against the paper's (the records of Table 1's analogue, the
#: short retrainings).
TABLE1_DEVIATION = "; a micro ViT on Fashion-MNIST, not the paper's ViTs on Tiny-ImageNet and ImageNet-1k"
SHORT_DEVIATION = ("; a short retraining of a micro ViT on Fashion-MNIST, not the paper's ViTs trained on "
                   "Tiny-ImageNet and ImageNet-1k")

#: A table of many short columns in smaller type, so that it fits the page's column.
SMALL_TYPE = [{"selector": "th, td", "props": "font-size: 0.85em"}]
#: A table the page shows in its flow: small type, caption included, across the page's column.
COMPACT = [*SMALL_TYPE, {"selector": "caption", "props": "font-size: 0.85em"}]


def compact(table):
    """A styled table in :data:`COMPACT` form, across the page's column, so that its cells and
    caption take fewer lines (a Markdown note is returned as it is)."""
    if not hasattr(table, "set_table_styles"):
        return table
    return table.set_table_styles(COMPACT, overwrite=False).set_table_attributes('style="width: 100%"')

#: The format of each number a section's prose glues, by glue prefix (keys of the finding's numbers).
FORMATS = {
    "ch09_paradox": {"attention_below_first_probe": ".0%", "jacobian_below_first_probe": ".0%",
                     "attention_below_later_probes": ".0%", "jacobian_below_later_probes": ".0%",
                     "attention_above_from_step": "d", "last_probed_step": "d", "strong_rho": "g"},
    "ch09_scale": {"paper_k": "", "training_images": ",", "epochs": "d", "seed_sd_mean": ".1f", "margin": "g"},
    "ch09_powers": {"random_small_sigma": "g", "random_unit_sigma": "g", "random_p7_small_sigma": ".1e",
                    "random_p7_unit_sigma": ".3g", "crossing_sigma_min": ".2f", "crossing_sigma_max": ".2f",
                    "training_seconds": ".0f", "short_runs": "d"},
    "ch09_saturation": {"random_softmax_min": ".2f", "random_softmax_max": ".2f",
                        "random_half_saturated_sigma": "g", "saturated_share_max": ".1%", "score_std_max": ".2f"},
    "ch09_outlier": {"factor": "g", "images": "d"},
    "ch09_maps": {"uniform_distance": ".2f", "test_images": "d"},
}


# --- table cells and glued values ----------------------------------------------------------------


def first_only(values: Iterable) -> list:
    """The values with each repeat of the one above blanked, for a table's grouping column."""
    values = list(values)
    return [v if i == 0 or v != values[i - 1] else "" for i, v in enumerate(values)]


def qk_name(label: str) -> str:
    """A label of the library's grids ("x^3, Q/K init x0.72") as the reader reads it ("x³, Q/K init ×0.72")."""
    from ..display import label as display_label

    return re.sub(r" x(?=\d)", " ×", display_label(label))


def before_after(before: float, after: float) -> str:
    """A table cell "before → after", each number as the book's tables write it."""
    from ..analysis.tables import number_cell

    return f"{number_cell(before)} → {number_cell(after)}"


def formatted(numbers: Mapping[str, object], formats: Mapping[str, str]) -> dict[str, str]:
    """``{key: format(numbers[key], spec)}`` for each key of ``formats`` (a string is kept as it
    is; a missing number reads "not stored")."""
    out = {}
    for key, spec in formats.items():
        value = numbers.get(key)
        out[key] = ("not stored" if value is None or (isinstance(value, float) and math.isnan(value)) else
                    value if isinstance(value, str) else format(value, spec))
    return out


def glue_numbers(prefix: str, numbers: Mapping[str, object], formats: Optional[Mapping[str, str]] = None
                 ) -> dict[str, str]:
    """Glue each number of ``formats`` (default :data:`FORMATS` of ``prefix``) as ``<prefix>_<key>``
    (text, formatted by its spec, with the minus signs and powers of ten a reader reads) for the
    page's ``{glue:text}`` references."""
    from ..book.deliver import glue

    values = formatted(numbers, FORMATS[prefix] if formats is None else formats)
    for key, text in values.items():
        glue(f"{prefix}_{key}", text, display=False)
    return values


#: Glue each value under its key, for the page's ``{glue:text}`` and ``{glue:md}`` references.
glue_values = glue_keyed


def glue_folded(name: str, shown) -> None:
    """Glue a table or figure for a folded part of the page (``{glue}`` in a dropdown): a figure is
    closed so that it is not shown where it is made; nothing to show (``None``) glues a note."""
    fold(name, shown, nothing_stored("Not computed at this preset: its records are not stored") if shown is None else None)


def n_boot(preset: str) -> int:
    """Bootstrap resamples for the page's intervals: the register's 2,000 at the book preset."""
    return measured.N_BOOT if preset == "book" else 200


def _and(items: Iterable[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _signed(x: float, fmt: str = "+.2f") -> str:
    return format(x, fmt)


def interval_phrase(estimate: float, low: float, high: float, unit: str = "points", fmt: str = "+.2f") -> str:
    """"−7.02 points (95% CI −13.91 to −0.14)"; the estimate alone, "no interval", when the interval
    is missing (one seed); "not computed" when the estimate is."""
    if estimate is None or estimate != estimate:
        return "not computed"
    if low is None or low != low or high is None or high != high:
        return f"{_signed(estimate, fmt)} {unit} (no interval)"
    return f"{_signed(estimate, fmt)} {unit} (95% CI {_signed(low, fmt)} to {_signed(high, fmt)})"


def description_cell(row) -> str:
    """A description cell of one paired difference: "−0.52 [−4.19, +3.16] (3 pairs)", no result word."""
    from ..analysis.tables import interval_cell

    n = int(row["n_pairs"])
    if n == 0:
        return "no pairs"
    return f"{interval_cell(row['mean_diff'], row['ci_low'], row['ci_high'], '+.1f')} ({n} pair{'s' if n != 1 else ''})"


def recipe_caption(config, preset: str, stored: int, planned: int) -> str:
    """The caption's account of a trained grid: recipe, data, runs stored, preset and the
    deviations from the paper."""
    clip = ("gradients clipped at norm 1 (the paper does not say it clips)" if config.clip_grad else
            "no gradient clipping")
    return (f"micro ViT on Fashion-MNIST ({config.train_subset:,} training and {config.test_subset:,} test images, "
            f"N = {config.seq_len} tokens, {config.epochs} epochs of batch {config.batch_size}), {clip}; "
            f"{stored} of {planned} runs stored; preset {preset}.  Deviation from the paper: a micro ViT on "
            "Fashion-MNIST, not its ViTs on Tiny-ImageNet and ImageNet-1k")


# --- the records ----------------------------------------------------------------------------------


@dataclass
class Runs:
    """The records of one grid as the page shows them: ``grid`` (the configs, in grid order) and
    ``records`` (those loaded; at the book preset a read-only grid may have fewer)."""
    grid: list
    records: list = field(default_factory=list)

    @property
    def config(self):
        return self.grid[0]

    @property
    def complete(self) -> bool:
        return bool(self.grid) and len(self.records) == len(self.grid)

    @property
    def measured(self) -> list:
        """The records that stored what the run measured of its model (a diverged run stores none)."""
        return [r for r in self.records if r["status"] == "ok" and r.get("final")]

    @property
    def all_measured(self) -> bool:
        """Every planned run is stored with its measurements (the short retrainings' questions
        compare activations, so each waits for all of them)."""
        return bool(self.grid) and len(self.measured) == len(self.grid)

    @property
    def seeds(self) -> list:
        return sorted({c.seed for c in self.grid})


def table1_records(page) -> list:
    """The committed records of the Table 1 analogue (chapter 04): read, never trained here."""
    from ..book.deliver import stored_records
    from ..experiments import vit

    return stored_records(vit.table1("book")) if page.trains else []


def sweep_records(page) -> list:
    """The committed records of the scale sweep (chapter 04): read, never trained here."""
    from ..book.deliver import stored_records
    from ..experiments import vit

    return stored_records(vit.scale_sweep("book")) if page.trains else []


def short_runs(page, recompute: bool = False) -> Runs:
    """The short retrainings of Table 1's model (grid ``critique_short_retrain`` at the page's
    preset): loaded, or trained where a record is missing (seconds under smoke)."""
    from ..experiments import GRIDS
    from ..runs import load_or_run_all

    grid = page.on_device(GRIDS["critique_short_retrain"](page.preset if page.trains else "book"))
    if not page.trains:
        return Runs(grid)
    return Runs(grid, load_or_run_all(grid, recompute=recompute, desc="short retrainings", progress=False))


def trained_runs(page, name: str, seeds=None, recompute: bool = False, read_only: bool = False) -> Runs:
    """A trained critique grid at the page's preset: loaded, or trained where a record is missing;
    with ``read_only`` the book preset reads stored records only (:func:`polyattn.runs.page_records`)."""
    from ..experiments import GRIDS
    from ..runs import load_or_run_all, page_records

    grid = page.on_device(GRIDS[name](page.preset if page.trains else "book", seeds))
    if not page.trains:
        return Runs(grid)
    desc = name.replace("critique_", "").replace("_", " ")
    records = (page_records(grid, page.preset, recompute, desc=desc, progress=False) if read_only else
               load_or_run_all(grid, recompute=recompute, desc=desc, progress=False))
    return Runs(grid, records)


def nothing_stored(what: str = "No record of this grid is stored at this preset"):
    """What a section shows in place of a table or figure it cannot compute yet (Markdown)."""
    from IPython.display import Markdown

    return Markdown(f"*{what}.*")


def _short_pending(runs: Runs):
    return nothing_stored(f"{len(runs.measured)} of the {len(runs.grid)} short retrainings are stored with their "
                          "measurements; every question here compares activations, so it waits for all of them")


def source_numbers(page, recompute: bool = False) -> dict:
    """What the chapter computes from, as glue values ``ch09_<key>``: Table 1's tokens and seeds,
    the records found of Table 1 and the scale sweep, and the short retrainings' settings."""
    from ..experiments import vit

    t1, sweep = vit.table1("book"), vit.scale_sweep("book")
    short = short_runs(page, recompute)
    c = short.config
    return {"ch09_t1_n": t1[0].seq_len, "ch09_t1_seeds": len({x.seed for x in t1}),
            "ch09_t1_stored": len(table1_records(page)), "ch09_t1_planned": len(t1),
            "ch09_sweep_stored": len(sweep_records(page)), "ch09_sweep_planned": len(sweep),
            "ch09_short_stored": len(short.measured), "ch09_short_planned": len(short.grid),
            "ch09_retrain_images": f"{c.train_subset:,}", "ch09_retrain_epochs": c.epochs,
            "ch09_retrain_batch": c.batch_size, "ch09_retrain_test": c.test_subset, "ch09_retrain_preset": c.preset}


# --- the norm paradox ------------------------------------------------------------------------------


def paradox_accuracy_table(records, preset: str):
    """Final accuracy (mean ± sd over seeds) of each activation of :data:`PARADOX`, its paired
    difference from x/sqrt(N) and each norm averaged over every probe, layer and head."""
    if not records:
        return nothing_stored()
    from .. import analysis
    from ..analysis.tables import interval_cell, number_cell
    from ..book.deliver import styled
    from ..display import name

    final = analysis.final_accuracy(records)
    acc = analysis.summary_table(final[final["activation"].isin(list(PARADOX))]).set_index("activation")
    diffs = measured.paradox_accuracy(records).set_index("activation")
    probes = analysis.probe_frame([r for r in records if r["config"]["activation"] in PARADOX], list(NORM_LABELS))
    means = probes.groupby(["activation", "metric"])["value"].mean().unstack()
    ref = name(measured.LINEAR)
    rows = [{"activation": name(a), "accuracy (%), mean ± sd": f"{acc.loc[a, 'mean']:.2f} ± {acc.loc[a, 'std']:.2f}",
             f"Δ vs {ref} (points) [95% CI]": "" if a == measured.LINEAR else interval_cell(
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
    from .. import analysis
    from ..analysis import critiques as crit

    probes = analysis.probe_frame([r for r in records if r["config"]["activation"] in PARADOX], list(NORM_LABELS))
    cubics = [a for a in PARADOX if a not in (measured.LINEAR, "softmax")]
    return pd.concat([crit.norm_order(probes, a, measured.LINEAR, list(NORM_LABELS)) for a in cubics],
                     ignore_index=True)


def paradox_order_table(records, detailed: bool = False):
    """:func:`paradox_order` for people: per cubic, the share of cells where each norm is below
    x/sqrt(N)'s at the first probe and at the later ones; ``detailed``: one row per cubic and norm,
    with the cells and the ratio of the norms."""
    from ..analysis.tables import number_cell
    from ..book.deliver import styled
    from ..display import name

    if not records:
        return nothing_stored()
    order = paradox_order(records)
    ref = name(measured.LINEAR)
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
    from .. import analysis

    probes = analysis.probe_frame([r for r in records if r["config"]["activation"] in PARADOX], list(NORM_LABELS))
    steps = probes.groupby(["activation", "metric", "step", "run"])["value"].mean().reset_index()
    return steps.groupby(["activation", "metric", "step"])["value"].agg(["mean", "min", "max"]).reset_index()


def norm_figure(records, preset: str):
    """The three norms of :data:`PARADOX` over training (mean over layers and heads, then seeds;
    band: min to max over seeds), one panel per norm."""
    if not records:
        return None
    import matplotlib.pyplot as plt

    from .. import plotting
    from ..display import name

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
    from .. import analysis

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
    from .. import analysis
    from ..book.deliver import styled

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


# --- scale sensitivity -------------------------------------------------------------------------------


def constants_table():
    """The paper's constants on the axis k = c·sqrt(N) (:func:`polyattn.analysis.critiques.paper_constants`)."""
    from ..analysis import critiques as crit
    from ..analysis.tables import number_cell
    from ..book.deliver import styled

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
    from ..analysis.tables import interval_cell, number_cell
    from ..book.deliver import styled

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

    from .. import plotting

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


# --- powers and gradients without training -------------------------------------------------------------


def survey_figure():
    """The random-score survey: the Jacobian through x^p/sqrt(N) for a few powers (markers: measured;
    line: the Gaussian prediction) and softmax against the score spread; softmax's saturation."""
    import matplotlib.pyplot as plt

    from .. import plotting
    from ..display import name

    settings = measured.survey_settings()
    surv = measured.jacobian_survey().table
    sigmas = settings["init_sigmas"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7, 3.3))
    colours = dict(zip(SURVEY_POWERS, plt.cm.plasma(np.linspace(0.0, 0.8, len(SURVEY_POWERS)))))
    for spec in SURVEY_POWERS:
        g = surv[(surv["activation"] == spec) & surv["sigma"].isin(sigmas)]
        ax.plot(g["sigma"], g["gaussian_prediction"], color=colours[spec], linewidth=1)
        ax.plot(g["sigma"], g["mean"], "o", markersize=4, color=colours[spec], label=name(spec))
    g = surv[(surv["activation"] == "softmax") & surv["sigma"].isin(sigmas)]
    ax.plot(g["sigma"], g["mean"], marker="s", markersize=3, color=plotting.activation_color("softmax"),
            label="softmax")
    ax.axhline(0.5, color="black", linestyle="--", linewidth=1, label="softmax's bound 1/2")
    ax.set(xscale="log", yscale="log", xlabel="score standard deviation σ", ylabel="‖∂φ(S)/∂S‖_F / √N",
           title=f"Through the activation (N = {settings['n']})")
    handles, labels = ax.get_legend_handles_labels()
    soft = surv[surv["activation"] == "softmax"]
    ax2.plot(soft["sigma"], soft["saturated_share"], marker="o", color=plotting.activation_color("softmax"),
             label="rows saturated (max > 0.99)")
    ax2.plot(soft["sigma"], soft["row_jac_saturated"], marker="s", color="black", label="their ‖row Jacobian‖_F")
    ax2.set(xscale="log", xlabel="score standard deviation σ", title="Softmax saturation")
    ax2.legend(frameon=False, fontsize="small", loc="upper left")
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.17, 1, 0.94))
    plotting.stamp(fig, "book", f"markers: measured, {settings['reps']} draws; lines: Gaussian prediction",
                   loc="upper right")
    return fig


def jacobian_by_step(records) -> pd.DataFrame:
    """``||d phi(S)/dS||_F`` of each activation of :data:`JACOBIAN_ACTIVATIONS` per probed step
    (rows: activations; columns: steps), mean over seeds, layers and heads."""
    from .. import analysis

    probes = analysis.probe_frame([r for r in records if r["config"]["activation"] in JACOBIAN_ACTIVATIONS],
                                  ["act_jac_fro"])
    return probes.groupby(["activation", "step"])["value"].mean().unstack("step")


def jacobian_numbers(steps: pd.DataFrame) -> dict:
    """The cube's activation Jacobian against the linear map's (:func:`jacobian_by_step`): at the
    first probe, the second and the last, and the first step at which it is above."""
    cube, linear = steps.loc["poly:p=3"], steps.loc[measured.LINEAR]
    past = steps.columns[cube > linear]
    first, second, last = steps.columns[0], steps.columns[1], steps.columns[-1]
    return {"first_step": int(first), "second_step": int(second), "cube_first": float(cube[first]),
            "linear_first": float(linear[first]), "linear_over_cube_first": float(linear[first] / cube[first]),
            "cube_second": float(cube[second]), "cube_last": float(cube[last]),
            "cube_above_from_step": int(past.min()) if len(past) else "no probed step"}


def records_jacobian_numbers(records) -> dict:
    """:func:`jacobian_numbers` of the Table 1 records (empty without records)."""
    return jacobian_numbers(jacobian_by_step(records)) if records else {}


#: The Jacobian numbers the page's prose glues (prefix ``ch09_records_jac``).
JACOBIAN_FORMATS = {"first_step": "d", "cube_first": ".2g", "linear_first": ".3g", "linear_over_cube_first": ".0f",
                    "cube_last": ".3g", "cube_above_from_step": "d"}


def jacobian_table(records, preset: str):
    """:func:`jacobian_by_step` for people: one row per probed step."""
    if not records:
        return nothing_stored()
    from ..analysis.tables import number_cell
    from ..book.deliver import styled
    from ..display import name

    steps = jacobian_by_step(records)
    return styled([{"step": int(step), **{name(a): number_cell(steps.loc[a, step]) for a in steps.index}}
                   for step in steps.columns],
                  f"‖∂φ(S)/∂S‖_F per probed step, mean over seeds, layers and heads (Table 1 records, preset {preset})"
                  + TABLE1_DEVIATION)


def short_gradient_table(runs: Runs, preset: str):
    """Per activation of the short retrainings (softmax and every power): the score spread, the
    gradient through the activation and its Jacobian, at initialisation → after the retraining
    (mean over layers, samples and heads), and the accuracy after it."""
    if not runs.all_measured:
        return _short_pending(runs)
    from ..analysis import critiques as crit
    from ..analysis.tables import number_cell
    from ..book.deliver import styled
    from ..display import name

    acc = crit.short_accuracy(runs.records)
    grads = crit.short_gradients(runs.records)
    per = grads.groupby(["activation", "state"])[["score_std", "grad_scores_fro", "act_jac_fro"]].mean()
    columns = (("score_std", "std of S"), ("grad_scores_fro", "‖∂L/∂S‖_F"), ("act_jac_fro", "‖∂φ/∂S‖_F"))
    rows = [{"activation": name(a),
             **{label: before_after(per.loc[(a, "initialisation"), m], per.loc[(a, "trained"), m]) for m, label in columns},
             "accuracy (%)": number_cell(acc[a])}
            for a in ["softmax", *measured.POWER_SPECS]]
    c = runs.config
    return styled(rows, f"At initialisation → after the short retraining, mean over layers, {c.options['measure']['gradients']} "
                        f"test images and heads; accuracy after the retraining (Table 1's model, {c.train_subset:,} "
                        f"images, {c.epochs} epochs, seed {c.seed}, preset {preset})" + SHORT_DEVIATION)


def short_gradient_figure(runs: Runs, preset: str):
    """The gradient through the activation, ``||dL/dS||_F`` (mean over layers, samples and heads),
    against p at initialisation and after the short retraining: plain and sign-keeping powers, and
    softmax's as a level."""
    import matplotlib.pyplot as plt

    from .. import plotting
    from ..analysis import critique_runs
    from ..analysis import critiques as crit

    if not runs.all_measured:
        return None
    grads = crit.short_gradients(runs.records)
    per = grads.groupby(["activation", "state"])["grad_scores_fro"].mean()
    fig, ax = plt.subplots(figsize=(7, 2.8))
    for state, dash in (("initialisation", ":"), ("trained", "-")):
        for odd, marker, colour, family in ((False, "o", "C0", "xᵖ/√N"), (True, "s", "C3", "sign kept")):
            specs = [a for a in measured.POWER_SPECS if critique_runs.power_of(a)[1] == odd]
            ps = [critique_runs.power_of(a)[0] for a in specs]
            ax.plot(ps, [per[(a, state)] for a in specs], marker=marker, linestyle=dash, color=colour,
                    label=f"{family}, {'start' if state == 'initialisation' else 'end'}")
        ax.axhline(per[("softmax", state)], color=plotting.activation_color("softmax"), linestyle=dash, linewidth=1,
                   label=f"softmax, {'start' if state == 'initialisation' else 'end'}")
    ax.set(yscale="log", xlabel="power p", ylabel="‖∂L/∂S‖_F")
    plotting.legend_outside(ax)
    fig.tight_layout()
    plotting.stamp(ax, preset, f"short retraining, seed {runs.config.seed}; dotted: start, solid: end",
                   loc="lower left")
    return fig


def saturation_table(runs: Runs, preset: str):
    """Softmax's saturated rows (largest weight above 0.99) per state and layer, against the others."""
    if not runs.all_measured:
        return _short_pending(runs)
    from ..analysis import critiques as crit
    from ..analysis.tables import number_cell
    from ..book.deliver import styled

    grads = crit.short_gradients(runs.records)
    sat = grads[grads["activation"] == "softmax"].replace({"state": {"trained": "short retraining"}})
    rows = [{"state": state, "layer": int(r["layer"]) + 1, "std of S": number_cell(r["score_std"]),
             "rows saturated": f"{r['saturated_share']:.1%}",
             "‖∂L/∂S_i‖, saturated / other rows": f"{number_cell(r['row_grad_saturated'])} / "
                                                  f"{number_cell(r['row_grad_other'])}",
             "row Jacobian norm, saturated / other": f"{number_cell(r['row_jac_saturated'])} / "
                                                     f"{number_cell(r['row_jac_other'])}"}
            for state, (_, r) in zip(first_only(sat["state"]), sat.iterrows())]
    return styled(rows, "Softmax rows with largest weight above 0.99 (saturated) and the others; a dash where no row "
                        f"saturates (short retraining, seed {runs.config.seed}, preset {preset})" + SHORT_DEVIATION)


# --- extreme entries -------------------------------------------------------------------------------------


def outlier_pairs_table(runs: Runs, n_boot: int, preset: str):
    """Accuracy lost when one token is multiplied by the largest factor: one row per activation
    (softmax first), one column per place; each polynomial's cell adds its difference from
    softmax's loss, paired on the same test images (:func:`polyattn.measures.critiques.outlier_pairs`)."""
    if not runs.all_measured:
        return _short_pending(runs)
    from ..analysis.tables import interval_cell, number_cell
    from ..book.deliver import styled
    from ..display import name

    pairs = measured.outlier_pairs(runs.records, n_boot=n_boot)
    places = [w for w in PLACES if w in set(pairs["where"])]
    by = {(r["where"], r["activation"]): r for _, r in pairs.iterrows()}
    rows = [{"activation": "softmax", **{PLACES[w]: number_cell(pairs.loc[pairs["where"] == w, "drop_b"].iloc[0], ".1f")
                                          for w in places}}]
    for act in dict.fromkeys(pairs["activation"]):
        rows.append({"activation": name(act), **{
            PLACES[w]: f"{number_cell(by[(w, act)]['drop_a'], '.1f')} "
                       f"({interval_cell(by[(w, act)]['diff'], by[(w, act)]['ci_low'], by[(w, act)]['ci_high'], '+.1f')})"
            for w in places if (w, act) in by}})
    images = ", ".join(str(int(n)) for n in sorted(pairs["n_images"].unique()))
    return compact(styled(rows, f"Accuracy lost (points) when one token is multiplied by {pairs['factor'].iloc[0]:g} at each "
                        f"place; in brackets the difference from softmax's loss [95% CI], paired on {images} test "
                        f"images, by bootstrap over images ({n_boot} resamples), not over training seeds (short "
                        f"retraining, seed {runs.config.seed}, preset {preset})" + SHORT_DEVIATION))


def outlier_factor_tables(runs: Runs, preset: str) -> list:
    """The accuracy, and the token's share of the last layer's attention, at every factor, place and
    activation: two tables."""
    if not runs.all_measured:
        return [_short_pending(runs)] * 2
    from ..analysis import critiques as crit
    from ..book.deliver import styled
    from ..display import name

    outl, _ = crit.short_outliers(runs.records)
    outl = outl[outl["activation"].isin(measured.MAP_SPECS)]
    last = int(outl["layer"].max())
    acc = outl[outl["layer"] == 0].pivot_table(index=["where", "activation"], columns="factor", values="accuracy")
    share = measured.outlier_shares(runs.records)
    out = []
    for tab, what, fmt in ((acc, "Test accuracy (%)", ".1f"),
                           (share, f"The token's share of the last layer's (layer {last + 1}) absolute attention", ".3f")):
        keys = [(w, a) for w in PLACES for a in measured.MAP_SPECS if (w, a) in tab.index]
        out.append(styled([{"where": shown, "activation": name(a),
                            **{f"×{f:g}": format(tab.loc[(w, a), f], fmt) for f in tab.columns}}
                           for shown, (w, a) in zip(first_only(PLACES[k[0]] for k in keys), keys)],
                          f"{what} with one token multiplied by each factor (short retraining, seed "
                          f"{runs.config.seed}, preset {preset})" + SHORT_DEVIATION))
    return out


def outlier_figure(runs: Runs, preset: str, where: str = measured.OUTLIER_PLACE):
    """Accuracy and the token's share of the last layer's attention against the factor on one
    token, at one place (by default the scores, where the verdict is read)."""
    if not runs.all_measured:
        return None
    import matplotlib.pyplot as plt

    from .. import plotting
    from ..analysis import critiques as crit
    from ..display import name

    outl, _ = crit.short_outliers(runs.records)
    outl = outl[outl["activation"].isin(measured.MAP_SPECS) & (outl["where"] == where)]
    last = int(outl["layer"].max())
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7, 3.0))
    for act in measured.MAP_SPECS:
        g = outl[outl["activation"] == act]
        col = plotting.activation_color(act)
        g0, gl = g[g["layer"] == 0], g[g["layer"] == last]
        ax.plot(g0["factor"], g0["accuracy"], marker="o", color=col, label=name(act))
        ax2.plot(gl["factor"], gl["token_share"], marker="o", color=col)
    ax2.axhline(1 / runs.config.seq_len, color="black", linestyle=":", linewidth=1, label="1/N (uniform)")
    for a in (ax, ax2):
        a.set_xscale("log")
        a.set_xlabel(f"factor on one token's {PLACES[where]}")
    ax.set_ylabel("test accuracy (%)")
    ax2.set_ylabel(f"share of |weights|, layer {last + 1}")
    handles, labels = [], []
    for a in (ax, ax2):
        h, lab = a.get_legend_handles_labels()
        handles, labels = handles + h, labels + lab
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.tight_layout(rect=(0, 0.09, 1, 0.93))
    plotting.stamp(fig, preset, f"short retraining, seed {runs.config.seed}", loc="upper right")
    return fig


# --- attention maps ---------------------------------------------------------------------------------------


def maps_figure(runs: Runs, preset: str, image: int = 0):
    """The CLS token's weights on the patches of one test image: one row per activation of
    :data:`~polyattn.measures.critiques.MAP_SPECS`, the heads of the first layer, then of the last,
    on a colour scale centred at zero (each row to its own largest weight)."""
    if not runs.all_measured:
        return None
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    from .. import plotting
    from ..analysis import critiques as crit
    from ..data import load_dataset
    from ..display import name

    c = runs.config
    smaps = crit.short_maps(runs.records)
    picture = load_dataset(c.dataset, c.train_subset, c.test_subset).test_x[image, 0]
    n_l, _, n_h = smaps[measured.MAP_SPECS[0]]["cls"].shape[:3]
    fig, axes = plt.subplots(len(measured.MAP_SPECS), 1 + n_l * n_h, figsize=(7, 0.78 * len(measured.MAP_SPECS) + 0.4))
    for row, act in zip(axes, measured.MAP_SPECS):
        cls = smaps[act]["cls"][:, image]                                           # [L, H, g, g]
        vmax = float(np.abs(cls).max()) or 1.0
        norm = TwoSlopeNorm(vmin=-vmax, vcenter=0.0, vmax=vmax)
        row[0].imshow(picture, cmap="gray")
        row[0].set_ylabel(name(act), rotation=0, ha="right", va="center")
        for li in range(n_l):
            for h in range(n_h):
                row[1 + li * n_h + h].imshow(cls[li, h], cmap="RdBu_r", norm=norm)
    for li in range(n_l):
        for h in range(n_h):
            axes[0, 1 + li * n_h + h].set_title(f"h{h + 1}", fontsize="small")
    for a in axes.flat:
        a.set_xticks([])
        a.set_yticks([])
    fig.tight_layout(pad=0.3, rect=(0, 0.04, 1, 0.92))
    for li, which in enumerate(("first layer", "last layer")[:n_l]):
        left, right = axes[0, 1 + li * n_h].get_position(), axes[0, (li + 1) * n_h].get_position()
        fig.text((left.x0 + right.x1) / 2, 0.97, which, ha="center", va="top")
    plotting.stamp(fig, preset, "red positive, blue negative; each row scaled to its largest |weight|")
    return fig


def maps_table(runs: Runs, preset: str):
    """Per activation: the share of negative mass in the first and last layer, and the mean attention
    distance of its heads (min to max) in each, next to uniform weights'."""
    if not runs.all_measured:
        return _short_pending(runs)
    from ..analysis import critiques as crit
    from ..book.deliver import styled
    from ..display import name

    smaps = crit.short_maps(runs.records)
    uniform = crit.uniform_attention_distance(smaps[measured.MAP_SPECS[0]]["grid"])
    rows = []
    for act in measured.MAP_SPECS:
        m = smaps[act]
        neg, dist = m["negative_mass_share"], m["attention_distance"]
        which = ["first" if li == 0 else "last" for li in range(len(m["layers"]))]
        rows.append({"activation": name(act), **{f"negative share, {w} layer": f"{neg[li]:.2f}" for li, w in enumerate(which)},
                     **{f"distance, {w} layer (heads)": f"{dist[li].min():.2f} to {dist[li].max():.2f}"
                        for li, w in enumerate(which)}})
    n_test = smaps[measured.MAP_SPECS[0]].get("n_test", runs.config.test_subset)
    return styled(rows, f"Share of negative mass, and the mean attention distance in patches (uniform weights: "
                        f"{uniform:.2f}), over all query rows and heads of {n_test} test images (short retraining, "
                        f"seed {runs.config.seed}, preset {preset})" + SHORT_DEVIATION)


# --- trained at Table 1's scale: the powers --------------------------------------------------------------


def _power_means(runs: Runs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The powers grid's final metrics and, per activation and layer, the gradient arriving at the
    attention weights at the first and last probe (mean over heads and seeds)."""
    from .. import analysis
    from ..analysis import critique_runs

    final = analysis.final_metrics(runs.records)
    curves = analysis.probe_curves(analysis.probe_frame(runs.records, ["grad_attn_fro"]))
    return final, critique_runs.gradient_change(curves)


def powers_table(runs: Runs, preset: str):
    """Per activation of the powers grid: accuracy with its t-interval over seeds, the gradient
    arriving at the attention weights at the first → last probe (mean over layers, heads and seeds),
    and, for the sign-keeping forms (no claim of the register), the paired difference from
    x^3/sqrt(N) as description."""
    if not runs.records:
        return nothing_stored()
    from .. import analysis
    from ..analysis import critique_runs
    from ..analysis.tables import interval_cell
    from ..book.deliver import styled
    from ..display import name

    final, change = _power_means(runs)
    grad = change.groupby("activation")[["first", "last"]].mean()
    diffs = analysis.paired_difference(final, baseline=SCALED).set_index("activation")
    rows = []
    for act, g in final.groupby("activation", sort=False):
        p, odd = critique_runs.power_of(act)
        m, lo, hi = analysis.t_interval(100 * g["test_acc"].dropna())
        rows.append({"activation": name(act), "runs": f"{int((g['status'] == 'ok').sum())} of {len(g)}",
                     "test accuracy (%) [95% CI]": interval_cell(m, lo, hi, ".1f"),
                     "‖∂L/∂A‖_F, first → last probe": before_after(*grad.loc[act, ["first", "last"]])
                     if act in grad.index else "",
                     f"sign kept: Δ vs {name(SCALED)} (points)": description_cell(diffs.loc[act])
                     if odd and act in diffs.index else ""})
    recipe = recipe_caption(runs.config, preset, len(runs.records), len(runs.grid))
    return styled(rows, "The powers trained to the end of Table 1's schedule: description, not a test (the register's "
                        f"comparisons of the plain powers are the table above); {recipe}")


def powers_numbers(runs: Runs) -> dict:
    """The powers grid described in numbers for the prose (``ch09_pw_<key>``): the slope of accuracy
    against p over the plain powers (within each seed, then over seeds), again without the runs
    that ended at chance, which runs those are, and the range of the gradient arriving at the
    attention weights at the last probe (mean over layers)."""
    from ..analysis import critique_runs
    from ..claims import claim
    from ..claims.constants import FASHION_MNIST_CHANCE
    from ..display import name

    keys = ("slope", "slope_seeds", "chance_runs", "slope_without_chance", "grad_min", "grad_min_power", "grad_max",
            "grad_max_power")
    if not runs.records:
        return {f"ch09_pw_{k}": "not stored" for k in keys}
    final, change = _power_means(runs)
    slope = critique_runs.power_slope(final)
    band = claim("table_parity").chance_band
    no_chance = critique_runs.power_slope(final, chance=FASHION_MNIST_CHANCE, band=band)
    excluded = no_chance["excluded"]
    by_act: dict = {}
    for act, seed in excluded:
        by_act.setdefault(act, []).append(seed)
    chance_runs = "; ".join(f"{name(a)} with seed{'s' if len(s) > 1 else ''} {_and(map(str, s))}"
                            for a, s in by_act.items()) or "none"
    last = change.groupby("activation")["last"].mean()
    plain = last[[not critique_runs.power_of(a)[1] for a in last.index]]
    seeds = slope["n_seeds"]
    return {"ch09_pw_slope": interval_phrase(slope["slope"], slope["ci_low"], slope["ci_high"], "points"),
            "ch09_pw_slope_seeds": f"{seeds} seed{'s' if seeds != 1 else ''}",
            "ch09_pw_chance_runs": chance_runs,
            "ch09_pw_slope_without_chance": interval_phrase(no_chance["slope"], no_chance["ci_low"],
                                                            no_chance["ci_high"], "points"),
            "ch09_pw_grad_min": f"{plain.min():.3g}", "ch09_pw_grad_min_power": name(plain.idxmin()),
            "ch09_pw_grad_max": f"{plain.max():.3g}", "ch09_pw_grad_max_power": name(plain.idxmax())}


def powers_figure(runs: Runs, preset: str):
    """Accuracy against p (plain and sign-keeping powers; mean and t-interval over seeds), and the
    gradient arriving at the attention weights at the first and last probe against p (plain powers,
    mean over layers, heads and seeds)."""
    if not runs.records:
        return None
    import matplotlib.pyplot as plt

    from .. import analysis, plotting
    from ..analysis import critique_runs

    final, change = _power_means(runs)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7, 2.8))
    for odd, style, colour, label in ((False, "o-", "C0", "xᵖ/√N"), (True, "s--", "C3", "sign kept, x·|x|ᵖ⁻¹/√N")):
        sub = final[[critique_runs.power_of(a)[1] == odd for a in final["activation"]]]
        stats_ = [(critique_runs.power_of(a)[0], *analysis.t_interval(100 * g["test_acc"].dropna()))
                  for a, g in sub.groupby("activation", sort=False)]
        ps, ms, los, his = map(np.array, zip(*stats_))
        ax.errorbar(ps, ms, yerr=None if np.isnan(los).all() else [ms - los, his - ms], fmt=style, capsize=3,
                    color=colour, label=label)
    ax.set(xlabel="power p", ylabel="test accuracy (%)", title="Accuracy after Table 1's schedule")
    ax.legend(frameon=False, fontsize="small")
    plain = change[[not critique_runs.power_of(a)[1] for a in change["activation"]]]
    mean = plain.groupby("activation", sort=False)[["first", "last"]].mean()
    ps = [critique_runs.power_of(a)[0] for a in mean.index]
    ax2.plot(ps, mean["first"], "o:", color="grey", label="first probe")
    ax2.plot(ps, mean["last"], "o-", color="black", label="last probe")
    ax2.set(yscale="log", xlabel="power p (xᵖ/√N)", ylabel="‖∂L/∂A‖_F", title="Gradient at the attention weights")
    ax2.legend(frameon=False, fontsize="small")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    plotting.stamp(fig, preset, f"mean, 95% t-interval over {len(runs.seeds)} seed(s)", loc="upper right")
    return fig


def powers_layer_figure(runs: Runs, preset: str):
    """The gradient arriving at the attention weights over training, one panel per layer, for the
    powers of :data:`LAYER_POWERS` (mean over heads and seeds)."""
    if not runs.records:
        return None
    import matplotlib.pyplot as plt

    from .. import analysis, plotting

    curves = analysis.probe_curves(analysis.probe_frame(runs.records, ["grad_attn_fro"]))
    layers = sorted(set(curves["layer"]))
    cols = 2
    fig, axes = plt.subplots(math.ceil(len(layers) / cols), cols, figsize=(7, 2.4 * math.ceil(len(layers) / cols)),
                             sharey=True, squeeze=False)
    colours = dict(zip(LAYER_POWERS, plt.cm.viridis(np.linspace(0, 0.9, len(LAYER_POWERS)))))
    for ax, layer in zip(axes.flat, layers):
        for act in LAYER_POWERS:
            c = curves[(curves["activation"] == act) & (curves["layer"] == layer)].sort_values("step")
            ax.plot(c["step"], c["mean"], color=colours[act], label=f"p = {act.split('=')[1]}")
        ax.set(yscale="log", title=f"layer {layer + 1}")
    for ax in axes[-1]:
        ax.set_xlabel("training step")
    for ax in axes[:, 0]:
        ax.set_ylabel("‖∂L/∂A‖_F")
    for ax in axes.flat[len(layers):]:
        ax.set_visible(False)
    axes.flat[0].legend(frameon=False, fontsize="small", ncol=2)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    plotting.stamp(fig, preset, "xᵖ/√N, mean over heads and seeds", loc="upper right")
    return fig


# --- trained at Table 1's scale: the Q/K controls ------------------------------------------------------------


def qk_table(runs: Runs, preset: str):
    """Per variant of the Q/K-control grid: accuracy with its t-interval, ||A||_F at the last probe
    (mean over layers, heads and seeds) and, as description, the paired difference from the
    unscaled x^3 without a control (the register judges the controls against x^3/sqrt(N))."""
    if not runs.records:
        return nothing_stored()
    from .. import analysis
    from ..analysis import critique_runs
    from ..analysis.tables import interval_cell, number_cell
    from ..book.deliver import styled

    qk = critique_runs.qk_frame(runs.records)
    vs_plain = analysis.paired_difference(qk, baseline="x^3", metric="test_acc", key="variant").set_index("variant")
    norms = qk_norms(runs)
    rows = []
    for variant, g in qk.groupby("variant", sort=False):
        m, lo, hi = analysis.t_interval(100 * g["test_acc"].dropna())
        rows.append({"variant": qk_name(variant), "runs": f"{int((g['status'] == 'ok').sum())} of {len(g)}",
                     "test accuracy (%) [95% CI]": interval_cell(m, lo, hi, ".1f"),
                     "‖A‖_F at the last probe": number_cell(norms.get(variant, np.nan)),
                     f"Δ vs {qk_name('x^3')} (points)": description_cell(vs_plain.loc[variant])
                     if variant in vs_plain.index else ""})
    return styled(rows, "The Q/K controls: description, not a test (the register's comparisons with x³/√N are the "
                        f"table above); {recipe_caption(runs.config, preset, len(runs.records), len(runs.grid))}")


def qk_norms(runs: Runs) -> dict:
    """``||A||_F`` at the last probed step per variant of the Q/K-control grid (mean over layers,
    heads and runs)."""
    from .. import analysis
    from ..analysis import critique_runs

    qk = critique_runs.qk_frame(runs.records)
    probes = analysis.probe_frame(runs.records, ["attn_fro"]).merge(qk[["run", "variant"]], on="run")
    last = probes[probes["step"] == probes["step"].max()]
    return last.groupby(["variant", "run"])["value"].mean().groupby("variant").mean().to_dict()


def qk_numbers(runs: Runs) -> dict:
    """The Q/K grid's settings and its norms for the prose (``ch09_qk_<key>``)."""
    from ..experiments import critiques as grids
    from ..experiments import vit
    from ..labels import length_aware_gain, qk_variants

    norms = qk_norms(runs) if runs.records else {}
    listed = "; ".join(f"{qk_name(v)}: {norms[v]:.3g}" for v, _, _ in qk_variants() if v in norms) or "not stored"
    return {"ch09_qk_seeds": len(runs.seeds), "ch09_qk_decays": " or ".join(f"{w:g}" for w in grids.QK_WEIGHT_DECAYS),
            "ch09_qk_t1_decay": f"{vit.table1('book')[0].weight_decay:g}",
            "ch09_qk_gain": f"{length_aware_gain(grids.TABLE1_TOKENS, 3):.3f}", "ch09_qk_tokens": grids.TABLE1_TOKENS,
            "ch09_qk_norms": listed}


# --- trained at Table 1's scale: the weight decay of every matrix ------------------------------------------


def decay_frame(runs: Runs) -> pd.DataFrame:
    """:func:`polyattn.analysis.critique_runs.weight_decay_frame` of the grid's records."""
    from ..analysis import critique_runs

    return critique_runs.weight_decay_frame(runs.records)


def decay_table(runs: Runs, preset: str):
    """One row per cell (activation, decay) of the weight-decay grid: runs, accuracy (mean ± sd),
    ||A||_F/sqrt(N) at the end of training, and as description the paired differences from the same
    activation at Table 1's decay and, for the unscaled x^3, from x^3/sqrt(N) at Table 1's decay."""
    if not runs.records:
        return nothing_stored()
    from .. import analysis
    from ..analysis import critique_runs
    from ..book.deliver import styled
    from ..display import name
    from ..experiments import critiques as grids
    from ..experiments import vit

    reference = vit.table1("book")[0].weight_decay
    wd = decay_frame(runs)
    diff_of = {}
    for act, decay, base_act, base_decay, _ in critique_runs.weight_decay_comparisons(grids.WEIGHT_DECAYS, reference):
        cand, base = critique_runs.decay_cell(act, decay), critique_runs.decay_cell(base_act, base_decay)
        pair = wd[wd["cell"].isin([cand, base])]
        if {cand, base} <= set(pair["cell"]):
            d = analysis.paired_difference(pair, baseline=base, metric="test_acc", key="cell")
            diff_of[(cand, base)] = description_cell(d.iloc[0])
    rows = []
    for act in grids.WEIGHT_DECAY_ACTIVATIONS:
        for w in grids.WEIGHT_DECAYS:
            cell = critique_runs.decay_cell(act, w)
            g = wd[wd["cell"] == cell]
            acc = 100 * g.loc[g["status"] == "ok", "test_acc"]
            norm = g["attn_norm_final"].dropna()
            rows.append({"activation": name(act), "decay": f"{w:g}", "runs": f"{len(g)} of {len(runs.seeds)}",
                         "accuracy (%), mean ± sd": (f"{acc.mean():.2f} ± {acc.std():.2f}" if len(acc) > 1
                                                     else f"{acc.mean():.2f}" if len(acc) else ""),
                         f"Δ vs itself at {reference:g}": diff_of.get((cell, critique_runs.decay_cell(act, reference)), ""),
                         f"Δ vs {name(SCALED)} at {reference:g}":
                             diff_of.get((cell, critique_runs.decay_cell(SCALED, reference)), "")
                             if act == UNSCALED else "",
                         "‖A‖_F/√N at the end": f"{norm.mean():.3g}" if len(norm) else ""})
    for shown, row in zip(first_only(r["activation"] for r in rows), rows):
        row["activation"] = shown
    return styled(rows, "Weight decay of every matrix: accuracy, and the paired differences in points [95% CI] as "
                        "description, not a test (the register's comparisons are the table above); ‖A‖_F/√N at the "
                        "last probed step, mean over layers, heads and seeds; "
                        + recipe_caption(runs.config, preset, len(runs.records), len(runs.grid))
                        + "; the paper never varies the decay")


def decay_figure(runs: Runs, preset: str):
    """Accuracy and ||A||_F/sqrt(N) at the end of training against the weight decay of every matrix,
    one line per activation through the means over seeds, each seed a point."""
    if not runs.records:
        return None
    import matplotlib.pyplot as plt

    from .. import plotting
    from ..display import name
    from ..experiments import critiques as grids

    wd = decay_frame(runs)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7, 3.0))
    xs = {w: i for i, w in enumerate(grids.WEIGHT_DECAYS)}
    for k, act in enumerate(grids.WEIGHT_DECAY_ACTIVATIONS):
        g = wd[wd["activation"] == act]
        col = plotting.activation_color(act)
        for axis, column, scale in ((ax, "test_acc", 100.0), (ax2, "attn_norm_final", 1.0)):
            pos = g["weight_decay"].map(xs) + 0.06 * (k - 1)
            axis.plot(pos, scale * g[column], "o", color=col, alpha=0.5, markersize=4)
            means = (scale * g.groupby("weight_decay")[column].mean()).sort_index()
            axis.plot([xs[w] + 0.06 * (k - 1) for w in means.index], means.to_numpy(), "-", color=col, label=name(act))
    for axis in (ax, ax2):
        axis.set_xticks(list(xs.values()), [f"{w:g}" for w in xs])
        axis.set_xlabel("weight decay of every matrix (not to scale)")
    ax.set(ylabel="test accuracy (%)", title="Accuracy")
    ax2.set(yscale="log", ylabel="‖A‖_F/√N at the end", title="Attention norm")
    handles, labels = ax2.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    plotting.stamp(ax, preset, f"{len(runs.records)} of {len(runs.grid)} runs; seeds as points", loc="lower left")
    return fig


def decay_numbers(runs: Runs) -> dict:
    """The weight-decay grid's settings and two of its norms for the prose (``ch09_wd_<key>``): the
    decays, the seeds, the runs found, what AdamW's decay alone leaves of a matrix over Table 1's
    schedule, and ||A||_F/sqrt(N) of the unscaled x^3 at the strongest decay and of x^3/sqrt(N) at
    Table 1's."""
    from ..analysis import critique_runs
    from ..experiments import critiques as grids
    from ..experiments import vit

    book = vit.table1("book", seeds=[0])[0]
    total = book.train_subset // book.batch_size * book.epochs
    reference, strong = book.weight_decay, max(grids.WEIGHT_DECAYS)
    out = {"ch09_wd_decays": ", ".join(f"{w:g}" for w in grids.WEIGHT_DECAYS), "ch09_wd_seeds": len(runs.seeds),
           "ch09_wd_reference": f"{reference:g}", "ch09_wd_strong": f"{strong:g}",
           "ch09_wd_found": f"{len(runs.records)} of {len(runs.grid)}",
           "ch09_wd_shrink": ", ".join(f"{critique_runs.no_gradient_shrink(book.replace(weight_decay=w), total):.2f} "
                                       f"at decay {w:g}" for w in grids.WEIGHT_DECAYS),
           "ch09_wd_norm_unscaled_strong": "not stored", "ch09_wd_norm_scaled_reference": "not stored",
           "ch09_wd_norm_unscaled_reference": "not stored"}
    if runs.records:
        norms = decay_frame(runs).groupby("cell")["attn_norm_final"].mean()
        for key, act, w in (("unscaled_strong", UNSCALED, strong), ("scaled_reference", SCALED, reference),
                            ("unscaled_reference", UNSCALED, reference)):
            value = norms.get(critique_runs.decay_cell(act, w), np.nan)
            if value == value:
                out[f"ch09_wd_norm_{key}"] = f"{value:.3g}"
    return out


# --- the register's comparisons of the alternatives -----------------------------------------------------------


def _comparison(delivered, comparison_id: str):
    v = delivered.verdict
    r = next((r for r in v.comparisons if r.comparison.id == comparison_id), None)
    if r is None:
        raise ValueError(f"claim {v.claim.id!r} has no comparison {comparison_id!r}; its comparisons: "
                         f"{', '.join(x.comparison.id for x in v.comparisons)}")
    return r


def comparison_cell(delivered, comparison_id: str, unit: bool = True, pairs: bool = True) -> str:
    """One comparison of a delivered claim in a table cell: its difference and interval, the
    register's result and the pairs ("−0.78 [−4.02, +2.46] points, inconclusive (3 pairs)");
    without ``unit`` and ``pairs`` when the table's caption gives them ("−0.78 [−4.02, +2.46],
    inconclusive")."""
    from ..claims.report import estimate_cell

    r = _comparison(delivered, comparison_id)
    if r.n < 2:
        return f"{r.n} pair{'s' if r.n != 1 else ''} stored"
    estimate = estimate_cell(r)
    if not unit and r.unit:
        estimate = estimate.replace(f" {r.unit}", "")
    return f"{estimate}, {r.result}{r.qualifier}" + (f" ({r.n} pairs)" if pairs else "")


def _pairs_and_unit(delivered, ids) -> tuple[str, str]:
    """The seed pairs and the unit of the comparisons ``ids`` of a delivered claim, for a caption:
    ("3 seed pairs each" or "3 or 5 seed pairs", "points")."""
    found = [_comparison(delivered, cid) for cid in ids]
    ns = sorted({r.n for r in found})
    units = sorted({r.unit for r in found if r.unit})
    pairs = f"{ns[0]} seed pairs each" if len(ns) == 1 else f"{' or '.join(map(str, ns))} seed pairs"
    return pairs, " or ".join(units) or "points"


def by_clipping(delivered) -> dict[str, dict[str, str]]:
    """The layout of :func:`register_table` for a claim that makes each comparison with gradient
    clipping and without (comparison ids ending ``_clipped`` and ``_unclipped``): one row per
    comparison, one column per reading of the recipe."""
    layout: dict = {}
    columns = {"_clipped": "clipped at norm 1", "_unclipped": "without clipping"}
    for r in delivered.verdict.comparisons:
        suffix = next((x for x in columns if r.comparison.id.endswith(x)), None)
        if suffix is None:
            raise ValueError(f"comparison {r.comparison.id!r} of claim {delivered.verdict.claim.id!r} names no clipping")
        label = re.sub(r",? (un)?clipped$", "", r.comparison.label)
        layout.setdefault(label, {})[columns[suffix]] = r.comparison.id
    return layout


def register_table(delivered, layout: Optional[Mapping[str, Mapping[str, str]]] = None):
    """A registered claim's comparisons in a compact table, each cell its difference [95% CI] and
    result (:func:`comparison_cell`; the unit and the seed pairs in the caption): one row per
    comparison by default, or ``layout`` (row label -> {column label: comparison id}, e.g.
    :func:`by_clipping`).  The register's full table, with Holm and TOST p, is ``delivered.table``."""
    from ..book.deliver import styled

    v = delivered.verdict
    if layout is None:
        layout = {r.comparison.label: {"difference [95% CI], result": r.comparison.id} for r in v.comparisons}
    pairs, unit = _pairs_and_unit(delivered, [cid for cells in layout.values() for cid in cells.values()])
    rows = [{"comparison": label, **{col: comparison_cell(delivered, cid, unit=False, pairs=False)
                                     for col, cid in cells.items()}}
            for label, cells in layout.items()]
    return compact(styled(rows, f"The claim register's comparisons: difference in test-accuracy {unit}, {pairs}; "
                                f"margin ±{v.claim.margin:g}, α = {v.claim.alpha:g}, Holm over the claim's informative "
                                f"primary comparisons (Holm and TOST p in its full table, folded below); {v.claim.scale}"))


#: The alternatives to the 1/sqrt(N) factor without clipping: (name, (claim, comparison) against
#: x^3/sqrt(N) or None, (claim, comparison) against the unscaled x^3).
ALTERNATIVES = (
    ("Q/K decay 0.5", ("qk_controls_unclipped", "qk_decay_0.5"), ("alternatives_vs_unscaled", "qk_decay_0.5")),
    ("Q/K decay 5", ("qk_controls_unclipped", "qk_decay_5"), ("alternatives_vs_unscaled", "qk_decay_5")),
    ("Q/K init ×{gain:.2f}", ("qk_controls_unclipped", "qk_init"), ("alternatives_vs_unscaled", "qk_init")),
    ("all matrices decay 0.5", ("weight_decay_unclipped", "cube_decay_0.5"), ("alternatives_vs_unscaled", "decay_0.5")),
    ("QK-norm", ("qk_norm", "cube_qknorm_vs_scaled"), ("alternatives_vs_unscaled", "qk_norm")),
    ("clipping at norm 1", None, ("alternatives_vs_unscaled", "clipping")),
)


def alternatives_table(delivered: Mapping[str, object]):
    """Each alternative to the 1/sqrt(N) factor (:data:`ALTERNATIVES`) against x^3/sqrt(N) and
    against the unscaled x^3, each cell the register's comparison (:func:`comparison_cell`) from
    the ``delivered`` claims (claim id -> :class:`polyattn.book.deliver.Delivered`)."""
    from ..book.deliver import styled
    from ..experiments import critiques as grids
    from ..labels import length_aware_gain

    gain = length_aware_gain(grids.TABLE1_TOKENS, 3)
    rows = [{"alternative": label.format(gain=gain),
             "pairs": " / ".join(str(n) for n in dict.fromkeys(
                 _comparison(delivered[pair[0]], pair[1]).n for pair in (vs_scaled, vs_cube) if pair)),
             "against x³/√N": comparison_cell(delivered[vs_scaled[0]], vs_scaled[1], unit=False, pairs=False)
             if vs_scaled else "the clipping claim",
             "against the unscaled x³": comparison_cell(delivered[vs_cube[0]], vs_cube[1], unit=False, pairs=False)}
            for label, vs_scaled, vs_cube in ALTERNATIVES]
    margins = sorted({f"{d.verdict.claim.margin:g}" for d in delivered.values()})
    return compact(styled(rows, "Each alternative to the 1/√N factor, applied to the unscaled x³, Table 1's recipe "
                                "without gradient clipping (clipping itself: with against without): the claim register's "
                                "comparisons, difference in test-accuracy points [95% CI] and result over the seed pairs, "
                                f"margin ±{' or ±'.join(margins)}, Holm within each claim; micro ViT on Fashion-MNIST, "
                                "book preset"))


# --- not settled at this scale -----------------------------------------------------------------------------------


def run_hours(n_runs: int, records) -> str:
    """"about 13 CPU hours": ``n_runs`` times the mean wall time of ``records`` (the same recipe on
    this machine's CPUs)."""
    walls = [r["provenance"].get("wall_s") for r in records if (r.get("provenance") or {}).get("wall_s")]
    if not walls:
        return "cost unknown (no record to time)"
    return f"about {n_runs * float(np.mean(walls)) / 3600:.0f} CPU hours"


def unsettled_table(page):
    """The objections the book's records do not settle yet, each with the reason and the run that
    would settle it (with its cost from the committed records of the same recipe)."""
    from ..book.deliver import styled
    from ..display import name
    from ..experiments import vit
    from ..results import load_records

    converged = load_records("vit_converged") if page.trains else []
    done = load_records("vit_unclipped") if page.trains else []
    grid = vit.unclipped("book")
    rows = [
        {"objection": "Without gradient clipping the unscaled cube diverges; ViTs train even unscaled (checklist "
                      "item 23)",
         "why not settled here": f"Table 1's recipe and this chapter's controls also run without clipping (the "
                                 f"section above); of the converged tier without clipping {len(done)} of the "
                                 f"{len(grid)} runs are committed",
         "the run that would settle it": f"the grid vit_unclipped: the converged tier without clipping for softmax, "
                                         f"{name('poly:p=3')} and {name(UNSCALED)} ({len(grid)} runs, "
                                         f"{run_hours(len(grid), converged)})"},
        {"objection": "The norm paradox, the outliers and the maps at the paper's scale (checklist items 9, 22 and 23)",
         "why not settled here": "the paper's models need ImageNet-sized data and GPUs; committed records keep no "
                                 "weights",
         "the run that would settle it": "the paper preset's Tiny-ImageNet runs with norm probes at layers 2, 7 and 12, "
                                         "and checkpoints kept for the outlier and map measurements "
                                         "(vit.paper_configs)"},
    ]
    return compact(styled(rows, "Objections not settled at this scale"))


# --- the checklist ---------------------------------------------------------------------------------------------


def measured_forms() -> dict:
    """The form of each claim this page measures (:data:`MEASURED_CLAIMS`), by its measure function."""
    from ..book.deliver import deliver

    return {cid: deliver(cid, glue_it=False).verdict.form for cid in MEASURED_CLAIMS}


def checklist_values() -> dict:
    """The reviewers' checklist as glue values: the table (Markdown), its number of items and legend."""
    from IPython.display import Markdown

    from ..claims import checklist

    return {"ch09_checklist": Markdown(checklist.table_markdown(page_forms=measured_forms())),
            "ch09_checklist_n": len(checklist.CHECKLIST), "ch09_checklist_legend": checklist.legend()}


# --- what this chapter found ---------------------------------------------------------------------------------------


#: The section of this page that computes each claim it measures (its MyST label); the register's
#: claims sit under ``claim-<id>`` (:func:`polyattn.claims.report.section_label`).
MEASURED_SECTIONS = {"norm_paradox": "critiques-norm-paradox", "scale_sensitivity": "critiques-scale",
                     "powers_gradients": "critiques-gradients", "softmax_saturation": "critiques-gradients",
                     "outliers": "critiques-extreme-entries", "attention_maps": "critiques-attention-maps"}


#: Short names of the claims the reviewers' checklist does not name (the others: its ``SHORT``).
SHORT_NAMES = {"alternatives_vs_unscaled": "an alternative helps the unscaled x³"}


def _rho(n: Mapping, norm: str) -> str:
    return (f"{n[f'{norm}_rho']:+.2f} ({n[f'{norm}_activations_ci_low']:+.2f} to "
            f"{n[f'{norm}_activations_ci_high']:+.2f})")


#: The key number of each measured claim in the closing table, from its finding's numbers (the
#: sections give the whole sentence).
KEY_NUMBERS = {
    "norm_paradox": lambda n: (f"Spearman ρ of accuracy over {n['activations']} activations: with the attention "
                               f"norm {_rho(n, 'attention')}, with the Jacobian {_rho(n, 'jacobian')}"),
    "scale_sensitivity": lambda n: f"k = 1 → 2: {n['k_1_to_2_by_length']}",
    "powers_gradients": lambda n: (f"gradient through xᵖ/√N at initialisation: {n['gradient_p1_initial']:.2g} at p = 1, "
                                   f"{n['gradient_p7_initial']:.2g} at p = 7"),
    "softmax_saturation": lambda n: f"rows saturated in the micro ViT: at most {n['saturated_share_max']:.1%}",
    "outliers": lambda n: f"the token's share of the last layer's attention at ×{n['factor']:g}: {n['shares']}",
    "attention_maps": lambda n: f"negative share, first / last layer: {n['negative_shares']}",
}


def findings_rows(chapter: str = "09_critiques") -> list[dict]:
    """The closing table's rows: one per claim of ``chapter`` (the register's, then those it
    measures) with its ``id``, short ``name``, ``section`` (MyST label), ``verdict``, ``late`` (a
    registered claim's margin fixed after the first runs, as the intro's answer table marks it) and
    ``key`` number (the register's key comparison; for a measured claim, :data:`KEY_NUMBERS`)."""
    from ..claims.checklist import SHORT
    from ..claims.evaluate import evaluate
    from ..claims.register import MEASURED, REGISTER
    from ..claims.report import answer_rows, section_label

    names = {**SHORT, **SHORT_NAMES}
    ids = [cid for cid, c in REGISTER.items() if c.chapter == chapter]
    answered = {r["id"]: r for r in answer_rows({cid: evaluate(cid) for cid in ids}, ids)}
    rows = []
    for cid in ids:
        r = answered.get(cid)
        row = {"id": cid, "name": names.get(cid, cid), "section": section_label(cid)}
        if r is None:
            rows.append({**row, "verdict": "no paired runs stored yet", "late": False, "key": ""})
        else:
            verdict = r["verdict"] + (" (interim)" if r["interim"] else "")
            rows.append({**row, "verdict": verdict, "late": r["late"], "key": r["key number"]})
    for cid, c in MEASURED.items():
        if c.chapter != chapter or c.machine_dependent:
            continue
        finding = c.evaluate()
        key = KEY_NUMBERS[cid](finding.numbers) if cid in KEY_NUMBERS else finding.summary.split(". ")[0]
        rows.append({"id": cid, "name": names.get(cid, cid), "section": MEASURED_SECTIONS.get(cid, "critiques-found"),
                     "verdict": finding.form, "late": False, "key": key})
    return rows


def findings_table(chapter: str = "09_critiques"):
    """The closing table ("What this chapter found"): each claim's short name linked to the
    section that computes it, its verdict and its key number (:func:`findings_rows`), compact."""
    from html import escape

    from ..book.deliver import styled

    rows = findings_rows(chapter)
    shown = [{"claim": f'<a href="#{r["section"]}">{escape(r["name"])}</a>',
              "verdict": f"<b>{escape(r['verdict'])}</b>{'†' if r['late'] else ''}",
              "key number": escape(" ".join(str(r["key"]).split()))} for r in rows]
    note = ("; † margin registered after the first runs were seen (see the claim's section)"
            if any(r["late"] for r in rows) else "")
    return compact(styled(shown, "Each claim this chapter computes, the register's and those it measures, with its "
                                 "verdict and key number (micro ViT on Fashion-MNIST, book preset)" + note))
