"""Tasks for :func:`polyattn.train.fit`, by name (see :mod:`polyattn.tasks.base` for the protocol).

A new task is a new module here and one line in :data:`TASKS`, not a new training loop.
"""
from .base import ACCURACY, TEST_LOSS, Batch, Metric
from .charlm import CharLanguageModel
from .detection import Detection
from .images import ImageClassification
from .lra import LongRangeArena
from .mqar import MultiQueryRecall
from .pde import PhysicsInformed

TASKS = {
    "images": ImageClassification(),
    "charlm": CharLanguageModel(),
    "lra": LongRangeArena(),
    "pde": PhysicsInformed(),
    "mqar": MultiQueryRecall(),
    "detection": Detection(),
}


def register(task) -> None:
    """Add a task object under ``task.name`` (tests and extensions use this)."""
    TASKS[task.name] = task


def get_task(name: str):
    """The task registered as ``name``; a clear error lists the known ones."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; choose one of {sorted(TASKS)}") from None


__all__ = ["ACCURACY", "TASKS", "TEST_LOSS", "Batch", "Metric", "get_task", "register"]
