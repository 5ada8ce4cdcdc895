"""More attention activations, installed into the registry of :mod:`polyattn.activations` by its import.

Use them exactly like the others (``activations.get("taylor_softmax")(scores, mask)``):
masked keys get exactly zero weight, scores at masked keys never reach a formula
(they are replaced by 0 first), everything is computed in float32, and each family
has an exact closed-form per-row Jacobian norm.

    power_softmax:p=P    |s|^P / sum_j |s_j|^P                    (Power-Softmax)
    taylor_softmax       (1 + s + s^2/2) / sum_j (1 + s_j + s_j^2/2)    (Taylor softmax)
    periodic             sin^2(s + pi/4) / sum_j sin^2(s_j + pi/4)     (shifted sin^2-max)
    relu2_n              relu(s)^2 / N
    relu2_norm           relu(s)^2 / sum_j relu(s_j)^2             ("Poly2")
    sa_softmax           s * softmax(s)                            (SA-Softmax)
    sa_softmax_norm      (s - m) / (M - m) * softmax(s),  m = min(min s, 0), M = max(max s, 0)
    poly_cap:p=P         row v = s^P / sqrt(N), rescaled to v / max(1, ||v||_2)
    poly_unit:p=P        row v = s^P, rescaled to v / ||v||_2: every row at norm exactly 1
    invsqrt              (s^2 + e)^-1 / sum_j (s_j^2 + e)^-1, e = 1 (or invsqrt:e=E)
    polyak_sum           s / sum_j |s_j|
    poly_odd:p=P         s |s|^(P-1) / sqrt(N)  (or c * s |s|^(P-1) with c=C): the odd extension of s^P
    poly_learned:p=P     g_h s^P / sqrt(N), g_h a learnable factor per head initialised at 1 (the
                         book's parametrisation of a "learned scale": the scale g_h / sqrt(N) starts
                         at 1/sqrt(N); the paper's own parametrisation is unpublished)

Their grammar, canonical forms and declared properties are in :mod:`polyattn.specs` with the
main families'; this module builds their computation (:data:`BUILDERS`, one builder per family,
each taking the declared :class:`~polyattn.specs.Spec`) and imports nothing of
:mod:`polyattn.activations`.

Rows whose normaliser is zero (every visible score a zero of the numerator, e.g. all
scores <= 0 for relu2_norm) get all-zero weights, as rows with no visible key do.

A survey article on softmax alternatives and attention sinks (a Chinese-language
blog post used as background for the book) gives several of these under the names
below; some of its formulas are wrong or ill-defined:

* "Softpick" as a thresholded piecewise map (s if s > tau, else s - tau softplus(s - tau)):
  wrong.  Softpick (Zuhri et al., arXiv:2504.20966) is relu(e^s - 1) / (sum |e^s - 1| + eps),
  the ``softpick`` spec of the main registry.
* "SA-Softmax(x)_i = x_i sigma(alpha x_i) / sum_j x_j sigma(alpha x_j)": wrong.  The
  published SA-Softmax is s * softmax(s) or its normalised variant (``sa_softmax``,
  ``sa_softmax_norm``); the article's formula is not even well defined (its
  denominator crosses zero) and is not implemented.
* "InvSqrt(x)_i = x_i^-2 / sum_j x_j^-2", said to emphasise large values: no published
  method; the name (inverse square root) does not match the formula (inverse square);
  it is undefined at 0, and it favours scores near 0, not large ones.  ``invsqrt``
  makes the formula well defined by adding e > 0 to the square.
* "Polyak-Sum (average pooling) = x_i / sum_j x_j": no published method of that name;
  average pooling would be 1/N; the denominator can vanish or change sign, so weights
  are unbounded.  ``polyak_sum`` divides by sum_j |x_j| instead (equal to the article's
  formula on rows of non-negative scores) so the row's absolute weights sum to 1.
* "Poly2 = relu(x)^2 / sum relu(x)^2": a plausible baseline without a published
  source; the all-zero row needs a definition (``relu2_norm``: weights 0).
* Its claims that substitutes must be non-negative and monotone contradict the paper
  this book replicates (x^3 is neither), and its perplexity / sink table has no model,
  data or source behind it.
"""
from __future__ import annotations

