import math

import numpy as np
import pytest
import torch
from torch import nn

from polyattn.data.pde import PDES, PUBLISHED_GRIDS, Convection, autograd_derivatives, get_pde, relative_errors, rmae, rrmse
from polyattn.physics import pde_loss

F64 = torch.float64


def _fd_derivatives(pde, x, t, h):
    """Central finite differences of the closed form (float64)."""
    f = pde.solution
    return {
        "u_x": (f(x + h, t) - f(x - h, t)) / (2 * h),
        "u_t": (f(x, t + h) - f(x, t - h)) / (2 * h),
        "u_xx": (f(x + h, t) - 2 * f(x, t) + f(x - h, t)) / h ** 2,
        "u_tt": (f(x, t + h) - 2 * f(x, t) + f(x, t - h)) / h ** 2,
    }


def _interior(pde, n=400, seed=0):
    g = torch.Generator().manual_seed(seed)
    (x0, x1), (t0, t1) = pde.x_range, pde.t_range
    x = x0 + (x1 - x0) * (0.02 + 0.96 * torch.rand(n, 1, generator=g, dtype=F64))
    t = t0 + (t1 - t0) * (0.02 + 0.96 * torch.rand(n, 1, generator=g, dtype=F64))
    return x, t


def _relative_residual(pde, solution_pde, h=1e-4):
    x, t = _interior(pde)
    d = _fd_derivatives(solution_pde, x, t, h)
    u = solution_pde.solution(x, t)
    terms = pde.residual_terms(u, d)
    scale = sum(term.abs() for term in terms).max()
    return float(pde.residual(u, d).abs().max() / scale)


@pytest.mark.parametrize("name", list(PDES))
def test_reference_solution_satisfies_its_pde_by_finite_differences(name):
    pde = get_pde(name)
    assert _relative_residual(pde, pde) < 1e-5


@pytest.mark.parametrize("name, wrong", [("convection", {"beta": 45}), ("reaction", {"rho": 4}), ("wave", {"c": 1.8})])
def test_the_residual_check_detects_a_solution_of_another_equation(name, wrong):
    assert _relative_residual(get_pde(name), get_pde(name, **wrong)) > 1e-2


def test_initial_values_are_the_published_ones():
    x = torch.linspace(0, 2 * math.pi, 33, dtype=F64)[:, None]
    zero = torch.zeros_like(x)
    conv, reac = get_pde("convection"), get_pde("reaction")
    torch.testing.assert_close(conv.solution(x, zero), torch.sin(x))
    torch.testing.assert_close(conv.initial_value(x), torch.sin(x))
    gauss = torch.exp(-(x - math.pi) ** 2 / (2 * (math.pi / 4) ** 2))
    torch.testing.assert_close(reac.solution(x, zero), gauss)
    torch.testing.assert_close(reac.initial_value(x), gauss)
    wave = get_pde("wave")
    xw = torch.linspace(0, 1, 33, dtype=F64)[:, None]
    torch.testing.assert_close(wave.solution(xw, torch.zeros_like(xw)),
                               torch.sin(math.pi * xw) + 0.5 * torch.sin(3 * math.pi * xw))
    # u_t(x, 0) = 0: the one-sided difference is O(h) for a function even in t.
    h = 1e-5
    assert float((wave.solution(xw, torch.full_like(xw, h)) - wave.solution(xw, torch.zeros_like(xw))).abs().max() / h) < 1e-3


def test_boundary_conditions_hold_for_the_references():
    t = torch.linspace(0, 1, 41, dtype=F64)[:, None]
    for name in ("convection", "reaction"):
        pde = get_pde(name)
        assert pde.boundary == "periodic" and not pde.initial_velocity
        left = pde.solution(torch.full_like(t, pde.x_range[0]), t)
        right = pde.solution(torch.full_like(t, pde.x_range[1]), t)
        torch.testing.assert_close(left, right, atol=1e-12, rtol=0)
    wave = get_pde("wave")
    assert wave.boundary == "dirichlet" and wave.initial_velocity
    for x_end in wave.x_range:
        assert float(wave.solution(torch.full_like(t, x_end), t).abs().max()) < 1e-12


