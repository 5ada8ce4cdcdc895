"""A registered claim computed from the stored records: each comparison's paired statistics, its
result and outcome under :mod:`polyattn.claims.rule`, and the claim's form.

Only the register and the records are read: each arm's runs are the configs of its grid (at the
book preset) that match the arm's fields, loaded from ``data/results`` as evidence (clean-tree
records only); a run not stored yet is counted as planned, not computed.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from ..analysis.stats import holm, minimal_detectable_effect
from ..grids import grid
from ..metric_specs import FINAL_METRICS
from ..results import InvalidRecord, load, record_path
from . import rule
from .register import REGISTER
from .register import claim as _claim
from .spec import Arm, Comparison, Gate, RegisteredClaim


def final_value(record: dict, metric: str) -> float:
    """The metric's last recorded value in a run (NaN when the run never recorded it).

    A dotted name (``sinks.sink_rate``) is a measurement the run stored under ``final`` at its end."""
    if metric in FINAL_METRICS:
        v = record.get("final") or {}
        for key in metric.split("."):
            v = v.get(key) if isinstance(v, dict) else None
        return math.nan if v is None else float(v)
    for row in reversed(record.get("metrics") or []):
        v = row.get(metric)
        if v is not None:
            return float(v)
    return math.nan


def _metric_spec(record: dict, metric: str) -> dict:
    if metric in FINAL_METRICS:
        return FINAL_METRICS[metric].as_dict()
    for m in record.get("metrics_spec") or []:
        if m["name"] == metric:
            return m
    raise ValueError(f"records of {record.get('experiment')!r} declare no metric {metric!r}; they declare "
                     f"{[m['name'] for m in record.get('metrics_spec') or []]}")


@dataclass
class ArmRuns:
    planned: int
    records: dict  # (cell, seed) -> record (valid evidence); cell = the pooled fields' values


def arm_runs(arm: Arm, root: Optional[Path] = None, preset: str = "book", pool_over: tuple = ()) -> ArmRuns:
    """The stored runs of one arm: the grid's configs that match its fields, loaded when stored,
    keyed by (the values of the ``pool_over`` fields, seed)."""

    configs = [c for c in grid(arm.grid)(preset, None) if arm.matches(dataclasses.asdict(c))]
    out = {}
    for c in configs:
        path = record_path(c, root)
        if not path.exists():
            continue
        key = (tuple(str(getattr(c, f)) for f in pool_over), c.seed)
        try:
            out[key] = load(path, c, evidence=root is None or preset != "smoke")
        except InvalidRecord:
            continue
    return ArmRuns(len(configs), out)


def _display(values: np.ndarray, spec: dict, transform: str) -> np.ndarray:
    if transform == "log10":
        return np.log10(values)
    return values * float(spec.get("scale") or 1.0)


@dataclass
class ComparisonResult:
    comparison: Comparison
    n: int
    planned: int
    diverged: int
    unit: str
    higher_is_better: bool
    candidate_mean: float
    baseline_mean: float
    mean: float
    ci_low: float
    ci_high: float
    ci90_low: float
    ci90_high: float
    t_p: float
    tost_p: float
    equivalent: bool
    mde: float
    holm_p: float = math.nan
    result: str = "inconclusive"
    qualifier: str = ""
    outcome: str = "open"
    differences: list = field(default_factory=list)
    seeds: list = field(default_factory=list)
    margin: float = math.nan
    df: int = 0
    sd: float = math.nan
    #: the most a difference can be in the metric's display unit (100 points of accuracy), else infinite
    metric_range: float = math.inf
    #: whether most of each arm's seeds learned the task (None: split evenly, or no seeds)
    candidate_learned: Optional[bool] = True
    baseline_learned: Optional[bool] = True
    #: (candidate seeds that learned, baseline seeds that learned, pairs) when the task has a chance level
    learned_counts: Optional[tuple] = None
    split: bool = False
    #: a pooled comparison's per-cell (mean, 95% low, high, pairs), and whether cells differ in sign
    cell_estimates: Optional[dict] = None
    cells_disagree: bool = False
    #: the interval judged against the margin, with the family's adjustment (Bonferroni: level
    #: 1 - alpha/m), the family's size m, and the adjustment in words
    adj_low: float = math.nan
    adj_high: float = math.nan
    family_size: int = 1
    adjustment: str = ""
    #: the floor the baseline had to clear (its name), and whether it did not
    gate: Optional[str] = None
    gate_failed: bool = False
    #: why the gate failed, in words ("" while it holds)
    gate_reason: str = ""
    #: the two-sided Fisher exact p of the learned counts (NaN unless an arm is split)
    counts_p: float = math.nan
    #: a check of this comparison that is open or has no runs, in words ("" when none)
    check_note: str = ""
    #: the label of the failed check that voided this comparison (None when none did)
    voided_by: Optional[str] = None
    #: why that check voided it, in words, and the check's own result
    voided_why: str = ""
    voided_check: Optional["ComparisonResult"] = None

    def as_row(self) -> dict:
        c = self.comparison
        return {"claim comparison": c.label, "id": c.id, "tier": c.tier, "expects": c.expect, "pairs": self.n,
                "planned": self.planned, "difference": self.mean, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "ci90_low": self.ci90_low, "ci90_high": self.ci90_high, "holm_p": self.holm_p,
                "tost_p": self.tost_p, "mde": self.mde, "result": self.result + self.qualifier,
                "outcome": self.outcome, "unit": self.unit, "adj_low": self.adj_low, "adj_high": self.adj_high,
                "family_size": self.family_size, "gate": self.gate, "gate_failed": self.gate_failed,
                "counts_p": self.counts_p, "check": self.check_note or (f"voided by {self.voided_by}"
                                                                          if self.voided_by else "")}


def compare(comp: Comparison, margin: float, root: Optional[Path] = None, preset: str = "book",
            chance: Optional[float] = None, band: float = 2.0, gate: Optional[Gate] = None) -> ComparisonResult:
    """Paired statistics of one comparison (Holm and the outcome are filled in by :func:`evaluate`).

    With a ``gate`` (the comparison's own, else the one given), seeds are judged against its floor
    instead of the chance level: a seed learned when it clears the floor; a baseline that does
    not (most of its seeds) fails the gate."""
    cand = arm_runs(comp.candidate, root, preset, comp.pool_over)
    base = arm_runs(comp.baseline, root, preset, comp.pool_over)
    spec_rec = next(iter(cand.records.values()), None) or next(iter(base.records.values()), None)
    spec = _metric_spec(spec_rec, comp.metric) if spec_rec else {"scale": 1.0, "unit": "", "higher_is_better": True}
    unit = "log10" if comp.transform == "log10" else ("points" if spec.get("unit") == "%" else spec.get("unit", ""))
    seeds = sorted(set(cand.records) & set(base.records))
    ok = [s for s in seeds if cand.records[s]["status"] == "ok" and base.records[s]["status"] == "ok"]
    diverged = sum(cand.records[s]["status"] != "ok" for s in seeds)
    c_vals = _display(np.array([final_value(cand.records[s], comp.metric) for s in ok]), spec, comp.transform)
    b_vals = _display(np.array([final_value(base.records[s], comp.metric) for s in ok]), spec, comp.transform)
    d = c_vals - b_vals
    cells = [k[0] for k in ok]
    n = len(d)
    margin = comp.margin if comp.margin is not None else margin
    mean, lo, hi, lo90, hi90, t_p, tost_p, eq, mde = paired_summary(d, cells, margin)
    res = ComparisonResult(comp, n, min(cand.planned, base.planned), diverged, unit,
                           bool(spec.get("higher_is_better", True)),
                           float(np.mean(c_vals)) if n else math.nan, float(np.mean(b_vals)) if n else math.nan,
                           mean, lo, hi, lo90, hi90, t_p, tost_p, eq, mde, differences=d.tolist(),
                           seeds=[k[1] for k in ok])
    chance = comp.chance if comp.chance is not None else chance
    band = comp.chance_band if comp.chance_band is not None else band
    gate = comp.gate if comp.gate is not None else gate
    if gate is not None:
        chance, band = gate.level, gate.band
        res.gate = gate.name
    res.margin = margin
    res.df = n - (len(set(cells)) or 1)
    res.sd = _residual_sd(d, cells)
    res.metric_range = 100.0 if spec.get("unit") == "%" and comp.transform == "identity" else math.inf
    hib = res.higher_is_better
    res.candidate_learned = rule.arm_learned(c_vals, chance, band, hib)
    res.baseline_learned = rule.arm_learned(b_vals, chance, band, hib)
    res.learned_counts = (int(sum(rule.learned(v, chance, band, hib) for v in c_vals)),
                          int(sum(rule.learned(v, chance, band, hib) for v in b_vals)), n) if chance is not None else None
    res.split = chance is not None and any(0 < k < n for k in res.learned_counts[:2]) if n else False
    if res.split:
        res.counts_p = rule.fisher_exact_p(*res.learned_counts)
    if comp.baseline_null is not None and len(b_vals) and abs(float(np.mean(b_vals)) - comp.baseline_null) <= band:
        res.candidate_learned = res.baseline_learned = False  # nothing to improve on: never judged
        res.split = False
    if gate is not None and n and not res.split:
        moved = _moved_from_own(gate, comp, b_vals, spec, root, preset)
        tol = gate.within_of[2] if gate.within_of is not None else math.inf
        res.gate_failed = res.baseline_learned is not True or moved > tol
        if res.baseline_learned is not True:
            res.gate_reason = f"no model beat {gate.name.split(' (')[0]}"
        elif res.gate_failed:
            base = comp.label.split(" − ", 1)[1].split(",")[0] if " − " in comp.label else "the baseline"
            res.gate_reason = f"{base} fell {moved:.2f} {unit} behind {gate.within_name} (gate: {tol:g})"
    res.cell_estimates = _cell_estimates(d, cells, margin) if comp.pool_over else None
    res.cells_disagree = _disagree(res.cell_estimates) if comp.pool_over else False
    return res


def _moved_from_own(gate: Gate, comp: Comparison, b_vals: np.ndarray, spec: dict, root, preset: str) -> float:
    """How far the baseline lies from its own arm's result with one field changed
    (``gate.within_of``), in the direction of a worse result: positive when the baseline is worse
    than its reference; 0.0 without ``within_of``, or while that arm has no runs."""
    if gate.within_of is None:
        return 0.0
    field_, value, _ = gate.within_of
    ref = arm_runs(Arm(comp.baseline.grid, {**comp.baseline.fields, field_: value}), root, preset)
    vals = [final_value(r, comp.metric) for r in ref.records.values() if r["status"] == "ok"]
    if not vals:
        return 0.0
    ref_mean = float(np.mean(_display(np.array(vals), spec, comp.transform)))
    worse = float(np.mean(b_vals)) - ref_mean
    return -worse if spec.get("higher_is_better", True) else worse


def _residual_sd(d: np.ndarray, cells: list) -> float:
    """The spread of the differences after removing each cell's mean (NaN without a degree of freedom)."""
    df = len(d) - (len(set(cells)) or 1)
    if df < 1:
        return math.nan
    resid = d.astype(float).copy()
    for cell in set(cells):
        idx = [i for i, c in enumerate(cells) if c == cell]
        resid[idx] = d[idx] - d[idx].mean()
    return float(math.sqrt((resid ** 2).sum() / df))


def _cell_estimates(d: np.ndarray, cells: list, margin: float) -> dict:
    """Each cell's (mean, 95% low, high, pairs) of a pooled comparison."""
    out = {}
    for cell in dict.fromkeys(cells):
        idx = [i for i, c in enumerate(cells) if c == cell]
        est = paired_summary(d[idx], [cell] * len(idx), margin)
        out[cell] = (est[0], est[1], est[2], len(idx))
    return out


def _disagree(cells: dict) -> bool:
    """Two cells differ in sign beyond their 95% intervals (one interval above zero, another below):
    then no pooled number stands for them."""
    above = [c for c, (_, lo, _, _) in cells.items() if math.isfinite(lo) and lo > 0]
    below = [c for c, (_, _, hi, _) in cells.items() if math.isfinite(hi) and hi < 0]
    return bool(above and below)


def paired_summary(d: np.ndarray, cells: list, margin: float, alpha: float = 0.05) -> tuple:
    """(mean, 95% low, high, 90% low, high, t-test p, TOST p, equivalent, detectable effect) of
    paired differences; with several cells, each cell's mean is removed from the spread (fixed
    effects, ``n - cells`` degrees of freedom) and the estimate is the mean over all pairs."""
    from scipy import stats

    n = len(d)
    nan = math.nan
    if n == 0:
        return nan, nan, nan, nan, nan, nan, nan, False, nan
    mean = float(np.mean(d))
    df = n - (len(set(cells)) or 1)
    if df < 1:
        return mean, nan, nan, nan, nan, nan, nan, False, nan
    sd = _residual_sd(d, cells)
    se = sd / math.sqrt(n)
    half95 = float(stats.t.ppf(0.975, df) * se)
    half90 = float(stats.t.ppf(1 - alpha, df) * se)
    if se > 0:
        t_p = float(2 * stats.t.sf(abs(mean) / se, df))
        tost_p = float(max(stats.t.sf((mean + margin) / se, df), stats.t.cdf((mean - margin) / se, df)))
    else:
        t_p, tost_p = (0.0 if mean != 0 else 1.0), (0.0 if abs(mean) < margin else 1.0)
    mde = minimal_detectable_effect(sd, n, df=df)
    return mean, mean - half95, mean + half95, mean - half90, mean + half90, t_p, tost_p, bool(tost_p < alpha), mde


@dataclass
class ClaimVerdict:
    claim: RegisteredClaim
    comparisons: list
    form: str
    tier_forms: dict
    detectable: Optional[float]
    #: the form of the testable parts alone, when the claim is partly testable
    parts_form: str = ""
    #: the deciding primaries that could not be tested, with why ("label: reason")
    untestable: list = field(default_factory=list)
    #: the checks that are open or have no runs, in words
    open_checks: list = field(default_factory=list)
    #: one entry per comparison measured at several tiers (:func:`directions`)
    directions: list = field(default_factory=list)
    #: the multiplicity rule in words, with the deciding family's size
    family: str = ""

    @property
    def rows(self) -> list[dict]:
        return [c.as_row() for c in self.comparisons]

    @property
    def runs_stored(self) -> tuple[int, int]:
        return sum(c.n for c in self.comparisons), sum(c.planned for c in self.comparisons)


#: The multiplicity rule, in words, for summaries: the same adjustment for the test and the interval.
ADJUSTMENT = "Holm-adjusted tests with Bonferroni-adjusted intervals over the deciding comparisons"


def _informative(r: ComparisonResult) -> bool:
    return (r.n >= 2 and not r.gate_failed and not (r.candidate_learned is False and r.baseline_learned is False)
            and r.voided_by is None and math.isfinite(r.counts_p if r.split else r.t_p))


def _adjusted_interval(r: ComparisonResult, alpha: float, m: int) -> tuple[float, float]:
    """The two-sided interval at level 1 - alpha/m around the estimate (Bonferroni for m tests)."""
    from scipy import stats

    if r.df < 1 or not math.isfinite(r.ci_high):
        return math.nan, math.nan
    se = (r.ci_high - r.mean) / float(stats.t.ppf(0.975, r.df))
    half = float(stats.t.ppf(1 - alpha / (2 * m), r.df)) * se
    return r.mean - half, r.mean + half


def _judge(rows: list, claim: RegisteredClaim, families: list) -> None:
    """Holm within each family, the adjusted interval, the result, qualifier and outcome of each row."""
    member = {}
    for fam in families:
        judged = [r for r in fam if _informative(r)]
        ps = [r.counts_p if r.split else r.t_p for r in judged]
        adjusted = holm(ps) if judged else []
        for r, p in zip(judged, adjusted):
            member[id(r)] = (float(p), len(judged))
    for r in rows:
        p, m = member.get(id(r), (r.counts_p if r.split else r.t_p, 1))
        r.holm_p, r.family_size = (p if r.comparison.role != "primary" or id(r) in member else math.nan), m
        r.adj_low, r.adj_high = _adjusted_interval(r, claim.alpha, m)
        r.adjustment = f"Bonferroni, {m} comparisons" if m > 1 else ""
        if r.voided_by is not None:
            continue
        r.result = rule.comparison_result(
            n=r.n, mean=r.mean, ci_low=r.adj_low, ci_high=r.adj_high, holm_p=r.holm_p, equivalent=r.equivalent,
            alpha=claim.alpha, margin=r.margin, candidate_learned=r.candidate_learned,
            baseline_learned=r.baseline_learned, split=r.split, higher_is_better=r.higher_is_better,
            counts=r.learned_counts if r.split else None, gate_failed=r.gate_failed)
        if r.cells_disagree and r.result not in ("uninformative", "did not learn"):
            r.result = "inconclusive"  # cells differ in sign beyond their intervals: no pooled number
        r.qualifier = rule.qualifier(r.result, mean=r.mean, holm_p=r.holm_p, alpha=claim.alpha,
                                     higher_is_better=r.higher_is_better)
        r.outcome = rule.outcome(r.result, r.comparison.expect, r.qualifier)
        # what these seeds detect at the family's level, never beyond the metric's range
        if r.comparison.role == "primary" and r.n >= 2:
            r.mde = min(float(minimal_detectable_effect(r.sd, r.n, alpha=claim.alpha / m, df=r.df)), r.metric_range)


def _validated(check: ComparisonResult, results: list) -> list:
    names = check.comparison.validates
    if not names:
        return [r for r in results if r.comparison.role == "primary"]
    return [r for r in results if r.comparison.role != "check" and
            (r.comparison.id in names or f"tier:{r.comparison.tier}" in names)]


def _apply_checks(results: list) -> bool:
    """Each check on the comparisons it validates: a failed positive control (expects the ablated arm
    worse) voids every result there that is not a detected difference ("cannot see attention"); a
    failed control that must not move voids them all ("control failed"); an open check, or one
    without runs, is written on each.  True when some comparison was voided."""
    voided = False
    for chk in (r for r in results if r.comparison.role == "check"):
        targets = _validated(chk, results)
        label = chk.comparison.label
        if chk.n < 2:
            for t in targets:
                t.check_note = f"its check ({label}) has no runs yet"
            continue
        if chk.outcome == "contradicts":
            positive = chk.comparison.expect != "equivalent"
            for t in targets:
                if t.voided_by is not None:
                    continue
                if positive and t.result in rule.DIFFERENCES:
                    t.check_note = f"its positive control ({label}) failed; the difference found here still counts"
                    continue
                t.voided_by, t.voided_check, voided = label, chk, True
                t.result, t.qualifier, t.outcome = ("cannot see attention" if positive else "control failed"), "", \
                    "uninformative"
        elif chk.outcome != "supports":
            positive = chk.comparison.expect != "equivalent"
            for t in targets:
                if positive and t.voided_by is None and _equivalence(t):
                    # attention ablated is not shown beyond the margin: "within the margin" cannot tell
                    # this comparison's arms from a model without attention
                    t.voided_by, t.voided_check, voided = label, chk, True
                    t.voided_why = _NOT_BEYOND.format(
                        chk=label, result=chk.result, margin=f"{chk.margin:g}")
                    t.result, t.qualifier, t.outcome = "cannot see attention", "", "uninformative"
                    continue
                t.check_note = f"its check ({label}) is open: {chk.result}"
    return voided


#: Why an equivalence is void when its positive control is open.
_NOT_BEYOND = ("its positive control ({chk}: {result}) is not shown beyond the ±{margin} margin, so "
               "agreement within that margin cannot tell attention from none")


def _equivalence(r: ComparisonResult) -> bool:
    """A result that reads as agreement within the margin (a harm or gain found inside the margin still
    counts as a difference unless the comparison expects equivalence)."""
    return r.result == "equivalent" and (not r.qualifier or r.comparison.expect == "equivalent")


def _se(r: ComparisonResult) -> float:
    from scipy import stats

    if r.df < 1 or not math.isfinite(r.ci_high):
        return math.nan
    return (r.ci_high - r.mean) / float(stats.t.ppf(0.975, r.df))


def directions(results: list, deciding_tier: Optional[str]) -> list[dict]:
    """For each comparison measured at several tiers (the same candidate and baseline activations
    on the same metric): how many tiers point each way, and the inverse-variance pooled estimate
    (normal 95% interval) of the deciding tiers (every tier when none decides)."""
    groups: dict = {}
    for r in results:
        if (r.comparison.role == "check" or r.n < 2 or not math.isfinite(r.mean) or r.outcome == "uninformative"
                or r.split):
            continue  # only comparisons that say something, as mean differences
        c = r.comparison
        key = (repr(c.candidate.fields.get("activation")), repr(c.candidate.fields.get("n_mode")),
               repr(c.baseline.fields.get("activation")), c.metric)
        groups.setdefault(key, []).append(r)
    out = []
    for rows in groups.values():
        tiers = list(dict.fromkeys(r.comparison.tier for r in rows))
        if len(tiers) < 2:
            continue
        hib = rows[0].higher_is_better
        favour = sum((r.mean > 0) == hib for r in rows if r.mean != 0)
        against = sum((r.mean < 0) == hib for r in rows if r.mean != 0)
        pool = [r for r in rows if deciding_tier is None or r.comparison.tier == deciding_tier]
        ws = [(r.mean, 1 / _se(r) ** 2) for r in pool if math.isfinite(_se(r)) and _se(r) > 0]
        est = lo = hi = math.nan
        if len(pool) == 1:
            est, lo, hi = pool[0].mean, pool[0].ci_low, pool[0].ci_high   # one tier: its own t-interval
        elif ws:
            wsum = sum(w for _, w in ws)
            est = sum(x * w for x, w in ws) / wsum
            half = 1.959964 / math.sqrt(wsum)
            lo, hi = est - half, est + half
        out.append({"label": rows[0].comparison.label, "ids": [r.comparison.id for r in rows], "tiers": tiers,
                    "favour_candidate": favour, "favour_baseline": against, "pooled": est, "pooled_low": lo,
                    "pooled_high": hi, "pooled_tiers": [r.comparison.tier for r in pool], "unit": rows[0].unit,
                    "higher_is_better": hib})
    return out


def evaluate(claim_or_id, root: Optional[Path] = None, preset: str = "book") -> ClaimVerdict:
    """The claim's comparisons, their outcomes, and its form, from the stored records.

    One multiplicity rule: Holm runs over the claim's deciding comparisons (its informative,
    gated primary comparisons of the deciding tier), and the interval judged against the margin
    is the Bonferroni interval of the same family; the primaries of tiers that do not decide form
    a family per tier; checks are judged at alpha alone; a cited comparison keeps the result it
    has in the claim that owns it.  Checks then void or annotate the comparisons they validate
    (:func:`_apply_checks`), and the family is formed again without the voided ones."""
    claim = _claim(claim_or_id) if isinstance(claim_or_id, str) else claim_or_id
    results = []
    for c in claim.comparisons:
        if c.cited_from is not None:
            owner_id, cited_id = c.cited_from.split(":")
            owner = evaluate(owner_id, root, preset)
            cited = next((r for r in owner.comparisons if r.comparison.id == cited_id), None)
            if cited is None:
                raise ValueError(f"claim {claim.id!r} cites {c.cited_from!r}: {owner_id!r} has no comparison "
                                 f"{cited_id!r}")
            results.append(dataclasses.replace(cited, comparison=c,
                                               outcome=rule.outcome(cited.result, c.expect, cited.qualifier)))
            continue
        results.append(compare(c, claim.margin, root, preset, claim.chance, claim.chance_band, claim.gate))
    own = [r for r in results if r.comparison.cited_from is None]
    primary = [r for r in results if r.comparison.role == "primary"]
    tier = claim.deciding_tier
    if tier is not None and not any(r.n >= 2 for r in primary if r.comparison.tier == tier):
        tier = None  # the deciding tier has no runs yet: every tier counts, and the row says so

    def families():
        deciding = [r for r in own if r.comparison.role == "primary" and (tier is None or r.comparison.tier == tier)]
        rest = [r for r in own if r.comparison.role == "primary" and r not in deciding]
        return [deciding] + [[r for r in rest if r.comparison.tier == t]
                             for t in dict.fromkeys(r.comparison.tier for r in rest)]

    _judge(own, claim, families())
    if _apply_checks(results):
        _judge(own, claim, families())  # the voided comparisons leave their family
    tiers = list(dict.fromkeys(r.comparison.tier for r in primary))
    tier_forms = {}
    for t in tiers:
        sub = [r for r in primary if r.comparison.tier == t]
        tier_forms[t] = rule.claim_form([r.outcome for r in sub], [r.comparison.expect for r in sub],
                                        enough_runs=any(r.n >= 2 for r in sub), logic=claim.logic)
    decide = [r for r in primary if tier is None or r.comparison.tier == tier]
    enough = any(r.n >= 2 for r in decide)
    outcomes, expects = [r.outcome for r in decide], [r.comparison.expect for r in decide]
    form = rule.claim_form(outcomes, expects, enough_runs=enough, logic=claim.logic)
    with_runs = [r for r in decide if r.n >= 2]
    if with_runs and all(r.voided_by is not None for r in with_runs):
        form = "not testable as designed"
    elif sum(r.n for r in primary) == 0 and sum(r.planned for r in primary) > 0:
        form = "pending"
    parts = rule.claim_form(outcomes, expects, enough_runs=enough, logic=claim.logic, partly=False)
    untestable = [f"{r.comparison.label}: {_why_untestable(r)}" for r in decide if r.n >= 2
                  and r.outcome == "uninformative"]
    open_checks = [f"{r.comparison.label}: " + ("no runs yet" if r.n < 2 else r.result)
                   for r in results if r.comparison.role == "check" and (r.n < 2 or r.outcome not in
                                                                        ("supports", "contradicts"))]
    mde = rule.detectable(r.mde for r in decide if r.outcome == "open")
    m = max(1, sum(_informative(r) for r in decide if r.comparison.cited_from is None))
    return ClaimVerdict(claim, results, form, tier_forms, mde, parts_form=parts if form == "partly testable" else "",
                        untestable=untestable, open_checks=open_checks, directions=directions(results, tier),
                        family=f"{ADJUSTMENT} ({m} in this claim's family)")


def _why_untestable(r: ComparisonResult) -> str:
    if r.voided_why:
        return r.voided_why
    if r.voided_by is not None:
        return ("its positive control failed, so it cannot see attention" if r.result == "cannot see attention"
                else "its control moved") + f" ({r.voided_by})"
    if r.gate_failed:
        return f"uninformative: the models did not learn beyond {r.gate}"
    if r.comparison.baseline_null is not None and r.candidate_learned is False and r.baseline_learned is False:
        return "the baseline has nothing to improve on"
    return "neither arm learned the task"


def evaluate_all(root: Optional[Path] = None, preset: str = "book") -> dict[str, ClaimVerdict]:
    return {cid: evaluate(c, root, preset) for cid, c in REGISTER.items()}
