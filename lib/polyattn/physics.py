"""Physics-informed losses and scores, independent of any training loop.

    pde = get_pde("convection"); batch = pde.grid(51, 51)
    total, parts = pde_loss(pde, model, batch)       # parts: residual, initial, boundary
    opt = make_lbfgs(model.parameters())             # the published optimiser settings
    opt.step(lbfgs_closure(pde, model, batch, opt))
    check_finite(total, parts)                       # raises NonFiniteLoss for a diverged run
    evaluate(pde, model, pde.test_grid())            # {"rMAE": ..., "rRMSE": ...}

Each term is a mean of squares, as published: the residual over every grid point; the
initial value (and, for the wave, the initial velocity u_t = 0, added to the same term)
over the t = t0 row; the boundary over the x = x0 and x = x1 columns (periodic: the
difference of the two; Dirichlet: each column's mean square, summed).  The total is the
unweighted sum unless ``weights`` say otherwise.

``sequence=False`` (default) treats the model as a function u(x, t) and takes exact
autograd derivatives of it (for PINNsFormer: the first token's output, the prediction).
``sequence=True`` is PINNsFormer's published loss: the pseudo-sequence is the input, the
residual and boundary terms cover all k tokens and the initial value the first token, and
each token's derivative is that of the sum of all k outputs with respect to that token's
(x, t).  The model must act point by point: all points go through it in one batch.
"""
from __future__ import annotations

import math
from typing import Optional

import torch
from torch import nn

from .data.pde import PDE, Collocation, autograd_derivatives, get_pde, relative_errors

Tensor = torch.Tensor

TERMS = ("residual", "initial", "boundary")

#: torch's L-BFGS with the strong-Wolfe line search and otherwise its defaults, as published.
LBFGS_DEFAULTS = dict(lr=1.0, max_iter=20, history_size=100, line_search_fn="strong_wolfe")


class NonFiniteLoss(FloatingPointError):
    """The loss, or one of its terms, is NaN or infinite: the run diverged."""


def _device(model: nn.Module):
    p = next(iter(model.parameters()), None)
    return p.device if p is not None else torch.device("cpu")


def pde_loss(problem: PDE | str, model: nn.Module, batch: Collocation, sequence: bool = False,
             weights: Optional[dict] = None) -> tuple[Tensor, dict[str, Tensor]]:
    """``(total, {"residual", "initial", "boundary"})`` for ``model`` on the points of ``batch``."""
    pde = get_pde(problem)
    if weights is not None and set(weights) - set(TERMS):
        raise ValueError(f"unknown loss term(s) {sorted(set(weights) - set(TERMS))}; terms: {', '.join(TERMS)}")
    if sequence and not (hasattr(model, "pseudo_sequence") and hasattr(model, "forward_tokens")):
        raise ValueError(f"sequence=True needs a pseudo-sequence model (PINNsFormer); got {type(model).__name__}")
    dev = _device(model)
    groups = [(batch.x, batch.t), (batch.x_initial, batch.t_initial),
              (batch.x_left, batch.t_left), (batch.x_right, batch.t_right)]
    sizes = [len(g[0]) for g in groups]
    x = torch.cat([g[0] for g in groups]).to(dev)
    t = torch.cat([g[1] for g in groups]).to(dev)
    names = tuple(dict.fromkeys(pde.derivatives + (("u_t",) if pde.initial_velocity else ())))

    if sequence:
        tokens = model.pseudo_sequence(x, t).detach()
        xs = tokens[..., :1].clone().requires_grad_(True)
        ts = tokens[..., 1:].clone().requires_grad_(True)
        u = model.forward_tokens(xs, ts)
        d = autograd_derivatives(u, xs, ts, names)
    else:
        x, t = x.detach().requires_grad_(True), t.detach().requires_grad_(True)
        u = model(x, t)
        d = autograd_derivatives(u, x, t, names)

    u_res, u_init, u_left, u_right = u.split(sizes)
    d_split = {k: v.split(sizes) for k, v in d.items()}
    r = pde.residual(u_res, {k: v[0] for k, v in d_split.items()})
    x_init = x.split(sizes)[1]
    first = u_init[:, 0] if sequence else u_init
    initial = (first - pde.initial_value(x_init.detach())).pow(2).mean()
    if pde.initial_velocity:
        initial = initial + d_split["u_t"][1].pow(2).mean()
    if pde.boundary == "periodic":
        boundary = (u_right - u_left).pow(2).mean()
    else:
        boundary = u_left.pow(2).mean() + u_right.pow(2).mean()
    parts = {"residual": r.pow(2).mean(), "initial": initial, "boundary": boundary}
    w = weights or {}
    total = sum(w.get(k, 1.0) * v for k, v in parts.items())
    return total, parts


@torch.no_grad()
def predict(model: nn.Module, grid: Collocation, chunk: int = 16384) -> Tensor:
    """The model's u at every grid point, ``[M, 1]``, in chunks to bound memory."""
    dev = _device(model)
    out = [model(grid.x[i:i + chunk].to(dev), grid.t[i:i + chunk].to(dev)) for i in range(0, len(grid), chunk)]
    return torch.cat(out)


def evaluate(problem: PDE | str, model: nn.Module, grid: Collocation) -> dict[str, float]:
    """rMAE and rRMSE of the model against the closed-form solution on ``grid``."""
    pde = get_pde(problem)
    u = pde.solution(grid.x.double(), grid.t.double())
    return relative_errors(u, predict(model, grid).double().cpu())


def _value(v) -> float:
    return v.item() if isinstance(v, Tensor) else float(v)


def nonfinite_terms(total, parts: Optional[dict] = None) -> list[str]:
    """The names of the non-finite values (``"total"`` and/or term names); empty when all are finite."""
    vals = {"total": total, **(parts or {})}
    return [k for k, v in vals.items() if not math.isfinite(_value(v))]


def loss_is_finite(total, parts: Optional[dict] = None) -> bool:
    return not nonfinite_terms(total, parts)


def check_finite(total, parts: Optional[dict] = None) -> None:
    """Raise :class:`NonFiniteLoss` naming the non-finite values, so a diverged run can be recorded."""
    bad = nonfinite_terms(total, parts)
    if bad:
        vals = {"total": total, **(parts or {})}
        raise NonFiniteLoss("loss is not finite: " + ", ".join(f"{k}={_value(vals[k])}" for k in bad))


def make_lbfgs(params, **overrides) -> torch.optim.LBFGS:
    return torch.optim.LBFGS(params, **{**LBFGS_DEFAULTS, **overrides})


def lbfgs_closure(problem: PDE | str, model: nn.Module, batch: Collocation, optimizer: torch.optim.Optimizer,
                  sequence: bool = False, weights: Optional[dict] = None, record: Optional[list] = None):
    """A closure for ``optimizer.step``; appends each evaluation's terms (floats) to ``record``."""
    pde = get_pde(problem)

    def closure():
        optimizer.zero_grad()
        total, parts = pde_loss(pde, model, batch, sequence=sequence, weights=weights)
        total.backward()
        if record is not None:
            record.append({"total": total.item(), **{k: v.item() for k, v in parts.items()}})
        return total

    return closure


__all__ = ["LBFGS_DEFAULTS", "NonFiniteLoss", "TERMS", "check_finite", "evaluate", "lbfgs_closure",
           "loss_is_finite", "make_lbfgs", "nonfinite_terms", "pde_loss", "predict"]
