"""The plain PINN baseline: a tanh MLP from (x, t) to u, as in PINNsFormer's comparisons.

    model = build_pinn("paper")           # 4 linear layers, width 512: 527,361 parameters
    u = model(x, t)                       # x, t: [M, 1] -> u: [M, 1]

``layers`` counts the linear maps (the published ``num_layer``): Linear(2, w), then
``layers - 2`` times Linear(w, w), each followed by tanh, then Linear(w, 1).  Weights start
Xavier-uniform with bias 0.01, as in the published notebooks.
"""
from __future__ import annotations

import torch
from torch import nn


def xavier_linears(module: nn.Module, bias: float = 0.01) -> None:
    """Xavier-uniform weights and a small constant bias for every Linear (the PINN literature's init)."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.constant_(m.bias, bias)

#: Named sizes: ``paper`` is the published baseline; the others are for CPU runs and tests.
PINN_SIZES = {
    "paper": dict(width=512, layers=4),
    "small": dict(width=128, layers=4),
    "micro": dict(width=16, layers=3),
}


class PINN(nn.Module):
    def __init__(self, width: int = 512, layers: int = 4, d_out: int = 1):
        super().__init__()
        if layers < 2 or width < 1:
            raise ValueError(f"a PINN needs layers >= 2 and width >= 1, got layers={layers}, width={width}")
        mods: list[nn.Module] = [nn.Linear(2, width), nn.Tanh()]
        for _ in range(layers - 2):
            mods += [nn.Linear(width, width), nn.Tanh()]
        mods.append(nn.Linear(width, d_out))
        self.net = nn.Sequential(*mods)
        self.reset_parameters()

    def reset_parameters(self):
        xavier_linears(self)

    def forward(self, x, t):
        if x.dim() != 2 or x.shape[1] != 1 or x.shape != t.shape:
            raise ValueError(f"x and t must both be [M, 1], got {tuple(x.shape)} and {tuple(t.shape)}")
        return self.net(torch.cat([x, t], dim=-1))


def build_pinn(size: str = "paper", **overrides) -> PINN:
    if size not in PINN_SIZES:
        raise ValueError(f"unknown PINN size {size!r}; choose one of: {', '.join(PINN_SIZES)}")
    return PINN(**{**PINN_SIZES[size], **overrides})


__all__ = ["PINN", "PINN_SIZES", "build_pinn"]
