"""Did a result survive more training?  A claim registered on a longer grid, read beside the same
comparisons on the book's shorter grid.

    v = evaluate("lra_long")                        # the register's verdict, longer runs
    pairs = shorter_pairs(v)                        # each comparison at both budgets
    budget_rows(pairs, "book steps", "more steps")  # a table row per comparison
    budget_summary(pairs)                           # how many gaps hold, close, ... in words

The shorter grid contributes numbers only (paired difference, interval, the arms' means): the
verdict is the register's, on the longer runs, so the page states one judgement per comparison.
What the longer budget did to the shorter one's reading follows from that verdict:
:func:`change` says whether a gap *holds*, *closes* (within the margin), *reverses*, or is still
*open* at this power.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional

from .evaluate import ClaimVerdict, ComparisonResult, compare
from .report import key_cell
from .spec import Arm, Comparison, RegisteredClaim

#: The tag a longer grid's comparison labels end with; the sentences name the budgets instead.
LONGER_TAG = " (longer)"

#: What the longer runs' result says of the comparison, by the register's result word.
CHANGES = {"worse": "holds", "did not learn": "holds", "equivalent": "closes", "better": "reverses",
           "worse, size unclear": "narrows", "better, size unclear": "reverses",
           "inconclusive": "open", "split": "open", "uninformative": "uninformative",
           "fewer seeds learned": "holds", "more seeds learned": "reverses", "cannot see attention": "uninformative",
           "control failed": "uninformative"}


def on_grid(comparison: Comparison, grid: str, **fields) -> Comparison:
    """The same comparison on the runs of another ``grid``, both arms narrowed by ``fields``
    (for example ``n_mode="row"`` where that grid also trains another reading of N)."""
    def arm(a: Arm) -> Arm:
        return Arm(grid, {**a.fields, **fields})

    return dataclasses.replace(comparison, candidate=arm(comparison.candidate), baseline=arm(comparison.baseline))


@dataclasses.dataclass
class BudgetPair:
    shorter: ComparisonResult
    longer: ComparisonResult  # evaluated by the register: result, Holm p and outcome filled in

    @property
    def label(self) -> str:
        """The comparison's label without the longer grid's tag."""
        return self.longer.comparison.label.removesuffix(LONGER_TAG)


def budget_pairs(verdict: ClaimVerdict, shorter_grid: str, root: Optional[Path] = None, **fields) -> list[BudgetPair]:
    """Each comparison of ``verdict`` (a claim on the longer grid) with its paired statistics on
    ``shorter_grid`` (arms narrowed by ``fields``), in the claim's order."""
    claim: RegisteredClaim = verdict.claim
    out = []
    for r in verdict.comparisons:
        short = compare(on_grid(r.comparison, shorter_grid, **fields), claim.margin, root, "book",
                        claim.chance, claim.chance_band)
        out.append(BudgetPair(short, r))
    return out


#: For each claim on a longer grid: the book's shorter grid with the same comparisons, and the
#: fields that narrow it to the same runs (the LRA grid also trains N = the padded length).
SHORTER_GRID = {"lra_long": ("lra", {"n_mode": "row"})}


def shorter_pairs(verdict: ClaimVerdict, root: Optional[Path] = None) -> list[BudgetPair]:
    """:func:`budget_pairs` on the claim's shorter grid of :data:`SHORTER_GRID`."""
    grid, fields = SHORTER_GRID[verdict.claim.id]
    return budget_pairs(verdict, grid, root, **fields)


def change(pair: BudgetPair) -> str:
    """``holds``, ``closes``, ``reverses``, ``open``, ``uninformative``, or ``not run yet`` (fewer than
    two paired runs at the longer budget)."""
    if pair.longer.n < 2:
        return "not run yet"
    return CHANGES[pair.longer.result]


def _estimate(r: ComparisonResult) -> str:
    if r.n < 2:
        return f"{r.n} of {r.planned} pairs stored"
    return f"{key_cell(r)} ({r.n} pairs)"


def _means(r: ComparisonResult) -> str:
    if r.n < 2:
        return ""
    pct = "%" if r.unit == "points" else ""
    return f"{r.candidate_mean:.1f}{pct} / {r.baseline_mean:.1f}{pct}"


def budget_rows(pairs: list[BudgetPair], shorter: str, longer: str,
                chance: Optional[dict[str, float]] = None) -> list[dict]:
    """One row per comparison for a table: the difference with its 95% interval and the two arms'
    means at the ``shorter`` and the ``longer`` budget (column titles such as "book steps"), the
    register's result on the longer runs, and :func:`change`.  With ``chance`` (the task's chance
    level in the metric's unit, by the arms' ``dataset``), a column gives it beside the means, so
    that a reader sees an arm that sits at chance even where the claim registered no chance level."""
    def chance_cell(p: BudgetPair) -> str:
        level = chance.get(p.longer.comparison.candidate.fields.get("dataset")) if chance else None
        return "" if level is None else f"{level:.1f}{'%' if p.longer.unit == 'points' else ''}"

    return [{"Comparison": p.label, f"{shorter}": _estimate(p.shorter), f"{shorter}: means": _means(p.shorter),
             f"{longer}": _estimate(p.longer), f"{longer}: means": _means(p.longer),
             **({"chance": chance_cell(p)} if chance is not None else {}),
             "Result (longer)": f"{p.longer.result}{p.longer.qualifier}" if p.longer.n >= 2 else "",
             "The gap": change(p)} for p in pairs]


def budget_summary(pairs: list[BudgetPair]) -> str:
    """How many comparisons' gaps hold, close, reverse or stay open with more training, in words."""
    counts = {}
    for p in pairs:
        counts[change(p)] = counts.get(change(p), 0) + 1
    order = ("holds", "narrows", "closes", "reverses", "open", "uninformative", "not run yet")
    words = {"holds": "the gap holds", "narrows": "a gap remains, of unclear size against the margin",
             "closes": "it closes to within the margin", "reverses": "the order reverses",
             "open": "it is still open at this power", "uninformative": "neither arm learned",
             "not run yet": "the longer runs are not stored yet"}
    parts = [f"in {counts[k]} of {len(pairs)} {words[k]}" for k in order if counts.get(k)]
    return ("With more training, " + "; ".join(parts) + ".") if parts else ""