def test_reaction_reference_stays_in_unit_interval_and_grows():
    pde = get_pde("reaction")
    g = pde.grid(65, 65, dtype=F64)
    u = g.image(pde.solution(g.x, g.t))
    # h(pi) = 1 is the logistic fixed point, so the maximum is 1 up to rounding.
    assert float(u.min()) > 0 and float(u.max()) <= 1 + 1e-12
    assert bool((u[1:] >= u[:-1] - 1e-12).all())  # logistic growth: u never falls in t


def test_autograd_derivatives_of_a_known_function():
    x = torch.tensor([[0.5], [2.0]], dtype=F64, requires_grad=True)
    t = torch.tensor([[1.5], [-1.0]], dtype=F64, requires_grad=True)
    u = x ** 2 * t ** 3
    d = autograd_derivatives(u, x, t, ("u_x", "u_t", "u_xx", "u_tt"))
    torch.testing.assert_close(d["u_x"], 2 * x * t ** 3)
    torch.testing.assert_close(d["u_t"], 3 * x ** 2 * t ** 2)
    torch.testing.assert_close(d["u_xx"], 2 * t ** 3)
    torch.testing.assert_close(d["u_tt"], 6 * x ** 2 * t)
    with pytest.raises(ValueError, match="unknown derivative"):
        autograd_derivatives(u, x, t, ("u_xt",))
    # one derivative alone (a single backward pass) gives what the joint pass gives
    for names in (("u_t",), ("u_x",), ("u_tt",), ("u_xx",)):
        alone = autograd_derivatives(u, x, t, names)
        assert list(alone) == list(names)
        torch.testing.assert_close(alone[names[0]], d[names[0]])


def test_grid_layout_edges_and_published_sizes():
    pde = get_pde("convection")
    g = pde.grid(5, 3)
    assert len(g) == 15 and g.x.shape == (15, 1) and g.x.dtype == torch.float32
    img_t, img_x = g.image(g.t), g.image(g.x)
    assert img_t.shape == (3, 5)
    torch.testing.assert_close(img_t[:, 0], torch.tensor([0.0, 0.5, 1.0]))        # rows are times
    torch.testing.assert_close(img_x[0], torch.linspace(0, 2 * math.pi, 5))       # columns positions
    assert float(g.t_initial.abs().max()) == 0 and g.x_initial.shape == (5, 1)
    assert bool((g.x_left == 0).all()) and torch.allclose(g.x_right, torch.full((3, 1), 2 * math.pi))
    torch.testing.assert_close(g.t_left.flatten(), torch.tensor([0.0, 0.5, 1.0]))
    assert PUBLISHED_GRIDS == {"pinnsformer": (51, 51), "pinn": (101, 101), "test": (101, 101)}
    assert len(pde.train_grid("pinnsformer")) == 51 * 51 and len(pde.test_grid()) == 101 * 101
    with pytest.raises(ValueError, match="values"):
        g.image(torch.zeros(14))


@pytest.mark.parametrize("nx, nt", [(0, 5), (5, 1), (2.5, 5), (True, 5), (-3, 4)])
def test_empty_or_degenerate_grid_is_refused(nx, nt):
    with pytest.raises(ValueError, match="grid size"):
        get_pde("wave").grid(nx, nt)


def test_metrics_on_known_arrays():
    u = np.array([1.0, -2.0, 3.0, 0.0])
    u_hat = np.array([1.0, -1.0, 3.0, 1.0])
    assert rmae(u, u_hat) == pytest.approx(2 / 6)
    assert rrmse(u, u_hat) == pytest.approx(math.sqrt(2 / 14))
    # [M] against [M, 1] must compare point by point, not broadcast to M x M.
    errs = relative_errors(torch.tensor(u)[:, None], torch.tensor(u_hat, dtype=torch.float32))
    assert errs == {"rMAE": pytest.approx(1 / 3), "rRMSE": pytest.approx(math.sqrt(1 / 7))}
    assert relative_errors(u, u) == {"rMAE": 0.0, "rRMSE": 0.0}
    assert math.isnan(rmae(u, np.array([1.0, np.nan, 0.0, 0.0])))
    with pytest.raises(ValueError, match="differ in size"):
        rmae(u, u[:3])
    with pytest.raises(ValueError, match="all-zero"):
        rrmse(np.zeros(4), u)


