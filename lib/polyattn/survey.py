"""The activation family side by side on random scores (the computations of chapter 01).

    from polyattn import survey
    cfg = survey.settings("book")
    props = survey.measured_properties(BOOK_SPECS, cfg["ns"], trials=cfg["trials"])
    norms = survey.fro_norm_vs_n(BOOK_SPECS, cfg["ns"], trials=cfg["trials"])
    curves = survey.weight_curves(BOOK_SPECS, (4, 64, 1024))

Scores are i.i.d. Gaussian with standard deviation ``sigma`` -- the distribution of
``q.k/sqrt(d)`` at initialisation when queries and keys have unit-variance entries.  The
attention matrix ``A = act(S)`` is ``N x N`` (N queries, N keys, no mask), so ``N`` is both
the paper's sequence length and the number of keys each row sees.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import torch

from . import activations
from .presets import check, generator

#: Sizes per preset: sequence lengths ``ns`` and the number of random score matrices per N.
SIZES = {
    "smoke": {"ns": (4, 16, 64), "trials": 2, "curve_ns": (4, 64)},
    "book": {"ns": (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048), "trials": 8, "curve_ns": (4, 64, 1024)},
    "paper": {"ns": (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096), "trials": 16, "curve_ns": (4, 64, 1024)},
}


#: The activations of ``BOOK_SPECS`` in groups of a few, one figure panel each (eleven lines in one
#: panel cannot be told apart): the paper's cubic and its scales, the other scaled powers, and the
#: alternatives from related work.
FIGURE_GROUPS = (
    ("softmax and the paper's cubic", ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1")),
    ("other powers, scaled by 1/√N", ("poly:p=1", "poly:p=2")),
    ("alternatives from related work", ("relu_n", "sigmoid", "softpick", "ssmax:s=0.43", "poly_norm:p=2")),
)


def settings(preset: str) -> dict:
    """The sizes used under a preset (smoke, book or paper)."""
    return dict(SIZES[check(preset)])


def gaussian_scores(n: int, rows: int | None = None, sigma: float = 1.0, seed: int = 0, trial: int = 0) -> torch.Tensor:
    """A ``rows x n`` float32 matrix of N(0, sigma^2) scores (``rows`` defaults to ``n``)."""
    if n < 1:
        raise ValueError(f"the number of keys n must be at least 1, got {n}")
    if not sigma > 0:
        raise ValueError(f"sigma must be positive, got {sigma}")
    rows = n if rows is None else rows
    return sigma * torch.randn(rows, n, generator=generator(seed, "gaussian_scores", n, trial), dtype=torch.float32)


def _check(specs: Sequence[str], ns: Sequence[int]):
    if not specs:
        raise ValueError("give at least one activation spec, e.g. ('softmax', 'poly:p=3')")
    if not ns or any(int(n) < 1 for n in ns):
        raise ValueError(f"sequence lengths must be positive integers, got {list(ns)}")


def measured_properties(specs: Sequence[str], ns: Sequence[int], sigma: float = 1.0, trials: int = 4,
                        seed: int = 0) -> pd.DataFrame:
    """Measured properties of ``A = act(S)`` on Gaussian scores, one row per (activation, N).

    Columns: ``frac_negative`` (share of weights < 0), ``row_sum_mean`` / ``row_sum_std``
    (over all rows of all trials), ``fro_over_sqrt_n`` (mean of ||A||_F / sqrt(N) over trials)
    and ``max_row_abs_sum`` (largest sum_j |A_ij|, the row's L1 norm).
    """
    _check(specs, ns)
    rows = []
    for spec in specs:
        act = activations.get(spec)
        for n in ns:
            neg, sums, fro, l1 = [], [], [], []
            for t in range(trials):
                a = act(gaussian_scores(n, sigma=sigma, seed=seed, trial=t))
                neg.append((a < 0).float().mean().item())
                sums.append(a.sum(-1))
                fro.append(torch.linalg.matrix_norm(a).item() / np.sqrt(n))
                l1.append(a.abs().sum(-1).max().item())
            s = torch.cat(sums)
            rows.append({"activation": act.spec, "N": int(n), "frac_negative": float(np.mean(neg)),
                         "row_sum_mean": s.mean().item(), "row_sum_std": s.std(unbiased=False).item(),
                         "fro_over_sqrt_n": float(np.mean(fro)), "max_row_abs_sum": float(np.max(l1))})
    return pd.DataFrame(rows)


def fro_norm_vs_n(specs: Sequence[str], ns: Sequence[int], sigma: float = 1.0, trials: int = 4,
                  seed: int = 0) -> pd.DataFrame:
    """||A||_F for each activation, N and trial; columns activation, N, trial, fro_norm, fro_over_sqrt_n."""
    _check(specs, ns)
    rows = []
    for spec in specs:
        act = activations.get(spec)
        for n in ns:
            for t in range(trials):
                fro = torch.linalg.matrix_norm(act(gaussian_scores(n, sigma=sigma, seed=seed, trial=t))).item()
                rows.append({"activation": act.spec, "N": int(n), "trial": t, "fro_norm": fro,
                             "fro_over_sqrt_n": fro / np.sqrt(n)})
    return pd.DataFrame(rows)


def growth_exponents(norms: pd.DataFrame) -> pd.DataFrame:
    """Least-squares slope of log ||A||_F against log N per activation (0.5 means sqrt(N) growth).

    Also reports the largest ||A||_F / sqrt(N) seen, the quantity Thm 4.1(1) bounds by 1
    for softmax.
    """
    need = {"activation", "N", "fro_norm"}
    if not need <= set(norms.columns):
        raise ValueError(f"growth_exponents needs columns {sorted(need)}, got {list(norms.columns)}")
    out = []
    for spec, g in norms.groupby("activation", sort=False):
        mean = g.groupby("N")["fro_norm"].mean()
        if len(mean) < 2:
            raise ValueError(f"growth_exponents needs at least two sequence lengths for {spec}")
        slope = float(np.polyfit(np.log(mean.index.to_numpy(float)), np.log(mean.to_numpy()), 1)[0])
        ratio = g["fro_norm"] / np.sqrt(g["N"])
        out.append({"activation": spec, "exponent": slope, "max_fro_over_sqrt_n": float(ratio.max())})
    return pd.DataFrame(out)


def weight_curves(specs: Sequence[str], ns: Sequence[int], scores: Sequence[float] | None = None) -> pd.DataFrame:
    """The weight one key receives as a function of its score, the other N - 1 keys scoring 0.

    For elementwise activations this is the pointwise map ``w(s; N)``; for row-coupled ones
    (softmax, softpick, ssmax, poly_norm) it shows the same key against a neutral row.
    Columns: activation, N, score, weight.
    """
    _check(specs, ns)
    s = torch.as_tensor(np.linspace(-3.0, 3.0, 121) if scores is None else np.asarray(scores), dtype=torch.float32)
    rows = []
    for spec in specs:
        act = activations.get(spec)
        for n in ns:
            row = torch.zeros(len(s), int(n))
            row[:, 0] = s
            w = act(row)[:, 0]
            rows.extend({"activation": act.spec, "N": int(n), "score": float(x), "weight": float(y)}
                        for x, y in zip(s.tolist(), w.tolist()))
    return pd.DataFrame(rows)
