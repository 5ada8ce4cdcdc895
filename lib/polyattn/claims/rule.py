"""The one rule that turns comparisons into a claim's verdict.

A claim names its **primary** comparisons (those its statement is about) and may name **checks**
(controls and conditions that must hold for the design to test the claim at all) and
**descriptions** (tiers not designed to decide it, neighbouring questions). Checks are validity
checks, never evidence for or against the claim; descriptions are shown and never judged.

Each comparison first gets a *result* from its statistics alone
(:func:`polyattn.analysis.results.comparison_result`; same-seed differences
``candidate - baseline`` in the metric's display unit, a margin fixed before the runs):

``uninformative``
    neither arm learned the task (most of each arm's seeds no better than chance), the baseline
    sits where there is nothing to improve on, or the baseline did not clear the comparison's
    *gate* (the floor a model without attention reaches, :mod:`polyattn.claims.floors`): "the
    models did not learn beyond <floor>"; counted, never judged, never quoted as evidence;
``did not learn``
    the candidate's seeds are no better than chance while the baseline's learned: read as worse;
``split`` / ``fewer seeds learned`` / ``more seeds learned``
    in one arm some seeds learned and some did not (a bimodal outcome): compared as counts of
    seeds that learned with a two-sided Fisher exact test, never as a mean difference; counts the
    test cannot separate (1 of 3 against 3 of 3: p = 0.40) are "split" and decide nothing;
``equivalent``
    the 90% interval lies inside ±margin (two one-sided tests at alpha = 0.05; for an all-of
    claim the parts are an intersection–union test, which needs no adjustment); when the
    Holm-adjusted test also finds a difference it reads "worse (better) by less than the
    margin": a harm or gain that is there and smaller than the margin;
``worse`` / ``better``
    the Holm-adjusted paired t-test rejects no difference *and* the Bonferroni-adjusted 95%
    interval (level 1 − 0.05/m for the m comparisons of the claim's family) lies beyond the
    margin: one multiplicity rule for both questions;
``worse, size unclear`` / ``better, size unclear``
    a detectable difference (Holm) that is not equivalent either: its adjusted interval crosses
    the margin's edge, so these seeds cannot say whether it is larger or smaller than the margin;
``inconclusive``
    neither: the detectable effect at 80% power says what these seeds could have found;
``cannot see attention`` / ``control failed``
    a check that validates this comparison failed: a positive control (attention ablated must do
    worse) that did not separate voids every result here that is not a detected difference (a
    deficit beyond the margin still counts); a positive control not shown beyond the margin (its
    difference detected but of unclear size, or undecided) voids the results that read as
    agreement within the margin, which could not then tell attention from none; a control that
    must not move and moved voids the comparison.

The Holm family of a claim holds only its deciding comparisons (the primary comparisons of the
tier that decides, informative and gated); the tiers that do not decide form their own
families, as description.  A check names the comparisons it validates (``validates``: ids or
``tier:<name>``; none named: every primary); an open check is stated as open in the row and the
summary, never passed silently.

The result then *supports*, *contradicts* or *leaves open* what the claim expects of that
comparison (``equivalent``, ``worse`` or ``better``), and the claim's form follows from the
outcomes of its primary comparisons in the tier that decides, combined by the claim's logic:

* **not testable as designed**: failed checks void every deciding comparison;
* all-of (every part must hold): **not supported** when one contradicts it; **partly
  testable** when some part is uninformative (the summary names those parts and what the
  testable ones found); **holds** (**equivalent within the margin** when every expectation is
  equivalence) when every primary supports it; **holds, smaller than the margin** when the
  expected harm or gain is found but inside the margin; **detectable, size unclear** when every
  part that does not support it found the expected difference, of unclear size; otherwise
  **inconclusive at this power**;
* any-of: **holds** when one primary supports it, **not supported** when every informative
  one contradicts it, otherwise as above;
* **inconclusive at this scale**: no primary is informative, or none has the two seeds a paired
  test needs; **pending**: none of its planned runs is stored yet.
"""
from __future__ import annotations

