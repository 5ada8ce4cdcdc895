"""Chapter 02's section on Theorem 4.2 and Corollary 4.3: the exact moments, planted power laws
recovered as exponents, and the comparison at a given score scale."""
import math

import pandas as pd
import pytest
from support.pages import table_rows
from support.proofs_pages import check_figure

from polyattn import theory
from polyattn.measures import proofs_measurements
from polyattn.studies.proofs import product_powers as pw

# --- Theorem 4.2 ------------------------------------------------------------------------------


def test_the_moment_ratios_and_the_smallest_d_within_one_percent():
    rows = {r["p"]: r for r in table_rows(pw.moment_ratio_table((1, 3), (1, 64)))}
    assert rows[3]["D = 1"] == "15.000" and rows[1]["D = 64"] == "1.000"
    assert rows[1]["smallest D within 1%"] == "1" and rows[3]["smallest D within 1%"] == "602"
    numbers = pw.moment_numbers()
    assert numbers["t42_ratio_p3_d1"] == "15.0" and numbers["t42_mind_p3"] == "602"
    assert pw.exact_over_leading(3, 1) == pytest.approx(math.sqrt(15))


def _thm42_planted(preset: str) -> pd.DataFrame:
    """E||C^p||_F = N D^(p/2) (sqrt(N) D^(p/2) scaled), 1.1 times the bound, on the preset's grid."""
    P = theory.preset(preset)
    rows = []
    for n, D in proofs_measurements.thm42_sizes(P):
        for p in P.ps:
            for scaled in (False, True):
                mean = (math.sqrt(n) if scaled else n) * D ** (p / 2)
                rows.append({"N": n, "D": D, "p": p, "scaled": scaled, "mean": mean, "se": mean * 1e-3,
                             "ratio_to_bound": 1.1, "ratio_ci_lo": 1.05, "ratio_ci_hi": 1.15})
    return pd.DataFrame(rows)


def test_the_exponent_table_recovers_planted_power_laws():
    rows = {r["p"]: r for r in table_rows(pw.exponent_table(_thm42_planted("smoke"), "smoke"))}
    assert rows[3]["in N, unscaled (theorem: 1)"].startswith("1.000 ± 0.0")
    assert rows[3]["in N, scaled by 1/√N (theorem: 1/2)"].startswith("0.500 ± 0.0")
    assert rows[2]["in D (leading order: p/2)"].startswith("1.000 ± 0.0")


def test_the_bound_figure_draws_the_small_d_cells_and_the_stated_bound():
    fig = pw.bound_figure(_thm42_planted("smoke"), "smoke")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "the stated bound" in labels and "p = 1: √(exact / leading)" not in labels
    check_figure(fig)


# --- what 1/sqrt(N) buys ----------------------------------------------------------------------


def _score_frames():
    by_sigma = pd.DataFrame([{"activation": a, "sigma": s, "mean": v * s} for s in (0.1, 1.0)
                             for a, v in (("softmax", 0.12), ("poly:p=1", 1.0), ("poly:p=2", 1.7),
                                          ("poly:p=3", 4.0))])
    by_n = pd.DataFrame([{"activation": a, "N": n, "mean": n ** e, "se": 1e-3 * n ** e} for n in (8, 16, 32)
                         for a, e in (("softmax", 0.05), ("poly:p=1", 0.5), ("poly:p=2", 0.5), ("poly:p=3", 0.5),
                                      ("poly:p=3,c=1", 1.0))])
    return by_sigma, by_n


def test_the_score_scale_numbers_read_sigma_one_and_the_growth_in_n():
    by_sigma, by_n = _score_frames()
    out = pw.score_scale_numbers(by_sigma, by_n, "smoke")
    assert out["scale_sigma"] == "1" and out["scale_softmax"] == "0.120" and out["scale_poly3"] == "4.00"
    assert out["growth_poly3"] == "0.500" and out["growth_unscaled"] == "1.000"
    assert out["scale_cross_p3"] == f"{15 ** (-1 / 6):.3f}"


def test_the_score_scale_figure_names_each_activation():
    by_sigma, _ = _score_frames()
    fig = pw.score_scale_figure(by_sigma, "smoke")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "x³/√N" in labels and "softmax's bound" in labels
    check_figure(fig)
