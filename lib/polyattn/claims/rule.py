"""The one rule that turns comparisons into a claim's verdict, used by every chapter.

Each comparison first gets a *result* from its statistics alone (same-seed differences
``candidate - baseline`` in the metric's display unit, a margin fixed before the runs):

``uninformative``
    both arms sit within the chance band (neither learned the task): counted, never judged;
``did not learn``
    the candidate sits at chance while the baseline learned: read as worse;
``equivalent``
    the 90% interval lies inside ±margin (two one-sided tests at alpha = 0.05); when the Holm
    corrected paired test also finds a difference, the result says "equivalent, and slightly
    worse" (or better);
``worse`` / ``better``
    the Holm-corrected paired t-test (within the claim's family) rejects no difference;
``inconclusive``
    neither: the detectable effect at 80% power says what these seeds could have found.

The result then *supports*, *contradicts* or *leaves open* what the claim expects of that
comparison (``equivalent``, ``worse`` or ``better``), and the claim's form follows from those
outcomes by one rule:

* **holds** (**equivalent within the margin** when every expectation is equivalence): every
  informative comparison supports the claim;
* **not supported**: at least one contradicts it and none supports it;
* **mixed**: at least one supports it and at least one contradicts it;
* **inconclusive at this power**: otherwise (some left open, none contradicting), stated with
  the largest detectable effect among the open comparisons;
* **inconclusive at this scale**: no comparison is informative (every arm at chance) or none
  has the two seeds a paired test needs.
"""
from __future__ import annotations

import math
from typing import Iterable, Optional

RESULTS = ("uninformative", "did not learn", "equivalent", "worse", "better", "inconclusive")
OUTCOMES = ("supports", "contradicts", "open", "uninformative")
FORMS = ("holds", "equivalent within the margin", "not supported", "mixed", "inconclusive at this power",
         "inconclusive at this scale")

#: What each verdict word means, for the legend on the intro page.
LEGEND = {
    "holds": "every informative comparison of the claim supports it",
    "equivalent within the margin": "every comparison shows the two within the margin fixed before the runs "
                                    "(the 90% interval inside it: two one-sided tests at 5%)",
    "not supported": "at least one comparison contradicts the claim and none supports it",
    "mixed": "at least one comparison supports the claim and at least one contradicts it",
    "inconclusive at this power": "no comparison contradicts the claim but some cannot decide with these seeds; "
                                  "the detectable effect says how large a difference they would have found",
    "inconclusive at this scale": "no comparison is informative at this scale (every arm at chance, or too few "
                                  "runs for a paired test)",
}


def comparison_result(*, n: int, mean: float, holm_p: float, equivalent: bool, alpha: float,
                      candidate_at_chance: bool = False, baseline_at_chance: bool = False,
                      higher_is_better: bool = True) -> str:
    """The result of one comparison from its statistics (see the module docstring).

    ``mean`` is candidate minus baseline in the metric's unit; ``higher_is_better`` says which
    sign is the better one."""
    if candidate_at_chance and baseline_at_chance:
        return "uninformative"
    if candidate_at_chance and not baseline_at_chance:
        return "did not learn"
    if n < 2 or not math.isfinite(mean):
        return "inconclusive"
    if equivalent:
        return "equivalent"
    if math.isfinite(holm_p) and holm_p < alpha:
        better = mean > 0 if higher_is_better else mean < 0
        return "better" if better else "worse"
    return "inconclusive"


def qualifier(result: str, *, mean: float, holm_p: float, alpha: float, higher_is_better: bool = True) -> str:
    """", and slightly worse" (or better) for an equivalent result whose difference is also
    significant after Holm; "" otherwise."""
    if result != "equivalent" or not (math.isfinite(holm_p) and holm_p < alpha):
        return ""
    better = mean > 0 if higher_is_better else mean < 0
    return ", and slightly better" if better else ", and slightly worse"


def outcome(result: str, expect: str) -> str:
    """Whether a comparison's result supports, contradicts or leaves open what the claim expects."""
    if result == "uninformative":
        return "uninformative"
    if result == "did not learn":
        result = "worse"
    if result == "inconclusive":
        return "open"
    if expect == "equivalent":
        return "supports" if result == "equivalent" else "contradicts"
    if result == expect:
        return "supports"
    return "contradicts"  # equivalent where a difference was expected, or the opposite difference


def claim_form(outcomes: Iterable[str], expectations: Iterable[str], enough_runs: bool = True) -> str:
    """The claim's form from its comparisons' outcomes (one rule for every claim)."""
    outcomes, expectations = list(outcomes), list(expectations)
    informative = [o for o in outcomes if o != "uninformative"]
    if not informative or not enough_runs:
        return "inconclusive at this scale"
    sup, con = informative.count("supports"), informative.count("contradicts")
    if sup and con:
        return "mixed"
    if con:
        return "not supported"
    if sup == len(informative):
        return "equivalent within the margin" if all(e == "equivalent" for e in expectations) else "holds"
    return "inconclusive at this power"


#: What a part's form says of the claim it belongs to, when a claim is combined from parts that
#: already have forms (a comparison's form under an equivalence claim, or a sub-claim's verdict).
FORM_OUTCOME = {
    "equivalent": "supports", "equivalent within the margin": "supports", "holds": "supports",
    "holds with a corrected constant": "supports", "holds only under its assumptions": "supports",
    "worse": "contradicts", "better": "contradicts", "not supported": "contradicts", "fails": "contradicts",
    "did not learn": "contradicts", "inconclusive": "open", "inconclusive at this power": "open",
    "not comparable": "open", "measured": "open", "pending": "open",
    "inconclusive at this scale": "uninformative", "uninformative": "uninformative",
}


def combine_forms(forms: Iterable[str]) -> str:
    """One claim form from the forms of its parts, by the same rule: each part supports,
    contradicts or leaves the claim open (a ``mixed`` part counts as one of each), and
    :func:`claim_form` decides.  Every chapter that combines parts goes through here."""
    forms = list(forms)
    outcomes = []
    for f in forms:
        if not f:
            continue
        if f == "mixed":
            outcomes += ["supports", "contradicts"]
            continue
        if f not in FORM_OUTCOME:
            raise ValueError(f"combine_forms: unknown form {f!r}; known: {sorted(FORM_OUTCOME)} and 'mixed'")
        outcomes.append(FORM_OUTCOME[f])
    if not outcomes:
        return "inconclusive at this scale"
    equivalence = all(f in ("equivalent", "equivalent within the margin") for f in forms if f and f != "mixed")
    return claim_form(outcomes, ["equivalent" if equivalence else "holds"] * len(outcomes))


def detectable(mdes: Iterable[Optional[float]]) -> Optional[float]:
    """The largest finite detectable effect among open comparisons (None when none)."""
    vals = [m for m in mdes if m is not None and math.isfinite(m)]
    return max(vals) if vals else None