import math
from typing import Iterable, Optional

# the first step, a comparison's result from its statistics, lives with the analysis so that its
# description tables use it too
from ..analysis.results import (  # noqa: F401
    BETTER_INSIDE,
    DIFFERENCES,
    RESULTS,
    WORSE_INSIDE,
    arm_learned,
    comparison_result,
    fisher_exact_p,
    learned,
    qualifier,
)
from ..analysis.stats import clopper_pearson

OUTCOMES = ("supports", "contradicts", "open", "size unclear", "smaller than the margin", "uninformative")
#: The forms a claim decided by comparisons of runs can take (:func:`claim_form`).
COMPARISON_FORMS = ("holds", "equivalent within the margin", "holds, smaller than the margin", "not supported",
                    "detectable, size unclear", "partly testable", "inconclusive at this power",
                    "inconclusive at this scale", "not testable as designed", "pending")
#: The further forms of a measured claim (a theorem checked numerically, a probe, a cost), each
#: decided by its measure function's registered rule (:class:`polyattn.claims.spec.MeasuredClaim`).
MEASURED_FORMS = ("holds with a corrected constant", "holds only under its assumptions", "fails", "mixed", "measured")
#: The book's one vocabulary of verdicts.
FORMS = COMPARISON_FORMS + MEASURED_FORMS
ROLES = ("primary", "check", "description")
LOGICS = ("all", "any")

#: What each verdict word means, for the legend on the intro page.
LEGEND = {
    "holds": "every primary comparison of the claim supports it (a difference beyond the margin where it "
             "expects one, equivalence where it expects that)",
    "equivalent within the margin": "every primary comparison shows the two within the margin fixed before the "
                                    "runs (the 90% interval inside it: two one-sided tests at 5%)",
    "holds, smaller than the margin": "the harm or gain the claim predicts is there (Holm-adjusted test) but "
                                      "smaller than the margin: its 90% interval lies inside it",
    "not supported": "a primary comparison contradicts the claim (for a claim of several parts, one part is "
                     "enough)",
    "partly testable": "some parts of the claim could not be tested (the models did not learn beyond a floor, "
                       "or a control showed the design cannot see attention); the summary names them and what "
                       "the testable parts found",
    "detectable, size unclear": "the difference the claim expects is there (Holm-corrected test), but its "
                                "95% interval crosses the margin's edge: these seeds cannot say whether it is "
                                "as large as the margin",
    "inconclusive at this power": "no primary comparison contradicts the claim but some cannot decide with "
                                  "these seeds; the detectable effect says how large a difference they would "
                                  "have found",
    "inconclusive at this scale": "no primary comparison is informative at this scale (neither arm learned the "
                                  "task, or too few runs for a paired test)",
    "not testable as designed": "a control or condition of the design failed, so the comparison cannot test "
                                "the claim; the check's numbers are stated",
    "pending": "planned runs, none stored yet",
    "holds with a corrected constant": "the statement is true, but with a different constant from the paper's",
    "holds only under its assumptions": "true where the paper's assumptions hold, and shown to fail or change "
                                        "outside them",
    "fails": "the statement is false on the book's data",
    "mixed": "a measured claim whose parts point different ways: some support the statement, some contradict it",
    "measured": "a quantity measured and reported, with no claim to accept or reject",
}


