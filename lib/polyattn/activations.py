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
norm-capped polynomial, and two formulas of a survey article made well defined) live
in :mod:`polyattn.activations_extra` and are registered into this same registry with
:func:`register`; that module's docstring lists them, and says which published
formulas it follows and which article formulas were wrong.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Optional

import torch

Tensor = torch.Tensor

SOFTPICK_EPS = 1e-8
_POLY_NORM_TINY = 1e-30

SPEC_FORMS = (
    "softmax",
    "softmax:k=K         (K > 0; K * softmax)",
    "poly:p=P            (P a positive integer; scale 1/sqrt(N))",
    "poly:p=P,c=C        (fixed scale C, e.g. c=1/14 or c=1)",
    "relu_n",
    "sigmoid",
    "softpick",
    "ssmax:s=S           (S a positive number, e.g. s=0.43)",
    "poly_norm:p=P       (P a positive even integer)",
)


def _valid_forms() -> str:
    return "valid forms: " + "; ".join(f.split("  ")[0].strip() for f in SPEC_FORMS)


@dataclass(frozen=True)
class Activation:
    """An attention activation with its declared properties.

    ``pointwise(s, n)`` is set for elementwise activations (weight depends on the
    score and the row's N only); ``pointwise_grad`` is its derivative in ``s``.
    ``_rows`` computes the weights of a row-coupled activation.  ``_jacobian_parts``
    returns (a, b, c) such that each row's Jacobian is diag(a) - b c^T, which gives
    the exact Frobenius norm without materialising the Jacobian.  b and c may carry
    one more trailing dimension r: the Jacobian is then diag(a) - sum_r b_r c_r^T
    (activations whose weights also depend on a row's min or max need rank > 1).
    """

    spec: str
    family: str
    params: dict
    nonnegative: bool
    rows_sum_to_one: bool
    elementwise: bool
    description: str
    pointwise: Optional[Callable[[Tensor, Tensor], Tensor]] = field(default=None, repr=False)
    pointwise_grad: Optional[Callable[[Tensor, Tensor], Tensor]] = field(default=None, repr=False)
    _rows: Optional[Callable[[Tensor, Tensor, Tensor], Tensor]] = field(default=None, repr=False)
    _jacobian_parts: Optional[Callable] = field(default=None, repr=False)
    #: the weights are multiplied by a learnable factor per head, held by the attention module
    #: (:class:`polyattn.attention.Attend`); this object computes them at the factor's initial value 1
    learned_scale: bool = False

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


# --- builders -----------------------------------------------------------------------------

def _softmax(params):
    """Softmax; with ``k`` (k > 0), k * softmax: positivity, sparsity and row-wise ranking
    kept, rows sum to k, so ||A||_F reaches k sqrt(N) (one-hot rows) instead of sqrt(N).
    It isolates the norm from the other softmax properties; ``softmax:k=1`` is softmax."""
    k = params.get("k")
    kval = 1.0 if k is None else float(Fraction(k))
    if not kval > 0:
        raise ValueError(f"softmax needs k > 0, got k={k}. " + _valid_forms())
    if kval == 1.0:
        spec, desc, pr = "softmax", "exp(s) / sum_j exp(s_j)", {}
    else:
        spec, desc, pr = f"softmax:k={k}", f"{k} * exp(s) / sum_j exp(s_j)", {"k": str(k)}

    def rows(s, mask, n):
        p = torch.softmax(_masked_fill_min(s, mask), dim=-1)
        return p if kval == 1.0 else kval * p

    def parts(s, mask, n):
        p = torch.where(mask, torch.softmax(_masked_fill_min(s, mask), dim=-1), torch.zeros((), device=s.device))
        return kval * p, kval * p, p

    return Activation(spec, "softmax", pr, True, kval == 1.0, False, desc, _rows=rows, _jacobian_parts=parts)


