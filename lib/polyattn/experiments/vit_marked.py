"""The marked-garment task (:mod:`polyattn.data.marked`) as config grids: an image benchmark where
attention is needed, for chapter 04.

* ``vit_marked_probe``: softmax and uniform attention (attention ablated), one seed, at each budget of
  :data:`PROBE_EPOCHS`, to find one at which softmax learns the task (clears the garment-set floor
  clearly) while uniform attention stays well behind; each budget is also its own grid,
  ``vit_marked_probe_<epochs>``, so that a runner can queue one budget at a time.
* ``vit_marked``: softmax, x^3/sqrt(N), the unscaled x^3 and uniform attention at the same recipe,
  :data:`MARKED_SEEDS`.

The recipe is the converged tier's (micro ViT, AdamW at 2e-3, weight decay 0.05, no gradient
clipping) on 56 x 56 scenes with patch 7: 64 patches and CLS, N = 65.

``smoke``: seconds per run, for tests; never evidence. There is no ``paper`` preset (the paper has
no such task); it gives no configs.
"""
from __future__ import annotations

from ..config import TrainConfig
from ..data.marked import DEFAULT_SCENES
from ..presets import seeds_for

#: Scenes, epochs and batch of each preset (test scenes are the same for every run); the probes replace the epochs.
MARKED_SCALE = {
    "smoke": dict(train_subset=256, test_subset=128, epochs=1, batch_size=64, warmup_epochs=0.5),
    "book": dict(train_subset=DEFAULT_SCENES[0], test_subset=DEFAULT_SCENES[1], epochs=30, batch_size=128, warmup_epochs=1.0),
}
_COMMON = dict(task="images", dataset="fashion_marked", image_size=56, patch_size=7, model="micro", lr=2e-3,
               weight_decay=0.05, clip_grad=0.0, threads=1)
PROBE_ACTIVATIONS = ("softmax", "uniform")
MARKED_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1", "uniform")
PROBE_SEEDS = {"smoke": (0,), "book": (0,)}
#: The probes' budgets in epochs (the first is :data:`MARKED_SCALE`'s).
PROBE_EPOCHS = {"smoke": (1,), "book": (10, 30)}
# The book preset trains for 30 epochs: at 10, softmax's probe ended at the garment-set floor; at 30 it
# levels off far above it, with uniform attention far behind (chapter 04 shows both probes).
MARKED_SEEDS = {"smoke": (0,), "book": (0, 1, 2, 3, 4)}


def _configs(name, preset, seeds, activations, plan) -> list[TrainConfig]:
    if preset == "paper":
        return []
    return [TrainConfig(experiment=name, preset=preset, activation=act, seed=s, **_COMMON, **MARKED_SCALE[preset])
            for s in seeds_for(preset, seeds, plan) for act in activations]


def marked_probe(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Softmax and uniform attention on the marked-garment task at each budget of :data:`PROBE_EPOCHS`."""
    if preset == "paper":
        return []
    return [c.replace(epochs=e) for e in PROBE_EPOCHS[preset]
            for c in _configs("vit_marked_probe", preset, seeds, PROBE_ACTIVATIONS, PROBE_SEEDS)]


def marked_probe_at(epochs: int):
    """The grid of :func:`marked_probe`'s runs at one budget."""
    def grid(preset: str = "book", seeds=None) -> list[TrainConfig]:
        return [c for c in marked_probe(preset, seeds) if c.epochs == epochs]

    grid.__doc__ = f"The marked-garment probes at {epochs} epochs."
    return grid


def marked(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:data:`MARKED_ACTIVATIONS` on the marked-garment task, seed-major."""
    return _configs("vit_marked", preset, seeds, MARKED_ACTIVATIONS, MARKED_SEEDS)
