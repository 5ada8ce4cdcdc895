"""Chapter 02's measured claim on critique 7 (``critique7_matrix_powers``): the power S^p read as a
matrix power or elementwise, against the stored survey of both readings
(:func:`.proofs_measurements.matrix_power_readings`).  It decides its form by the thresholds named
here.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import pandas as pd

from ..claims.spec import Finding
from .proofs_measurements import GROWTH_TOLERANCE, matrix_power_exponents, matrix_power_readings

#: Critique 7: the experiments' activation "is" the elementwise power when the two agree to this
#: relative difference (its scale factor is float32).
ACTIVATION_AGREEMENT = 1e-5
#: Critique 7: the matrix reading's exponent is clear of the elementwise one when the lower end of
#: its 95% interval lies more than this above the upper end of the elementwise interval.
READINGS_APART = 0.25


def critique7_numbers(survey: pd.DataFrame, check: dict) -> dict:
    """The growth exponents of both readings and the activation check."""
    fits = matrix_power_exponents(survey)
    ps = sorted(int(p) for p in survey.p.unique())
    ns = sorted(int(x) for x in survey.N.unique())
    top = max(ps)
    shared = survey[survey.setup == "shared X"].set_index(["reading", "p", "N"])["mean"]
    numbers = {"n_lo": ns[0], "n_hi": ns[-1], "D": int(survey.D.iloc[0]), "d": int(survey.d.iloc[0]),
               "reps": int(survey.reps.iloc[0]), "p": top,
               "activation_n": int(check["activation_n"]),
               "activation_vs_elementwise": float(check["activation_vs_elementwise"]),
               "matrix_over_activation": float(check["matrix_over_activation"]),
               "matrix_over_elementwise_at_n_hi": float(shared[("matrix", top, ns[-1])] / shared[("elementwise", top, ns[-1])])}
    for p in ps:
        for reading in ("elementwise", "matrix"):
            f = fits.loc[("shared X", reading, p)]
            numbers[f"{reading}_exponent_p{p}"] = float(f.exponent)
            numbers[f"{reading}_ci_lo_p{p}"] = float(f.ci_lo)
            numbers[f"{reading}_ci_hi_p{p}"] = float(f.ci_hi)
    mat = fits.loc[("shared X", "matrix", top)]
    ind = fits.loc[("independent A, B", "matrix", top)]
    numbers.update({"matrix_slope_at_n_hi": float(mat.slope_at_largest_n), "matrix_predicted": float(mat.predicted),
                    "matrix_chi2_red": float(mat.chi2_red), "independent_matrix_exponent": float(ind.exponent),
                    "independent_matrix_predicted": float(ind.predicted),
                    "elementwise_sqrt_n": all(abs(numbers[f"elementwise_exponent_p{p}"] - 0.5) < GROWTH_TOLERANCE
                                              for p in ps),
                    "readings_apart": all(numbers[f"matrix_ci_lo_p{p}"] > numbers[f"elementwise_ci_hi_p{p}"] + READINGS_APART
                                          for p in ps if p > 1)})
    return numbers


def critique7_finding(n: dict) -> Finding:
    """Not supported when the proofs' elementwise reading grows like √N for every p, the matrix
    reading's exponent is clear of it for every p ≥ 2, and the experiments' activation is the
    elementwise power; inconclusive at this scale when the readings are not apart; mixed otherwise."""
    same_as_experiments = n["activation_vs_elementwise"] < ACTIVATION_AGREEMENT
    if n["elementwise_sqrt_n"] and n["readings_apart"] and same_as_experiments:
        form = "not supported"
    elif not n["readings_apart"]:
        form = "inconclusive at this scale"
    else:
        form = "mixed"
    p = n["p"]
    summary = ("The proofs raise each entry to the power $p$"
               + (", as the experiments' $s^p/\\sqrt{N}$ does" if same_as_experiments
                  else ", but the experiments' activation does not match the elementwise power")
               + f"; read as a matrix power, $\\lVert S^{p}\\rVert_F/\\sqrt{{N}}$ would grow like "
               f"$N^{{{n[f'matrix_exponent_p{p}']:.2f}}}$ over $N = {n['n_lo']}$ to ${n['n_hi']}$ (slope "
               f"${n['matrix_slope_at_n_hi']:.2f}$ between the two largest $N$, prediction $p - 1/2$) instead of "
               f"$N^{{{n[f'elementwise_exponent_p{p}']:.2f}}}$ elementwise"
               + (", so the stated $O(\\sqrt{N})$ holds only for the elementwise reading."
                  if n["readings_apart"] and n["elementwise_sqrt_n"] else "."))
    return Finding(form, summary, n)


def critique7_matrix_powers(root: Optional[Path] = None) -> Finding:
    """Critique 7 (matrix against elementwise powers) against the book preset's survey."""
    m = matrix_power_readings("book", root=root)
    return critique7_finding(critique7_numbers(m.table, m.numbers))