import math
from fractions import Fraction

import torch

from .activation_core import _masked_fill_min, made, poly_functions, poly_scale
from .specs import EXTRA_SPECS, Spec  # noqa: F401  (EXTRA_SPECS re-exported: the specs of these families)

_TINY = 1e-30
_QUARTER_PI = math.pi / 4


def _zero(s):
    return torch.zeros((), dtype=s.dtype, device=s.device)


def _visible(s, mask):
    # Scores at masked keys may be huge or -inf; none of them may reach a formula.
    return torch.where(mask, s, _zero(s))


def _ratio(decl: Spec, terms):
    """Weights f(s) / sum_j f(s_j) from ``terms(s, mask) -> (f, f')`` (both zero at masked
    keys; both may carry a common positive row factor, which cancels).  The row Jacobian
    is diag(f'/Z) - (f/Z)(f'/Z)^T."""

    def rows(s, mask, n):
        f, _ = terms(s, mask)
        return f / f.sum(-1, keepdim=True).clamp_min(_TINY)

    def parts(s, mask, n):
        f, g = terms(s, mask)
        z = f.sum(-1, keepdim=True).clamp_min(_TINY)
        return g / z, f / z, g / z

    return made(decl, _rows=rows, _jacobian_parts=parts)


def _power_softmax(decl: Spec):
    """Power-Softmax (Zimerman et al., "Power-Softmax: Towards Secure LLM Inference over
    Encrypted Data", arXiv:2410.09457): x_i^p / sum_j x_j^p with p a positive even
    integer, the exponential of softmax replaced by a power so attention is polynomial.

    Negative scores: the published form uses even p, where x^p = |x|^p; this spec uses
    |x|^p for every p >= 1, so odd p extends the same non-negative, sign-blind weights
    (it is not relu(x)^p: a strongly negative score gets a large weight).  For even p
    it equals ``poly_norm:p=P``.  Scores are divided by the row's largest |s| before the
    power (a common factor that cancels), so large p or large scores cannot overflow
    float32.  A row of all-zero scores gets zero weights.
    """
    p = decl.params["p"]

    def terms(s, mask):
        x = _visible(s, mask).abs()
        m = x.amax(-1, keepdim=True).clamp_min(_TINY)
        r = x / m
        f = r.pow(p)
        g = p * torch.sign(_visible(s, mask)) * (r.pow(p - 1) if p > 1 else torch.ones_like(r)) / m
        return f, torch.where(mask, g, _zero(s))

    return _ratio(decl, terms)


def _taylor_softmax(decl: Spec):
    """Second-order Taylor softmax (de Brebisson & Vincent, "An Exploration of Softmax
    Alternatives Belonging to the Spherical Loss Family", ICLR 2016, arXiv:1511.05042):
    exp is replaced by its order-2 Taylor polynomial 1 + x + x^2/2 and normalised per row.
    1 + x + x^2/2 = ((x + 1)^2 + 1) / 2 >= 1/2, so every weight is positive and no row
    normaliser can vanish; weights grow only quadratically, unlike exp."""

    def terms(s, mask):
        x = _visible(s, mask)
        f = torch.where(mask, 1 + x + 0.5 * x * x, _zero(s))
        return f, torch.where(mask, 1 + x, _zero(s))

    return _ratio(decl, terms)


