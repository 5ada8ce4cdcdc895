"""Chapter 09's training-speed claim (``training_speed``): the cubes trail softmax at small training
budgets and catch up with more.

For every task whose records hold softmax and a cube at more than one budget, the gap to softmax
(candidate − baseline, paired by seed, in the metric's display unit) is computed at each budget by
the register's own comparison (:func:`polyattn.claims.evaluate.compare`), with the task's margin,
chance level and band read from the register's claim on those runs.  The claim is decided per task
by the gap at its largest budget against the gap at its smallest, for one series per task (its
*primary*: :math:`x^3/\\sqrt{N}` − softmax, the book's main cube); the other series are drawn and
stated, never decisive.

The change between the two budgets is read in one of two ways:

* **as means** when every seed of both arms learned at both budgets: the difference of the two
  estimates, oriented so that a positive change is in the cube's favour, with a Welch interval from
  the two sets of paired differences (each estimate's standard error and degrees of freedom as the
  register computes them; a pooled tier removes its cells' means);
* **as counts** when some seed of either arm fell at or below the task's learning floor at either
  budget: the cube's seeds that learned at the smallest budget against those at the largest,
  Fisher's exact test (two-sided), provided softmax learned in every seed at both; a mean over
  seeds on both sides of the floor says nothing.

A task's change *shrinks* the deficit when its Holm-corrected p-value (over the tasks, the book's
family of a claim's primary parts) is below :data:`ALPHA` and it moves in the cube's favour; the
deficit *grows* when it is below and moves the other way; the gap is *unchanged within the margin*
when the change's 90% interval lies inside ± the task's margin (means only); otherwise the task is
*undecided*.  The form: holds when every task shrinks; mixed when some shrink and some are shown
not to (grows, or unchanged); fails when none shrinks and some are shown not to; inconclusive at
this power when no task is shown not to shrink and some cannot decide; inconclusive at this scale
when no task has two budgets with a paired estimate.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

import numpy as np

from ..analysis.stats import holm
from ..claims.constants import LRA_CHANCE
from ..claims.evaluate import arm_runs, compare
from ..claims.register import claim
from ..claims.spec import Arm, Finding, vs
from ..display import typographic

#: The level of every test of the claim (Holm over the tasks).
ALPHA = 0.05
#: The register's arms.
SOFTMAX = {"activation": "softmax"}
CUBE_SQRT_N = {"activation": "poly:p=3"}
CUBE_14 = {"activation": "poly:p=3,c=1/14"}
CUBE = {"activation": "poly:p=3,c=1"}
#: The series' labels.
SCALED_LABEL = "x³/√N − softmax"
#: The verdicts of a task shown not to shrink.
FORMS_SHOWN_NOT = ("grows", "unchanged within the margin")


@dataclass(frozen=True)
class Tier:
    """One budget of a series: the runs of ``grid`` matching ``candidate`` against those matching
    ``baseline`` (paired by seed, pooled over ``pool_over`` cells), named ``label`` in words."""

    grid: str
    candidate: Mapping
    baseline: Mapping
    label: str
    pool_over: tuple = ()


@dataclass(frozen=True)
class Series:
    """One gap followed over budgets, from the smallest to the largest; ``quantity`` names the
    panel it is drawn in (the gap to softmax, or the unscaled cube against the scaled one)."""

    id: str
    label: str
    tiers: tuple
    color_spec: str = "poly:p=3"
    quantity: str = "gap to softmax"
    primary: bool = False


@dataclass(frozen=True)
class Task:
    """A task with several budgets: its name, the register claim whose margin, chance level and
    band it takes, the metric and how it is compared, what a budget counts, and its series (one
    of them primary)."""

    id: str
    name: str
    claim: str
    budget_unit: str
    series: tuple
    metric: str = "test_acc"
    transform: str = "identity"
    chance: Optional[float] = None

    @property
    def primary(self) -> Series:
        return next(s for s in self.series if s.primary)


#: The LRA tasks' names as the book writes them.
LRA_NAMES = {"listops": "ListOps", "retrieval": "Retrieval"}


def _lra(task: str, long_label: str) -> Task:

    def tiers(act):
        fields = {**act, "dataset": task, "n_mode": "row"}
        base = {**SOFTMAX, "dataset": task, "n_mode": "row"}
        return (Tier("lra", fields, base, "the book's steps"), Tier("lra_long", fields, base, long_label))

    return Task(task, f"{LRA_NAMES[task]} (LRA)", "lra_long", "training sequences seen", (
        Series(f"{task}_cube_sqrt_n", SCALED_LABEL, tiers(CUBE_SQRT_N), primary=True),
        Series(f"{task}_cube_14", "x³/14 − softmax", tiers(CUBE_14), color_spec="poly:p=3,c=1/14"),
    ), chance=LRA_CHANCE[task])


def tasks() -> tuple:
    """The tasks whose records hold softmax and a cube at more than one budget, in the book's
    order.  The character language models are not among them: both of their grids
    (``causal_charlm``, ``causal_charlm_nope``) train every model for the same number of steps."""
    convection = {"dataset": "convection:beta=30"}
    vit = Task("vit", "Fashion-MNIST ViT", "table_parity", "images seen in training", (
        Series("vit_clipped", f"{SCALED_LABEL}, clipped", (
            Tier("vit_table2", CUBE_SQRT_N, SOFTMAX, "2,000 images, 5 epochs (2 models × 2 recipes)",
                 pool_over=("model", "augment")),
            Tier("vit_table1", CUBE_SQRT_N, SOFTMAX, "5,000 images, 6 epochs"),
            Tier("vit_converged", CUBE_SQRT_N, SOFTMAX, "all images, 20 epochs")), primary=True),
        Series("vit_unclipped", f"{SCALED_LABEL}, unclipped", (
            Tier("vit_table1_unclipped", CUBE_SQRT_N, SOFTMAX, "5,000 images, 6 epochs"),
            Tier("vit_unclipped", CUBE_SQRT_N, SOFTMAX, "all images, 20 epochs")), color_spec="poly:p=3,c=1/14"),
        Series("vit_unscaled_clipped", "x³ − x³/√N, clipped", (
            Tier("vit_table1", CUBE, CUBE_SQRT_N, "5,000 images, 6 epochs"),
            Tier("vit_converged", CUBE, CUBE_SQRT_N, "all images, 20 epochs")),
            color_spec="poly:p=3,c=1", quantity="unscaled − scaled cube"),
        Series("vit_unscaled_unclipped", "x³ − x³/√N, unclipped", (
            Tier("vit_table1_unclipped", CUBE, CUBE_SQRT_N, "5,000 images, 6 epochs"),
            Tier("vit_unclipped", CUBE, CUBE_SQRT_N, "all images, 20 epochs")),
            color_spec="poly:p=1", quantity="unscaled − scaled cube"),
    ))
    physics = Task("convection", "Convection (PINNsFormer)", "physics_long", "L-BFGS steps", (
        Series("convection_cube_sqrt_n", SCALED_LABEL, (
            Tier("physics", {**CUBE_SQRT_N, **convection, "model": "small"},
                 {**SOFTMAX, **convection, "model": "small"}, "the book's steps"),
            Tier("physics_long", {**CUBE_SQRT_N, **convection}, {**SOFTMAX, **convection}, "the published steps")),
            primary=True),
    ), metric="rMAE", transform="log10")
    return (vit, _lra("listops", "5 × the steps"), _lra("retrieval", "2 × the steps"), physics)


@dataclass
class TierGap:
    """One budget's gap: pairs, mean, 95% interval, standard error and degrees of freedom (NaN
    without two pairs), the display unit, the budget (median of the baseline's records), and the
    seeds of each arm that learned the task."""

    tier: Tier
    n: int
    mean: float
    ci_low: float
    ci_high: float
    se: float
    df: int
    unit: str
    higher_is_better: bool
    budget: float
    candidate_learned: int
    baseline_learned: int
    differences: list = field(default_factory=list)

    @property
    def all_learned(self) -> bool:
        return self.n > 0 and self.candidate_learned == self.baseline_learned == self.n


def _budget(tier: Tier, root: Optional[Path]) -> float:
    """The tier's budget: the last recorded step times the batch (examples seen; L-BFGS steps for a
    whole-grid batch of one), the median over the baseline's stored runs."""

    runs = arm_runs(Arm(tier.grid, dict(tier.baseline)), root)
    values = []
    for rec in runs.records.values():
        steps = [m["step"] for m in rec.get("metrics") or [] if m.get("step") is not None]
        if steps:
            values.append(float(steps[-1]) * float(rec["config"].get("batch_size") or 1))
    return float(np.median(values)) if values else math.nan


