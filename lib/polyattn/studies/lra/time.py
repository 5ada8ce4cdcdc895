"""Chapter 05, "Training time": the mean wall-clock seconds of a run per task and variant, and
the runs' summed time.

    wall_table(runs); wall_values(runs)
"""
from __future__ import annotations

from ...analysis import lra as lra_analysis
from ...book.deliver import styled
from .page import LABELS, Runs, not_run_note, plural, task_name, variant_name


def wall_table(runs: Runs):
    """Mean wall-clock seconds of a run per variant (rows) and task (columns)."""
    if not runs.trains:
        return not_run_note(runs)
    wall = lra_analysis.wall_table(runs.final, runs.tasks, LABELS)
    rows = [{"Variant": variant_name(v), **{task_name(t): f"{wall.loc[t, v]:.0f}" for t in wall.index}}
            for v in wall.columns]
    threads = sorted({int(c.threads) for c in runs.configs if c.threads})
    per_run = f", {plural(threads[0], 'thread')} per run" if len(threads) == 1 else ""
    return styled(rows, runs.caption(f"Mean wall-clock seconds per run{per_run}"))


def wall_values(runs: Runs) -> dict[str, str]:
    """The summed wall-clock time of the runs, in hours."""
    if not runs.trains:
        return {"hours": runs.not_run}
    return {"hours": f"{float(runs.final['wall_s'].sum()) / 3600:.1f}"}
