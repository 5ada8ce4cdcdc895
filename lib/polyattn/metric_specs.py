"""Metric declarations: what a record's ``metrics_spec`` holds, and the declarations the analysis
names without reading a record.

A task declares its metrics (:meth:`polyattn.tasks.base.Task.metrics` returns :class:`Metric`
objects) and every record stores them as dicts (:meth:`Metric.as_dict`); the analysis reads them
back with :meth:`Metric.from_dict`.  Nothing here imports the tasks or the models.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """A metric's declaration: its name in the record, its unit, its direction and its display scale.

    ``scale`` multiplies stored values for display (accuracy is stored as a fraction and shown
    in per cent: ``scale=100``, ``unit="%"``).
    """
    name: str
    unit: str = ""
    higher_is_better: bool = True
    scale: float = 1.0
    label: str = ""

    def as_dict(self) -> dict:
        return {"name": self.name, "unit": self.unit, "higher_is_better": self.higher_is_better,
                "scale": self.scale, "label": self.label or self.name}

    @classmethod
    def from_dict(cls, d: dict) -> "Metric":
        return cls(name=d["name"], unit=d.get("unit", ""), higher_is_better=bool(d.get("higher_is_better", True)),
                   scale=float(d.get("scale", 1.0)), label=d.get("label", ""))

    def better(self, a: float, b: float) -> bool:
        """Whether value ``a`` is strictly better than ``b``."""
        return a > b if self.higher_is_better else a < b

    def signed(self, diff: float) -> float:
        """A difference (candidate - baseline) oriented so that positive means better."""
        return diff if self.higher_is_better else -diff


#: The image-classification metrics (also what records without declarations hold).
ACCURACY = Metric("test_acc", unit="%", higher_is_better=True, scale=100.0, label="test accuracy")
TEST_LOSS = Metric("test_loss", unit="nats", higher_is_better=False, scale=1.0, label="test loss")
#: The Long Range Arena's accuracy on its validation split.
VAL_ACCURACY = Metric("val_acc", unit="%", higher_is_better=True, scale=100.0, label="validation accuracy")
#: The PDE task's errors on the test grid (lower is better).
PDE_METRICS = (Metric("rMAE", "", False, 1.0, "relative mean absolute error"),
               Metric("rRMSE", "", False, 1.0, "relative root-mean-square error"))

#: The detection task's metrics: COCO AP (IoU 0.5:0.95) and AP50, of boxes and of masks.
DETECTION_METRICS = (Metric("box_ap", "%", True, 100.0, "box AP"), Metric("box_ap50", "%", True, 100.0, "box AP50"),
                     Metric("mask_ap", "%", True, 100.0, "mask AP"), Metric("mask_ap50", "%", True, 100.0, "mask AP50"))

#: Measurements a run stores under ``final`` at its end rather than per evaluation, named by their
#: path there: the first-token sink rate of :mod:`polyattn.sinks` (share of layer-head pairs whose
#: mean weight on the first token exceeds the threshold; lower means fewer sinks).
SINK_RATE = Metric("sinks.sink_rate", "share", False, 1.0, "sink rate (first token)")
FINAL_METRICS = {SINK_RATE.name: SINK_RATE}