def _periodic(decl: Spec):
    """Shifted sin^2-max of Wang, Liu & Liu, "Escaping the Gradient Vanishing: Periodic
    Alternatives of Softmax in Attention Mechanism" (IEEE Access 2021, arXiv:2108.07153;
    code slwang9353/Period-alternatives-of-Softmax): exp replaced by sin^2(x + pi/4),
    normalised per row, without their optional row standardisation (their code marks
    this shifted form, with the sin-softmax, as the one that works without it).  Periodic,
    so no score saturates the gradient; sin^2(x + pi/4) = (1 + sin 2x) / 2 in [0, 1],
    with derivative cos 2x.  The paper's other variants (sinmax, cosmax, unshifted
    sin^2max, sirenmax) can make the row sum zero or negative.  A row whose every score
    is a zero of sin^2(x + pi/4) gets zero weights."""

    def terms(s, mask):
        x = _visible(s, mask)
        f = torch.where(mask, torch.sin(x + _QUARTER_PI).square(), _zero(s))
        return f, torch.where(mask, torch.cos(2 * x), _zero(s))

    return _ratio(decl, terms)


def _relu2_n(decl: Spec):
    """relu(s)^2 / N: the squared-ReLU member of the activations Wortsman et al.
    ("Replacing softmax with ReLU in Vision Transformers", arXiv:2309.08586) divide by
    the sequence length; elementwise, so it has the blocked fast path."""
    return made(decl, pointwise=lambda s, n: torch.relu(s).square() / n,
                pointwise_grad=lambda s, n: 2 * torch.relu(s) / n)


def _relu2_norm(decl: Spec):
    """relu(s)^2 / sum_j relu(s_j)^2: the survey article's "Poly2" (no published source;
    polynomial attention with row normalisation, cf. the even-degree normalised forms of
    PolySketchFormer, arXiv:2310.01655).  A row with no positive score would be 0/0;
    here it gets zero weights (the query attends to nothing)."""

    def terms(s, mask):
        r = torch.relu(_visible(s, mask))
        return r * r, 2 * r

    return _ratio(decl, terms)


def _sa_softmax(decl: Spec):
    """Self-Adjust Softmax (Zheng et al., "Self-Adjust Softmax", EMNLP 2025,
    arXiv:2502.18277): softmax(z) is replaced by z * softmax(z), so a dominant key's
    gradient no longer vanishes as its probability nears 1.  Weights take the sign of
    the scores and rows do not sum to 1.  See ``sa_softmax_norm`` for the paper's
    normalised variant.  (The survey article's x sigma(alpha x) / sum form is not it.)"""

    def soft(s, mask):
        return torch.where(mask, torch.softmax(_masked_fill_min(s, mask), dim=-1), _zero(s))

    def rows(s, mask, n):
        return _visible(s, mask) * soft(s, mask)

    def parts(s, mask, n):
        p, z = soft(s, mask), _visible(s, mask)
        # d(z_i p_i)/dz_j = delta_ij p_i (1 + z_i) - (z_i p_i) p_j
        return p * (1 + z), z * p, p

    return made(decl, _rows=rows, _jacobian_parts=parts)


def _sa_softmax_norm(decl: Spec):
    """The normalised SA-Softmax of Zheng et al. (arXiv:2502.18277):
    (z - m) / (M - m) * softmax(z) with m = min(min_j z_j, 0) and M = max(max_j z_j, 0)
    over the row's visible keys.  The factor lies in [0, 1], so weights are non-negative
    and at most softmax's; a row of all-zero scores (M = m) gets zero weights.  The
    factor depends on the row's min and max, so the Jacobian has rank-3 coupling."""

    def terms(s, mask):
        z = _visible(s, mask)
        p = torch.where(mask, torch.softmax(_masked_fill_min(s, mask), dim=-1), _zero(s))
        big = torch.finfo(s.dtype).max
        lo = torch.where(mask, s, torch.full((), big, device=s.device)).amin(-1, keepdim=True).clamp_max(0)
        hi = torch.where(mask, s, torch.full((), -big, device=s.device)).amax(-1, keepdim=True).clamp_min(0)
        d = (hi - lo).clamp_min(_TINY)
        f = torch.where(mask, (z - lo) / d, _zero(s))
        return z, p, lo, hi, d, f

    def rows(s, mask, n):
        _, p, _, _, _, f = terms(s, mask)
        return f * p

    def parts(s, mask, n):
        z, p, lo, hi, d, f = terms(s, mask)
        w = f * p
        # m (resp. M) moves with the arg-min (arg-max) key only while it is below (above) 0.
        e_min = ((z == lo) & (lo < 0) & mask).float()
        e_max = ((z == hi) & (hi > 0) & mask).float()
        # a tie counts once, at its first key (as amin/amax's subgradient would split it)
        e_min = e_min * (e_min.cumsum(-1) == 1)
        e_max = e_max * (e_max.cumsum(-1) == 1)
        a = p / d + w
        b = torch.stack([w, p * (1 - f) / d, w / d], -1)
        c = torch.stack([p, e_min, e_max], -1)
        return a, b, c

    return made(decl, _rows=rows, _jacobian_parts=parts)