def outcome(result: str, expect: str, qualified: str = "") -> str:
    """Whether a comparison's result (with its qualifier, ``qualified``) supports, contradicts or leaves open
    what the claim expects.  An equivalent result with a harm (gain) smaller than the margin is
    "smaller than the margin" for a claim that expects that harm (gain)."""
    if result in ("uninformative", "cannot see attention", "control failed"):
        return "uninformative"
    if result in ("did not learn", "fewer seeds learned"):
        result = "worse"
    if result == "more seeds learned":
        result = "better"
    if result in ("inconclusive", "split"):
        return "open"
    if result == "equivalent" and expect != "equivalent" and qualified in (WORSE_INSIDE, BETTER_INSIDE):
        found = "worse" if qualified == WORSE_INSIDE else "better"
        return "smaller than the margin" if found == expect else "contradicts"
    if result.endswith(", size unclear"):
        direction = result.split(",")[0]
        if expect == direction:
            return "size unclear"
        return "open" if expect == "equivalent" else "contradicts"
    if expect == "equivalent":
        return "supports" if result == "equivalent" else "contradicts"
    if result == expect:
        return "supports"
    return "contradicts"  # equivalent where a difference was expected, or the opposite difference


def claim_form(outcomes: Iterable[str], expectations: Iterable[str], enough_runs: bool = True,
               logic: str = "all", checks: Iterable[str] = (), partly: bool = True) -> str:
    """The claim's form from its primary comparisons' outcomes and its checks' outcomes.

    ``checks``: outcomes of checks that validate the whole claim (a contradicted one makes it
    not testable as designed); ``partly``: whether uninformative parts make the claim "partly
    testable" (False gives :func:`parts_form`, the reading of the testable parts alone)."""
    if logic not in LOGICS:
        raise ValueError(f"logic must be one of {LOGICS}, got {logic!r}")
    if "contradicts" in list(checks):
        return "not testable as designed"
    outcomes, expectations = list(outcomes), list(expectations)
    informative = [o for o in outcomes if o != "uninformative"]
    if not informative or not enough_runs:
        return "inconclusive at this scale"
    untestable = partly and len(informative) < len(outcomes)
    sup, con = informative.count("supports"), informative.count("contradicts")
    equivalence = all(e == "equivalent" for e in expectations)
    if logic == "all":
        if con:
            return "not supported"
        if untestable:
            return "partly testable"
        if sup == len(informative):
            return "equivalent within the margin" if equivalence else "holds"
    else:
        if sup:
            return "equivalent within the margin" if equivalence else "holds"
        if con == len(informative):
            return "not supported"
        if untestable:
            return "partly testable"
    rest = [o for o in informative if o != "supports"]
    if rest and all(o == "smaller than the margin" for o in rest):
        return "holds, smaller than the margin"
    if rest and all(o in ("size unclear", "smaller than the margin") for o in rest):
        return "detectable, size unclear"
    return "inconclusive at this power"


#: What a part's form says of the claim it belongs to, when a claim is combined from parts that
#: already have forms (a comparison's form under an equivalence claim, or a sub-claim's verdict).
FORM_OUTCOME = {
    "equivalent": "supports", "equivalent within the margin": "supports", "holds": "supports",
    "holds with a corrected constant": "supports", "holds only under its assumptions": "supports",
    "worse": "contradicts", "better": "contradicts", "not supported": "contradicts", "fails": "contradicts",
    "did not learn": "contradicts", "worse, size unclear": "open", "better, size unclear": "open",
    "fewer seeds learned": "contradicts", "more seeds learned": "contradicts",
    "holds, smaller than the margin": "smaller than the margin", "partly testable": "open",
    "cannot see attention": "uninformative", "control failed": "uninformative",
    "inconclusive": "open", "inconclusive at this power": "open",
    "not comparable": "open", "measured": "open", "pending": "open", "split": "open",
    "detectable, size unclear": "size unclear", "not testable as designed": "open",
    "inconclusive at this scale": "uninformative", "uninformative": "uninformative",
}


def combine_forms(forms: Iterable[str]) -> str:
    """One claim form from the forms of its parts, by the same rule (all of them must hold): each
    part supports, contradicts or leaves the claim open (a ``mixed`` part counts as one of each),
    and :func:`claim_form` decides."""
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


def exact_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Clopper–Pearson interval for a share of ``k`` successes in ``n`` (as fractions)."""

    return clopper_pearson(k, n, level)
