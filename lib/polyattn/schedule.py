"""The learning-rate schedule of :func:`polyattn.train.fit`, as a formula: the training loop sets
each step's rate from it, and the analysis reads a run's rates from its config with it."""
from __future__ import annotations

import math


def lr_at(step: int, total: int, warmup: int, base: float, min_lr: float) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine decay to ``min_lr`` at ``total``."""
    if warmup and step < warmup:
        return base * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (base - min_lr) * (1 + math.cos(math.pi * min(1.0, t)))