def tier_gap(task: Task, tier: Tier, root: Optional[Path] = None) -> TierGap:
    """The register's paired comparison of one tier, with the task's margin, chance and band."""

    owner = claim(task.claim)
    chance = task.chance if task.chance is not None else owner.chance
    comp = vs(tier.grid, dict(tier.candidate), dict(tier.baseline), tier.grid, tier.label, "equivalent",
              metric=task.metric, transform=task.transform, pool_over=tier.pool_over)
    r = compare(comp, owner.margin, root, chance=chance, band=owner.chance_band)
    se = r.sd / math.sqrt(r.n) if r.n and math.isfinite(r.sd) else math.nan
    cand, base = (r.learned_counts or (r.n, r.n, r.n))[:2]
    return TierGap(tier, r.n, r.mean, r.ci_low, r.ci_high, se, r.df, r.unit, r.higher_is_better,
                   _budget(tier, root), int(cand), int(base), list(r.differences))


@dataclass
class Change:
    """The gap at the largest budget against the smallest, oriented in the cube's favour: as means
    (``estimate`` with its intervals) or as counts (the cube's learned seeds at each budget)."""

    reading: str  # "means", "counts", "none"
    estimate: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    ci90_low: float = math.nan
    ci90_high: float = math.nan
    df: float = math.nan
    p: float = math.nan
    holm_p: float = math.nan
    verdict: str = "undecided"
    note: str = ""


