"""The length sweep with rotary positions, its softmax probes, and the norm dose-response, for chapters 03 and 07.

The position-free sweep (:func:`polyattn.experiments.causal.length_sweep`) did not learn beyond
one character of context at T >= 256, softmax included.  These grids train the same micro
character model (2 layers, width 64, 4 heads) with rotary positions on every layer's queries and
keys (:mod:`polyattn.rotary`: relative positions, the same for every activation, nothing added
to the scores), 4,096 characters a step at every training length T, without gradient clipping
(as the earlier sweep), evaluated at 1x, 2x and 4x T, with the test loss binned by position in
the window stored at the end (``final["position_bpc"]``).

* ``causal_length_probe``: softmax alone at each T and each of :data:`PROBE_STEPS`, to find the
  number of steps at which softmax clears the count-based trigram at every T; each budget is also
  its own grid, ``causal_length_probe_<steps>``, so that a runner can queue one budget at a time.
* ``causal_length_rope``: :data:`ROPE_VARIANTS` at each T of :data:`ROPE_CONTEXTS` for
  :data:`ROPE_STEPS` steps, five seeds.
* ``causal_dose_response``: at T = :data:`DOSE_CONTEXT`, softmax times k with the output projection
  started at 1/k its scale (the same function at initialisation) for each k of :data:`DOSE_KS`, and
  x^3/sqrt(i+1) uncapped, capped at row norm 1 and normalised to row norm 1, five seeds.

``smoke``: seconds per run on the generated corpus (lengths 16 and 32), for tests; never evidence.
There is no ``paper`` preset (the paper runs no causal model); it gives no configs.
"""
from __future__ import annotations

from fractions import Fraction

from ..config import TrainConfig
from ..presets import seeds_for
from .causal import _COMMON, _SCALE

#: Training lengths T of the sweep and its probes.
ROPE_CONTEXTS = {"smoke": (16, 32), "book": (64, 256, 1024)}
#: Characters per training step at every T (batch = this / T), as in the position-free sweep.
ROPE_CHARS_PER_STEP = {"smoke": 16 * 16, "book": 4096}
#: Training steps of the sweep and of the dose-response: the smallest probe budget of
#: :func:`length_probe` at which softmax clears the count-based trigram at every T and ends within
#: 0.15 bits/char of its own T = 64 result (the stored ``causal_length_probe`` records at 2,000 steps,
#: which chapter 07 shows).
ROPE_STEPS = {"smoke": 8, "book": 2000}
#: The probes' step budgets.
PROBE_STEPS = {"smoke": (4, 8), "book": (2000, 4000, 8000)}
#: (label, activation, n_mode): softmax, the unscaled cube, the two readings of N, attention ablated.
ROPE_VARIANTS = (("softmax", "softmax", "row"), ("x^3", "poly:p=3,c=1", "row"),
                 ("x^3/sqrt(i+1)", "poly:p=3", "row"), ("x^3/sqrt(T)", "poly:p=3", "fixed"),
                 ("uniform", "uniform", "row"))
ROPE_SEEDS = {"smoke": (0,), "book": (0, 1, 2, 3, 4)}
#: Epochs (evaluations) per run: the budget is split into this many equal parts.
_EPOCHS = 4


def _fields(preset: str, context: int, steps: int) -> dict:
    """The config fields of one RoPE run at training length ``context`` for ``steps`` steps."""
    if preset not in ROPE_CONTEXTS:
        raise ValueError(f"the RoPE grids have presets {sorted(ROPE_CONTEXTS)}, got {preset!r}")
    scale = _SCALE[preset]
    batch = max(1, ROPE_CHARS_PER_STEP[preset] // context)
    per_epoch = max(1, steps // _EPOCHS)
    return {**_COMMON, **scale, "clip_grad": 0.0, "batch_size": batch, "epochs": _EPOCHS,
            "warmup_epochs": 0.2 if preset == "book" else 0.5,
            "options": {**scale["options"], "positions": "rope", "context": context, "windows": batch * per_epoch}}


def _configs(experiment, preset, seeds, variants, contexts, steps, default_seeds, **extra) -> list[TrainConfig]:
    out = []
    for s in seeds_for(preset, seeds, default_seeds):
        for context in contexts:
            fields = {**_fields(preset, context, steps), **extra}
            out += [TrainConfig(experiment=experiment, preset=preset, activation=act, n_mode=mode, seed=s,
                                device="cpu", **fields) for _, act, mode in variants]
    return out


def length_probe_at(steps: int):
    """The probe grid of one budget: softmax at every T of :data:`ROPE_CONTEXTS` for ``steps`` steps
    (book; smoke: its own first budget)."""
    def grid(preset: str = "book", seeds=None) -> list[TrainConfig]:
        if preset == "paper":
            return []
        budget = steps if preset == "book" else PROBE_STEPS["smoke"][0]
        return _configs("causal_length_probe", preset, seeds, ROPE_VARIANTS[:1], ROPE_CONTEXTS[preset], budget,
                        {"smoke": (0,), "book": (0,)})
    grid.__doc__ = f"Softmax with RoPE at every training length for {steps} steps (a probe of the sweep's budget)."
    return grid


def length_probe(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """Every probe: softmax with RoPE at every T for each budget of :data:`PROBE_STEPS` (default seed 0)."""
    if preset == "paper":
        return []
    return [c for steps in PROBE_STEPS[preset]
            for c in _configs("causal_length_probe", preset, seeds, ROPE_VARIANTS[:1], ROPE_CONTEXTS[preset], steps,
                              {"smoke": (0,), "book": (0,)})]


def length_rope(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """:data:`ROPE_VARIANTS` with RoPE at every T of :data:`ROPE_CONTEXTS`, :data:`ROPE_STEPS` steps, seed-major."""
    if preset == "paper":
        return []
    return _configs("causal_length_rope", preset, seeds, ROPE_VARIANTS, ROPE_CONTEXTS[preset], ROPE_STEPS[preset],
                    ROPE_SEEDS)


#: The dose-response's training length: the shortest of the sweep (where softmax learns soonest).
DOSE_CONTEXT = {"smoke": 16, "book": 256}
#: The factors k of softmax * k (the output projection started at 1/k).
DOSE_KS = (Fraction(1, 8), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(8))
#: The cube per row, uncapped, capped at row norm 1, and normalised to row norm 1.
DOSE_CUBES = (("x^3/sqrt(i+1)", "poly:p=3"), ("x^3/sqrt(i+1) capped", "poly_cap:p=3"),
              ("x^3/sqrt(i+1) unit rows", "poly_unit:p=3"))


def _softmax_k(k: Fraction) -> str:
    return "softmax" if k == 1 else f"softmax:k={k}"


def dose_response(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """softmax * k for each k of :data:`DOSE_KS` (out_init_scale 1/k) and :data:`DOSE_CUBES`, with RoPE at
    T = :data:`DOSE_CONTEXT`, :data:`ROPE_STEPS` steps, seed-major."""
    if preset == "paper":
        return []
    fields = _fields(preset, DOSE_CONTEXT[preset], ROPE_STEPS[preset])
    out = []
    for s in seeds_for(preset, seeds, ROPE_SEEDS):
        out += [TrainConfig(experiment="causal_dose_response", preset=preset, activation=_softmax_k(k), n_mode="row",
                            seed=s, device="cpu", out_init_scale=float(1 / k), **fields) for k in DOSE_KS]
        out += [TrainConfig(experiment="causal_dose_response", preset=preset, activation=act, n_mode="row", seed=s,
                            device="cpu", **fields) for _, act in DOSE_CUBES]
    return out
