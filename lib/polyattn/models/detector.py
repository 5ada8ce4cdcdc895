"""Mask R-CNN with a plain ViT backbone whose attention activation is a spec string.

torchvision's :class:`~torchvision.models.detection.MaskRCNN` (untrained, nothing downloaded)
on :class:`ViTBackbone`: a patch embedding, learned positions and the shared pre-LayerNorm
blocks of :mod:`polyattn.models.blocks` (so the activation is the only thing that differs from
softmax, and every block's ``Attend`` is a probe point as in the ViT), the tokens reshaped back
to a feature map, and ViTDet's simple feature pyramid (Li, Mao, Girshick, He, "Exploring Plain
Vision Transformer Backbones for Object Detection", ECCV 2022): every level is made from that
one map by transposed convolutions (finer) or max pooling (coarser), then a 1x1 and a 3x3
convolution, each followed by a LayerNorm over channels.

The attention runs globally over every token of the padded input, so the theory's N is the
token count ``(image_size / patch_size)^2``: inputs smaller than ``image_size`` (after Mask
R-CNN's resize) are zero-padded on the right and bottom to ``image_size`` x ``image_size``, as
ViTDet pads to a fixed square.

Anchors: one size per pyramid level, ``anchor_scale`` times the level's stride (FPN uses 8:
sizes 32 .. 512 on strides 4 .. 64), aspect ratios 0.5, 1, 2; RoIs go to the level FPN's rule
gives with the canonical box scaled by the same factor (224 * anchor_scale / 8 at level 4).

``heads``: ``"standard"`` is torchvision's Mask R-CNN (two 1024-wide box MLPs, four 256-wide mask
convolutions, 256/512 sampled anchors/RoIs per image, 2000 proposals); ``"light"`` is a CPU-sized
version (see :data:`HEADS`).
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Optional, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torchvision.models.detection import MaskRCNN

from .blocks import Encoder, decay_groups, init_weights
from .vit import VIT_SIZES

#: Mask R-CNN's heads and sampling: torchvision's defaults, and a CPU-sized set for small canvases.
HEADS = {
    "standard": dict(representation=1024, mask_layers=(256, 256, 256, 256), mask_dim=256, rpn_batch=256,
                     box_batch=512, pre_nms_train=2000, post_nms_train=2000, pre_nms_test=1000, post_nms_test=1000),
    "light": dict(representation=256, mask_layers=(64, 64), mask_dim=64, rpn_batch=128, box_batch=64,
                  pre_nms_train=1000, post_nms_train=300, pre_nms_test=500, post_nms_test=100),
}
#: Pyramid levels as scale factors of the token map (1 = the patch stride); ViTDet's for patch 16.
VITDET_PYRAMID = (4.0, 2.0, 1.0, 0.5)


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of a ``[B, C, H, W]`` map."""

    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def _level(dim: int, factor: float, out_channels: int) -> nn.Sequential:
    """One pyramid level from the token map: resample by ``factor`` (a power of 2), then 1x1 and 3x3."""
    log = math.log2(factor)
    if log != int(log) or not -5 <= log <= 3:
        raise ValueError(f"pyramid factors must be powers of 2 between 1/32 and 8, got {factor}")
    layers, ch = [], dim
    for i in range(int(log)):                      # finer: transposed convolutions, halving the channels
        layers += [nn.ConvTranspose2d(ch, ch // 2, 2, stride=2)]
        ch //= 2
        if i < int(log) - 1:
            layers += [LayerNorm2d(ch), nn.GELU()]
    if log < 0:
        layers += [nn.MaxPool2d(2 ** int(-log))]
    layers += [nn.Conv2d(ch, out_channels, 1, bias=False), LayerNorm2d(out_channels),
               nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False), LayerNorm2d(out_channels)]
    return nn.Sequential(*layers)


class ViTBackbone(nn.Module):
    """Patch embedding, positions, :class:`~polyattn.models.blocks.Encoder`, and a simple
    feature pyramid; returns ``OrderedDict`` ``{"0": finest, ...}`` of ``out_channels`` maps."""

    def __init__(self, image_size=64, patch_size=4, in_chans=1, dim=64, depth=4, heads=4, mlp_ratio=4.0,
                 drop_path=0.0, activation="softmax", n_mode="row", pyramid: Sequence[float] = (1.0, 0.5, 0.25),
                 out_channels=64, path="auto"):
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"image_size ({image_size}) must be divisible by patch_size ({patch_size})")
        if not pyramid or list(pyramid) != sorted(pyramid, reverse=True):
            raise ValueError(f"pyramid must list scale factors from finest to coarsest, got {list(pyramid)}")
        self.image_size, self.patch_size, self.grid = image_size, patch_size, image_size // patch_size
        if self.grid * min(pyramid) < 1:
            raise ValueError(f"the coarsest pyramid level ({min(pyramid)}) of a {self.grid}x{self.grid} token map "
                             "is empty; drop that level or use a smaller patch")
        self.strides = tuple(int(round(patch_size / f)) for f in pyramid)
        self.patch_embed = nn.Conv2d(in_chans, dim, kernel_size=patch_size, stride=patch_size)
        self.pos_embed = nn.Parameter(torch.zeros(1, self.grid * self.grid, dim))
        self.blocks = Encoder(dim, depth, heads, activation, mlp_ratio, drop_path, n_mode, path)
        self.norm = nn.LayerNorm(dim)
        self.levels = nn.ModuleList(_level(dim, f, out_channels) for f in pyramid)
        self.out_channels = out_channels
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        self.apply(init_weights)

    @property
    def seq_len(self) -> int:
        return self.grid * self.grid

    def forward(self, images) -> "OrderedDict[str, torch.Tensor]":
        h, w = images.shape[-2:]
        if h > self.image_size or w > self.image_size:
            raise ValueError(f"the backbone takes inputs up to {self.image_size}x{self.image_size}, got {h}x{w}; "
                             "set the detector's image_size (Mask R-CNN resizes the longest side to it)")
        images = F.pad(images, (0, self.image_size - w, 0, self.image_size - h))
        x = self.patch_embed(images).flatten(2).transpose(1, 2) + self.pos_embed
        x = self.norm(self.blocks(x))
        fmap = x.transpose(1, 2).reshape(x.shape[0], -1, self.grid, self.grid)
        return OrderedDict((str(i), level(fmap)) for i, level in enumerate(self.levels))


