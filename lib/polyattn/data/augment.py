"""DeiT-style augmentation from ``torchvision.transforms.v2``: RandAugment, random erasing,
MixUp/CutMix.  Works on uint8 image batches [B, C, H, W]."""
from __future__ import annotations

import torch
from torchvision.transforms import v2


class DeiTAugment:
    """Per-image RandAugment and random erasing, then MixUp or CutMix on the batch.

    Returns float images normalised with (mean, std) and soft targets [B, classes]."""

    def __init__(self, num_classes: int, mean: float, std: float, rand_magnitude: int = 9,
                 mixup_alpha: float = 0.8, cutmix_alpha: float = 1.0, erase_prob: float = 0.25):
        self.randaug = v2.RandAugment(num_ops=2, magnitude=rand_magnitude)
        self.erase = v2.RandomErasing(p=erase_prob, value=0)
        self.mix = batch_mix(num_classes, mixup_alpha, cutmix_alpha)
        self.mean, self.std = mean, std

    def __call__(self, images: torch.Tensor, labels: torch.Tensor):
        out = torch.stack([self.randaug(img) for img in images])
        x = (out.float() / 255 - self.mean) / self.std
        x = torch.stack([self.erase(img) for img in x])
        return self.mix(x, labels)


def batch_mix(num_classes: int, mixup_alpha: float = 0.8, cutmix_alpha: float = 1.0):
    """MixUp or CutMix, chosen at random per batch (DeiT's recipe)."""
    return v2.RandomChoice([v2.MixUp(alpha=mixup_alpha, num_classes=num_classes),
                            v2.CutMix(alpha=cutmix_alpha, num_classes=num_classes)])
