"""Scaled polynomials against softmax at a given score scale: Monte Carlo surveys over the scale
and over N, and the i.i.d.-Gaussian predictions of an elementwise activation's norm and of
its Jacobian's norm (the gradient that can pass through the activation)."""
from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import torch

from .. import activations as _acts
from .moments import double_factorial_odd
from .presets import generator
from .sampling import _mean_ci


def random_scores(g: torch.Generator, reps: int, n: int, D: int, sigma: float) -> torch.Tensor:
    """``reps`` score matrices S = A B ``[reps, N, N]`` with A ``[N, D]`` and B ``[D, N]`` i.i.d.
    Gaussian of equal std s1 = s2, chosen so that Var(S) = D s1^2 s2^2 = sigma^2."""
    scale = math.sqrt(sigma / math.sqrt(D))
    a = torch.randn(reps, n, D, generator=g) * scale
    return a @ (torch.randn(reps, D, n, generator=g) * scale)


def score_scale_survey(specs: Sequence[str], sigmas: Iterable[float], n: int, reps: int, seed: int,
                       D: int = 64) -> pd.DataFrame:
    """E||phi(S)||_F / sqrt(N) for scores S = A B with A [N, D], B [D, N] Gaussian and std(S) = sigma.

    ``phi`` is the activation of each spec (softmax included), so the scaled polynomial's
    expected norm is put next to softmax's (deterministic bound: ratio <= 1).
    """
    rows = []
    for sigma in sigmas:
        g = generator(seed, "score-scale", n, D, float(sigma))
        s = random_scores(g, reps, n, D, sigma)
        for spec in specs:
            w = _acts.get(spec)(s)
            vals = (w.double().pow(2).sum((-2, -1)).sqrt() / math.sqrt(n)).numpy()
            mean, se, lo, hi = _mean_ci(vals)
            rows.append({"activation": spec, "sigma": float(sigma), "N": n, "mean": mean, "se": se,
                         "ci_lo": lo, "ci_hi": hi,
                         "gaussian_prediction": gaussian_elementwise_fro(spec, n, sigma) / math.sqrt(n)})
    return pd.DataFrame(rows)


def norm_vs_n_survey(specs: Sequence[str], ns: Iterable[int], sigma: float, reps: int, seed: int,
                     D: int = 64) -> pd.DataFrame:
    """E||phi(S)||_F against N at fixed score std ``sigma`` (same construction as :func:`score_scale_survey`)."""
    rows = []
    for n in ns:
        g = generator(seed, "norm-vs-n", n, D, float(sigma))
        s = random_scores(g, reps, n, D, sigma)
        for spec in specs:
            vals = _acts.get(spec)(s).double().pow(2).sum((-2, -1)).sqrt().numpy()
            mean, se, lo, hi = _mean_ci(vals)
            rows.append({"activation": spec, "N": n, "sigma": sigma, "mean": mean, "se": se,
                         "ci_lo": lo, "ci_hi": hi})
    return pd.DataFrame(rows)


def gaussian_elementwise_fro(spec: str, n: int, sigma: float, mean: float = 0.0, nodes: int = 64) -> float:
    """N sqrt(E[phi(s)^2]) for i.i.d. scores s ~ N(mean, sigma^2) and an elementwise activation.

    The i.i.d.-Gaussian prediction of ||phi(S)||_F for an N x N score matrix (Gauss-Hermite
    quadrature); NaN for row-coupled activations such as softmax.
    """
    act = _acts.get(spec)
    if not act.elementwise:
        return float("nan")
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    s = torch.tensor(mean + sigma * x, dtype=torch.float64)
    vals = act.pointwise(s.float(), torch.tensor(float(n))).double().numpy()
    second = float((w * vals ** 2).sum() / math.sqrt(2 * math.pi))
    return n * math.sqrt(second)



def scaled_power_jacobian(p: int, sigma: float) -> float:
    """||d phi(S)/dS||_F / sqrt(N) for phi = s^p / sqrt(N) on i.i.d. N(0, sigma^2) scores, in expectation
    of the square: p sigma^(p-1) sqrt((2p-3)!!), the same for every N (and for s |s|^(p-1))."""
    if p < 1:
        raise ValueError(f"scaled_power_jacobian needs p >= 1, got {p}")
    return p * sigma ** (p - 1) * math.sqrt(double_factorial_odd(p - 1))


def gaussian_elementwise_jacobian(spec: str, n: int, sigma: float, nodes: int = 64) -> float:
    """sqrt(N^2 E[phi'(s)^2]) / sqrt(N) for i.i.d. scores s ~ N(0, sigma^2): the i.i.d.-Gaussian
    prediction of ||d phi(S)/dS||_F / sqrt(N) for an N x N score matrix (Gauss-Hermite quadrature);
    NaN for row-coupled activations."""
    act = _acts.get(spec)
    if not act.elementwise:
        return float("nan")
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    s = torch.tensor(sigma * x, dtype=torch.float64)
    g = act.pointwise_grad(s.float(), torch.tensor(float(n))).double().numpy()
    second = float((w * g ** 2).sum() / math.sqrt(2 * math.pi))
    return math.sqrt(n * n * second) / math.sqrt(n)


def jacobian_scale_survey(specs: Sequence[str], sigmas: Iterable[float], n: int, reps: int, seed: int,
                          D: int = 64, saturation: float = 0.99) -> pd.DataFrame:
    """||d phi(S)/dS||_F / sqrt(N) on random scores S = A B (as :func:`score_scale_survey`), with the
    share of rows whose largest weight exceeds ``saturation`` and the mean row Jacobian norm of
    those rows (NaN when there are none).  Softmax's sharp bound on the first is 1/2."""
    rows = []
    for sigma in sigmas:
        g = generator(seed, "jacobian-scale", n, D, float(sigma))
        s = random_scores(g, reps, n, D, sigma)
        for spec in specs:
            act = _acts.get(spec)
            jrows = act.jacobian_fro_sq(s).double().clamp_min(0)                    # [reps, N]
            vals = (jrows.sum(-1).sqrt() / math.sqrt(n)).numpy()
            mean, se, lo, hi = _mean_ci(vals)
            sat = act(s).amax(-1) > saturation
            rows.append({"activation": spec, "sigma": float(sigma), "N": n, "mean": mean, "se": se,
                         "ci_lo": lo, "ci_hi": hi, "saturated_share": float(sat.double().mean()),
                         "row_jac_saturated": float(jrows.sqrt()[sat].mean()) if bool(sat.any()) else float("nan"),
                         "gaussian_prediction": gaussian_elementwise_jacobian(spec, n, sigma)})
    return pd.DataFrame(rows)
