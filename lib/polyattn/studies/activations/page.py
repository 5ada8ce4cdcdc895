"""Chapter 01's tables, figures and glued values (the activations side by side on random scores).

The computations are :mod:`polyattn.survey`'s; this module shapes what the page shows of them:

    seed = seed_of(seeds); setting_values(preset, seed)      # the sizes the page states
    properties_markdown(specs); property_counts(specs)       # the declared properties
    measured(preset, seed); measured_table(frame, preset); cubic_numbers(frame)
    weight_figure(preset)                                    # weight against score, one key
    norms(preset, seed); norm_figure(frame, preset)          # ||A||_F against N
    growth_table(growth); growth_numbers(growth, norms)      # its fitted exponents
    findings_table(preset, seed)                             # the closing summary

:func:`measured` and :func:`norms` keep their frames for the session, so that each section of
the page asks for them again rather than reading another section's variables.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np
import pandas as pd

from ... import activations, survey
from ...book.deliver import styled
from ...display import column, markdown_table, name
from ...formulas import math_formula

SPECS = activations.BOOK_SPECS
#: The paper's cubic and the fixed scale it ran on ImageNet.
CUBE, FIXED = "poly:p=3", "poly:p=3,c=1/14"
#: The sixth moment of a standard normal: E[s^6] = 15, so ||s^3/sqrt(N)||_F ~ sqrt(15 N).
SIXTH_MOMENT = 15
#: Labels of the figures (points): at least the book's minimum.
FONT = 9
#: The norm figure's panels: the groups of :data:`polyattn.survey.FIGURE_GROUPS`, the alternatives from
#: related work split by whether they act elementwise, so that no panel holds more than five lines
#: with softmax and the dashed sqrt(N).
NORM_GROUPS = (
    survey.FIGURE_GROUPS[0],
    survey.FIGURE_GROUPS[1],
    ("related work, elementwise", ("relu_n", "sigmoid")),
    ("related work, row-coupled", ("softpick", "ssmax:s=0.43", "poly_norm:p=2")),
)


def seed_of(seeds) -> int:
    """The page's seed: the first of ``seeds``, 0 when none is given."""
    return 0 if not seeds else int(list(seeds)[0])


def table_ns(preset: str) -> tuple[int, int]:
    """The two N of the measured table: the second smallest and the largest of the preset."""
    ns = survey.settings(preset)["ns"]
    return int(ns[1]), int(ns[-1])


def setting_values(preset: str, seed: int) -> dict[str, str]:
    """The sizes the page states: ``ns`` (the N, a list), ``trials`` (matrices per N), ``seed``
    and ``preset``."""
    cfg = survey.settings(preset)
    return {"ns": ", ".join(f"{n:,}" for n in cfg["ns"]), "trials": str(cfg["trials"]), "seed": str(seed),
            "preset": preset}


def yes_no(flag) -> str:
    return "yes" if flag else "no"


# --- declared properties ---------------------------------------------------------------------


def properties_markdown(specs: Sequence[str] = SPECS) -> str:
    """The declared properties of each activation as a Markdown table (its formulas in MyST maths,
    which an HTML table's cells would not typeset)."""
    rows = [[name(r["spec"]), math_formula(r["formula"]), yes_no(r["non-negative"]), yes_no(r["rows sum to 1"]),
             yes_no(r["elementwise"])] for r in activations.properties_table(specs)]
    return ("**Declared properties of each activation** ($s$: a score, $N$: the keys a row sees)\n\n"
            + markdown_table(["activation", "formula", "non-negative", "rows sum to 1", "elementwise"], rows))


def property_counts(specs: Sequence[str] = SPECS) -> dict[str, int]:
    """How many of ``specs`` there are (``activations``), give non-negative weights
    (``nonnegative``) and normalise their rows (``normalised``)."""
    rows = activations.properties_table(specs)
    return {"activations": len(rows), "nonnegative": sum(bool(r["non-negative"]) for r in rows),
            "normalised": sum(bool(r["rows sum to 1"]) for r in rows)}


# --- what each activation does to random scores ----------------------------------------------


@lru_cache(maxsize=8)
def measured(preset: str, seed: int = 0) -> pd.DataFrame:
    """:func:`polyattn.survey.measured_properties` of :data:`SPECS` at the two N of
    :func:`table_ns` (kept for the session; do not modify the frame)."""
    return survey.measured_properties(SPECS, table_ns(preset), trials=survey.settings(preset)["trials"], seed=seed)


