"""The marked-garment task (:mod:`polyattn.data.marked`) as config grids: an image benchmark where
attention is needed, for chapter 04.

* ``vit_marked_probe``: softmax and uniform attention (attention ablated), one seed, to find whether
  softmax learns the task at :data:`MARKED_SCALE`'s budget while uniform attention stays well behind.
* ``vit_marked``: softmax, x^3/sqrt(N), the unscaled x^3 and uniform attention at the same recipe,
  :data:`MARKED_SEEDS`.

The recipe is the converged tier's (micro ViT, AdamW at 2e-3, weight decay 0.05, no gradient
clipping) on 56 x 56 scenes with patch 7: 64 patches and CLS, N = 65.

``smoke``: seconds per run, for tests; never evidence. There is no ``paper`` preset (the paper has
no such task); it gives no configs.
"""
from __future__ import annotations

from ..config import TrainConfig
from ..presets import seeds_for

#: Scenes, epochs and batch of each preset (test scenes are the same for every run).
MARKED_SCALE = {
    "smoke": dict(train_subset=256, test_subset=128, epochs=1, batch_size=64, warmup_epochs=0.5),
    "book": dict(train_subset=20_000, test_subset=4_000, epochs=10, batch_size=128, warmup_epochs=1.0),
}
_COMMON = dict(task="images", dataset="fashion_marked", image_size=56, patch_size=7, model="micro", lr=2e-3,
               weight_decay=0.05, clip_grad=0.0, threads=1)
PROBE_ACTIVATIONS = ("softmax", "uniform")
MARKED_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1", "uniform")
PROBE_SEEDS = {"smoke": (0,), "book": (0,)}
MARKED_SEEDS = {"smoke": (0,), "book": (0, 1, 2, 3, 4)}


def _configs(name, preset, seeds, activations, plan) -> list[TrainConfig]:
    if preset == "paper":
        return []
    return [TrainConfig(experiment=name, preset=preset, activation=act, seed=s, **_COMMON, **MARKED_SCALE[preset])
            for s in seeds_for(preset, seeds, plan) for act in activations]


def marked_probe(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Softmax and uniform attention on the marked-garment task, seed-major."""
    return _configs("vit_marked_probe", preset, seeds, PROBE_ACTIVATIONS, PROBE_SEEDS)


def marked(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:data:`MARKED_ACTIVATIONS` on the marked-garment task, seed-major."""
    return _configs("vit_marked", preset, seeds, MARKED_ACTIVATIONS, MARKED_SEEDS)
