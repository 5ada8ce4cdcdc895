"""Activation specs without torch: the grammar, the canonical forms and what each spec declares.

An activation is named everywhere (tables, legends, records) by a short spec string such as
``poly:p=3,c=1/14``: a family, then ``key=value`` parameters.  This module knows every family
and the parameters it takes, reads a spec (:func:`parse`), writes it in its one canonical form
(:func:`canonical`: ``poly:p=3,c=2/28`` -> ``poly:p=3,c=1/14``), quotes the valid forms in every
error, and declares each spec's properties (:func:`declare`): whether its weights are
non-negative, whether each row sums to one, whether a weight depends on its own score only
(elementwise), and its formula.

:mod:`polyattn.activations` builds the computation on top of these declarations (its
:class:`~polyattn.activations.Activation` objects carry the same fields), so the analysis, the
claims and the display read names and properties from here without importing torch.

Parameters are exact fractions; a canonical spec writes them as fractions (``1/14``), except
SSMax's scale, which keeps its decimal form (``ssmax:s=0.43``).  Defaults are written out of
the canonical form: ``softmax:k=1`` is ``softmax`` and ``invsqrt:e=1`` is ``invsqrt``.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional


@dataclass(frozen=True)
class Spec:
    """What a spec declares: its canonical string, family and parameters (as the activation's
    builder receives them), the properties of its weights and its formula.  ``learned_scale``:
    the weights are multiplied by a learnable factor per head, held by the attention module."""

    spec: str
    family: str
    params: dict
    nonnegative: bool
    rows_sum_to_one: bool
    elementwise: bool
    description: str
    learned_scale: bool = False


@dataclass(frozen=True)
class Family:
    """A family of the grammar: its name, the parameters it accepts, the forms it adds to the
    valid-forms message, and ``declare(params) -> Spec`` (params as canonical strings); ``declare``
    is None for a family added with only a builder (:func:`polyattn.activations.register`), whose
    canonical form and properties only that builder knows.  ``decimal``: parameters are kept in
    decimal form (``0.43``) rather than as fractions (``43/100``)."""

    name: str
    params: frozenset
    forms: tuple
    declare: Optional[Callable[[dict], Spec]]
    decimal: bool = False


#: Every family by name, in the order their forms are listed.
FAMILIES: dict[str, Family] = {}
#: The forms every ValueError about a spec quotes (each family's, in registration order).
SPEC_FORMS: tuple[str, ...] = ()


def register(name: str, params, forms=(), declare: Optional[Callable[[dict], Spec]] = None,
             decimal: bool = False) -> Family:
    """Add a family to the grammar; ``forms`` extend the valid forms every ValueError quotes."""
    global SPEC_FORMS
    if name in FAMILIES:
        raise ValueError(f"activation family '{name}' is already registered")
    FAMILIES[name] = fam = Family(name, frozenset(params), tuple(forms), declare, decimal)
    SPEC_FORMS = SPEC_FORMS + fam.forms
    return fam


def valid_forms() -> str:
    """``valid forms: softmax; softmax:k=K; ...``: the tail of every error about a spec."""
    return "valid forms: " + "; ".join(f.split("  ")[0].strip() for f in SPEC_FORMS)


def _parse_number(text: str, spec: str) -> Fraction:
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"cannot read the number '{text}' in activation spec '{spec}'. " + valid_forms()) from None


def parse(spec: str) -> tuple[str, dict]:
    """Split ``'poly:p=3,c=1/14'`` into ``('poly', {'p': Fraction(3), 'c': Fraction(1, 14)})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an activation spec must be a non-empty string, got {spec!r}. " + valid_forms())
    family, _, rest = spec.strip().partition(":")
    family = family.strip()
    if family not in FAMILIES:
        raise ValueError(f"unknown activation '{family}' in spec '{spec}'. " + valid_forms())
    params = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, val = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise ValueError(f"malformed parameter '{item}' in activation spec '{spec}' (expected key=value). "
                                 + valid_forms())
            params[key] = _parse_number(val, spec)
    extra = set(params) - FAMILIES[family].params
    if extra:
        raise ValueError(f"activation '{family}' takes no parameter(s) {sorted(extra)} (spec '{spec}'). " + valid_forms())
    return family, params