def poly_scale(c):
    """The scale of a polynomial activation as a function of N: 1/sqrt(N) when ``c`` is None,
    else the fixed constant ``c`` (float32, on N's device)."""
    if c is None:
        return torch.rsqrt
    cval = float(Fraction(c))

    def scale(n):
        return torch.tensor(cval, dtype=torch.float32, device=n.device)
    return scale


def _poly(params):
    p = _int_param(params, "p", "poly")
    if p < 1:
        raise ValueError(f"poly needs p >= 1, got p={p}. " + _valid_forms())
    c = params.get("c")
    spec, desc = (f"poly:p={p}", f"s^{p} / sqrt(N)") if c is None else (f"poly:p={p},c={c}", f"{c} * s^{p}")
    scale = poly_scale(c)

    def pointwise(s, n):
        return s.pow(p) * scale(n)

    def grad(s, n):
        return p * s.pow(p - 1) * scale(n) if p > 1 else torch.ones_like(s) * scale(n)

    return Activation(spec, "poly", {"p": p, "c": None if c is None else str(c)},
                      p % 2 == 0, False, True, desc, pointwise=pointwise, pointwise_grad=grad)


def _relu_n(params):
    return Activation("relu_n", "relu_n", {}, True, False, True, "relu(s) / N",
                      pointwise=lambda s, n: torch.relu(s) / n,
                      pointwise_grad=lambda s, n: (s > 0).float() / n)


def _sigmoid(params):
    def pointwise(s, n):
        return torch.sigmoid(s - torch.log(n))

    def grad(s, n):
        sg = pointwise(s, n)
        return sg * (1 - sg)

    return Activation("sigmoid", "sigmoid", {}, True, False, True, "sigmoid(s - log N)",
                      pointwise=pointwise, pointwise_grad=grad)


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


def _softpick(params):
    def rows(s, mask, n):
        _, diff, den = _softpick_terms(s, mask)
        return torch.relu(diff) / den

    def parts(s, mask, n):
        e, diff, den = _softpick_terms(s, mask)
        w = torch.relu(diff) / den
        a = (diff > 0).float() * e / den
        c = torch.sign(diff) * e / den
        return a, w, c

    return Activation("softpick", "softpick", {}, True, False, False,
                      "relu(e^s - 1) / (sum_j |e^s_j - 1| + eps)", _rows=rows, _jacobian_parts=parts)


def _ssmax(params):
    s_param = params.get("s")
    if s_param is None:
        raise ValueError("ssmax needs its scale, e.g. 'ssmax:s=0.43'. " + _valid_forms())
    sv = float(Fraction(s_param))
    if not sv > 0:
        raise ValueError(f"ssmax needs s > 0, got s={s_param}. " + _valid_forms())

    def temp(n):
        return sv * torch.log(n)

    def rows(s, mask, n):
        return torch.softmax(_masked_fill_min(s * temp(n), mask), dim=-1)

    def parts(s, mask, n):
        p = torch.where(mask, rows(s, mask, n), torch.zeros((), device=s.device))
        t = temp(n)
        return t * p, p, t * p

    return Activation(f"ssmax:s={s_param}", "ssmax", {"s": str(s_param)}, True, True, False,
                      f"softmax(({s_param} log N) * s)", _rows=rows, _jacobian_parts=parts)


def _poly_norm(params):
    p = _int_param(params, "p", "poly_norm")
    if p < 2 or p % 2:
        raise ValueError(f"poly_norm needs an even p >= 2 (so weights are non-negative), got p={p}. " + _valid_forms())

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

    return Activation(f"poly_norm:p={p}", "poly_norm", {"p": p}, True, True, False,
                      f"s^{p} / sum_j s_j^{p}", _rows=rows, _jacobian_parts=parts)


_BUILDERS = {
    "softmax": (_softmax, {"k"}),
    "poly": (_poly, {"p", "c"}),
    "relu_n": (_relu_n, set()),
    "sigmoid": (_sigmoid, set()),
    "softpick": (_softpick, set()),
    "ssmax": (_ssmax, {"s"}),
    "poly_norm": (_poly_norm, {"p"}),
}


