"""The marked garment: an image task that needs attention, built from Fashion-MNIST offline.

One scene is a 56 x 56 canvas of four Fashion-MNIST images, one in each 28 x 28 quarter, drawn
uniformly from the split. One quarter, drawn uniformly, is *marked*: the 7 x 7 block at its outer
corner (one patch of a patch-7 ViT) is set to white. The label is the class of the garment in the
marked quarter.

Why it needs attention: every garment of the scene is in view, so a model that pools its tokens
without looking at where the marker is can at best name the class that occurs most often among the
four (:func:`garment_set_floor`, about 30% correct). Reading the marked garment needs each token to
weigh the others by what they contain, which uniform weights (attention ablated) cannot do directly.

Training scenes come from the training split, test scenes from the test split; the same seed gives
the same scenes.
"""
from __future__ import annotations

import numpy as np
import torch

CANVAS = 56
CELL = 28
MARKER = 7
QUARTERS = 4
#: Scenes of each split when a config gives no subset.
DEFAULT_SCENES = (20_000, 4_000)
#: The seed of the scenes (training scenes use it, test scenes use it + 1), the same for every run.
SCENE_SEED = 4321


def _marker_block(quarter: int) -> tuple[slice, slice]:
    """Rows and columns of the marker of ``quarter`` (0 top left, 1 top right, 2 bottom left, 3 bottom right)."""
    rows = slice(0, MARKER) if quarter < 2 else slice(CANVAS - MARKER, CANVAS)
    cols = slice(0, MARKER) if quarter % 2 == 0 else slice(CANVAS - MARKER, CANVAS)
    return rows, cols


def marked_scenes(images: torch.Tensor, labels: torch.Tensor, n: int, seed: int):
    """``n`` scenes from ``images`` (uint8 [M, 28, 28]) and ``labels`` ([M]).

    Returns ``(x, y, classes, marked)``: the canvases, uint8 [n, 1, 56, 56]; the label, the class of
    the marked garment, int64 [n]; the four garments' classes in quarter order, int64 [n, 4]; and the
    marked quarter, int64 [n]."""
    if n < 1:
        raise ValueError(f"the marked-garment task needs at least one scene, got {n}")
    if images.ndim != 3 or tuple(images.shape[1:]) != (CELL, CELL):
        raise ValueError(f"marked_scenes takes 28 x 28 images as [M, 28, 28], got shape {tuple(images.shape)}")
    rng = np.random.default_rng(seed)
    pick = torch.from_numpy(rng.integers(0, len(labels), size=(n, QUARTERS)))
    marked = torch.from_numpy(rng.integers(0, QUARTERS, size=n))
    g = images[pick]  # [n, 4, 28, 28]
    top = torch.cat([g[:, 0], g[:, 1]], dim=2)
    bottom = torch.cat([g[:, 2], g[:, 3]], dim=2)
    x = torch.cat([top, bottom], dim=1).unsqueeze(1).contiguous()  # [n, 1, 56, 56]
    for q in range(QUARTERS):
        rows, cols = _marker_block(q)
        x[marked == q, 0, rows, cols] = 255
    classes = labels[pick].long()
    y = classes[torch.arange(n), marked]
    return x, y, classes, marked


def garment_set_floor(classes: torch.Tensor) -> float:
    """Accuracy (%) of the best guess that knows the four classes of each scene but not which quarter
    is marked: the most frequent class of the four, right with probability (its count) / 4."""
    counts = torch.nn.functional.one_hot(classes.long(), int(classes.max()) + 1).sum(dim=1)
    return float(100.0 * counts.max(dim=1).values.double().div(QUARTERS).mean())