def change(small: TierGap, large: TierGap, margin: float) -> Change:
    """The change of the gap from ``small`` to ``large`` (before Holm; :func:`decide` finishes it)."""
    from scipy import stats

    if small.n < 2 or large.n < 2:
        return Change("none", note="fewer than two seed pairs at a budget")
    if not (small.all_learned and large.all_learned):
        if small.baseline_learned < small.n or large.baseline_learned < large.n:
            return Change("counts", note="softmax did not learn in every seed at both budgets")
        table = [[small.candidate_learned, small.n - small.candidate_learned],
                 [large.candidate_learned, large.n - large.candidate_learned]]
        p = float(stats.fisher_exact(table)[1])
        share = large.candidate_learned / large.n - small.candidate_learned / small.n
        return Change("counts", estimate=share, p=p)
    sign = 1.0 if large.higher_is_better else -1.0
    est = sign * (large.mean - small.mean)
    var = small.se ** 2 + large.se ** 2
    se = math.sqrt(var)
    df = var ** 2 / (small.se ** 4 / small.df + large.se ** 4 / large.df) if se > 0 else float(small.df + large.df)
    if se == 0:
        return Change("means", est, est, est, est, est, df, 0.0 if est else 1.0)
    h95, h90 = float(stats.t.ppf(0.975, df) * se), float(stats.t.ppf(1 - ALPHA, df) * se)
    p = float(2 * stats.t.sf(abs(est) / se, df))
    return Change("means", est, est - h95, est + h95, est - h90, est + h90, df, p)


def decide(changes: list, margins: list) -> None:
    """Holm over the tasks' p-values, then each task's verdict (in place)."""

    adjusted = holm([c.p for c in changes]) if changes else []
    for c, p, margin in zip(changes, adjusted, margins):
        c.holm_p = float(p)
        if math.isfinite(c.holm_p) and c.holm_p < ALPHA and c.estimate != 0:
            c.verdict = "shrinks" if c.estimate > 0 else "grows"
        elif c.reading == "means" and -margin < c.ci90_low and c.ci90_high < margin:
            c.verdict = "unchanged within the margin"


def form_of(verdicts: list[str], decided_any: bool) -> str:
    """The claim's form from the tasks' verdicts (the module's rule)."""
    if not decided_any:
        return "inconclusive at this scale"
    shrink = verdicts.count("shrinks")
    shown_not = sum(v in FORMS_SHOWN_NOT for v in verdicts)
    if verdicts and shrink == len(verdicts):
        return "holds"
    if shrink and shown_not:
        return "mixed"
    if shown_not:
        return "fails"
    return "inconclusive at this power"


