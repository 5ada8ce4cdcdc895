"""How many seeds each registered comparison needs to decide, from the spread and the difference its
runs measured.

For a comparison with at least two stored pairs, the standard deviation of its paired differences
(after removing cell means when it pools cells) is the pilot spread ``sd`` and their mean the
observed difference ``d``.  The plan assumes the true difference is ``d`` (not zero) and asks for
80% power to decide the side of the margin it lies on:

* inside the margin (|d| < margin): the smallest ``n`` for which two one-sided tests at alpha 0.05
  show equivalence within the margin with probability 0.8;
* beyond it (|d| > margin): the smallest ``n`` for which the family-adjusted 95% interval
  (Bonferroni over the claim's ``m`` deciding comparisons) lies beyond the margin with probability
  0.8 (the rule's "worse" or "better").

A difference on the margin's edge cannot be decided at any number of seeds (:data:`UNREACHABLE`);
one that needs more than :data:`MAX_SEEDS` pairs cannot decide with the compute this book has: it
is shown as description, and no further seeds are spent on it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from .evaluate import evaluate_all

#: The most seeds per arm that this book plans for one comparison.
MAX_SEEDS = 10
POWER = 0.8
ALPHA = 0.05
#: Returned by :func:`pairs_needed` when no number of pairs decides at the observed difference.
UNREACHABLE = -1


def tost_power(sd: float, n: int, margin: float, alpha: float = ALPHA, true_diff: float = 0.0) -> float:
    """The probability that TOST at ``alpha`` shows equivalence within ``margin`` with ``n`` pairs of
    spread ``sd`` when the true difference is ``true_diff`` (by the t distribution of the
    estimate's studentised bounds; the standard approximation for planning)."""
    from scipy import stats

    if n < 2 or not math.isfinite(sd):
        return math.nan
    delta = abs(true_diff)
    if delta >= margin:
        return 0.0
    if sd == 0:
        return 1.0
    se = sd / math.sqrt(n)
    df = n - 1
    crit = stats.t.ppf(1 - alpha, df)
    return max(0.0, float(stats.t.cdf((margin - delta) / se - crit, df) + stats.t.cdf((margin + delta) / se - crit, df)
                          - 1))


def beyond_power(sd: float, n: int, margin: float, true_diff: float, alpha: float = ALPHA, m: int = 1) -> float:
    """The probability that the Bonferroni-adjusted (``m`` comparisons) two-sided interval at ``alpha``
    lies beyond ``margin`` on the side of ``true_diff`` with ``n`` pairs of spread ``sd``."""
    from scipy import stats

    if n < 2 or not math.isfinite(sd):
        return math.nan
    delta = abs(true_diff)
    if delta <= margin:
        return 0.0
    if sd == 0:
        return 1.0
    se = sd / math.sqrt(n)
    df = n - 1
    return float(stats.t.cdf((delta - margin) / se - stats.t.ppf(1 - alpha / (2 * m), df), df))


def pairs_needed(sd: float, margin: float, expect: str, observed: float = 0.0, cap: int = 1000,
                 m: int = 1) -> Optional[int]:
    """The pairs a comparison needs at this spread to decide the side of the margin its ``observed``
    difference lies on with 80% power (None when ``sd`` is unknown; :data:`UNREACHABLE` when the
    observed difference sits on the margin's edge; ``cap + 1`` when even ``cap`` pairs are not
    enough).  ``expect`` is kept for the callers that name it; the side follows the data."""
    if sd is None or not math.isfinite(sd):
        return None
    observed = 0.0 if observed is None or not math.isfinite(observed) else observed
    if abs(observed) == margin:
        return UNREACHABLE
    inside = abs(observed) < margin
    for n in range(2, cap + 1):
        power = tost_power(sd, n, margin, true_diff=observed) if inside else \
            beyond_power(sd, n, margin, observed, m=m)
        if power >= POWER:
            return n
    return cap + 1


@dataclass
class DesignRow:
    claim: str
    comparison: str
    role: str
    tier: str
    pair_sd: float
    margin: float
    needed: Optional[int]
    planned: int
    stored: int
    observed: float = math.nan

    @property
    def decides(self) -> Optional[bool]:
        """True when the plan reaches the pairs needed within :data:`MAX_SEEDS`; None without a pilot."""
        if self.needed is None:
            return None
        return self.needed != UNREACHABLE and self.needed <= MAX_SEEDS

    @property
    def plan(self) -> str:
        if self.role != "primary":
            return self.role
        if self.stored == 0 and self.planned > 0:
            return "pending"
        if self.needed is None:
            return "no pilot yet"
        if self.needed == UNREACHABLE:
            return "cannot decide at any seed count: the observed difference is on the margin's edge"
        if self.needed > MAX_SEEDS:
            return f"cannot decide with about {MAX_SEEDS} seeds per arm: description only"
        return "decides" if self.planned >= self.needed else f"needs {self.needed - self.planned} more seeds"


def design_rows(verdicts=None) -> list[DesignRow]:
    """One row per registered comparison with its pilot spread, pairs needed, planned and stored."""

    verdicts = evaluate_all() if verdicts is None else verdicts
    rows = []
    for cid, v in verdicts.items():
        for r in v.comparisons:
            if r.comparison.cited_from is not None:
                continue
            sd = r.sd
            rows.append(DesignRow(cid, r.comparison.id, r.comparison.role, r.comparison.tier, sd, r.margin,
                                  pairs_needed(sd, r.margin, r.comparison.expect, r.mean, m=r.family_size),
                                  r.planned, r.n, r.mean))
    return rows


def design_table(verdicts=None) -> list[dict]:
    """The design table for the status page, with readable headings."""
    out = []
    for d in design_rows(verdicts):
        needed = ("" if d.needed is None else "never" if d.needed == UNREACHABLE else
                  (f"> {1000}" if d.needed > 1000 else str(d.needed)))
        out.append({"claim": d.claim, "comparison": d.comparison, "role": d.role, "tier": d.tier,
                     "pair SD": "" if not math.isfinite(d.pair_sd) else f"{d.pair_sd:.3g}",
                     "observed": "" if not math.isfinite(d.observed) else f"{d.observed:+.3g}",
                     "margin": f"±{d.margin:.3g}", "pairs needed": needed, "planned": d.planned, "stored": d.stored,
                     "plan": d.plan})
    return out
