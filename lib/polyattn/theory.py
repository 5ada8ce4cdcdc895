"""Bounds, exact moments and Monte Carlo estimators for the paper's theorems (Thm 4.1-4.5).

Everything chapter 02 shows is computed here:

* Thm 4.1 (softmax, deterministic): ``||softmax(A)||_F <= sqrt(N)`` and the Jacobian bound,
  with the sharp constant ``sqrt(N)/2`` (:func:`softmax_fro_norm`,
  :func:`softmax_jacobian_fro`, :func:`softmax_row_bound_chain`, the adversarial searches
  :func:`adversarial_softmax_norm` / :func:`adversarial_softmax_jacobian`).
* Thm 4.2 / Cor 4.3 (elementwise powers of ``C = A B``, Gaussian ``A, B``): the exact even
  moments of a sum of products of Gaussians, derived with sympy in two independent ways
  (:func:`sum_product_moment`), the paper's leading-order bound, Monte Carlo estimates
  (:func:`thm42_monte_carlo`) and power-law fits (:func:`fit_power_law`).
* Thm 4.4 / Cor 4.5 (gradient of ``M^p`` with respect to ``Q``, ``M = X Q K^T X^T``): the
  exact gradient norm in closed form (:func:`qgrad_fro_norm`), the bounds and Monte Carlo.
* Where the assumptions fail: queries and keys that share ``X`` (:func:`correlated_qk_monte_carlo`),
  the sizes of the bound's factors at ViT sizes (:func:`bound_factors_table`), and
  measurements on a model (:func:`attention_norms`, :func:`trained_norms_from_records`).

Randomness: every estimator takes an integer ``seed``; each computation draws from its own
generator derived from ``(seed, label, ...)`` (:func:`generator`), so results do not depend on
the order in which they are computed and the same seed gives the same numbers.
"""
from __future__ import annotations

import glob
import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd
import sympy as sp
import torch
from scipy import stats

from . import activations as _acts

Tensor = torch.Tensor

#: The symbol of the inner dimension in the exact moment polynomials.
D_SYMBOL = sp.Symbol("D", positive=True, integer=True)


# --- presets and seeds ---------------------------------------------------------------------

@dataclass(frozen=True)
class TheoryPreset:
    """Grid sizes and repetition counts for chapter 02; ``seed`` is the default seed."""

    name: str
    seed: int
    # Thm 4.1
    softmax_ns: tuple            # N grid of the Jacobian survey
    softmax_reps: int            # random / peaked matrices per N
    ascent_ns: tuple             # N for the adversarial searches (a subset of softmax_ns)
    ascent_steps: int
    ascent_restarts: int
    # Thm 4.2 / Cor 4.3
    ps: tuple                    # powers p
    thm42_ns: tuple              # N grid at fixed D
    thm42_d_at_n: int            # that fixed D
    thm42_ds: tuple              # D grid at fixed N
    thm42_n_at_d: int            # that fixed N
    thm42_small_d: tuple         # small D where lower-order terms matter
    thm42_n_large: int           # the N at which the small-D violation is measured
    thm42_reps: int
    sigma_grid: tuple            # score standard deviations ("init-like" scales)
    sigma_n: int                 # N for the score-scale comparison
    sigma_reps: int
    # Thm 4.4 / Cor 4.5
    thm44_ns: tuple
    thm44_dims: tuple            # (D, d) pairs
    thm44_reps: int
    # assumptions
    corr_rhos: tuple
    corr_sizes: tuple            # (N, D, d)
    corr_reps: int
    vit_batch: int


