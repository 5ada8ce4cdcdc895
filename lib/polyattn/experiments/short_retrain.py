"""The short retrainings of Table 1's model whose measurements chapter 09 reads.

Questions that need a trained model (the gradient through the activation, an outlier token,
attention maps) use Table 1's model and recipe retrained briefly from seed 0, once per
activation, at :data:`polyattn.experiments.vit.ATTENTION_MAP_SCALE`
(:func:`vit.attention_map_config`).  A record keeps no weights, so each run measures its model
at the end of training and stores the measurements in ``record["final"]``
(``options["measure"]``, :func:`polyattn.attention_maps.measure`): the gradients through the
activation at the initialisation and after training, the outlier sweep of the centre patch,
and the CLS maps with the negative share and the attention distance.

The activations: softmax, x^p/sqrt(N) for p = 1..7 and the sign-keeping s|s|^(p-1)/sqrt(N)
for even p (the powers), x^3/14 (the map and outlier comparisons, with softmax, x^3/sqrt(N)
and x/sqrt(N)), and the unscaled x^3 (whose CLS maps chapter 03 shows beside softmax's and
x^3/sqrt(N)'s).
"""
from __future__ import annotations

from ..config import TrainConfig
from ..presets import seeds_for
from . import critiques, vit

EXPERIMENT = "critique_short_retrain"
#: Softmax, the powers of the ``critique_powers`` grid, x^3/14 and the unscaled x^3.
SHORT_RETRAIN_ACTIVATIONS = ("softmax", *critiques.POWER_ACTIVATIONS, "poly:p=3,c=1/14", "poly:p=3,c=1")
#: The activations whose outlier sweep and maps chapter 09 compares.
MAP_ACTIVATIONS = ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=1")
#: One seed: these runs show mechanisms, not which activation ends up better.
SHORT_RETRAIN_SEEDS = {"smoke": (0,), "book": (0,), "paper": (0,)}
#: What each run measures at its end (``options["measure"]``; see
#: :data:`polyattn.attention_maps.MEASURES`): the gradients on the first 128 test images (32
#: under smoke), the centre patch scaled by 1, 10, 30 and 100, the CLS maps of four test
#: images, all in the first and the last layer.
SHORT_RETRAIN_MEASURE = {
    "smoke": {"gradients": 32, "outliers": [1, 10, 30, 100], "maps": 4, "layers": [0, -1]},
    "book": {"gradients": 128, "outliers": [1, 10, 30, 100], "maps": 4, "layers": [0, -1]},
}


def short_retrain(preset: str = "book", seeds=None) -> list[TrainConfig]:
    """One short retraining of Table 1's model per activation of :data:`SHORT_RETRAIN_ACTIVATIONS`,
    with the measurements of :data:`SHORT_RETRAIN_MEASURE` stored in its record."""
    if preset == "paper":
        return vit.paper_configs()
    measure = SHORT_RETRAIN_MEASURE[preset]
    return [vit.attention_map_config(act, preset, seed=s).replace(
                experiment=EXPERIMENT, options={"measure": {k: (list(v) if isinstance(v, list) else v)
                                                            for k, v in measure.items()}})
            for act in SHORT_RETRAIN_ACTIVATIONS for s in seeds_for(preset, seeds, SHORT_RETRAIN_SEEDS)]