def row_sum_cell(mean: float, std: float) -> str:
    """Mean ± sd of the row sums; a normalised activation's sums read "1, to machine precision"."""
    if std < 1e-6:
        return f"{mean:.3g}, to machine precision"
    return f"{mean:.3g} ± {std:.2g}"


def measured_table(frame: pd.DataFrame, preset: str):
    """:func:`measured` for people: share of negative weights, row sums and ||A||_F/sqrt(N)."""
    rows = [{"activation": name(r.activation), "N": int(r.N), column("frac_negative"): f"{r.frac_negative:.3f}",
             "row sum (mean ± sd)": row_sum_cell(r.row_sum_mean, r.row_sum_std),
             column("fro_over_sqrt_n"): f"{r.fro_over_sqrt_n:.3g}"} for r in frame.itertuples()]
    trials = survey.settings(preset)["trials"]
    return styled(rows, f"Mean over {trials} matrices of i.i.d. standard normal scores per N (preset {preset}); "
                        "N × N matrices, no mask")


def cubic_numbers(frame: pd.DataFrame, spec: str = CUBE) -> dict[str, str]:
    """The glued numbers of ``spec`` at the largest N of ``frame``: ``table_n``, ``frac_negative``
    (the share of negative weights) and ``row_sum_std`` (the standard deviation of its row sums)."""
    row = frame[frame["activation"] == spec].sort_values("N").iloc[-1]
    return {"table_n": f"{int(row['N']):,}", "frac_negative": f"{row['frac_negative']:.3f}",
            "row_sum_std": f"{row['row_sum_std']:.2f}"}


# --- weight against score --------------------------------------------------------------------


def _legend(ax, title: str | None = None, outside: bool = False, relabel=None):
    """The axes' legend with each activation named as the book's tables name it."""
    handles, labels = ax.get_legend_handles_labels()
    labels = [name(lbl) if lbl in activations.BOOK_SPECS else (relabel or {}).get(lbl, lbl) for lbl in labels]
    where = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0)) if outside else dict(loc="upper left")
    return ax.legend(handles, labels, title=title, frameon=False, fontsize=FONT, title_fontsize=FONT, **where)


def weight_figure(preset: str):
    """The weight one key receives against its score, the other N - 1 keys scoring zero: one row of
    panels per group of :data:`polyattn.survey.FIGURE_GROUPS` (softmax in grey where the group lacks
    it), one column per N of the preset's ``curve_ns``; symmetric-log weights."""
    import matplotlib.pyplot as plt

    from ... import plotting

    ns = survey.settings(preset)["curve_ns"]
    curves = survey.weight_curves(SPECS, ns)
    groups = survey.FIGURE_GROUPS
    fig, axes = plt.subplots(len(groups), len(ns), figsize=(3.1 * len(ns) + 2.6, 2.6 * len(groups)), sharex=True,
                             sharey=True, squeeze=False)
    for j, n in enumerate(ns):
        plotting.group_panels(curves[curves["N"] == n], "score", "weight", groups, axes[:, j], marker="")
        for i, ax in enumerate(axes[:, j]):
            ax.set_yscale("symlog", linthresh=1e-2)
            ax.set_title(f"N = {n:,}" if i == 0 else "")
            ax.set_xlabel("score" if i == len(groups) - 1 else "")
            ax.set_ylabel("weight" if j == 0 else "")
    for i, (title, _) in enumerate(groups):
        _legend(axes[i, -1], title=title, outside=True)
    plotting.stamp(fig, preset, "other N − 1 keys score 0", loc="lower left").set_fontsize(FONT)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


# --- how the Frobenius norm grows with N -----------------------------------------------------


@lru_cache(maxsize=8)
def norms(preset: str, seed: int = 0) -> pd.DataFrame:
    """:func:`polyattn.survey.fro_norm_vs_n` of :data:`SPECS` at every N of the preset (kept for
    the session; do not modify the frame)."""
    cfg = survey.settings(preset)
    return survey.fro_norm_vs_n(SPECS, cfg["ns"], trials=cfg["trials"], seed=seed)


def _plain_log_ticks(ax, xs):
    """Log axes labelled with plain numbers: every other N of ``xs`` below; at the side 1-2-5 steps,
    or powers of ten alone when the axis spans more than two and a half decades."""
    from matplotlib import ticker

    low, high = ax.get_ylim()
    steps = (1.0,) if high / low > 10 ** 2.5 else (1.0, 2.0, 5.0)
    ax.set_xticks(list(xs)[::2])
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.yaxis.set_major_locator(ticker.LogLocator(subs=steps))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())


