"""Shared pieces of the fast paths: per-row N, row scales, and the per-activation
elementwise kernels (forward value and derivative, fused where it pays)."""
from __future__ import annotations

from fractions import Fraction
from typing import Optional

import torch

Tensor = torch.Tensor


def causal_offset(n_q: int, n_k: int) -> int:
    """Query i sees keys j <= i + offset (queries aligned with the end of the keys)."""
    return n_k - n_q


def row_counts(batch: int, n_q: int, n_k: int, key_padding_mask: Optional[Tensor], causal: bool,
               n_mode: str, device) -> Tensor:
    """N per query row as float32 ``[B or 1, 1, Nq or 1, 1]``, as ``attention.visible_counts``.

    ``row``: the keys the query may see (padding and causal mask applied).
    ``fixed``: the non-padding keys of the sequence.  Both are clamped to at least 1.
    ``padded``: the padded length ``n_k`` for every row.
    """
    if n_mode not in ("row", "fixed", "padded"):
        raise ValueError(f"n_mode must be 'row', 'fixed' or 'padded', got {n_mode!r}")
    if n_mode == "padded":
        return torch.full((1, 1, 1, 1), float(n_k), dtype=torch.float32, device=device)
    if n_mode == "fixed" or not causal:
        if key_padding_mask is None:
            return torch.full((1, 1, 1, 1), float(n_k), dtype=torch.float32, device=device)
        return key_padding_mask.sum(-1).clamp_min(1).float().view(batch, 1, 1, 1)
    last = torch.arange(n_q, device=device) + causal_offset(n_q, n_k)  # last visible key per row
    if key_padding_mask is None:
        counts = (last + 1).clamp(0, n_k).float()
        return counts.clamp_min(1).view(1, 1, n_q, 1)
    csum = key_padding_mask.long().cumsum(-1)                        # [B, Nk]
    counts = csum[:, last.clamp(0, n_k - 1)]                          # [B, Nq]
    counts = torch.where(last >= 0, counts, torch.zeros_like(counts))
    return counts.clamp_min(1).float().view(batch, 1, n_q, 1)


class ElementwiseKernel:
    """How the blocked path evaluates one elementwise activation.

    The weights are ``row_scale(n) * g(s)`` when the activation factors that way (poly,
    relu_n): the scale then multiplies output rows and never touches a score tile.
    Otherwise ``g(s, n)`` is evaluated per tile with each row's ``n`` (``needs_n``).

    ``forward(s, n)`` returns g(s) and may overwrite ``s``.  ``value_and_grad(s, n, buf)``
    returns ``(g, gprime)`` with ``dg/ds = grad_factor * gprime`` (``gprime`` None means
    the constant 1); it may overwrite ``s`` and use ``buf`` (a tensor shaped like ``s``)
    for one of its results.  ``n`` broadcasts against ``s``.
    """

    grad_factor: float = 1.0
    needs_n: bool = False
    #: k with g(c s) = c^k g(s) for c > 0, when small enough that the blocked path may
    #: apply the 1/sqrt(d) score scale after g (as c^k) instead of scaling q; else None.
    degree: Optional[int] = None
    #: g(0) = 0: the blocked path masks a causal tile by zeroing its invisible scores
    #: before g (a multiplication, cheaper than filling the weights after it)
    zero_at_zero: bool = False
    #: g'(0) = 0 as well: the masked scores then give dS = 0 without masking dS
    grad_zero_at_zero: bool = False

    def row_scale(self, n: Tensor) -> Optional[Tensor]:
        return None

    def forward(self, s: Tensor, n: Optional[Tensor]) -> Tensor:
        raise NotImplementedError

    def value_and_grad(self, s: Tensor, n: Optional[Tensor], buf: Tensor):
        raise NotImplementedError


class PolyKernel(ElementwiseKernel):
    """``scale(n) * s^p``: scale 1/sqrt(N) or a constant c.  s^(p-1) is computed once
    and serves both the value (s * s^(p-1)) and the derivative (p s^(p-1))."""

    def __init__(self, p: int, c: Optional[float]):
        self.p, self.c = p, c
        self.grad_factor = float(p)
        self.zero_at_zero, self.grad_zero_at_zero = True, p >= 2
        # unscaled scores are sqrt(d) times larger; their p-th power stays far from
        # float32 overflow for small p only
        self.degree = p if p <= 4 else None

    def row_scale(self, n):
        if self.c is None:
            return torch.rsqrt(n)
        return torch.full_like(n, self.c)

    def forward(self, s, n):
        return s if self.p == 1 else s.pow_(self.p)

    def value_and_grad(self, s, n, buf):
        p = self.p
        if p == 1:
            return s, None
        if p == 2:
            return torch.mul(s, s, out=buf), s
        g = torch.mul(s, s, out=buf) if p == 3 else torch.pow(s, p - 1, out=buf)
        return s.mul_(g), g


class ReluNKernel(ElementwiseKernel):
    """``relu(s) / N``."""

    degree = 1
    zero_at_zero = grad_zero_at_zero = True

    def row_scale(self, n):
        return 1.0 / n

    def forward(self, s, n):
        return s.relu_()

    def value_and_grad(self, s, n, buf):
        positive = torch.gt(s, 0, out=buf)
        return s.relu_(), positive


class SigmoidKernel(ElementwiseKernel):
    """``sigmoid(s - log N)``; the derivative reuses the value: g (1 - g)."""

    needs_n = True

    def forward(self, s, n):
        return s.sub_(torch.log(n)).sigmoid_()

    def value_and_grad(self, s, n, buf):
        g = self.forward(s, n)
        return g, torch.neg(g, out=buf).add_(1.0).mul_(g)


class GenericKernel(ElementwiseKernel):
    """Any elementwise activation, through its ``pointwise`` and ``pointwise_grad``."""

    needs_n = True

    def __init__(self, act):
        self.act = act

    def forward(self, s, n):
        return self.act.pointwise(s, n)

    def value_and_grad(self, s, n, buf):
        return self.act.pointwise(s, n), self.act.pointwise_grad(s, n)


_KERNELS: dict = {}


def elementwise_kernel(act, generic: bool = False) -> ElementwiseKernel:
    """The kernel for an elementwise activation; ``generic=True`` skips the fused forms."""
    key = (act.spec, generic)
    if key not in _KERNELS:
        _KERNELS[key] = _build_kernel(act, generic)
    return _KERNELS[key]


def _build_kernel(act, generic: bool) -> ElementwiseKernel:
    if not act.elementwise:
        raise ValueError(f"activation {act.spec!r} is not elementwise (its weights couple a row); "
                         "only elementwise activations have a blocked path")
    if not generic:
        if act.family == "poly":
            c = act.params.get("c")
            return PolyKernel(int(act.params["p"]), None if c is None else float(Fraction(c)))
        if act.family == "relu_n":
            return ReluNKernel()
        if act.family == "sigmoid":
            return SigmoidKernel()
    if act.pointwise is None or act.pointwise_grad is None:
        raise ValueError(f"activation {act.spec!r} declares itself elementwise but has no pointwise "
                         "function and derivative")
    return GenericKernel(act)
