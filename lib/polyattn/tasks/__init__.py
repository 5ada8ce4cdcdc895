"""Tasks for :func:`polyattn.train.fit` (see :mod:`polyattn.tasks.base` for the protocol)."""
from .base import ACCURACY, TEST_LOSS, Batch, Metric

__all__ = ["ACCURACY", "TEST_LOSS", "Batch", "Metric"]
