"""Chapter 07's section on attention sinks: the first-token weight and share, the share of
negative weights and the row sums per variant, and the sink rate with raw and normalised weights.

    sink_figure(lm)                    # per variant, the mean over seeds and each seed
    glue_values(sink_numbers(lm))      # softmax's sinks against the other variants'
    glue_folded("ch07_fold_sinks", sink_table(lm))

``lm`` is :func:`polyattn.studies.causal.page.charlm_runs` of the page; the register's comparisons of
the section in one phrase: :func:`polyattn.studies.causal.page.register_summary`.
"""
from __future__ import annotations

import math

import numpy as np

from ...analysis import causal as ca
from ...analysis.tables import number_cell
from ...book.deliver import styled
from .page import Runs, compact, scale_caption, show

SINK_TITLES = {"alpha_mean": "first-token\nweight α", "share_mean": "first-token\nshare",
               "negative_fraction": "share of\nnegative weights", "row_sum_mean": "mean\nrow sum"}


def sink_figure(lm: Runs):
    """Per variant the mean over seeds (bars) and each seed (dots) of the first-token weight and share
    (against the threshold, dotted), the fraction of negative weights and the mean row sum."""
    if not lm:
        return None
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from ... import sinks as sink_metrics
    from ...plotting import stamp
    from ...tasks.charlm import SINK_WINDOWS

    final = lm.frame
    table = ca.sink_table(final)
    colours = ca.variant_colors()
    fig, axes = plt.subplots(1, 4, figsize=(8, 0.24 * len(table) + 1.5), sharey=True, squeeze=False)
    ys = np.arange(len(table))[::-1]
    for ax, name in zip(axes.flat, SINK_TITLES):
        ax.barh(ys, table[f"{name}_mean"].fillna(0), color=[colours[v] for v in table["variant"]], alpha=0.75)
        for y, variant in zip(ys, table["variant"]):
            vals = final.loc[final["activation"] == variant, name].dropna()
            ax.scatter(vals, np.full(len(vals), y), color="black", s=8, zorder=3)
        if name in ("alpha_mean", "share_mean"):
            ax.axvline(sink_metrics.SINK_EPS, color="grey", ls=":", lw=1)
        ax.axvline(0, color="grey", lw=0.6)
        ax.set_title(SINK_TITLES[name], fontsize=10)
        ax.xaxis.set_major_locator(MaxNLocator(3))
        ax.tick_params(labelsize=9)
    axes[0, 0].set_yticks(ys, [show(v) for v in table["variant"]])
    stamp(fig, lm.preset, f"bars: mean over seeds, dots: seeds; {SINK_WINDOWS} test windows of "
                          f"{sink_metrics.SINK_WINDOW} characters")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def sink_table(lm: Runs):
    """Per variant: whether its rows sum to one and the sink rate with raw weights and with the
    normalised share (mean over seeds, largest seed)."""
    if not lm:
        return None
    table = ca.sink_table(lm.frame)
    final = lm.frame
    rows = []
    for _, r in table.iterrows():
        g = final[final["activation"] == r["variant"]]
        rows.append({"variant": show(r["variant"]), "rows sum to one": "yes" if r["rows_sum_to_one"] else "no",
                     "sink rate, raw (max)": f"{number_cell(r['sink_rate_mean'], '.2f')} "
                                             f"({number_cell(g['sink_rate'].max(), '.2f')})",
                     "sink rate, normalised (max)": f"{number_cell(r['sink_rate_normalised_mean'], '.2f')} "
                                                    f"({number_cell(g['sink_rate_normalised'].max(), '.2f')})"})
    return compact(styled(rows, f"Sink rate: share of layer-head pairs whose mean first-token weight (raw) or "
                                f"share (normalised) exceeds the threshold, mean over seeds (largest seed). "
                                f"{scale_caption(lm)}"))


def sink_numbers(lm: Runs) -> dict:
    """Softmax's sink rate and first-token weight, its seeds with a sink, and the mean sink rate of the
    variants whose rows sum to one and of those whose rows need not; the model's layers × heads."""
    from ...models.char_lm import LM_SIZES

    size = LM_SIZES[lm.grid[0].model] if lm.grid else None
    design = {"ch07_layer_heads": f"{size['depth']} × {size['heads']}" if size else lm.missing}
    keys = ("ch07_softmax_sink_rate", "ch07_softmax_alpha", "ch07_softmax_sink_seeds", "ch07_sum_one_rate",
            "ch07_free_rate", "ch07_largest_rate")
    if not lm:
        return {**design, **dict.fromkeys(keys, lm.missing)}
    final = lm.frame
    table = ca.sink_table(final).set_index("variant")
    by_group = table.groupby("rows_sum_to_one")["sink_rate_mean"].mean()
    soft = final[final["activation"] == "softmax"]["sink_rate"].dropna()
    top = final.loc[final["sink_rate"].idxmax()] if final["sink_rate"].notna().any() else None
    return {**design, "ch07_softmax_sink_rate": number_cell(table.loc["softmax", "sink_rate_mean"], ".2f"),
            "ch07_softmax_alpha": number_cell(table.loc["softmax", "alpha_mean_mean"], ".2f"),
            "ch07_softmax_sink_seeds": f"{int((soft > 0).sum())} of {len(soft)}",
            "ch07_sum_one_rate": number_cell(by_group.get(True, math.nan), ".2f", missing="none"),
            "ch07_free_rate": number_cell(by_group.get(False, math.nan), ".2f", missing="none"),
            "ch07_largest_rate": ("not measured" if top is None else
                                  f"{number_cell(top['sink_rate'], '.2f')} ({show(top['variant'])}, seed "
                                  f"{int(top['seed'])})")}