PRESETS = {
    "smoke": TheoryPreset(
        name="smoke", seed=0,
        softmax_ns=(2, 8, 32), softmax_reps=2, ascent_ns=(2, 8, 32), ascent_steps=60, ascent_restarts=4,
        ps=(1, 2, 3), thm42_ns=(8, 16, 32), thm42_d_at_n=16, thm42_ds=(4, 8, 16), thm42_n_at_d=16,
        thm42_small_d=(1, 2, 4), thm42_n_large=32, thm42_reps=20,
        sigma_grid=(0.1, 1.0, 2.0), sigma_n=32, sigma_reps=4,
        thm44_ns=(8, 16, 32), thm44_dims=((16, 8),), thm44_reps=10,
        corr_rhos=(0.0, 1.0), corr_sizes=(32, 64, 16), corr_reps=4, vit_batch=4,
    ),
    "book": TheoryPreset(
        name="book", seed=0,
        softmax_ns=(2, 4, 8, 16, 32, 64, 128, 256, 512), softmax_reps=8,
        ascent_ns=(2, 4, 8, 16, 32, 64, 128, 256), ascent_steps=300, ascent_restarts=8,
        ps=(1, 2, 3), thm42_ns=(8, 16, 32, 64, 128, 256), thm42_d_at_n=64,
        thm42_ds=(4, 8, 16, 32, 64, 128, 256), thm42_n_at_d=64,
        thm42_small_d=(1, 2, 4, 8, 16, 64), thm42_n_large=128, thm42_reps=400,
        sigma_grid=(0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 1.5, 2.0, 3.0), sigma_n=196, sigma_reps=16,
        thm44_ns=(8, 16, 32, 64, 128, 256), thm44_dims=((64, 16), (64, 64)), thm44_reps=100,
        corr_rhos=(0.0, 0.25, 0.5, 0.75, 0.9, 1.0), corr_sizes=(196, 768, 64), corr_reps=24,
        vit_batch=32,
    ),
    "paper": TheoryPreset(
        name="paper", seed=0,
        softmax_ns=(2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), softmax_reps=32,
        ascent_ns=(2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), ascent_steps=1000, ascent_restarts=16,
        ps=(1, 2, 3, 4), thm42_ns=(8, 16, 32, 64, 128, 256, 512), thm42_d_at_n=64,
        thm42_ds=(4, 8, 16, 32, 64, 128, 256, 512), thm42_n_at_d=64,
        thm42_small_d=(1, 2, 4, 8, 16, 64), thm42_n_large=256, thm42_reps=1000,
        sigma_grid=(0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 1.5, 2.0, 3.0), sigma_n=196, sigma_reps=64,
        thm44_ns=(8, 16, 32, 64, 128, 256, 512), thm44_dims=((64, 16), (64, 64)), thm44_reps=400,
        corr_rhos=(0.0, 0.25, 0.5, 0.75, 0.9, 1.0), corr_sizes=(196, 768, 64), corr_reps=100,
        vit_batch=128,
    ),
}


