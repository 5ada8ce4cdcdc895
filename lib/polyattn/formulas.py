"""An activation's formula as maths for a page: the registry's plain-text description
(``s^3 / sqrt(N)``, ``relu(e^s - 1) / (sum_j |e^s_j - 1| + eps)``) rewritten as MyST/LaTeX.

    math_formula("s^3 / sqrt(N)")   # '$\\frac{s^{3}}{\\sqrt{N}}$'

Descriptions with words ("each row rescaled to ...") keep the words and set each formula
between them in maths.  The registry keeps the plain text, which reads the same in code,
logs and plots without a maths renderer.
"""
from __future__ import annotations

import re

#: Names written as functions in the descriptions, and how they are set.
_FUNCTIONS = (("softmax", r"\mathrm{softmax}"), ("sigmoid", r"\sigma"), ("relu", r"\mathrm{relu}"),
              ("exp", r"\exp"), ("max", r"\max"), ("sin", r"\sin"), ("log", r"\log"))


def _atoms(text: str) -> str:
    """Symbols, functions and powers of one formula (no top-level fraction)."""
    t = text
    t = re.sub(r"sqrt\(([^()]*)\)", r"\\sqrt{\1}", t)
    t = re.sub(r"\|\|([^|]+)\|\|_2", r"\\lVert \1 \\rVert_2", t)
    t = re.sub(r"\bsum_j\b", r"\\sum_j", t)
    for name, tex in _FUNCTIONS:
        t = re.sub(rf"\b{name}\b", lambda _m, tex=tex: tex, t)
    t = re.sub(r"\bpi\b", r"\\pi", t)
    t = re.sub(r"\beps\b", r"\\epsilon", t)
    t = re.sub(r"e\^s_j", r"e^{s_j}", t)
    t = re.sub(r"e\^s\b", r"e^{s}", t)
    t = re.sub(r"\^(-?\d+)", r"^{\1}", t)
    t = re.sub(r"\b1 \* ", "", t)                  # the unscaled cube: 1 * s^3 is s^3
    t = t.replace(" * ", r" \cdot ")
    t = re.sub(r"(?<![\w}])(\d+)/(\d+)(?!\w)", r"\\tfrac{\1}{\2}", t)
    t = t.replace("^{1}", "")                     # s^1 is s
    return t


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside parentheses."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i += len(sep)
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _unwrap(text: str) -> str:
    """``text`` without one pair of parentheses around all of it ("(a + b)" -> "a + b")."""
    text = text.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for ch in text[1:-1]:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:                  # "(a) / (b)": the outer parentheses are not one pair
            return text
    return text[1:-1]


def _tex(formula: str) -> str:
    """One formula as LaTeX: ``a = b`` side by side, a top-level ``a / b`` as a fraction."""
    sides = _split_top(formula, " = ")
    if len(sides) > 1:
        return " = ".join(_tex(side) for side in sides)
    parts = _split_top(formula, " / ")
    if len(parts) == 2:
        return rf"\frac{{{_atoms(_unwrap(parts[0]))}}}{{{_atoms(_unwrap(parts[1]))}}}"
    return _atoms(formula)


def math_formula(description: str, html: bool = False) -> str:
    """The description with each formula in ``$...$`` (Markdown), or in ``\\(...\\)`` for an HTML
    table, which MathJax typesets in a cell's output (``html=True``); words stay words."""
    o, c = ("\\(", "\\)") if html else ("$", "$")
    out = []
    for piece in _split_top(description, ", "):
        lead = re.match(r"^((?:[a-z]+ )+to) (.+)$", piece)          # "each row rescaled to <formula>"
        tail = re.match(r"^(\S+) ((?:learned|initially)\b.*)$", piece)  # "<symbol> learned per head (...)"
        if lead:
            out.append(f"{lead.group(1)} {o}{_tex(lead.group(2))}{c}")
        elif tail:
            out.append(f"{o}{_tex(tail.group(1))}{c} {tail.group(2)}")
        else:
            out.append(f"{o}{_tex(piece)}{c}")
    return ", ".join(out)
