"""Rotary position embeddings (RoPE, Su et al. 2021) on each head's queries and keys.

Each pair of channels (j, j + d/2) of a head is rotated by the angle ``m * theta_j`` at
position m, with ``theta_j = base^(-2j/d)`` (the "rotate half" layout of GPT-NeoX and
LLaMA).  A rotation keeps every vector's norm, and q_m . k_n then depends on the positions
only through m - n, so the attention scores carry relative positions while the activation,
the mask and N stay exactly as without positions: the same for every activation, and
nothing is added to the scores (unlike ALiBi, whose negative bias a polynomial activation
would turn into large negative weights).  Defined at any length, so a model can be
evaluated beyond its training context.
"""
from __future__ import annotations

import torch

#: The base of the rotation frequencies (RoFormer's and most LMs').
ROPE_BASE = 10000.0


def rope_angles(n: int, head_dim: int, device=None, base: float = ROPE_BASE, offset: int = 0):
    """(cos, sin), each ``[n, head_dim]``: the angle of position ``offset + m`` for every channel
    (the first and second halves of a head share their frequencies)."""
    if head_dim % 2:
        raise ValueError(f"rotary positions rotate channel pairs: the head width must be even, got {head_dim}")
    inv = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim)
    pos = torch.arange(offset, offset + n, dtype=torch.float32, device=device)
    angle = torch.outer(pos, inv)                       # [n, d/2]
    angle = torch.cat([angle, angle], dim=-1)           # [n, d]
    return angle.cos(), angle.sin()


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


def apply_rope(x: torch.Tensor, offset: int = 0, base: float = ROPE_BASE) -> torch.Tensor:
    """``x`` ``[B, H, N, d]`` with token m of the sequence rotated to position ``offset + m``."""
    cos, sin = rope_angles(x.shape[-2], x.shape[-1], x.device, base, offset)
    xf = x.float()
    return (xf * cos + _rotate_half(xf) * sin).to(x.dtype)
