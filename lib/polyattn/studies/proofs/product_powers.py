"""Chapter 02's section on Theorem 4.2 and Corollary 4.3 (powers of a product of Gaussian
matrices), and what the scale 1/sqrt(N) buys.

    moment_ratio_table(); moment_numbers()                                    # the exact moments
    thm42_survey(preset, seed); bound_figure(...); exponent_table(...)        # Theorem 4.2
    score_scale(...); score_scale_figure(...); score_scale_numbers(...)       # what 1/sqrt(N) buys
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np
import pandas as pd

from ... import theory
from ...display import name
from ...measures import proofs_measurements
from .page import P_MAX, UNSCALED_CUBE, legend, nowrap_table, pm_cell, power_color, stamp

#: The activations compared on Gaussian scores of a given scale (growth in N adds the unscaled cube).
SCALE_SPECS = ("softmax", "poly:p=1", "poly:p=2", "poly:p=3")


# --- Theorem 4.2 and Corollary 4.3 --------------------------------------------------------------


def moment_ratio_table(ps: Sequence[int] = (1, 2, 3, 4), ds: Sequence[int] = (1, 2, 4, 16, 64, 768),
                       tolerance: float = 0.01):
    """The exact second moment over the leading term (2p − 1)!! Dᵖ per p and D, and the smallest D
    at which the ratio falls within ``tolerance`` of 1."""

    ratio = theory.moment_ratio_table(ps, ds).pivot(index="p", columns="D", values="ratio")
    rows = [{"p": int(p), **{f"D = {d}": f"{ratio.loc[p, d]:.3f}" for d in ratio.columns},
             f"smallest D within {tolerance:.0%}": f"{theory.min_d_within(int(p), tolerance):,}"} for p in ratio.index]
    return nowrap_table(rows, "Exact second moment over the leading term (2p − 1)!! Dᵖ (exact arithmetic, no sampling)")


def moment_numbers() -> dict[str, str]:
    """The glued ratios of the exact moment to its leading term (p = 3 at D = 1, 64, 768) and the
    smallest D at which it is within 1% (p = 3)."""
    r = theory.moment_ratio_table([P_MAX], [1, 64, 768]).set_index("D")["ratio"]
    return {"t42_ratio_p3_d1": f"{r[1]:.1f}", "t42_ratio_p3_d64": f"{r[64]:.3f}",
            "t42_ratio_p3_d768": f"{r[768]:.4f}", "t42_mind_p3": f"{theory.min_d_within(P_MAX, 0.01):,}"}


@lru_cache(maxsize=8)
def thm42_survey(preset: str, seed: int) -> pd.DataFrame:
    """The stored Monte Carlo of Theorem 4.2 (:func:`polyattn.measures.proofs_measurements.thm42_grid`); kept
    for the session (do not modify the frame)."""
    return proofs_measurements.thm42_grid(preset, seed).table


def exact_over_leading(p: int, D) -> np.ndarray:
    """√(exact moment / leading term), the factor by which the exact-moment bound exceeds the stated one."""
    D = np.asarray(D, dtype=float)
    return np.sqrt(np.prod([1 + 2 * k / D for k in range(p)], axis=0))


def bound_figure(mc: pd.DataFrame, preset: str):
    """The Monte Carlo mean of ‖C∘ᵖ‖_F over the stated bound against D at the preset's large N,
    with its 95% interval, beside √(exact / leading) for p ≥ 2."""
    import matplotlib.pyplot as plt

    P = theory.preset(preset)
    small = mc[(mc.N == P.thm42_n_large) & ~mc.scaled.astype(bool)]
    fig, ax = plt.subplots(figsize=(6.4, 3.3))
    for p in P.ps:
        sub = small[small.p == p].sort_values("D")
        ax.errorbar(sub.D, sub.ratio_to_bound, yerr=[sub.ratio_to_bound - sub.ratio_ci_lo,
                                                     sub.ratio_ci_hi - sub.ratio_to_bound],
                    fmt="o", color=power_color(p), capsize=3, label=f"p = {p}: Monte Carlo")
        if p > 1:
            dd = np.geomspace(sub.D.min(), sub.D.max(), 50)
            ax.plot(dd, exact_over_leading(p, dd), color=power_color(p), lw=1, label=f"p = {p}: √(exact / leading)")
    ax.axhline(1, color="black", lw=1, ls="--", label="the stated bound")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("D")
    ax.set_ylabel("E‖C∘ᵖ‖_F / stated bound")
    ax.set_title(f"Over the stated bound at N = {P.thm42_n_large}")
    legend(ax, outside=True)
    stamp(ax, preset, f"{P.thm42_reps} draws, 95% CI", loc="upper right")
    fig.tight_layout()
    return fig


def exponent_table(mc: pd.DataFrame, preset: str):
    """The fitted exponents of E‖C∘ᵖ‖_F per p: in N at the grid's fixed D, unscaled and scaled by
    1/√N, and in D at its fixed N, each beside the exponent the theorem predicts."""

    P = theory.preset(preset)
    fits_n, fits_d = proofs_measurements.thm42_exponents(mc, P)
    fn = {(int(r.p), bool(r.scaled)): r for r in fits_n.itertuples()}
    fd = {int(r.p): r for r in fits_d.itertuples()}
    rows = [{"p": p,
             "in N, unscaled (theorem: 1)": pm_cell(fn[(p, False)].exponent, fn[(p, False)].ci_lo, fn[(p, False)].ci_hi),
             "in N, scaled by 1/√N (theorem: 1/2)": pm_cell(fn[(p, True)].exponent, fn[(p, True)].ci_lo, fn[(p, True)].ci_hi),
             "in D (leading order: p/2)": pm_cell(fd[p].exponent, fd[p].ci_lo, fd[p].ci_hi)}
            for p in sorted(fd)]
    return nowrap_table(rows, f"Fitted exponents of E‖C∘ᵖ‖_F ± 95% CI: in N at D = {P.thm42_d_at_n}, in D at "
                             f"N = {P.thm42_n_at_d} (weighted least squares on log-log axes, interval widened by the "
                             f"reduced χ² when above 1; preset {preset}, {P.thm42_reps} draws per point)")


# --- what 1/sqrt(N) buys ------------------------------------------------------------------------


@lru_cache(maxsize=8)
def score_scale(preset: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """E‖φ(S)‖_F/√N against the score scale σ at the preset's N (:data:`SCALE_SPECS`) and E‖φ(S)‖_F
    against N at σ = 1 (with the unscaled cube); kept for the session."""
    P = theory.preset(preset)
    by_sigma = theory.score_scale_survey(list(SCALE_SPECS), P.sigma_grid, P.sigma_n, P.sigma_reps, seed)
    by_n = theory.norm_vs_n_survey(list(SCALE_SPECS) + [UNSCALED_CUBE], P.thm42_ns, 1.0, P.sigma_reps, seed)
    return by_sigma, by_n


def score_scale_figure(by_sigma: pd.DataFrame, preset: str):
    """E‖φ(S)‖_F/√N against the score scale σ per activation, softmax's bound 1 dashed and the σ at
    which the scaled cube meets it dotted."""
    import matplotlib.pyplot as plt

    from ... import plotting
    P = theory.preset(preset)
    fig, ax = plt.subplots(figsize=(6.4, 3.3))
    plotting.line_plot(by_sigma, "sigma", "mean", ax=ax, band=None, logx=True, logy=True, legend=False,
                       order=list(SCALE_SPECS))
    for line in ax.get_lines():
        line.set_label(name(line.get_label()))
    ax.axhline(1.0, color="black", lw=1, ls="--", label="softmax's bound")
    ax.axvline(theory.sigma_at_softmax_bound(P_MAX), color=power_color(P_MAX), lw=0.8, ls=":",
               label=f"σ where {name(f'poly:p={P_MAX}')} meets it")
    ax.set_xlabel("score standard deviation σ")
    ax.set_ylabel("E‖φ(S)‖_F / √N")
    ax.set_title(f"Against the score scale (N = {P.sigma_n})")
    legend(ax, outside=True)
    stamp(ax, preset, f"{P.sigma_reps} draws per point")
    fig.tight_layout()
    return fig


def growth_fits(by_n: pd.DataFrame) -> pd.DataFrame:
    """Power-law fits of E‖φ(S)‖_F against N per activation, indexed by activation."""
    return theory.fit_exponents(by_n, "N", ["activation"]).set_index("activation")


def score_scale_numbers(by_sigma: pd.DataFrame, by_n: pd.DataFrame, preset: str) -> dict[str, str]:
    """The glued numbers of the score-scale comparison: the ratios at σ = 1 (or the largest σ of the
    preset), the σ at which x³/√N meets softmax's bound, and the exponents in N of the scaled and
    the unscaled cube."""
    P = theory.preset(preset)
    sigma = 1.0 if 1.0 in P.sigma_grid else P.sigma_grid[-1]
    at = by_sigma[by_sigma.sigma == sigma].groupby("activation")["mean"].mean()
    fits = growth_fits(by_n).exponent
    return {"scale_n": f"{P.sigma_n:,}", "scale_sigma": f"{sigma:g}", "scale_softmax": f"{at['softmax']:.3f}",
            "scale_poly1": f"{at['poly:p=1']:.3f}", "scale_poly3": f"{at[f'poly:p={P_MAX}']:.2f}",
            "scale_cross_p3": f"{theory.sigma_at_softmax_bound(P_MAX):.3f}",
            "growth_poly3": f"{fits[f'poly:p={P_MAX}']:.3f}",
            "growth_unscaled": f"{fits[UNSCALED_CUBE]:.3f}"}
