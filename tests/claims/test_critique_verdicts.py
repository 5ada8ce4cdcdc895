"""The rules behind chapter 09's verdicts: each half of a two-part claim is needed."""
from __future__ import annotations

from polyattn.analysis import critique_verdicts as rules
from polyattn.book.verdict_rows import FORMS


def test_the_premise_of_the_norm_paradox_is_read_from_both_norms():
    assert rules.norm_premise(0.9, 0.8) == "lower"
    assert rules.norm_premise(0.15, 0.16) == "higher"
    assert rules.norm_premise(0.9, 0.1) == "mixed"


def test_the_norm_paradox_is_judged_on_whether_the_norms_explain_accuracy():
    assert rules.norm_explains(0.1, 0.8) == "explains"
    assert rules.norm_explains(-0.9, -0.05) == "explains"
    assert rules.norm_explains(-0.47, 0.35) == "does not explain"
    assert rules.norm_explains(-0.56, 0.10) == "undecided"
    assert rules.norm_explains(float("nan"), 0.1) == "undecided"
    assert rules.norms_explain_form(["does not explain", "does not explain"]) == "holds"
    assert rules.norms_explain_form(["does not explain", "explains"]) == "not supported"
    assert rules.norms_explain_form(["does not explain", "undecided"]) == "inconclusive at this power"
    assert rules.norms_explain_form([]) == "inconclusive at this power"


def test_scale_sensitivity_reads_the_intervals_against_the_margin():
    assert rules.scale_sensitivity_form([(-1.0, 3.0), (0.2, 1.5)], margin=1.0) == "holds"
    assert rules.scale_sensitivity_form([(-0.5, 0.5), (-0.9, 0.8)], margin=1.0) == "not supported"
    assert rules.scale_sensitivity_form([(-4.7, 3.3), (-0.5, 0.5)], margin=1.0) == "inconclusive at this power"


def test_powers_starve_the_gradient_only_with_both_halves():
    assert rules.trapped(0.02, 0.025) and not rules.trapped(0.02, 0.3)
    assert rules.exploded(80.0, 7.07) and not rules.exploded(20.0, 7.07)
    assert rules.powers_gradient_form(-1.0, 6e-8, any_exploded=True) == "holds"
    assert rules.powers_gradient_form(-1.0, 6e-8, any_exploded=False) == "mixed"
    assert rules.powers_gradient_form(-0.5, 6e-8, any_exploded=False) == "not supported"
    assert rules.powers_gradient_form(-1.0, 0.5, any_exploded=False) == "not supported"


def test_saturation_and_outliers():
    assert rules.saturation_form(0.0) == "holds only under its assumptions"
    assert rules.saturation_form(0.2) == "holds"
    assert rules.amplified(0.98, 0.17) and not rules.amplified(0.3, 0.17)
    assert rules.outlier_form([True, True], [True, True]) == "holds"
    assert rules.outlier_form([True, True, True], [False, True, False]) == "mixed"
    assert rules.outlier_form([False], [False]) == "not supported"


def test_every_form_is_a_verdict_form():
    forms = {rules.norms_explain_form(s) for s in (["explains"], ["does not explain"], ["undecided"])}
    forms |= {rules.scale_sensitivity_form(i, 1.0) for i in ([(0.1, 1)], [(-0.1, 0.1)], [(-3, 3)])}
    forms |= {rules.powers_gradient_form(r, q, e) for r in (-1, 0) for q in (0, 1) for e in (True, False)}
    forms |= {rules.saturation_form(s) for s in (0, 1)}
    forms |= {rules.outlier_form(a, b) for a in ([True], [False]) for b in ([True], [False])}
    assert forms <= set(FORMS)
