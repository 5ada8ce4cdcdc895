"""Chapter 02's tables, figures and glued values (the paper's theorems, checked).

The computations are :mod:`polyattn.theory`'s and :mod:`polyattn.model_norms`'; the verdicts and
the numbers of their sentences come from :mod:`polyattn.measures.theorems`, whose stored
measurements the page's tables and figures read as well.  This module shapes what the page shows:

    seed_of(seeds, preset); setting_values(preset, seed); glue_all(numbers)   # the page's setup
    claim_numbers("thm41_1")                                                  # a finding's numbers
    softmax_survey(preset, seed); gap_table(...)                              # Theorem 4.1 (1)
    plain_ascent(...); jacobian_figure(...)                                   # Theorem 4.1 (2)
    moment_ratio_table(); bound_figure(...); exponent_table(...)              # Theorem 4.2
    score_scale(...); score_scale_figure(...)                                 # what 1/sqrt(N) buys
    readings(...); readings_figure(...); readings_table(...)                  # critique 7
    qgrad_difference(seed); thm44_survey(...); thm44_ratio_table(...)         # Theorem 4.4
    correlated(...); correlated_table(...); factors_table(); model_norms_table(...)  # assumptions
    findings_table()                                                          # the closing summary

Each section of the page asks for its data again (the loaders keep their frames for the session),
so no section reads another section's variables.  Every ``*_numbers`` function returns the
section's glued values as text, formatted as the prose reads them.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from .. import theory
from ..measures import theorems
from ..numbers import scientific

#: Labels of the figures (points): at least the book's minimum.
FONT = 9
#: The paper's power (every preset's grid contains it).
P_MAX = theorems.P_MAX
#: The claims this chapter delivers, in the page's order, with the evidence each rests on.
CLAIMS = (
    ("thm41_1", "Thm 4.1 (1)", "proof; adversarial ascent"),
    ("thm41_2", "Thm 4.1 (2)", "sharp constant proved; ascent with restarts"),
    ("thm42_43", "Thm 4.2 and Cor 4.3", "exact moments; Monte Carlo; fits in N"),
    ("critique7_matrix_powers", "Critique 7 (matrix powers)", "the proofs; Monte Carlo of both readings"),
    ("thm44_45", "Thm 4.4 and Cor 4.5", "exact p = 1 norm; Monte Carlo; fits in N"),
)
#: The kinds of logits of the softmax survey, as the gap table names them.
GAP_KINDS = {"random": "random logits", "peaked": "peaked logits", "one-hot": "one-hot rows",
             "adversarial (norm)": "adversarial ascent"}
#: The kinds of the Jacobian figure, as its legend names them.
JACOBIAN_KINDS = {"random": "random logits (largest)", "peaked": "peaked logits (largest)",
                  "adversarial (Jacobian)": "ascent with restarts", "two halves": "rows (½, ½, 0, …)"}
#: The activations compared on Gaussian scores of a given scale, and the one added for growth in N.
SCALE_SPECS = ("softmax", "poly:p=1", "poly:p=2", "poly:p=3")
UNSCALED_CUBE = "poly:p=3,c=1"
#: The activations whose norms the page measures on a micro ViT at initialisation (and trained).
MODEL_SPECS = ("softmax", "poly:p=1", "poly:p=3", "poly:p=3,c=1/14", UNSCALED_CUBE)
#: The readings of the power S^p, as the page names them.
READING_NAMES = {"elementwise": "elementwise S∘ᵖ", "matrix": "matrix Sᵖ"}


# --- setup and glued values -------------------------------------------------------------------


def seed_of(seeds, preset: str) -> int:
    """The page's seed: the theory preset's default for ``None``, else the first of ``seeds``."""
    return theory.resolve_seed(seeds, theory.preset(preset))


def setting_values(preset: str, seed: int) -> dict[str, str]:
    """The preset and seed the page states."""
    return {"preset": preset, "seed": str(seed)}


def formatted(numbers: Mapping[str, object], formats: Mapping[str, str], prefix: str = "") -> dict[str, str]:
    """``{prefix + key: numbers[key] formatted by its spec}`` for each key of ``formats``; a string
    is kept as it is, an integer spec (``d``) reads with thousands separators and ``sci`` in
    scientific notation with two digits (1.0 × 10⁻⁵)."""
    out = {}
    for key, spec in formats.items():
        if key not in numbers:
            raise KeyError(f"no number {key!r} to format; there are {', '.join(sorted(numbers))}")
        value = numbers[key]
        if isinstance(value, str):
            out[prefix + key] = value
        elif spec == "d":
            out[prefix + key] = f"{int(value):,}"
        elif spec == "sci":
            out[prefix + key] = scientific(float(value))
        else:
            out[prefix + key] = format(float(value), spec)
    return out


def glue_all(values: Mapping[str, str], prefix: str = "ch02_") -> None:
    """Glue each value as ``<prefix><key>`` for the page's ``{glue:text}`` references (the glue
    writes powers of ten and minus signs as a reader reads them)."""
    from ..book.deliver import glue

    for key, value in values.items():
        glue(f"{prefix}{key}", value, display=False)


@lru_cache(maxsize=None)
def _finding(claim_id: str):
    from ..book.deliver import deliver

    return deliver(claim_id, glue_it=False).verdict


def claim_numbers(claim_id: str) -> dict:
    """The numbers of a delivered claim's finding (the stored measurement at the book preset)."""
    return dict(_finding(claim_id).numbers)


