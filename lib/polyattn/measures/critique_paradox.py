"""Chapter 09's norm paradox (``norm_paradox``): the conclusion "the norms do not explain
accuracy", from Spearman's rho of the attention and Jacobian norms with final accuracy over every
Table 1 run (chapter 03's numbers, :func:`polyattn.measures.norms.correlations`); the premise (the
unscaled x^3's norms below x/sqrt(N)'s, probe by probe) and the accuracy difference are reported
beside it.  The form is decided by the rules of :mod:`polyattn.analysis.critique_verdicts`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import pandas as pd

from .. import analysis
from ..analysis import critique_verdicts as rules
from ..analysis import critiques as crit
from ..claims.spec import Finding
from .critique_common import LINEAR, UNSCALED_CUBE, chapter_margin, finding
from .norms import correlations

#: The runs of Table 1's analogue, whose norms and accuracies the claim reads.
TABLE1_GRID = "vit_table1"
#: The activations whose accuracy the chapter compares with x/sqrt(N), one Holm family.
PARADOX_ACTIVATIONS = ("poly:p=1", "poly:p=3,c=1", "poly:p=3", "poly:p=3,c=1/14", "softmax")
#: The norms compared probe by probe (the premise).
PREMISE_NORMS = ("attn_fro", "act_jac_fro", "grad_attn_fro")
#: The claim's two norms, as chapter 03 correlates them with accuracy (the conclusion).
EXPLAINING_NORMS = {"attn_fro_over_sqrt_n_mean": "attention", "act_jac_fro_mean": "jacobian"}
#: Fewer activations with runs than this give no interval that resamples activations.
MIN_ACTIVATIONS = 3


def premise_numbers(records) -> dict:
    """The unscaled cube against x/sqrt(N), cell by cell (seed, layer, probed step; mean over
    heads): the share of cells where each norm is below, at the first probe and at every later
    one, the median ratio, and the first step at which the cube's mean ``||A||_F`` is above."""
    pair = [r for r in records if r["config"]["activation"] in (UNSCALED_CUBE, LINEAR)]
    probes = analysis.probe_frame(pair, list(PREMISE_NORMS))
    order = crit.norm_order(probes, UNSCALED_CUBE, LINEAR, PREMISE_NORMS).set_index("metric")
    attn, jac, grad = (order.loc[m] for m in PREMISE_NORMS)
    mean_attn = (probes[probes["metric"] == "attn_fro"].groupby(["step", "activation"])["value"].mean()
                 .unstack())
    above = mean_attn.index[mean_attn[UNSCALED_CUBE] > mean_attn[LINEAR]]
    return {
        "attention_below_first_probe": float(attn["share_lower_first"]),
        "attention_below_later_probes": float(attn["share_lower_rest"]),
        "jacobian_below_first_probe": float(jac["share_lower_first"]),
        "jacobian_below_later_probes": float(jac["share_lower_rest"]),
        "gradient_below_later_probes": float(grad["share_lower_rest"]),
        "attention_median_ratio": float(attn["median_ratio"]),
        "jacobian_median_ratio": float(jac["median_ratio"]),
        "premise_first_probe": rules.norm_premise(attn["share_lower_first"], jac["share_lower_first"]),
        "premise_later_probes": rules.norm_premise(attn["share_lower_rest"], jac["share_lower_rest"]),
        "attention_above_from_step": int(above.min()) if len(above) else "no probed step",
        "last_probed_step": int(mean_attn.index.max()),
    }


def paradox_accuracy(records, margin: Optional[float] = None) -> pd.DataFrame:
    """Final accuracy of each activation of :data:`PARADOX_ACTIVATIONS` against x/sqrt(N), paired
    by seed (:func:`polyattn.analysis.paired_difference`, Holm over the comparisons, TOST against
    the chapter's margin)."""
    final = analysis.final_accuracy(records)
    present = set(final["activation"])
    return analysis.paired_difference(final, baseline=LINEAR, margin=chapter_margin() if margin is None else margin,
                                      compare=[a for a in PARADOX_ACTIVATIONS if a != LINEAR and a in present])


def accuracy_numbers(records) -> dict:
    """The unscaled cube's final accuracy minus x/sqrt(N)'s, paired by seed, and its result."""
    diffs = paradox_accuracy(records)
    row = diffs.set_index("activation").loc[UNSCALED_CUBE]
    v = analysis.comparison_verdict(row, name="the unscaled x³", baseline="x/√N")
    return {"accuracy_difference": float(row["mean_diff"]), "accuracy_ci_low": float(row["ci_low"]),
            "accuracy_ci_high": float(row["ci_high"]), "accuracy_pairs": int(row["n_pairs"]),
            "accuracy_holm_p": float(row["p_holm"]), "accuracy_comparisons": int(row["family_size"]),
            "accuracy_detectable": float(row["mde"]), "accuracy_tost_p": float(row["tost_p"]),
            "accuracy_result": v.form, "margin": float(row["margin"])}


