"""Two alternatives to the 1/sqrt(N) factor that act on the query and key projections only.

A reviewer of the paper asked whether weight decay on Q and K, or an initialisation that
depends on the sequence length, could do what x^p/sqrt(N)'s scale does.  Both act on the rows
of the fused ``qkv`` projection of :class:`polyattn.attention.MultiHeadAttention` that make
the queries and keys (its first ``2 * dim`` output rows); the values, every other weight and
all biases are left as they are.

``config.qk_init_scale = g`` multiplies those rows by ``g`` once, after the usual
initialisation (before training; a resumed run loads its checkpoint instead).  The scores
q.k then start ``g^2`` times smaller and x^p of them ``g^(2p)`` times smaller, so
``g = N^(-1/(4p))`` gives the unscaled x^p the initial output scale of x^p/sqrt(N)
(:func:`length_aware_gain`, defined with the grid's labels in :mod:`polyattn.labels`).

``config.out_init_scale = g`` multiplies each attention's output projection weight by ``g`` once,
after the usual initialisation: with ``k * softmax`` and ``g = 1/k`` the network starts as the same
function as with softmax, while the bound on ``||A||_F`` is lifted to ``k sqrt(N)`` (the norm
intervention without its output-scale confound).

``config.qk_weight_decay = w`` gives those rows a decoupled weight decay of ``w`` in place of
``config.weight_decay``: after each AdamW step (which shrank every decayed weight by
``1 - lr * weight_decay``) the Q/K rows are multiplied by
``(1 - lr * w) / (1 - lr * weight_decay)``.  The shrink then matches AdamW's own decoupled
decay at rate ``w`` up to a term of order ``lr^2`` times the step's update.
"""
from __future__ import annotations

from typing import Iterator

import torch
from torch import nn

from .attention import MultiHeadAttention
from .labels import length_aware_gain  # noqa: F401  (re-exported)


def qk_weights(model: nn.Module) -> Iterator[torch.Tensor]:
    """The query-and-key rows (a view) of every library attention's fused ``qkv`` weight."""
    found = False
    for module in model.modules():
        if isinstance(module, MultiHeadAttention):
            found = True
            dim = module.heads * module.head_dim
            yield module.qkv.weight[: 2 * dim]
    if not found:
        raise ValueError(f"{type(model).__name__} has no polyattn MultiHeadAttention, so qk_init_scale and "
                         "qk_weight_decay have nothing to act on; leave them at their defaults for this model")


@torch.no_grad()
def scale_qk_init(model: nn.Module, gain: float) -> None:
    """Multiply the query and key rows of every attention by ``gain`` (once, at initialisation)."""
    for w in qk_weights(model):
        w.mul_(gain)


@torch.no_grad()
def scale_out_init(model: nn.Module, gain: float) -> None:
    """Multiply the output projection weight of every library attention by ``gain`` (once, at
    initialisation; the bias is left as it is)."""
    found = False
    for module in model.modules():
        if isinstance(module, MultiHeadAttention):
            found = True
            module.proj.weight.mul_(gain)
    if not found:
        raise ValueError(f"{type(model).__name__} has no polyattn MultiHeadAttention, so out_init_scale has "
                         "nothing to act on; leave it at 1 for this model")


@torch.no_grad()
def qk_decay_step(model: nn.Module, lr: float, weight_decay: float, qk_weight_decay: float) -> None:
    """After an AdamW step: turn the Q/K rows' decay of ``weight_decay`` into ``qk_weight_decay``."""
    if lr * weight_decay >= 1 or lr * qk_weight_decay >= 1:
        raise ValueError(f"lr * weight decay must stay below 1 (lr {lr:g}, weight_decay {weight_decay:g}, "
                         f"qk_weight_decay {qk_weight_decay:g})")
    factor = (1.0 - lr * qk_weight_decay) / (1.0 - lr * weight_decay)
    for w in qk_weights(model):
        w.mul_(factor)
