"""Chapter 06, "Predicted fields of the median seed": per problem, the reference field and the
absolute error of the median seed of softmax and x³/√N, on one logarithmic colour scale.

    field_figure(runs); field_values(runs)
"""
from __future__ import annotations

import numpy as np

from ...analysis import physics as pa
from .page import FONT, POLY, SOFTMAX, Runs, variant_name
from .problems import field_image, problem_specs, reference


def field_figure(runs: Runs, shown=(SOFTMAX, POLY)):
    """Per problem: the reference field and the absolute error of the median seed of each variant
    of ``shown``, the errors on one logarithmic colour scale (a linear one leaves an error of 1%
    black beside one of 100%)."""
    if not runs.trains:
        return None
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    from ... import plotting

    by_run = {f"{r['config_hash']}-seed{r['seed']}": r for r in runs.records}
    picks = pa.median_runs(runs.final)
    specs = problem_specs(runs)
    panels = []       # (row, reference, pde, [(title, |error|)])
    for name in runs.pdes:
        sub = picks[picks["pde"] == name].set_index("variant")
        errors, ref, pde = [], None, None
        for label in shown:
            if label not in sub.index or by_run[sub.loc[label, "run"]]["status"] != "ok":
                errors.append((f"{variant_name(label)}: diverged", None))
                continue
            pred = pa.prediction_image(by_run[sub.loc[label, "run"]])
            ref, pde = reference(specs[name], pred.shape[0])
            errors.append((f"{variant_name(label)}: |error|, rMAE {sub.loc[label, 'rMAE']:.3g}", np.abs(pred - ref)))
        panels.append((name, ref, pde, errors))
    errs = [e for _, _, _, es in panels for _, e in es if e is not None]
    top = max((float(e.max()) for e in errs), default=1.0)
    norm = LogNorm(vmin=top * 1e-4, vmax=top)
    fig, axes = plt.subplots(len(panels), 1 + len(shown), figsize=(3.6 * (1 + len(shown)), 2.5 * len(panels)),
                             squeeze=False)
    image = None
    for row, (name, ref, pde, errors) in zip(axes, panels):
        for ax in row:
            ax.set_xticks([])
            ax.set_yticks([])
        if ref is None:
            for ax in row:
                ax.axis("off")
            row[0].set_title(f"{name}: every shown variant diverged", fontsize=FONT)
            continue
        im = field_image(row[0], ref, pde, f"{name}: reference", cmap="RdBu_r")
        fig.colorbar(im, ax=row[0], shrink=0.8)
        for ax, (title, err) in zip(row[1:], errors):
            if err is None:
                ax.axis("off")
                ax.set_title(title, fontsize=FONT)
                continue
            image = field_image(ax, np.clip(err, norm.vmin, None), pde, title, cmap="magma", norm=norm)
    if image is not None:
        fig.colorbar(image, ax=axes[:, 1:].ravel().tolist(), shrink=0.8, label="|error| (log scale)")
    fig.suptitle("Reference and absolute error of the median seed (t left to right, x bottom to top)", fontsize=10)
    plotting.stamp(fig, runs.preset, "median seed per variant")
    return fig


def field_values(runs: Runs) -> dict[str, str]:
    """The grid on which the records keep each run's predicted field."""
    if not runs.trains:
        return {"field_grid": runs.not_run}
    kept = next((r["final"]["grid"] for r in runs.records if r["status"] == "ok"), None)
    return {"field_grid": " × ".join(map(str, kept)) if kept else "none"}