def _uniform(decl: Spec):
    """Attention ablated: every visible key gets the weight 1/N, whatever the scores, so each query
    reads the mean of the values it may see. The positive control of a benchmark: where even this
    lands within the margin of softmax, the benchmark cannot see what attention does."""

    def pointwise(s, n):
        # 0 * s keeps the weights in the autograd graph (a zero gradient, as the derivative says);
        # the clamp keeps an infinite score from making 0 * inf
        return s.clamp(-1.0, 1.0) * 0.0 + 1.0 / n

    def grad(s, n):
        return torch.zeros_like(s)

    return made(decl, pointwise=pointwise, pointwise_grad=grad)


def _poly_cap(decl: Spec):
    """The paper's s^p / sqrt(N) with a hard norm cap: each row v is rescaled to
    v / max(1, ||v||_2), so every row has L2 norm at most 1 and the attention matrix
    ||A||_F <= sqrt(number of query rows) -- the softmax bound of Thm 4.1(a) imposed
    directly rather than through positivity and normalisation.  Rows already inside the
    unit ball are unchanged, so sign, non-normalisation and density of s^p are kept."""
    p = decl.params["p"]

    def terms(s, mask, n):
        x = _visible(s, mask)
        scale = torch.rsqrt(n)
        v = torch.where(mask, x.pow(p) * scale, _zero(s))
        dv = torch.where(mask, (p * x.pow(p - 1) if p > 1 else torch.ones_like(x)) * scale, _zero(s))
        norm = v.norm(dim=-1, keepdim=True)
        capped = norm > 1
        r = torch.where(capped, norm, torch.ones_like(norm))
        return v, dv, r, capped

    def rows(s, mask, n):
        v, _, r, _ = terms(s, mask, n)
        return v / r

    def parts(s, mask, n):
        v, dv, r, capped = terms(s, mask, n)
        # w = v / ||v|| on capped rows: J = diag(v'/r) - (v/r)(v v'/r^2)^T; else diag(v').
        b = torch.where(capped, v / r, _zero(s))
        return dv / r, b, v * dv / (r * r)

    return made(decl, _rows=rows, _jacobian_parts=parts)


def _poly_unit(decl: Spec):
    """s^p with every row rescaled to L2 norm exactly 1: v / ||v||_2 (any factor of the row,
    1/sqrt(N) included, cancels).  The norm bound of softmax's rows held with equality, not as
    the cap of ``poly_cap`` (which leaves rows inside the unit ball alone); sign and density of
    s^p are kept.  A row whose visible scores are all zero keeps zero weights."""
    p = decl.params["p"]

    def terms(s, mask):
        x = _visible(s, mask)
        v = torch.where(mask, x.pow(p), _zero(s))
        dv = torch.where(mask, p * x.pow(p - 1) if p > 1 else torch.ones_like(x), _zero(s))
        r = v.norm(dim=-1, keepdim=True).clamp_min(_TINY)
        return v, dv, r

    def rows(s, mask, n):
        v, _, r = terms(s, mask)
        return v / r

    def parts(s, mask, n):
        v, dv, r = terms(s, mask)
        # w = v / ||v||: J = diag(v'/r) - (v/r)(v v'/r^2)^T
        return dv / r, v / r, v * dv / (r * r)

    return made(decl, _rows=rows, _jacobian_parts=parts)


