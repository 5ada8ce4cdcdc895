"""How many seeds each registered comparison needs to decide, from the spread its runs measured.

For a comparison with at least two stored pairs, the standard deviation of its paired differences
(after removing cell means when it pools cells) is the pilot spread ``sd``. From it:

* an equivalence comparison needs the smallest ``n`` for which two one-sided tests at alpha 0.05
  show equivalence within the margin with probability 0.8 when the true difference is zero;
* a directional comparison ("worse", "better") needs the smallest ``n`` for which the 95% interval
  is no wider than the margin on each side, so that a true difference of twice the margin lands
  beyond the margin (the rule's "worse") about half the time or more, and one of zero is not
  called a difference beyond it.

A comparison that needs more than :data:`MAX_SEEDS` pairs cannot decide with the compute this
book has: it is shown as description, and no further seeds are spent on it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

#: The most seeds per arm that this book plans for one comparison.
MAX_SEEDS = 10
POWER = 0.8
ALPHA = 0.05


def tost_power(sd: float, n: int, margin: float, alpha: float = ALPHA) -> float:
    """The probability that TOST at ``alpha`` shows equivalence within ``margin`` with ``n`` pairs of
    spread ``sd`` when the true difference is zero (exact under normality, by the t distribution
    of the estimate's studentised bounds; the standard approximation for planning)."""
    from scipy import stats

    if n < 2 or not math.isfinite(sd):
        return math.nan
    if sd == 0:
        return 1.0
    se = sd / math.sqrt(n)
    df = n - 1
    crit = stats.t.ppf(1 - alpha, df)
    return max(0.0, float(2 * stats.t.cdf(margin / se - crit, df) - 1))


def pairs_needed(sd: float, margin: float, expect: str, cap: int = 1000) -> Optional[int]:
    """The pairs an ``expect`` comparison needs at this spread (None when ``sd`` is unknown; ``cap + 1``
    when even ``cap`` pairs are not enough)."""
    from scipy import stats

    if sd is None or not math.isfinite(sd):
        return None
    for n in range(2, cap + 1):
        if expect == "equivalent":
            if tost_power(sd, n, margin) >= POWER:
                return n
        elif stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) <= margin:
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

    @property
    def decides(self) -> Optional[bool]:
        """True when the plan reaches the pairs needed within :data:`MAX_SEEDS`; None without a pilot."""
        if self.needed is None:
            return None
        return self.needed <= MAX_SEEDS

    @property
    def plan(self) -> str:
        if self.role != "primary":
            return self.role
        if self.needed is None:
            return "no pilot yet"
        if self.needed > MAX_SEEDS:
            return "cannot decide here: description only"
        return "decides" if self.planned >= self.needed else f"needs {self.needed - self.planned} more seeds"


def design_rows(verdicts=None) -> list[DesignRow]:
    """One row per registered comparison with its pilot spread, pairs needed, planned and stored."""
    from .evaluate import evaluate_all

    verdicts = evaluate_all() if verdicts is None else verdicts
    rows = []
    for cid, v in verdicts.items():
        for r in v.comparisons:
            if r.comparison.cited_from is not None:
                continue
            sd = r.sd
            rows.append(DesignRow(cid, r.comparison.id, r.comparison.role, r.comparison.tier, sd, r.margin,
                                  pairs_needed(sd, r.margin, r.comparison.expect), r.planned, r.n))
    return rows


def design_table(verdicts=None) -> list[dict]:
    """The design table for the status page, with readable headings."""
    out = []
    for d in design_rows(verdicts):
        needed = "" if d.needed is None else (f"> {1000}" if d.needed > 1000 else str(d.needed))
        out.append({"claim": d.claim, "comparison": d.comparison, "role": d.role, "tier": d.tier,
                     "pair SD": "" if not math.isfinite(d.pair_sd) else f"{d.pair_sd:.3g}",
                     "margin": f"±{d.margin:.3g}", "pairs needed": needed, "planned": d.planned, "stored": d.stored,
                     "plan": d.plan})
    return out
