"""Chapter 05, "With more steps": the ``lra_long`` grid's comparisons beside the same comparisons
at the book's steps, and the longer runs' learning curve on ListOps.

    pairs = long_pairs(deliver("lra_long")); budget_table(pairs); budget_counts(pairs)
    pair_values(pairs, "poly:p=3", "listops")        # one comparison at both budgets
    curve = long_curve("listops"); long_curve_table(curve); catch_up_values(curve)

:func:`long_curve` and :func:`book_chance` keep what they read for the session.
"""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ...analysis import lra as lra_analysis
from ...book.deliver import styled
from ...claims.budget import budget_rows, change, shorter_pairs
from ...claims.report import estimate_cell
from ...experiments import lra as grids
from ...runs import stored
from ...tasks import get_task
from .page import FIXED, LABELS, SMALL, SOFTMAX, TASKS, VALID, chance_band, margin, pct, steps_of, task_name, variant_name

#: The comparisons of the longer grid the page discusses: (glue prefix, candidate activation, task).
LONG_COMPARISONS = (("lo_cube", "poly:p=3", "listops"), ("lo_fixed", "poly:p=3,c=1/14", "listops"),
                    ("re_cube", "poly:p=3", "retrieval"), ("re_fixed", "poly:p=3,c=1/14", "retrieval"))


@lru_cache(maxsize=2)
def book_chance(tasks: tuple = tuple(TASKS)) -> dict:
    """Task -> the chance level (majority class, a fraction) of the book preset's data, whatever
    the page's preset: the register's claims read book records."""
    task_impl = get_task("lra")
    configs = grids.lra("book", seeds=[0], tasks=tasks)
    return {t: float(task_impl.load(next(c for c in configs if grids.task_of(c) == t), 1, 0).chance) for t in tasks}


def long_pairs(long_claim) -> list:
    """Each comparison of the delivered ``lra_long`` claim beside the same comparison at the book's
    steps (:func:`polyattn.claims.budget.shorter_pairs`)."""
    return shorter_pairs(long_claim.verdict)


def long_factor(task: str) -> str:
    """How many times the book's steps the longer grid trains ``task`` ("5")."""
    return str(grids.LONG_TASKS[task])


def long_factors() -> str:
    """"ListOps at 5 times, Retrieval at 2 times"."""
    return ", ".join(f"{task_name(t)} at {k} times" for t, k in grids.LONG_TASKS.items())


def budget_table(pairs: list):
    """The gaps at the book's steps and with more steps, with each task's chance level."""
    chance = {t: 100 * c for t, c in book_chance(tuple(grids.LONG_TASKS)).items()}
    seeds = max((p.longer.planned for p in pairs), default=0)
    return styled(budget_rows(pairs, "book steps", "more steps", chance=chance),
                  f"The gaps at the book's steps and with more steps ({long_factors()} the book's steps): difference "
                  "from softmax in points of test accuracy [95% CI], the two arms' mean accuracies (candidate / "
                  "softmax), the task's chance level (its majority class; the claim registered none, so the register "
                  "judges these comparisons without it), and the register's result on the longer runs; book preset, "
                  f"{seeds} seeds, shortened tasks").set_table_styles(SMALL, overwrite=False)


def budget_counts(pairs: list) -> dict[str, str]:
    """How many of the comparisons' gaps hold, close, narrow, reverse or stay open with more steps
    (:func:`polyattn.claims.budget.change`), and how many comparisons there are."""
    changes = [change(p) for p in pairs]
    out = {k: str(changes.count(k)) for k in ("holds", "closes", "narrows", "reverses", "open", "uninformative")}
    out["total"] = str(len(pairs))
    return out


@lru_cache(maxsize=2)
def long_curve(task: str = "listops") -> pd.DataFrame:
    """Test accuracy of the stored ``lra_long`` book runs of ``task`` after every epoch: one row per
    variant and step with ``mean``, ``min`` and ``max`` over seeds, ``seeds`` and the per-seed values
    ``values`` (fractions).  Empty while no run is stored.  Kept for the session."""
    records = [r for r in (stored(c) for c in grids.lra_long("book")) if r is not None
               and grids.task_of(r["config"]) == task]
    if not records:
        return pd.DataFrame(columns=["variant", "step", "mean", "min", "max", "seeds", "values"])
    epochs = lra_analysis.lra_epochs(records).sort_values(["step", "seed"])
    rows = []
    for (variant, step), g in epochs.groupby(["variant", "step"], sort=False):
        x = g["test_acc"].to_numpy(dtype=float)
        rows.append({"variant": variant, "step": int(step), "mean": float(x.mean()), "min": float(x.min()),
                     "max": float(x.max()), "seeds": len(x), "values": tuple(x)})
    return pd.DataFrame(rows)


