"""Attention maps of a freshly trained model: train one configuration and read its CLS weights.

These helpers train models, so they live apart from :mod:`polyattn.analysis`, which only reads
result records.
"""
from __future__ import annotations

import math


def train_with_model(config, data=None):
    """Train ``config`` (no stored record, no resume) and return ``(record, model)`` in eval mode."""
    from .train import run

    rec = run(config, progress=False, resume=False, data=data, return_model=True)
    model = rec.pop("model")
    model.eval()
    return rec, model


def cls_attention(model, images, layer: int):
    """The CLS query's weights on the patches in ``layer``, as ``[B, H, g, g]`` patch grids.

    ``images`` are the model's (normalised) input; the CLS token is token 0.  Weights keep
    their sign (the polynomial's are negative for negative scores).
    """
    from .probes import record_attention_maps

    maps = record_attention_maps(model, images, layers=[layer])[0]     # [B, H, N, N]
    n = maps.shape[-1] - 1
    g = int(round(math.sqrt(n)))
    if g * g != n:
        raise ValueError(f"cls_attention: {n} patch tokens do not form a square grid; the model must pool "
                         "with a CLS token (pool='cls') on square images")
    return maps[:, :, 0, 1:].reshape(maps.shape[0], maps.shape[1], g, g)