def explanation_numbers(corr: pd.DataFrame) -> dict:
    """Each of the claim's two norms against accuracy over every run (a row of
    :func:`polyattn.analysis.correlation_table`): rho, its intervals over runs, over whole
    activations and within an activation, and what the rule reads from it."""
    out = {}
    rows = corr.set_index("norm")
    for column, key in EXPLAINING_NORMS.items():
        r = rows.loc[column]
        out.update({f"{key}_rho": float(r["rho"]), f"{key}_ci_low": float(r["ci_low"]),
                    f"{key}_ci_high": float(r["ci_high"]),
                    f"{key}_activations_ci_low": float(r["cluster_ci_low"]),
                    f"{key}_activations_ci_high": float(r["cluster_ci_high"]),
                    f"{key}_within_rho": float(r["within_rho"]), f"{key}_within_ci_low": float(r["within_ci_low"]),
                    f"{key}_within_ci_high": float(r["within_ci_high"]),
                    f"{key}_reading": rules.norm_explains(r["cluster_ci_low"], r["cluster_ci_high"])})
    return out


def _conclusion_text(form: str, n: dict) -> str:
    """The clause that says what the correlations decide."""
    s = f"{rules.STRONG_RHO:g}"
    which = [label for key, label in (("attention", "the attention norm"), ("jacobian", "the Jacobian"))
             if n[f"{key}_reading"] == ("explains" if form == "not supported" else "undecided")]
    if form == "inconclusive at this scale":
        return (f"{n['activations']} activations are too few to resample whole activations (at least "
                f"{MIN_ACTIVATIONS} are needed)")
    if form == "holds":
        return f"neither orders the activations by accuracy (both intervals inside $\\pm {s}$)"
    if form == "not supported":
        return f"{' and '.join(which)} {'orders' if len(which) == 1 else 'order'} the activations by accuracy"
    return (f"neither orders the activations detectably, but the interval of {' and of '.join(which)} reaches "
            f"$|\\rho| \\ge {s}$, so {n['activations']} activations cannot show that the norms do not explain accuracy")


def _premise_text(n: dict) -> str:
    if n["premise_later_probes"] == "lower":
        return "holds through training"
    if n["premise_first_probe"] == "lower":
        return "holds at the first probe only"
    return "does not hold"


def norm_paradox(root: Optional[Path] = None) -> Finding:
    """Do the attention and Jacobian norms explain which activation trains best?  Spearman's rho
    of each with final accuracy over every stored Table 1 run (resampling whole activations);
    beside it the reviewer's premise and the unscaled cube's accuracy against x/sqrt(N)."""
    grid, norms, corr = correlations(root)
    cfg = grid.configs[0]
    scale = (f"Table 1 analogue, $N = {cfg.seq_len}$, {cfg.train_subset:,} images, {cfg.epochs} epochs, "
             f"{len({c.seed for c in grid.configs})} seeds")
    stored_acts = {r["config"]["activation"] for r in grid.records}
    if corr is None or not {UNSCALED_CUBE, LINEAR} <= stored_acts:
        return finding("inconclusive at this scale",
                       f"{grid.stored} of the {grid.planned} runs of the Table 1 analogue are stored, without both "
                       f"the unscaled $x^3$ and $x/\\sqrt{{N}}$ ({scale}).",
                       {"runs": grid.stored, "runs_planned": grid.planned})
    n_activations = int(norms.loc[norms["test_acc"].notna(), "activation"].nunique())
    numbers = {"runs": int(corr.iloc[0]["n"]), "runs_planned": grid.planned, "activations": n_activations,
               "seq_len": int(cfg.seq_len), "training_images": int(cfg.train_subset), "epochs": int(cfg.epochs),
               "strong_rho": rules.STRONG_RHO, **explanation_numbers(corr), **premise_numbers(grid.records),
               **accuracy_numbers(grid.records)}
    form = ("inconclusive at this scale" if n_activations < MIN_ACTIVATIONS else
            rules.norms_explain_form(numbers[f"{k}_reading"] for k in EXPLAINING_NORMS.values()))
    n = numbers
    result = "detectably worse" if n["accuracy_result"].startswith("worse") else "not shown worse"
    summary = (f"Across {n['runs']} Table 1 runs of {n_activations} activations, Spearman $\\rho$ of final accuracy "
               f"with $\\lVert A\\rVert_F/\\sqrt{{N}}$ is {n['attention_rho']:+.2f} (95% CI resampling whole "
               f"activations {n['attention_activations_ci_low']:+.2f} to {n['attention_activations_ci_high']:+.2f}) "
               f"and with $\\lVert\\partial\\phi(S)/\\partial S\\rVert_F$ {n['jacobian_rho']:+.2f} "
               f"({n['jacobian_activations_ci_low']:+.2f} to {n['jacobian_activations_ci_high']:+.2f}): "
               f"{_conclusion_text(form, n)}; the premise {_premise_text(n)} (the unscaled $x^3$'s "
               f"$\\lVert A\\rVert_F$ and Jacobian are below $x/\\sqrt{{N}}$'s in "
               f"{n['attention_below_first_probe']:.0%} and {n['jacobian_below_first_probe']:.0%} of first-probe "
               f"cells, {n['attention_below_later_probes']:.0%} and {n['jacobian_below_later_probes']:.0%} of later "
               f"ones), and its accuracy differs by {n['accuracy_difference']:+.2f} points (95% CI "
               f"{n['accuracy_ci_low']:+.2f} to {n['accuracy_ci_high']:+.2f}), {result} ({scale}).")
    return finding(form, summary, numbers)
