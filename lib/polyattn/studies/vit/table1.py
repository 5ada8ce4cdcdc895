"""Chapter 04's Table 1 analogue: every activation on one small ViT.  The results table, the
per-seed table and the curves are :mod:`polyattn.studies.vit.page`'s; this module holds the curves'
panels, how much the seeds can say, and the cubic's scale (description).

    curves_figure(records, TABLE1_GROUPS, preset)                  # a few lines a panel
    glue_values({**power_numbers(records), **scale_numbers(records)})   # seeds, MDEs; x³/14 and x³
"""
from __future__ import annotations

import pandas as pd

from ... import analysis
from ...analysis.tables import interval_cell
from .page import margin, number_text

#: Table 1's activations in small multiples: the paper's family c·xᵖ, its neighbours, the wider family.
TABLE1_GROUPS = (
    ("The paper's family c·xᵖ", ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1", "poly:p=1", "poly:p=2")),
    ("Normalised neighbours", ("softmax", "relu_n", "sigmoid", "softpick")),
    ("The wider family", ("softmax", "taylor_softmax", "periodic", "power_softmax:p=2", "relu2_n")),
)


def power_numbers(records: list[dict]) -> dict[str, str]:
    """How much Table 1's seeds can say: the seeds, the t multiplier of a 95% interval, the range
    of the minimal detectable effects against softmax, and the smallest two-sided p-value a
    Wilcoxon signed-rank test can reach with that many pairs."""
    from scipy import stats

    if not records:
        return {k: "not run" for k in ("ch04_t1_seeds", "ch04_t_mult", "ch04_mde_low", "ch04_mde_high",
                                       "ch04_wilcoxon_p", "ch04_wilcoxon_n")}
    final = analysis.final_accuracy(records)
    n = int(final["seed"].nunique())
    mde = analysis.paired_difference(final, baseline="softmax", margin=margin())["mde"].dropna()
    return {"ch04_t1_seeds": str(n),
            "ch04_t_mult": number_text(stats.t.ppf(0.975, n - 1) if n >= 2 else None, ".2f", "undefined (one seed)"),
            "ch04_mde_low": number_text(mde.min() if len(mde) else None),
            "ch04_mde_high": number_text(mde.max() if len(mde) else None),
            "ch04_wilcoxon_p": number_text(2.0 / 2 ** n, ".3f"), "ch04_wilcoxon_n": str(analysis.WILCOXON_MIN_N)}


# --- the scale of the cubic at Table 1 (description) ----------------------------------------------------


def scale_differences(records: list[dict]) -> pd.DataFrame:
    """The paper's fixed x³/14 and the unscaled x³ against x³/sqrt(N), paired by seed, Holm over the two."""
    final = analysis.final_accuracy(records)
    present = [a for a in ("poly:p=3,c=1/14", "poly:p=3,c=1") if (final["activation"] == a).any()]
    return analysis.paired_difference(final, baseline="poly:p=3", compare=present, margin=margin())


def scale_numbers(records: list[dict]) -> dict[str, str]:
    """The paper's fixed x³/14 and the unscaled x³ against x³/sqrt(N) (:func:`scale_differences`),
    each difference with its 95% interval, and the seed pairs."""
    if not records:
        return {"ch04_fixed_diff": "not run", "ch04_unscaled_diff": "not run", "ch04_scale_pairs": "no"}
    d = scale_differences(records).set_index("activation")
    out = {"ch04_scale_pairs": ", ".join(sorted({str(int(n)) for n in d["n_pairs"]})) or "no"}
    for key, act in (("ch04_fixed_diff", "poly:p=3,c=1/14"), ("ch04_unscaled_diff", "poly:p=3,c=1")):
        out[key] = (interval_cell(*d.loc[act, ["mean_diff", "ci_low", "ci_high"]], missing="not comparable")
                    + " points") if act in d.index else "not run"
    return out
