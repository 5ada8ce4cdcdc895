"""Chapter 05, "Accuracy per task and variant": the final test accuracy per task and variant, and
each variant minus softmax paired by seed, the rows of x^3/14 being the registered claim's.

    accuracy_table(runs)
    diffs = differences(runs)                        # polyattn.studies.lra.page.differences
    comparison_summary(runs, deliver("lra_fixed_scale"), diffs); family_size(diffs)
    comparison_table(runs, deliver("lra_fixed_scale", glue_it=False), diffs)
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ... import analysis
from ...book.deliver import styled
from .page import (
    FIXED,
    LABELS,
    REGISTERED_NOTE,
    SMALL,
    Runs,
    compact,
    comparison_cells,
    differences,
    not_run_note,
    registered_rows,
    task_name,
    variant_name,
)


def accuracy_table(runs: Runs):
    """Final test accuracy per variant (rows) and task (columns), mean over seeds [95% CI]."""
    if not runs.trains:
        return not_run_note(runs)
    def cell(x):
        m, lo, hi = analysis.t_interval(np.asarray(x, dtype=float) * 100)
        return f"{m:.1f}" if lo != lo else f"{m:.1f} [{lo:.1f}, {hi:.1f}]"

    f = runs.final
    rows = [{"Variant": variant_name(v), **{task_name(t): cell(f[(f["lra_task"] == t) & (f["variant"] == v)]["test_acc"])
                                            for t in runs.tasks}} for v in LABELS]
    return compact(styled(rows, runs.caption("Final test accuracy (%) per task and variant, mean over seeds [95% CI]")))


def comparison_table(runs: Runs, fixed_claim, diffs: Optional[pd.DataFrame] = None):
    """Each variant minus softmax, per task; the rows of x^3/14 are the registered claim's."""
    if not runs.trains:
        return not_run_note(runs)
    diffs = differences(runs) if diffs is None else diffs
    registered = registered_rows(fixed_claim, runs.preset)
    rows = []
    for _, d in diffs.iterrows():
        t, v = d["lra_task"], d["variant"]
        cells = comparison_cells(d, registered, FIXED, t in runs.informative)
        rows.append({"Task": task_name(t), "Variant": variant_name(v),
                     "Minus softmax, points [95% CI]": cells.pop("difference"), **cells})
    return styled(rows, runs.caption(f"Each variant minus softmax with the same seed; {REGISTERED_NOTE}")
                  ).set_table_styles(SMALL, overwrite=False)


def comparison_summary(runs: Runs, fixed_claim, diffs: Optional[pd.DataFrame] = None):
    """:func:`comparison_table` in brief: one row per variant, one column per task, each cell the
    difference from softmax [95% CI] over the verdict (° where softmax did not learn the task)."""
    if not runs.trains:
        return not_run_note(runs)
    diffs = differences(runs) if diffs is None else diffs
    registered = registered_rows(fixed_claim, runs.preset)
    cells: dict = {}
    for _, d in diffs.iterrows():
        t, v = d["lra_task"], d["variant"]
        row = comparison_cells(d, registered, FIXED, True)
        verdict = row["Verdict"].split(" (MDE")[0] + ("" if t in runs.informative else "°")
        cells.setdefault(v, {})[task_name(t)] = f"{row['difference']}<br>{verdict}"
    rows = [{"Variant": variant_name(v), **cells[v]} for v in LABELS if v in cells]
    return styled(rows, runs.caption("Each variant minus softmax with the same seed, in points of test accuracy "
                                     "[95% CI], and the verdict (Holm over the table; ° softmax did not learn the "
                                     f"task; {REGISTERED_NOTE})")).set_table_styles(SMALL, overwrite=False)


def family_size(diffs: pd.DataFrame) -> int:
    """How many comparisons Holm's correction ran over."""
    return int(diffs["family_size"].iloc[0]) if len(diffs) else 0
