"""Chapter 04's converged tier: Table 1's model on all of Fashion-MNIST, trained to a plateau and
read from the committed records at every preset.  Its results table and curves are
:mod:`polyattn.studies.vit.page`'s; the tier without clipping is :mod:`polyattn.studies.vit.unclipped`.

    glue_values(converged_numbers())             # the recipe, the stored runs, their cost, the plateau
    curves_figure(book_runs(vit.converged), CONVERGED_GROUPS, "book")
    results_table(records, registered, converged_caption(), order=vit.CONVERGED_ACTIVATIONS)
"""
from __future__ import annotations

import math

from ...claims.register import claim
from ...display import name
from .page import book_runs, number_text, to_run

#: The converged tier's activations in two panels: the cubics, then the other powers.
CONVERGED_GROUPS = (
    ("Softmax and the cubics", ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1")),
    ("Softmax and the other powers", ("softmax", "poly:p=1", "poly:p=2", "poly_learned:p=2")),
)


def plateau(records: list[dict]) -> float:
    """The largest change (points) of any run's test accuracy over its last two epochs (NaN
    without a run of three epochs)."""
    moves = [abs(r["metrics"][-1]["test_acc"] - r["metrics"][-3]["test_acc"]) * 100
             for r in records if len(r.get("metrics") or []) >= 3]
    return max(moves) if moves else math.nan


def converged_numbers() -> dict[str, object]:
    """The converged tier's recipe, its stored runs, those still to run (with clipping and without)
    and their cost, and how flat their last epochs are."""
    from IPython.display import Markdown

    from ...data import split_sizes
    from ...experiments import vit

    grid, unclipped = vit.converged("book"), vit.unclipped("book")
    train, test = split_sizes(grid[0].dataset, grid[0].train_subset, grid[0].test_subset)
    records = book_runs(vit.converged)
    minutes = [r["provenance"]["wall_s"] / 60 for r in records]
    return {"ch04_conv_train_images": f"{train:,}", "ch04_conv_test_images": f"{test:,}",
            "ch04_conv_epochs": str(grid[0].epochs), "ch04_conv_batch": str(grid[0].batch_size),
            "ch04_conv_clip": f"{grid[0].clip_grad:g}", "ch04_conv_planned": str(len(grid)),
            "ch04_unclipped_planned": str(len(unclipped)),
            "ch04_conv_activations": ", ".join(name(a) for a in vit.CONVERGED_ACTIVATIONS),
            "ch04_conv_seeds": str(len({c.seed for c in grid})),
            "ch04_conv_stored": f"{len(records)} of {len(grid)}",
            "ch04_conv_to_run": Markdown(to_run("vit_converged")), "ch04_uconv_to_run": Markdown(to_run("vit_unclipped")),
            "ch04_conv_minutes": f"{min(minutes):.0f} to {max(minutes):.0f}" if minutes else "–",
            "ch04_conv_plateau": number_text(plateau(records), ".2f", "not measured")}


def converged_caption() -> str:
    """The converged tier's results table caption: the register's account of its scale."""
    return f"The converged tier against softmax: {claim('converged_scale_needed').scale}, the committed records"
