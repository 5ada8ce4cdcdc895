"""Chapter 02's section on Theorem 4.4 and Corollary 4.5: the gradient with respect to Q.

    qgrad_difference(seed); thm44_survey(preset, seed); thm44_ratio_table(...); thm44_numbers(...)
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import pandas as pd

from ... import theory
from ...measures import proofs_measurements
from .page import claim_numbers, formatted, nowrap_table


def qgrad_difference(seed: int, ps: Sequence[int] = (1, 2, 3)) -> float:
    """The largest relative difference between the closed-form gradient norm and the full Jacobian
    from autograd, over ``ps``, scaled and not, on one small draw of X, Q and K (float64)."""
    import torch

    g = theory.generator(seed, "qgrad-check")
    X, Q, K = (torch.randn(*s, generator=g, dtype=torch.float64) for s in ((6, 5), (5, 3), (5, 3)))
    diffs = []
    for p in ps:
        for scaled in (False, True):
            a = theory.qgrad_fro_norm(X, Q, K, p, scaled)
            b = theory.qgrad_fro_norm_autograd(X, Q, K, p, scaled)
            diffs.append(float(abs(a - b) / b))
    return max(diffs)


@lru_cache(maxsize=8)
def thm44_survey(preset: str, seed: int) -> pd.DataFrame:
    """The stored Monte Carlo of Theorem 4.4 (:func:`polyattn.measures.proofs_measurements.thm44_grid`); kept
    for the session (do not modify the frame)."""
    return proofs_measurements.thm44_grid(preset, seed).table


def thm44_ratio_table(mc: pd.DataFrame, preset: str, seed: int):
    """The unscaled Monte Carlo mean over the bound (p = 1) or its leading order (p > 1), per
    (D, d, p) and N."""

    P = theory.preset(preset)
    ratio = mc[~mc.scaled.astype(bool)].pivot_table(index=["D", "d", "p"], columns="N", values="ratio_to_bound")
    dims = sorted({(int(D), int(d)) for D, d, _ in ratio.index})
    several_D = len({D for D, _ in dims}) > 1
    rows = [{"cell": (f"D = {D}, " if several_D else "") + f"d = {d}, p = {p}",
             **{f"N = {n}": f"{ratio.loc[(D, d, p), n]:.3f}" for n in ratio.columns}} for D, d, p in ratio.index]
    shown = ", ".join(f"({D}, {d})" for D, d in dims)
    return nowrap_table(rows, f"Mean gradient norm over Theorem 4.4's bound (p = 1) or its leading order (p > 1), unscaled "
                             f"((D, d) = {shown}; {P.thm44_reps} draws per cell, σ_x = 1, σ_w = 1/√D; preset {preset}, "
                             f"seed {seed})")


def thm44_numbers(qgrad: float) -> dict[str, str]:
    """The glued numbers of Theorem 4.4 and Corollary 4.5, from its finding, and the largest
    difference of the closed-form gradient norm from autograd's."""
    n = claim_numbers("thm44_45")
    n["qgrad_difference"] = qgrad
    return formatted(n, {
        "qgrad_difference": "sci", "p1_max_ratio": ".4f", "p1_max_z": ".1f", "p1_cells": "d", "pmax_max_ratio": ".2f",
        "pmax_min_ratio": ".2f", "d_small": "d", "exponent_p1": ".3f", "exponent_p1_scaled": ".3f",
        "exponent_p1_scaled_ci_lo": ".3f", "exponent_p1_scaled_ci_hi": ".3f", "p": "d"}, prefix="t44_")
