"""Datasets streamed from disk with a DataLoader (CIFAR-10, Tiny-ImageNet, ImageNet-1k):
the ``paper`` preset's data.  Training transforms follow DeiT (random resized crop, flip,
RandAugment and random erasing with ``augment='deit'``); evaluation resizes and centre-crops."""
from __future__ import annotations

import os
from pathlib import Path

import torch
from torchvision.transforms import v2

from .errors import DatasetMissing
from .images import load_cifar10, load_image_folder

#: name -> (classes, channels, mean, std)
STREAMING = {
    "cifar10": (10, 3, (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
    "tiny_imagenet": (200, 3, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    "imagenet": (1000, 3, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
}


def transforms(dataset: str, image_size: int, train: bool, augment: str):
    _, _, mean, std = STREAMING[dataset]
    to_float = [v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)]
    if not train:
        resize = image_size if dataset != "imagenet" else int(round(image_size / 0.875))
        return v2.Compose([v2.Resize(resize, antialias=True), v2.CenterCrop(image_size), *to_float])
    head = [v2.RandomResizedCrop(image_size, antialias=True), v2.RandomHorizontalFlip()]
    if augment == "deit":
        return v2.Compose([*head, v2.RandAugment(num_ops=2, magnitude=9), *to_float, v2.RandomErasing(p=0.25, value=0)])
    return v2.Compose([*head, *to_float])


def streaming_datasets(dataset: str, data_root: str | None, image_size: int, augment: str):
    """``(train_dataset, test_dataset, num_classes, in_chans)`` for a dataset read from disk."""
    if dataset not in STREAMING:
        raise DatasetMissing(f"unknown dataset {dataset!r}; choose 'fashion_mnist' or one of {sorted(STREAMING)}")
    root = data_root or os.environ.get(f"POLYATTN_{dataset.upper()}")
    if not root:
        raise DatasetMissing(f"{dataset} needs its location: pass --data-root DIR or set "
                             f"POLYATTN_{dataset.upper()}=DIR")
    classes, chans, _, _ = STREAMING[dataset]
    train_t, test_t = transforms(dataset, image_size, True, augment), transforms(dataset, image_size, False, augment)
    if dataset == "cifar10":
        return load_cifar10(root, True, train_t), load_cifar10(root, False, test_t), classes, chans
    return (load_image_folder(Path(root), "train", train_t), load_image_folder(Path(root), "val", test_t),
            classes, chans)
