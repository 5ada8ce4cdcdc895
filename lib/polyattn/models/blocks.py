"""The shared transformer pieces: one pre-LayerNorm block and an encoder stack.

Every model of the book (ViT, the LRA classifier, the character LM, PINNsFormer's encoder)
is built from :class:`Block`, so the attention activation, the key-padding mask and the
causal flag reach :class:`polyattn.attention.MultiHeadAttention` the same way everywhere.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn
from torchvision.ops import StochasticDepth

from ..attention import MultiHeadAttention


class Block(nn.Module):
    """x + attn(LN(x)), then x + MLP(LN(x)), with drop-path on both branches."""

    def __init__(self, dim, heads, activation, mlp_ratio=4.0, drop_path=0.0, n_mode="row", path="auto",
                 dropout: float = 0.0, qk_norm: bool = False, rope: bool = False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MultiHeadAttention(dim, heads, activation, n_mode=n_mode, path=path, proj_drop=dropout,
                                       qk_norm=qk_norm, rope=rope)
        self.drop_path = StochasticDepth(drop_path, mode="row") if drop_path > 0 else nn.Identity()
        self.norm2 = nn.LayerNorm(dim)
        hidden = int(dim * mlp_ratio)
        mlp = [nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)]
        if dropout:
            mlp.insert(2, nn.Dropout(dropout))
            mlp.append(nn.Dropout(dropout))
        self.mlp = nn.Sequential(*mlp)

    def forward(self, x, key_padding_mask: Optional[torch.Tensor] = None, causal: bool = False):
        x = x + self.drop_path(self.attn(self.norm1(x), key_padding_mask=key_padding_mask, causal=causal))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class Encoder(nn.ModuleList):
    """A stack of :class:`Block` (a ModuleList, so ``encoder[i]`` is block i); drop-path rates
    rise linearly from 0 to ``drop_path`` over the depth."""

    def __init__(self, dim, depth, heads, activation, mlp_ratio=4.0, drop_path=0.0, n_mode="row", path="auto",
                 dropout: float = 0.0, qk_norm: bool = False, rope: bool = False):
        rates = torch.linspace(0, drop_path, depth).tolist()
        super().__init__(Block(dim, heads, activation, mlp_ratio, r, n_mode, path, dropout, qk_norm, rope)
                         for r in rates)

    def forward(self, x, key_padding_mask: Optional[torch.Tensor] = None, causal: bool = False):
        for blk in self:
            x = blk(x, key_padding_mask=key_padding_mask, causal=causal)
        return x


def init_weights(module: nn.Module) -> None:
    """Truncated-normal linear weights (std 0.02), zero biases, unit LayerNorms (ViT/GPT style)."""
    if isinstance(module, nn.Linear):
        nn.init.trunc_normal_(module.weight, std=0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.LayerNorm):
        nn.init.ones_(module.weight)
        nn.init.zeros_(module.bias)


def decay_groups(model: nn.Module, no_decay: tuple = ()) -> tuple[list, list]:
    """(decayed, not decayed) parameters: matrices decay, vectors (norms, biases) and the
    parameters named in ``no_decay`` (positions, tokens) do not; in ``named_parameters`` order."""
    decay, keep = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (decay if p.ndim >= 2 and not any(k in name for k in no_decay) else keep).append(p)
    return decay, keep