def _styled(rows: list[dict], caption: str, nowrap: str = "td"):
    """:func:`polyattn.book.deliver.styled` with the cells ``nowrap`` selects kept on one line, so
    that a number and its interval or power of ten never break across lines."""
    from ..book.deliver import styled

    return styled(rows, caption).set_table_styles([{"selector": nowrap, "props": "white-space: nowrap"}],
                                                  overwrite=False)


def _legend(ax, outside: bool = False, **kw):
    where = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0)) if outside else {}
    return ax.legend(frameon=False, fontsize=FONT, **{**where, **kw})


def _stamp(target, preset: str, text: str, loc: str = "lower right"):
    from .. import plotting

    plotting.stamp(target, preset, text, loc=loc).set_fontsize(FONT)


def power_color(p: int) -> str:
    """Powers p are drawn in the colours of the scaled polynomials x^p/sqrt(N)."""
    from .. import plotting

    return plotting.activation_color(f"poly:p={p}")


def pm_cell(estimate: float, low: float, high: float, fmt: str = ".3f") -> str:
    """An estimate with the half-width of its symmetric 95% interval to as many decimals, "0.505 ±
    0.009", "12.0 ± 0.3" (the page's intervals are normal or Student-t intervals, symmetric about
    the estimate)."""
    from ..analysis.tables import number_cell

    shown = number_cell(estimate, fmt)
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return f"{shown} ± {(high - low) / 2:.{decimals}f}"


# --- Theorem 4.1 (1): the softmax norm ----------------------------------------------------------


@lru_cache(maxsize=8)
def softmax_survey(preset: str, seed: int) -> pd.DataFrame:
    """The stored softmax survey (:func:`polyattn.measures.theorems.softmax_survey`), the one the
    verdicts on Theorem 4.1 read; kept for the session (do not modify the frame)."""
    return theorems.softmax_survey(preset, seed).table


def gap_cell(gap: float) -> str:
    """A gap 1 − ‖softmax(A)‖_F/√N for a table: 0 below float64's reach, – when missing."""
    if gap != gap:
        return "–"
    return "0" if abs(gap) < theorems.MACHINE_PRECISION_GAP else format(gap, ".3g")


def gap_table(survey: pd.DataFrame, preset: str, every: int = 2):
    """The smallest gap per kind of logits at every ``every``-th N of the survey (– where no matrix
    of that kind was evaluated)."""

    P = theory.preset(preset)
    smallest = survey.pivot_table(index="N", columns="kind", values="fro_gap", aggfunc="min")
    rows = [{"N": int(n), **{label: gap_cell(smallest.loc[n].get(kind, float("nan")))
                             for kind, label in GAP_KINDS.items()}} for n in smallest.index[::every]]
    return _styled(rows, f"Smallest gap 1 − ‖softmax(A)‖_F/√N at every {'other ' if every == 2 else ''}N (preset "
                         f"{preset}; per N {P.softmax_reps} random logit matrices of standard deviation 1, 8 peaked, "
                         f"one-hot rows with a logit gap of 10⁴ and an Adam ascent of {P.ascent_steps} steps in float64; "
                         "0: below 10⁻¹², float64's reach; –: no ascent)")


# --- Theorem 4.1 (2): the Jacobian of softmax ---------------------------------------------------


