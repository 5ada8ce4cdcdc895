"""Models built from :mod:`polyattn.models.blocks` (pre-LN blocks over
:class:`polyattn.attention.MultiHeadAttention`)."""
from .blocks import Block, Encoder, decay_groups
from .vit import VIT_SIZES, ViT, build_vit

__all__ = ["VIT_SIZES", "Block", "Encoder", "ViT", "build_vit", "decay_groups"]
