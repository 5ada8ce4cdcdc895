"""Verdict sentences built from the numbers of a comparison."""
from __future__ import annotations

from typing import Optional

def difference_verdict(row, name: Optional[str] = None, baseline: Optional[str] = None) -> str:
    """A sentence from one row of :func:`paired_difference`: matches within the CI, worse or
    better by how many points, or diverged; with the CI, n and the p-value."""
    index_name = getattr(row, "name", None)
    row = dict(row)
    if "activation" not in row and isinstance(index_name, str):   # a row of a frame indexed by activation
        row["activation"] = index_name
    name = name or row["activation"]
    baseline = baseline or row["baseline"]
    n, n_seeds = int(row["n_pairs"]), int(row["n_seeds"])
    level = f"{round(100 * float(row.get('confidence', 0.95)))}%"
    extra = ""
    if row["n_diverged"]:
        extra = f"; {name} diverged in {int(row['n_diverged'])} of {n_seeds} seeds"
    if row.get("n_baseline_diverged"):
        extra += f"; {baseline} diverged in {int(row['n_baseline_diverged'])} of {n_seeds} seeds"
    if n == 0:
        if row["n_diverged"]:
            return f"{name} diverged in {int(row['n_diverged'])} of {n_seeds} seeds, so it cannot be compared with {baseline}"
        return f"{name} and {baseline} share no seed that trained, so they cannot be compared"
    d = float(row["mean_diff"])
    if n == 1:
        return f"{name} differs from {baseline} by {d:+.2f} points on the one seed that trained (no interval){extra}"
    lo, hi = float(row["ci_low"]), float(row["ci_high"])
    p = row["t_p"]
    ptxt = f", paired t-test p = {p:.2g}" if p == p else ""
    stats_txt = f"{level} CI {lo:+.2f} to {hi:+.2f} points, n = {n} seeds{ptxt}"
    if lo <= 0 <= hi:
        return f"{name} matches {baseline} within the {level} CI: difference {d:+.2f} points ({stats_txt}){extra}"
    if hi < 0:
        return f"{name} is worse than {baseline} by {-d:.2f} points ({stats_txt}){extra}"
    return f"{name} is better than {baseline} by {d:.2f} points ({stats_txt}){extra}"
