"""Attention and Jacobian norms measured on a model, per layer and head: on a batch through any
polyattn model, on freshly initialised ViTs, and from the probes of stored training records."""
from __future__ import annotations

import glob
import json
import math
import os
from typing import Optional, Sequence

import pandas as pd
import torch

from .analysis.frames import record_seq_len
from .presets import generator
from .probes import capture, find_attends
from .theory.score_scale import gaussian_elementwise_fro

Tensor = torch.Tensor


def attention_norms(model: torch.nn.Module, inputs: Tensor, gaussian_prediction: bool = True) -> pd.DataFrame:
    """Per (layer, head): ||A||_F / sqrt(N), ||dA/dS||_F / sqrt(N) and score statistics on a batch.

    Works on any model built from :class:`polyattn.attention.MultiHeadAttention` (a polyattn ViT,
    trained or not): forward hooks on every ``Attend`` record the scores S and weights A; each
    value is computed per sample and averaged over the batch (``*_std`` is the spread over the
    batch).  ``gaussian_over_sqrt_n`` is the i.i.d.-Gaussian prediction of ||A||_F / sqrt(N) from
    the head's measured score mean and std (elementwise activations only; NaN for softmax).
    The model is run in eval mode without gradients; flags and hooks are restored afterwards.
    """
    if not find_attends(model):
        raise ValueError("attention_norms found no polyattn Attend module in the model; "
                         "build it from polyattn.attention.MultiHeadAttention")
    captured: dict[int, list] = {}

    def keep(i, seen, output):
        captured.setdefault(i, []).append((seen.scores.detach(), seen.mask, seen.n, seen.weights,
                                           seen.module.activation))

    was_training = model.training
    model.eval()
    try:
        with capture(model, keep), torch.no_grad():
            model(inputs)
    finally:
        model.train(was_training)

    rows = []
    for layer, calls in captured.items():
        for scores, mask, n, w, act in calls:
            nk = scores.shape[-1]
            n_rows = scores.shape[-2]
            fro = w.float().pow(2).sum((-2, -1)).sqrt()                        # [B, H]
            jac = act.jacobian_fro_sq(scores, mask, n).sum(-1).sqrt()          # [B, H]
            smean = scores.float().mean((-2, -1))
            sstd = scores.float().std(dim=(-2, -1))
            for h in range(scores.shape[1]):
                mu, sd = float(smean[:, h].mean()), float(sstd[:, h].mean())
                pred = (gaussian_elementwise_fro(act.spec, nk, sd, mu) * math.sqrt(n_rows / nk) / math.sqrt(n_rows)
                        if gaussian_prediction and act.elementwise else float("nan"))
                rows.append({"layer": layer, "head": h, "activation": act.spec, "N": nk,
                             "fro_over_sqrt_n": float(fro[:, h].mean()) / math.sqrt(n_rows),
                             "fro_over_sqrt_n_std": (float(fro[:, h].std()) / math.sqrt(n_rows) if fro.shape[0] > 1
                                                     else float("nan")),
                             "jac_over_sqrt_n": float(jac[:, h].mean()) / math.sqrt(n_rows),
                             "score_mean": mu, "score_std": sd, "gaussian_over_sqrt_n": pred})
    return pd.DataFrame(rows)


def init_model_norms(specs: Sequence[str], seed: int, size: str = "micro", batch: int = 32,
                     inputs: Optional[Tensor] = None, **vit_kwargs) -> pd.DataFrame:
    """:func:`attention_norms` of freshly initialised ViTs (one per activation spec).

    Each model is built under ``torch.manual_seed`` from ``(seed, spec)`` inside a forked RNG
    (the caller's global RNG state is left untouched).  ``inputs`` default to standard-normal
    images of the model's shape, drawn from their own generator: at initialisation the
    weights, not the images, set the score scale.
    """
    from .models.vit import build_vit

    frames = []
    for spec in specs:
        with torch.random.fork_rng(devices=[]):
            g = generator(seed, "init-model", size, spec)
            torch.manual_seed(int(torch.randint(0, 2 ** 62, (1,), generator=g)))
            model = build_vit(size, activation=spec, **vit_kwargs)
        x = inputs
        if x is None:
            pe = model.patch_embed
            side = int(round(math.sqrt(model.num_patches))) * pe.kernel_size[0]
            x = torch.randn(batch, pe.in_channels, side, side, generator=generator(seed, "init-inputs", size))
        frames.append(attention_norms(model, x))
    return pd.concat(frames, ignore_index=True)


def trained_norms_from_records(directory: str, metrics: Sequence[str] = ("attn_fro_over_sqrt_n", "act_jac_fro")) -> pd.DataFrame:
    """Probe rows of the last recorded step of every finished training record in ``directory``.

    Reads ``<directory>/*.json`` result records (schema 1: ``config``, ``seed``, ``status``,
    ``probes`` rows of step/layer/head/metric/value).  Returns one row per (record, layer, head,
    metric) with the activation and sequence length from the config; ``act_jac_fro`` gets a
    companion ``act_jac_fro_over_sqrt_n``.  An empty DataFrame when there is nothing to read.
    """
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        try:
            with open(path) as fh:
                rec = json.load(fh)
        except (OSError, json.JSONDecodeError):
            continue
        probes = rec.get("probes") or []
        if rec.get("status") != "ok" or not probes:
            continue
        cfg = rec.get("config", {})
        last = max(r["step"] for r in probes)
        try:
            n = record_seq_len(rec)
        except (KeyError, ValueError):
            n = None
        for r in probes:
            if r["step"] != last or r["metric"] not in metrics:
                continue
            base = {"record": os.path.basename(path), "activation": cfg.get("activation"), "seed": rec.get("seed"),
                    "step": last, "layer": r["layer"], "head": r["head"], "N": n}
            out.append({**base, "metric": r["metric"], "value": float(r["value"])})
            if r["metric"] == "act_jac_fro" and n:
                out.append({**base, "metric": "act_jac_fro_over_sqrt_n", "value": float(r["value"]) / math.sqrt(n)})
    return pd.DataFrame(out, columns=["record", "activation", "seed", "step", "layer", "head", "N", "metric", "value"])

