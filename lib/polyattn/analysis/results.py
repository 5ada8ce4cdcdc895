"""The result of one comparison from its statistics: the first step of the book's one rule.

:func:`comparison_result` reads the same-seed differences of a comparison (their mean, 95%
interval, Holm-corrected p, and whether two one-sided tests put the 90% interval inside the
margin) and the chance judgement of each arm (:func:`learned`, :func:`arm_learned`), and gives
one of :data:`RESULTS`.  The claim register (:mod:`polyattn.claims.rule`) turns these results
into a claim's verdict; the description tables of the analysis
(:func:`polyattn.analysis.comparison_verdict`) label their rows with the same results, so a
comparison reads the same wherever it is shown.
"""
from __future__ import annotations

import math
from typing import Iterable, Optional

#: Every result a comparison can have (see :mod:`polyattn.claims.rule` for what each means).
RESULTS = ("uninformative", "did not learn", "split", "equivalent", "worse", "better", "worse, size unclear",
           "better, size unclear", "inconclusive")
#: What each result means, as :func:`comparison_result` decides it (the legend the intro page shows
#: under the verdict words; a test keeps its keys equal to :data:`RESULTS`).
RESULT_LEGEND = {
    "uninformative": "neither arm learned the task (most of each arm's seeds no better than chance), or the "
                     "baseline leaves nothing to improve on: counted, never judged",
    "did not learn": "most of the candidate's seeds are no better than chance while the baseline's learned: "
                     "read as worse",
    "split": "in one arm some seeds learned and some did not: compared as counts of seeds that learned, with "
             "exact intervals; it decides nothing",
    "equivalent": "the 90% interval of the same-seed differences lies inside ±margin (two one-sided tests at 5%)",
    "worse": "the Holm-corrected paired test finds a difference and its 95% interval lies wholly beyond the "
             "margin, on the worse side",
    "better": "the Holm-corrected paired test finds a difference and its 95% interval lies wholly beyond the "
              "margin, on the better side",
    "worse, size unclear": "the Holm-corrected paired test finds a worse difference, but its 95% interval "
                           "crosses the margin's edge: these seeds cannot say whether it exceeds the margin",
    "better, size unclear": "the Holm-corrected paired test finds a better difference, but its 95% interval "
                            "crosses the margin's edge: these seeds cannot say whether it exceeds the margin",
    "inconclusive": "neither equivalent nor a detectable difference (or fewer than two seed pairs); the "
                    "detectable effect at 80% power says what these seeds could have found",
}


def learned(value: float, chance: Optional[float], band: float, higher_is_better: bool = True) -> bool:
    """One run learned its task: it is better than the task's chance level by more than ``band``
    (one-sided: a run far *worse* than chance did not learn either)."""
    if chance is None or not math.isfinite(value):
        return math.isfinite(value)
    return value > chance + band if higher_is_better else value < chance - band


def arm_learned(values: Iterable[float], chance: Optional[float], band: float,
                higher_is_better: bool = True) -> Optional[bool]:
    """An arm learned when most of its seeds did, did not when most did not; None when it is
    split evenly or has no seeds."""
    flags = [learned(v, chance, band, higher_is_better) for v in values]
    if not flags:
        return None
    k = sum(flags)
    if 2 * k > len(flags):
        return True
    if 2 * k < len(flags):
        return False
    return None


def comparison_result(*, n: int, mean: float, ci_low: float, ci_high: float, holm_p: float, equivalent: bool,
                      alpha: float, margin: float, candidate_learned: Optional[bool] = True,
                      baseline_learned: Optional[bool] = True, split: bool = False,
                      higher_is_better: bool = True) -> str:
    """The result of one comparison from its statistics (see the module docstring).

    ``mean`` is candidate minus baseline in the metric's unit; ``higher_is_better`` says which
    sign is the better one; ``split`` says one arm's seeds disagree on whether they learned."""
    if candidate_learned is False and baseline_learned is False:
        return "uninformative"
    if n < 2 or not math.isfinite(mean):
        return "inconclusive"       # one seed pair decides nothing, neither as a mean nor as a count
    if candidate_learned is False and baseline_learned:
        return "did not learn"
    if split:
        return "split"
    if equivalent:
        return "equivalent"
    if math.isfinite(holm_p) and holm_p < alpha:
        better = mean > 0 if higher_is_better else mean < 0
        word = "better" if better else "worse"
        beyond = ci_low > margin if mean > 0 else ci_high < -margin
        return word if beyond else f"{word}, size unclear"
    return "inconclusive"


def qualifier(result: str, *, mean: float, holm_p: float, alpha: float, higher_is_better: bool = True) -> str:
    """", and slightly worse" (or better) for an equivalent result whose difference is also
    significant after Holm; "" otherwise."""
    if result != "equivalent" or not (math.isfinite(holm_p) and holm_p < alpha):
        return ""
    better = mean > 0 if higher_is_better else mean < 0
    return ", and slightly better" if better else ", and slightly worse"


__all__ = ["RESULTS", "RESULT_LEGEND", "arm_learned", "comparison_result", "learned", "qualifier"]
