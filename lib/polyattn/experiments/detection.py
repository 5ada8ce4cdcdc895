"""The detection proxy: Mask R-CNN with softmax and polynomial attention, as a config grid per preset.

The paper reports Mask R-CNN on COCO with polynomial attention "near-identical" to softmax
(Table 3; backbones, schedule and numbers not public).  COCO is not available offline, so the
book trains Mask R-CNN (:mod:`polyattn.tasks.detection`) on synthetic scenes of Fashion-MNIST
items (:mod:`polyattn.data.scenes`) with a small plain-ViT backbone
(:mod:`polyattn.models.detector`) whose attention activation is the only difference between runs:

* ``softmax``;
* ``poly:p=3``: x^3/sqrt(N), N the backbone's token count;
* ``poly:p=3,c=1/14``: x^3/14, the fixed scale the paper ran on ImageNet and LRA.

``smoke``: seconds per run (a 32 x 32 canvas, 16 training scenes), for CI; never evidence.

``book``: 3 seeds, sized for one CPU thread per run (about 13 CPU-minutes each, the 9 runs in
about 2 CPU-hours, a third of the 6 CPU-hours first planned, so that the grid fits one working
session on two cores).  Scenes on a 64 x 64 canvas, 1-4 Fashion-MNIST items each of 18-32 pixels
(:class:`polyattn.data.scenes.SceneSpec`'s defaults); 3,000 training scenes, 500 test scenes,
the same for every run.  Backbone: the ViT ``micro`` (width 64, 4 blocks, 4 heads, about 0.34M
parameters) on 4 x 4 patches, so N = 256 tokens, with a three-level simple feature pyramid
(strides 4, 8, 16; 64 channels), anchors of 12, 24 and 48 pixels, and the ``light`` Mask R-CNN
heads (1.35M parameters in all).  AdamW at 5e-4 (cosine decay after a quarter epoch of
warm-up), weight decay 0.05, gradients clipped at 1, batches of 8, 2 epochs (750 steps),
evaluated after each epoch.

Measured while sizing it (CPU time of one thread, on a 2-core machine shared with other
training runs at a load of 4-8, so upper bounds): a training step takes 0.69 s with softmax,
0.78 s with x^3/sqrt(N) and 0.75 s with x^3/14 (means over 45 steps at a load of about 4);
evaluation takes 0.1-0.2 s per test scene (0.2 s untrained, when every scene has 100
detections).  A softmax probe of 750 steps (2,000 training scenes, 3 epochs, 200 test scenes,
otherwise the book's settings) took 853 CPU-seconds with its three evaluations at a load of
about 8, i.e. about 1.0 s per step, and reached box AP 35.9 (AP50 58.3) and mask AP 29.7
(AP50 54.9); after its first epoch, 27.5 box AP.  The book keeps that probe's 750 steps with
more distinct scenes (3,000 seen twice instead of 2,000 seen three times).

Every reduction against the paper's COCO experiment (whose backbones and schedule are not
public): synthetic 64 x 64 grey scenes of 10 classes instead of COCO's photographs (118,000
training images of 80 classes, resized to 800-1,333 pixels); a width-64, 4-block ViT on N = 256
tokens instead of an ImageNet-sized backbone (ViT/XCiT-S is about 22-26M parameters) and no
ImageNet pre-training; 64-channel pyramid and light heads instead of 256 channels and
torchvision's heads; 750 steps of 8 scenes (6,000 scenes seen) instead of a 1x-3x COCO
schedule (90,000-270,000 steps of 16 images); no augmentation; a learning rate of 5e-4 instead
of 1e-4, for the short schedule.

``paper``: Mask R-CNN on COCO 2017 (train2017 / val2017 from ``--data-root``; a clear error names
the expected layout when it is absent), on GPUs, not run here.  The paper's backbones and schedule
are not public; the closest known setting is its lab's Mask R-CNN with XCiT-S backbones, which uses
XCiT's detection recipe (a 3x schedule: 36 epochs, batch 16, AdamW at 1e-4, weight decay 0.05).
XCiT is not built on this library's blocks, so the backbone is a ViT-S/16 (width 384, 12 blocks, 6
heads, drop-path 0.1) with ViTDet's simple feature pyramid (strides 4-32, 256 channels) and global
attention over a 1024 x 1024 padded input (N = 4,096 tokens), torchvision's standard Mask R-CNN
heads and FPN anchors (8 x the stride); images resized to a longest side of 1,024 without
multi-scale augmentation.
"""
from __future__ import annotations

from ..config import TrainConfig
from ..labels import DETECTION_VARIANTS
from ..labels import detection_label as variant_label
from ..models.detector import VITDET_PYRAMID
from ..presets import check, seeds_for

_COMMON = dict(task="detection", n_mode="row", clip_grad=1.0, threads=1)

_SCALE = {
    "smoke": dict(dataset="scenes", image_size=32, patch_size=4, model="micro", train_subset=16, test_subset=8,
                  epochs=1, batch_size=8, lr=5e-4, weight_decay=0.05, warmup_epochs=0.5,
                  options=dict(scenes=dict(min_items=1, max_items=2, min_side=12, max_side=16, min_area=8),
                               eval_batch=8)),
    "book": dict(dataset="scenes", image_size=64, patch_size=4, model="micro", train_subset=3000, test_subset=500,
                 epochs=2, batch_size=8, lr=5e-4, weight_decay=0.05, warmup_epochs=0.25, eval_every=1,
                 options=dict(eval_batch=50)),
    "paper": dict(dataset="coco", image_size=1024, patch_size=16, model="small", drop_path=0.1, epochs=36,
                  batch_size=16, lr=1e-4, weight_decay=0.05, warmup_epochs=0.07, clip_grad=0.0, num_workers=8,
                  options=dict(pyramid=VITDET_PYRAMID, out_channels=256, anchor_scale=8.0, heads="standard",
                               eval_batch=8)),
}


def detection_proxy(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """One Mask R-CNN per variant and seed (seed-major order, so a partial run set has every
    variant of the first seeds)."""
    settings = {**_COMMON, **_SCALE[check(preset)]}
    device = "cuda" if preset == "paper" else "cpu"
    return [TrainConfig(experiment="detection_proxy", preset=preset, activation=act, seed=s, device=device, **settings)
            for s in seeds_for(preset, seeds) for _, act in DETECTION_VARIANTS]


def detection_ablated(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """The positive control: :func:`detection_proxy`'s softmax runs with attention ablated (``uniform``:
    every visible token weighted 1/N). Where it too matches softmax, the proxy cannot see attention."""
    if check(preset) == "paper":
        return []
    return [c.replace(experiment="detection_ablated", activation="uniform")
            for c in detection_proxy(preset, seeds) if c.activation == "softmax"]


__all__ = ["DETECTION_VARIANTS", "detection_ablated", "detection_proxy", "variant_label"]