def _invsqrt(decl: Spec):
    """The survey article's "InvSqrt", x_i^-2 / sum_j x_j^-2, made well defined:
    (x_i^2 + e)^-1 / sum_j (x_j^2 + e)^-1 with e > 0 (default 1).  Not a published
    attention method and not a literature baseline.  The article's name says inverse
    square root but its formula is an inverse square; that formula is undefined at a
    zero score and, unlike the article's claim, favours scores near zero (nearly
    orthogonal q and k), not large ones -- which this form keeps.  With e = 1 the
    numerator is the Cauchy (Student-t, one degree of freedom) kernel."""
    ev = float(Fraction(decl.params.get("e", 1)))

    def terms(s, mask):
        x = _visible(s, mask)
        f = torch.where(mask, 1.0 / (x * x + ev), _zero(s))
        return f, -2 * x * f * f

    return _ratio(decl, terms)


def _polyak_sum(decl: Spec):
    """The survey article's "Polyak-Sum", x_i / sum_j x_j, made well defined as
    x_i / sum_j |x_j| (0 for a row of zero scores).  Not a published method (the name
    is unknown, and "average pooling" would be 1/N).  The article's denominator can
    vanish or change sign, giving unbounded weights; with |x| it cannot, the formula is
    unchanged on rows of non-negative scores, weights keep the sign of the scores, and
    each row's absolute weights sum to 1 (so ||A||_F <= sqrt(rows)).  Scale-invariant:
    it ignores how large the scores are, only their proportions matter."""

    def rows(s, mask, n):
        x = _visible(s, mask)
        return x / x.abs().sum(-1, keepdim=True).clamp_min(_TINY)

    def parts(s, mask, n):
        x = _visible(s, mask)
        z = x.abs().sum(-1, keepdim=True).clamp_min(_TINY)
        # d(x_i / S)/dx_j = delta_ij / S - (x_i / S) sign(x_j) / S
        return torch.where(mask, 1 / z, _zero(s)), x / z, torch.sign(x) / z

    return made(decl, _rows=rows, _jacobian_parts=parts)


def _poly_odd(decl: Spec):
    """s |s|^(p-1) / sqrt(N), or c * s |s|^(p-1) with ``c``: the power that keeps the sign of
    the score for every p.  For odd p it is the paper's s^p (``poly:p=P``); for even p it
    differs from s^p only in sign, so |weight| and the derivative p |s|^(p-1) are those of
    s^p, while a negative score gets a negative weight instead of a positive one."""
    p = decl.params["p"]
    scale = poly_scale(decl.params["c"])

    def pointwise(s, n):
        return (s * s.abs().pow(p - 1) if p > 1 else s) * scale(n)

    def grad(s, n):
        return (p * s.abs().pow(p - 1) if p > 1 else torch.ones_like(s)) * scale(n)

    return made(decl, pointwise=pointwise, pointwise_grad=grad)


def _poly_learned(decl: Spec):
    """x^p / sqrt(N) times a learnable factor per head (see :class:`polyattn.attention.Attend`,
    which holds the factor); at the factor's initial value 1 this is ``poly:p=P`` exactly."""
    pointwise, grad = poly_functions(decl.params["p"])
    return made(decl, pointwise=pointwise, pointwise_grad=grad)


#: family -> builder of the computation from the declared spec; :mod:`polyattn.activations` installs
#: them into its registry.
BUILDERS = {
    "power_softmax": _power_softmax,
    "taylor_softmax": _taylor_softmax,
    "periodic": _periodic,
    "relu2_n": _relu2_n,
    "relu2_norm": _relu2_norm,
    "sa_softmax": _sa_softmax,
    "sa_softmax_norm": _sa_softmax_norm,
    "poly_cap": _poly_cap,
    "poly_unit": _poly_unit,
    "uniform": _uniform,
    "invsqrt": _invsqrt,
    "polyak_sum": _polyak_sum,
    "poly_learned": _poly_learned,
    "poly_odd": _poly_odd,
}
