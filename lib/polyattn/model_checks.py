"""Measurements on a model's attention for chapter 09: the gradient through the activation,
saturated rows, an outlier token, and the weights of chosen layers.

They run models (forward and backward passes), so they live
apart from :mod:`polyattn.analysis`, which only reads result records; the reductions of
weights they report are :mod:`polyattn.analysis.critiques`'s.

    model = initial_model(config, data, task)           # the model a run of config starts from
    activation_gradients(model, x, y)                   # per layer: ||dL/dS||, ||dL/dA||, ||dphi/dS||, saturation
    outlier_sweep(model, x, y, token, factors, where)   # accuracy and the token's attention share
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import pandas as pd
import torch
import torch.nn.functional as F

from .analysis.critiques import saturated_rows, token_mass_share
from .presets import seed_everything
from .probes import capture, find_attends, record_attention_maps

Tensor = torch.Tensor
WHERE = ("embedding", "attention_input", "scores")


def initial_model(config, data, task):
    """The model that training ``config`` starts from (seeded as :func:`polyattn.train.fit` seeds it),
    in eval mode; ``task`` is the config's task (``polyattn.tasks.get_task(config.task)``), which
    builds it."""
    seed_everything(config.seed)
    model = task.build_model(config, data)
    model.eval()
    return model


def activation_gradients(model, images: Tensor, labels: Tensor, saturation: float = 0.99) -> pd.DataFrame:
    """Per attention layer, on one batch, the gradient that flows through the activation.

    The loss is the cross-entropy summed over the batch, so each sample's scores S and weights
    A receive the gradient of that sample's own loss.  Per sample and head: ``grad_scores_fro``
    = ||dL/dS||_F (what reaches Q and K), ``grad_attn_fro`` = ||dL/dA||_F (what arrives at the
    activation), ``act_jac_fro`` = ||dphi(S)/dS||_F (exact, closed form); then the mean over the
    batch and the heads.  ``score_std`` is the standard deviation of the scores.  Rows whose
    largest weight exceeds ``saturation``: their share (``saturated_share``), and the mean
    per-row ||dL/dS_i|| and ||dphi/dS_i||_F of those rows and of the others (NaN where a group
    is empty).  The model runs in eval mode; its gradients are cleared afterwards.
    """
    seen: dict[int, dict] = {}

    def keep(i, s, output):
        entry = {"scores": s.scores.detach(), "weights": s.weights, "act": s.module.activation, "mask": s.mask,
                 "n": s.n}
        s.scores.register_hook(lambda g, e=entry: e.__setitem__("g_scores", g.detach()))
        output.register_hook(lambda g, e=entry: e.__setitem__("g_attn", g.detach()))
        seen[i] = entry

    was_training = model.training
    model.eval()
    try:
        with capture(model, keep):
            loss = F.cross_entropy(model(images).float(), labels, reduction="sum")
            loss.backward()
    finally:
        model.zero_grad(set_to_none=True)
        model.train(was_training)
    rows = []
    for layer in sorted(seen):
        e = seen[layer]
        jac_rows = e["act"].jacobian_fro_sq(e["scores"], e["mask"], e["n"])              # [B, H, Nq]
        g_rows = e["g_scores"].float().pow(2).sum(-1)                                   # [B, H, Nq]
        sat = saturated_rows(e["weights"], saturation)
        rows.append({"layer": layer, "activation": e["act"].spec,
                     "score_std": float(e["scores"].float().std(dim=(-2, -1)).mean()),
                     "grad_scores_fro": float(g_rows.sum(-1).sqrt().mean()),
                     "grad_attn_fro": float(e["g_attn"].float().pow(2).sum((-2, -1)).sqrt().mean()),
                     "act_jac_fro": float(jac_rows.sum(-1).clamp_min(0).sqrt().mean()),
                     "saturated_share": float(sat.float().mean()),
                     "row_grad_saturated": _masked_mean(g_rows.sqrt(), sat),
                     "row_grad_other": _masked_mean(g_rows.sqrt(), ~sat),
                     "row_jac_saturated": _masked_mean(jac_rows.clamp_min(0).sqrt(), sat),
                     "row_jac_other": _masked_mean(jac_rows.clamp_min(0).sqrt(), ~sat)})
    return pd.DataFrame(rows)


def _masked_mean(x: Tensor, m: Tensor) -> float:
    return float(x[m].mean()) if bool(m.any()) else float("nan")


@dataclass
class OutlierResult:
    """What :func:`outlier_sweep` measured: ``table`` one row per (factor, layer) with
    ``accuracy`` (%) and ``token_share`` (the token's share of each row's absolute weight,
    mean over rows, heads and images; ``uniform_share`` = 1/N for reference); ``correct``
    maps each factor to the per-image correctness (for paired comparisons)."""

    table: pd.DataFrame
    correct: dict = field(default_factory=dict)


def outlier_sweep(model, images: Tensor, labels: Tensor, token: int, factors: Sequence[float],
                  where: str = "embedding", layers: Optional[Sequence[int]] = None) -> OutlierResult:
    """Scale one token by each factor at test time and measure accuracy and the attention it takes.

    ``where="embedding"``: the token's patch embedding (before the position is added) is
    multiplied by the factor, once, at the input.  ``where="attention_input"``: in every block
    the token's row of the attention input (after the block's LayerNorm) is multiplied, so its
    query, key and value, and hence its scores, grow with the factor in every layer (a pre-norm
    block's LayerNorm would otherwise undo an input scale).  ``where="scores"``: in every layer
    the token's column of the score matrix (its key's score for every query) is multiplied, and
    nothing else: an extreme entry of S with the values untouched.  ``token`` indexes the
    sequence (CLS is token 0 for a CLS-pooled ViT).  Factor 1 is the clean model.
    """
    if where not in WHERE:
        raise ValueError(f"where must be one of {WHERE}, got {where!r}")
    n_prefix = 1 if getattr(model, "cls_token", None) is not None else 0
    if where == "embedding" and token < n_prefix:
        raise ValueError(f"token {token} is not a patch token (the first {n_prefix} token(s) have no patch embedding)")
    n_layers = len(model.blocks)
    layers = list(range(n_layers)) if layers is None else [i % n_layers for i in layers]
    rows, correct = [], {}
    model.eval()
    for f in factors:
        handles = _scale_token(model, token - n_prefix if where == "embedding" else token, float(f), where)
        seen: dict[int, Tensor] = {}
        try:
            with capture(model, lambda i, s, out, seen=seen: seen.__setitem__(i, s.weights.cpu()), layers), torch.no_grad():
                logits = model(images)
        finally:
            for h in handles:
                h.remove()
        maps = torch.stack([seen[i] for i in layers])                                  # [L, B, H, N, N]
        ok = (logits.argmax(-1) == labels).cpu().numpy()
        correct[float(f)] = ok
        share = token_mass_share(maps, token).mean((-1, -2))                          # [L]
        for li, layer in enumerate(layers):
            rows.append({"factor": float(f), "where": where, "layer": layer, "accuracy": 100 * float(ok.mean()),
                         "token_share": float(share[li]), "uniform_share": 1.0 / maps.shape[-1]})
    return OutlierResult(pd.DataFrame(rows), correct)


def _scale_token(model, index: int, factor: float, where: str) -> list:
    if factor == 1.0:
        return []
    if where == "embedding":
        g = int(round(math.sqrt(model.num_patches)))
        r, c = divmod(index, g)

        def hook(module, args, out):
            out = out.clone()
            out[:, :, r, c] *= factor
            return out

        return [model.patch_embed.register_forward_hook(hook)]

    if where == "scores":
        def column_hook(module, args):
            scores = args[0].clone()
            scores[..., index] *= factor
            return (scores, *args[1:])

        return [a.register_forward_pre_hook(column_hook) for a in find_attends(model)]

    def row_hook(module, args, out):
        out = out.clone()
        out[:, index] *= factor
        return out

    return [blk.norm1.register_forward_hook(row_hook) for blk in model.blocks]


def attention_weights(model, images: Tensor, layers: Sequence[int]) -> Tensor:
    """The weights of the chosen layers (negative indices count from the last), ``[L, B, H, N, N]``."""
    n_layers = len(model.blocks)
    return record_attention_maps(model, images, layers=sorted({i % n_layers for i in layers}))