def register(family: str, builder: Callable[[dict], Activation], params: set, forms: tuple[str, ...] = ()):
    """Add a family to the registry: ``builder(params)`` gets the spec's parameters as
    canonical strings (fractions, e.g. '1/14') and returns the Activation; ``params``
    are the parameter names it accepts; ``forms`` extend the list of valid forms that
    every ValueError quotes.  Registering the same builder again does nothing."""
    global SPEC_FORMS
    if family in _BUILDERS:
        if _BUILDERS[family][0] is builder:
            return
        raise ValueError(f"activation family '{family}' is already registered")
    _BUILDERS[family] = (builder, set(params))
    SPEC_FORMS = SPEC_FORMS + tuple(forms)


def _int_param(params, key, family):
    if key not in params:
        raise ValueError(f"'{family}' needs the parameter {key}, e.g. '{family}:{key}=2'. " + _valid_forms())
    v = params[key]
    if Fraction(v).denominator != 1:
        raise ValueError(f"'{family}' needs an integer {key}, got {key}={v}. " + _valid_forms())
    return int(Fraction(v))


def _parse_number(text: str, spec: str) -> Fraction:
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"cannot read the number '{text}' in activation spec '{spec}'. " + _valid_forms()) from None


def parse(spec: str) -> tuple[str, dict]:
    """Split ``'poly:p=3,c=1/14'`` into ``('poly', {'p': Fraction(3), 'c': Fraction(1, 14)})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an activation spec must be a non-empty string, got {spec!r}. " + _valid_forms())
    family, _, rest = spec.strip().partition(":")
    family = family.strip()
    if family not in _BUILDERS:
        raise ValueError(f"unknown activation '{family}' in spec '{spec}'. " + _valid_forms())
    params = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, val = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise ValueError(f"malformed parameter '{item}' in activation spec '{spec}' (expected key=value). "
                                 + _valid_forms())
            params[key] = _parse_number(val, spec)
    allowed = _BUILDERS[family][1]
    extra = set(params) - allowed
    if extra:
        raise ValueError(f"activation '{family}' takes no parameter(s) {sorted(extra)} (spec '{spec}'). " + _valid_forms())
    return family, params


def _fmt(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


_CACHE: dict[str, Activation] = {}


def get(spec: str) -> Activation:
    """The activation for ``spec``; raises ``ValueError`` listing the valid forms when it is not one."""
    if isinstance(spec, Activation):
        return spec
    if spec not in _CACHE:
        family, params = parse(spec)
        # ssmax keeps its scale in decimal form ('0.43'), the others as fractions ('1/14').
        fmt = _decimal if family == "ssmax" else _fmt
        _CACHE[spec] = _BUILDERS[family][0]({k: fmt(v) for k, v in params.items()})
    return _CACHE[spec]


def _decimal(v: Fraction) -> str:
    return format(float(v), "g")


def canonical(spec: str) -> str:
    """The canonical spec string (``'poly:p=3,c=2/28'`` -> ``'poly:p=3,c=1/14'``)."""
    return get(spec).spec


#: The activations the book compares, in the order tables list them.
BOOK_SPECS = (
    "softmax",
    "poly:p=3",
    "poly:p=3,c=1/14",
    "poly:p=3,c=1",
    "poly:p=1",
    "poly:p=2",
    "relu_n",
    "sigmoid",
    "softpick",
    "ssmax:s=0.43",
    "poly_norm:p=2",
)


def properties_table(specs=BOOK_SPECS):
    """One dict per activation: spec, formula and declared properties."""
    rows = []
    for spec in specs:
        a = get(spec)
        rows.append({"spec": a.spec, "formula": a.description, "non-negative": a.nonnegative,
                     "rows sum to 1": a.rows_sum_to_one, "elementwise": a.elementwise})
    return rows


# The other families: that module registers them when it first runs (at its end), and
# again here should this module be reloaded; imported first, it is not complete yet.
from . import activations_extra as _extra  # noqa: E402

if hasattr(_extra, "install"):
    _extra.install()