@lru_cache(maxsize=8)
def plain_ascent(preset: str, seed: int) -> dict:
    """One Adam ascent on the Jacobian norm from standard-normal logits, without restarts, at
    N = 64 (or the preset's largest N below it); kept for the session."""
    P = theory.preset(preset)
    n = 64 if 64 in P.softmax_ns else max(P.softmax_ns)
    return theory.plain_ascent_softmax_jacobian(n, P.ascent_steps, seed)


def jacobian_figure(survey: pd.DataFrame, plain: dict, preset: str, seed: int):
    """Left: ‖J‖_F/√N against N per kind of logits, with the sharp constant and the paper's.
    Right: the per-row squared norms after the plain ascent, with the k-uniform values."""
    import matplotlib.pyplot as plt

    from .. import plotting

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.0), gridspec_kw={"width_ratios": [3, 2]})
    ax = axes[0]
    for (kind, label), style in zip(JACOBIAN_KINDS.items(), ("o-", "s-", "^-", "x--")):
        sub = survey[survey.kind == kind].groupby("N").jac_over_sqrt_n.max()
        ax.plot(sub.index, sub.values, style, markersize=4, label=label)
    ax.axhline(theorems.SHARP_CONSTANT, color="black", lw=1, ls="--", label="sharp bound 1/2")
    ax.axhline(theorems.PAPER_CONSTANT, color="black", lw=1, ls=":", label="paper's bound 2")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N")
    ax.set_ylabel("‖J_softmax(A)‖_F / √N")
    ax.set_title("Softmax Jacobian against the two constants")
    _stamp(ax, preset, f"seed {seed}", loc="lower left")
    ax = axes[1]
    ax.hist(plain["row_values"], bins=np.linspace(0.15, 0.2525, 83), color=plotting.activation_color("softmax"))
    ax.set_ylim(0, ax.get_ylim()[1] * 1.12)
    for k in (2, 3, 4, 5):
        ax.axvline(theory.k_uniform_row_value(k), color="grey", lw=0.8, ls=":", zorder=0)
        ax.text(theory.k_uniform_row_value(k), ax.get_ylim()[1] * 0.95, f"k = {k}", fontsize=FONT, ha="center",
                va="top", bbox={"fc": "white", "ec": "none", "pad": 1})
    ax.set_xlabel("per-row ‖J‖_F² after one plain ascent")
    ax.set_ylabel("rows")
    ax.set_title(f"Plain ascent stalls at k-uniform rows (N = {plain['n']})")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False, fontsize=FONT)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def jacobian_numbers(plain: dict, jacrev_difference: float) -> dict[str, str]:
    """The glued numbers of Theorem 4.1 (2): its finding's, the plain ascent's and the largest
    relative difference of the closed form from the full Jacobian."""
    n = claim_numbers("thm41_2")
    n["worst_gap_to_half"] = theorems.SHARP_CONSTANT - n["adversarial_min_ratio"]
    n.update({"plain_n": plain["n"], "plain_ratio": plain["ratio64"], "plain_k3": plain["frac_rows_near_k_uniform"][3],
              "jacrev_difference": jacrev_difference})
    return formatted(n, {
        "ascent_restarts": "d", "adversarial_max_ratio": ".6f", "adversarial_min_ratio": ".6f",
        "worst_gap_to_half": ".2g", "random_max_ratio": ".3f", "paper_over_sharp": ".0f", "matrices_above_sharp": "d",
        "eq42_one_hot_lhs": ".0f", "eq42_one_hot_rhs": ".0f", "plain_n": "d", "plain_ratio": ".4f", "plain_k3": ".0%",
        "jacrev_difference": "sci"},
        prefix="t41b_")


# --- Theorem 4.2 and Corollary 4.3 --------------------------------------------------------------


def moment_ratio_table(ps: Sequence[int] = (1, 2, 3, 4), ds: Sequence[int] = (1, 2, 4, 16, 64, 768),
                       tolerance: float = 0.01):
    """The exact second moment over the leading term (2p − 1)!! Dᵖ per p and D, and the smallest D
    at which the ratio falls within ``tolerance`` of 1."""

    ratio = theory.moment_ratio_table(ps, ds).pivot(index="p", columns="D", values="ratio")
    rows = [{"p": int(p), **{f"D = {d}": f"{ratio.loc[p, d]:.3f}" for d in ratio.columns},
             f"smallest D within {tolerance:.0%}": f"{theory.min_d_within(int(p), tolerance):,}"} for p in ratio.index]
    return _styled(rows, "Exact second moment over the leading term (2p − 1)!! Dᵖ (exact arithmetic, no sampling)")


