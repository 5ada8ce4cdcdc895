"""The rules that turn the measurements of chapter 09 (the reviewers' remaining objections) into
verdict forms, with every threshold named once here rather than in the chapter's cells.

Each rule reads numbers the measure functions of chapter 09 (``polyattn.measures.critique_*``)
compute (rank correlations, shares of probe cells, score spreads, Jacobian norms, attention shares,
paired intervals) and returns a form of :data:`polyattn.claims.rule.FORMS`.  Equivalence margins
are not set here: they are read from the claim register.
"""
from __future__ import annotations

from typing import Iterable, Sequence

#: A norm is "lower" than the reference's when it is below it in more than this share of the cells.
MAJORITY = 0.5
#: A norm is shown *not* to explain which activation trains best when the 95% interval of its rank
#: correlation with accuracy, resampling whole activations, lies inside plus or minus this value:
#: no strong rank association (Cohen's "large" correlation, a quarter of the rank variance).
STRONG_RHO = 0.5
#: A power is "trapped" when a short retraining left its scores' spread below this multiple of
#: the spread at initialisation.
TRAPPED_GROWTH = 1.5
#: A Jacobian "explodes" above this multiple of the linear map's.
EXPLODED_FACTOR = 10.0
#: The gradient "vanishes" with the power when its rank correlation with p is at most this ...
VANISH_RHO = -0.8
#: ... and the highest power passes less than this fraction of the linear map's gradient.
VANISH_RATIO = 1e-3
#: Saturation matters in a model when at least this share of a layer's rows saturate.
SATURATED_SHARE = 0.05
#: A token's share of the attention is "amplified" above this multiple of softmax's share.
AMPLIFIED_FACTOR = 2.0


def norm_premise(attn_share_below: float, jac_share_below: float) -> str:
    """"lower", "higher" or "mixed": where the candidate's attention and Jacobian norms sit against
    the reference's, from the share of (later) cells where each is below."""
    if attn_share_below > MAJORITY and jac_share_below > MAJORITY:
        return "lower"
    if attn_share_below < MAJORITY and jac_share_below < MAJORITY:
        return "higher"
    return "mixed"


def norm_explains(low: float, high: float) -> str:
    """What one norm's rank correlation with accuracy says, from its 95% interval resampling whole
    activations: ``"explains"`` (the interval excludes 0: the norm orders the activations by
    accuracy), ``"does not explain"`` (the interval lies inside ``±STRONG_RHO``) or
    ``"undecided"`` (neither, or no interval)."""
    low, high = float(low), float(high)
    if low != low or high != high:
        return "undecided"
    if low > 0 or high < 0:
        return "explains"
    if -STRONG_RHO < low and high < STRONG_RHO:
        return "does not explain"
    return "undecided"


def norms_explain_form(states: Iterable[str]) -> str:
    """"The norms do not explain accuracy", judged on its conclusion from each norm's
    :func:`norm_explains`: one norm that explains accuracy -> "not supported"; every norm shown not
    to -> "holds"; otherwise "inconclusive at this power"."""
    states = list(states)
    if any(s == "explains" for s in states):
        return "not supported"
    if states and all(s == "does not explain" for s in states):
        return "holds"
    return "inconclusive at this power"


def scale_sensitivity_form(intervals: Iterable[Sequence[float]], margin: float) -> str:
    """Sensitivity to a factor in the scale, from the 95% intervals of its effect at each length:
    any interval that excludes zero -> "holds"; all inside ±margin -> "not supported"."""
    intervals = [(float(lo), float(hi)) for lo, hi in intervals]
    if any(lo > 0 or hi < 0 for lo, hi in intervals):
        return "holds"
    if intervals and all(-margin < lo and hi < margin for lo, hi in intervals):
        return "not supported"
    return "inconclusive at this power"


def trapped(spread_initial: float, spread_trained: float) -> bool:
    """True when training left the scores where the initialisation put them."""
    return spread_trained < TRAPPED_GROWTH * spread_initial


def exploded(jacobian: float, jacobian_linear: float) -> bool:
    return jacobian > EXPLODED_FACTOR * jacobian_linear


def powers_gradient_form(rank_correlation: float, ratio_highest_to_linear: float, any_exploded: bool) -> str:
    """Higher powers starve the gradient: it vanishes for small scores (at initialisation) and
    explodes for large ones; both halves -> "holds", one -> "mixed"."""
    vanish = rank_correlation <= VANISH_RHO and ratio_highest_to_linear < VANISH_RATIO
    if vanish and any_exploded:
        return "holds"
    return "mixed" if vanish or any_exploded else "not supported"


def saturation_form(largest_saturated_share: float) -> str:
    """Softmax's saturation starves gradients in the models only where its rows do saturate."""
    return "holds" if largest_saturated_share >= SATURATED_SHARE else "holds only under its assumptions"


def amplified(share: float, softmax_share: float) -> bool:
    return share > AMPLIFIED_FACTOR * softmax_share


def outlier_form(amplified_each: Sequence[bool], loses_more_each: Sequence[bool]) -> str:
    """Polynomials amplify an extreme entry and lose more accuracy to it than softmax: both halves
    for every polynomial -> "holds"; neither for any -> "not supported"; else "mixed"."""
    if all(amplified_each) and all(loses_more_each):
        return "holds"
    if not any(amplified_each) and not any(loses_more_each):
        return "not supported"
    return "mixed"
