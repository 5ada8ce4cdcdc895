"""Critique 7: matrix powers ``S^p = S S ... S`` against elementwise powers ``S^{op}`` of the scores.

``S = X Q K^T X^T / sqrt(d)`` is the N x N score matrix of one head.  Read as a matrix power,
``phi(S) = S^p / sqrt(N)``; read elementwise, ``phi(S)_ij = S_ij^p / sqrt(N)``.  The two agree
for p = 1 and for diagonal S, and nowhere else in general.

Which reading the theory uses: the proofs, in the walkthrough of the appendix that this
project has (the paper's displayed statements are not reproduced there), are entrywise.
Theorem 4.2's proof computes the second moment of the p-th power of one entry,
``E[(c_11^p)^2] = E[s^{2p}]`` with ``s = sum_i a_1i b_i1``, calls it independent of N and
multiplies it by the N^2 entries; for a matrix power the (1, 1) entry is a sum of N^(p-1)
products ``c_1k c_kl ...`` whose second moment grows with N, so that step holds only
elementwise.  Theorem 4.4's proof writes ``M^{op}`` (elementwise) and differentiates entry by
entry, ``dM_ij^p/dQ = p M_ij^(p-1) dM_ij/dQ``.  Which reading the experiments run: the
library's ``poly:p=P`` activation (:mod:`polyattn.activations`) computes ``s.pow(p) / sqrt(N)``
on the score tensor, elementwise.

What the readings predict under i.i.d. Gaussian X, Q, K (Q, K of std 1/sqrt(D)), with
``A = XQ``, ``B = XK`` and ``S^p = A (B^T A / sqrt(d))^(p-1) B^T / sqrt(d)``: elementwise,
``||S^{op}||_F / sqrt(N)`` grows like N^(1/2) for every p (Cor. 4.3).  As a matrix power every
further factor ``B^T A = K^T X^T X Q`` brings a sum over N tokens: about ``N K^T Q`` when
N >> D (queries and keys share X), so the growth is N^(p - 1/2); with independent A and B
(Theorem 4.2's model) the sum has mean zero and brings sqrt(N), so the growth is N^(p/2).

Everything is float64 and seeded through :func:`polyattn.theory.generator`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd
import torch

from .power_laws import fit_exponents
from .presets import check, generator
from .sampling import _chunk_for, _chunks, _mean_ci

Tensor = torch.Tensor
READINGS = ("elementwise", "matrix")
SETUPS = ("shared X", "independent A, B")


@dataclass(frozen=True)
class MatrixPowerGrid:
    """The N grid, draws per N and the sizes (model width D, head dimension d) of one preset."""

    ns: tuple
    reps: int
    D: int
    d: int
    ps: tuple = (1, 2, 3)


GRIDS = {
    "smoke": MatrixPowerGrid(ns=(16, 32, 64), reps=8, D=16, d=8),
    "book": MatrixPowerGrid(ns=(16, 32, 64, 128, 256, 512, 1024), reps=64, D=64, d=16),
    "paper": MatrixPowerGrid(ns=(16, 32, 64, 128, 256, 512, 1024, 2048), reps=256, D=64, d=16),
}


def grid(preset: str) -> MatrixPowerGrid:
    """The grid of a preset (smoke, book or paper)."""
    return GRIDS[check(preset)]


def _check_p(p: int) -> int:
    if int(p) != p or p < 1:
        raise ValueError(f"the power p must be a positive integer, got {p!r}")
    return int(p)


def elementwise_power_fro(S: Tensor, p: int, scaled: bool = True) -> Tensor:
    """||S^{op}||_F (divided by sqrt(N) if ``scaled``) over the last two axes of ``S`` [..., N, N]."""
    norm = S.pow(_check_p(p)).pow(2).sum((-2, -1)).sqrt()
    return norm / math.sqrt(S.shape[-1]) if scaled else norm


def matrix_power_fro(S: Tensor, p: int, scaled: bool = True) -> Tensor:
    """||S^p||_F, S^p = S @ ... @ S (``torch.linalg.matrix_power``), divided by sqrt(N) if ``scaled``."""
    if S.shape[-1] != S.shape[-2]:
        raise ValueError(f"a matrix power needs square matrices, got shape {tuple(S.shape)}")
    norm = torch.linalg.matrix_power(S, _check_p(p)).pow(2).sum((-2, -1)).sqrt()
    return norm / math.sqrt(S.shape[-1]) if scaled else norm


def factored_matrix_power_fro(A: Tensor, B: Tensor, p: int, scale: float = 1.0, scaled: bool = True) -> Tensor:
    """:func:`matrix_power_fro` of ``S = scale * A @ B^T`` (A, B [..., N, d]) without forming S.

    ``S^p = scale^p A M^(p-1) B^T`` with the d x d matrix ``M = B^T A``, and ``||Y B^T||_F^2 =
    sum((Y^T Y) * (B^T B))`` for ``Y = A M^(p-1)``: O(N d^2) work instead of O(N^3).
    """
    p = _check_p(p)
    Y = A @ torch.linalg.matrix_power(B.transpose(-2, -1) @ A, p - 1)
    sq = ((Y.transpose(-2, -1) @ Y) * (B.transpose(-2, -1) @ B)).sum((-2, -1)).clamp_min(0)
    norm = sq.sqrt() * abs(scale) ** p
    return norm / math.sqrt(A.shape[-2]) if scaled else norm


def draw_factors(g: torch.Generator, reps: int, n: int, D: int, d: int, shared_x: bool = True):
    """``reps`` pairs (A, B) [reps, N, d] with scores ``S = A B^T / sqrt(d)``: A = XQ, B = XK, X [N, D]
    standard normal, Q, K [D, d] of std 1/sqrt(D) (as chapter 02 draws them); ``shared_x=False``
    draws a second X for B (independent A and B, Theorem 4.2's model)."""
    X = torch.randn(reps, n, D, generator=g, dtype=torch.float64)
    Q = torch.randn(reps, D, d, generator=g, dtype=torch.float64) / math.sqrt(D)
    K = torch.randn(reps, D, d, generator=g, dtype=torch.float64) / math.sqrt(D)
    X2 = X if shared_x else torch.randn(reps, n, D, generator=g, dtype=torch.float64)
    return X @ Q, X2 @ K


def readings_survey(ns: Iterable[int], ps: Iterable[int], reps: int, seed: int, D: int, d: int,
                    shared_x: bool = True, level: float = 0.95) -> pd.DataFrame:
    """Monte Carlo of E||phi(S)||_F / sqrt(N) under both readings: one row per (N, p, reading)
    with the mean, standard error and confidence interval over ``reps`` draws of X, Q, K."""
    ps, setup = tuple(_check_p(p) for p in ps), SETUPS[0] if shared_x else SETUPS[1]
    rows = []
    for n in ns:
        g = generator(seed, "matrix-powers", setup, n, D, d)
        vals = {(r, p): [] for r in READINGS for p in ps}
        for k in _chunks(reps, _chunk_for(n, d)):
            A, B = draw_factors(g, k, n, D, d, shared_x)
            S = A @ B.transpose(-2, -1) / math.sqrt(d)
            for p in ps:
                vals[("elementwise", p)].append(elementwise_power_fro(S, p))
                vals[("matrix", p)].append(factored_matrix_power_fro(A, B, p, 1 / math.sqrt(d)))
        for (reading, p), v in vals.items():
            mean, se, lo, hi = _mean_ci(torch.cat(v).numpy(), level)
            rows.append({"setup": setup, "reading": reading, "p": p, "N": n, "D": D, "d": d, "mean": mean,
                         "se": se, "ci_lo": lo, "ci_hi": hi, "reps": reps})
    return pd.DataFrame(rows)


def predicted_exponent(reading: str, p: int, shared_x: bool = True) -> float:
    """The growth exponent in N of E||phi(S)||_F / sqrt(N) for large N (N >> D when X is shared)."""
    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r}; choose one of {READINGS}")
    p = _check_p(p)
    if reading == "elementwise" or p == 1:
        return 0.5
    return p - 0.5 if shared_x else p / 2


def growth_exponents(survey: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Power-law fits of the survey's means against N per (setup, reading, p), with the prediction
    of :func:`predicted_exponent` and the local slope between the two largest N."""
    fits = fit_exponents(survey, "N", ["setup", "reading", "p"], level=level)
    fits["predicted"] = [predicted_exponent(r, p, s == SETUPS[0]) for s, r, p in zip(fits.setup, fits.reading, fits.p)]
    top = []
    for s, r, p in zip(fits.setup, fits.reading, fits.p):
        sub = survey[(survey.setup == s) & (survey.reading == r) & (survey.p == p)].sort_values("N").tail(2)
        top.append(float(np.log(sub["mean"].iloc[1] / sub["mean"].iloc[0]) / np.log(sub.N.iloc[1] / sub.N.iloc[0])))
    fits["slope_at_largest_n"] = top
    return fits
