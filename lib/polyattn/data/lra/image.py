"""Images as sequences of pixel tokens: the Long Range Arena's Image task.

The published task reads CIFAR-10 in grey levels, 32 x 32 = 1,024 tokens over a vocabulary of
256, 45,000 / 5,000 / 10,000 images.  CIFAR-10 does not install offline, so the default here is
Fashion-MNIST (Debian's ``dataset-fashion-mnist``): 28 x 28 = 784 tokens, 55,000 / 5,000 /
10,000.  A token is the grey level itself, so a black pixel is token 0 and a real token: the
padding mask is all True (no padding id exists in this vocabulary).

Grey levels of CIFAR-10 use the ITU-R 601 weights 0.2989 R + 0.5870 G + 0.1140 B, as TensorFlow's
``rgb_to_grayscale`` in the published pipeline, rounded to the nearest level.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import torch

from ..fashion_mnist import default_root, load_fashion_mnist
from ..images import load_cifar10

GREY_WEIGHTS = (0.2989, 0.5870, 0.1140)
SIZES = {"fashion_mnist": (55_000, 5_000, 10_000), "cifar10": (45_000, 5_000, 10_000)}


def grey(rgb: torch.Tensor) -> torch.Tensor:
    """uint8 [N, H, W, 3] -> uint8 [N, H, W]."""
    w = torch.tensor(GREY_WEIGHTS, dtype=torch.float64)
    return torch.round(rgb.to(torch.float64) @ w).clamp(0, 255).to(torch.uint8)


def _split(train_x, train_y, test_x, test_y, sizes: Sequence[int], seed: int) -> dict:
    """Validation images are held out of the training images; subsets are seeded draws."""
    n_train, n_val, n_test = sizes
    if n_train + n_val > len(train_y) or n_test > len(test_y):
        raise ValueError(f"asked for {n_train}+{n_val} training and {n_test} test images; "
                         f"there are {len(train_y)} and {len(test_y)}")
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(train_y), generator=g)
    val_idx, train_idx = order[:n_val], order[n_val:n_val + n_train]
    test_idx = torch.randperm(len(test_y), generator=g)[:n_test]
    return {"train": (train_x[train_idx], train_y[train_idx]), "val": (train_x[val_idx], train_y[val_idx]),
            "test": (test_x[test_idx], test_y[test_idx])}


def load_images(dataset: str = "fashion_mnist", sizes: Sequence[int] | None = None, seed: int = 0,
                root: str | Path | None = None) -> dict:
    """Split name -> ``(images uint8 [M, H, W], labels int64 [M])`` in grey levels."""
    sizes = tuple(sizes) if sizes is not None else SIZES[dataset]
    if dataset == "fashion_mnist":
        tx, ty, vx, vy = load_fashion_mnist(root=root)
    elif dataset == "cifar10":
        root = Path(root) if root is not None else default_root()
        train, test = load_cifar10(root, train=True), load_cifar10(root, train=False)
        tx, vx = grey(torch.as_tensor(train.data)), grey(torch.as_tensor(test.data))
        ty, vy = torch.as_tensor(train.targets), torch.as_tensor(test.targets)
    else:
        raise ValueError(f"unknown image data set {dataset!r}; choose 'fashion_mnist' or 'cifar10'")
    return _split(tx, ty.to(torch.int64), vx, vy.to(torch.int64), sizes, seed)


def as_tokens(images: torch.Tensor) -> torch.Tensor:
    """uint8 [M, H, W] -> int64 [M, H W] in row-major order: token = grey level."""
    return images.reshape(len(images), -1).to(torch.int64)


def downsample(images: torch.Tensor, side: int) -> torch.Tensor:
    """uint8 [M, H, W] -> uint8 [M, side, side]: each output pixel the mean grey level of the
    input pixels it covers (area averaging; exact 2 x 2 means for 28 -> 14), rounded."""
    h, w = images.shape[-2:]
    if not 1 <= side <= min(h, w):
        raise ValueError(f"side must lie in 1..{min(h, w)} to downsample {h} x {w} images, got {side}")
    if side == h == w:
        return images
    x = torch.nn.functional.adaptive_avg_pool2d(images[:, None].to(torch.float32), side)[:, 0]
    return torch.round(x).clamp(0, 255).to(torch.uint8)
