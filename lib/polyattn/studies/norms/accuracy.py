"""Chapter 03's section on whether the norms predict accuracy: each run's norms against its final
accuracy, the rank correlations, and the measured claim's numbers that the prose glues."""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ... import analysis
from ...analysis.tables import bracket_cell, interval_cell, number_cell
from ...book.deliver import styled
from ...display import name
from ...measures import norms as measured
from .page import Table1, compact, plural, signed

#: The norms correlated with accuracy (each run's mean over its probes), as a reader names them;
#: the columns and the order of :data:`polyattn.measures.norms.NORMS`.
CORRELATED = {"attn_fro_over_sqrt_n_mean": "‖A‖_F / √N", "act_jac_fro_mean": "‖∂φ(S)/∂S‖_F",
              "param_jac_fro_mean": "‖∂A/∂W_Q‖_F"}
#: The activations drawn in colour in the correlation figure (every other one in grey).
HIGHLIGHT = ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1")
#: Glue keys of the finding's numbers of each norm of ``norms_predict``.
NORM_KEYS = {"attention norm": "attn", "activation Jacobian": "act_jac", "parameter Jacobian": "param_jac"}


def run_norms(t1: Table1) -> pd.DataFrame:
    """One row per run: its norms averaged over training and its final accuracy
    (:func:`polyattn.analysis.norms_vs_accuracy`)."""
    return analysis.norms_vs_accuracy(t1.records) if t1 else pd.DataFrame()


def correlation_figure(t1: Table1):
    """Final accuracy against each norm of :data:`CORRELATED`, one point per run; the activations
    of :data:`HIGHLIGHT` in colour, the others in grey."""
    if not t1:
        return None
    import matplotlib.pyplot as plt

    from ...plotting import activation_color, legend_outside, stamp

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
