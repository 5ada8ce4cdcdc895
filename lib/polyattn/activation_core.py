"""The :class:`Activation` object and the torch primitives every family's builder shares.

The families themselves are built in :mod:`polyattn.activations` (the main registry) and
:mod:`polyattn.activations_extra` (the added families); both import this module and neither
imports the other's builders back.  What a spec declares (its canonical form and properties)
comes from :mod:`polyattn.specs`; :func:`made` copies it into the Activation.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Optional

import torch

from .specs import Spec

Tensor = torch.Tensor


@dataclass(frozen=True)
class Activation(Spec):
    """An attention activation: what its spec declares (:class:`polyattn.specs.Spec`: name, family,
    parameters, properties, formula) and how it computes its weights.

    ``pointwise(s, n)`` is set for elementwise activations (weight depends on the
    score and the row's N only); ``pointwise_grad`` is its derivative in ``s``.
    ``_rows`` computes the weights of a row-coupled activation.  ``_jacobian_parts``
    returns (a, b, c) such that each row's Jacobian is diag(a) - b c^T, which gives
    the exact Frobenius norm without materialising the Jacobian.  b and c may carry
    one more trailing dimension r: the Jacobian is then diag(a) - sum_r b_r c_r^T
    (activations whose weights also depend on a row's min or max need rank > 1).
    ``learned_scale`` (from the spec): the weights are multiplied by a learnable factor per head,
    held by the attention module (:class:`polyattn.attention.Attend`); this object computes them
    at the factor's initial value 1.
    """

    pointwise: Optional[Callable[[Tensor, Tensor], Tensor]] = field(default=None, repr=False)
    pointwise_grad: Optional[Callable[[Tensor, Tensor], Tensor]] = field(default=None, repr=False)
    _rows: Optional[Callable[[Tensor, Tensor, Tensor], Tensor]] = field(default=None, repr=False)
    _jacobian_parts: Optional[Callable] = field(default=None, repr=False)

    def __call__(self, scores: Tensor, mask: Optional[Tensor] = None, n: Optional[Tensor | float] = None) -> Tensor:
        s, mask, n = _prepare(scores, mask, n)
        with torch.autocast(device_type=s.device.type, enabled=False):
            if self.elementwise:
                w = self.pointwise(s, n)
            else:
                w = self._rows(s, mask, n)
            w = torch.where(mask, w, torch.zeros((), dtype=w.dtype, device=w.device))
        return w.to(scores.dtype)

    def jacobian_fro_sq(self, scores: Tensor, mask: Optional[Tensor] = None, n: Optional[Tensor | float] = None) -> Tensor:
        """Squared Frobenius norm of d(weights)/d(scores), one value per row ``[..., Nq]``.

        Exact and closed-form; N is treated as a constant of the row (it counts keys,
        it does not depend on the scores).  Masked keys contribute nothing.
        """
        s, mask, n = _prepare(scores, mask, n)
        zero = torch.zeros((), dtype=torch.float32, device=s.device)
        with torch.autocast(device_type=s.device.type, enabled=False):
            if self.elementwise:
                g = torch.where(mask, self.pointwise_grad(s, n), zero)
                return (g * g).sum(-1)
            a, b, c = self._jacobian_parts(s, mask, n)
            a = torch.where(mask, a, zero)
            if b.dim() == s.dim():
                b, c = (torch.where(mask, t, zero) for t in (b, c))
                sq = (a * a).sum(-1) - 2 * (a * b * c).sum(-1) + (b * b).sum(-1) * (c * c).sum(-1)
            else:
                b, c = (torch.where(mask[..., None], t, zero) for t in (b, c))
                gram_b = b.transpose(-1, -2) @ b                  # [..., r, r]
                gram_c = c.transpose(-1, -2) @ c
                sq = ((a * a).sum(-1) - 2 * (a[..., None] * b * c).sum((-1, -2))
                      + (gram_b * gram_c).sum((-1, -2)))
            # The terms cancel on near-one-hot rows; rounding must not make a norm negative.
            return sq.clamp_min(0)


def made(decl: Spec, **computation) -> Activation:
    """The Activation of a declared spec: its name, parameters and properties from ``decl`` (see
    :mod:`polyattn.specs`), its computation (``pointwise``/``pointwise_grad`` or
    ``_rows``/``_jacobian_parts``) from the builder."""
    return Activation(decl.spec, decl.family, decl.params, decl.nonnegative, decl.rows_sum_to_one,
                      decl.elementwise, decl.description, learned_scale=decl.learned_scale, **computation)


def _prepare(scores: Tensor, mask, n):
    s = scores.float()
    if mask is None:
        mask = torch.ones((), dtype=torch.bool, device=s.device)
    elif mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor (True = key visible), got dtype {mask.dtype}")
    mask = mask.expand_as(s) if mask.dim() else mask.expand(s.shape)
    if n is None:
        n = mask.sum(-1, keepdim=True).clamp_min(1).to(torch.float32)
    elif not torch.is_tensor(n):
        n = torch.tensor(float(n), dtype=torch.float32, device=s.device)
    else:
        n = n.to(torch.float32)
    return s, mask, n


def _masked_fill_min(s: Tensor, mask: Tensor) -> Tensor:
    # For row statistics only (max, softmax); the weights are zeroed after the nonlinearity.
    return torch.where(mask, s, torch.full((), torch.finfo(s.dtype).min, dtype=s.dtype, device=s.device))


def poly_scale(c):
    """The scale of a polynomial activation as a function of N: 1/sqrt(N) when ``c`` is None,
    else the fixed constant ``c`` (float32, on N's device)."""
    if c is None:
        return torch.rsqrt
    cval = float(Fraction(c))

    def scale(n):
        return torch.tensor(cval, dtype=torch.float32, device=n.device)
    return scale


def poly_functions(p: int, c=None):
    """``(pointwise, pointwise_grad)`` of s^p times :func:`poly_scale` (``c``)."""
    scale = poly_scale(c)

    def pointwise(s, n):
        return s.pow(p) * scale(n)

    def grad(s, n):
        return p * s.pow(p - 1) * scale(n) if p > 1 else torch.ones_like(s) * scale(n)

    return pointwise, grad
