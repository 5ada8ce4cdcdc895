"""Tables of the detection proxy (Mask R-CNN on synthetic scenes) from records.

The grid (:mod:`polyattn.experiments.detection`) trains one Mask R-CNN per activation and seed
and records four COCO metrics: box AP, box AP50, mask AP and mask AP50 (fractions, shown in per
cent, so differences are AP points).  Here::

    final = detection_final(records)        # one row per run, with the variant's label
    detection_table(final)                  # per variant and metric: mean, median, sd, min, max over seeds
    detection_curves(records)               # one row per run and evaluation (learning curves)
    learned(final)                          # did softmax learn at all (AP above zero)?
    diffs = detection_differences(final)    # paired by seed, per metric; Holm over the whole table

The comparison reuses :func:`polyattn.analysis.stats.paired_difference` (t interval, paired
t-test, TOST against the margin, minimal detectable effect) on a long frame with one row per
run and metric, so one call tests every (variant, metric) pair and Holm's correction spans all
of them.  The registered claim (``detection_segmentation``, decided by the register's one rule) rests on the
two primary COCO metrics (box AP and mask AP) of every polynomial variant; AP50 is reported and
tested in the same family.

The equivalence margin, :data:`EQUIVALENCE_MARGIN` = 2 AP points, is fixed before any record of
the grid is read: "near-identical" on COCO would be a fraction of a point, but on a proxy with
three seeds a margin below the seed-to-seed spread of AP could never be met, and 2 points is the
margin the book uses for accuracy on the shortened LRA.
"""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd

from ..labels import DETECTION_VARIANTS, detection_label
from ..metric_specs import DETECTION_METRICS as METRICS
from ..metric_specs import Metric
from ._common import _check_records
from .frames import final_metrics, records_to_frame
from .stats import ALPHA, POWER, paired_difference, t_interval
from .verdicts import comparison_verdict

#: The equivalence margin in AP points, fixed before the records were read (see the module docstring).
EQUIVALENCE_MARGIN = 2.0
#: The metrics the verdict rests on (COCO's primary metrics); the AP50 rows are reported beside them.
PRIMARY = ("box_ap", "mask_ap")
#: A metric of the long frame: AP of any kind, in per cent, so that differences are AP points.
AP = Metric("ap", "%", True, 100.0, "AP")
METRIC_NAMES = tuple(m.name for m in METRICS)
LABELS = {m.name: m.label for m in METRICS}


def detection_final(records: Iterable[dict]) -> pd.DataFrame:
    """:func:`~polyattn.analysis.final_metrics` of detection records with ``variant``, the grid's
    label of the activation (``softmax``, ``x^3/sqrt(N)``, ``x^3/14``)."""
    records = _check_records(records)
    bad = sorted({r.get("task") for r in records} - {"detection"})
    if bad:
        raise ValueError(f"detection_final takes records of the detection task, got tasks {bad}")
    final = final_metrics(records)
    final.insert(0, "variant", [detection_label(r["config"]["activation"]) for r in records])
    return final


def _variants(final: pd.DataFrame) -> list[str]:
    known = [label for label, _ in DETECTION_VARIANTS if label in set(final["variant"])]
    return known + [v for v in dict.fromkeys(final["variant"]) if v not in known]


def detection_table(final: pd.DataFrame) -> pd.DataFrame:
    """Per variant (rows, the grid's order) and metric: ``mean``, ``median``, ``sd``, ``min``, ``max``
    over the seeds that trained (in AP points), ``n`` seeds and ``n_diverged``; one row per (variant, metric)."""
    rows = []
    for variant in _variants(final):
        g = final[final["variant"] == variant]
        for name in METRIC_NAMES:
            x = g[name].to_numpy(dtype=float) * 100.0
            x = x[np.isfinite(x)]
            rows.append({"variant": variant, "metric": name, "label": LABELS[name], "n": len(x),
                         "n_diverged": int((g["status"] == "diverged").sum()),
                         "mean": float(x.mean()) if len(x) else np.nan,
                         "median": float(np.median(x)) if len(x) else np.nan,
                         "sd": float(x.std(ddof=1)) if len(x) > 1 else np.nan,
                         "min": float(x.min()) if len(x) else np.nan, "max": float(x.max()) if len(x) else np.nan})
    return pd.DataFrame(rows, columns=["variant", "metric", "label", "n", "n_diverged", "mean", "median", "sd", "min",
                                       "max"])


