"""The PDE problems of PINNsFormer's benchmarks, as data: equation, conditions, grids, answers.

    pde = get_pde("convection")                  # or get_pde("convection:beta=30"), get_pde("wave", c=2)
    train = pde.grid(51, 51)                     # collocation points, float32 [M, 1] tensors
    test = pde.grid(101, 101)                    # the published test grid
    u = pde.solution(test.x, test.t)             # closed-form reference
    r = pde.residual(u, autograd_derivatives(u, x, t, pde.derivatives))
    relative_errors(u, u_hat)                    # {"rMAE": ..., "rRMSE": ...}

Problems (each on [x0, x1] x [0, 1]):

    convection   u_t + beta u_x = 0, beta = 50, x in [0, 2 pi], u(x, 0) = sin x, periodic in x.
                 u = sin(x - beta t).
    reaction     u_t - rho u (1 - u) = 0, rho = 5, x in [0, 2 pi],
                 u(x, 0) = h(x) = exp(-(x - pi)^2 / (2 (pi/4)^2)), periodic in x.
                 u = h e^{rho t} / (h e^{rho t} + 1 - h)   (the logistic equation, point by point).
    wave         u_tt - c^2 u_xx = 0, c = 2, x in [0, 1], u(x, 0) = sin(pi x) + sin(3 pi x) / 2,
                 u_t(x, 0) = 0, u(0, t) = u(1, t) = 0.
                 u = sin(pi x) cos(c pi t) + sin(3 pi x) cos(3 c pi t) / 2   (standing waves).

Every problem declares which loss terms it needs: the residual (``derivatives`` names the
autograd derivatives it uses), the initial value (and, for the wave, the initial velocity
u_t(x, 0) = 0), and the boundary condition (``periodic``: u(x0, t) = u(x1, t);
``dirichlet``: u = 0 at both ends).

Grids are uniform and inclusive of the edges, t-major (point ``i * nx + j`` is time i,
position j), like the published meshgrid, so ``grid.image(values)`` is ``[nt, nx]``.
The residual is imposed on every grid point (edges included), the initial terms on the
t = 0 row and the boundary terms on the x = x0 and x = x1 columns.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

Tensor = torch.Tensor

#: Grid sizes (nx, nt) of the published runs: PINNsFormer trains on 51 x 51, the PINN
#: baseline on 101 x 101, and both are scored on 101 x 101.
PUBLISHED_GRIDS = {"pinnsformer": (51, 51), "pinn": (101, 101), "test": (101, 101)}

DERIVATIVES = ("u_x", "u_t", "u_xx", "u_tt")
BOUNDARIES = ("periodic", "dirichlet")


@dataclass(frozen=True)
class Collocation:
    """The points of one grid as ``[M, 1]`` tensors (no gradient; copy before differentiating)."""

    x: Tensor            # all nx * nt points, t-major
    t: Tensor
    x_initial: Tensor    # the t = t0 row, nx points
    t_initial: Tensor
    x_left: Tensor       # the x = x0 column, nt points
    t_left: Tensor
    x_right: Tensor      # the x = x1 column, nt points
    t_right: Tensor
    nx: int
    nt: int

    def __len__(self) -> int:
        return self.nx * self.nt

    def image(self, values) -> Tensor:
        """Values at the grid points as a ``[nt, nx]`` tensor (rows are times)."""
        v = torch.as_tensor(values)
        if v.numel() != self.nx * self.nt:
            raise ValueError(f"expected {self.nx * self.nt} values for a {self.nx} x {self.nt} grid, got {v.numel()}")
        return v.reshape(self.nt, self.nx)


def _check_size(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"grid size {name} must be an integer >= 2 (a grid needs both edges), got {n!r}")
    return int(n)


def _check_param(pde: str, name: str, value, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{pde}: parameter {name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        need = "> 0" if positive else ">= 0"
        raise ValueError(f"{pde}: parameter {name} must be finite and {need}, got {value!r}")
    return v


def autograd_derivatives(u: Tensor, x: Tensor, t: Tensor, names: Sequence[str]) -> dict[str, Tensor]:
    """The derivatives of ``u`` (computed from ``x`` and ``t``) named in ``names``, by autograd.

    Sums ``u`` over its points, so each point's derivative is its own when the model acts
    point by point.  The graph is kept (``create_graph``) so a loss on them can be trained.
    """
    bad = [n for n in names if n not in DERIVATIVES]
    if bad:
        raise ValueError(f"unknown derivative(s) {bad}; known: {', '.join(DERIVATIVES)}")
    out: dict[str, Tensor] = {}

    def d(f, v):
        return torch.autograd.grad(f, v, torch.ones_like(f), create_graph=True)[0]

    want_x = "u_x" in names or "u_xx" in names
    want_t = "u_t" in names or "u_tt" in names
    if want_x and want_t:
        # One backward pass for both first derivatives: the pass through the model is shared,
        # which makes a physics loss's closure about 40% cheaper than two passes.
        out["u_x"], out["u_t"] = torch.autograd.grad(u, (x, t), torch.ones_like(u), create_graph=True)
    elif want_x:
        out["u_x"] = d(u, x)
    elif want_t:
        out["u_t"] = d(u, t)
    if "u_xx" in names:
        out["u_xx"] = d(out["u_x"], x)
    if "u_tt" in names:
        out["u_tt"] = d(out["u_t"], t)
    return {n: out[n] for n in names}


class PDE:
    """One problem.  Subclasses set the domain, the parameters and the formulas."""

    name: str = ""
    x_range: tuple[float, float] = (0.0, 1.0)
    t_range: tuple[float, float] = (0.0, 1.0)
    derivatives: tuple[str, ...] = ()
    boundary: str = "periodic"
    initial_velocity: bool = False   # whether u_t(x, t0) = 0 is imposed
    defaults: dict = {}

    def __init__(self, **params):
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(f"{self.name}: unknown parameter(s) {unknown}; known: {sorted(self.defaults)}")
        self.params = {k: self._validate(k, params.get(k, v)) for k, v in self.defaults.items()}

    def _validate(self, name, value) -> float:
        return _check_param(self.name, name, value)

    @property
    def spec(self) -> str:
        """The problem's name in tables: the name, plus any parameter that differs from the default."""
        changed = [f"{k}={v:g}" for k, v in self.params.items() if v != self.defaults[k]]
        return self.name + (":" + ",".join(changed) if changed else "")

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v:g}' for k, v in self.params.items())})"

    # --- formulas (torch, any float dtype) -------------------------------------------------
    def solution(self, x: Tensor, t: Tensor) -> Tensor:
        raise NotImplementedError

    def initial_value(self, x: Tensor) -> Tensor:
        return self.solution(x, torch.full_like(x, self.t_range[0]))

    def residual_terms(self, u: Tensor, d: dict[str, Tensor]) -> tuple[Tensor, ...]:
        """The terms whose sum is the residual (their sizes set the scale of "near zero")."""
        raise NotImplementedError

    def residual(self, u: Tensor, d: dict[str, Tensor]) -> Tensor:
        """The PDE's left-hand side given ``u`` and the derivatives named in ``self.derivatives``."""
        missing = [n for n in self.derivatives if n not in d]
        if missing:
            raise ValueError(f"{self.name}: the residual needs derivatives {missing}")
        return sum(self.residual_terms(u, d))

    # --- points ----------------------------------------------------------------------------
    def grid(self, nx: int, nt: int, dtype=torch.float32, device=None) -> Collocation:
        """A uniform ``nx`` x ``nt`` grid over the domain, edges included."""
        nx, nt = _check_size("nx", nx), _check_size("nt", nt)
        xs = torch.linspace(*self.x_range, nx, dtype=torch.float64)
        ts = torch.linspace(*self.t_range, nt, dtype=torch.float64)
        tt, xx = torch.meshgrid(ts, xs, indexing="ij")

        def col(v):
            return v.reshape(-1, 1).to(dtype=dtype, device=device)

        return Collocation(x=col(xx), t=col(tt),
                           x_initial=col(xs), t_initial=col(torch.full_like(xs, self.t_range[0])),
                           x_left=col(torch.full_like(ts, self.x_range[0])), t_left=col(ts),
                           x_right=col(torch.full_like(ts, self.x_range[1])), t_right=col(ts),
                           nx=nx, nt=nt)

    def train_grid(self, model: str = "pinnsformer") -> Collocation:
        """The published training grid for ``model`` (``pinnsformer`` or ``pinn``)."""
        if model not in ("pinnsformer", "pinn"):
            raise ValueError(f"model must be 'pinnsformer' or 'pinn', got {model!r}")
        return self.grid(*PUBLISHED_GRIDS[model])

    def test_grid(self, nx: int = PUBLISHED_GRIDS["test"][0], nt: int = PUBLISHED_GRIDS["test"][1]) -> Collocation:
        return self.grid(nx, nt)