def _fraction(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def _decimal(x: Fraction) -> str:
    return format(float(x), "g")


def param_strings(family: str, params: dict) -> dict:
    """The parsed parameters of a spec of ``family`` as the canonical strings its declaration and
    builder receive (``'1/14'``; SSMax's scale as ``'0.43'``)."""
    fmt = _decimal if FAMILIES[family].decimal else _fraction
    return {k: fmt(v) for k, v in params.items()}


_CACHE: dict[str, Spec] = {}


def is_declared(spec) -> bool:
    """Whether ``spec``'s family is declared here (every family but those added with only a builder);
    raises ``ValueError`` when ``spec`` is not a spec."""
    if isinstance(spec, Spec):
        return True
    return FAMILIES[parse(getattr(spec, "spec", spec))[0]].declare is not None


def declare(spec) -> Spec:
    """What ``spec`` declares (a :class:`Spec`; an object with a ``spec`` string, such as an
    Activation, is read by it); raises ``ValueError`` listing the valid forms when it is not a spec."""
    if isinstance(spec, Spec):
        return spec
    spec = getattr(spec, "spec", spec)
    if isinstance(spec, str) and spec in _CACHE:
        return _CACHE[spec]
    family, params = parse(spec)
    fam = FAMILIES[family]
    if fam.declare is None:
        raise ValueError(f"activation family '{family}' was added with only a builder: its canonical form and "
                         "properties come from polyattn.activations.get")
    _CACHE[spec] = out = fam.declare(param_strings(family, params))
    return out


def canonical(spec) -> str:
    """The canonical spec string (``'poly:p=3,c=2/28'`` -> ``'poly:p=3,c=1/14'``)."""
    return declare(spec).spec


def properties_table(specs=None) -> list[dict]:
    """One dict per spec (default :data:`BOOK_SPECS`): spec, formula and declared properties."""
    rows = []
    for spec in BOOK_SPECS if specs is None else specs:
        d = declare(spec)
        rows.append({"spec": d.spec, "formula": d.description, "non-negative": d.nonnegative,
                     "rows sum to 1": d.rows_sum_to_one, "elementwise": d.elementwise})
    return rows


# --- parameters ---------------------------------------------------------------------------------

def int_param(params: dict, key: str, family: str) -> int:
    """The integer parameter ``key`` of a spec of ``family``; a ValueError when it is missing or not an integer."""
    if key not in params:
        raise ValueError(f"'{family}' needs the parameter {key}, e.g. '{family}:{key}=2'. " + valid_forms())
    v = params[key]
    if Fraction(v).denominator != 1:
        raise ValueError(f"'{family}' needs an integer {key}, got {key}={v}. " + valid_forms())
    return int(Fraction(v))


def _power(params: dict, family: str, low: int = 1) -> int:
    """A family's integer power ``p`` >= ``low`` (the quoted message of the added families)."""
    v = int_param(params, "p", family)
    if v < low:
        raise ValueError(f"'{family}' needs p >= {low}, got p={v}. " + valid_forms())
    return v


def _fixed(spec: str, nonnegative: bool, rows_sum_to_one: bool, elementwise: bool, description: str):
    """The declaration of a family without parameters."""
    return lambda params: Spec(spec, spec, {}, nonnegative, rows_sum_to_one, elementwise, description)


# --- the families of the main registry -------------------------------------------------------------

def _softmax(params):
    k = params.get("k")
    kval = 1.0 if k is None else float(Fraction(k))
    if not kval > 0:
        raise ValueError(f"softmax needs k > 0, got k={k}. " + valid_forms())
    if kval == 1.0:
        return Spec("softmax", "softmax", {}, True, True, False, "exp(s) / sum_j exp(s_j)")
    return Spec(f"softmax:k={k}", "softmax", {"k": str(k)}, True, False, False, f"{k} * exp(s) / sum_j exp(s_j)")


def _poly(params):
    p = int_param(params, "p", "poly")
    if p < 1:
        raise ValueError(f"poly needs p >= 1, got p={p}. " + valid_forms())
    c = params.get("c")
    spec, desc = (f"poly:p={p}", f"s^{p} / sqrt(N)") if c is None else (f"poly:p={p},c={c}", f"{c} * s^{p}")
    return Spec(spec, "poly", {"p": p, "c": None if c is None else str(c)}, p % 2 == 0, False, True, desc)


def _ssmax(params):
    s = params.get("s")
    if s is None:
        raise ValueError("ssmax needs its scale, e.g. 'ssmax:s=0.43'. " + valid_forms())
    if not float(Fraction(s)) > 0:
        raise ValueError(f"ssmax needs s > 0, got s={s}. " + valid_forms())
    return Spec(f"ssmax:s={s}", "ssmax", {"s": str(s)}, True, True, False, f"softmax(({s} log N) * s)")


def _poly_norm(params):
    p = int_param(params, "p", "poly_norm")
    if p < 2 or p % 2:
        raise ValueError(f"poly_norm needs an even p >= 2 (so weights are non-negative), got p={p}. " + valid_forms())
    return Spec(f"poly_norm:p={p}", "poly_norm", {"p": p}, True, True, False, f"s^{p} / sum_j s_j^{p}")


register("softmax", {"k"}, ("softmax", "softmax:k=K         (K > 0; K * softmax)"), _softmax)
register("poly", {"p", "c"}, ("poly:p=P            (P a positive integer; scale 1/sqrt(N))",
                              "poly:p=P,c=C        (fixed scale C, e.g. c=1/14 or c=1)"), _poly)
register("relu_n", set(), ("relu_n",), _fixed("relu_n", True, False, True, "relu(s) / N"))
register("sigmoid", set(), ("sigmoid",), _fixed("sigmoid", True, False, True, "sigmoid(s - log N)"))
register("softpick", set(), ("softpick",),
         _fixed("softpick", True, False, False, "relu(e^s - 1) / (sum_j |e^s_j - 1| + eps)"))
register("ssmax", {"s"}, ("ssmax:s=S           (S a positive number, e.g. s=0.43)",), _ssmax, decimal=True)
register("poly_norm", {"p"}, ("poly_norm:p=P       (P a positive even integer)",), _poly_norm)


# --- the families of :mod:`polyattn.activations_extra` ---------------------------------------------------

def _ratio(spec, family, params, description):
    """Weights f(s) / sum_j f(s_j) with f >= 0: non-negative rows that sum to one."""
    return Spec(spec, family, params, True, True, False, description)


def _power_softmax(params):
    p = _power(params, "power_softmax")
    return _ratio(f"power_softmax:p={p}", "power_softmax", {"p": p}, f"|s|^{p} / sum_j |s_j|^{p}")


def _poly_cap(params):
    p = _power(params, "poly_cap")
    return Spec(f"poly_cap:p={p}", "poly_cap", {"p": p}, p % 2 == 0, False, False,
                f"v = s^{p} / sqrt(N), each row rescaled to v / max(1, ||v||_2)")


def _poly_unit(params):
    p = _power(params, "poly_unit")
    return Spec(f"poly_unit:p={p}", "poly_unit", {"p": p}, p % 2 == 0, False, False,
                f"v = s^{p}, each row rescaled to v / ||v||_2 (norm exactly 1)")


def _invsqrt(params):
    e = params.get("e")
    ev = 1.0 if e is None else float(Fraction(e))
    if not ev > 0:
        raise ValueError(f"invsqrt needs e > 0, got e={e}. " + valid_forms())
    spec = "invsqrt" if ev == 1.0 else f"invsqrt:e={e}"
    return _ratio(spec, "invsqrt", {} if ev == 1.0 else {"e": str(e)},
                  f"(s^2 + {e or 1})^-1 / sum_j (s_j^2 + {e or 1})^-1")


def _poly_odd(params):
    p = _power(params, "poly_odd")
    c = params.get("c")
    spec, desc = ((f"poly_odd:p={p}", f"s |s|^{p - 1} / sqrt(N)") if c is None
                  else (f"poly_odd:p={p},c={c}", f"{c} * s |s|^{p - 1}"))
    return Spec(spec, "poly_odd", {"p": p, "c": None if c is None else str(c)}, False, False, True, desc)


def _poly_learned(params):
    if "p" not in params:
        raise ValueError("poly_learned needs its power, e.g. 'poly_learned:p=2'. " + valid_forms())
    base = declare(f"poly:p={params['p']}")   # at the factor's initial value 1 it is poly:p=P
    p = int(base.params["p"])
    return Spec(f"poly_learned:p={p}", "poly_learned", {"p": p}, base.nonnegative, False, True,
                f"g_h * s^{p} / sqrt(N), g_h learned per head (initially 1)", learned_scale=True)


register("power_softmax", {"p"}, ("power_softmax:p=P   (P a positive integer; |s|^P)",), _power_softmax)
register("taylor_softmax", set(), ("taylor_softmax",),
         _fixed("taylor_softmax", True, True, False, "(1 + s + s^2/2) / sum_j (1 + s_j + s_j^2/2)"))
register("periodic", set(), ("periodic",),
         _fixed("periodic", True, True, False, "sin^2(s + pi/4) / sum_j sin^2(s_j + pi/4)"))
register("relu2_n", set(), ("relu2_n",), _fixed("relu2_n", True, False, True, "relu(s)^2 / N"))
register("relu2_norm", set(), ("relu2_norm",),
         _fixed("relu2_norm", True, True, False, "relu(s)^2 / sum_j relu(s_j)^2"))
register("sa_softmax", set(), ("sa_softmax",), _fixed("sa_softmax", False, False, False, "s * softmax(s)"))
register("sa_softmax_norm", set(), ("sa_softmax_norm",),
         _fixed("sa_softmax_norm", True, False, False,
                "(s - m)/(M - m) * softmax(s), m = min(s_min, 0), M = max(s_max, 0)"))
register("poly_cap", {"p"}, ("poly_cap:p=P        (P a positive integer)",), _poly_cap)
register("poly_unit", {"p"}, ("poly_unit:p=P       (P a positive integer; rows of s^P at norm 1)",), _poly_unit)
register("uniform", set(), ("uniform             (attention ablated: 1/N on every visible key)",),
         _fixed("uniform", True, True, True, "1 / N (attention ablated)"))
register("invsqrt", {"e"}, ("invsqrt or invsqrt:e=E  (E > 0)",), _invsqrt)
register("polyak_sum", set(), ("polyak_sum",), _fixed("polyak_sum", False, False, False, "s / sum_j |s_j|"))
register("poly_learned", {"p"},
         ("poly_learned:p=P    (P a positive integer; g_h s^P / sqrt(N), g_h learned per head)",), _poly_learned)
register("poly_odd", {"p", "c"}, ("poly_odd:p=P        (P a positive integer; s |s|^(P-1) / sqrt(N))",), _poly_odd)


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

#: The specs of :mod:`polyattn.activations_extra`'s families, plus the norm intervention on
#: softmax, in table order.
EXTRA_SPECS = (
    "softmax:k=2",
    "poly_cap:p=3",
    "poly_unit:p=3",
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