class Detector(MaskRCNN):
    """Mask R-CNN on a :class:`ViTBackbone` (built by :func:`build_detector`)."""

    def decay_groups(self) -> tuple[list, list]:
        """(decayed, not decayed) parameters: the backbone's positions take no weight decay."""
        return decay_groups(self, no_decay=("pos_embed",))

    @property
    def seq_len(self) -> int:
        return self.backbone.seq_len


def build_detector(size: str = "micro", num_classes: int = 11, image_size: int = 64, patch_size: int = 4,
                   in_chans: int = 1, activation: str = "softmax", n_mode: str = "row",
                   pyramid: Sequence[float] = (1.0, 0.5, 0.25), out_channels: int = 64, anchor_scale: float = 3.0,
                   heads: str = "light", image_mean: Optional[Sequence[float]] = None,
                   image_std: Optional[Sequence[float]] = None, detections_per_img: int = 100,
                   drop_path: float = 0.0) -> nn.Module:
    """A Mask R-CNN on :class:`ViTBackbone` of a named ViT size (:data:`polyattn.models.vit.VIT_SIZES`).

    ``num_classes`` counts the background; images are resized so their longest side is
    ``image_size``; ``image_mean``/``image_std`` have one entry per input channel (default 0 and 1).
    """
    from torchvision.models.detection.anchor_utils import AnchorGenerator
    from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
    from torchvision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor
    from torchvision.ops import MultiScaleRoIAlign

    if size not in VIT_SIZES:
        raise ValueError(f"unknown backbone size {size!r}; choose one of {sorted(VIT_SIZES)}")
    if heads not in HEADS:
        raise ValueError(f"unknown detector heads {heads!r}; choose one of {sorted(HEADS)}")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
        raise ValueError(f"num_classes counts the background and must be >= 2, got {num_classes!r}")
    if not anchor_scale > 0:
        raise ValueError(f"anchor_scale must be positive, got {anchor_scale}")
    backbone = ViTBackbone(image_size, patch_size, in_chans, drop_path=drop_path, activation=activation,
                           n_mode=n_mode, pyramid=pyramid, out_channels=out_channels, **VIT_SIZES[size])
    h = HEADS[heads]
    names = [str(i) for i in range(len(backbone.strides))]
    anchors = AnchorGenerator(tuple((anchor_scale * s,) for s in backbone.strides), ((0.5, 1.0, 2.0),) * len(names))
    canonical = dict(canonical_scale=int(round(224 * anchor_scale / 8)), canonical_level=4)
    box_pool = MultiScaleRoIAlign(names, output_size=7, sampling_ratio=2, **canonical)
    mask_pool = MultiScaleRoIAlign(names, output_size=14, sampling_ratio=2, **canonical)
    mask_in = h["mask_layers"][-1]
    return Detector(
        backbone, num_classes=None, min_size=image_size, max_size=image_size,
        image_mean=list(image_mean) if image_mean is not None else [0.0] * in_chans,
        image_std=list(image_std) if image_std is not None else [1.0] * in_chans,
        rpn_anchor_generator=anchors,
        rpn_pre_nms_top_n_train=h["pre_nms_train"], rpn_post_nms_top_n_train=h["post_nms_train"],
        rpn_pre_nms_top_n_test=h["pre_nms_test"], rpn_post_nms_top_n_test=h["post_nms_test"],
        rpn_batch_size_per_image=h["rpn_batch"], box_batch_size_per_image=h["box_batch"],
        box_roi_pool=box_pool, box_head=TwoMLPHead(out_channels * 7 * 7, h["representation"]),
        box_predictor=FastRCNNPredictor(h["representation"], num_classes), box_detections_per_img=detections_per_img,
        mask_roi_pool=mask_pool, mask_head=MaskRCNNHeads(out_channels, h["mask_layers"], 1),
        mask_predictor=MaskRCNNPredictor(mask_in, h["mask_dim"], num_classes))


__all__ = ["HEADS", "VITDET_PYRAMID", "Detector", "LayerNorm2d", "ViTBackbone", "build_detector"]