def wide_table(table: pd.DataFrame, digits: int = 1, median: bool = False) -> pd.DataFrame:
    """:func:`detection_table` as one row per variant and one column per metric, "mean ± sd"
    (with ``median``: "mean ± sd (median m)" when more than two seeds trained)."""
    def cell(r):
        if not np.isfinite(r["mean"]):
            return "diverged"
        text = f"{r['mean']:.{digits}f}" + (f" ± {r['sd']:.{digits}f}" if np.isfinite(r["sd"]) else "")
        if median and r["n"] > 2:
            text += f" (median {r['median']:.{digits}f})"
        return text

    t = table.assign(cell=[cell(r) for _, r in table.iterrows()])
    out = t.pivot(index="variant", columns="label", values="cell")
    return out.reindex(index=list(dict.fromkeys(table["variant"])), columns=[LABELS[n] for n in METRIC_NAMES])


def detection_curves(records: Iterable[dict]) -> pd.DataFrame:
    """One row per run and evaluation (:func:`~polyattn.analysis.records_to_frame`) with
    ``variant``, the grid's label of the activation; the AP metrics as stored (fractions)."""
    frame = records_to_frame(records)
    frame.insert(0, "variant", [detection_label(a) for a in frame["activation"]])
    return frame


def long_frame(final: pd.DataFrame) -> pd.DataFrame:
    """One row per run and metric: the run's columns, ``measure`` (the metric's name) and ``ap``."""
    missing = [c for c in ("variant", "activation", "seed", "status", *METRIC_NAMES) if c not in final.columns]
    if missing:
        raise ValueError(f"the frame lacks the columns {missing}; build it with detection_final(records)")
    keep = [c for c in final.columns if c not in METRIC_NAMES and not c.startswith("last_")]
    out = final.melt(id_vars=keep, value_vars=list(METRIC_NAMES), var_name="measure", value_name="ap")
    out.attrs["metrics"] = {"ap": AP.as_dict()}
    return out


def detection_differences(final: pd.DataFrame, baseline: str = "softmax", margin: float = EQUIVALENCE_MARGIN,
                          compare: Optional[Sequence[str]] = None, confidence: float = 0.95, alpha: float = ALPHA,
                          power: float = POWER) -> pd.DataFrame:
    """Per variant and metric, the same-seed differences from ``baseline`` in AP points:
    :func:`~polyattn.analysis.paired_difference` keyed by ``variant`` and grouped by ``measure``
    (t interval, paired t-test, TOST against ``±margin``, MDE), ``p_holm`` over every row, and
    ``verdict`` / ``verdict_text`` from :func:`~polyattn.analysis.comparison_verdict`."""
    d = paired_difference(long_frame(final), baseline=baseline, by=["measure"], metric=AP, compare=compare,
                          confidence=confidence, margin=margin, alpha=alpha, power=power, key="variant")
    d.insert(1, "label", [LABELS.get(m, m) for m in d["measure"]])
    verdicts = [comparison_verdict(r, name=f"{r['variant']} ({LABELS.get(r['measure'], r['measure'])})",
                                   baseline=f"{baseline} ({LABELS.get(r['measure'], r['measure'])})", alpha=alpha)
                for _, r in d.iterrows()]
    d["verdict"] = [v.form for v in verdicts]
    d["verdict_text"] = [v.text for v in verdicts]
    return d


def learned(final: pd.DataFrame, variant: str = "softmax", metric: str = "box_ap", confidence: float = 0.95) -> dict:
    """Did ``variant`` learn the task?  Its mean ``metric`` over seeds (AP points), the t interval,
    and ``learned``: the interval's lower end above 0 (one seed: its AP above 0)."""
    x = final.loc[final["variant"] == variant, metric].to_numpy(dtype=float) * 100.0
    x = x[np.isfinite(x)]
    m, lo, hi = t_interval(x, confidence)
    ok = bool(len(x) and (lo > 0 if np.isfinite(lo) else (len(x) == 1 and x[0] > 0)))
    return {"variant": variant, "metric": metric, "n": len(x), "mean": m, "ci_low": lo, "ci_high": hi, "learned": ok}


__all__ = ["AP", "EQUIVALENCE_MARGIN", "PRIMARY", "detection_curves", "detection_differences", "detection_final",
           "detection_table", "learned", "long_frame", "wide_table"]