def moment_numbers() -> dict[str, str]:
    """The glued ratios of the exact moment to its leading term (p = 3 at D = 1, 64, 768) and the
    smallest D at which it is within 1% (p = 3)."""
    r = theory.moment_ratio_table([P_MAX], [1, 64, 768]).set_index("D")["ratio"]
    return {"t42_ratio_p3_d1": f"{r[1]:.1f}", "t42_ratio_p3_d64": f"{r[64]:.3f}",
            "t42_ratio_p3_d768": f"{r[768]:.4f}", "t42_mind_p3": f"{theory.min_d_within(P_MAX, 0.01):,}"}


@lru_cache(maxsize=8)
def thm42_survey(preset: str, seed: int) -> pd.DataFrame:
    """The stored Monte Carlo of Theorem 4.2 (:func:`polyattn.measures.theorems.thm42_grid`); kept
    for the session (do not modify the frame)."""
    return theorems.thm42_grid(preset, seed).table


def exact_over_leading(p: int, D) -> np.ndarray:
    """√(exact moment / leading term), the factor by which the exact-moment bound exceeds the stated one."""
    D = np.asarray(D, dtype=float)
    return np.sqrt(np.prod([1 + 2 * k / D for k in range(p)], axis=0))


def bound_figure(mc: pd.DataFrame, preset: str):
    """The Monte Carlo mean of ‖C∘ᵖ‖_F over the stated bound against D at the preset's large N,
    with its 95% interval, beside √(exact / leading) for p ≥ 2."""
    import matplotlib.pyplot as plt

    P = theory.preset(preset)
    small = mc[(mc.N == P.thm42_n_large) & ~mc.scaled.astype(bool)]
    fig, ax = plt.subplots(figsize=(6.4, 3.3))
    for p in P.ps:
        sub = small[small.p == p].sort_values("D")
        ax.errorbar(sub.D, sub.ratio_to_bound, yerr=[sub.ratio_to_bound - sub.ratio_ci_lo,
                                                     sub.ratio_ci_hi - sub.ratio_to_bound],
                    fmt="o", color=power_color(p), capsize=3, label=f"p = {p}: Monte Carlo")
        if p > 1:
            dd = np.geomspace(sub.D.min(), sub.D.max(), 50)
            ax.plot(dd, exact_over_leading(p, dd), color=power_color(p), lw=1, label=f"p = {p}: √(exact / leading)")
    ax.axhline(1, color="black", lw=1, ls="--", label="the stated bound")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("D")
    ax.set_ylabel("E‖C∘ᵖ‖_F / stated bound")
    ax.set_title(f"Over the stated bound at N = {P.thm42_n_large}")
    _legend(ax, outside=True)
    _stamp(ax, preset, f"{P.thm42_reps} draws, 95% CI", loc="upper right")
    fig.tight_layout()
    return fig


def exponent_table(mc: pd.DataFrame, preset: str):
    """The fitted exponents of E‖C∘ᵖ‖_F per p: in N at the grid's fixed D, unscaled and scaled by
    1/√N, and in D at its fixed N, each beside the exponent the theorem predicts."""

    P = theory.preset(preset)
    fits_n, fits_d = theorems.thm42_exponents(mc, P)
    fn = {(int(r.p), bool(r.scaled)): r for r in fits_n.itertuples()}
    fd = {int(r.p): r for r in fits_d.itertuples()}
    rows = [{"p": p,
             "in N, unscaled (theorem: 1)": pm_cell(fn[(p, False)].exponent, fn[(p, False)].ci_lo, fn[(p, False)].ci_hi),
             "in N, scaled by 1/√N (theorem: 1/2)": pm_cell(fn[(p, True)].exponent, fn[(p, True)].ci_lo, fn[(p, True)].ci_hi),
             "in D (leading order: p/2)": pm_cell(fd[p].exponent, fd[p].ci_lo, fd[p].ci_hi)}
            for p in sorted(fd)]
    return _styled(rows, f"Fitted exponents of E‖C∘ᵖ‖_F ± 95% CI: in N at D = {P.thm42_d_at_n}, in D at "
                        f"N = {P.thm42_n_at_d} (weighted least squares on log-log axes, interval widened by the "
                        f"reduced χ² when above 1; preset {preset}, {P.thm42_reps} draws per point)")


