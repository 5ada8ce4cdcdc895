"""A Vision Transformer: patch embedding, CLS or mean pooling, the shared pre-LayerNorm
blocks (:mod:`polyattn.models.blocks`), learned positions, drop-path.  The attention
activation is a spec string."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from ..model_sizes import VIT_SIZES
from .blocks import Encoder, decay_groups, init_weights


class ViT(nn.Module):
    def __init__(self, image_size=28, patch_size=4, in_chans=1, num_classes=10, dim=64, depth=4, heads=4,
                 mlp_ratio=4.0, pool="cls", drop_path=0.0, activation="softmax", n_mode="row", path="auto",
                 qk_norm: bool = False):
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"image_size ({image_size}) must be divisible by patch_size ({patch_size})")
        if pool not in ("cls", "mean"):
            raise ValueError(f"pool must be 'cls' or 'mean', got {pool!r}")
        self.pool = pool
        self.num_patches = (image_size // patch_size) ** 2
        self.patch_embed = nn.Conv2d(in_chans, dim, kernel_size=patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim)) if pool == "cls" else None
        n_tokens = self.num_patches + (pool == "cls")
        self.pos_embed = nn.Parameter(torch.zeros(1, n_tokens, dim))
        self.blocks = Encoder(dim, depth, heads, activation, mlp_ratio, drop_path, n_mode, path, qk_norm=qk_norm)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        if self.cls_token is not None:
            nn.init.trunc_normal_(self.cls_token, std=0.02)
        self.apply(init_weights)

    def decay_groups(self) -> tuple[list, list]:
        """(decayed, not decayed) parameters: positions and the CLS token take no weight decay."""
        return decay_groups(self, no_decay=("pos_embed", "cls_token"))

    @property
    def seq_len(self) -> int:
        return self.pos_embed.shape[1]

    def forward(self, images, key_padding_mask: Optional[torch.Tensor] = None, causal: bool = False):
        """Logits; ``key_padding_mask`` ``[B, N]`` (True = visible token, CLS included) and
        ``causal`` go to every block's attention."""
        x = self.patch_embed(images).flatten(2).transpose(1, 2)
        if self.cls_token is not None:
            x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = x + self.pos_embed
        x = self.blocks(x, key_padding_mask=key_padding_mask, causal=causal)
        x = self.norm(x)
        x = x[:, 0] if self.pool == "cls" else x.mean(1)
        return self.head(x)


def build_vit(size="micro", **kwargs) -> ViT:
    """A ViT of a named size (see ``VIT_SIZES``); keyword arguments override."""
    if size not in VIT_SIZES:
        raise ValueError(f"unknown ViT size {size!r}; choose one of {sorted(VIT_SIZES)}")
    return ViT(**{**VIT_SIZES[size], **kwargs})
