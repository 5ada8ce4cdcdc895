"""Chapter 02's section on critique 7: the power S^p read as a matrix power or elementwise.

    readings(preset, seed); readings_figure(...); readings_table(...); readings_numbers()
"""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ...measures import proofs_measurements
from .page import claim_numbers, formatted, legend, nowrap_table, pm_cell, power_color, stamp

#: The readings of the power S^p, as the page names them.
READING_NAMES = {"elementwise": "elementwise S∘ᵖ", "matrix": "matrix Sᵖ"}


@lru_cache(maxsize=8)
def readings(preset: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The stored survey of both readings of the power and its exponents in N
    (:func:`polyattn.measures.proofs_measurements.matrix_power_readings`); kept for the session."""
    survey = proofs_measurements.matrix_power_readings(preset, seed).table
    return survey, proofs_measurements.matrix_power_exponents(survey)


def readings_figure(survey: pd.DataFrame, preset: str, seed: int):
    """E‖φ(S)‖_F against N under both readings (queries and keys sharing X); p = 1 once, since the
    readings coincide there."""
    import matplotlib.pyplot as plt

    shared = survey[survey.setup == "shared X"]
    D, d, reps = int(shared.D.iloc[0]), int(shared.d.iloc[0]), int(shared.reps.iloc[0])
    fig, ax = plt.subplots(figsize=(6.4, 3.5))
    for p in sorted(shared.p.unique()):
        for reading, style, marker in (("elementwise", "--", "o"), ("matrix", "-", "s")):
            if p == 1 and reading == "matrix":
                continue
            sub = shared[(shared.reading == reading) & (shared.p == p)].sort_values("N")
            label = f"p = {p}, both readings" if p == 1 else f"p = {p}, {READING_NAMES[reading]}"
            ax.plot(sub.N, sub["mean"], ls=style, marker=marker, markersize=4, color=power_color(int(p)),
                    mfc="none" if reading == "elementwise" else power_color(int(p)), label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("E‖φ(S)‖_F, φ(S) scaled by 1/√N")
    ax.set_title(f"Two readings of the power (D = {D}, d = {d})")
    legend(ax, outside=True)
    stamp(ax, preset, f"{reps} draws per point, seed {seed}", loc="upper left")
    fig.tight_layout()
    return fig


def readings_table(survey: pd.DataFrame, fits: pd.DataFrame):
    """Per p: the exponent in N of each reading (queries and keys sharing X), the matrix reading's
    slope between the two largest N beside its large-N prediction, its exponent with independent
    factors, and the ratio of the two readings' norms at the largest N."""

    shared = survey[survey.setup == "shared X"]
    top = int(shared.N.max())
    means = shared.set_index(["reading", "p", "N"])["mean"]
    rows = []
    for p in sorted(int(x) for x in shared.p.unique()):
        e, m, ind = (fits.loc[("shared X", "elementwise", p)], fits.loc[("shared X", "matrix", p)],
                     fits.loc[("independent A, B", "matrix", p)])
        ratio = means[("matrix", p, top)] / means[("elementwise", p, top)]
        rows.append({"p": p, "elementwise": pm_cell(e.exponent, e.ci_lo, e.ci_hi, ".2f"),
                     "matrix": pm_cell(m.exponent, m.ci_lo, m.ci_hi, ".2f"),
                     "matrix, last slope (prediction)": f"{m.slope_at_largest_n:.2f} ({m.predicted:g})",
                     "matrix, independent A, B": pm_cell(ind.exponent, ind.ci_lo, ind.ci_hi, ".2f"),
                     "matrix ÷ elementwise": f"{ratio:,.0f}" if ratio >= 100 else f"{ratio:.3g}"})
    return nowrap_table(rows, f"Exponent in N ± 95% CI of the scaled norm under each reading of the power, N = "
                             f"{int(shared.N.min())} to {top:,}, queries and keys sharing X unless stated; last slope: "
                             f"between the two largest N; the ratio of the norms at N = {top:,}")


def readings_numbers() -> dict[str, str]:
    """The glued numbers of critique 7, from its finding."""
    n = claim_numbers("critique7_matrix_powers")
    formats = {"activation_vs_elementwise": "sci", "matrix_over_elementwise_at_n_hi": ",.0f", "n_hi": "d", "reps": "d",
               "matrix_slope_at_n_hi": ".2f", "matrix_predicted": ".1f", "matrix_chi2_red": ".0f"}
    formats.update({f"elementwise_exponent_p{p}": ".2f" for p in (1, 2, 3)}, matrix_exponent_p3=".2f")
    return formatted(n, formats, prefix="mp_")