def preset(name: str) -> TheoryPreset:
    """The grid sizes of a preset (smoke, book or paper)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    return PRESETS[name]


def resolve_seed(seeds, theory_preset: TheoryPreset) -> int:
    """The base seed: the preset's default for ``None``, an int as given, a sequence's first entry."""
    if seeds is None:
        return theory_preset.seed
    if isinstance(seeds, (list, tuple)):
        if not seeds:
            raise ValueError("seeds is an empty sequence; pass None (preset default), an int or a non-empty list")
        seeds = seeds[0]
    try:
        return int(seeds)
    except (TypeError, ValueError):
        raise ValueError(f"seeds must be None, an int or a list of ints, got {seeds!r}") from None


def generator(seed: int, *labels) -> torch.Generator:
    """A CPU generator seeded from ``(seed, *labels)``: one independent stream per computation."""
    digest = hashlib.sha256(repr((int(seed),) + tuple(labels)).encode()).digest()
    g = torch.Generator()
    g.manual_seed(int.from_bytes(digest[:8], "little") & ((1 << 63) - 1))
    return g


def double_factorial_odd(p: int) -> int:
    """(2p - 1)!! = 1 * 3 * ... * (2p - 1), with (-1)!! = 1 (p = 0)."""
    if p < 0:
        raise ValueError(f"double_factorial_odd needs p >= 0, got {p}")
    return math.prod(range(1, 2 * p, 2))


# --- Thm 4.1: softmax -----------------------------------------------------------------------

def softmax_fro_norm(logits: Tensor) -> Tensor:
    """||softmax(A)||_F over the last two dimensions (rows are softmaxed)."""
    return torch.softmax(logits, dim=-1).pow(2).sum((-2, -1)).sqrt()


def softmax_fro_gap(logits: Tensor) -> Tensor:
    """1 - ||softmax(A)||_F / sqrt(rows), computed without cancellation (float64).

    Per row 1 - sum p^2 = sum_l p_l (1 - p_l); for the largest entry 1 - p_max is summed from
    the other entries instead of subtracted, so the gap stays accurate (and positive) down to
    about 1e-300 where 1 - ratio would round to 0 below 1e-16.
    """
    p = torch.softmax(logits.double(), dim=-1)
    top = torch.nn.functional.one_hot(p.argmax(-1), p.shape[-1]).bool()
    others = p.masked_fill(top, 0.0).sum(-1, keepdim=True)
    one_minus = torch.where(top, others, 1.0 - p)
    g = (p * one_minus).sum(-1).mean(-1)                 # 1 - ||F||_F^2 / rows
    return g / (1.0 + torch.sqrt(1.0 - g))               # 1 - sqrt(1 - g)


def softmax_jacobian_fro_sq(logits: Tensor) -> Tensor:
    """||d softmax(A) / dA||_F^2 over the last two dimensions, exact and closed-form.

    The sum over rows of the registry's ``jacobian_fro_sq`` (float32); differentiable, so it
    can be ascended.
    """
    return _acts.get("softmax").jacobian_fro_sq(logits).sum(-1)


def softmax_jacobian_fro(logits: Tensor) -> Tensor:
    """||d softmax(A) / dA||_F.  For saturated (near one-hot) rows the float32 closed form
    S - 2 sum p^3 + S^2 cancels to a tiny negative number; it is clamped at zero."""
    return softmax_jacobian_fro_sq(logits).clamp_min(0).sqrt()


def softmax_jacobian_fro_sq_rows64(logits: Tensor) -> Tensor:
    """Per-row ||J||_F^2 = S - 2 sum p^3 + S^2 (S = sum p^2), in float64."""
    p = torch.softmax(logits.double(), dim=-1)
    s = p.pow(2).sum(-1)
    return s - 2 * p.pow(3).sum(-1) + s * s


def jacobian_fro_sq_autodiff(spec: str, scores: Tensor) -> Tensor:
    """Per-row ||d weights / d scores||_F^2 of ``spec`` from the full Jacobian (torch.func.jacrev).

    ``scores`` is ``[rows, N]``; a reference for the closed forms (small sizes only).
    """
    act = _acts.get(spec)
    if scores.dim() != 2:
        raise ValueError(f"jacobian_fro_sq_autodiff needs scores of shape [rows, N], got {tuple(scores.shape)}")
    out = []
    for row in scores:
        jac = torch.func.jacrev(lambda r: act(r[None, None, :])[0, 0])(row)
        out.append(jac.pow(2).sum())
    return torch.stack(out)


def two_halves_logits(rows: int, n: int, gap: float = 1e4) -> Tensor:
    """Logits whose softmax rows are exactly (1/2, 1/2, 0, ..., 0): the sharp bound's extremiser."""
    if n < 2:
        raise ValueError(f"the two-halves construction needs N >= 2, got N={n}")
    a = torch.full((rows, n), -float(gap))
    a[:, :2] = 0.0
    return a