class Convection(PDE):
    name = "convection"
    x_range = (0.0, 2 * math.pi)
    derivatives = ("u_t", "u_x")
    boundary = "periodic"
    defaults = {"beta": 50.0}

    def solution(self, x, t):
        return torch.sin(x - self.params["beta"] * t)

    def residual_terms(self, u, d):
        return d["u_t"], self.params["beta"] * d["u_x"]


class Reaction(PDE):
    name = "reaction"
    x_range = (0.0, 2 * math.pi)
    derivatives = ("u_t",)
    boundary = "periodic"
    defaults = {"rho": 5.0}

    def initial_value(self, x):
        return torch.exp(-(x - math.pi) ** 2 / (2 * (math.pi / 4) ** 2))

    def solution(self, x, t):
        h = self.initial_value(x)
        g = h * torch.exp(self.params["rho"] * t)
        return g / (g + 1 - h)

    def residual_terms(self, u, d):
        return d["u_t"], -self.params["rho"] * u * (1 - u)


class Wave(PDE):
    name = "wave"
    derivatives = ("u_tt", "u_xx")
    boundary = "dirichlet"
    initial_velocity = True
    defaults = {"c": 2.0}

    def _validate(self, name, value):
        # c = 0 would leave u_tt = 0 with a nonzero u_xx: no wave, and no closed form below.
        return _check_param(self.name, name, value, positive=True)

    def solution(self, x, t):
        c = self.params["c"]
        return (torch.sin(math.pi * x) * torch.cos(c * math.pi * t)
                + 0.5 * torch.sin(3 * math.pi * x) * torch.cos(3 * c * math.pi * t))

    def residual_terms(self, u, d):
        return d["u_tt"], -self.params["c"] ** 2 * d["u_xx"]


