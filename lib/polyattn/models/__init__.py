"""Models built on :class:`polyattn.attention.MultiHeadAttention`."""
from .vit import VIT_SIZES, ViT, build_vit

__all__ = ["VIT_SIZES", "ViT", "build_vit"]
