"""Chapter 02's measured claim on Theorem 4.4 and Corollary 4.5 (``thm44_45``), the gradient with
respect to Q, against the stored Monte Carlo (:func:`.proofs_measurements.thm44_grid`) and the
survey of queries and keys sharing X (:func:`.proofs_measurements.correlated_qk`).  It decides its
form by the thresholds named here.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import pandas as pd

from ..claims.spec import Finding
from .proofs_measurements import GROWTH_TOLERANCE, P_MAX, correlated_qk, thm44_exponents, thm44_grid

#: An assumption "matters" when violating it (keys equal to queries, sharing X) moves the norm by
#: more than this factor against the independent model's prediction.
ASSUMPTION_EFFECT = 2.0


def thm44_45_numbers(mc: pd.DataFrame, corr: pd.DataFrame, P) -> dict:
    """What the Monte Carlo says about the gradient bound (p = 1), the leading order (p > 1) and the
    growth in N; and the effect of keys equal to queries on the M = XQKᵀXᵀ it differentiates."""
    unscaled = mc[~mc.scaled.astype(bool)]
    p1 = unscaled[unscaled.p == 1]
    hi = unscaled[unscaled.p == P_MAX]
    fits = thm44_exponents(mc)
    d_small = min(d for _, d in P.thm44_dims)
    f = {(int(r.d), int(r.p), bool(r.scaled)): r for r in fits.itertuples()}
    shared = corr[corr.setup == "shared X"].set_index(["rho", "p"]).ratio
    return {"p1_cells": int(len(p1)), "p1_max_ratio": float(p1.ratio_to_bound.max()),
            "p1_max_z": float(((p1["mean"] - p1.bound) / p1.se).max()),
            "p": P_MAX, "pmax_max_ratio": float(hi.ratio_to_bound.max()), "pmax_min_ratio": float(hi.ratio_to_bound.min()),
            "d_small": int(d_small), "reps": int(P.thm44_reps), "n_lo": int(min(P.thm44_ns)), "n_hi": int(max(P.thm44_ns)),
            "exponent_p1": float(f[(d_small, 1, False)].exponent),
            "exponent_p1_scaled": float(f[(d_small, 1, True)].exponent),
            "exponent_p1_scaled_ci_lo": float(f[(d_small, 1, True)].ci_lo),
            "exponent_p1_scaled_ci_hi": float(f[(d_small, 1, True)].ci_hi),
            "exponent_pmax_scaled": float(f[(d_small, P_MAX, True)].exponent),
            "k_equals_q_ratio": float(shared[(1.0, P_MAX)])}


def thm44_45_finding(n: dict) -> Finding:
    """Fails when the scaled growth (p = 1) is not √N; holds only under its assumptions when it is
    and keys equal to queries move the norm of M^∘p by more than :data:`ASSUMPTION_EFFECT`; holds
    otherwise."""
    grows_like_sqrt = abs(n["exponent_p1_scaled"] - 0.5) < GROWTH_TOLERANCE
    matters = n["k_equals_q_ratio"] > ASSUMPTION_EFFECT
    form = "fails" if not grows_like_sqrt else "holds only under its assumptions" if matters else "holds"
    lead = (f"is exceeded by up to {n['pmax_max_ratio']:.2f}$\\times$" if n["pmax_max_ratio"] > 1
            else f"is not exceeded (at most {n['pmax_max_ratio']:.2f}$\\times$ of it)")
    summary = (f"Under i.i.d. Gaussian $X, Q, K$ the gradient norm grows like $N^{{{n['exponent_p1']:.3f}}}$, and like "
               f"$N^{{{n['exponent_p1_scaled']:.3f}}}$ after scaling ($p = 1$, $N = {n['n_lo']}$ to ${n['n_hi']}$); the "
               f"$p = 1$ bound holds exactly, the $p > 1$ leading order {lead}; with $K = Q$ the $M^{{\\circ {n['p']}}}$ it "
               f"differentiates is {n['k_equals_q_ratio']:.1f}$\\times$ the independent prediction at ViT-B sizes.")
    return Finding(form, summary, n)


def thm44_45(root: Optional[Path] = None) -> Finding:
    """Theorem 4.4 and Corollary 4.5 against the book preset's Monte Carlo."""
    from .. import theory

    P = theory.preset("book")
    return thm44_45_finding(thm44_45_numbers(thm44_grid("book", root=root).table,
                                             correlated_qk("book", root=root).table, P))