@dataclass
class TaskResult:
    task: Task
    margin: float
    gaps: dict  # series id -> list of TierGap (smallest budget first)
    change: Change


def task_results(root: Optional[Path] = None, chosen: Optional[tuple] = None) -> list[TaskResult]:
    """Every task's gaps at every budget and its primary series' change, decided."""

    out = []
    for task in chosen if chosen is not None else tasks():
        margin = claim(task.claim).margin
        gaps = {s.id: [tier_gap(task, t, root) for t in s.tiers] for s in task.series}
        primary = gaps[task.primary.id]
        out.append(TaskResult(task, margin, gaps, change(primary[0], primary[-1], margin)))
    decide([r.change for r in out], [r.margin for r in out])
    return out


def _num(x: float, fmt: str = "+.2f") -> str:
    return "–" if not math.isfinite(x) else format(x, fmt)


def _unit(gap: TierGap) -> str:
    return "log10" if gap.unit == "log10" else (gap.unit or "")


def _gap_text(g: TierGap) -> str:
    return f"{_num(g.mean)} ({_num(g.ci_low)} to {_num(g.ci_high)}) {_unit(g)}"


def _budget_text(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:,.0f}"


def task_sentence(r: TaskResult) -> str:
    """One task's change in words."""
    g = r.gaps[r.task.primary.id]
    small, large = g[0], g[-1]
    c = r.change
    where = (f"from {_budget_text(small.budget)} to {_budget_text(large.budget)} {r.task.budget_unit}")
    if c.reading == "none":
        return f"{r.task.name}: {c.note} ({where}), undecided"
    if c.reading == "counts":
        if not math.isfinite(c.p):
            return f"{r.task.name}: {c.note} ({where}), undecided"
        return (f"{r.task.name}: x³/√N learned in {small.candidate_learned} of {small.n} seeds and then "
                f"{large.candidate_learned} of {large.n}, softmax in all ({where}; Fisher p = {c.p:.2g}, "
                f"Holm p = {c.holm_p:.2g}), {c.verdict}")
    return (f"{r.task.name}: gap {_gap_text(small)} then {_gap_text(large)}, a change of {_num(c.estimate)} "
            f"({_num(c.ci_low)} to {_num(c.ci_high)}) in the cube's favour ({where}; p = {c.p:.2g}, Holm p = "
            f"{c.holm_p:.2g}), {c.verdict}")


def training_speed(root: Optional[Path] = None) -> Finding:
    """The gap to softmax against the training budget on every task with several budgets, and the
    module's rule's form (see the module's docstring)."""

    results = task_results(root)
    numbers: dict = {"alpha": ALPHA, "tasks": len(results)}
    for r in results:
        t = r.task.id
        numbers[f"{t}: margin"] = r.margin
        for s in r.task.series:
            for g in r.gaps[s.id]:
                key = f"{s.id} at {g.tier.grid}"
                numbers.update({f"{key}: budget": g.budget, f"{key}: pairs": g.n, f"{key}: gap": g.mean,
                                f"{key}: gap CI low": g.ci_low, f"{key}: gap CI high": g.ci_high,
                                f"{key}: candidate learned": g.candidate_learned,
                                f"{key}: baseline learned": g.baseline_learned})
        c = r.change
        numbers.update({f"{t}: reading": c.reading, f"{t}: change": c.estimate, f"{t}: change CI low": c.ci_low,
                        f"{t}: change CI high": c.ci_high, f"{t}: p": c.p, f"{t}: Holm p": c.holm_p,
                        f"{t}: verdict": c.verdict})
    verdicts = [r.change.verdict for r in results]
    decided_any = any(r.change.reading != "none" for r in results)
    form = form_of(verdicts, decided_any)
    numbers.update({"tasks shrinking": verdicts.count("shrinks"),
                    "tasks shown not to shrink": sum(v in FORMS_SHOWN_NOT for v in verdicts),
                    "tasks undecided": verdicts.count("undecided")})
    summary = ("Per task, the gap of x³/√N to softmax at the largest budget against the smallest: "
               + "; ".join(task_sentence(r) for r in results)
               + f". Holm's correction runs over the {len(results)} tasks. The character language models are "
                 "left out: their records hold one budget each.")
    return Finding(form, typographic(summary), numbers)
