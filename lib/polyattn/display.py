"""Human names for what the library calls by short specs: activations, metrics, columns.

Specs stay in code and records; every table, legend, caption and generated sentence a reader
sees goes through :func:`name` (plain Unicode) or :func:`math` (MyST maths).  Numbers are
written by :mod:`polyattn.numbers`.
"""
from __future__ import annotations

import re
from fractions import Fraction

from . import specs
from .numbers import readable_numbers

#: Activation spec -> (plain Unicode name, MyST maths name).
_NAMES = {
    "softmax": ("softmax", "\\mathrm{softmax}"),
    "poly:p=3": ("x³/√N", "x^3/\\sqrt{N}"),
    "poly:p=3,c=1/14": ("x³/14", "x^3/14"),
    "poly:p=3,c=1": ("x³ (unscaled)", "x^3"),
    "poly:p=1": ("x/√N", "x/\\sqrt{N}"),
    "poly:p=2": ("x²/√N", "x^2/\\sqrt{N}"),
    "poly:p=1,c=1/14": ("x/14", "x/14"),
    "poly_learned:p=2": ("g·x²/√N (learned g)", "g_h\\,x^2/\\sqrt{N}"),
    "poly_cap:p=3": ("x³/√N, rows capped at norm 1", "x^3/\\sqrt{N}\\text{, capped}"),
    "poly_unit:p=3": ("x³, rows at norm 1", "x^3/\\|x^3\\|"),
    "relu_n": ("ReLU/N", "\\mathrm{ReLU}/N"),
    "relu2_n": ("ReLU²/N", "\\mathrm{ReLU}^2/N"),
    "relu2_norm": ("Poly2 (ReLU² / row sum)", "\\mathrm{ReLU}^2/\\textstyle\\sum"),
    "sigmoid": ("sigmoid", "\\sigma(s - \\log N)"),
    "softpick": ("Softpick", "\\mathrm{Softpick}"),
    "ssmax:s=0.43": ("SSMax", "\\mathrm{SSMax}"),
    "poly_norm:p=2": ("x² / row sum", "x^2/\\textstyle\\sum x^2"),
    "taylor_softmax": ("Taylor softmax", "\\text{Taylor softmax}"),
    "periodic": ("periodic (sin²)", "\\text{periodic}"),
    "power_softmax:p=2": ("Power-Softmax (p = 2)", "\\text{Power-Softmax } (p = 2)"),
    "sa_softmax": ("SA-Softmax", "\\text{SA-Softmax}"),
    "invsqrt": ("InvSqrt", "\\text{InvSqrt}"),
    "polyak_sum": ("Polyak-Sum", "\\text{Polyak-Sum}"),
    "uniform": ("uniform 1/N (attention ablated)", "1/N\\text{ (ablated)}"),
    "softmax:k=8": ("8·softmax", "8\\cdot\\mathrm{softmax}"),
    "softmax:k=1/8": ("softmax/8", "\\mathrm{softmax}/8"),
}

#: Column or metric name -> what a reader sees.
COLUMNS = {
    "test_acc": "test accuracy (%)", "mean_diff": "difference", "ci_low": "95% CI low", "ci_high": "95% CI high",
    "t_p": "p", "p_holm": "Holm p", "tost_p": "TOST p", "mde": "detectable effect", "n_pairs": "pairs",
    "fro_over_sqrt_n": "‖A‖_F/√N", "attn_fro_over_sqrt_n": "‖A‖_F/√N", "frac_negative": "share negative",
    "act_jac_fro": "‖∂A/∂S‖_F", "grad_attn_fro": "‖∂L/∂A‖_F", "test_bpc": "test bits/char",
    "val_bpc": "validation bits/char", "chi2_red": "reduced χ²", "n_rule": "what N counts",
}

_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def name(spec: str) -> str:
    """The plain-Unicode name of an activation spec (``poly:p=3`` -> ``x³/√N``)."""
    if spec in _NAMES:
        return _NAMES[spec][0]

    act = specs.declare(spec)
    if act.family == "poly":
        p = int(act.params["p"])
        power = "x" if p == 1 else "x" + str(p).translate(_SUPERSCRIPT)
        c = act.params.get("c")
        if c is None:
            return f"{power}/√N"
        frac = Fraction(c)
        if frac == 1:
            return f"{power} (unscaled)"
        return f"{power}/{frac.denominator}" if frac.numerator == 1 else f"{c}·{power}"
    if act.family == "softmax":
        return f"{act.params['k']}·softmax"
    if act.family == "power_softmax":
        return f"Power-Softmax (p = {act.params['p']})"
    if act.family == "poly_odd":
        p = int(act.params["p"])
        return f"x·|x|{str(p - 1).translate(_SUPERSCRIPT)}/√N (odd x{str(p).translate(_SUPERSCRIPT)})"
    if act.family == "sa_softmax_norm":
        return "SA-Softmax (normalised)"
    return act.spec


def label(text: str) -> str:
    """A grid's run label as a reader sees it: ``x^3/sqrt(i+1)`` -> ``x³/√(i+1)``,
    ``Poly2 (ReLU^2 / row sum)`` -> ``Poly2 (ReLU² / row sum)``; other text is left as it is.

    The labels stay ASCII in code and frames (they pair runs); figures and tables show this."""
    text = re.sub(r"sqrt\(([A-Za-z0-9]+)\)", r"√\1", str(text))
    text = text.replace("sqrt(", "√(")
    return re.sub(r"\^(\d+)", lambda m: m.group(1).translate(_SUPERSCRIPT), text)


def column(key: str) -> str:
    """A readable column name (the key itself when none is registered)."""
    return COLUMNS.get(key, key.replace("_", " "))


def typographic(text: str) -> str:
    """A generated sentence for readers: its numbers by :func:`polyattn.numbers.readable_numbers`,
    and α for alpha."""
    return readable_numbers(text).replace("alpha ", "α = ")


def breakable(text) -> str:
    """A long identifier (a timm model name) that may break after its underscores, so that it
    wraps inside a table cell instead of widening the table."""
    return str(text).replace("_", "_\u200b")


def markdown_table(header, rows) -> str:
    """A Markdown table (MyST renders its maths, which an HTML table's cells do not get):
    ``header`` the column names, ``rows`` sequences of cells; a ``|`` in a cell is escaped."""
    def esc(v):
        return str(v).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
