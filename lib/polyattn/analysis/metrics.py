"""Which metric a table reports, in which unit, and which way is better.

A record declares its metrics in ``record["metrics_spec"]`` (a list of
:meth:`polyattn.metric_specs.Metric.as_dict`).  Records written before tasks declared their metrics
are image classification: they hold :data:`~polyattn.metric_specs.ACCURACY` and
:data:`~polyattn.metric_specs.TEST_LOSS`.  Frames built from records carry the declarations in
``frame.attrs["metrics"]`` (name -> dict), so a statistic called without a metric reads it
from there; the first declared metric is the task's primary one.
"""
from __future__ import annotations

from typing import Iterable, Optional, Union

import pandas as pd

from ..metric_specs import ACCURACY, TEST_LOSS, Metric

#: What a record without ``metrics_spec`` holds: image classification.
IMAGE_METRICS = (ACCURACY, TEST_LOSS)
TRAIN_ACCURACY = Metric("train_acc", unit="%", higher_is_better=True, scale=100.0, label="train accuracy")
TRAIN_LOSS = Metric("train_loss", unit="nats", higher_is_better=False, scale=1.0, label="train loss")
#: Metrics known by name even when a frame carries no declarations (the image columns).
KNOWN_METRICS = {m.name: m for m in (ACCURACY, TEST_LOSS, TRAIN_ACCURACY, TRAIN_LOSS)}

MetricLike = Union[Metric, dict, str, None]


def record_metrics(record: dict) -> tuple[Metric, ...]:
    """The metrics a record declares, primary first; image classification when it declares none."""
    spec = record.get("metrics_spec")
    if spec is None:
        return IMAGE_METRICS
    if not isinstance(spec, (list, tuple)) or not spec:
        raise ValueError(f"metrics_spec must be a non-empty list of Metric dicts, got {spec!r}")
    return tuple(m if isinstance(m, Metric) else Metric.from_dict(m) for m in spec)


def declared_metrics(records: Iterable[dict]) -> dict[str, Metric]:
    """The union of the records' declarations (name -> Metric), in order of first appearance.

    Two records that declare the same name differently (unit, direction or scale) cannot share
    a table, so that is an error.
    """
    out: dict[str, Metric] = {}
    for rec in records:
        for m in record_metrics(rec):
            seen = out.get(m.name)
            if seen is None:
                out[m.name] = m
            elif (seen.unit, seen.higher_is_better, seen.scale) != (m.unit, m.higher_is_better, m.scale):
                raise ValueError(f"metric {m.name!r} is declared twice with different unit, direction or scale: "
                                 f"{seen.as_dict()} and {m.as_dict()}")
    return out


def set_metrics(frame: pd.DataFrame, metrics: dict[str, Metric]) -> pd.DataFrame:
    """Attach declarations to a frame (pandas carries ``attrs`` through filters and copies)."""
    frame.attrs["metrics"] = {name: m.as_dict() for name, m in metrics.items()}
    return frame


def resolve_metric(metric: MetricLike = None, frame: Optional[pd.DataFrame] = None) -> Metric:
    """A :class:`Metric` from a Metric, its dict, its name, or None (the frame's primary metric).

    A name is looked up in the frame's declarations, then among the image metrics; None means
    the first metric the frame declares, or accuracy for a frame without declarations.
    """
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, dict):
        return Metric.from_dict(metric)
    declared = {} if frame is None else dict(frame.attrs.get("metrics") or {})
    if metric is None:
        return Metric.from_dict(next(iter(declared.values()))) if declared else ACCURACY
    if isinstance(metric, str):
        if metric in declared:
            return Metric.from_dict(declared[metric])
        if metric in KNOWN_METRICS:
            return KNOWN_METRICS[metric]
        raise ValueError(f"unknown metric {metric!r}: pass a polyattn.metric_specs.Metric (declared here: "
                         f"{sorted(declared) or 'none'}; known by name: {sorted(KNOWN_METRICS)})")
    raise ValueError(f"metric must be a Metric, its dict, its name or None, got {type(metric).__name__}")


def value_label(metric: Metric) -> str:
    """The column title of a metric's values, e.g. 'test accuracy (%)'."""
    label = metric.label or metric.name
    return f"{label} ({metric.unit})" if metric.unit else label


def diff_unit(metric: Metric) -> str:
    """The unit of a difference: percentage points for a metric in per cent, else the metric's unit."""
    if metric.unit == "%":
        return "points"
    return metric.unit or "units"


def direction_text(metric: Metric) -> str:
    return "higher is better" if metric.higher_is_better else "lower is better"
