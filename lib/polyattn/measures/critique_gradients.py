"""Chapter 09's claims on powers and gradients, from what the short retrainings of Table 1's model
(grid ``critique_short_retrain``) stored of their models, read beside the random-score survey
(:mod:`.critique_survey`):

``powers_gradients``
    the gradient through x^p/sqrt(N), p = 1..7, vanishing for small scores and exploding for
    large ones;
``softmax_saturation``
    softmax's saturated rows.

The forms are decided by the rules of :mod:`polyattn.analysis.critique_verdicts`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from ..analysis import critique_verdicts as rules
from ..analysis import critiques as crit
from ..claims.spec import Finding
from .critique_common import LINEAR, PLAIN_POWERS, POWERS, display_name, finding, short_pending, short_records
from .critique_survey import jacobian_survey, random_power_numbers, random_softmax_numbers, survey_settings

#: The plain powers x^p/sqrt(N) and, for even p, the sign-keeping x|x|^(p-1)/sqrt(N).
POWER_SPECS = PLAIN_POWERS + tuple(f"poly_odd:p={p}" for p in POWERS if p % 2 == 0)


def gradient_numbers(records) -> dict:
    """The gradient through the activation, ``||dL/dS||_F`` (mean over layers, samples and heads),
    at initialisation and after the short retraining, for p = 1..7; which powers the retraining left
    trapped (scores within :data:`~polyattn.analysis.critique_verdicts.TRAPPED_GROWTH` times their
    initial spread) and which, their scores grown, have a Jacobian above
    :data:`~polyattn.analysis.critique_verdicts.EXPLODED_FACTOR` times the linear map's."""
    from scipy import stats


    grads = crit.short_gradients(records)
    acc = crit.short_accuracy(records)
    by = grads.groupby(["activation", "state"])
    gmean, std_of, jac_of = by["grad_scores_fro"].mean(), by["score_std"].mean(), by["act_jac_fro"].mean()
    init = np.array([gmean[(a, "initialisation")] for a in PLAIN_POWERS])
    trained = np.array([gmean[(a, "trained")] for a in PLAIN_POWERS])
    odd = max(abs(gmean[(f"poly_odd:p={p}", "initialisation")] / gmean[(f"poly:p={p}", "initialisation")] - 1)
              for p in POWERS if p % 2 == 0)
    trapped = [a for a in POWER_SPECS if rules.trapped(std_of[(a, "initialisation")], std_of[(a, "trained")])]
    escaped = [a for a in PLAIN_POWERS[1:] if a not in trapped]
    jac_lin = float(jac_of[(LINEAR, "trained")])
    exploded = [a for a in escaped if rules.exploded(jac_of[(a, "trained")], jac_lin)]
    return {
        "gradient_p1_initial": float(init[0]), "gradient_p7_initial": float(init[-1]),
        "gradient_p1_trained": float(trained[0]), "gradient_p7_trained": float(trained[-1]),
        "gradient_ratio_initial": float(init[-1] / init[0]), "gradient_ratio_trained": float(trained[-1] / trained[0]),
        "gradient_rank_correlation_initial": float(stats.spearmanr(POWERS, init).statistic),
        "gradient_rank_correlation_trained": float(stats.spearmanr(POWERS, trained).statistic),
        "sign_kept_change_initial": float(odd),
        "score_std_initial": float(grads.loc[grads["state"] == "initialisation", "score_std"].mean()),
        "accuracy_by_power": ", ".join(f"p = {a.split('=')[1]} {acc[a]:.1f}%" for a in PLAIN_POWERS),
        "accuracy_p1": float(acc[PLAIN_POWERS[0]]), "accuracy_p7": float(acc[PLAIN_POWERS[-1]]),
        "training_seconds": float(sum(r["provenance"]["wall_s"] for r in records)), "short_runs": len(records),
        "powers": len(POWER_SPECS), "trapped": len(trapped),
        "trapped_powers": ", ".join(map(display_name, trapped)) or "none",
        "exploded": len(exploded), "exploded_powers": ", ".join(map(display_name, exploded)) or "none",
        "linear_jacobian_trained": jac_lin,
        "exploded_jacobian_max": max((float(jac_of[(a, "trained")]) for a in exploded), default=float("nan")),
        "trapped_growth": rules.TRAPPED_GROWTH, "exploded_factor": rules.EXPLODED_FACTOR,
        "vanish_rho": rules.VANISH_RHO, "vanish_ratio": rules.VANISH_RATIO,
    }


