"""Chapter 04's Table 2 analogue: softmax against x³/sqrt(N) in each model/recipe cell and pooled
over the cells, and the DeiT-style recipe at the converged tier's scale.

    table2_table(records, pooled, caption)       # each cell, then the pooled row (the register's)
    glue_values(table2_numbers(records))         # the F-test of whether the cells differ
    table2_figure(records, preset)               # each seed's final accuracy per cell
    glue_values(table2_converged_numbers())      # the converged recipe's images, drop path, seeds
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ... import analysis
from ...analysis.tables import interval_cell, recipe_label, registered_cell
from ...book.deliver import styled
from ...book.views import SMALL, with_note
from ...display import name
from .page import DESCRIPTION_NOTE, FONT, margin, number_text, to_run

_CELLS = ["model", "augment"]


def table2_cells(records: list[dict]) -> pd.DataFrame:
    """x³/sqrt(N) against softmax in each model/recipe cell, paired by seed."""
    final = analysis.final_accuracy(records)
    return analysis.paired_difference(final, baseline="softmax", by=_CELLS, margin=margin())


def table2_pooled(records: list[dict]) -> pd.DataFrame:
    """The same comparison pooled over the cells (cell fixed effects), with the F-test of whether they differ."""
    final = analysis.final_accuracy(records)
    return analysis.pooled_difference(final, baseline="softmax", cells=_CELLS, margin=margin())


def table2_table(records: list[dict], claims: Optional[dict] = None, caption_text: str = ""):
    """Each model/recipe cell's final test accuracy per activation (mean ± sd over seeds) and
    x³/sqrt(N) − softmax paired by seed (description), then the difference pooled over the cells:
    the register's numbers and result where it makes that comparison (``claims``, pooled rows)."""
    if not records:
        return None
    claims = claims or {}
    final = analysis.final_accuracy(records)
    summary = analysis.summary_table(final, by=_CELLS + ["activation"])
    diffs = {(r["model"], r["augment"]): r for r in table2_cells(records).to_dict("records")}
    delta = "Δ, points [95% CI]"
    rows = {}
    for s in summary.to_dict("records"):
        cell = (s["model"], s["augment"])
        row = rows.setdefault(cell, {"Model, recipe": recipe_label(*cell)})
        acc = number_text(s["mean"], ".2f", "–") + ("" if s["std"] != s["std"] else f" ± {s['std']:.2f}")
        row[f"{name(s['activation'])} (%)"] = acc + (f" ({s['n_diverged']} diverged)" if s["n_diverged"] else "")
    acc_columns = list(dict.fromkeys(k for row in rows.values() for k in row if k != "Model, recipe"))
    out = []
    for cell, row in rows.items():
        d = diffs.get(cell)
        out.append({**row, delta: interval_cell(d["mean_diff"], d["ci_low"], d["ci_high"], missing="not comparable")
                    if d else "–", "Seed pairs": str(int(d["n_pairs"])) if d else "", "Register's result": ""})
    for r in table2_pooled(records).to_dict("records"):
        reg = claims.get(r["activation"])
        out.append({"Model, recipe": f"pooled over {int(r['n_cells'])} cells", **{c: "" for c in acc_columns},
                    delta: registered_cell(reg) if reg else interval_cell(r["mean_diff"], r["ci_low"], r["ci_high"],
                                                                          missing="not comparable"),
                    "Seed pairs": reg["Pairs"] if reg else str(int(r["n_pairs"])),
                    "Register's result": reg["Result"] if reg else ""})
    if not any(r["Register's result"] for r in out):
        for r in out:
            del r["Register's result"]
    note = DESCRIPTION_NOTE if claims else "every difference is description, not a test"
    caption = with_note(caption_text, "final test accuracy, mean ± sd over seeds; Δ: x³/√N − softmax, paired by seed "
                                      f"within each cell, pooled with cell fixed effects; {note}")
    return styled(out, caption).set_table_styles(SMALL, overwrite=False)


def table2_numbers(records: list[dict]) -> dict[str, str]:
    """The F-test p of the cells' disagreement."""
    if not records:
        return {"ch04_t2_f_p": "not run"}
    pooled = table2_pooled(records)
    return {"ch04_t2_f_p": number_text(pooled["heterogeneity_p"].iloc[0] if len(pooled) else None, ".2g")}


def table2_figure(records: list[dict], preset: str):
    """Each seed's final accuracy per model/recipe cell and activation, with mean ± sd."""
    import matplotlib.pyplot as plt

    from ... import analysis, plotting

    if not records:
        return None
    final = analysis.final_accuracy(records)
    cells = list(dict.fromkeys(zip(final["model"], final["augment"])))
    acts = list(dict.fromkeys(final["activation"]))
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    width = 0.8 / len(acts)
    for j, act in enumerate(acts):
        color = plotting.activation_color(act)
        for i, (model, aug) in enumerate(cells):
            sub = final[(final["model"] == model) & (final["augment"] == aug) & (final["activation"] == act)]
            x = i + (j - (len(acts) - 1) / 2) * width
            vals = sub["test_acc"].to_numpy(dtype=float) * analysis.PERCENT
            ok = vals[np.isfinite(vals)]
            ax.scatter(np.full(len(ok), x), ok, color=color, s=14, alpha=0.6)
            if len(ok):
                ax.errorbar(x, ok.mean(), yerr=ok.std(ddof=1) if len(ok) > 1 else 0, fmt="o", color=color,
                            capsize=4, label=name(act) if i == 0 else None)
    ax.set_xticks(range(len(cells)))
    ax.set_xticklabels([recipe_label(m, a).replace(", ", "\n") for m, a in cells], fontsize=FONT + 1)
    ax.set_ylabel("final test accuracy (%)")
    ax.legend(frameon=False, fontsize=FONT)
    plotting.stamp(ax, preset, "dots: seeds; bars: mean ± sd").set_fontsize(FONT)
    fig.tight_layout()
    return fig


def table2_converged_numbers() -> dict[str, object]:
    """The DeiT-style recipe at the converged tier's scale: Table 2's training images, the drop
    path, the seeds, and the runs still to run."""
    from IPython.display import Markdown

    from ...experiments import vit

    grid = vit.table2_converged("book")          # the register reads the book preset's records
    return {"ch04_t2_images": f"{vit.table2('book')[0].train_subset:,}", "ch04_t2c_drop_path": f"{grid[0].drop_path:g}",
            "ch04_t2c_seeds": str(len({c.seed for c in grid})),
            "ch04_t2c_to_run": Markdown(to_run("vit_table2_converged"))}
