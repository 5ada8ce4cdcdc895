"""The causal-model experiments of chapter 07 as config grids, per preset.

Character-level language models on the King James Bible (split by book), one per
activation variant and seed.  ``n_mode`` carries the two readings of N in x^p/sqrt(N)
under a causal mask: ``row`` (N = i + 1, the keys the row sees) and ``fixed`` (N = the
sequence length T, also at 2x and 4x the training context).

``smoke``: seconds per run on a generated corpus, for CI; never evidence.
``book``: the micro model (2 layers, width 64, 4 heads), context 128, 2,000 steps of 32
windows, 3 seeds; the records are committed.
``paper``: the paper runs no causal model; this preset is the same variants on the small
model (4 layers, width 128) with 20,000 steps, listed for GPUs, not run here.
"""
from __future__ import annotations

from ..config import TrainConfig
from ..labels import CHARLM_VARIANTS
from ..labels import charlm_label as variant_label  # noqa: F401  (re-exported: the grid's labels)
from ..presets import seeds_for

_SCALE = {
    "smoke": dict(dataset="synthetic", model="micro", epochs=1, batch_size=16, warmup_epochs=0.5,
                  options=dict(context=32, windows=16 * 8, eval_windows=8, sample_chars=40)),
    "book": dict(dataset="bible_kjv", model="micro", epochs=4, batch_size=32, warmup_epochs=0.2,
                 options=dict(context=128, windows=32 * 500, eval_windows=64, sample_chars=200)),
    "paper": dict(dataset="bible_kjv", model="small", epochs=10, batch_size=64, warmup_epochs=0.5,
                  options=dict(context=256, windows=64 * 2000, eval_windows=256, sample_chars=400)),
}
_COMMON = dict(task="charlm", lr=3e-3, weight_decay=0.05, clip_grad=1.0, threads=1)


def variant_grid(experiment: str, preset: str, seeds, fields: dict, variants=CHARLM_VARIANTS,
                 default_seeds=None) -> list[TrainConfig]:
    """One config per variant (of :data:`CHARLM_VARIANTS` unless given) and seed, in seed-major
    order (so a partial run set has every variant); ``fields`` are the other config fields."""
    return [TrainConfig(experiment=experiment, preset=preset, activation=act, n_mode=mode, seed=s,
                        device="cuda" if preset == "paper" else "cpu", **fields)
            for s in seeds_for(preset, seeds, default_seeds) for _, act, mode in variants]


def charlm(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """One character language model per variant and seed."""
    return variant_grid("causal_charlm", preset, seeds, {**_COMMON, **_SCALE[preset]})


#: The variants trained again without position encodings, for length generalisation: softmax,
#: the two readings of N, and SSMax (whose log-length factor was proposed for long contexts).
#: Five seeds: the position-free models carry the book's clearest language-model difference.
NOPE_SEEDS = {"smoke": (0,), "book": (0, 1, 2, 3, 4), "paper": (0,)}
NOPE_VARIANTS = tuple(v for v in CHARLM_VARIANTS if v[0] in ("softmax", "x^3/sqrt(i+1)", "x^3/sqrt(T)", "SSMax"))


def charlm_nope(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """The models of :func:`charlm` for :data:`NOPE_VARIANTS`, without position encodings (NoPE):
    with absolute sinusoidal positions no variant keeps its loss at 2x the training context, so
    the two readings of N can only be told apart where positions do not break first."""
    scale = _SCALE[preset]
    fields = {**_COMMON, **scale, "options": {**scale["options"], "positions": "none"}}
    return variant_grid("causal_charlm_nope", preset, seeds, fields, variants=NOPE_VARIANTS,
                        default_seeds=NOPE_SEEDS)


#: The sqrt(N) scaling across sequence lengths: the position-free character model at three training
#: lengths T with the same characters per step (128 x 32 = 4,096), so that only N changes. The
#: unscaled cube, the two readings of N, and softmax; no gradient clipping (the paper does not clip),
#: each evaluated at 1x, 2x and 4x its training length.
LENGTH_SWEEP_CONTEXTS = {"smoke": (16, 32), "book": (64, 256, 1024), "paper": (256, 1024, 4096)}
LENGTH_SWEEP_VARIANTS = (("softmax", "softmax", "row"), ("x^3", "poly:p=3,c=1", "row"),
                         ("x^3/sqrt(i+1)", "poly:p=3", "row"), ("x^3/sqrt(T)", "poly:p=3", "fixed"))
LENGTH_SWEEP_CHARS_PER_STEP = {"smoke": 16 * 16, "book": 128 * 32, "paper": 256 * 64}


def length_sweep(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:data:`LENGTH_SWEEP_VARIANTS` at each context of :data:`LENGTH_SWEEP_CONTEXTS`, without
    positions or clipping, the batch chosen so that every step sees the same number of characters."""
    scale = _SCALE[preset]
    steps = scale["options"]["windows"] // scale["batch_size"]
    out = []
    for context in LENGTH_SWEEP_CONTEXTS[preset]:
        batch = max(1, LENGTH_SWEEP_CHARS_PER_STEP[preset] // context)
        fields = {**_COMMON, **scale, "clip_grad": 0.0, "batch_size": batch,
                  "options": {**scale["options"], "positions": "none", "context": context, "windows": batch * steps}}
        out += variant_grid("causal_length_sweep", preset, seeds, fields, variants=LENGTH_SWEEP_VARIANTS)
    return out
