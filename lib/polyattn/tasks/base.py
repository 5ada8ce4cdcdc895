"""The task protocol: what a task gives the one training loop (:func:`polyattn.train.fit`).

A task is a small object registered by name in :data:`polyattn.tasks.TASKS`.  It knows its
data, its model, its loss and its evaluation; ``fit`` knows seeding, optimisers, schedules,
clipping, probes, divergence, checkpoints, DDP and records, and nothing about the task::

    class Task:
        name: str                                     # "images", "lra", "pde", "charlm", ...
        def metrics(self, config) -> list[Metric]     # what evaluate() returns, declared
        def seq_lens(self, config) -> dict[str, int]  # the sequence length(s) N of the model
        def load(self, config, world, rank) -> data   # any object; loaded once per run
        def build_model(self, config, data) -> nn.Module
        def steps_per_epoch(self, config, data) -> int
        def batches(self, config, data, epoch, world, rank, state) -> Iterable[Batch]
        def loss(self, model, batch, config) -> (loss tensor, {name: sum over the batch})
        def evaluate(self, model, config, data, device) -> {name: float}   # the declared metrics
        # optional:
        def prepare(self, config, data) -> state      # per-run state built after the model
        def summarise(self, model, config, data, device) -> dict   # stored as record["final"]

A :class:`Batch` carries its inputs, its targets and its masks (as the Annotated
Transformer's batch does); ``size`` is the number of examples it weighs in epoch averages.
The model declares which parameters take weight decay (``model.decay_groups()``, as
nanoGPT's ``configure_optimizers`` does), or ``fit`` falls back to the rule "matrices decay,
vectors do not".
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..metric_specs import ACCURACY, TEST_LOSS, Metric  # noqa: F401  (re-exported: the tasks declare these)


@dataclass
class Batch:
    """One batch: model inputs, the training target, the label the metric compares against,
    and the masks (``key_padding_mask`` ``[B, N]`` True = a real token; ``causal``)."""
    inputs: Any
    target: Any = None
    label: Any = None
    key_padding_mask: Optional[Any] = None
    causal: bool = False
    size: int = 0
    extra: dict = field(default_factory=dict)

    def to(self, device) -> "Batch":
        def move(x):
            if hasattr(x, "to"):
                return x.to(device)
            if isinstance(x, (tuple, list)):
                return type(x)(move(v) for v in x)
            if isinstance(x, dict):
                return {k: move(v) for k, v in x.items()}
            return x
        return Batch(move(self.inputs), move(self.target), move(self.label), move(self.key_padding_mask),
                     self.causal, self.size, {k: move(v) for k, v in self.extra.items()})
