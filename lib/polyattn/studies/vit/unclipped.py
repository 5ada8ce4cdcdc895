"""Chapter 04's runs without gradient clipping, which the paper does not use: Table 1's recipe and
the converged tier's beside the same runs with clipping, each unclipped run of the converged tier,
and the register's comparisons with and without clipping side by side.

    unclipped_table(records, clipped, preset)    # mean ± sd without and with clipping, divergences
    unclipped_runs_table(records)                # each unclipped converged run: accuracy or divergence
    glue_values(unclipped_converged_numbers(records, planned))
    clipping_table(delivered)                    # each question of the converged tier, both ways
"""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ... import analysis
from ...book.deliver import styled
from ...claims.register import claim
from ...display import name
from .page import claim_rows

# --- Table 1's recipe without clipping --------------------------------------------------------------------


def unclipped_table(unclipped: list[dict], clipped: list[dict], preset: str, recipe: str = "Table 1's recipe"):
    """A recipe (Table 1's by default) without gradient clipping beside the same activations with
    it (mean ± sd over seeds, diverged runs counted apart)."""
    if not unclipped:
        return None
    ok = [r for r in unclipped if r["status"] == "ok"]
    final_u = analysis.final_accuracy(ok) if ok else pd.DataFrame(columns=["activation", "test_acc"])
    final_c = analysis.final_accuracy(clipped) if clipped else pd.DataFrame(columns=["activation", "test_acc"])

    def cell(values):
        values = 100 * values.astype(float)
        if not len(values):
            return "–"
        return f"{values.mean():.2f}" + (f" ± {values.std():.2f}" if len(values) > 1 else "")

    rows = []
    for act in dict.fromkeys(r["config"]["activation"] for r in unclipped):
        runs_ = [r for r in unclipped if r["config"]["activation"] == act]
        rows.append({"Activation": name(act), "Runs": len(runs_),
                     "Diverged": sum(r["status"] != "ok" for r in runs_),
                     "Without clipping (%)": cell(final_u[final_u["activation"] == act]["test_acc"]),
                     "With clipping (%)": cell(final_c[final_c["activation"] == act]["test_acc"])})
    return styled(rows, f"{recipe[:1].upper()}{recipe[1:]} without and with gradient clipping (final test accuracy, "
                        f"mean ± sd over seeds), preset {preset}; every other setting as with clipping")


# --- the converged tier without clipping ------------------------------------------------------------------


def unclipped_runs_table(records: list[dict]):
    """Each stored run of the converged tier without clipping: its final accuracy, or the step
    where it diverged."""
    if not records:
        return None
    rows = [{"Activation": name(r["config"]["activation"]), "Seed": r["seed"],
             "Final test accuracy (%)": (f"diverged at step {r['diverged_step']}" if r["status"] == "diverged"
                                         else f"{100 * r['metrics'][-1]['test_acc']:.2f}"),
             "Epochs": r["metrics"][-1]["epoch"] if r.get("metrics") else 0} for r in records]
    return styled(rows, "The converged tier without gradient clipping: the runs stored so far")


def unclipped_converged_numbers(records: list[dict], planned: int) -> dict[str, str]:
    """How many runs of the unclipped converged tier are stored, and how many diverged."""
    return {"ch04_uconv_stored": f"{len(records)} of {planned}",
            "ch04_uconv_diverged": str(sum(r["status"] == "diverged" for r in records))}


#: The converged tier's two questions: (row, (claim, comparison) with clipping, (claim, comparison) without).
CLIPPING_LAYOUT = (
    ("x³/√N − softmax", ("table_parity", "converged"), ("converged_unclipped", "cube_sqrt_n")),
    ("x³ − x³/√N", ("converged_scale_needed", "cube_vs_scaled_converged"), ("converged_unclipped", "cube_vs_scaled")),
)


def comparison_cell(delivered, comparison_id: str) -> str:
    """One comparison of a delivered claim in a cell: "−0.24 [−0.49, +0.01] points, equivalent
    (5 of 5 pairs)"; with fewer than two stored pairs, how many are stored."""
    row = claim_rows(delivered)[comparison_id]
    r = next(r for r in delivered.verdict.comparisons if r.comparison.id == comparison_id)
    if r.n < 2:
        return f"{row['Pairs']} pairs stored"
    return f"{row['Difference [95% CI]']}, {row['Result']} ({row['Pairs']} pairs)"


def clipping_table(delivered: Mapping[str, object], layout=CLIPPING_LAYOUT):
    """The converged tier's questions with and without gradient clipping, side by side: each cell
    the register's comparison (:func:`comparison_cell`); ``delivered``: claim id -> delivered claim."""
    rows = [{"Comparison": label, "With clipping at norm 1": comparison_cell(delivered[c0], i0),
             "Without clipping": comparison_cell(delivered[c1], i1)} for label, (c0, i0), (c1, i1) in layout]
    unclipped = claim(layout[0][2][0])
    scale = unclipped.scale.replace("no gradient clipping, ", "")
    return styled(rows, f"The converged tier with and without gradient clipping (the paper does not clip): the "
                        f"register's comparisons, margin ±{unclipped.margin:g}; {scale}")
