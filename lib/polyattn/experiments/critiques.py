"""Grids for the reviewers' objections that chapter 09 answers with trained runs.

Each trains Table 1's model and recipe (micro ViT, patch 4, 50 tokens; :func:`vit.table1`)
with its norm probes, and changes one thing:

``weight_decay``: AdamW's weight decay of every weight matrix at 0, 0.05 (Table 1's value)
and 0.5 for softmax, x^3/sqrt(N) and the unscaled x^3:
can a stronger decay of the whole model do for the unscaled cube what the 1/sqrt(N) scale
does?  ``qk_controls`` below decays the query and key projections alone.

``powers``: x^p/sqrt(N) for p = 1..7 and the sign-keeping s|s|^(p-1)/sqrt(N) for even p,
trained to the end of Table 1's schedule: does accuracy fall with p, as the gradient through
the activation at initialisation suggests?

``qk_controls``: the unscaled x^3 with the two alternatives to the 1/sqrt(N) factor that a
reviewer proposed, each acting on the query and key projections only
(:mod:`polyattn.qk_controls`): a weight decay of 0.5 or 5 on the Q/K rows (10 and 100 times
Table 1's 0.05; over Table 1's 936 steps and learning-rate schedule, a Q/K row with no
gradient would shrink to about 0.6 or 0.01 of its size), or Q/K initialised smaller by
g = N^(-1/12) (N = 50 tokens: g = 0.72), the gain that gives x^3 the initial scale of
x^3/sqrt(N); next to x^3/sqrt(N) and the plain unscaled x^3 in the same grid and seeds.

``smoke``: seconds per run, for CI; ``book``: Table 1's scale, with its first 3 seeds
(:data:`CRITIQUE_SEEDS`; Table 1 has 5).
"""
from __future__ import annotations

from ..config import TrainConfig
from ..labels import QK_WEIGHT_DECAYS, TABLE1_TOKENS, WEIGHT_DECAY_ACTIVATIONS, qk_label, qk_variants  # noqa: F401  (re-exported)
from ..presets import seeds_for
from . import vit

#: Seeds per preset: the first three of Table 1's (the minimum the book's paired tests take).
CRITIQUE_SEEDS = {"smoke": (0,), "book": (0, 1, 2), "paper": (0,)}
WEIGHT_DECAYS = (0.0, 0.05, 0.5)
POWERS = tuple(range(1, 8))
POWER_ACTIVATIONS = tuple(f"poly:p={p}" for p in POWERS) + tuple(f"poly_odd:p={p}" for p in POWERS if p % 2 == 0)
_PROBES = dict(probe_metrics=("attn_fro", "act_jac_fro", "grad_attn_fro"), param_probes=0)


def _table1_like(preset: str, experiment: str, activation: str, seed: int, **kw) -> TrainConfig:
    base = vit.table1(preset, seeds=[seed])[0]
    return base.replace(experiment=experiment, activation=activation, **{**_PROBES, **kw})


def _experiment(name: str, clip_grad: float | None) -> str:
    """The grid's experiment name: ``name``, or ``name_unclipped`` when clipping is switched off."""
    if clip_grad is not None and clip_grad != 0:
        raise ValueError(f"the critique grids run with Table 1's clipping or without it (clip_grad=0), "
                         f"not clip_grad={clip_grad}")
    return name if clip_grad is None else name + "_unclipped"


def _clip(clip_grad: float | None) -> dict:
    return {} if clip_grad is None else {"clip_grad": clip_grad}


def weight_decay(preset: str = "book", seeds=None, clip_grad: float | None = None) -> list[TrainConfig]:
    """Table 1's recipe at each weight decay of :data:`WEIGHT_DECAYS` for three activations
    (``clip_grad=0``: the same grid without gradient clipping, as its own experiment)."""
    if preset == "paper":
        return vit.paper_configs()
    return [_table1_like(preset, _experiment("critique_weight_decay", clip_grad), act, s, weight_decay=wd,
                         **_clip(clip_grad))
            for wd in WEIGHT_DECAYS for act in WEIGHT_DECAY_ACTIVATIONS
            for s in seeds_for(preset, seeds, CRITIQUE_SEEDS)]


def weight_decay_unclipped(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:func:`weight_decay` without gradient clipping."""
    return weight_decay(preset, seeds, clip_grad=0.0)


def powers(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Table 1's recipe for every activation of :data:`POWER_ACTIVATIONS`."""
    if preset == "paper":
        return vit.paper_configs()
    return [_table1_like(preset, "critique_powers", act, s)
            for act in POWER_ACTIVATIONS for s in seeds_for(preset, seeds, CRITIQUE_SEEDS)]


def qk_controls(preset: str = "book", seeds=None, clip_grad: float | None = None) -> list[TrainConfig]:
    """Table 1's recipe for every variant of :func:`qk_variants` (variant-major order;
    ``clip_grad=0``: the same grid without gradient clipping, as its own experiment)."""
    if preset == "paper":
        return vit.paper_configs()
    return [_table1_like(preset, _experiment("critique_qk_controls", clip_grad), act, s, **fields, **_clip(clip_grad))
            for _, act, fields in qk_variants() for s in seeds_for(preset, seeds, CRITIQUE_SEEDS)]


def qk_controls_unclipped(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:func:`qk_controls` without gradient clipping."""
    return qk_controls(preset, seeds, clip_grad=0.0)


#: QK-norm (LayerNorm on each head's queries and keys), unclipped, at Table 1's recipe and its 5 seeds:
#: the unscaled x^3 and x^3/sqrt(N) with it, and softmax with it as the control.
QK_NORM_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1")


def qk_norm(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Table 1's recipe without clipping, with QK-norm, for :data:`QK_NORM_ACTIVATIONS` (5 seeds)."""
    if preset == "paper":
        return vit.paper_configs()
    return [_table1_like(preset, "critique_qk_norm", act, s, qk_norm=True, clip_grad=0.0)
            for act in QK_NORM_ACTIVATIONS for s in seeds_for(preset, seeds, vit.TABLE1_SEEDS)]

