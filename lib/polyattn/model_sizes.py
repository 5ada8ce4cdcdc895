"""Model sizes as tables and formulas, for what reads a config without building its model: the
ViT's named widths, depths and heads, and the tokens a ViT attends over."""
from __future__ import annotations

#: Named widths/depths/heads.  tiny/small/base are DeiT's; micro and mini are the
#: CPU-sized models the book trains on 28x28 images.
VIT_SIZES = {
    "micro": dict(dim=64, depth=4, heads=4),
    "mini": dict(dim=128, depth=6, heads=4),
    "tiny": dict(dim=192, depth=12, heads=3),
    "small": dict(dim=384, depth=12, heads=6),
    "base": dict(dim=768, depth=12, heads=12),
}


def image_seq_len(config) -> int:
    """Tokens the ViT attends over: (image / patch)^2 patches, plus CLS when pooled by it.
    ``config``: a TrainConfig or a record's config dict."""
    get = config.get if isinstance(config, dict) else (lambda k, d=None: getattr(config, k, d))
    image, patch = get("image_size"), get("patch_size")
    if not image or not patch:
        raise ValueError(f"image_seq_len: the config has no image_size/patch_size (got {image!r}, {patch!r}); "
                         "a record of another task must carry seq_lens")
    return (int(image) // int(patch)) ** 2 + (get("pool", "cls") == "cls")
