"""Synthetic detection scenes: Fashion-MNIST items pasted onto a larger canvas, with a class, a
box and a pixel mask per item (the offline proxy for COCO of the detection task).

One scene of a :class:`SceneSpec`:

* ``min_items .. max_items`` items (the count drawn uniformly), each a Fashion-MNIST image of
  the split (drawn uniformly), resized to a square of side ``min_side .. max_side`` pixels
  (bilinear with antialiasing, rounded to uint8), placed wholly inside the ``canvas`` x
  ``canvas`` black canvas at a uniform position;
* an item's pixel mask is where its resized pixels exceed ``threshold`` (0-255); pasting writes
  exactly those pixels, so a later item occludes an earlier one where their masks meet, and the
  earlier item's mask loses those pixels (masks of a scene are disjoint by construction);
* a placement is accepted only when every item already on the canvas keeps at least
  ``min_visible`` of its own mask and the new mask has at least ``min_area`` pixels; otherwise it
  is drawn again, up to ``tries`` times, after which the item is left out (the scene then holds
  fewer items than drawn; the first item is always placed, so no scene is empty);
* an item's box is the tight box of its visible mask in pixel-edge coordinates
  ``(x0, y0, x1, y1)`` with ``x1 = last column + 1`` (a one-pixel mask has a 1 x 1 box, as
  pycocotools' ``toBbox`` counts it).

Scenes are stored compactly: the images, an instance map per scene (0 = background, k = the
scene's k-th item), and per item its class, its source index in the Fashion-MNIST split and its
placement.  Training scenes come from the Fashion-MNIST training split, test scenes from its
test split; the same seed gives the same scenes, and generated sets are cached under
``data/cache/scenes``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .cache import atomic_write, cache_key, cache_root
from .fashion_mnist import load_fashion_mnist

SPLITS = ("train", "test")
#: Bump when the generator's output changes for the same parameters (renames every cached set).
GENERATOR_VERSION = 1


@dataclass(frozen=True)
class SceneSpec:
    """How scenes are composed (see the module docstring)."""
    canvas: int = 64
    min_items: int = 1
    max_items: int = 4
    min_side: int = 18
    max_side: int = 32
    threshold: int = 40
    min_visible: float = 0.6
    min_area: int = 16
    tries: int = 20

    def __post_init__(self):
        def integer(name, low):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"scene parameter {name!r} must be an integer >= {low}, got {v!r}")

        for name, low in (("canvas", 8), ("min_items", 1), ("max_items", 1), ("min_side", 4), ("max_side", 4),
                          ("min_area", 1), ("tries", 1)):
            integer(name, low)
        integer("threshold", 0)
        if self.threshold > 254:
            raise ValueError(f"scene parameter 'threshold' must lie in 0..254 (uint8 intensity), got {self.threshold}")
        if self.min_items > self.max_items:
            raise ValueError(f"min_items ({self.min_items}) exceeds max_items ({self.max_items})")
        if self.min_side > self.max_side:
            raise ValueError(f"min_side ({self.min_side}) exceeds max_side ({self.max_side})")
        if self.max_side > self.canvas:
            raise ValueError(f"max_side ({self.max_side}) exceeds the canvas ({self.canvas}): an item must fit whole; "
                             "lower max_side or enlarge the canvas")
        if isinstance(self.min_visible, bool) or not 0 < float(self.min_visible) <= 1:
            raise ValueError(f"scene parameter 'min_visible' must lie in (0, 1], got {self.min_visible!r}")

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Scenes:
    """Scenes and their annotations.

    ``images``: uint8 ``[S, 1, H, W]``; ``instances``: uint8 ``[S, H, W]`` (0 background, k the
    k-th item of the scene); ``labels``, ``sources``: int64 ``[S, max_items]`` (the item's
    Fashion-MNIST class and its index in the split; -1 past the scene's items); ``placements``:
    int64 ``[S, max_items, 3]`` (top row, left column, side; -1 past the scene's items).
    """
    images: torch.Tensor
    instances: torch.Tensor
    labels: torch.Tensor
    sources: torch.Tensor
    placements: torch.Tensor
    spec: SceneSpec

    def __len__(self) -> int:
        return self.images.shape[0]

    def counts(self) -> torch.Tensor:
        """Items per scene, int64 ``[S]``."""
        return (self.labels >= 0).sum(1)

    def masks(self, i: int) -> torch.Tensor:
        """The visible masks of scene ``i``, bool ``[n, H, W]`` in pasting order."""
        n = int((self.labels[i] >= 0).sum())
        return self.instances[i][None] == torch.arange(1, n + 1, dtype=torch.uint8)[:, None, None]

    def boxes(self, i: int) -> torch.Tensor:
        """The tight boxes of scene ``i``'s masks, float32 ``[n, 4]`` as ``(x0, y0, x1, y1)``."""
        return mask_boxes(self.masks(i))

    def target(self, i: int) -> dict:
        """Scene ``i``'s annotations: ``boxes`` float32 ``[n, 4]``, ``labels`` int64 ``[n]`` (the
        Fashion-MNIST class), ``masks`` bool ``[n, H, W]``."""
        n = int((self.labels[i] >= 0).sum())
        masks = self.masks(i)
        return {"boxes": mask_boxes(masks), "labels": self.labels[i, :n].clone(), "masks": masks}


def mask_boxes(masks: torch.Tensor) -> torch.Tensor:
    """Tight boxes ``(x0, y0, x1, y1)`` of bool masks ``[n, H, W]`` in pixel-edge coordinates (the
    last row and column + 1); an empty mask is an error."""
    if masks.dim() != 3:
        raise ValueError(f"masks must have shape (n, H, W), got {tuple(masks.shape)}")
    out = torch.zeros(masks.shape[0], 4, dtype=torch.float32)
    for k, m in enumerate(masks):
        rows, cols = torch.nonzero(m.any(1)).flatten(), torch.nonzero(m.any(0)).flatten()
        if not len(rows):
            raise ValueError(f"mask {k} is empty: it has no box")
        out[k] = torch.tensor([cols[0], rows[0], cols[-1] + 1, rows[-1] + 1], dtype=torch.float32)
    return out


def resize_item(item: torch.Tensor, side: int) -> torch.Tensor:
    """A uint8 ``[h, w]`` image resized to ``side`` x ``side`` (bilinear, antialiased, rounded)."""
    x = F.interpolate(item[None, None].float(), size=(side, side), mode="bilinear", antialias=True,
                      align_corners=False)
    return x[0, 0].round().clamp(0, 255).to(torch.uint8)


def compose_scenes(items: torch.Tensor, classes: torch.Tensor, count: int, spec: SceneSpec = SceneSpec(),
                   seed: int = 0) -> Scenes:
    """``count`` scenes made of ``items`` (uint8 ``[M, h, w]``) of classes ``classes`` (``[M]``),
    deterministic in ``seed`` (see the module docstring for the rules)."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"the number of scenes must be a positive integer, got {count!r}")
    if items.dim() != 3 or items.dtype != torch.uint8 or len(items) != len(classes) or len(items) == 0:
        raise ValueError(f"items must be a non-empty uint8 tensor (M, h, w) with one class each, got "
                         f"{tuple(items.shape)} {items.dtype} and {len(classes)} classes")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), GENERATOR_VERSION]))
    c, k_max = spec.canvas, spec.max_items
    # numpy inside the loop: per-call overhead dominates on arrays this small
    images = np.zeros((count, c, c), dtype=np.uint8)
    instances = np.zeros((count, c, c), dtype=np.uint8)
    labels = np.full((count, k_max), -1, dtype=np.int64)
    sources = np.full((count, k_max), -1, dtype=np.int64)
    placements = np.full((count, k_max, 3), -1, dtype=np.int64)
    classes = np.asarray(classes, dtype=np.int64)
    resized: dict[tuple[int, int], np.ndarray] = {}
    for s in range(count):
        canvas, owner = images[s], instances[s]
        full_area: list[int] = []
        for _ in range(int(rng.integers(spec.min_items, spec.max_items + 1))):
            k = len(full_area)
            for _ in range(spec.tries):
                src = int(rng.integers(len(items)))
                side = int(rng.integers(spec.min_side, spec.max_side + 1))
                y, x = (int(v) for v in rng.integers(0, c - side + 1, size=2))
                if (src, side) not in resized:
                    resized[src, side] = resize_item(items[src], side).numpy()
                pixels = resized[src, side]
                mask = pixels > spec.threshold
                area = int(mask.sum())
                if area < spec.min_area:
                    continue
                window = owner[y:y + side, x:x + side]
                if k:
                    covered = np.bincount(window[mask], minlength=k + 1)[1:k + 1]
                    visible = np.bincount(owner.ravel(), minlength=k + 1)[1:k + 1]
                    if np.any(visible - covered < spec.min_visible * np.asarray(full_area)):
                        continue
                canvas[y:y + side, x:x + side][mask] = pixels[mask]
                window[mask] = k + 1
                full_area.append(area)
                labels[s, k], sources[s, k] = classes[src], src
                placements[s, k] = (y, x, side)
                break
            if not full_area:
                raise ValueError(f"no item could be placed in {spec.tries} tries (every drawn item has fewer than "
                                 f"min_area={spec.min_area} mask pixels above threshold {spec.threshold}); "
                                 "lower min_area or threshold")
    t = torch.from_numpy
    return Scenes(t(images)[:, None], t(instances), t(labels), t(sources), t(placements), spec)


def _pack(scenes: Scenes) -> dict:
    return {"images": scenes.images, "instances": scenes.instances, "labels": scenes.labels,
            "sources": scenes.sources, "placements": scenes.placements}


def load_scenes(split: str, count: int, spec: SceneSpec = SceneSpec(), seed: int = 0, use_cache: bool = True,
                source=None) -> Scenes:
    """``count`` scenes from Fashion-MNIST's ``split`` (``"train"`` or ``"test"``), made once and
    cached.  ``source``: ``(images, classes)`` to compose from instead of Fashion-MNIST (tests);
    without it a missing Fashion-MNIST raises :class:`~polyattn.data.DatasetMissing` naming the
    package to install."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if not isinstance(spec, SceneSpec):
        raise ValueError(f"spec must be a SceneSpec, got {type(spec).__name__}")
    stream = int(np.random.SeedSequence([int(seed), SPLITS.index(split)]).generate_state(1)[0])
    path = None
    if use_cache and source is None:
        params = {"split": split, "count": count, "seed": seed, "version": GENERATOR_VERSION, **spec.as_dict()}
        path = cache_root() / "scenes" / f"{split}-{cache_key(params)}.pt"
        if path.exists():
            try:
                return Scenes(**torch.load(path, weights_only=True), spec=spec)
            except Exception:  # a broken or older file: make it again
                pass
    if source is None:
        tx, ty, vx, vy = load_fashion_mnist()
        source = (tx, ty) if split == "train" else (vx, vy)
    scenes = compose_scenes(source[0], source[1], count, spec, seed=stream)
    if path is not None:
        atomic_write(path, lambda tmp: torch.save(_pack(scenes), tmp))
    return scenes


__all__ = ["GENERATOR_VERSION", "SPLITS", "SceneSpec", "Scenes", "compose_scenes", "load_scenes", "mask_boxes",
           "resize_item"]
