"""Chapter 09's tables, figure data and glued values (the reviewers' remaining objections).

The verdicts and the numbers of their sentences come from :mod:`polyattn.measures.critiques`;
this module shapes what the page shows beside them:

    glue_numbers("ch09_paradox", finding.numbers, {"attention_rho": "+.2f"})   # one glue per number
    paradox_accuracy_table(records, preset); paradox_order_table(records)     # the norm paradox's tables
    norm_curves(records)                                                       # its figure's curves
    norm_correlations(records, n_boot); correlation_numbers(corr)              # the norms against accuracy
    jacobian_by_step(records); jacobian_numbers(steps)                         # Table 1's activation Jacobians
    first_only(values); qk_name(label); before_after(a, b)                     # table cells
"""
from __future__ import annotations

import re
from typing import Iterable, Mapping

import pandas as pd

from ..measures import critiques as measured

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
        out[key] = ("not stored" if value is None else value if isinstance(value, str) else format(value, spec))
    return out


def glue_numbers(prefix: str, numbers: Mapping[str, object], formats: Mapping[str, str]) -> dict[str, str]:
    """Glue each number of ``formats`` as ``<prefix>_<key>`` (text, formatted by its spec, with the
    minus signs and powers of ten a reader reads) for the page's ``{glue:text}`` references."""
    from ..book.deliver import glue

    values = formatted(numbers, formats)
    for key, text in values.items():
        glue(f"{prefix}_{key}", text, display=False)
    return values


# --- the norm paradox ------------------------------------------------------------------------------


def paradox_accuracy_table(records, preset: str):
    """Final accuracy (mean ± sd over seeds) of each activation of :data:`PARADOX`, its paired
    difference from x/sqrt(N) and each norm averaged over every probe, layer and head."""
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
                        f"(Table 1 records, preset {preset})")


def paradox_order(records) -> pd.DataFrame:
    """Each cubic of :data:`PARADOX` against x/sqrt(N), cell by cell
    (:func:`polyattn.analysis.critiques.norm_order`)."""
    from .. import analysis
    from ..analysis import critiques as crit

    probes = analysis.probe_frame([r for r in records if r["config"]["activation"] in PARADOX], list(NORM_LABELS))
    cubics = [a for a in PARADOX if a not in (measured.LINEAR, "softmax")]
    return pd.concat([crit.norm_order(probes, a, measured.LINEAR, list(NORM_LABELS)) for a in cubics],
                     ignore_index=True)


def paradox_order_table(records):
    """:func:`paradox_order` for people: the share of cells below x/sqrt(N) at the first probe and
    at later ones, and the ratio of the norms."""
    from ..analysis.tables import number_cell
    from ..book.deliver import styled
    from ..display import name

    order = paradox_order(records)
    ref = name(measured.LINEAR)
    rows = [{"activation": shown, "norm": NORM_LABELS[r["metric"]], "cells": int(r["n_cells"]),
             f"share below {ref}, first probe": f"{r['share_lower_first']:.0%}",
             "share below, later probes": f"{r['share_lower_rest']:.0%}",
             "ratio, median (min to max)": f"{number_cell(r['median_ratio'])} ({number_cell(r['min_ratio'])} to "
                                           f"{number_cell(r['max_ratio'])})"}
            for shown, (_, r) in zip(first_only(order["activation"].map(name)), order.iterrows())]
    return styled(rows, f"Each cubic against {ref}, cell by cell (one seed, layer and probed step); ratio: the "
                        f"cubic's norm over {ref}'s")


def norm_curves(records) -> pd.DataFrame:
    """Per activation of :data:`PARADOX`, norm and probed step: the mean over layers and heads of
    each run, then its mean, min and max over seeds."""
    from .. import analysis

    probes = analysis.probe_frame([r for r in records if r["config"]["activation"] in PARADOX], list(NORM_LABELS))
    steps = probes.groupby(["activation", "metric", "step", "run"])["value"].mean().reset_index()
    return steps.groupby(["activation", "metric", "step"])["value"].agg(["mean", "min", "max"]).reset_index()


def norm_correlations(records, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Spearman's rho of each norm of :data:`CORRELATED` with final accuracy, among the family
    c·x^p and over all activations (:func:`polyattn.analysis.correlation_table`), with the subset
    (``subset``) and its number of activations."""
    from .. import analysis

    norms = analysis.norms_vs_accuracy(records, metrics=tuple(c.removesuffix("_mean") for c in CORRELATED))
    out = []
    for subset, frame in ((FAMILY_LABEL, norms[norms["activation"].isin(FAMILY)]), (ALL_LABEL, norms)):
        c = analysis.correlation_table(frame, list(CORRELATED), n_boot=n_boot, seed=seed, cluster="activation")
        out.append(c.assign(subset=subset, activations=frame["activation"].nunique()))
    return pd.concat(out, ignore_index=True)


def correlation_table(corr: pd.DataFrame, n_boot: int, preset: str):
    """:func:`norm_correlations` for people (the run-level p left out for the page's width: the
    interval beside it carries the same reading)."""
    from .. import analysis
    from ..book.deliver import styled

    rows = [{"activations": r["subset"], **{k: v for k, v in row.items() if k != "p"}}
            for row, (_, r) in zip(analysis.correlation_rows(corr, CORRELATED), corr.iterrows())]
    return styled(rows, f"Spearman's ρ of each norm (mean over a run's probes) with test accuracy; intervals by "
                        f"bootstrap over runs ({n_boot} resamples) and over whole activations; preset {preset}")


def correlation_numbers(corr: pd.DataFrame) -> dict:
    """The rows of :func:`norm_correlations` as numbers ``<subset>_<norm>_<what>`` (subset
    ``family`` or ``all``; norm ``attention``, ``jacobian`` or ``gradient``; what ``rho``,
    ``ci_low``/``ci_high`` over runs, ``activations_ci_low``/``high``, ``within_rho``, ``runs``)."""
    keys = dict(zip(CORRELATED, ("attention", "jacobian", "gradient")))
    out = {}
    for _, r in corr.iterrows():
        stem = f"{'family' if r['subset'] == FAMILY_LABEL else 'all'}_{keys[r['norm']]}"
        out.update({f"{stem}_rho": float(r["rho"]), f"{stem}_ci_low": float(r["ci_low"]),
                    f"{stem}_ci_high": float(r["ci_high"]), f"{stem}_activations_ci_low": float(r["cluster_ci_low"]),
                    f"{stem}_activations_ci_high": float(r["cluster_ci_high"]),
                    f"{stem}_within_rho": float(r["within_rho"]), f"{stem}_runs": int(r["n"])})
    out["family_activations"] = int(corr.loc[corr["subset"] == FAMILY_LABEL, "activations"].iloc[0])
    return out


# --- the activation Jacobian in Table 1's records ------------------------------------------------------


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
