"""Chapter 08's section on how the costs grow with N: time and peak memory against N, one line a
configuration of :data:`polyattn.studies.costs.page.FIGURE_LINES`."""
from __future__ import annotations

import pandas as pd

from .page import FIGURE_LINES, THREADS, configuration

PATH_STYLE = {"sdpa": ("-", "s"), "blocked": ("-", "o"), "compiled": ("-.", "D"), "linear": ("--", "^"),
              "naive": (":", "x")}


def scaling_figure(df: pd.DataFrame, preset: str):
    """Time and peak memory against N on log-log axes: SDPA, the cubic on each quadratic path and
    the linear forms of x and x² (at most six lines a panel)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter, NullLocator

    from ... import plotting

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for spec, path in FIGURE_LINES:
        sub = df[(df["activation"] == spec) & (df["path"] == path)].sort_values("n")
        if sub.empty:
            continue
        style, marker = PATH_STYLE[path]
        color = "black" if path == "sdpa" else plotting.activation_color(spec)
        for ax, col in zip(axes, ("time_ms", "peak_mb")):
            ax.plot(sub["n"], sub[col], color=color, linestyle=style, marker=marker, markersize=5, linewidth=1.4,
                    label=configuration(spec, path))
    ns = sorted(df["n"].unique())
    plain = FuncFormatter(lambda y, _: f"{y:g}")
    for ax, label, title in zip(axes, ("forward + backward time (ms)", "peak memory (MiB)"), ("time", "peak memory")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(ns, [f"{n:,}" for n in ns])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("sequence length N", fontsize=11)
        ax.set_ylabel(label, fontsize=11)
        ax.tick_params(labelsize=10)
        ax.set_title(title, fontsize=12)
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=10)
    plotting.stamp(axes[0], preset, f"{THREADS} thread", loc="upper left").set_fontsize(9)
    fig.tight_layout()
    return fig