def norm_figure(frame: pd.DataFrame, preset: str):
    """||A||_F against N on log-log axes, one panel per group of :data:`NORM_GROUPS` (softmax in grey
    where the group lacks it), with sqrt(N) dashed."""
    import matplotlib.pyplot as plt

    from ... import plotting

    trials = survey.settings(preset)["trials"]
    ns = np.array(sorted(frame["N"].unique()), dtype=float)
    fig, axes = plt.subplots(2, 2, figsize=(9.6, 7.6))
    plotting.group_panels(frame, "N", "fro_norm", NORM_GROUPS, axes, logx=True, logy=True)
    for ax in axes.ravel():
        plotting.reference_line(ax, ns, np.sqrt(ns), "√N (Thm 4.1)")
        _plain_log_ticks(ax, ns)
        ax.set_ylabel("‖A‖_F")
        _legend(ax)
    plotting.stamp(fig, preset, f"Gaussian scores, mean of {trials} matrices (band: one sd)",
                   loc="lower left").set_fontsize(FONT)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def growth_table(growth: pd.DataFrame, preset: str):
    """:func:`polyattn.survey.growth_exponents` for people."""
    rows = [{"activation": name(r.activation), "growth exponent in N": f"{r.exponent:.3f}",
             "largest ‖A‖_F/√N": f"{r.max_fro_over_sqrt_n:.3g}"} for r in growth.itertuples()]
    return styled(rows, "Fitted exponent of ‖A‖_F against N (least squares on log-log axes; 0.5 is √N growth) and "
                        f"the largest ratio to the bound √N (Gaussian scores, preset {preset})")


def growth_numbers(growth: pd.DataFrame, frame: pd.DataFrame) -> dict[str, str]:
    """The glued numbers of the norm section: softmax's largest ratio to sqrt(N) and exponent, the
    cubic's exponent and largest ratio, its mean ratio at the largest N beside sqrt(15), and the
    exponent of the fixed scale."""
    g = growth.set_index("activation")
    largest = int(frame["N"].max())
    at_largest = frame[(frame["activation"] == CUBE) & (frame["N"] == largest)]["fro_over_sqrt_n"].mean()
    return {"softmax_max_ratio": f"{g.loc['softmax', 'max_fro_over_sqrt_n']:.3f}",
            "softmax_exponent": f"{g.loc['softmax', 'exponent']:.2f}",
            "cube_exponent": f"{g.loc[CUBE, 'exponent']:.2f}", "cube_max_ratio": f"{g.loc[CUBE, 'max_fro_over_sqrt_n']:.2f}",
            "fixed_exponent": f"{g.loc[FIXED, 'exponent']:.2f}", "largest_n": f"{largest:,}",
            "cube_ratio_largest_n": f"{at_largest:.2f}", "sqrt_moment": f"{np.sqrt(SIXTH_MOMENT):.2f}"}


# --- what the chapter found ------------------------------------------------------------------


def findings_table(preset: str, seed: int = 0):
    """The chapter's findings, each beside the number that shows it (from :func:`measured` and
    :func:`norms`)."""
    frame = norms(preset, seed)
    numbers = growth_numbers(survey.growth_exponents(frame), frame)
    cubic = cubic_numbers(measured(preset, seed))
    rows = [
        {"finding": "‖softmax(S)‖_F/√N stays within the bound 1 of Theorem 4.1(1)",
         "measured": f"largest ratio {numbers['softmax_max_ratio']}"},
        {"finding": f"{name(CUBE)} grows like √N", "measured": f"exponent {numbers['cube_exponent']}"},
        {"finding": f"{name(CUBE)} exceeds √N by the constant √15 of the sixth Gaussian moment",
         "measured": f"ratio {numbers['cube_ratio_largest_n']} at N = {numbers['largest_n']} "
                     f"(√15 = {numbers['sqrt_moment']})"},
        {"finding": f"a fixed scale ({name(FIXED)}) no longer follows N", "measured": f"exponent {numbers['fixed_exponent']}"},
        {"finding": "odd polynomials give negative weights",
         "measured": f"share negative {cubic['frac_negative']} for {name(CUBE)} at N = {cubic['table_n']}"},
    ]
    return styled(rows, f"What chapter 01 measured on Gaussian scores (preset {preset}, seed {seed})")