def powers_gradients(root: Optional[Path] = None) -> Finding:
    """Does the gradient through x^p/sqrt(N) vanish for small scores (at initialisation it falls
    with p: rank correlation at most VANISH_RHO, p = 7 below VANISH_RATIO of p = 1) and explode for
    large ones (a power whose scores grew has a Jacobian above EXPLODED_FACTOR times the linear
    map's)?  Both halves -> holds, one -> mixed, neither -> not supported."""
    grid, complete = short_records(root)
    if not complete:
        return short_pending(grid)
    survey = jacobian_survey(root)
    n = {**gradient_numbers(list(grid.records)),
         **random_power_numbers(survey.table, survey_settings()["init_sigmas"])}
    form = rules.powers_gradient_form(n["gradient_rank_correlation_initial"], n["gradient_ratio_initial"],
                                      n["exploded"] > 0)
    summary = (f"$\\lVert\\partial L/\\partial S\\rVert_F$ through $x^p/\\sqrt{{N}}$ in Table 1's micro ViT falls "
               f"from {n['gradient_p1_initial']:.2g} ($p = 1$) to {n['gradient_p7_initial']:.2g} ($p = 7$) at "
               f"initialisation; after a short retraining (seed 0) {n['trapped']} of {n['powers']} powers are still "
               f"trapped there ({n['trapped_powers']}), while {n['exploded']} powers whose scores grew have a Jacobian "
               f"above {rules.EXPLODED_FACTOR:g} times the linear map's; short-retraining accuracy "
               f"{n['accuracy_p1']:.0f}% at $p = 1$, {n['accuracy_p7']:.0f}% at $p = 7$; on random scores it vanishes "
               f"below $\\sigma \\approx$ {n['crossing_sigma_min']:.2f} to {n['crossing_sigma_max']:.2f} and explodes "
               f"above (accuracy after full training: the next verdict).")
    return finding(form, summary, n)


def saturation_numbers(records) -> dict:
    """Softmax in the short retrainings: the largest share of a layer's rows whose largest weight
    exceeds 0.99, at initialisation or after the retraining, and the largest score spread."""
    grads = crit.short_gradients(records)
    soft = grads[grads["activation"] == "softmax"]
    return {"saturated_share_max": float(soft["saturated_share"].max()),
            "score_std_max": float(soft["score_std"].max()), "saturated_share_threshold": rules.SATURATED_SHARE}


def softmax_saturation(root: Optional[Path] = None) -> Finding:
    """Softmax starves gradients where its rows saturate: "holds" when at least SATURATED_SHARE of
    some layer's rows saturate in the short retrainings, else "holds only under its assumptions"
    (the mechanism, measured on random scores, needs scores large enough to saturate)."""
    grid, complete = short_records(root)
    if not complete:
        return short_pending(grid)
    n = {**saturation_numbers(list(grid.records)), **random_softmax_numbers(jacobian_survey(root).table)}
    form = rules.saturation_form(n["saturated_share_max"])
    summary = (f"A saturated softmax row (max weight $> 0.99$) has Jacobian norm at most "
               f"{n['random_saturated_row_jacobian_max']:.3f} on random scores (sharp bound $1/2$), but at most "
               f"{n['saturated_share_max']:.1%} of rows saturate in Table 1's micro ViT at initialisation or after a "
               f"short retraining; trained-at-scale models not measured.")
    return finding(form, summary, n)
