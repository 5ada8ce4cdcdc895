"""Chapter 03's measured claim: do the attention and Jacobian norms predict which activation
trains best?

Every run of the Table 1 analogue (grid ``vit_table1``) records, per layer and head, the
attention norm over sqrt(N), the Frobenius norm of the activation's Jacobian and of the
parameter Jacobian.  Each norm is summarised per run by its mean over all probes, and ranked
against the run's final test accuracy (:func:`polyattn.analysis.norms_vs_accuracy`,
:func:`polyattn.analysis.correlation_table`).  "Which activation trains best" is a question
between activations, so the interval that decides is the one that resamples whole activations:
a norm *separates activations* when that interval of Spearman's rho excludes 0.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from .. import analysis
from ..claims.spec import Finding
from ..display import typographic
from .stored import grid_records

#: The grid whose runs are read.
GRID = "vit_table1"
#: Each norm's column in :func:`polyattn.analysis.norms_vs_accuracy` (its mean over training) and
#: its name in the finding's numbers, in the order of the chapter's table.
NORMS = {"attn_fro_over_sqrt_n_mean": "attention norm", "act_jac_fro_mean": "activation Jacobian",
         "param_jac_fro_mean": "parameter Jacobian"}
#: The norm named in the finding's sentence.
HEADLINE = "attn_fro_over_sqrt_n_mean"
#: Bootstrap draws (and permutations) of every interval, and their seed.
N_BOOT = 2000
SEED = 0
#: Fewer activations with finite values than this give no interval that resamples activations.
MIN_ACTIVATIONS = 3


def correlations(root: Optional[Path] = None):
    """The runs' norms against final accuracy (one row per run) and the three views of each
    norm's rank correlation (:func:`polyattn.analysis.correlation_table`), with the grid."""
    grid = grid_records(GRID, root)
    if not grid.records:
        return grid, None, None
    norms = analysis.norms_vs_accuracy(grid.records)
    corr = analysis.correlation_table(norms, list(NORMS), n_boot=N_BOOT, seed=SEED, cluster="activation")
    return grid, norms, corr


def separates(row) -> bool:
    """The interval that resamples whole activations excludes 0."""
    lo, hi = row["cluster_ci_low"], row["cluster_ci_high"]
    return bool(lo == lo and hi == hi and (lo > 0 or hi < 0))


def decide(n_separating: int, n_norms: int, n_activations: int) -> str:
    """``holds`` when every norm separates activations, ``mixed`` when some do, ``inconclusive at
    this power`` when none does, ``inconclusive at this scale`` with fewer than
    :data:`MIN_ACTIVATIONS` activations."""
    if n_activations < MIN_ACTIVATIONS:
        return "inconclusive at this scale"
    if n_separating == n_norms:
        return "holds"
    return "mixed" if n_separating else "inconclusive at this power"


def norms_predict(root: Optional[Path] = None) -> Finding:
    """Spearman's rho of each norm with final accuracy over the stored Table 1 runs, over runs,
    resampling whole activations and within an activation, and the form it decides."""
    grid, norms, corr = correlations(root)
    cfg = grid.configs[0]
    scale = f"Table 1 analogue, {cfg.train_subset:,} images, {cfg.epochs} epochs"
    if corr is None:
        return Finding("inconclusive at this scale", f"No run of the Table 1 analogue is stored ({scale}).",
                       {"runs": 0, "runs planned": grid.planned})
    n_activations = int(norms.loc[norms["test_acc"].notna(), "activation"].nunique())
    numbers = {"runs": int(corr.iloc[0]["n"]), "runs planned": grid.planned, "activations": n_activations,
               "diverged runs left out": int(norms["test_acc"].isna().sum()),
               "training images": int(cfg.train_subset), "epochs": int(cfg.epochs), "norms": len(NORMS)}
    flags = []
    for _, r in corr.iterrows():
        name = NORMS[r["norm"]]
        flags.append(separates(r))
        numbers.update({f"{name}: rho": float(r["rho"]), f"{name}: CI low": float(r["ci_low"]),
                        f"{name}: CI high": float(r["ci_high"]), f"{name}: p": float(r["p"]),
                        f"{name}: CI over activations low": float(r["cluster_ci_low"]),
                        f"{name}: CI over activations high": float(r["cluster_ci_high"]),
                        f"{name}: rho within activations": float(r["within_rho"]),
                        f"{name}: within CI low": float(r["within_ci_low"]),
                        f"{name}: within CI high": float(r["within_ci_high"]),
                        f"{name}: within p": float(r["within_p"]),
                        f"{name}: separates activations": "yes" if flags[-1] else "no"})
    numbers["norms separating activations"] = sum(flags)
    form = decide(sum(flags), len(flags), n_activations)
    h = corr[corr["norm"] == HEADLINE].iloc[0]
    summary = (f"Over {numbers['runs']} runs of {n_activations} activations, Spearman $\\rho$ of "
               f"$\\lVert A \\rVert_F/\\sqrt{{N}}$ with final accuracy is {h['rho']:+.2f} (95% CI over runs "
               f"{h['ci_low']:+.2f} to {h['ci_high']:+.2f}, over whole activations {h['cluster_ci_low']:+.2f} "
               f"to {h['cluster_ci_high']:+.2f}); within an activation {h['within_rho']:+.2f} "
               f"({h['within_ci_low']:+.2f} to {h['within_ci_high']:+.2f}); "
               f"{sum(flags)} of {len(flags)} norms separate activations ({scale}).")
    return Finding(form, typographic(summary), numbers)
