"""Activation formulas set as maths, and Markdown tables that carry them."""
import re

import pytest

from polyattn import activations
from polyattn.display import markdown_table
from polyattn.formulas import math_formula
from polyattn.labels import CHARLM_VARIANTS

SPECS = sorted({*activations.BOOK_SPECS, *(spec for _, spec, _ in CHARLM_VARIANTS), "softmax:k=8", "poly_cap:p=3",
                "poly_learned:p=2", "poly_odd:p=2", "poly:p=1", "poly:p=3,c=1", "relu2_n", "taylor_softmax",
                "periodic", "power_softmax:p=2"})


@pytest.mark.parametrize("description,expected", [
    ("s^3 / sqrt(N)", r"$\frac{s^{3}}{\sqrt{N}}$"),
    ("1 * s^3", "$s^{3}$"),
    ("1/14 * s^3", r"$\tfrac{1}{14} \cdot s^{3}$"),
    ("s^1 / sqrt(N)", r"$\frac{s}{\sqrt{N}}$"),
    ("sigmoid(s - log N)", r"$\sigma(s - \log N)$"),
    ("relu(e^s - 1) / (sum_j |e^s_j - 1| + eps)", r"$\frac{\mathrm{relu}(e^{s} - 1)}{\sum_j |e^{s_j} - 1| + \epsilon}$"),
    ("v = s^3 / sqrt(N), each row rescaled to v / max(1, ||v||_2)",
     r"$v = \frac{s^{3}}{\sqrt{N}}$, each row rescaled to $\frac{v}{\max(1, \lVert v \rVert_2)}$"),
])
def test_descriptions_become_the_expected_maths(description, expected):
    assert math_formula(description) == expected


@pytest.mark.parametrize("spec", SPECS)
def test_every_registered_formula_is_maths_that_a_renderer_parses(spec):
    from matplotlib.mathtext import MathTextParser

    text = math_formula(activations.get(spec).description)
    formulas = re.findall(r"\$([^$]+)\$", text)
    assert formulas, text
    for f in formulas:
        assert "sqrt(" not in f and not re.search(r"(?<!\\)sum_j", f) and "^1" not in f, f
        # matplotlib's mathtext lacks \tfrac and \lVert; MathJax has both
        MathTextParser("path").parse("$" + f.replace(r"\tfrac", r"\frac").replace(r"\lVert", "|")
                                     .replace(r"\rVert", "|") + "$")


def test_html_cells_get_mathjax_delimiters():
    assert math_formula("s^3 / sqrt(N)", html=True) == r"\(\frac{s^{3}}{\sqrt{N}}\)"


def test_markdown_table_escapes_pipes_inside_cells():
    table = markdown_table(["a", "b"], [["$|s|$", 1]])
    assert table.splitlines() == ["| a | b |", "| --- | --- |", r"| $\|s\|$ | 1 |"]