@lru_cache(maxsize=8)
def score_scale(preset: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """E‖φ(S)‖_F/√N against the score scale σ at the preset's N (:data:`SCALE_SPECS`) and E‖φ(S)‖_F
    against N at σ = 1 (with the unscaled cube); kept for the session."""
    P = theory.preset(preset)
    by_sigma = theory.score_scale_survey(list(SCALE_SPECS), P.sigma_grid, P.sigma_n, P.sigma_reps, seed)
    by_n = theory.norm_vs_n_survey(list(SCALE_SPECS) + [UNSCALED_CUBE], P.thm42_ns, 1.0, P.sigma_reps, seed)
    return by_sigma, by_n


def score_scale_figure(by_sigma: pd.DataFrame, preset: str):
    """E‖φ(S)‖_F/√N against the score scale σ per activation, softmax's bound 1 dashed and the σ at
    which the scaled cube meets it dotted."""
    import matplotlib.pyplot as plt

    from .. import plotting
    from ..display import name

    P = theory.preset(preset)
    fig, ax = plt.subplots(figsize=(6.4, 3.3))
    plotting.line_plot(by_sigma, "sigma", "mean", ax=ax, band=None, logx=True, logy=True, legend=False,
                       order=list(SCALE_SPECS))
    for line in ax.get_lines():
        line.set_label(name(line.get_label()))
    ax.axhline(1.0, color="black", lw=1, ls="--", label="softmax's bound")
    ax.axvline(theory.sigma_at_softmax_bound(P_MAX), color=power_color(P_MAX), lw=0.8, ls=":",
               label=f"σ where {name(f'poly:p={P_MAX}')} meets it")
    ax.set_xlabel("score standard deviation σ")
    ax.set_ylabel("E‖φ(S)‖_F / √N")
    ax.set_title(f"Against the score scale (N = {P.sigma_n})")
    _legend(ax, outside=True)
    _stamp(ax, preset, f"{P.sigma_reps} draws per point")
    fig.tight_layout()
    return fig


def growth_fits(by_n: pd.DataFrame) -> pd.DataFrame:
    """Power-law fits of E‖φ(S)‖_F against N per activation, indexed by activation."""
    return theory.fit_exponents(by_n, "N", ["activation"]).set_index("activation")


def score_scale_numbers(by_sigma: pd.DataFrame, by_n: pd.DataFrame, preset: str) -> dict[str, str]:
    """The glued numbers of the score-scale comparison: the ratios at σ = 1 (or the largest σ of the
    preset), the σ at which x³/√N meets softmax's bound, and the exponents in N of the scaled and
    the unscaled cube."""
    P = theory.preset(preset)
    sigma = 1.0 if 1.0 in P.sigma_grid else P.sigma_grid[-1]
    at = by_sigma[by_sigma.sigma == sigma].groupby("activation")["mean"].mean()
    fits = growth_fits(by_n).exponent
    return {"scale_n": f"{P.sigma_n:,}", "scale_sigma": f"{sigma:g}", "scale_softmax": f"{at['softmax']:.3f}",
            "scale_poly1": f"{at['poly:p=1']:.3f}", "scale_poly3": f"{at[f'poly:p={P_MAX}']:.2f}",
            "scale_cross_p3": f"{theory.sigma_at_softmax_bound(P_MAX):.3f}",
            "growth_poly3": f"{fits[f'poly:p={P_MAX}']:.3f}",
            "growth_unscaled": f"{fits[UNSCALED_CUBE]:.3f}"}


# --- critique 7: matrix or elementwise powers ---------------------------------------------------


@lru_cache(maxsize=8)
def readings(preset: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The stored survey of both readings of the power and its exponents in N
    (:func:`polyattn.measures.theorems.matrix_power_readings`); kept for the session."""
    survey = theorems.matrix_power_readings(preset, seed).table
    return survey, theorems.matrix_power_exponents(survey)


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
    _legend(ax, outside=True)
    _stamp(ax, preset, f"{reps} draws per point, seed {seed}", loc="upper left")
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
    return _styled(rows, f"Exponent in N ± 95% CI of the scaled norm under each reading of the power, N = "
                        f"{int(shared.N.min())} to {top:,}, queries and keys sharing X unless stated; last slope: "
                        f"between the two largest N; the ratio of the norms at N = {top:,}")


def readings_numbers() -> dict[str, str]:
    """The glued numbers of critique 7, from its finding."""
    n = claim_numbers("critique7_matrix_powers")
    formats = {"activation_vs_elementwise": "sci", "matrix_over_elementwise_at_n_hi": ",.0f", "n_hi": "d", "reps": "d",
               "matrix_slope_at_n_hi": ".2f", "matrix_predicted": ".1f", "matrix_chi2_red": ".0f"}
    formats.update({f"elementwise_exponent_p{p}": ".2f" for p in (1, 2, 3)}, matrix_exponent_p3=".2f")
    return formatted(n, formats, prefix="mp_")


# --- Theorem 4.4 and Corollary 4.5 --------------------------------------------------------------


def qgrad_difference(seed: int, ps: Sequence[int] = (1, 2, 3)) -> float:
    """The largest relative difference between the closed-form gradient norm and the full Jacobian
    from autograd, over ``ps``, scaled and not, on one small draw of X, Q and K (float64)."""
    import torch

    g = theory.generator(seed, "qgrad-check")
    X, Q, K = (torch.randn(*s, generator=g, dtype=torch.float64) for s in ((6, 5), (5, 3), (5, 3)))
    diffs = []
    for p in ps:
        for scaled in (False, True):
            a = theory.qgrad_fro_norm(X, Q, K, p, scaled)
            b = theory.qgrad_fro_norm_autograd(X, Q, K, p, scaled)
            diffs.append(float(abs(a - b) / b))
    return max(diffs)


@lru_cache(maxsize=8)
def thm44_survey(preset: str, seed: int) -> pd.DataFrame:
    """The stored Monte Carlo of Theorem 4.4 (:func:`polyattn.measures.theorems.thm44_grid`); kept
    for the session (do not modify the frame)."""
    return theorems.thm44_grid(preset, seed).table


def thm44_ratio_table(mc: pd.DataFrame, preset: str, seed: int):
    """The unscaled Monte Carlo mean over the bound (p = 1) or its leading order (p > 1), per
    (D, d, p) and N."""

    P = theory.preset(preset)
    ratio = mc[~mc.scaled.astype(bool)].pivot_table(index=["D", "d", "p"], columns="N", values="ratio_to_bound")
    dims = sorted({(int(D), int(d)) for D, d, _ in ratio.index})
    several_D = len({D for D, _ in dims}) > 1
    rows = [{"cell": (f"D = {D}, " if several_D else "") + f"d = {d}, p = {p}",
             **{f"N = {n}": f"{ratio.loc[(D, d, p), n]:.3f}" for n in ratio.columns}} for D, d, p in ratio.index]
    shown = ", ".join(f"({D}, {d})" for D, d in dims)
    return _styled(rows, f"Mean gradient norm over Theorem 4.4's bound (p = 1) or its leading order (p > 1), unscaled "
                        f"((D, d) = {shown}; {P.thm44_reps} draws per cell, σ_x = 1, σ_w = 1/√D; preset {preset}, "
                        f"seed {seed})")


def thm44_numbers(qgrad: float) -> dict[str, str]:
    """The glued numbers of Theorem 4.4 and Corollary 4.5, from its finding, and the largest
    difference of the closed-form gradient norm from autograd's."""
    n = claim_numbers("thm44_45")
    n["qgrad_difference"] = qgrad
    return formatted(n, {
        "qgrad_difference": "sci", "p1_max_ratio": ".4f", "p1_max_z": ".1f", "p1_cells": "d", "pmax_max_ratio": ".2f",
        "pmax_min_ratio": ".2f", "d_small": "d", "exponent_p1": ".3f", "exponent_p1_scaled": ".3f",
        "exponent_p1_scaled_ci_lo": ".3f", "exponent_p1_scaled_ci_hi": ".3f", "p": "d"}, prefix="t44_")


# --- where the assumptions fail -----------------------------------------------------------------


@lru_cache(maxsize=8)
def correlated(preset: str, seed: int) -> pd.DataFrame:
    """The stored survey of queries and keys sharing X (:func:`polyattn.measures.theorems.correlated_qk`);
    kept for the session (do not modify the frame)."""
    return theorems.correlated_qk(preset, seed).table


def middle_rho(rhos: Sequence[float]) -> float:
    """The correlation the page quotes between 0 and 1: 0.5 when the grid has it, else its first
    value strictly between, else 1."""
    inner = [r for r in rhos if 0 < r < 1]
    return 0.5 if 0.5 in inner else (inner[0] if inner else 1.0)


def correlated_table(corr: pd.DataFrame, preset: str, seed: int):
    """Per p: the norm over Theorem 4.2's prediction for independent A and B, for queries and keys
    sharing X at ρ = 0, at :func:`middle_rho` and at K = Q, and the diagonal model at K = Q."""

    P = theory.preset(preset)
    n, D, d = P.corr_sizes
    mid = middle_rho(P.corr_rhos)
    shared = corr[corr.setup == "shared X"].set_index(["rho", "p"])
    independent = corr[corr.setup == "independent A, B"].set_index("p")

    def cell(r):
        return pm_cell(r.ratio, r.ratio_ci_lo, r.ratio_ci_hi, "#.3g")

    rows = [{"p": p, "independent A, B": cell(independent.loc[p]), "shared X, ρ = 0": cell(shared.loc[(0.0, p)]),
             **({f"ρ = {mid:g}": cell(shared.loc[(mid, p)])} if mid < 1 else {}),
             "K = Q (ρ = 1)": cell(shared.loc[(1.0, p)]),
             "K = Q, diagonal model": f"{theory.qk_equal_prediction(n, d, p):.3g}"} for p in P.ps]
    return _styled(rows, f"E‖C∘ᵖ‖_F over Theorem 4.2's prediction ± 95% CI (N = {n}, D = {D}, d = {d}; "
                        f"{P.corr_reps} draws per cell; preset {preset}, seed {seed})")


def correlated_numbers(corr: pd.DataFrame, preset: str) -> dict[str, str]:
    """The glued numbers of the correlation section: the sizes, and for p = 3 the ratios at ρ = 0, at
    the middle ρ and at K = Q, and the diagonal model's."""
    P = theory.preset(preset)
    n, D, d = P.corr_sizes
    ratio = corr[corr.setup == "shared X"].set_index(["rho", "p"]).ratio
    mid = middle_rho(P.corr_rhos)
    out = {"corr_sizes": f"({n}, {D}, {d})", "corr_rho_mid": f"{mid:g}", "corr_mid_p3": f"{ratio[(mid, P_MAX)]:.2f}",
           "corr_k_eq_q_p3": f"{ratio[(1.0, P_MAX)]:.1f}",
           "corr_model_p3": f"{theory.qk_equal_prediction(n, d, P_MAX):.1f}"}
    out["corr_rho0_p3"] = f"{ratio[(0.0, P_MAX)]:.3f}"
    return out


#: The sizes of :data:`polyattn.theory.MODEL_SIZES` the factors table shows.
FACTOR_MODELS = (theorems.VIT_B, "ViT-Ti (Tiny-ImageNet, patch 4)", "micro ViT (this book)")


def factors_table(p: int = P_MAX, models: Sequence[str] = FACTOR_MODELS):
    """The two factors of Corollary 4.3's bound at the sizes ``models`` of
    :data:`polyattn.theory.MODEL_SIZES`, with the scores scaled by 1/√d and read without it."""
    from ..analysis.tables import number_cell

    factors = theory.bound_factors_table([p], {m: theory.MODEL_SIZES[m] for m in models})
    rows = [{"model": r.model.split(" (")[0] if "micro" not in r.model else "micro ViT", "N, D, d": f"{r.N}, {r.D}, {r.d_head}",
             "√N": f"{r.n_factor:.3g}", "D factor, ÷ √d": f"{r.dfactor_scaled_scores:.3g}",
             "unscaled, D = width | d": f"{number_cell(r.dfactor_model)} | {number_cell(r.dfactor_head)}",
             "√N reaches it at N =": f"{number_cell(r.n_crossover_model, '.2g')} | {number_cell(r.n_crossover_head, '.2g')}"}
            for r in factors.itertuples()]
    from ..book.deliver import styled

    # single numbers stay on one line; the two-number cells ("a | b") may break at their bar
    table = styled(rows, f"The two factors of Corollary 4.3's bound for p = {p} (unit-variance factors, exact "
                         "arithmetic): the D factor with the scores divided by √d, and without it, D the width | d")
    return table.set_properties(subset=["N, D, d", "√N", "D factor, ÷ √d"], **{"white-space": "nowrap"})


def factor_numbers() -> dict[str, str]:
    """The glued ViT-B factors, from the finding on Theorem 4.2."""
    n = claim_numbers("thm42_43")
    return formatted(n, {"vit_b_n_factor": ".0f", "vit_b_d_factor_scaled": ".2f", "vit_b_d_factor_scaled_exact": ".2f",
                         "vit_b_crossover_n_scaled": ".0f", "vit_b_d_factor_unscaled_over_n_factor": ".3g",
                         "vit_b_crossover_n_unscaled": ".2g"})


def head_dim_numbers(n: int = 196, D: int = 768, ds: tuple[int, int] = (64, 768)) -> dict[str, str]:
    """The factor by which reading d as the model width instead of the head dimension moves the bound."""
    heads = theory.head_dim_table((1, P_MAX), n=n, D=D, ds=ds).set_index(["p", "d"]).relative_to_first_d
    return {"head_factor_p1": f"{heads[(1, ds[1])]:.2f}", "head_factor_p3": f"{heads[(P_MAX, ds[1])]:.1f}"}


@lru_cache(maxsize=8)
def init_norms(preset: str, seed: int) -> pd.DataFrame:
    """:func:`polyattn.model_norms.init_model_norms` of :data:`MODEL_SPECS` on the micro ViT; kept
    for the session."""
    from .. import model_norms

    return model_norms.init_model_norms(list(MODEL_SPECS), seed, size="micro", batch=theory.preset(preset).vit_batch)


def trained_norms(preset: str, results: Optional[str] = None) -> pd.DataFrame:
    """The norms at the last probed step of the finished Table 1 training records stored at
    ``preset`` (:func:`polyattn.model_norms.trained_norms_from_records`); empty when none is stored."""
    from .. import model_norms
    from ..results import results_root

    directory = results if results is not None else str(results_root(preset) / "vit_table1")
    return model_norms.trained_norms_from_records(directory)


def model_norms_table(init: pd.DataFrame, trained: pd.DataFrame, preset: str):
    """Per activation: ‖A‖_F/√N of the micro ViT at initialisation, the std of its scores and the
    i.i.d.-Gaussian prediction from it; and, when trained records are stored, the same norm at their
    last probed step (mean and largest over records, layers and heads)."""
    from ..analysis.tables import number_cell
    from ..display import name

    at_init = init.groupby("activation", sort=False)[["fro_over_sqrt_n", "score_std", "gaussian_over_sqrt_n"]].mean()
    trained_stats = None
    if not trained.empty:
        t = trained[trained.metric == "attn_fro_over_sqrt_n"]
        trained_stats = t.groupby("activation")["value"].agg(["mean", "max"])
    rows = []
    for a, r in at_init.iterrows():
        row = {"activation": name(a), "at init": number_cell(r.fro_over_sqrt_n),
               "score std at init": number_cell(r.score_std),
               "Gaussian prediction": number_cell(r.gaussian_over_sqrt_n)}
        if trained_stats is not None:
            row["trained, mean (largest)"] = (
                f"{number_cell(trained_stats.loc[a, 'mean'])} ({number_cell(trained_stats.loc[a, 'max'])})"
                if a in trained_stats.index else "no stored run")
        rows.append(row)
    n = int(init.N.iloc[0])
    caption = (f"‖A‖_F/√N of a micro ViT (N = {n}; mean over 4 layers × 4 heads) at initialisation on "
               f"{theory.preset(preset).vit_batch} standard-normal images, beside its prediction for Gaussian scores of "
               "the measured std")
    if trained_stats is not None:
        caption += f"; trained: {trained.record.nunique()} finished Table 1 records (preset {preset}), last probed step"
    return _styled(rows, caption)


def model_norms_numbers(init: pd.DataFrame, trained: pd.DataFrame) -> dict[str, str]:
    """The glued numbers of the initialisation section: the score scale, the norms of softmax and
    x³/√N, the measured x³/√N norm over its Gaussian prediction, and the number of trained records
    read."""
    from ..analysis.tables import number_cell

    mean = init.groupby("activation")[["fro_over_sqrt_n", "score_std"]].mean()
    cube = init[init.activation == f"poly:p={P_MAX}"]
    return {"init_n": f"{int(init.N.iloc[0])}", "init_score_std": f"{init.score_std.mean():.2g}",
            "init_softmax": f"{mean.loc['softmax', 'fro_over_sqrt_n']:.3f}",
            "init_poly3": number_cell(float(mean.loc[f"poly:p={P_MAX}", "fro_over_sqrt_n"]), ".2g"),
            "init_poly3_over_prediction": f"{(cube.fro_over_sqrt_n / cube.gaussian_over_sqrt_n).mean():.2f}",
            "trained_records": f"{trained.record.nunique() if not trained.empty else 0:,}"}


# --- what the chapter found ---------------------------------------------------------------------


def findings_table():
    """Each result of the paper's section 4 with the form its finding takes and the evidence."""
    from ..book.deliver import styled

    return styled([{"result": label, "verdict": _finding(cid).form, "evidence": evidence}
                   for cid, label, evidence in CLAIMS],
                  "Each result of the paper's section 4, as this chapter's computations judge it (book preset)")