def softmax_row_bound_chain(p: Sequence[float]) -> dict:
    """The steps of the paper's per-row Jacobian bound for one probability row ``p``.

    ``exact``        ||J||_F^2 = S - 2 sum p^3 + S^2
    ``l1_step``      sum_j ||grad F_j||_1^2 = sum_j (2 p_j (1 - p_j))^2   (the ||v||_2 <= ||v||_1 step)
    ``drop_square``  sum_j 4 p_j^2 (1 - p_j)
    ``four_s``       4 S
    ``paper_row``    4 (the paper's per-row bound)
    ``sharp_s``      S - S^2 (after Cauchy-Schwarz, sum p^3 >= S^2)
    ``sharp_row``    1/4
    """
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or np.any(p < 0) or not math.isclose(p.sum(), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError("softmax_row_bound_chain needs one probability row (non-negative, summing to 1)")
    s = float((p ** 2).sum())
    return {
        "exact": s - 2 * float((p ** 3).sum()) + s * s,
        "l1_step": float((4 * p ** 2 * (1 - p) ** 2).sum()),
        "drop_square": float((4 * p ** 2 * (1 - p)).sum()),
        "four_s": 4 * s,
        "paper_row": 4.0,
        "sharp_s": s - s * s,
        "sharp_row": 0.25,
    }


def eq42_as_quoted(p: Sequence[float], j: int) -> dict:
    """The factor-2 step as the reviewer quotes it, for output ``j`` of a probability row ``p``.

    ``lhs`` = 1 - p_j; ``rhs_as_quoted`` = 2 sum_{l != j} p_l (false: 2 * lhs unless p_j = 1);
    ``rhs_identity`` = sum_{l != j} p_l (the identity that holds, rows sum to one);
    ``l1_norm`` = |p_j (1 - p_j)| + sum_{l != j} p_j p_l = 2 p_j (1 - p_j), where a 2 does appear.
    """
    p = np.asarray(p, dtype=np.float64)
    if not 0 <= j < len(p):
        raise ValueError(f"j={j} is not an index of a row of length {len(p)}")
    others = float(p.sum() - p[j])
    return {
        "lhs": 1.0 - float(p[j]),
        "rhs_as_quoted": 2.0 * others,
        "rhs_identity": others,
        "l1_norm": abs(p[j] * (1 - p[j])) + float(p[j]) * others,
        "l1_closed_form": 2.0 * float(p[j]) * (1 - float(p[j])),
    }


def _ascend(objective, param: Tensor, steps: int, lr: float):
    """Adam ascent on ``objective(param)``; returns (values per step, best value, best param)."""
    param = param.clone().requires_grad_(True)
    opt = torch.optim.Adam([param], lr=lr)
    values, best, best_param = [], -math.inf, param.detach().clone()
    for _ in range(steps):
        opt.zero_grad()
        val = objective(param)
        v = float(val.detach())
        values.append(v)
        if v > best:
            best, best_param = v, param.detach().clone()
        (-val).backward()
        opt.step()
    with torch.no_grad():
        v = float(objective(param))
    values.append(v)
    if v > best:
        best, best_param = v, param.detach().clone()
    return np.asarray(values), best, best_param


def adversarial_softmax_norm(n: int, steps: int, seed: int, lr: float = 0.1, init_std: float = 1.0) -> dict:
    """Adam ascent (float64) on ||softmax(A)||_F / sqrt(N) over N x N matrices A.

    The ascent maximises -log(gap), gap = 1 - ratio (:func:`softmax_fro_gap`): the same
    maximisers as the ratio, but the gradient does not vanish as rows saturate (the gap decays
    like exp(-logit margin)).  Returns ``gap_trajectory`` (gap per step), ``min_gap``,
    ``max_ratio`` = 1 - min_gap (which rounds to 1.0 once the gap is below 1e-16).
    """
    g = generator(seed, "thm41a-ascent", n)
    a0 = torch.randn(n, n, generator=g, dtype=torch.float64) * init_std
    traj, best, _ = _ascend(lambda a: -torch.log(softmax_fro_gap(a)), a0, steps, lr)
    gaps = np.exp(-traj)
    return {"n": n, "gap_trajectory": gaps, "min_gap": float(np.exp(-best)), "max_ratio": 1.0 - float(np.exp(-best))}


def adversarial_softmax_jacobian(n: int, steps: int, seed: int, restarts: int = 8, lr: float = 0.5,
                                 init_std: float = 6.0) -> dict:
    """Adam ascent on ||J_softmax(A)||_F^2 / N (the registry's closed form, float32), with restarts.

    The objective is a sum over rows, and rows do not interact, so ``restarts`` independent
    N x N starts are ascended together and each row of the answer is the best of its
    restarts.  Rows that are uniform over k >= 3 entries are local maxima (1/k - 1/k^2 per
    row), which is why a single start from small logits stalls (e.g. at 2/9 for k = 3); peaked
    starts (``init_std``) and restarts avoid that.  The best matrix is re-evaluated in float64
    (``max_ratio64``) so that float32 rounding cannot masquerade as a violation of 1/2.

    Returns ``trajectory`` (ratio of the mean restart per step), ``max_ratio`` (float32),
    ``max_ratio64``, ``frac_rows_at_max`` (rows within 1e-4 of 1/4) and ``logits``.
    """
    g = generator(seed, "thm41b-ascent", n, restarts, float(init_std))
    a0 = torch.randn(restarts, n, n, generator=g) * init_std
    traj, _, best_a = _ascend(lambda a: softmax_jacobian_fro_sq(a).sum() / (restarts * n), a0, steps, lr)
    rows64 = softmax_jacobian_fro_sq_rows64(best_a)                    # [restarts, n]
    pick = rows64.argmax(0)
    logits = best_a[pick, torch.arange(n)]
    with torch.no_grad():
        ratio32 = float(softmax_jacobian_fro(logits)) / math.sqrt(n)
    best_rows = softmax_jacobian_fro_sq_rows64(logits)
    return {"n": n, "trajectory": np.sqrt(np.clip(traj, 0, None)), "max_ratio": ratio32,
            "max_ratio64": float(best_rows.mean().sqrt()),
            "frac_rows_at_max": float((best_rows > 0.25 - 1e-4).double().mean()), "logits": logits}


def plain_ascent_softmax_jacobian(n: int, steps: int, seed: int, lr: float = 0.05) -> dict:
    """One Adam ascent from standard-normal logits (no restarts): where plain ascent ends.

    ``frac_rows_near_k_uniform[k]``: the fraction of rows within 1e-3 of the k-uniform value
    1/k - 1/k^2 (k = 2..5), the critical points where plain ascent stalls.
    """
    g = generator(seed, "thm41b-plain", n)
    a0 = torch.randn(n, n, generator=g)
    traj, _, best_a = _ascend(lambda a: softmax_jacobian_fro_sq(a) / n, a0, steps, lr)
    rows = softmax_jacobian_fro_sq_rows64(best_a)
    near = {k: float(((rows - k_uniform_row_value(k)).abs() < 1e-3).double().mean()) for k in range(2, 6)}
    return {"n": n, "ratio64": float(rows.mean().sqrt()), "row_values": rows.numpy(),
            "frac_rows_at_max": float((rows > 0.25 - 1e-4).double().mean()), "frac_rows_near_k_uniform": near}


def softmax_norm_survey(ns: Iterable[int], reps: int, seed: int, ascent_ns: Iterable[int] = (),
                        ascent_steps: int = 300, ascent_restarts: int = 8, random_std: float = 1.0,
                        peaked_std: float = 8.0) -> pd.DataFrame:
    """||softmax(A)||_F / sqrt(N) (and its gap below 1) and ||J||_F / sqrt(N) for several kinds of N x N input.

    Kinds: ``random`` (i.i.d. N(0, random_std^2) logits), ``peaked`` (std ``peaked_std``: nearly
    one-hot rows), ``one-hot`` and ``two halves`` (constructions), ``adversarial (norm)`` and
    ``adversarial (Jacobian)`` (Adam ascent on the respective ratio).  One row per matrix.
    """
    rows = []

    def add(kind, n, rep, a, gap=None, jac=None):
        with torch.no_grad():
            gap = float(softmax_fro_gap(a)) if gap is None else gap
            jac = float(softmax_jacobian_fro_sq_rows64(a).mean().sqrt()) if jac is None else jac
        rows.append({"kind": kind, "N": n, "rep": rep, "fro_over_sqrt_n": 1.0 - gap, "fro_gap": gap,
                     "jac_over_sqrt_n": jac})

    ascent_ns = set(ascent_ns)
    for n in ns:
        g = generator(seed, "thm41-survey", n)
        for r in range(reps):
            add("random", n, r, torch.randn(n, n, generator=g) * random_std)
            add("peaked", n, r, torch.randn(n, n, generator=g) * peaked_std)
        onehot = torch.full((n, n), -1e4)
        onehot[:, 0] = 0.0
        add("one-hot", n, 0, onehot)
        if n >= 2:
            add("two halves", n, 0, two_halves_logits(n, n))
        if n in ascent_ns:
            na = adversarial_softmax_norm(n, ascent_steps, seed)
            add("adversarial (norm)", n, 0, torch.zeros(n, n), gap=na["min_gap"], jac=float("nan"))
            ja = adversarial_softmax_jacobian(n, ascent_steps, seed, restarts=ascent_restarts)
            add("adversarial (Jacobian)", n, 0, ja["logits"], jac=ja["max_ratio64"])
    return pd.DataFrame(rows)


# --- Thm 4.2: exact moments of a sum of products of Gaussians ----------------------------------

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


def _mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    values = np.asarray(values, dtype=np.float64)
    mean = float(values.mean())
    se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else float("nan")
    z = stats.norm.ppf(0.5 + level / 2)
    return mean, se, mean - z * se, mean + z * se


def _chunks(total: int, size: int):
    done = 0
    while done < total:
        k = min(size, total - done)
        yield k
        done += k


def _chunk_for(n: int, inner: int, budget: float = 2e7) -> int:
    return max(1, int(budget // max(1, n * max(n, inner))))


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


# --- power-law fits ---------------------------------------------------------------------------

@dataclass(frozen=True)
class PowerLawFit:
    """y ~ prefactor * x^exponent, fitted on log-log axes."""

    exponent: float
    se: float
    ci_lo: float
    ci_hi: float
    prefactor: float
    chi2_red: float
    n_points: int
    level: float = 0.95

    def as_dict(self) -> dict:
        return dict(exponent=self.exponent, se=self.se, ci_lo=self.ci_lo, ci_hi=self.ci_hi,
                    prefactor=self.prefactor, chi2_red=self.chi2_red, n_points=self.n_points)


def fit_power_law(x, y, y_se=None, level: float = 0.95) -> PowerLawFit:
    """Fit log y = log c + k log x by (weighted) least squares; return k with a confidence interval.

    With ``y_se`` (standard errors of y) the points are weighted by 1/se(log y)^2,
    se(log y) = y_se / y, and the covariance is inflated by the reduced chi^2 when it exceeds 1
    (so lack of fit widens the interval); without, ordinary least squares.  The interval uses
    Student's t with (points - 2) degrees of freedom.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"fit_power_law needs 1-d x and y of the same length, got {x.shape} and {y.shape}")
    if len(x) < 3:
        raise ValueError(f"fit_power_law needs at least 3 points for an interval, got {len(x)}")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("fit_power_law needs positive x and y (it fits on log-log axes)")
    lx, ly = np.log(x), np.log(y)
    design = np.column_stack([np.ones_like(lx), lx])
    if y_se is None:
        w = np.ones_like(lx)
    else:
        sl = np.asarray(y_se, dtype=np.float64) / y
        if sl.shape != y.shape or np.any(~np.isfinite(sl)) or np.any(sl <= 0):
            raise ValueError("y_se must be positive and finite, one per point")
        w = 1.0 / sl ** 2
    wd = design * w[:, None]
    cov = np.linalg.inv(design.T @ wd)
    beta = cov @ (wd.T @ ly)
    resid = ly - design @ beta
    dof = len(x) - 2
    chi2_red = float((w * resid ** 2).sum() / dof) if dof > 0 else float("nan")
    if y_se is None:
        cov = cov * chi2_red
    elif chi2_red > 1:
        cov = cov * chi2_red
    se = float(math.sqrt(cov[1, 1]))
    tq = stats.t.ppf(0.5 + level / 2, dof)
    k = float(beta[1])
    return PowerLawFit(k, se, k - tq * se, k + tq * se, float(math.exp(beta[0])),
                       chi2_red if y_se is not None else float("nan"), len(x), level)


def fit_exponents(df: pd.DataFrame, x: str, by: Sequence[str], y: str = "mean", y_se: Optional[str] = "se",
                  level: float = 0.95) -> pd.DataFrame:
    """:func:`fit_power_law` of ``y`` against ``x`` in each group of ``by``: one row per group."""
    rows = []
    for key, sub in df.groupby(list(by)):
        sub = sub.sort_values(x)
        fit = fit_power_law(sub[x], sub[y], sub[y_se] if y_se else None, level)
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), **fit.as_dict()})
    return pd.DataFrame(rows)


# --- scaled polynomials against softmax at init-like score scales -------------------------------

def score_scale_survey(specs: Sequence[str], sigmas: Iterable[float], n: int, reps: int, seed: int,
                       D: int = 64) -> pd.DataFrame:
    """E||phi(S)||_F / sqrt(N) for scores S = A B with A [N, D], B [D, N] Gaussian and std(S) = sigma.

    ``phi`` is the activation of each spec (softmax included), so the scaled polynomial's
    expected norm is put next to softmax's (deterministic bound: ratio <= 1).
    """
    rows = []
    for sigma in sigmas:
        g = generator(seed, "score-scale", n, D, float(sigma))
        scale = math.sqrt(sigma / math.sqrt(D))     # s1 = s2, so Var(s) = D s1^2 s2^2 = sigma^2
        a = torch.randn(reps, n, D, generator=g) * scale
        b = torch.randn(reps, D, n, generator=g) * scale
        s = a @ b
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
        scale = math.sqrt(sigma / math.sqrt(D))
        s = (torch.randn(reps, n, D, generator=g) * scale) @ (torch.randn(reps, D, n, generator=g) * scale)
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


# --- Thm 4.4: gradient with respect to Q ------------------------------------------------------

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


# --- where the assumptions fail -----------------------------------------------------------------

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


def k_uniform_row_value(k: int) -> float:
    """||J_softmax||_F^2 of a row uniform over k entries (others zero): 1/k - 1/k^2 (k = 2: the max 1/4)."""
    if k < 1:
        raise ValueError(f"k must be a positive integer, got {k}")
    return 1.0 / k - 1.0 / k ** 2


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


# --- measurements on a model --------------------------------------------------------------------

def attention_norms(model: torch.nn.Module, inputs: Tensor, gaussian_prediction: bool = True) -> pd.DataFrame:
    """Per (layer, head): ||A||_F / sqrt(N), ||dA/dS||_F / sqrt(N) and score statistics on a batch.

    Works on any model built from :class:`polyattn.attention.MultiHeadAttention` (a polyattn ViT,
    trained or not): forward hooks on every ``Attend`` record the scores S and weights A; each
    value is computed per sample and averaged over the batch (``*_std`` is the spread over the
    batch).  ``gaussian_over_sqrt_n`` is the i.i.d.-Gaussian prediction of ||A||_F / sqrt(N) from
    the head's measured score mean and std (elementwise activations only; NaN for softmax).
    The model is run in eval mode without gradients; flags and hooks are restored afterwards.
    """
    from .attention import Attend

    attends = [m for m in model.modules() if isinstance(m, Attend)]
    if not attends:
        raise ValueError("attention_norms found no polyattn Attend module in the model; "
                         "build it from polyattn.attention.MultiHeadAttention")
    captured: dict[int, list] = {i: [] for i in range(len(attends))}

    def make_hook(i):
        def hook(module, args, kwargs, output):
            scores = args[0] if args else kwargs["scores"]
            mask = args[1] if len(args) > 1 else kwargs.get("mask")
            n = args[2] if len(args) > 2 else kwargs.get("n")
            captured[i].append((scores.detach(), mask, n, output.detach(), module.activation))
        return hook

    was_training = model.training
    flags = [a.probed for a in attends]
    handles = []
    try:
        for i, a in enumerate(attends):
            a.probed = True
            handles.append(a.register_forward_hook(make_hook(i), with_kwargs=True))
        model.eval()
        with torch.no_grad():
            model(inputs)
    finally:
        for h in handles:
            h.remove()
        for a, f in zip(attends, flags):
            a.probed = f
        model.train(was_training)

    rows = []
    for layer, calls in captured.items():
        for scores, mask, n, w, act in calls:
            nk = scores.shape[-1]
            n_rows = scores.shape[-2]
            fro = w.float().pow(2).sum((-2, -1)).sqrt()                        # [B, H]
            jac = act.jacobian_fro_sq(scores, mask, n).sum(-1).sqrt()          # [B, H]
            smean = scores.float().mean((-2, -1))
            sstd = scores.float().std(dim=(-2, -1))
            for h in range(scores.shape[1]):
                mu, sd = float(smean[:, h].mean()), float(sstd[:, h].mean())
                pred = (gaussian_elementwise_fro(act.spec, nk, sd, mu) * math.sqrt(n_rows / nk) / math.sqrt(n_rows)
                        if gaussian_prediction and act.elementwise else float("nan"))
                rows.append({"layer": layer, "head": h, "activation": act.spec, "N": nk,
                             "fro_over_sqrt_n": float(fro[:, h].mean()) / math.sqrt(n_rows),
                             "fro_over_sqrt_n_std": float(fro[:, h].std()) / math.sqrt(n_rows) if fro.shape[0] > 1 else float("nan"),
                             "jac_over_sqrt_n": float(jac[:, h].mean()) / math.sqrt(n_rows),
                             "score_mean": mu, "score_std": sd, "gaussian_over_sqrt_n": pred})
    return pd.DataFrame(rows)


def init_model_norms(specs: Sequence[str], seed: int, size: str = "micro", batch: int = 32,
                     inputs: Optional[Tensor] = None, **vit_kwargs) -> pd.DataFrame:
    """:func:`attention_norms` of freshly initialised ViTs (one per activation spec).

    Each model is built under ``torch.manual_seed`` from ``(seed, spec)`` inside a forked RNG
    (the caller's global RNG state is left untouched).  ``inputs`` default to standard-normal
    images of the model's shape, drawn from their own generator: at initialisation the
    weights, not the images, set the score scale.
    """
    from .models.vit import build_vit

    frames = []
    for spec in specs:
        with torch.random.fork_rng(devices=[]):
            g = generator(seed, "init-model", size, spec)
            torch.manual_seed(int(torch.randint(0, 2 ** 62, (1,), generator=g)))
            model = build_vit(size, activation=spec, **vit_kwargs)
        x = inputs
        if x is None:
            pe = model.patch_embed
            side = int(round(math.sqrt(model.num_patches))) * pe.kernel_size[0]
            x = torch.randn(batch, pe.in_channels, side, side, generator=generator(seed, "init-inputs", size))
        frames.append(attention_norms(model, x))
    return pd.concat(frames, ignore_index=True)


def trained_norms_from_records(directory: str, metrics: Sequence[str] = ("attn_fro_over_sqrt_n", "act_jac_fro")) -> pd.DataFrame:
    """Probe rows of the last recorded step of every finished training record in ``directory``.

    Reads ``<directory>/*.json`` result records (schema 1: ``config``, ``seed``, ``status``,
    ``probes`` rows of step/layer/head/metric/value).  Returns one row per (record, layer, head,
    metric) with the activation and sequence length from the config; ``act_jac_fro`` gets a
    companion ``act_jac_fro_over_sqrt_n``.  An empty DataFrame when there is nothing to read.
    """
    from .analysis.frames import record_seq_len

    out = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        try:
            with open(path) as fh:
                rec = json.load(fh)
        except (OSError, json.JSONDecodeError):
            continue
        probes = rec.get("probes") or []
        if rec.get("status") != "ok" or not probes:
            continue
        cfg = rec.get("config", {})
        last = max(r["step"] for r in probes)
        try:
            n = record_seq_len(rec)
        except (KeyError, ValueError):
            n = None
        for r in probes:
            if r["step"] != last or r["metric"] not in metrics:
                continue
            base = {"record": os.path.basename(path), "activation": cfg.get("activation"), "seed": rec.get("seed"),
                    "step": last, "layer": r["layer"], "head": r["head"], "N": n}
            out.append({**base, "metric": r["metric"], "value": float(r["value"])})
            if r["metric"] == "act_jac_fro" and n:
                out.append({**base, "metric": "act_jac_fro_over_sqrt_n", "value": float(r["value"]) / math.sqrt(n)})
    return pd.DataFrame(out, columns=["record", "activation", "seed", "step", "layer", "head", "N", "metric", "value"])
