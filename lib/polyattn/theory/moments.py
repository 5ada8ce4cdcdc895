"""Thm 4.2 / Cor 4.3: exact even moments of a sum of products of Gaussians (sympy, two ways),
the paper's leading-order bound, and Monte Carlo of the norm of elementwise powers."""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Iterable

import numpy as np
import pandas as pd
import sympy as sp
import torch

from .presets import generator
from .sampling import _chunk_for, _chunks, _mean_ci

#: The symbol of the inner dimension in the exact moment polynomials.
D_SYMBOL = sp.Symbol("D", positive=True, integer=True)



def double_factorial_odd(p: int) -> int:
    """(2p - 1)!! = 1 * 3 * ... * (2p - 1), with (-1)!! = 1 (p = 0)."""
    if p < 0:
        raise ValueError(f"double_factorial_odd needs p >= 0, got {p}")
    return math.prod(range(1, 2 * p, 2))



@lru_cache(maxsize=None)
def product_moment(m: int) -> sp.Expr:
    """E[(a b)^{2m}] / (s1 s2)^{2m} for independent a ~ N(0, s1^2), b ~ N(0, s2^2), via sympy.stats."""
    import sympy.stats as sps

    s1, s2 = sp.symbols("s1 s2", positive=True)
    a, b = sps.Normal("a", 0, s1), sps.Normal("b", 0, s2)
    moment = sps.E(a ** (2 * m)) * sps.E(b ** (2 * m))
    return sp.simplify(moment / (s1 * s2) ** (2 * m))


@lru_cache(maxsize=None)
def sum_product_moment(p: int, method: str = "mgf") -> sp.Expr:
    """E[s^{2p}] / (s1 s2)^{2p} for s = sum_{i <= D} a_i b_i, all Gaussians independent.

    A polynomial in ``D_SYMBOL``.  ``method="mgf"``: the moment generating function of one
    product is E[exp(t a b)] = (1 - s1^2 s2^2 t^2)^{-1/2}, so that of s is (1 - t^2)^{-D/2}
    (in units of s1 s2), and E[s^{2p}] = (2p)! [t^{2p}] (1 - t^2)^{-D/2}.
    ``method="multinomial"``: expand (sum X_i)^{2p}; odd powers vanish; a term with even
    powers 2 k_1 .. 2 k_r (a partition of p) on r distinct indices counts D!/(D - r)!/(mult!)
    times, with multinomial (2p)!/prod (2k)! and moment prod E[X^{2k}] (:func:`product_moment`).
    """
    if p < 0:
        raise ValueError(f"sum_product_moment needs p >= 0, got {p}")
    D = D_SYMBOL
    if method == "mgf":
        t = sp.Symbol("t")
        series = sp.series((1 - t ** 2) ** (-D / 2), t, 0, 2 * p + 1).removeO()
        return sp.expand(series.coeff(t, 2 * p) * sp.factorial(2 * p))
    if method == "multinomial":
        from sympy.utilities.iterables import partitions

        total = sp.Integer(0)
        for part in partitions(p):               # {part size k: multiplicity}
            r = sum(part.values())
            falling = sp.ff(D, r)                # ordered choices of r distinct indices
            sym = math.prod(math.factorial(mult) for mult in part.values())
            multinom = sp.factorial(2 * p) / math.prod(sp.factorial(2 * k) ** mult for k, mult in part.items())
            moments = math.prod(product_moment(k) ** mult for k, mult in part.items())
            total += falling / sym * multinom * moments
        return sp.expand(total)
    raise ValueError(f"method must be 'mgf' or 'multinomial', got {method!r}")


def sum_product_moment_value(p: int, D: int, s1: float = 1.0, s2: float = 1.0) -> float:
    """The exact E[(sum_{i<=D} a_i b_i)^{2p}] as a float."""
    return float(sum_product_moment(p).subs(D_SYMBOL, D)) * (s1 * s2) ** (2 * p)


def leading_moment(p: int, D) -> float:
    """The paper's bound on E[s^{2p}] / (s1 s2)^{2p}: (2p - 1)!! D^p (the leading term in D)."""
    return double_factorial_odd(p) * float(D) ** p


def moment_product_form(p: int) -> sp.Expr:
    """The closed form (2p - 1)!! D (D + 2) ... (D + 2p - 2) of :func:`sum_product_moment`."""
    D = D_SYMBOL
    return sp.expand(double_factorial_odd(p) * sp.prod([D + 2 * k for k in range(p)]))


