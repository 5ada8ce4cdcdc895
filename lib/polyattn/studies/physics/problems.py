"""Chapter 06's introduction and "The three problems": the tokens per point and the two scales,
the equations with their conditions and closed-form solutions, and those solutions drawn over
(t, x).

    intro_values()                                            # the five tokens and the two scales
    problem_tables(runs); solution_figure(runs); problem_values(runs)
    reference(spec, n); field_image(ax, img, pde, title)      # a closed-form field, and its panel
"""
from __future__ import annotations

import math

from ...book.deliver import styled
from ...data.pde import get_pde
from ...experiments import physics as grids
from ...labels import PDES
from ...models.pinnsformer import SEQ_DT, SEQ_LEN
from .page import FONT, Runs, parameters_text, small

#: The equations, conditions and closed-form solutions, as the page writes them.
EQUATIONS = {
    "convection": ("u_t + β u_x = 0", "u(x, 0) = sin x", "periodic in x", "sin(x − βt)"),
    "reaction": ("u_t − ρ u (1 − u) = 0", "u(x, 0) = exp(−(x − π)² / (2 (π/4)²))", "periodic in x",
                 "h e^{ρt} / (h e^{ρt} + 1 − h), h = u(x, 0)"),
    "wave": ("u_tt − c² u_xx = 0", "u(x, 0) = sin πx + ½ sin 3πx, u_t(x, 0) = 0", "u(0, t) = u(1, t) = 0",
             "sin πx cos cπt + ½ sin 3πx cos 3cπt"),
}
#: Points per side of the grid on which the closed-form solutions are drawn.
REFERENCE_POINTS = 101


def intro_values() -> dict[str, str]:
    """The tokens per point and their time step, how much smaller 1/14 is than 1/sqrt(N) (on the
    weights, and on the scores), and what users of the published code report about seeds."""
    ratio = 14 / math.sqrt(SEQ_LEN)
    return {"k": str(SEQ_LEN), "dt": f"{SEQ_DT:g}", "scale_ratio": f"{ratio:.2f}",
            "score_ratio": f"{ratio ** (1 / 3):.2f}", "seed_report": grids.SEED_REPORT}


def problem_specs(runs: Runs) -> dict[str, str]:
    """PDE -> the problem the page's runs solve (``convection:beta=30`` at the book preset)."""
    return {p: grids.pde_spec(runs.grid_preset, p) for p in PDES}


def problem_tables(runs: Runs) -> list:
    """Two tables, so that neither is wider than the page: the equations with their parameters
    and domains, then their conditions and closed-form solutions."""
    first, second = [], []
    for name, spec in problem_specs(runs).items():
        pde = get_pde(spec)
        eq, ic, bc, sol = EQUATIONS[name]
        first.append({"PDE": name, "equation": eq, "parameters": parameters_text(spec),
                      "domain": f"x in [{pde.x_range[0]:g}, {pde.x_range[1]:.3g}], "
                                f"t in [{pde.t_range[0]:g}, {pde.t_range[1]:g}]"})
        second.append({"PDE": name, "initial condition": ic, "boundary": bc, "solution": sol})
    return [styled(first, f"The three problems (preset {runs.grid_preset})"),
            small(styled(second, "Their initial and boundary conditions, and the closed-form solutions"))]


def reference(spec: str, n: int = REFERENCE_POINTS):
    """The closed-form solution of ``spec`` on an ``n`` x ``n`` grid (rows are times), and the PDE."""
    import torch

    pde = get_pde(spec)
    g = pde.grid(n, n, dtype=torch.float64)
    return g.image(pde.solution(g.x, g.t)).numpy(), pde


def field_image(ax, img, pde, title, **kw):
    """Draw the field ``img`` of ``pde`` on ``ax`` under ``title``; returns the image."""
    # rows of img are times: transposed, t runs left to right and x bottom to top
    im = ax.imshow(img.T, origin="lower", aspect="auto", extent=(*pde.t_range, *pde.x_range), **kw)
    ax.grid(False)
    ax.set_title(title, fontsize=FONT)
    return im


def solution_figure(runs: Runs):
    """The closed-form solution of each problem over (t, x)."""
    import matplotlib.pyplot as plt

    from ... import plotting

    fig, axes = plt.subplots(1, len(PDES), figsize=(12, 3.2))
    for ax, (name, spec) in zip(axes, problem_specs(runs).items()):
        img, pde = reference(spec)
        im = field_image(ax, img, pde, f"{name} ({parameters_text(spec)})", cmap="RdBu_r")
        ax.set_xlabel("t")
        ax.set_ylabel("x")
        fig.colorbar(im, ax=ax, shrink=0.85)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    plotting.stamp(fig, runs.preset, "closed-form solutions")
    return fig


def problem_values(runs: Runs) -> dict[str, str]:
    """The convection speed of the page's runs and the published one, whether they are the same,
    and how often the solution crosses the domain in t in [0, 1]."""
    conv, published = get_pde(problem_specs(runs)["convection"]), get_pde("convection")
    same = conv.params == published.params
    return {"beta": f"{conv.params['beta']:g}", "beta_published": f"{published.params['beta']:g}",
            "crossings": f"{conv.params['beta'] / (conv.x_range[1] - conv.x_range[0]):.1f}",
            "beta_note": "the published speed" if same else "not the published speed: the setting below says why"}