def long_curve_table(curve: pd.DataFrame, task: str = "listops"):
    """:func:`long_curve` for people: one row per variant, one column per step, mean (min to max)."""
    chance = book_chance((task,))[task]
    rows = []
    for label in [v for v in LABELS if v in set(curve["variant"])]:
        c = curve[curve["variant"] == label]
        rows.append({"Variant": variant_name(label),
                     **{f"step {int(r['step']):,}": f"{100 * r['mean']:.1f} ({100 * r['min']:.1f} to {100 * r['max']:.1f})"
                        for _, r in c.iterrows()}})
    seeds = int(curve["seeds"].max()) if len(curve) else 0
    return styled(rows, f"{task_name(task)} with more steps: test accuracy (%) after every epoch of the longer runs, "
                        f"mean over {seeds} seeds (lowest to highest of the seeds); chance {100 * chance:.1f}%; book preset, "
                        "the learning rate decays over the whole longer run").set_table_styles(SMALL, overwrite=False)


def _pair(pairs: list, candidate: str, task: str):
    for p in pairs:
        fields = p.longer.comparison.candidate.fields
        if fields.get("activation") == candidate and fields.get("dataset") == task:
            return p
    return None


def pair_values(pairs: list, candidate: str, task: str) -> dict[str, str]:
    """One comparison of :func:`long_pairs` (``candidate`` against softmax on ``task``) at both
    budgets: its difference (``short_diff``, ``long_diff``), the two arms' means (``short_candidate``,
    ``short_softmax``, ``long_candidate``, ``long_softmax``), the register's result on the longer runs
    (``result``), what that does to the gap (``change``: holds, closes, ...), the task's chance
    level and how many times the book's steps the longer runs train (``factor``)."""
    keys = ("short_diff", "short_candidate", "short_softmax", "long_diff", "long_candidate", "long_softmax", "result",
            "change")
    task_values = {"chance": pct(book_chance((task,))[task]), "factor": long_factor(task)}
    p = _pair(pairs, candidate, task)
    if p is None or p.longer.n < 2 or p.shorter.n < 2:
        return {**task_values, **{k: "not stored" for k in keys}}
    return {**task_values, "short_diff": estimate_cell(p.shorter), "short_candidate": f"{p.shorter.candidate_mean:.1f}%",
            "short_softmax": f"{p.shorter.baseline_mean:.1f}%", "long_diff": estimate_cell(p.longer),
            "long_candidate": f"{p.longer.candidate_mean:.1f}%", "long_softmax": f"{p.longer.baseline_mean:.1f}%",
            "result": p.longer.result + p.longer.qualifier, "change": change(p)}


def catch_up_values(curve: pd.DataFrame, task: str = "listops") -> dict[str, str]:
    """What the longer runs' curves (:func:`long_curve`) say of the cube's gap on ``task``: the
    task's chance level and the book's steps on it; the first probe (its step, softmax's and the
    cube's mean accuracy); the first step from which the cube's mean stays within the margin of
    softmax's (``caught_up``); the last step; and how many seeds of x^3/14 end within the chance
    band of chance (``fixed_at_chance`` of ``fixed_seeds``)."""
    chance = book_chance((task,))[task]
    out = {"chance": pct(chance), "book_steps": f"{steps_of(grids.lra('book', seeds=[0], tasks=(task,))[0]):,}"}
    keys = ("long_steps", "first_step", "first_softmax", "first_cube", "caught_up", "fixed_at_chance", "fixed_seeds")
    by = {v: c.set_index("step") for v, c in curve.groupby("variant")} if len(curve) else {}
    if SOFTMAX not in by or VALID not in by:
        return {**out, **{k: "not stored" for k in keys}}
    steps = sorted(by[SOFTMAX].index)
    gap = [abs(by[SOFTMAX].loc[s, "mean"] - by[VALID].loc[s, "mean"]) * 100 for s in steps]
    caught = next((s for i, s in enumerate(steps) if all(g <= margin() for g in gap[i:])), None)
    last = by[FIXED].loc[steps[-1], "values"] if FIXED in by else ()
    band = chance_band() / 100
    out.update(long_steps=f"{steps[-1]:,}", first_step=f"{steps[0]:,}",
               first_softmax=pct(by[SOFTMAX].loc[steps[0], "mean"]), first_cube=pct(by[VALID].loc[steps[0], "mean"]),
               caught_up=f"step {caught:,}" if caught is not None else "no step of the longer runs",
               fixed_at_chance=str(sum(abs(v - chance) <= band for v in last)), fixed_seeds=str(len(last)))
    return out
