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
from ..metric_specs import FINAL_METRICS
from . import rule
from .register import REGISTER
from .register import claim as _claim
from .spec import Arm, Comparison, RegisteredClaim


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
    from ..experiments import GRIDS
    from ..results import InvalidRecord, load, record_path

    if arm.grid not in GRIDS:
        raise ValueError(f"unknown grid {arm.grid!r}; grids: {sorted(GRIDS)}")
    configs = [c for c in GRIDS[arm.grid](preset, None) if arm.matches(dataclasses.asdict(c))]
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

    def as_row(self) -> dict:
        c = self.comparison
        return {"claim comparison": c.label, "id": c.id, "tier": c.tier, "expects": c.expect, "pairs": self.n,
                "planned": self.planned, "difference": self.mean, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "ci90_low": self.ci90_low, "ci90_high": self.ci90_high, "holm_p": self.holm_p,
                "tost_p": self.tost_p, "mde": self.mde, "result": self.result + self.qualifier,
                "outcome": self.outcome, "unit": self.unit}


def compare(comp: Comparison, margin: float, root: Optional[Path] = None, preset: str = "book",
            chance: Optional[float] = None, band: float = 2.0) -> ComparisonResult:
    """Paired statistics of one comparison (Holm and the outcome are filled in by :func:`evaluate`)."""
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
    res.margin = margin
    res._at_chance = (_at_chance(c_vals, chance, band), _at_chance(b_vals, chance, band))
    if _at_chance(b_vals, comp.baseline_null, band):
        res._at_chance = (True, True)  # nothing to improve on: counted as uninformative, never judged
    return res


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
    k = len(set(cells)) or 1
    df = n - k
    if df < 1:
        return mean, nan, nan, nan, nan, nan, nan, False, nan
    resid = d.copy()
    for cell in set(cells):
        idx = [i for i, c in enumerate(cells) if c == cell]
        resid[idx] = d[idx] - d[idx].mean()
    sd = float(math.sqrt((resid ** 2).sum() / df))
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


def _at_chance(values: np.ndarray, chance: Optional[float], band: float) -> bool:
    return chance is not None and len(values) > 0 and bool(abs(float(np.mean(values)) - chance) <= band)


@dataclass
class ClaimVerdict:
    claim: RegisteredClaim
    comparisons: list
    form: str
    tier_forms: dict
    detectable: Optional[float]

    @property
    def rows(self) -> list[dict]:
        return [c.as_row() for c in self.comparisons]

    @property
    def runs_stored(self) -> tuple[int, int]:
        return sum(c.n for c in self.comparisons), sum(c.planned for c in self.comparisons)


def _family(claim: RegisteredClaim) -> list[Comparison]:
    if claim.family is None:
        return list(claim.comparisons)
    return list(_claim(claim.family).comparisons)


def evaluate(claim_or_id, root: Optional[Path] = None, preset: str = "book") -> ClaimVerdict:
    """The claim's comparisons, their outcomes, and its form, from the stored records."""
    claim = _claim(claim_or_id) if isinstance(claim_or_id, str) else claim_or_id
    results = [compare(c, claim.margin, root, preset, claim.chance, claim.chance_band) for c in claim.comparisons]
    family = _family(claim)
    if claim.family is None:
        pvals = [r.t_p for r in results]
    else:
        fam = {c.id: compare(c, claim.margin, root, preset) for c in family}
        pvals = [r.t_p for r in fam.values()]
    adjusted = holm(pvals) if pvals else []
    if claim.family is None:
        holm_of = {r.comparison.id: p for r, p in zip(results, adjusted)}
    else:
        holm_of = dict(zip(fam, adjusted))
    for r in results:
        r.holm_p = float(holm_of.get(r.comparison.id, math.nan))
        at_c, at_b = r._at_chance
        r.result = rule.comparison_result(n=r.n, mean=r.mean, holm_p=r.holm_p, equivalent=r.equivalent,
                                          alpha=claim.alpha, candidate_at_chance=at_c, baseline_at_chance=at_b,
                                          higher_is_better=r.higher_is_better)
        r.qualifier = rule.qualifier(r.result, mean=r.mean, holm_p=r.holm_p, alpha=claim.alpha,
                                     higher_is_better=r.higher_is_better)
        r.outcome = rule.outcome(r.result, r.comparison.expect)
    tiers = list(dict.fromkeys(c.tier for c in claim.comparisons))
    tier_forms = {}
    for t in tiers:
        sub = [r for r in results if r.comparison.tier == t]
        tier_forms[t] = rule.claim_form([r.outcome for r in sub], [r.comparison.expect for r in sub],
                                        enough_runs=any(r.n >= 2 for r in sub))
    decide = [r for r in results if claim.deciding_tier is None or r.comparison.tier == claim.deciding_tier]
    if claim.deciding_tier is not None and not any(r.n >= 2 for r in decide):
        decide = results  # the deciding tier has no runs yet: every tier counts
    form = rule.claim_form([r.outcome for r in decide], [r.comparison.expect for r in decide],
                           enough_runs=any(r.n >= 2 for r in decide))
    mde = rule.detectable(r.mde for r in decide if r.outcome == "open")
    return ClaimVerdict(claim, results, form, tier_forms, mde)


def evaluate_all(root: Optional[Path] = None, preset: str = "book") -> dict[str, ClaimVerdict]:
    return {cid: evaluate(c, root, preset) for cid, c in REGISTER.items()}