PDES: dict[str, type[PDE]] = {"convection": Convection, "reaction": Reaction, "wave": Wave}


def _parse_spec(spec: str) -> tuple[str, dict]:
    name, _, rest = spec.partition(":")
    params = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"bad PDE spec {spec!r}: expected name or name:key=value,...")
        try:
            params[key.strip()] = float(value)
        except ValueError:
            raise ValueError(f"bad PDE spec {spec!r}: {key.strip()}={value!r} is not a number") from None
    return name.strip(), params


def get_pde(spec, **params) -> PDE:
    """A problem by name (``convection``, ``reaction``, ``wave``), spec (``convection:beta=30``)
    or instance; keyword parameters override the spec's."""
    if isinstance(spec, PDE):
        if params:
            raise ValueError("parameters cannot be given with a PDE instance")
        return spec
    if not isinstance(spec, str):
        raise ValueError(f"a PDE is named by a string, got {type(spec).__name__}")
    name, parsed = _parse_spec(spec)
    if name not in PDES:
        raise ValueError(f"unknown PDE {name!r}; choose one of: {', '.join(PDES)}")
    return PDES[name](**{**parsed, **params})


# --- metrics ----------------------------------------------------------------------------------

def _flat64(a) -> Tensor:
    t = torch.as_tensor(a.detach() if isinstance(a, Tensor) else np.asarray(a))
    return t.reshape(-1).to(device="cpu", dtype=torch.float64)


def _pair(u, u_hat) -> tuple[Tensor, Tensor]:
    a, b = _flat64(u), _flat64(u_hat)
    # Flattening both, rather than broadcasting, keeps [M] against [M, 1] from becoming M x M.
    if a.numel() != b.numel():
        raise ValueError(f"reference and prediction differ in size: {a.numel()} vs {b.numel()} values")
    if a.numel() == 0:
        raise ValueError("no values to compare")
    return a, b


def rmae(u, u_hat) -> float:
    """Relative mean absolute error sum|u - u_hat| / sum|u| (``u`` the reference)."""
    a, b = _pair(u, u_hat)
    den = a.abs().sum()
    if den == 0:
        raise ValueError("rMAE is undefined for an all-zero reference")
    return float((a - b).abs().sum() / den)


def rrmse(u, u_hat) -> float:
    """Relative root mean squared error sqrt(sum (u - u_hat)^2 / sum u^2)."""
    a, b = _pair(u, u_hat)
    den = a.pow(2).sum()
    if den == 0:
        raise ValueError("rRMSE is undefined for an all-zero reference")
    return float(((a - b).pow(2).sum() / den).sqrt())


def relative_errors(u, u_hat) -> dict[str, float]:
    """``{"rMAE": ..., "rRMSE": ...}``; NaN or inf when the prediction is not finite."""
    return {"rMAE": rmae(u, u_hat), "rRMSE": rrmse(u, u_hat)}


__all__ = ["BOUNDARIES", "Collocation", "Convection", "DERIVATIVES", "PDE", "PDES", "PUBLISHED_GRIDS",
           "Reaction", "Wave", "autograd_derivatives", "get_pde", "relative_errors", "rmae", "rrmse"]
