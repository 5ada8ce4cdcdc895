"""The operation-count model of attention: matrix-product FLOPs of one forward and backward
pass per path, and where a feature map breaks even with the quadratic paths."""
from __future__ import annotations

import math
from typing import Optional, Sequence


def matmul_flops(n: int, head_dim: int, path: str, degree: Optional[int] = None, value_dim: Optional[int] = None,
                 causal: bool = False) -> float:
    """Floating-point operations of the matrix products of one forward+backward pass, per
    batch-head (a multiply-add counts 2; elementwise work is not counted).

    ``sdpa``, ``blocked`` and ``compiled``: 7 products of size N x N x d (2 forward, 5 backward,
    one of them recomputing the scores); ``naive``: 6 (it stores the score matrix instead);
    ``linear``: 6 products of size N x F x d_v with F = C(d + p - 1, p) features for
    degree ``p`` (so F = d for p = 1).  A causal mask halves the quadratic work (tiles
    above the diagonal are skipped) and is ignored for ``linear``.
    """
    from .kernels.linear import monomial_count

    dv = value_dim or head_dim
    if path in ("sdpa", "blocked", "compiled", "naive"):
        # products over d: Q K^T (twice unless stored), dS K, dS^T Q; over d_v: P V, dO V^T, P^T dO
        over_d = 3 if path == "naive" else 4
        flops = 2.0 * n * n * (over_d * head_dim + 3 * dv)
        return flops / 2 if causal else flops
    if path == "linear":
        if degree is None:
            raise ValueError("the linear path's cost depends on the degree p; pass degree=1 or 2")
        return 6 * 2.0 * n * monomial_count(head_dim, degree) * dv
    raise ValueError(f"unknown path {path!r}; use sdpa, blocked, compiled, naive or linear")


def flop_break_even(head_dim: int, degree: int, path: str = "blocked", value_dim: Optional[int] = None) -> int:
    """The smallest N at which the degree-``degree`` feature map needs no more matrix-product
    operations than the quadratic ``path`` (:func:`matmul_flops`; both are per batch-head)."""
    lin = matmul_flops(1, head_dim, "linear", degree, value_dim)          # linear in N
    quad = matmul_flops(1, head_dim, path, value_dim=value_dim)           # quadratic in N
    return max(1, math.ceil(lin / quad))


def case_flops(case, n: int, batch: int = 8, heads: int = 4, head_dim: int = 32, causal: bool = False) -> float:
    """:func:`matmul_flops` of one forward+backward call of ``case`` (``.activation``, ``.path``,
    as :class:`polyattn.bench.Case`) on ``[batch, heads, n, head_dim]`` inputs, all batch-heads."""
    from .kernels import linear_degree

    degree = linear_degree(case.activation) if case.path == "linear" else None
    return matmul_flops(n, head_dim, case.path, degree, causal=causal) * batch * heads


def square_matmul_side(flops: float, lo: int = 16, hi: int = 2048) -> int:
    """The side s of a square matrix product (2 s^3 operations) that does ``flops``, within [lo, hi]."""
    if lo < 1 or hi < lo:
        raise ValueError(f"need 1 <= lo <= hi, got lo={lo}, hi={hi}")
    return int(min(hi, max(lo, round((max(flops, 0.0) / 2) ** (1 / 3)))))


def flops_records(ns: Sequence[int], cases: Sequence, batch: int = 8, heads: int = 4, head_dim: int = 32,
                  causal: bool = False) -> list[dict]:
    """``{activation, path, n, gflop}``: :func:`case_flops` of each case, all batch-heads."""
    return [{"activation": c.activation, "path": c.path, "n": n,
             "gflop": case_flops(c, n, batch, heads, head_dim, causal) / 1e9}
            for n in ns for c in cases]
