"""Chapter 05, "What N is under padding": the padded reading of N and x^3/14 against
x^3/sqrt(N) with N the valid keys on the tasks whose sequences vary in length, the padded rows
being the registered claim's; and how far the two readings' runs part where every token is real.

    padding_table(runs, deliver("n_under_padding")); readings_gap(runs)
"""
from __future__ import annotations

from typing import Optional

import pandas as pd

from ...book.deliver import styled
from ...experiments import lra as grids
from .page import (
    FIXED,
    PADDED,
    REGISTERED_NOTE,
    SMALL,
    VALID,
    Runs,
    comparison_cells,
    differences,
    margin,
    names,
    not_run_note,
    registered_rows,
    task_name,
    variant_name,
)


def padding_table(runs: Runs, padded_claim, diffs: Optional[pd.DataFrame] = None):
    """The padded reading and x^3/14 against x^3/sqrt(N) with N the valid keys, on the tasks whose
    sequences vary in length; the padded rows are the registered claim's."""
    if not runs.trains:
        return not_run_note(runs)
    if diffs is None:
        diffs = differences(runs, VALID, variants=[PADDED, FIXED], tasks=grids.VARIABLE_LENGTH_TASKS)
    registered = registered_rows(padded_claim, runs.preset)
    rows = []
    for _, d in diffs.iterrows():
        t, v = d["lra_task"], d["variant"]
        cells = comparison_cells(d, registered, PADDED, True)
        rows.append({"Task": task_name(t), "Variant": variant_name(v),
                     f"Minus {variant_name(VALID)}, points [95% CI]": cells.pop("difference"),
                     "Holm p": cells["Holm p"], f"TOST p (±{margin():g})": cells["TOST p"], "Verdict": cells["Verdict"]})
    pairs = sorted({int(n) for n in diffs["n_pairs"]}) or [0]
    what = f"{pairs[0]} seed pairs each" if len(pairs) == 1 else f"{pairs[0]} to {pairs[-1]} seed pairs"
    return styled(rows, runs.caption(f"Against {variant_name(VALID)} on the variable-length tasks, paired by seed "
                                     f"({what}); {REGISTERED_NOTE}")).set_table_styles(SMALL, overwrite=False)


def readings_gap(runs: Runs) -> dict[str, str]:
    """On the tasks whose sequences all have one length (both readings of N one computation): the
    tasks, and the largest difference (points) between a padded run and the valid run of its seed."""
    fixed = [t for t in runs.tasks if t not in grids.VARIABLE_LENGTH_TASKS]
    if not runs.trains or not fixed:
        return {"tasks": names(fixed), "gap": "not stored"}
    f = runs.final[runs.final["lra_task"].isin(fixed)]
    pairs = f.pivot_table(index=["lra_task", "seed"], columns="variant", values="last_test_acc")
    if not {PADDED, VALID} <= set(pairs.columns):
        return {"tasks": names(fixed), "gap": "not stored"}
    return {"tasks": names(fixed), "gap": f"{100 * (pairs[PADDED] - pairs[VALID]).abs().max():.2f}"}
