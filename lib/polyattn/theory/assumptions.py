"""Where the theorems' assumptions fail: queries and keys that share ``X``, the factors of the
bound at ViT sizes, the undefined ``d``, and the score scale at which a power meets softmax's bound."""
from __future__ import annotations

import math
from typing import Iterable, Optional, Sequence

import pandas as pd
import torch

from .moments import double_factorial_odd, leading_moment, sum_product_moment_value, thm42_bound, thm42_exact_rms
from .presets import generator
from .qgrad import thm44_leading
from .sampling import _chunk_for, _chunks, _mean_ci


def correlated_qk_monte_carlo(n: int, D: int, d: int, ps: Iterable[int], rhos: Iterable[float], reps: int,
                              seed: int, sx: float = 1.0, sw: Optional[float] = None) -> pd.DataFrame:
    """E||C^{op}||_F when A = X Q and B = (X K)^T share X, against Thm 4.2's independent prediction.

    K = rho Q + sqrt(1 - rho^2) K' (rho = 1: K = Q, C = X Q Q^T X^T).  Thm 4.2 read with inner
    dimension d and variances s1^2 = s2^2 = D sx^2 sw^2 (the entries of X Q) predicts
    N sqrt((2p-1)!! d^p) (s1 s2)^p; ``exact_independent`` uses the exact moment instead.
    A row with ``setup="independent A, B"`` is the Monte Carlo of the theorem's own model.
    """
    ps = tuple(ps)
    w = sw if sw is not None else 1.0 / math.sqrt(D)
    s12 = D * sx ** 2 * w ** 2                       # s1 * s2 = s1^2 (s1 = s2)
    rows = []

    def emit(setup, rho, c):
        for p in ps:
            vals = c.pow(p).pow(2).sum((-2, -1)).sqrt().numpy()
            mean, se, lo, hi = _mean_ci(vals)
            pred = float(thm42_bound(n, d, p, math.sqrt(s12), math.sqrt(s12)))
            exact = float(thm42_exact_rms(n, d, p, math.sqrt(s12), math.sqrt(s12)))
            rows.append({"setup": setup, "rho": rho, "p": p, "N": n, "D": D, "d": d, "mean": mean, "se": se,
                         "ci_lo": lo, "ci_hi": hi, "prediction": pred, "exact_independent": exact,
                         "ratio": mean / pred, "ratio_ci_lo": lo / pred, "ratio_ci_hi": hi / pred})

    g = generator(seed, "corr-indep", n, D, d)
    a = torch.randn(reps, n, d, generator=g, dtype=torch.float64) * math.sqrt(s12)
    b = torch.randn(reps, d, n, generator=g, dtype=torch.float64) * math.sqrt(s12)
    emit("independent A, B", float("nan"), a @ b)
    for rho in rhos:
        if not -1.0 <= rho <= 1.0:
            raise ValueError(f"rho must lie in [-1, 1], got {rho}")
        g = generator(seed, "corr-shared", n, D, d, float(rho))
        cs = []
        for k in _chunks(reps, max(1, _chunk_for(n, D) // 2)):
            X = torch.randn(k, n, D, generator=g, dtype=torch.float64) * sx
            Q = torch.randn(k, D, d, generator=g, dtype=torch.float64) * w
            K2 = torch.randn(k, D, d, generator=g, dtype=torch.float64) * w
            K = rho * Q + math.sqrt(max(0.0, 1 - rho * rho)) * K2
            cs.append((X @ Q) @ (X @ K).transpose(-2, -1))
        emit("shared X", float(rho), torch.cat(cs))
    return pd.DataFrame(rows)


def qk_equal_prediction(n: int, d: int, p: int) -> float:
    """Predicted sqrt(E||C^{op}||_F^2) / (Thm 4.2's bound) for K = Q, C = X Q Q^T X^T.

    With a_i = Q^T x_i approximately i.i.d. N(0, s^2 I_d) (Q^T Q close to a multiple of I when
    D >> d), an off-diagonal c_ij = a_i . a_j is Thm 4.2's sum of d products, with moment
    :func:`sum_product_moment_value`, while a diagonal c_ii = ||a_i||^2 = s^2 chi^2_d has
    E[c_ii^{2p}] = s^{4p} d (d + 2) ... (d + 4p - 2).  The N diagonal entries alone add
    N d^{2p} against N^2 (2p-1)!! d^p for the rest, so they dominate when d^p > N (2p-1)!!.
    """
    off = sum_product_moment_value(p, d)
    diag = float(math.prod(d + 2 * k for k in range(2 * p)))
    return math.sqrt(((n * n - n) * off + n * diag) / (n * n * leading_moment(p, d)))


def sigma_at_softmax_bound(p: int) -> float:
    """The score std at which the i.i.d.-Gaussian E||x^p/sqrt(N)||_F reaches softmax's worst case sqrt(N).

    sqrt(N) sigma^p sqrt((2p-1)!!) = sqrt(N)  gives  sigma = ((2p-1)!!)^{-1/(2p)}.
    """
    return double_factorial_odd(p) ** (-1.0 / (2 * p))



#: Transformer sizes for the N >> D discussion: N tokens (patches, without CLS, as quoted by
#: the review), D model width, heads (head dim = D / heads).
MODEL_SIZES = {
    "ViT-B/16 (224 px)": dict(N=196, D=768, heads=12),
    "ViT-S/16 (224 px)": dict(N=196, D=384, heads=6),
    "ViT-Ti/16 (224 px)": dict(N=196, D=192, heads=3),
    "ViT-Ti (Tiny-ImageNet, patch 4)": dict(N=256, D=192, heads=3),
    "micro ViT (this book)": dict(N=50, D=64, heads=4),
}


def bound_factors_table(ps: Iterable[int], sizes: Optional[dict] = None) -> pd.DataFrame:
    """The two factors of Cor 4.3's bound sqrt(N) * sqrt((2p-1)!! D^p) (unit variances) at given sizes.

    Columns: the N factor sqrt(N); the D factor with D = model width and with D = head dim;
    ``n_crossover`` = (2p-1)!! D^p, the N at which sqrt(N) would equal the D factor; and
    ``dfactor_scaled_scores``: the D factor when scores carry the usual 1/sqrt(d) (it becomes
    sqrt((2p-1)!!), D-free).
    """
    sizes = MODEL_SIZES if sizes is None else sizes
    rows = []
    for name, s in sizes.items():
        n, D, h = s["N"], s["D"], s["heads"]
        dh = D // h
        for p in ps:
            df_model = math.sqrt(double_factorial_odd(p) * D ** p)
            df_head = math.sqrt(double_factorial_odd(p) * dh ** p)
            rows.append({"model": name, "N": n, "D": D, "d_head": dh, "p": p, "n_factor": math.sqrt(n),
                         "dfactor_model": df_model, "dfactor_head": df_head,
                         "dfactor_over_nfactor": df_model / math.sqrt(n),
                         "n_crossover_model": double_factorial_odd(p) * float(D) ** p,
                         "n_crossover_head": double_factorial_odd(p) * float(dh) ** p,
                         "dfactor_scaled_scores": math.sqrt(double_factorial_odd(p)),
                         "bound_model": math.sqrt(n) * df_model, "bound_head": math.sqrt(n) * df_head})
    return pd.DataFrame(rows)


def head_dim_table(ps: Iterable[int], n: int = 196, D: int = 768, ds: Sequence[int] = (64, 768),
                   sx: float = 1.0, sw: Optional[float] = None) -> pd.DataFrame:
    """Thm 4.4 / Cor 4.5 bounds at one size for several readings of the undefined d."""
    w = sw if sw is not None else 1.0 / math.sqrt(D)
    rows = []
    for p in ps:
        base = float(thm44_leading(n, D, ds[0], p, sx, w))
        for d in ds:
            b = float(thm44_leading(n, D, d, p, sx, w))
            rows.append({"p": p, "N": n, "D": D, "d": d, "bound": b,
                         "bound_scaled": float(thm44_leading(n, D, d, p, sx, w, scaled=True)),
                         "relative_to_first_d": b / base})
    return pd.DataFrame(rows)

