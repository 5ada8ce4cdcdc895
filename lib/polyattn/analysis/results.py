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
RESULTS = ("uninformative", "did not learn", "split", "fewer seeds learned", "more seeds learned", "equivalent",
           "worse", "better", "worse, size unclear", "better, size unclear", "inconclusive", "cannot see attention",
           "control failed")
#: Results that state a difference the data detected (never voided by a failed positive control).
DIFFERENCES = ("did not learn", "fewer seeds learned", "more seeds learned", "worse", "better", "worse, size unclear",
               "better, size unclear")
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
    "fewer seeds learned": "an arm is split across the floor, and Fisher's exact test on the counts of seeds "
                           "that learned separates the candidate from the baseline, in the baseline's favour",
    "more seeds learned": "an arm is split across the floor, and Fisher's exact test on the counts of seeds "
                          "that learned separates them, in the candidate's favour",
    "cannot see attention": "a positive control of this comparison's cell failed (attention ablated matched "
                            "softmax there): its equivalence says nothing about attention",
    "control failed": "a control that validates this comparison moved, so the comparison cannot test the claim",
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


def fisher_exact_p(k_candidate: int, k_baseline: int, n_candidate: int, n_baseline: Optional[int] = None) -> float:
    """Two-sided Fisher exact p of ``k_candidate`` of ``n_candidate`` seeds against ``k_baseline``
    of ``n_baseline`` (default the same number): whether two counts of seeds that learned differ.
    1 of 3 against 3 of 3 gives p = 0.40; 0 of 5 against 5 of 5 gives p = 0.0079."""
    from scipy import stats

    n_baseline = n_candidate if n_baseline is None else n_baseline
    if not (0 <= k_candidate <= n_candidate and 0 <= k_baseline <= n_baseline) or min(n_candidate, n_baseline) < 1:
        raise ValueError(f"fisher_exact_p needs 0 <= k <= n and n >= 1 in each arm, got {k_candidate} of "
                         f"{n_candidate} and {k_baseline} of {n_baseline}")
    table = [[k_candidate, n_candidate - k_candidate], [k_baseline, n_baseline - k_baseline]]
    return float(stats.fisher_exact(table, alternative="two-sided")[1])


def comparison_result(*, n: int, mean: float, ci_low: float, ci_high: float, holm_p: float, equivalent: bool,
                      alpha: float, margin: float, candidate_learned: Optional[bool] = True,
                      baseline_learned: Optional[bool] = True, split: bool = False,
                      higher_is_better: bool = True, counts: Optional[tuple] = None,
                      gate_failed: bool = False) -> str:
    """The result of one comparison from its statistics (see the module docstring).

    ``mean`` is candidate minus baseline in the metric's unit; ``higher_is_better`` says which
    sign is the better one; ``ci_low``/``ci_high`` is the interval judged against the margin (with
    the claim's family adjustment); ``split`` says one arm's seeds fall on both sides of the level
    that counts as learning: the comparison is then read as ``counts`` (candidate seeds that
    learned, baseline seeds that learned, pairs) with a two-sided Fisher exact test at ``alpha``
    (``holm_p`` is then that test's family-adjusted p; NaN: the unadjusted test),
    and counts the test cannot separate give "split", which decides nothing; ``gate_failed``:
    the baseline did not learn beyond the floor its comparison must clear."""
    if gate_failed:
        return "uninformative"
    if candidate_learned is False and baseline_learned is False:
        return "uninformative"
    if n < 2 or not math.isfinite(mean):
        return "inconclusive"       # one seed pair decides nothing, neither as a mean nor as a count
    if split:
        if counts is not None and counts[0] != counts[1]:
            # holm_p is then the (family-adjusted) Fisher exact p of the counts
            p = holm_p if math.isfinite(holm_p) else fisher_exact_p(*counts)
            if p < alpha:
                return "fewer seeds learned" if counts[0] < counts[1] else "more seeds learned"
        return "split"
    if candidate_learned is False and baseline_learned:
        return "did not learn"
    if equivalent:
        return "equivalent"
    if math.isfinite(holm_p) and holm_p < alpha:
        better = mean > 0 if higher_is_better else mean < 0
        word = "better" if better else "worse"
        beyond = ci_low > margin if mean > 0 else ci_high < -margin
        return word if beyond else f"{word}, size unclear"
    return "inconclusive"


#: The qualifiers of an equivalent result whose difference is also detectable (after Holm): a harm
#: or a gain found, smaller than the margin.
WORSE_INSIDE = ", worse by less than the margin"
BETTER_INSIDE = ", better by less than the margin"


def qualifier(result: str, *, mean: float, holm_p: float, alpha: float, higher_is_better: bool = True) -> str:
    """", worse by less than the margin" (or better) for an equivalent result whose difference is
    also significant after Holm: a harm (gain) that is there and smaller than the margin; ""
    otherwise."""
    if result != "equivalent" or not (math.isfinite(holm_p) and holm_p < alpha):
        return ""
    better = mean > 0 if higher_is_better else mean < 0
    return BETTER_INSIDE if better else WORSE_INSIDE


__all__ = ["BETTER_INSIDE", "DIFFERENCES", "RESULTS", "RESULT_LEGEND", "WORSE_INSIDE", "arm_learned",
           "comparison_result", "fisher_exact_p", "learned", "qualifier"]
