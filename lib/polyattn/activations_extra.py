"""More attention activations, registered into :mod:`polyattn.activations` by its import.

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
    invsqrt              (s^2 + e)^-1 / sum_j (s_j^2 + e)^-1, e = 1 (or invsqrt:e=E)
    polyak_sum           s / sum_j |s_j|
    poly_odd:p=P         s |s|^(P-1) / sqrt(N)  (or c * s |s|^(P-1) with c=C): the odd extension of s^P
    poly_learned:p=P     g_h s^P / sqrt(N), g_h a learnable factor per head initialised at 1 (the
                         book's parametrisation of a "learned scale": the scale g_h / sqrt(N) starts
                         at 1/sqrt(N); the paper's own parametrisation is unpublished)

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

from . import activations as _A
from .activations import Activation, _masked_fill_min, _valid_forms

_TINY = 1e-30
_QUARTER_PI = math.pi / 4


def _zero(s):
    return torch.zeros((), dtype=s.dtype, device=s.device)


def _visible(s, mask):
    # Scores at masked keys may be huge or -inf; none of them may reach a formula.
    return torch.where(mask, s, _zero(s))


def _ratio(spec, family, params, nonneg, desc, terms):
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

    return Activation(spec, family, params, nonneg, nonneg, False, desc, _rows=rows, _jacobian_parts=parts)


def _int_param(params, key, family, low=1):
    v = _A._int_param(params, key, family)
    if v < low:
        raise ValueError(f"'{family}' needs {key} >= {low}, got {key}={v}. " + _valid_forms())
    return v


def _power_softmax(params):
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
    p = _int_param(params, "p", "power_softmax")

    def terms(s, mask):
        x = _visible(s, mask).abs()
        m = x.amax(-1, keepdim=True).clamp_min(_TINY)
        r = x / m
        f = r.pow(p)
        g = p * torch.sign(_visible(s, mask)) * (r.pow(p - 1) if p > 1 else torch.ones_like(r)) / m
        return f, torch.where(mask, g, _zero(s))

    return _ratio(f"power_softmax:p={p}", "power_softmax", {"p": p}, True,
                  f"|s|^{p} / sum_j |s_j|^{p}", terms)


def _taylor_softmax(params):
    """Second-order Taylor softmax (de Brebisson & Vincent, "An Exploration of Softmax
    Alternatives Belonging to the Spherical Loss Family", ICLR 2016, arXiv:1511.05042):
    exp is replaced by its order-2 Taylor polynomial 1 + x + x^2/2 and normalised per row.
    1 + x + x^2/2 = ((x + 1)^2 + 1) / 2 >= 1/2, so every weight is positive and no row
    normaliser can vanish; weights grow only quadratically, unlike exp."""

    def terms(s, mask):
        x = _visible(s, mask)
        f = torch.where(mask, 1 + x + 0.5 * x * x, _zero(s))
        return f, torch.where(mask, 1 + x, _zero(s))

    return _ratio("taylor_softmax", "taylor_softmax", {}, True, "(1 + s + s^2/2) / sum_j (1 + s_j + s_j^2/2)", terms)


def _periodic(params):
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

    return _ratio("periodic", "periodic", {}, True, "sin^2(s + pi/4) / sum_j sin^2(s_j + pi/4)", terms)


def _relu2_n(params):
    """relu(s)^2 / N: the squared-ReLU member of the activations Wortsman et al.
    ("Replacing softmax with ReLU in Vision Transformers", arXiv:2309.08586) divide by
    the sequence length; elementwise, so it has the blocked fast path."""
    return Activation("relu2_n", "relu2_n", {}, True, False, True, "relu(s)^2 / N",
                      pointwise=lambda s, n: torch.relu(s).square() / n,
                      pointwise_grad=lambda s, n: 2 * torch.relu(s) / n)


def _relu2_norm(params):
    """relu(s)^2 / sum_j relu(s_j)^2: the survey article's "Poly2" (no published source;
    polynomial attention with row normalisation, cf. the even-degree normalised forms of
    PolySketchFormer, arXiv:2310.01655).  A row with no positive score would be 0/0;
    here it gets zero weights (the query attends to nothing)."""

    def terms(s, mask):
        r = torch.relu(_visible(s, mask))
        return r * r, 2 * r

    return _ratio("relu2_norm", "relu2_norm", {}, True, "relu(s)^2 / sum_j relu(s_j)^2", terms)


def _sa_softmax(params):
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

    return Activation("sa_softmax", "sa_softmax", {}, False, False, False, "s * softmax(s)",
                      _rows=rows, _jacobian_parts=parts)


def _sa_softmax_norm(params):
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

    return Activation("sa_softmax_norm", "sa_softmax_norm", {}, True, False, False,
                      "(s - m)/(M - m) * softmax(s), m = min(s_min, 0), M = max(s_max, 0)",
                      _rows=rows, _jacobian_parts=parts)


def _uniform(params):
    """Attention ablated: every visible key gets the weight 1/N, whatever the scores, so each query
    reads the mean of the values it may see. The positive control of a benchmark: where even this
    lands within the margin of softmax, the benchmark cannot see what attention does."""

    def pointwise(s, n):
        # 0 * s keeps the weights in the autograd graph (a zero gradient, as the derivative says);
        # the clamp keeps an infinite score from making 0 * inf
        return s.clamp(-1.0, 1.0) * 0.0 + 1.0 / n

    def grad(s, n):
        return torch.zeros_like(s)

    return Activation("uniform", "uniform", {}, True, True, True, "1 / N (attention ablated)",
                      pointwise=pointwise, pointwise_grad=grad)


def _poly_cap(params):
    """The paper's s^p / sqrt(N) with a hard norm cap: each row v is rescaled to
    v / max(1, ||v||_2), so every row has L2 norm at most 1 and the attention matrix
    ||A||_F <= sqrt(number of query rows) -- the softmax bound of Thm 4.1(a) imposed
    directly rather than through positivity and normalisation.  Rows already inside the
    unit ball are unchanged, so sign, non-normalisation and density of s^p are kept."""
    p = _int_param(params, "p", "poly_cap")

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

    return Activation(f"poly_cap:p={p}", "poly_cap", {"p": p}, p % 2 == 0, False, False,
                      f"v = s^{p} / sqrt(N), each row rescaled to v / max(1, ||v||_2)",
                      _rows=rows, _jacobian_parts=parts)


def _invsqrt(params):
    """The survey article's "InvSqrt", x_i^-2 / sum_j x_j^-2, made well defined:
    (x_i^2 + e)^-1 / sum_j (x_j^2 + e)^-1 with e > 0 (default 1).  Not a published
    attention method and not a literature baseline.  The article's name says inverse
    square root but its formula is an inverse square; that formula is undefined at a
    zero score and, unlike the article's claim, favours scores near zero (nearly
    orthogonal q and k), not large ones -- which this form keeps.  With e = 1 the
    numerator is the Cauchy (Student-t, one degree of freedom) kernel."""
    e = params.get("e")
    ev = 1.0 if e is None else float(Fraction(e))
    if not ev > 0:
        raise ValueError(f"invsqrt needs e > 0, got e={e}. " + _valid_forms())
    spec = "invsqrt" if ev == 1.0 else f"invsqrt:e={e}"

    def terms(s, mask):
        x = _visible(s, mask)
        f = torch.where(mask, 1.0 / (x * x + ev), _zero(s))
        return f, -2 * x * f * f

    return _ratio(spec, "invsqrt", {} if ev == 1.0 else {"e": str(e)}, True,
                  f"(s^2 + {e or 1})^-1 / sum_j (s_j^2 + {e or 1})^-1", terms)


def _polyak_sum(params):
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

    return Activation("polyak_sum", "polyak_sum", {}, False, False, False, "s / sum_j |s_j|",
                      _rows=rows, _jacobian_parts=parts)


def _poly_odd(params):
    """s |s|^(p-1) / sqrt(N), or c * s |s|^(p-1) with ``c``: the power that keeps the sign of
    the score for every p.  For odd p it is the paper's s^p (``poly:p=P``); for even p it
    differs from s^p only in sign, so |weight| and the derivative p |s|^(p-1) are those of
    s^p, while a negative score gets a negative weight instead of a positive one."""
    p = _int_param(params, "p", "poly_odd")
    c = params.get("c")
    spec, desc = ((f"poly_odd:p={p}", f"s |s|^{p - 1} / sqrt(N)") if c is None
                  else (f"poly_odd:p={p},c={c}", f"{c} * s |s|^{p - 1}"))
    scale = _A.poly_scale(c)

    def pointwise(s, n):
        return (s * s.abs().pow(p - 1) if p > 1 else s) * scale(n)

    def grad(s, n):
        return (p * s.abs().pow(p - 1) if p > 1 else torch.ones_like(s)) * scale(n)

    return Activation(spec, "poly_odd", {"p": p, "c": None if c is None else str(c)}, False, False, True, desc,
                      pointwise=pointwise, pointwise_grad=grad)


def _poly_learned(params):
    """x^p / sqrt(N) times a learnable factor per head (see :class:`polyattn.attention.Attend`,
    which holds the factor); at the factor's initial value 1 this is ``poly:p=P`` exactly."""
    base = _A.get(f"poly:p={params.get('p', 'missing')}") if "p" in params else None
    if base is None:
        raise ValueError("poly_learned needs its power, e.g. 'poly_learned:p=2'. " + _valid_forms())
    p = int(base.params["p"])
    return Activation(f"poly_learned:p={p}", "poly_learned", {"p": p}, base.nonnegative, False, True,
                      f"g_h * s^{p} / sqrt(N), g_h learned per head (initially 1)",
                      pointwise=base.pointwise, pointwise_grad=base.pointwise_grad, learned_scale=True)