def test_registry_names_specs_and_errors():
    assert set(PDES) == {"convection", "reaction", "wave"}
    assert get_pde("convection").params == {"beta": 50.0}
    assert get_pde("reaction").params == {"rho": 5.0} and get_pde("wave").params == {"c": 2.0}
    p = get_pde("convection:beta=30")
    assert isinstance(p, Convection) and p.params["beta"] == 30 and p.spec == "convection:beta=30"
    assert get_pde("convection").spec == "convection" and get_pde(p) is p
    assert get_pde("convection:beta=30", beta=20).params["beta"] == 20
    cases = [(("heat",), {}, "unknown PDE 'heat'; choose one of: convection, reaction, wave"),
             (("convection",), {"beta": -1}, "beta must be finite and >= 0"),
             (("convection:beta=-2",), {}, "beta must be finite and >= 0"),
             (("reaction",), {"rho": float("nan")}, "rho must be finite"),
             (("wave",), {"c": 0}, "c must be finite and > 0"),
             (("wave",), {"speed": 2}, "unknown parameter"),
             (("convection:beta",), {}, "bad PDE spec"),
             (("convection:beta=fast",), {}, "not a number"),
             (("convection",), {"beta": "50"}, "must be a number")]
    for args, kwargs, message in cases:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
            get_pde(*args, **kwargs)
        assert "\n" not in str(err.value)


def _f(v) -> float:
    return v.item()


class _Closed(nn.Module):
    """The closed-form solution plus a known perturbation c0 + c1 t, as a model."""

    def __init__(self, pde, c0=0.0, c1=0.0):
        super().__init__()
        self.pde, self.c0, self.c1 = pde, c0, c1
        self.dummy = nn.Parameter(torch.zeros(()))

    def forward(self, x, t):
        return self.pde.solution(x, t) + self.c0 + self.c1 * t + self.dummy


@pytest.mark.parametrize("name", list(PDES))
def test_loss_vanishes_on_the_reference_solution(name):
    pde = get_pde(name)
    total, parts = pde_loss(pde, _Closed(pde), pde.grid(41, 41))
    assert set(parts) == {"residual", "initial", "boundary"}
    scale = {"convection": 50.0, "reaction": 5.0, "wave": 4 * (3 * math.pi) ** 2}[name]
    assert _f(parts["residual"]) ** 0.5 < 1e-5 * scale
    assert _f(parts["initial"]) < 1e-10 and _f(parts["boundary"]) < 1e-10
    torch.testing.assert_close(total, sum(parts.values()))


def test_loss_terms_see_the_conditions_each_problem_declares():
    c = 0.3
    conv = get_pde("convection")
    _, p = pde_loss(conv, _Closed(conv, c0=c), conv.grid(21, 21))
    # A constant still solves u_t + beta u_x = 0 and is periodic; only the initial value is off.
    assert _f(p["residual"]) < 1e-8 and _f(p["boundary"]) < 1e-10
    assert _f(p["initial"]) == pytest.approx(c ** 2, rel=1e-5)

    wave = get_pde("wave")
    g = wave.grid(21, 21)
    _, p = pde_loss(wave, _Closed(wave, c1=c), g)
    # c t: zero u_tt, so the residual stays 0; the initial velocity is c everywhere; both
    # Dirichlet ends carry c t.
    assert _f(p["residual"]) < 1e-6
    assert _f(p["initial"]) == pytest.approx(c ** 2, rel=1e-5)
    assert _f(p["boundary"]) == pytest.approx(2 * float((c * g.t_left.double()).pow(2).mean()), rel=1e-5)

    reac = get_pde("reaction")
    _, p = pde_loss(reac, _Closed(reac, c0=c), reac.grid(21, 21))
    assert _f(p["residual"]) > 1e-3 and _f(p["boundary"]) < 1e-10

    total, p = pde_loss(conv, _Closed(conv, c0=c), conv.grid(21, 21), weights={"initial": 10.0})
    assert _f(total) == pytest.approx(_f(p["residual"] + 10 * p["initial"] + p["boundary"]))
    with pytest.raises(ValueError, match="unknown loss term"):
        pde_loss(conv, _Closed(conv), conv.grid(5, 5), weights={"data": 1.0})
