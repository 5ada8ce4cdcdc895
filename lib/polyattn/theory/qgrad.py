"""Thm 4.4 / Cor 4.5: the gradient of ``M^p`` with respect to ``Q`` (``M = X Q K^T X^T``) in
closed form, its bounds and Monte Carlo."""
from __future__ import annotations

import math
from typing import Iterable, Optional

import numpy as np
import pandas as pd
import torch

from .moments import double_factorial_odd
from .presets import generator
from .sampling import _chunk_for, _chunks, _mean_ci

Tensor = torch.Tensor


def qgrad_fro_norm(X: Tensor, Q: Tensor, K: Tensor, p: int, scaled: bool = False) -> Tensor:
    """||d M^{op} / dQ||_F for M = X Q K^T X^T, exact and closed-form.

    dM_ij / dQ = x_i (K^T x_j)^T, so ||d M_ij^p / dQ||_F = p |M_ij|^{p-1} ||x_i|| ||K^T x_j||;
    the full norm sums the squares over (i, j).  ``X`` is ``[..., N, D]``; ``scaled`` divides
    M^{op} by sqrt(N) (Cor 4.5).
    """
    if p < 1:
        raise ValueError(f"qgrad_fro_norm needs p >= 1, got {p}")
    xq, xk = X @ Q, X @ K
    r = X.pow(2).sum(-1)                          # ||x_i||^2
    u = xk.pow(2).sum(-1)                         # ||K^T x_j||^2
    if p == 1:
        sq = r.sum(-1) * u.sum(-1)
    else:
        m = xq @ xk.transpose(-2, -1)
        sq = (m.pow(2 * p - 2) * r[..., :, None] * u[..., None, :]).sum((-2, -1)) * p * p
    norm = sq.sqrt()
    return norm / math.sqrt(X.shape[-2]) if scaled else norm


def qgrad_fro_norm_autograd(X: Tensor, Q: Tensor, K: Tensor, p: int, scaled: bool = False) -> Tensor:
    """The same norm from the full Jacobian (torch.func.jacrev), for one ``X`` of shape [N, D]."""
    n = X.shape[0]

    def mp(q):
        m = (X @ q @ K.T @ X.T).pow(p)
        return m / math.sqrt(n) if scaled else m

    return torch.func.jacrev(mp)(Q).pow(2).sum().sqrt()


def thm44_bound_p1(n, D: int, d: int, sx: float = 1.0, sw: float = 1.0, scaled: bool = False):
    """The paper's p = 1 bound: E||dM/dQ||_F <= N D sqrt(d) sx^2 sw (divided by sqrt(N) if scaled)."""
    n = np.asarray(n, dtype=np.float64)
    b = n * D * math.sqrt(d) * sx ** 2 * sw
    return b / np.sqrt(n) if scaled else b


def thm44_exact_second_moment_p1(n, D: int, d: int, sx: float = 1.0, sw: float = 1.0):
    """E||dM/dQ||_F^2 = N D d sx^4 sw^2 (N D + 2), exactly (||dM/dQ||_F = ||X||_F ||X K||_F)."""
    n = np.asarray(n, dtype=np.float64)
    return n * D * d * sx ** 4 * sw ** 2 * (n * D + 2)


def thm44_leading(n, D: int, d: int, p: int, sx: float = 1.0, sw: float = 1.0, scaled: bool = False):
    """Leading-order reconstruction for p >= 1: N p sqrt((2p-3)!!) D^p d^{p/2} sx^{2p} sw^{2p-1}.

    (Q and K entries both of variance sw^2.)  Reduces to :func:`thm44_bound_p1` at p = 1.
    """
    n = np.asarray(n, dtype=np.float64)
    b = n * p * math.sqrt(double_factorial_odd(p - 1)) * float(D) ** p * d ** (p / 2) * sx ** (2 * p) * sw ** (2 * p - 1)
    return b / np.sqrt(n) if scaled else b


def thm44_monte_carlo(ns: Iterable[int], dims: Iterable[tuple[int, int]], ps: Iterable[int], reps: int, seed: int,
                      sx: float = 1.0, sw: Optional[float] = None, level: float = 0.95) -> pd.DataFrame:
    """Monte Carlo of E||d M^{op}/dQ||_F with X, Q, K i.i.d. Gaussian (fresh Q, K each draw).

    ``sw`` defaults to 1/sqrt(D) (an init-like weight scale).  One row per (N, D, d, p, scaled)
    with the mean, standard error, confidence interval and the bound (p = 1: the paper's;
    p > 1: the leading-order reconstruction).
    """
    ps = tuple(ps)
    rows = []
    for D, d in dims:
        w = sw if sw is not None else 1.0 / math.sqrt(D)
        for n in ns:
            g = generator(seed, "thm44", n, D, d)
            vals = {p: [] for p in ps}
            for k in _chunks(reps, _chunk_for(n, D)):
                X = torch.randn(k, n, D, generator=g, dtype=torch.float64) * sx
                Q = torch.randn(k, D, d, generator=g, dtype=torch.float64) * w
                K = torch.randn(k, D, d, generator=g, dtype=torch.float64) * w
                for p in ps:
                    vals[p].append(qgrad_fro_norm(X, Q, K, p))
            for p in ps:
                v0 = torch.cat(vals[p]).numpy()
                for scaled in (False, True):
                    v = v0 / math.sqrt(n) if scaled else v0
                    mean, se, lo, hi = _mean_ci(v, level)
                    bound = float(thm44_leading(n, D, d, p, sx, w, scaled))
                    rows.append({"N": n, "D": D, "d": d, "p": p, "scaled": scaled, "sw": w, "mean": mean,
                                 "se": se, "ci_lo": lo, "ci_hi": hi, "reps": len(v), "bound": bound,
                                 "ratio_to_bound": mean / bound, "ratio_ci_lo": lo / bound,
                                 "ratio_ci_hi": hi / bound})
    return pd.DataFrame(rows)

