"""COCO 2017 instances for Mask R-CNN, read from a copy the user supplies (nothing downloads).

Expected layout under ``root``::

    train2017/*.jpg   val2017/*.jpg   annotations/instances_train2017.json   annotations/instances_val2017.json

(the images and the "2017 Train/Val annotations" archive of https://cocodataset.org/#download).
An item is ``(image, target)``: the image as float32 ``[3, H, W]`` in [0, 1], the target with
``boxes`` (float32 ``[n, 4]``, ``x0, y0, x1, y1``), ``labels`` (COCO category ids 1..90, as
torchvision's COCO models number them) and ``masks`` (uint8 ``[n, H, W]``), crowd regions and
boxes without area left out, as torchvision's detection references do.  Reading the
annotations needs pycocotools.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import torch

from .errors import DatasetMissing

SPLITS = ("train", "val")
#: Category ids run 1..90 with gaps; with the background, Mask R-CNN's class count is 91.
NUM_CLASSES = 91
INSTALL_HINT = "pip install torchmetrics pycocotools (pinned in requirements.txt)"


def require_pycocotools():
    """pycocotools' ``COCO`` and ``mask`` modules, or an ImportError naming the install command."""
    try:
        from pycocotools import mask as coco_mask
        from pycocotools.coco import COCO
    except ImportError:
        raise ImportError(f"COCO annotations and metrics need pycocotools: {INSTALL_HINT}") from None
    return COCO, coco_mask


def coco_paths(root, split: str) -> tuple[Path, Path]:
    """(image folder, annotation file) of ``split``; :class:`DatasetMissing` with the layout when absent."""
    if split not in SPLITS:
        raise ValueError(f"COCO split must be one of {SPLITS}, got {split!r}")
    if root is None:
        raise DatasetMissing("COCO is not available offline: pass its location as data_root (--data-root), a folder "
                             "holding train2017/, val2017/ and annotations/instances_{train,val}2017.json from "
                             "https://cocodataset.org/#download")
    root = Path(root)
    images, ann = root / f"{split}2017", root / "annotations" / f"instances_{split}2017.json"
    if not images.is_dir() or not ann.is_file():
        raise DatasetMissing(f"COCO {split}2017 not found under {root}: expected {images}/ with the images and {ann} "
                             "(download them from https://cocodataset.org/#download)")
    return images, ann


class CocoInstances(torch.utils.data.Dataset):
    """COCO 2017 ``split`` as (image, target) pairs; ``limit`` keeps the first images (by id)."""

    def __init__(self, root, split: str = "train", limit: Optional[int] = None):
        COCO, _ = require_pycocotools()
        self.images, ann = coco_paths(root, split)
        self.coco = COCO(str(ann))
        ids = sorted(self.coco.imgs)
        if split == "train":   # as torchvision's references: train only on images with a usable annotation
            ids = [i for i in ids if any(not a.get("iscrowd", 0) and a["bbox"][2] >= 1 and a["bbox"][3] >= 1
                                         for a in self.coco.imgToAnns.get(i, []))]
        self.ids = ids[:limit] if limit else ids

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: int):
        from PIL import Image

        img_id = self.ids[index]
        info = self.coco.imgs[img_id]
        with Image.open(self.images / info["file_name"]) as im:
            image = torch.from_numpy(np.asarray(im.convert("RGB"), dtype=np.uint8).copy())
        image = image.permute(2, 0, 1).float() / 255
        h, w = image.shape[-2:]
        anns = [a for a in self.coco.imgToAnns.get(img_id, [])
                if not a.get("iscrowd", 0) and a["bbox"][2] >= 1 and a["bbox"][3] >= 1]
        boxes = torch.tensor([[a["bbox"][0], a["bbox"][1], a["bbox"][0] + a["bbox"][2], a["bbox"][1] + a["bbox"][3]]
                              for a in anns], dtype=torch.float32).reshape(-1, 4)
        boxes[:, 0::2] = boxes[:, 0::2].clamp(0, w)
        boxes[:, 1::2] = boxes[:, 1::2].clamp(0, h)
        masks = (torch.from_numpy(np.stack([self.coco.annToMask(a) for a in anns])) if anns
                 else torch.zeros(0, h, w, dtype=torch.uint8))
        labels = torch.tensor([a["category_id"] for a in anns], dtype=torch.int64)
        keep = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
        return image, {"boxes": boxes[keep], "labels": labels[keep], "masks": masks[keep].to(torch.uint8)}


__all__ = ["CocoInstances", "INSTALL_HINT", "NUM_CLASSES", "coco_paths", "require_pycocotools"]
