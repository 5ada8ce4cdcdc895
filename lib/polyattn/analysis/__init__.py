"""Statistics and tidy tables from result records (chapters 03 and 04).

Every function takes result records (see :mod:`polyattn.results`) or the frames built from
them and returns a pandas DataFrame, a dict or a sentence built from the numbers:

    frame = records_to_frame(records)          # one row per (run, epoch)               frames
    final = final_accuracy(records)            # one row per run; diverged runs kept     frames
    summary_table(final)                       # mean +- std over seeds, n diverged      tables
    paired_difference(final, "softmax")        # same-seed differences, t CI, tests      stats
    difference_verdict(row)                    # a sentence from the numbers             verdicts
    probe_frame(records); probe_curves(...)    # tidy probe rows; curves over steps      norms
    norms_vs_accuracy(records); spearman_ci(x, y)                                        norms
    best_constant(final_of_sweep)              # the best c of c*x^3 per N, slope        sweep
    compute_budget(records); grid_caption(...) # wall-clock, hardware, what a grid runs  captions

Units: accuracies in the input frames are fractions (as stored); the summaries, differences
and verdicts report percent and percentage points ("points").  A run that diverged keeps its
row with ``status == "diverged"`` and its ``diverged_step``; its final accuracy is NaN, so it
never enters a mean silently, and every summary counts it.
"""
from .captions import (OVERVIEW_FIELDS, budget_text, compute_budget, config_overview, deviations_table,
                       grid_caption)
from .frames import (EPOCH_COLUMNS, PERCENT, RUN_COLUMNS, activation_constant, activation_scale, final_accuracy,
                     records_to_frame, run_info)
from .norms import (NORM_METRICS, PROBE_ID_COLUMNS, correlation_table, correlation_verdict, early_middle_last,
                    norms_vs_accuracy, probe_curves, probe_frame, spearman_ci)
from .stats import WILCOXON_MIN_N, paired_difference, t_interval
from .sweep import BestConstant, best_constant, scale_verdict
from .tables import curve_frame, format_summary, per_seed_table, summary_table
from .verdicts import difference_verdict

__all__ = [
    "BestConstant", "EPOCH_COLUMNS", "NORM_METRICS", "OVERVIEW_FIELDS", "PERCENT", "PROBE_ID_COLUMNS", "RUN_COLUMNS",
    "WILCOXON_MIN_N", "activation_constant", "activation_scale", "best_constant", "budget_text", "compute_budget",
    "config_overview", "correlation_table", "correlation_verdict", "curve_frame", "deviations_table",
    "difference_verdict", "early_middle_last", "final_accuracy", "format_summary", "grid_caption",
    "norms_vs_accuracy", "paired_difference", "per_seed_table", "probe_curves", "probe_frame", "records_to_frame",
    "run_info", "scale_verdict", "spearman_ci", "summary_table", "t_interval",
]
