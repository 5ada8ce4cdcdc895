"""The registry of attention activations, built from short string specs.

Every activation maps scores ``[..., Nq, Nk]`` to weights of the same shape:

    act = get("poly:p=3")
    weights = act(scores, mask)          # mask: bool, broadcastable, True = key visible

``N`` (the paper's sequence length) is, row by row, the number of keys the query
may see; callers may override it with ``n=`` (a fixed length for causal models).
Masked keys get exactly zero weight for every activation: masking happens *after*
the nonlinearity, so no -inf or -1e6 ever reaches a polynomial.  Everything is
computed in float32 (also under autocast) and cast back to the input dtype.

Specs (the spec string is the activation's name in every table, legend and record):

    softmax            exp(s) / sum exp(s)
    poly:p=P           s^P / sqrt(N)                       (the paper's activation)
    poly:p=P,c=C       C * s^P  (C may be a fraction, e.g. c=1/14; c=1 is unscaled)
    relu_n             relu(s) / N                         (Wortsman et al. 2023)
    sigmoid            sigmoid(s - log N)                  (Ramapuram et al. 2024)
    softpick           relu(e^s - 1) / (sum |e^s - 1| + eps e^m)   (Zuhri et al. 2025; m the row's
                       largest visible score: eps is added after rescaling by e^-m, as its authors do)
    ssmax:s=S          softmax((S log N) * s)              (Nakanishi 2025)
    poly_norm:p=P      s^P / sum s^P, P even               (normalised polynomial)
    softmax:k=K        K * softmax(s)                      (the norm intervention: ||A||_F up to K sqrt(N))

More families (Power-Softmax, Taylor softmax, periodic, ReLU^2, SA-Softmax, a
norm-capped polynomial, and two formulas of a survey article made well defined) are built
in :mod:`polyattn.activations_extra` and installed into this same registry when it is
imported; that module's docstring lists them, and says which published formulas it
follows and which article formulas were wrong.

The grammar of the specs, their canonical forms and the declared properties of every
family live in :mod:`polyattn.specs`, which needs no torch; :func:`parse`,
:func:`canonical`, :data:`BOOK_SPECS` and :data:`SPEC_FORMS` here are its.  This module
adds the computation (:class:`Activation`, built by :func:`get`).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable

import torch

from . import activations_extra as _extra
from . import specs
from .activation_core import (  # noqa: F401  (Tensor and poly_scale re-exported)
    Activation,
    Tensor,
    _masked_fill_min,
    made,
    poly_functions,
    poly_scale,
)
from .specs import BOOK_SPECS, Spec, parse  # noqa: F401  (parse re-exported)

SOFTPICK_EPS = 1e-8
_POLY_NORM_TINY = 1e-30


def __getattr__(name):
    # the valid forms grow when a family is registered: read them from the grammar each time
    if name == "SPEC_FORMS":
        return specs.SPEC_FORMS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _valid_forms() -> str:
    return specs.valid_forms()


# --- builders: each turns a declared spec (polyattn.specs) into its computation -------------------

def _softmax(d: Spec):
    """Softmax; with ``k`` (k > 0), k * softmax: positivity, sparsity and row-wise ranking
    kept, rows sum to k, so ||A||_F reaches k sqrt(N) (one-hot rows) instead of sqrt(N).
    It isolates the norm from the other softmax properties; ``softmax:k=1`` is softmax."""
    kval = float(Fraction(d.params["k"])) if "k" in d.params else 1.0

    def rows(s, mask, n):
        p = torch.softmax(_masked_fill_min(s, mask), dim=-1)
        return p if kval == 1.0 else kval * p

    def parts(s, mask, n):
        p = torch.where(mask, torch.softmax(_masked_fill_min(s, mask), dim=-1), torch.zeros((), device=s.device))
        return kval * p, kval * p, p

    return made(d, _rows=rows, _jacobian_parts=parts)


def _poly(d: Spec):
    pointwise, grad = poly_functions(d.params["p"], d.params["c"])
    return made(d, pointwise=pointwise, pointwise_grad=grad)


def _relu_n(d: Spec):
    return made(d, pointwise=lambda s, n: torch.relu(s) / n, pointwise_grad=lambda s, n: (s > 0).float() / n)


def _sigmoid(d: Spec):
    def pointwise(s, n):
        return torch.sigmoid(s - torch.log(n))

    def grad(s, n):
        sg = pointwise(s, n)
        return sg * (1 - sg)

    return made(d, pointwise=pointwise, pointwise_grad=grad)


def _softpick_terms(s, mask):
    """The terms of Softpick, exponentiating nothing that can overflow, in value or gradient.

    Softpick is relu(e^s - 1) / (sum_j |e^s_j - 1| + eps).  Its authors compute it rescaled by
    the row's largest visible score m, as relu(e^(s-m) - e^-m) / (sum_j |e^(s_j-m) - e^-m| + eps),
    with eps added *after* the rescaling; we keep that, so the function is, exactly,
    relu(e^s - 1) / (sum_j |e^s_j - 1| + eps e^m).  Here the rescaling uses a = max(m, 0), which
    is the same function (every term and eps e^(m-a) carry the factor e^-a) and keeps e^-a <= 1
    when every visible score is very negative.  Each difference e^(s-a) - e^-a is computed
    without cancellation and without an overflowing factor:

        s > 0:   -e^(s-a) * expm1(-s)        (e^(s-a) <= 1, expm1(-s) in (-1, 0))
        s <= 0:  e^-a * expm1(s)             (both factors in [-1, 1])

    Masked scores are replaced by 0 *before* any exponential (their weight is zeroed anyway),
    and each branch of a ``torch.where`` only ever sees inputs it can evaluate, so no
    ``0 * inf`` reaches the backward pass.  Returns (g, diff, den) with g = e^(s-a) (the
    derivative of each term in its own score), diff the rescaled terms and den the rescaled
    denominator.
    """
    zero = torch.zeros((), dtype=s.dtype, device=s.device)
    m = _masked_fill_min(s, mask).amax(-1, keepdim=True)
    m = torch.where(mask.any(-1, keepdim=True), m, zero)  # a row with no visible key
    a = m.clamp_min(0)
    s = torch.where(mask, s, zero)
    pos = s > 0
    s_pos, s_neg = torch.where(pos, s, zero), torch.where(pos, zero, s)
    g = torch.exp(s - a)
    diff = torch.where(pos, -torch.exp(s_pos - a) * torch.expm1(-s_pos), torch.exp(-a) * torch.expm1(s_neg))
    diff = torch.where(mask, diff, zero)
    den = diff.abs().sum(-1, keepdim=True) + SOFTPICK_EPS * torch.exp(m - a)
    return g, diff, den


def _softpick(d: Spec):
    def rows(s, mask, n):
        _, diff, den = _softpick_terms(s, mask)
        return torch.relu(diff) / den

    def parts(s, mask, n):
        e, diff, den = _softpick_terms(s, mask)
        w = torch.relu(diff) / den
        a = (diff > 0).float() * e / den
        c = torch.sign(diff) * e / den
        return a, w, c

    return made(d, _rows=rows, _jacobian_parts=parts)


def _ssmax(d: Spec):
    sv = float(Fraction(d.params["s"]))

    def temp(n):
        return sv * torch.log(n)

    def rows(s, mask, n):
        return torch.softmax(_masked_fill_min(s * temp(n), mask), dim=-1)

    def parts(s, mask, n):
        p = torch.where(mask, rows(s, mask, n), torch.zeros((), device=s.device))
        t = temp(n)
        return t * p, p, t * p

    return made(d, _rows=rows, _jacobian_parts=parts)


def _poly_norm(d: Spec):
    p = d.params["p"]

    def terms(s, mask):
        x = torch.where(mask, s.pow(p), torch.zeros((), device=s.device))
        z = x.sum(-1, keepdim=True).clamp_min(_POLY_NORM_TINY)
        return x, z

    def rows(s, mask, n):
        x, z = terms(s, mask)
        return x / z

    def parts(s, mask, n):
        x, z = terms(s, mask)
        g = p * s.pow(p - 1) / z
        return g, x / z, g

    return made(d, _rows=rows, _jacobian_parts=parts)


#: family -> builder: ``builder(Spec)`` for the families :mod:`polyattn.specs` declares (the main
#: ones here, then those of :mod:`polyattn.activations_extra`), ``builder(params)`` for families
#: added with :func:`register`.
_BUILDERS: dict[str, Callable] = {
    "softmax": _softmax,
    "poly": _poly,
    "relu_n": _relu_n,
    "sigmoid": _sigmoid,
    "softpick": _softpick,
    "ssmax": _ssmax,
    "poly_norm": _poly_norm,
    **_extra.BUILDERS,
}


def register(family: str, builder: Callable[[dict], Activation], params: set, forms: tuple[str, ...] = ()):
    """Add a family to the registry: ``builder(params)`` gets the spec's parameters as
    canonical strings (fractions, e.g. '1/14') and returns the Activation; ``params``
    are the parameter names it accepts; ``forms`` extend the list of valid forms that
    every ValueError quotes.  Registering the same builder again does nothing.

    The family enters the grammar of :mod:`polyattn.specs` (parsing and the valid forms); its
    canonical form and properties are those of the Activation its builder returns, so
    :func:`canonical` here (not :func:`polyattn.specs.canonical`) gives them."""
    if family in _BUILDERS:
        if _BUILDERS[family] is builder:
            return
        raise ValueError(f"activation family '{family}' is already registered")
    specs.register(family, params, forms)
    _BUILDERS[family] = builder


_CACHE: dict[str, Activation] = {}


def get(spec: str) -> Activation:
    """The activation for ``spec``; raises ``ValueError`` listing the valid forms when it is not one."""
    if isinstance(spec, Activation):
        return spec
    if spec not in _CACHE:
        family, params = parse(spec)
        if specs.FAMILIES[family].declare is None:
            _CACHE[spec] = _BUILDERS[family](specs.param_strings(family, params))
        else:
            _CACHE[spec] = _BUILDERS[family](specs.declare(spec))
    return _CACHE[spec]


def canonical(spec: str) -> str:
    """The canonical spec string (``'poly:p=3,c=2/28'`` -> ``'poly:p=3,c=1/14'``): that of
    :func:`polyattn.specs.canonical`, or of the builder for a family added with :func:`register`."""
    if isinstance(spec, Activation) or not specs.is_declared(spec):
        return get(spec).spec
    return specs.canonical(spec)


def properties_table(specs=BOOK_SPECS):
    """One dict per activation: spec, formula and declared properties."""
    rows = []
    for spec in specs:
        a = get(spec)
        rows.append({"spec": a.spec, "formula": a.description, "non-negative": a.nonnegative,
                     "rows sum to 1": a.rows_sum_to_one, "elementwise": a.elementwise})
    return rows