def install():
    """Register this module's families into :mod:`polyattn.activations` (which calls it)."""
    _A.register("power_softmax", _power_softmax, {"p"}, ("power_softmax:p=P   (P a positive integer; |s|^P)",))
    _A.register("taylor_softmax", _taylor_softmax, set(), ("taylor_softmax",))
    _A.register("periodic", _periodic, set(), ("periodic",))
    _A.register("relu2_n", _relu2_n, set(), ("relu2_n",))
    _A.register("relu2_norm", _relu2_norm, set(), ("relu2_norm",))
    _A.register("sa_softmax", _sa_softmax, set(), ("sa_softmax",))
    _A.register("sa_softmax_norm", _sa_softmax_norm, set(), ("sa_softmax_norm",))
    _A.register("poly_cap", _poly_cap, {"p"}, ("poly_cap:p=P        (P a positive integer)",))
    _A.register("uniform", _uniform, set(), ("uniform             (attention ablated: 1/N on every visible key)",))
    _A.register("invsqrt", _invsqrt, {"e"}, ("invsqrt or invsqrt:e=E  (E > 0)",))
    _A.register("polyak_sum", _polyak_sum, set(), ("polyak_sum",))
    _A.register("poly_learned", _poly_learned, {"p"},
                ("poly_learned:p=P    (P a positive integer; g_h s^P / sqrt(N), g_h learned per head)",))
    _A.register("poly_odd", _poly_odd, {"p", "c"}, ("poly_odd:p=P        (P a positive integer; s |s|^(P-1) / sqrt(N))",))


#: The specs this module adds, plus the norm intervention on softmax, in table order.
EXTRA_SPECS = (
    "softmax:k=2",
    "poly_cap:p=3",
    "power_softmax:p=2",
    "power_softmax:p=3",
    "taylor_softmax",
    "periodic",
    "relu2_n",
    "relu2_norm",
    "sa_softmax",
    "sa_softmax_norm",
    "invsqrt",
    "polyak_sum",
    "poly_odd:p=2",
    "poly_odd:p=4",
    "poly_learned:p=2",
    "uniform",
)

if "power_softmax" not in _A._BUILDERS:
    install()
