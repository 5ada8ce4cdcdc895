"""Physics-informed regression on the PDEs of :mod:`polyattn.data.pde` (PINNsFormer or a PINN).

``config.dataset`` is the PDE spec (``convection``, ``reaction``, ``wave``, optionally with
parameters, e.g. ``convection:beta=30``); ``config.model`` a PINNsFormer size (``paper``,
``small``, ``micro``) or ``pinn_<size>`` for the plain MLP baseline.  Each epoch is one
full-batch optimiser step (with ``optimizer="lbfgs"``: one L-BFGS step of up to
``lbfgs_max_iter`` iterations with a strong-Wolfe line search, as published).
Options (``config.options``):

    grid        [nx, nt] training collocation grid (default: the published grid of the model)
    test_grid   [nx, nt] evaluation grid (default 101 x 101)
    sequence    PINNsFormer's published pseudo-sequence loss (default True for PINNsFormer)
    weights     {residual, initial, boundary} loss weights (default 1 each)

Metrics (lower is better): rMAE and rRMSE on the test grid.  At the end the record keeps
(under ``final``) the prediction on a 51 x 51 grid and, for PINNsFormer, the mean attention
weights over the pseudo-time tokens per layer and head.
"""
from __future__ import annotations

import torch

from .. import physics  # read as physics.<name> at call time, so that a test can stand in for a loss
from ..data.pde import get_pde
from ..probes import record_attention_maps
from ..task_declarations import pde_metrics
from .base import Batch

PINN_PREFIX = "pinn_"
#: The points of the 51 x 51 field (evenly spaced in its order) whose attention maps are averaged.
ATTENTION_POINTS = 256


def _is_pinn(config) -> bool:
    return config.model.startswith(PINN_PREFIX)


class PhysicsInformed:
    name = "pde"

    def metrics(self, config):
        return pde_metrics(config)

    def seq_lens(self, config):
        from ..models.pinnsformer import SEQ_LEN

        return {"seq_len": 1 if _is_pinn(config) else SEQ_LEN}

    def load(self, config, world, rank):
        problem = get_pde(config.dataset)
        grid = config.options.get("grid")
        train = problem.grid(*grid) if grid else problem.train_grid("pinn" if _is_pinn(config) else "pinnsformer")
        test = problem.test_grid(*config.options.get("test_grid", (101, 101)))
        return {"problem": problem, "train": train, "test": test}

    def build_model(self, config, data):
        if _is_pinn(config):
            from ..models.pinn import build_pinn

            return build_pinn(config.model[len(PINN_PREFIX):])
        from ..models.pinnsformer import build_pinnsformer

        return build_pinnsformer(config.model, config.activation)

    def steps_per_epoch(self, config, data):
        return 1

    def batches(self, config, data, epoch, world, rank, state=None):
        yield Batch(data["train"], size=len(data["train"]))

    def loss(self, model, batch, config):
        sequence = config.options.get("sequence", not _is_pinn(config))
        total, parts = physics.pde_loss(config.dataset, model, batch.inputs, sequence=sequence,
                                weights=config.options.get("weights"))
        return total, {"train_loss": total.item() * batch.size,
                       **{f"loss_{k}": float(v.detach()) * batch.size for k, v in parts.items()}}

    def evaluate(self, model, config, data, device):
        return physics.evaluate(data["problem"], model, data["test"])

    @torch.no_grad()
    def summarise(self, model, config, data, device) -> dict:
        grid = data["problem"].grid(51, 51)
        out = {"grid": [51, 51], "prediction": [round(float(v), 6) for v in physics.predict(model, grid).flatten()]}
        if not _is_pinn(config):
            sub = torch.linspace(0, len(grid) - 1, ATTENTION_POINTS).long()
            maps = record_attention_maps(model, (grid.x[sub], grid.t[sub]))      # [L, B, H, 5, 5]
            out["attention"] = maps.mean(1).tolist()                              # [L, H, 5, 5]
        return out
