"""Chapter 02's section on Theorem 4.1: the softmax norm (1) and the Jacobian of softmax (2).

    softmax_survey(preset, seed); gap_table(...)                              # Theorem 4.1 (1)
    plain_ascent(...); jacobian_figure(...); jacobian_numbers(...)            # Theorem 4.1 (2)
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from ... import theory
from ...measures import proofs_measurements
from ...measures.proofs_softmax import MACHINE_PRECISION_GAP, PAPER_CONSTANT, SHARP_CONSTANT
from .page import FONT, claim_numbers, formatted, nowrap_table, stamp

#: The kinds of logits of the softmax survey, as the gap table names them.
GAP_KINDS = {"random": "random logits", "peaked": "peaked logits", "one-hot": "one-hot rows",
             "adversarial (norm)": "adversarial ascent"}
#: The kinds of the Jacobian figure, as its legend names them.
JACOBIAN_KINDS = {"random": "random logits (largest)", "peaked": "peaked logits (largest)",
                  "adversarial (Jacobian)": "ascent with restarts", "two halves": "rows (½, ½, 0, …)"}


# --- Theorem 4.1 (1): the softmax norm ----------------------------------------------------------


@lru_cache(maxsize=8)
def softmax_survey(preset: str, seed: int) -> pd.DataFrame:
    """The stored softmax survey (:func:`polyattn.measures.proofs_measurements.softmax_survey`), the one the
    verdicts on Theorem 4.1 read; kept for the session (do not modify the frame)."""
    return proofs_measurements.softmax_survey(preset, seed).table


def gap_cell(gap: float) -> str:
    """A gap 1 − ‖softmax(A)‖_F/√N for a table: 0 below float64's reach, – when missing."""
    if gap != gap:
        return "–"
    return "0" if abs(gap) < MACHINE_PRECISION_GAP else format(gap, ".3g")


def gap_table(survey: pd.DataFrame, preset: str, every: int = 2):
    """The smallest gap per kind of logits at every ``every``-th N of the survey (– where no matrix
    of that kind was evaluated)."""

    P = theory.preset(preset)
    smallest = survey.pivot_table(index="N", columns="kind", values="fro_gap", aggfunc="min")
    rows = [{"N": int(n), **{label: gap_cell(smallest.loc[n].get(kind, float("nan")))
                             for kind, label in GAP_KINDS.items()}} for n in smallest.index[::every]]
    return nowrap_table(rows, f"Smallest gap 1 − ‖softmax(A)‖_F/√N at every {'other ' if every == 2 else ''}N (preset "
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

    from ... import plotting

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.0), gridspec_kw={"width_ratios": [3, 2]})
    ax = axes[0]
    for (kind, label), style in zip(JACOBIAN_KINDS.items(), ("o-", "s-", "^-", "x--")):
        sub = survey[survey.kind == kind].groupby("N").jac_over_sqrt_n.max()
        ax.plot(sub.index, sub.values, style, markersize=4, label=label)
    ax.axhline(SHARP_CONSTANT, color="black", lw=1, ls="--", label="sharp bound 1/2")
    ax.axhline(PAPER_CONSTANT, color="black", lw=1, ls=":", label="paper's bound 2")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N")
    ax.set_ylabel("‖J_softmax(A)‖_F / √N")
    ax.set_title("Softmax Jacobian against the two constants")
    stamp(ax, preset, f"seed {seed}", loc="lower left")
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
    n["worst_gap_to_half"] = SHARP_CONSTANT - n["adversarial_min_ratio"]
    n.update({"plain_n": plain["n"], "plain_ratio": plain["ratio64"], "plain_k3": plain["frac_rows_near_k_uniform"][3],
              "jacrev_difference": jacrev_difference})
    return formatted(n, {
        "ascent_restarts": "d", "adversarial_max_ratio": ".6f", "adversarial_min_ratio": ".6f",
        "worst_gap_to_half": ".2g", "random_max_ratio": ".3f", "paper_over_sharp": ".0f", "matrices_above_sharp": "d",
        "eq42_one_hot_lhs": ".0f", "eq42_one_hot_rhs": ".0f", "plain_n": "d", "plain_ratio": ".4f", "plain_k3": ".0%",
        "jacrev_difference": "sci"},
        prefix="t41b_")
