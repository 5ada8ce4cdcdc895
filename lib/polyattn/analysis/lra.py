"""Tables of chapter 05 (Long Range Arena) from result records.

The LRA grid compares *variants*: an activation together with its reading of N (``n_mode``),
so ``poly:p=3`` appears twice (N = the row's valid keys, N = the padded length).  The
functions here key every row by ``lra_task`` and ``variant`` (the labels of
:data:`polyattn.labels.LRA_VARIANTS`) and otherwise reuse the statistics of
:mod:`polyattn.analysis.stats` and the verdicts of :mod:`polyattn.analysis.verdicts`:

    final = lra_final(records)                       # one row per run, with lra_task and variant
    variant_difference(final, "softmax", margin=2)   # paired by seed within each task; Holm over the table
    above_chance(final, {"listops": 0.17, ...})      # did softmax learn the task at all?
    length_accuracy(records)                         # accuracy per test-length bin, per run
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..labels import PATHFINDER_BUDGET, lra_label, lra_task, pathfinder_budget_label
from ._common import _check_records
from .frames import final_metrics, records_to_frame
from .stats import ALPHA, POWER, paired_difference, t_interval
from .verdicts import BOOK_FORMS as _COMPARISON_FORMS

#: The book's verdict forms of the analysis forms; on LRA a comparison whose runs diverged
#: counts against the variant ("not supported") rather than as a question of scale.
BOOK_FORMS = {**_COMPARISON_FORMS, "not comparable": "not supported"}


def _labels(record_or_row) -> tuple[str, str]:
    cfg = record_or_row["config"] if "config" in record_or_row else record_or_row
    return lra_task(cfg), lra_label(cfg)


def _tag(frame: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    run = {f"{r['config_hash']}-seed{r['seed']}": (*_labels(r), r["config"].get("n_mode", "row")) for r in records}
    frame = frame.copy()
    frame.insert(0, "variant", [run[k][1] for k in frame["run"]])
    frame.insert(0, "lra_task", [run[k][0] for k in frame["run"]])
    frame["n_mode"] = [run[k][2] for k in frame["run"]]
    return frame


def lra_final(records: Iterable[dict]) -> pd.DataFrame:
    """:func:`~polyattn.analysis.final_metrics` with ``lra_task``, ``variant`` and ``n_mode``."""
    records = _check_records(records)
    return _tag(final_metrics(records), records)


def lra_epochs(records: Iterable[dict]) -> pd.DataFrame:
    """:func:`~polyattn.analysis.records_to_frame` (one row per run and epoch) with ``lra_task``,
    ``variant`` and ``n_mode``: the learning curves."""
    records = _check_records(records)
    return _tag(records_to_frame(records), records)


def variant_difference(final: pd.DataFrame, baseline: str = "softmax", by=("lra_task",),
                       compare: Optional[Sequence[str]] = None, metric=None, confidence: float = 0.95,
                       margin: Optional[float] = None, alpha: float = ALPHA, power: float = POWER) -> pd.DataFrame:
    """Per variant and group ``by``, the same-seed differences from the variant ``baseline``:
    :func:`~polyattn.analysis.paired_difference` keyed by ``variant`` (differences in the metric's
    display unit, t interval, paired t-test, TOST against ``±margin``, MDE, ``p_holm`` over every
    row of the returned table), with ``activation`` set to the variant's label so that
    :func:`~polyattn.analysis.comparison_verdict` names it."""
    return paired_difference(final, baseline=baseline, by=list(by or ()), metric=metric, compare=compare,
                             confidence=confidence, margin=margin, alpha=alpha, power=power, key="variant")


def above_chance(final: pd.DataFrame, chance: Mapping[str, float], variant: str = "softmax",
                 metric: str = "test_acc", confidence: float = 0.95) -> pd.DataFrame:
    """Per task: did ``variant`` learn it?  Mean test accuracy over seeds, its t interval, the
    task's chance level (the majority class of the training set), and ``learned``: the lower
    end of the interval above chance (with one seed: the Wilson interval of its test set)."""
    rows = []
    for task, g in final[final["variant"] == variant].groupby("lra_task", sort=False):
        x, m, lo, hi = _accuracy_interval(g, metric, confidence)
        c = float(chance.get(task, np.nan))
        rows.append({"lra_task": task, "n_runs": len(x), "mean": m, "ci_low": lo, "ci_high": hi, "chance": c,
                     "learned": bool(np.isfinite(lo) and lo > c)})
    return pd.DataFrame(rows, columns=["lra_task", "n_runs", "mean", "ci_low", "ci_high", "chance", "learned"])


def _accuracy_interval(runs: pd.DataFrame, metric: str, confidence: float):
    """``(finite values, mean, low, high)`` of ``metric`` over runs: the t interval over seeds,
    or with one seed the Wilson interval of its test set."""
    x = runs[metric].to_numpy(dtype=float)
    x = x[np.isfinite(x)]
    m, lo, hi = t_interval(x, confidence)
    if len(x) == 1:
        n = int(runs["test_subset"].iloc[0] or 0)
        lo, hi = _wilson(float(x[0]), n, confidence) if n else (np.nan, np.nan)
    return x, m, lo, hi


def _wilson(p: float, n: int, confidence: float) -> tuple[float, float]:
    from scipy import stats

    z = float(stats.norm.ppf(0.5 + confidence / 2))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def length_edges(lengths: Sequence[int], bins: int = 4) -> list[int]:
    """Bin edges over ``lengths``: quantiles (bins of nearly equal count), deduplicated, so
    that bin k holds ``edges[k] <= length < edges[k + 1]`` (the last edge is max + 1)."""
    x = np.sort(np.asarray(lengths, dtype=float))
    if len(x) == 0:
        return []
    qs = [x[min(len(x) - 1, int(round(k * len(x) / bins)))] for k in range(1, bins)]
    edges = [int(x[0])] + [int(q) for q in qs if x[0] < q] + [int(x[-1]) + 1]
    return sorted(dict.fromkeys(edges))


def length_accuracy(records: Iterable[dict], bins: int = 4) -> pd.DataFrame:
    """Accuracy per test-length bin, one row per run and bin: ``lra_task``, ``variant``, ``seed``,
    ``bin``, ``lo``/``hi`` (inclusive real-token bounds), ``n`` and ``acc`` (a fraction).

    Bins are shared by every run of a task (quantiles of the task's test lengths, which all
    its runs share); records without per-example answers (``final.test_correct``) and runs
    that diverged are left out."""
    records = [r for r in _check_records(records) if r.get("status") == "ok" and "test_correct" in (r.get("final") or {})]
    rows = []
    by_task: dict[str, list[dict]] = {}
    for r in records:
        by_task.setdefault(_labels(r)[0], []).append(r)
    for task, recs in by_task.items():
        edges = length_edges(recs[0]["final"]["test_lengths"], bins)
        for r in recs:
            lengths = np.asarray(r["final"]["test_lengths"])
            correct = np.asarray([c == "1" for c in r["final"]["test_correct"]])
            for k, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
                sel = (lengths >= a) & (lengths < b)
                if not sel.any():
                    continue
                rows.append({"lra_task": task, "variant": _labels(r)[1], "seed": int(r["seed"]), "bin": k, "lo": a,
                             "hi": b - 1, "n": int(sel.sum()), "acc": float(correct[sel].mean())})
    return pd.DataFrame(rows, columns=["lra_task", "variant", "seed", "bin", "lo", "hi", "n", "acc"])


def length_table(acc: pd.DataFrame, scale: float = 100.0) -> pd.DataFrame:
    """Mean accuracy (in per cent) over seeds per task, variant and length bin, one column per
    bin labelled by its real-token range."""
    if acc.empty:
        return pd.DataFrame()
    acc = acc.assign(bin_label=[f"{lo}-{hi}" if lo != hi else f"{lo}" for lo, hi in zip(acc["lo"], acc["hi"])],
                     acc=acc["acc"] * scale)
    out = acc.groupby(["lra_task", "variant", "bin", "bin_label"], sort=False)["acc"].mean().reset_index()
    return out


def wall_table(final: pd.DataFrame, tasks: Optional[Sequence[str]] = None,
               variants: Optional[Sequence[str]] = None) -> pd.DataFrame:
    """Mean wall-clock seconds of a run per task (rows) and variant (columns)."""
    t = final.pivot_table(index="lra_task", columns="variant", values="wall_s", aggfunc="mean", sort=False)
    if tasks is not None:
        t = t.reindex([x for x in tasks if x in t.index])
    if variants is not None:
        t = t[[v for v in variants if v in t.columns]]
    return t


def pathfinder_budget_table(records: Iterable[dict], chance: float, confidence: float = 0.95) -> pd.DataFrame:
    """Pathfinder's budget check, one row per model of
    :data:`~polyattn.labels.PATHFINDER_BUDGET` in its order: seeds, training images
    seen, mean test accuracy with its t interval over seeds (the Wilson interval of the test set
    with one seed), ``learned`` (the interval's lower end above ``chance``) and the mean wall
    time of a run in seconds."""
    records = _check_records(records)
    label = {f"{r['config_hash']}-seed{r['seed']}": pathfinder_budget_label(r["config"]) for r in records}
    final = final_metrics(records)
    final["label"] = [label[f"{h}-seed{s}"] for h, s in zip(final["config_hash"], final["seed"])]
    rows = []
    for name, _, _ in PATHFINDER_BUDGET:
        g = final[final["label"] == name]
        if g.empty:
            continue
        x, m, lo, hi = _accuracy_interval(g, "test_acc", confidence)
        rows.append({"model": name, "seeds": len(x), "images seen": int(g["train_subset"].iloc[0] * g["epochs"].iloc[0]),
                     "mean": m, "ci_low": lo, "ci_high": hi, "chance": float(chance),
                     "learned": bool(np.isfinite(lo) and lo > chance), "wall_s": float(g["wall_s"].mean())})
    return pd.DataFrame(rows, columns=["model", "seeds", "images seen", "mean", "ci_low", "ci_high", "chance",
                                       "learned", "wall_s"])


#: A learning-curve panel whose mean curves all lie within this many points of one another shows
#: nothing a table would not (every variant at the same level, typically chance).
FLAT_CURVE_POINTS = 0.5


def curve_panels(epochs: pd.DataFrame, metric: str = "test_acc", scale: float = 100.0,
                 flat_points: float = FLAT_CURVE_POINTS) -> dict:
    """Which tasks' learning curves are worth a panel, from :func:`lra_epochs`: task -> ``None``
    when kept, else why not: ``"one epoch"`` when no run records two epochs (a curve of one
    point), ``"flat"`` when the mean curves (over seeds, per variant and epoch, in ``scale``
    units) span at most ``flat_points``.  Tasks keep their order of appearance."""
    out = {}
    for task, g in epochs.dropna(subset=["epoch"]).groupby("lra_task", sort=False):
        curves = g.groupby(["variant", "epoch"], sort=False)[metric].mean() * scale
        if g["epoch"].nunique() < 2:
            out[task] = "one epoch"
        elif curves.max() - curves.min() <= flat_points:
            out[task] = "flat"
        else:
            out[task] = None
    return out
