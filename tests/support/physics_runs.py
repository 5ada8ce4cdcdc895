"""Planted runs of the ``physics`` grid at the smoke preset, as chapter 06's page modules read them."""
import numpy as np

from polyattn.analysis.physics import physics_final
from polyattn.experiments import physics as grids
from polyattn.labels import PINN_LABEL
from polyattn.results import config_dict
from polyattn.studies.physics.page import Runs

RMAE_SPEC = [{"name": "rMAE", "higher_is_better": False, "scale": 1.0, "unit": "", "label": "relative mean absolute error"},
             {"name": "rRMSE", "higher_is_better": False, "scale": 1.0, "unit": "",
              "label": "relative root-mean-square error"}]
#: Softmax's final rMAE per problem and seed, and each variant's as a multiple of it.
SOFTMAX = {"convection": [0.02, 0.03, 0.025], "reaction": [0.01, 0.012, 0.011], "wave": [0.6, 0.7, 0.65]}
RATIO = {"x^3/sqrt(N)": 10.0, "x^3/14": 1.0, "x/sqrt(N)": 1.0, "relu/N": 1.0, "sigmoid": 1.0, PINN_LABEL: 30.0}
GRID = 5   # points per side of the stored field


def physics_record(cfg, rmae, attention=None, field=None):
    """A record of ``cfg`` whose final test rMAE is ``rmae``, with its stored field and maps."""
    field = np.zeros(GRID * GRID) if field is None else field
    final = {"grid": [GRID, GRID], "prediction": list(map(float, field))}
    if attention is not None:
        final["attention"] = attention
    return {"schema": 1, "experiment": cfg.experiment, "config": config_dict(cfg), "config_hash": cfg.hash,
            "seed": cfg.seed, "preset": cfg.preset, "status": "ok", "diverged_step": None, "task": "pde",
            "seq_lens": {"seq_len": 1 if cfg.model.startswith("pinn_") else 5}, "metrics_spec": RMAE_SPEC,
            "metrics": [{"epoch": 1, "step": 1, "train_loss": 1.0, "rMAE": 1.0, "rRMSE": 1.0},
                        {"epoch": 2, "step": 2, "train_loss": 0.1, "rMAE": rmae, "rRMSE": rmae}],
            "probes": [], "provenance": {"wall_s": 10.0}, "final": final}


def uniform_maps(weight):
    """Stored maps [layer, head, query, key] whose rows weight every token alike."""
    return [[[[weight] * 5 for _ in range(5)] for _ in range(2)] for _ in range(2)]


def planted_runs(ratio=None, attention=True) -> Runs:
    """The grid at the smoke preset, seeds 0 to 2: softmax at :data:`SOFTMAX`, each variant at its
    :data:`RATIO` (or ``ratio``) times softmax's error; uniform attention maps unless ``attention``
    is false."""
    ratio = {**RATIO, **(ratio or {})}
    configs, records = [], []
    for cfg in grids.physics("smoke", seeds=[0, 1, 2]):
        pde, label = grids.pde_of(cfg), grids.variant_label(cfg)
        err = SOFTMAX[pde][cfg.seed] * (1.0 if label == "softmax" else ratio[label])
        att = None if label == PINN_LABEL or not attention else uniform_maps(0.2 if label == "softmax" else 0.5)
        configs.append(cfg)
        records.append(physics_record(cfg, err, att))
    return Runs("smoke", True, "", configs, records, physics_final(records))
