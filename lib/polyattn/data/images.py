"""CIFAR-10 and ImageFolder datasets (Tiny-ImageNet, ImageNet) that the user supplies.

Nothing here downloads: these datasets are not available offline, so a missing one raises
:class:`DatasetMissing` with the layout that is expected."""
from __future__ import annotations

from pathlib import Path

from .errors import DatasetMissing


def load_cifar10(root, train: bool = True, transform=None):
    """torchvision's CIFAR-10 from ``<root>/cifar-10-batches-py`` (the python version of the archive)."""
    from torchvision.datasets import CIFAR10

    root = Path(root)
    if not (root / "cifar-10-batches-py").is_dir():
        raise DatasetMissing(
            f"CIFAR-10 not found under {root}. Download cifar-10-python.tar.gz from "
            "https://www.cs.toronto.edu/~kriz/cifar.html and extract it there "
            f"(expected {root / 'cifar-10-batches-py'}).")
    return CIFAR10(str(root), train=train, transform=transform, download=False)


def load_image_folder(root, split: str = "train", transform=None):
    """An ImageFolder split ``<root>/<split>/<class>/<image>`` (Tiny-ImageNet, ImageNet-1k).

    Tiny-ImageNet's validation set must first be sorted into class folders (its
    ``val_annotations.txt`` gives each image's class)."""
    from torchvision.datasets import ImageFolder

    path = Path(root) / split
    if not path.is_dir() or not any(p.is_dir() for p in path.iterdir()):
        raise DatasetMissing(
            f"no ImageFolder split at {path}. Expected {path}/<class>/<image files>; "
            "for ImageNet-1k use the standard train/ and val/ folders, for Tiny-ImageNet sort "
            "val/images into class folders using val/val_annotations.txt.")
    return ImageFolder(str(path), transform=transform)
