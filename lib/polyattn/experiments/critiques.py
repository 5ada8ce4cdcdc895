"""Grids that would settle the reviewers' objections chapter 09 leaves open (defined, not yet run).

Both train Table 1's model and recipe (micro ViT, patch 4, 50 tokens; :func:`vit.table1`) with
its norm probes, and change one thing:

``weight_decay``: AdamW's weight decay at 0, 0.05 (Table 1's value) and 0.5 for softmax,
x^3/sqrt(N) and the unscaled x^3: can a stronger decay do for the unscaled cube what the
1/sqrt(N) scale does?  The book's optimiser decays every weight matrix, so the query and key
projections are decayed along with the rest; a decay on Q and K alone would need an
optimiser option the library does not have.

``powers``: x^p/sqrt(N) for p = 1..7 and the sign-keeping s|s|^(p-1)/sqrt(N) for even p,
trained to the end of Table 1's schedule: does accuracy fall with p, as the gradient through
the activation at initialisation suggests?

``smoke``: seconds per run, for CI; ``book``: Table 1's scale and seeds.
"""
from __future__ import annotations

from ..config import TrainConfig
from ..presets import seeds_for
from . import vit

WEIGHT_DECAYS = (0.0, 0.05, 0.5)
WEIGHT_DECAY_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1")
POWERS = tuple(range(1, 8))
POWER_ACTIVATIONS = tuple(f"poly:p={p}" for p in POWERS) + tuple(f"poly_odd:p={p}" for p in POWERS if p % 2 == 0)
_PROBES = dict(probe_metrics=("attn_fro", "act_jac_fro", "grad_attn_fro"), param_probes=0)


def _table1_like(preset: str, experiment: str, activation: str, seed: int, **kw) -> TrainConfig:
    base = vit.table1(preset, seeds=[seed])[0]
    return base.replace(experiment=experiment, activation=activation, **{**_PROBES, **kw})


def weight_decay(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Table 1's recipe at each weight decay of :data:`WEIGHT_DECAYS` for three activations."""
    if preset == "paper":
        return vit.paper_configs()
    return [_table1_like(preset, "critique_weight_decay", act, s, weight_decay=wd)
            for wd in WEIGHT_DECAYS for act in WEIGHT_DECAY_ACTIVATIONS
            for s in seeds_for(preset, seeds, vit.TABLE1_SEEDS)]


def powers(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Table 1's recipe for every activation of :data:`POWER_ACTIVATIONS`."""
    if preset == "paper":
        return vit.paper_configs()
    return [_table1_like(preset, "critique_powers", act, s)
            for act in POWER_ACTIVATIONS for s in seeds_for(preset, seeds, vit.TABLE1_SEEDS)]