def moment_ratio_table(ps: Iterable[int], ds: Iterable[int]) -> pd.DataFrame:
    """Exact E[s^{2p}] against the leading term (2p-1)!! D^p, one row per (p, D)."""
    rows = []
    for p in ps:
        for D in ds:
            exact = sum_product_moment_value(p, D)
            lead = leading_moment(p, D)
            rows.append({"p": p, "D": D, "exact": exact, "leading": lead, "ratio": exact / lead,
                         "norm_ratio": math.sqrt(exact / lead)})
    return pd.DataFrame(rows)


def min_d_within(p: int, tol: float) -> int:
    """The smallest D at which exact / leading <= 1 + tol (the ratio falls with D)."""
    if tol <= 0:
        raise ValueError(f"tol must be positive, got {tol}")
    if p <= 1:
        return 1
    lo, hi = 1, 2
    while sum_product_moment_value(p, hi) / leading_moment(p, hi) > 1 + tol:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if sum_product_moment_value(p, mid) / leading_moment(p, mid) > 1 + tol:
            lo = mid
        else:
            hi = mid
    return hi if sum_product_moment_value(p, lo) / leading_moment(p, lo) > 1 + tol else lo


def thm42_bound(n, D, p: int, s1: float = 1.0, s2: float = 1.0, scaled: bool = False):
    """The paper's bound on E||C^{op}||_F: N sqrt((2p-1)!! D^p) (s1 s2)^p, divided by sqrt(N) if scaled."""
    n = np.asarray(n, dtype=np.float64)
    b = n * np.sqrt(double_factorial_odd(p) * np.asarray(D, dtype=np.float64) ** p) * (s1 * s2) ** p
    return b / np.sqrt(n) if scaled else b


def thm42_exact_rms(n, D: int, p: int, s1: float = 1.0, s2: float = 1.0, scaled: bool = False):
    """sqrt(E||C^{op}||_F^2) = N sqrt(E[c^{2p}]) with the exact moment: what Jensen really gives."""
    n = np.asarray(n, dtype=np.float64)
    b = n * math.sqrt(sum_product_moment_value(p, int(D), s1, s2))
    return b / np.sqrt(n) if scaled else b



def thm42_monte_carlo(sizes: Iterable[tuple[int, int]], ps: Iterable[int], reps: int, seed: int,
                      s1: float = 1.0, s2: float = 1.0, level: float = 0.95) -> pd.DataFrame:
    """Monte Carlo of E||C^{op}||_F, C = A B, A [N, D] ~ N(0, s1^2), B [D, N] ~ N(0, s2^2) i.i.d.

    One row per (N, D, p, scaled): the mean over ``reps`` draws, its standard error, a normal
    confidence interval, the paper's bound and the exact root-mean-square (Jensen) bound.
    ``scaled`` divides C^{op} by sqrt(N) (Cor 4.3).  The same draws serve every p.
    """
    ps = tuple(ps)
    rows = []
    for n, D in sizes:
        g = generator(seed, "thm42", n, D)
        norms = {p: [] for p in ps}
        for k in _chunks(reps, _chunk_for(n, D)):
            a = torch.randn(k, n, D, generator=g, dtype=torch.float64) * s1
            b = torch.randn(k, D, n, generator=g, dtype=torch.float64) * s2
            c = a @ b
            for p in ps:
                norms[p].append(c.pow(p).pow(2).sum((-2, -1)).sqrt())
        for p in ps:
            vals = torch.cat(norms[p]).numpy()
            for scaled in (False, True):
                v = vals / math.sqrt(n) if scaled else vals
                mean, se, lo, hi = _mean_ci(v, level)
                bound = float(thm42_bound(n, D, p, s1, s2, scaled))
                rows.append({"N": n, "D": D, "p": p, "scaled": scaled, "mean": mean, "se": se,
                             "ci_lo": lo, "ci_hi": hi, "reps": len(v), "bound": bound,
                             "exact_rms": float(thm42_exact_rms(n, D, p, s1, s2, scaled)),
                             "ratio_to_bound": mean / bound, "ratio_ci_lo": lo / bound,
                             "ratio_ci_hi": hi / bound})
    return pd.DataFrame(rows)

