"""In-memory image datasets as tensors, with a fixed, seeded training subset."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .errors import DatasetMissing
from .fashion_mnist import load_fashion_mnist
from .marked import DEFAULT_SCENES, SCENE_SEED, marked_scenes

# Channel statistics of the Fashion-MNIST training set.
FASHION_MNIST_MEAN, FASHION_MNIST_STD = 0.2860, 0.3530
#: Images in the training and test split of each in-memory dataset, as it is published.
#: The marked-garment task composes its scenes, so its "split" is the number of scenes drawn by default.
SIZES = {"fashion_mnist": (60_000, 10_000), "fashion_marked": DEFAULT_SCENES}
#: The datasets whose examples are composed on demand: their sizes are whatever a config asks for.
COMPOSED = ("fashion_marked",)
SUBSET_SEED = 1234  # the same subset for every run, so runs differ only in their own seed


@dataclass
class TensorImages:
    train_x: torch.Tensor  # uint8 [N, C, H, W]
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    num_classes: int
    mean: float
    std: float

    def normalise(self, x: torch.Tensor) -> torch.Tensor:
        return (x.float() / 255 - self.mean) / self.std


def _subset(x, y, k, seed):
    if k is None or k >= len(y):
        return x, y
    g = torch.Generator().manual_seed(seed)
    idx = torch.randperm(len(y), generator=g)[:k]
    return x[idx], y[idx]


def split_sizes(name: str, train_subset: int | None = None, test_subset: int | None = None) -> tuple[int, int]:
    """The training and test images a run of ``name`` sees: its subsets, or the whole splits
    (:data:`SIZES`) where a subset is None or larger than the split."""
    if name not in SIZES:
        raise DatasetMissing(f"unknown in-memory dataset {name!r}; available: {', '.join(SIZES)}")
    n_train, n_test = SIZES[name]
    if name in COMPOSED:  # as many scenes as asked for
        return (n_train if train_subset is None else train_subset, n_test if test_subset is None else test_subset)
    return (n_train if train_subset is None else min(train_subset, n_train),
            n_test if test_subset is None else min(test_subset, n_test))


def load_dataset(name: str, train_subset: int | None = None, test_subset: int | None = None) -> TensorImages:
    """A dataset held in memory, with fixed random subsets (the same for every run)."""
    if name == "fashion_mnist":
        tx, ty, vx, vy = load_fashion_mnist()
        tx, ty = _subset(tx[:, None], ty, train_subset, SUBSET_SEED)
        vx, vy = _subset(vx[:, None], vy, test_subset, SUBSET_SEED + 1)
        return TensorImages(tx, ty, vx, vy, 10, FASHION_MNIST_MEAN, FASHION_MNIST_STD)
    if name == "fashion_marked":
        n_train, n_test = split_sizes(name, train_subset, test_subset)
        tx, ty, vx, vy = load_fashion_mnist()
        tx, ty, _, _ = marked_scenes(tx, ty, n_train, SCENE_SEED)
        vx, vy, _, _ = marked_scenes(vx, vy, n_test, SCENE_SEED + 1)
        pixels = tx.float() / 255
        return TensorImages(tx, ty, vx, vy, 10, float(pixels.mean()), float(pixels.std()))
    raise DatasetMissing(f"unknown in-memory dataset {name!r}; available: {', '.join(SIZES)}. "
                         "CIFAR-10 and ImageFolder datasets load through polyattn.data.images.")
