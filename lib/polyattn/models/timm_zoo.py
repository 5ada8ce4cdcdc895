"""timm models for the image task: a config's ``model`` of the form ``"timm:NAME"``.

``NAME`` is a timm model name (``timm:swin_tiny_patch4_window7_224``, built untrained), or one
of the book-sized models of :data:`BOOK_MODELS`, each a timm architecture shrunk to train on
CPUs.  The config's ``image_size``, ``patch_size`` and ``drop_path`` and the data's channels
and classes override the model's defaults; ``activation`` and ``n_mode`` (and
``options["n_rule"]`` for XCiT) go to :func:`polyattn.models.timm_adapters.adapt`.  Images
of another size than ``image_size`` (28 px Fashion-MNIST for a 32 px Swin) are resized
bilinearly inside the model (:class:`TimmClassifier`).  The config's ``pool`` is not read:
each architecture pools as timm builds it (CLS token for ViT/DeiT/XCiT, mean for Swin).

timm is imported here only when a timm model is built or measured, so the rest of the
library runs without it.
"""
from __future__ import annotations

import functools
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

PREFIX = "timm:"

#: Book-sized architectures: name -> (timm model, overrides).  The ViT matches the book's
#: ``micro`` ViT (64 wide, 4 blocks, 4 heads); DeiT is the same architecture (the recipe differs);
#: the Swin has two stages of two blocks with 4x4 windows (the second block of each stage
#: shifted); the XCiT has four XCA blocks of 4 heads (d_h = 16) and one class-attention layer.
BOOK_MODELS = {
    "vit_micro": ("vit_tiny_patch16_224", dict(embed_dim=64, depth=4, num_heads=4)),
    "deit_micro": ("deit_tiny_patch16_224", dict(embed_dim=64, depth=4, num_heads=4)),
    "swin_micro": ("swin_tiny_patch4_window7_224", dict(embed_dim=32, depths=(2, 2), num_heads=(2, 4),
                                                        window_size=4)),
    "xcit_micro": ("xcit_nano_12_p8_224", dict(embed_dim=64, depth=4, num_heads=4, cls_attn_layers=1)),
}


def is_timm(model: str) -> bool:
    """Whether a config's ``model`` names a timm model."""
    return isinstance(model, str) and model.startswith(PREFIX)


def resolve(model: str) -> tuple[str, dict]:
    """(timm name, overrides) of ``"timm:NAME"``."""
    if not is_timm(model):
        raise ValueError(f"a timm model is named {PREFIX!r} + a timm name or one of {sorted(BOOK_MODELS)}, "
                         f"got {model!r}")
    name = model[len(PREFIX):]
    return BOOK_MODELS.get(name, (name, {}))


class TimmClassifier(nn.Module):
    """A timm model that first resizes its images to ``image_size`` when they differ."""

    def __init__(self, net: nn.Module, image_size: int):
        super().__init__()
        self.net, self.image_size = net, int(image_size)

    def forward(self, images):
        if images.shape[-2:] != (self.image_size, self.image_size):
            images = F.interpolate(images, size=(self.image_size, self.image_size), mode="bilinear",
                                   align_corners=False)
        return self.net(images)

    def decay_groups(self) -> tuple[list, list]:
        """(decayed, not decayed) as timm's optimiser factory splits them: vectors, biases and the
        parameters the model names in ``no_weight_decay()`` take no weight decay."""
        skip = set(self.net.no_weight_decay()) if hasattr(self.net, "no_weight_decay") else set()
        decay, keep = [], []
        for name, p in self.net.named_parameters():
            if p.requires_grad:
                (keep if p.ndim <= 1 or name.endswith(".bias") or name in skip else decay).append(p)
        return decay, keep


def create(model: str, image_size: int, patch_size: int, in_chans: int, num_classes: int, drop_path: float = 0.0,
           **kw) -> nn.Module:
    """The untrained timm model ``"timm:NAME"`` at this image size, patch size, channels and classes."""
    import timm

    name, overrides = resolve(model)
    args = {**overrides, "img_size": image_size, "patch_size": patch_size, "in_chans": in_chans,
            "num_classes": num_classes, "drop_path_rate": drop_path, **kw}
    return timm.create_model(name, pretrained=False, **args)


def build_timm(model: str, image_size: int, patch_size: int, in_chans: int, num_classes: int,
               drop_path: float = 0.0, activation: str = "softmax", n_mode: str = "row",
               n_rule: Optional[str] = None) -> TimmClassifier:
    """The image task's model for ``"timm:NAME"``: built, adapted to ``activation``, resizing."""
    from .timm_adapters import adapt

    net = create(model, image_size, patch_size, in_chans, num_classes, drop_path)
    adapt(net, activation, n_mode=n_mode, n_rule=n_rule)
    return TimmClassifier(net, image_size)


def attention_lengths(model: str, image_size: int, patch_size: int, n_rule: Optional[str] = None) -> dict:
    """``{"seq_len": N, "tokens": T}``: N as the activation sees it in the first attention layer
    (ViT/DeiT: every token, prefix tokens included; Swin: the window's token count; XCiT: d_h, or
    the patch tokens under ``n_rule="tokens"``) and T the tokens of the first attention layer
    (patches, plus the prefix tokens of ViT/DeiT).  Measured once on a model built on the meta
    device (no memory, no weights)."""
    n, tokens = _lengths(model, int(image_size), int(patch_size), n_rule)
    return {"seq_len": n, "tokens": tokens}


@functools.lru_cache(maxsize=64)
def _lengths(model: str, image_size: int, patch_size: int, n_rule: Optional[str]) -> tuple[int, int]:
    from .timm_adapters import PolyWindowAttention, PolyXCA, adapt, adapted_modules

    with torch.device("meta"):
        net = adapt(create(model, image_size, patch_size, 3, 10), n_rule=n_rule)
    first = adapted_modules(net)[0]
    pe = net.patch_embed
    grid = pe.grid_size if hasattr(pe, "grid_size") else (image_size // patch_size, image_size // patch_size)
    tokens = int(grid[0] * grid[1]) + int(getattr(net, "num_prefix_tokens", 0))
    if isinstance(first, PolyWindowAttention):
        n = first.window_area
    elif isinstance(first, PolyXCA):
        n = net.embed_dim // first.num_heads if first.n_rule == "channels" else tokens
    else:
        n = tokens
    return int(n), tokens
