"""Chapter 04's opening sections: the margin, level and power by which its comparisons are judged,
and what the paper ran beside what the book runs.

    glue_values(judging_numbers())                           # the margin, the level, the power
    glue_values(setup_numbers())                             # Table 1's length, 1/14 against 1/sqrt(N)
    glue_folded("ch04_fold_deviations", deviations_table())  # every setting of the paper beside the book's
    glue_folded("ch04_fold_paper", paper_table())            # the paper's configurations, not run

:func:`polyattn.studies.vit.page.glue_values` and :func:`polyattn.studies.vit.page.glue_folded` glue them.
"""
from __future__ import annotations

import math

from ... import analysis
from ...book.deliver import styled
from ...book.views import SMALL
from ...display import name
from .page import margin


def judging_numbers() -> dict[str, str]:
    """The margin, level and power the prose of "How the comparisons are judged" states."""
    m = margin()
    return {"ch04_margin": f"±{m:g} accuracy point{'' if m == 1 else 's'}", "ch04_alpha": f"{analysis.ALPHA:g}",
            "ch04_power": f"{analysis.POWER:g}"}


def paper_table():
    """The paper's ViT configurations (listed, not run)."""
    from ...experiments import vit

    rows = [{"Dataset": r["dataset"].replace("_", " "), "Model": r["model"], "Tokens": r["tokens"],
             "Activation": name(r["activation"]), "Epochs": r["epochs"], "Batch": r["batch"],
             "Recipe": "DeiT" if r["recipe"] == "deit" else r["recipe"]} for r in vit.paper_table()]
    return styled(rows, "The paper's configurations (not run here)").set_table_styles(SMALL, overwrite=False)


def deviations_table():
    """What the paper ran against what the book preset runs: the Table 1 and 2 analogues and the
    converged tiers (all the training images, with and without clipping, and the DeiT-style recipe)."""
    from ...experiments import vit

    ours = vit.table1("book") + vit.table2("book") + vit.converged("book") + vit.unclipped("book") \
        + vit.table2_converged("book")
    deviations = analysis.deviations_table(ours, vit.paper_configs())

    def shown(row, key):
        # specs hold no spaces, so ", " separates the activations of a cell
        return ", ".join(name(a) for a in row[key].split(", ")) if row[""] == "activations" else row[key]

    return styled([{"": r[""], "paper": shown(r, "paper"), "this book": shown(r, "this book")}
                   for r in deviations.to_dict("records")],
                  "What the paper ran and what this book runs: the Table 1 and 2 analogues and the converged tiers")


def setup_numbers() -> dict[str, object]:
    """Table 1's sequence length and how the paper's 1/14 compares with its 1/sqrt(N)."""
    from ...experiments import vit

    n = vit.table1("book")[0].seq_len
    return {"ch04_t1_seq_len": n, "ch04_fixed_ratio": f"{math.sqrt(n) / 14:.2f}",
            "ch04_n_seeds": len(vit.TABLE1_SEEDS["book"])}
