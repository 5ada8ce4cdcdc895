"""Chapter 05, "Did softmax learn each task?": softmax's test accuracy per task beside the task's
chance level, and what the runs cost.

    learned_table(runs); learned_values(runs)
"""
from __future__ import annotations

from ... import analysis
from ...book.deliver import styled
from .page import Runs, compact, interval_text, names, not_run_note, plural, task_name


def learned_table(runs: Runs):
    """Softmax's test accuracy per task beside the task's chance level, and whether it learned it."""
    if not runs.trains:
        return not_run_note(runs)
    rows = [{"Task": task_name(t), "Seeds": int(r["n_runs"]),
             "Softmax test accuracy, % [95% CI]": interval_text(r["mean"], r["ci_low"], r["ci_high"]),
             "Chance (%)": f"{100 * r['chance']:.1f}", "Learned": "yes" if r["learned"] else "no"}
            for t, r in runs.learned.iterrows()]
    return compact(styled(rows, runs.caption("Did softmax learn each task? Chance: the majority class")))


def learned_values(runs: Runs) -> dict[str, str]:
    """The tasks softmax learned and did not, and what the runs cost (runs, hours, longest run in
    minutes, torch threads per run, hardware)."""
    if not runs.trains:
        return {k: runs.not_run for k in ("informative", "uninformative", "n_records", "hours", "longest", "threads",
                                          "hardware")}
    budget = analysis.compute_budget(runs.records)
    threads = budget["torch_threads"]
    return {"informative": names(runs.informative), "uninformative": names(runs.uninformative),
            "n_records": f"{budget['n_runs']:,}", "hours": f"{budget['wall_hours']:.1f}",
            "longest": f"{budget['wall_s_max'] / 60:.0f}",
            "threads": plural(int(threads[0]), "torch thread") if len(threads) == 1 else f"{', '.join(threads)} torch threads",
            "hardware": ", ".join(budget["gpu"] or budget["cpu"]) or "unknown hardware"}
