"""Statistics and tidy tables from result records (chapters 03 and 04).

Every function takes result records (see :mod:`polyattn.results`) or the frames built from
them and returns a pandas DataFrame, a dict or a sentence built from the numbers:

    frame = records_to_frame(records)          # one row per (run, epoch)                  frames
    final = final_metrics(records)             # one row per run; diverged runs kept        frames
    summary_table(final)                       # mean +- std over seeds, rank, n diverged   tables
    paired_difference(final, "softmax", margin=1)  # t CI, Holm, TOST, MDE per comparison   stats
    pooled_difference(final, cells=[...])      # one comparison pooled over cells           stats
    comparison_verdict(row)                    # Verdict: equivalent/better/worse/...       verdicts
    probe_frame(records); probe_curves(...)    # tidy probe rows; curves over steps         norms
    norms_vs_accuracy(records); correlation_table(...)  # run-level and within-activation   norms
    best_constant(final_of_sweep)              # the best c of c*x^3 per N, slope           sweep
    compute_budget(records); grid_caption(...) # wall-clock, hardware, what a grid runs     captions

Metrics: a record declares its metrics (``record["metrics_spec"]``, see
:class:`polyattn.metric_specs.Metric`); records without declarations are image classification
(test accuracy, higher is better, stored as a fraction and shown in per cent).  Frames carry
the declarations, and every statistic takes a ``metric`` (a Metric or its name; default the
primary metric), so units and the meaning of "better" follow the metric: differences of
accuracy are in percentage points ("points"), and for bits per character lower is better.

A run that diverged keeps its row with ``status == "diverged"`` and its ``diverged_step``; its
final metric is NaN, so it never enters a mean silently, and every summary counts it.

The analysis reads what a record carries (its config, metrics, probes and provenance) and the
claim register; it names runs with :mod:`polyattn.labels` and imports no grid, task, model or
training code (a test parses every module here to keep it so).
"""
from .captions import OVERVIEW_FIELDS, budget_text, compute_budget, config_overview, deviations_table, grid_caption
from .frames import (
                       DEFAULT_TASK,
                       EPOCH_COLUMNS,
                       PERCENT,
                       RUN_COLUMNS,
                       activation_constant,
                       activation_scale,
                       final_accuracy,
                       final_metrics,
                       image_seq_len,
                       record_seq_len,
                       record_seq_lens,
                       records_to_frame,
                       run_info,
)
from .metrics import IMAGE_METRICS, KNOWN_METRICS, declared_metrics, diff_unit, record_metrics, resolve_metric, value_label
from .norms import (
                       NORM_METRICS,
                       PROBE_ID_COLUMNS,
                       correlation_table,
                       early_middle_last,
                       norms_vs_accuracy,
                       probe_curves,
                       probe_frame,
                       spearman_ci,
                       within_spearman,
)
from .stats import (
                       ALPHA,
                       POWER,
                       WILCOXON_MIN_N,
                       holm,
                       minimal_detectable_effect,
                       paired_difference,
                       pooled_difference,
                       t_interval,
                       tost,
)
from .sweep import BestConstant, best_constant, best_constant_rows, best_constant_table
from .tables import (
                       bracket_cell,
                       correlation_rows,
                       difference_rows,
                       format_summary,
                       interval_cell,
                       number_cell,
                       per_seed_rows,
                       per_seed_table,
                       recipe_label,
                       registered_cell,
                       summary_rows,
                       summary_table,
                       verdict_cell,
)
from .verdicts import (
                       BOOK_FORMS,
                       FORMS,
                       Verdict,
                       comparison_verdict,
                       verdict_frame,
)

__all__ = [
    "ALPHA", "BOOK_FORMS", "BestConstant", "DEFAULT_TASK", "EPOCH_COLUMNS", "FORMS", "IMAGE_METRICS",
    "KNOWN_METRICS", "NORM_METRICS", "OVERVIEW_FIELDS", "PERCENT", "POWER", "PROBE_ID_COLUMNS", "RUN_COLUMNS",
    "Verdict", "WILCOXON_MIN_N", "activation_constant", "activation_scale", "best_constant",
    "best_constant_rows", "best_constant_table", "budget_text", "comparison_verdict", "compute_budget",
    "config_overview", "correlation_table", "declared_metrics",
    "bracket_cell", "correlation_rows", "deviations_table", "diff_unit", "difference_rows",
    "early_middle_last", "final_accuracy",
    "final_metrics", "format_summary", "grid_caption", "holm", "image_seq_len", "interval_cell",
    "minimal_detectable_effect", "norms_vs_accuracy", "number_cell", "paired_difference", "per_seed_rows",
    "per_seed_table", "pooled_difference", "probe_curves", "probe_frame", "recipe_label", "record_metrics",
    "record_seq_len", "record_seq_lens", "records_to_frame", "registered_cell", "resolve_metric", "run_info",
    "spearman_ci", "summary_rows", "summary_table", "t_interval", "tost", "value_label",
    "verdict_cell", "verdict_frame", "within_spearman",
]
