"""Thm 4.1 (softmax, deterministic): the norm and Jacobian bounds, the steps of the paper's chain,
constructions that attain the sharp constant, and adversarial searches."""
from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import torch

from .. import activations as _acts
from .presets import generator

Tensor = torch.Tensor


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



def k_uniform_row_value(k: int) -> float:
    """||J_softmax||_F^2 of a row uniform over k entries (others zero): 1/k - 1/k^2 (k = 2: the max 1/4)."""
    if k < 1:
        raise ValueError(f"k must be a positive integer, got {k}")
    return 1.0 / k - 1.0 / k ** 2

