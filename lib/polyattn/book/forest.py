"""The answer's forest plot: one row per row of the answer table, named and ordered as the table
is, each with its deciding comparison's difference and 95% interval in the comparison's own unit.

One panel per unit (accuracy points, AP, bits/char, log10 error), side by side and sharing the
rows, so that every margin is drawn (a shaded band per row, its own width) and labelled in its
unit; an axis at the top and at the bottom of every panel; an interval that runs past the frame
ends in an arrow with its estimate written beside it; a row whose gate or check failed, or that
has nothing testable yet, is drawn grey; every colour is in the legend.

Drawn as SVG at the book's column width (:data:`WIDTH_PX`), with text kept as text so that its
size is its size on the page (:data:`MIN_PT` at the least).
"""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

from ..claims.report import RESULT_COLOURS, read_as_counts

#: The width the figure is drawn at, in CSS pixels (96 to the inch): the figures' width
#: (:data:`polyattn.plotting.COLUMN_PX`), a little inside the book's text column.
WIDTH_PX = 752
#: The smallest type in the figure, in points at that width.
MIN_PT = 9.0
#: Grey for rows that test nothing (a gate or a check failed, no pairs yet).
GREY = "#a6a6a6"
BAND = "#1b9e77"
#: Colours for results the rule may add beyond those of RESULT_COLOURS, in order of first use.
MORE_COLOURS = ("#a6761d", "#e6ab02", "#66a61e", "#386cb0", "#8c510a")


#: Claim names are wrapped to this many characters so the names fit left of the panels in the column.
LABEL_CHARS = 34

def result_colours(rows) -> dict[str, str]:
    """A colour for each result of the rows' deciding comparisons: the book's result colours, and a
    colour of its own for a result they do not name."""

    out = dict(RESULT_COLOURS)
    extra = iter(MORE_COLOURS)
    for row in rows:
        if row.key is not None and row.key.result not in out:
            out[row.key.result] = next(extra, "#7f7f7f")
    return out


def panel_unit(r) -> str:
    """The unit a comparison's panel is drawn in: AP for average precision, else its metric's unit."""
    metric = str(getattr(r.comparison, "metric", ""))
    if metric.endswith("_ap") or metric == "ap" or metric.startswith("ap_"):
        return "AP"
    return r.unit or "points"


def _direction(rows, unit) -> str:
    """Which way is better in a panel: "better →" where higher is better, "worse →" where lower is
    (a panel that mixes them says neither)."""
    ways = {r.key.higher_is_better for r in rows if r.key is not None and panel_unit(r.key) == unit}
    if ways == {True}:
        return "better →"
    if ways == {False}:
        return "worse →"
    return "difference"


def _ticks(lim: float) -> list[float]:
    """−t, 0, +t for a panel of half-width ``lim``, t a round number near 0.6 lim (a narrow panel
    labels ±t only; its zero is the black line)."""
    step = 10 ** math.floor(math.log10(0.6 * lim))
    t = max(m * step for m in (1, 2, 5) if m * step <= 0.75 * lim)
    return [-t, 0.0, t]


def _limit(keys) -> float:
    """A panel's half-width: at least twice its widest margin, at most five times it, wide enough
    for the intervals in between."""
    margins = [r.margin for r in keys if math.isfinite(r.margin)] or [1.0]
    widest = max(margins)
    ends = [abs(x) for r in keys for x in (r.ci_low, r.ci_high, r.mean) if math.isfinite(x)]
    return max(2.0 * widest, min(max(ends, default=0.0) * 1.08, 5.0 * widest))


def forest_figure(rows):
    """The figure for answer rows (:func:`polyattn.book.answer_rows.answer_rows`)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch


    units = list(dict.fromkeys(panel_unit(r.key) for r in rows if r.key is not None)) or ["points"]
    counts = [sum(1 for r in rows if r.key is not None and panel_unit(r.key) == u) for u in units]
    widths = [1.8 if c == max(counts) else 1.0 for c in counts]
    n = len(rows)
    labels = [textwrap.fill(row.claim, LABEL_CHARS) for row in rows]
    height = sum(0.16 + 0.14 * label.count("\n") for label in labels) + 0.1 * n + 2.3
    with plt.rc_context({"svg.fonttype": "none", "font.size": MIN_PT, "svg.hashsalt": "polyattn-forest"}):
        fig, axes = plt.subplots(1, len(units), figsize=(WIDTH_PX / 96, height), sharey=True,
                                 gridspec_kw={"width_ratios": widths, "wspace": 0.12})
    axes = list(axes) if len(units) > 1 else [axes]
    colours = result_colours(rows)
    used = set()
    greyed_any = False
    for ax, unit in zip(axes, units):
        keys = [r.key for r in rows if r.key is not None and panel_unit(r.key) == unit and not read_as_counts(r.key)]
        lim = _limit(keys)
        for i, row in enumerate(rows):
            y = n - 1 - i
            if row.greyed:
                ax.axhspan(y - 0.5, y + 0.5, color="#f0f0f0", lw=0, zorder=0)
            r = row.key
            if r is None or panel_unit(r) != unit:
                continue
            colour = GREY if row.greyed else colours[r.result]
            greyed_any |= row.greyed
            if not row.greyed:
                used.add(r.result)
            if math.isfinite(r.margin):
                ax.add_patch(plt.Rectangle((-r.margin, y - 0.38), 2 * r.margin, 0.76, color=BAND, alpha=0.13,
                                           lw=0, zorder=1))
            if read_as_counts(r):
                kc, kb, k = r.learned_counts
                ax.text(0, y, f"{kc} of {k} vs {kb} of {k} learned", ha="center", va="center", color=colour,
                        fontsize=MIN_PT, zorder=3)
                continue
            lo, hi = sorted((r.ci_low, r.ci_high))
            if not (math.isfinite(lo) and math.isfinite(hi)):
                continue
            a, b = max(lo, -lim), min(hi, lim)
            ax.plot([a, b], [y, y], color=colour, lw=2.0, solid_capstyle="butt", zorder=3)
            if lo < -lim:
                ax.plot([-lim], [y], marker="<", color=colour, ms=7, zorder=4, clip_on=False)
            if hi > lim:
                ax.plot([lim], [y], marker=">", color=colour, ms=7, zorder=4, clip_on=False)
            if -lim <= r.mean <= lim:
                ax.plot([r.mean], [y], "o", color=colour, ms=5, zorder=4)
            else:  # the estimate itself is beyond the frame: write it beside the arrow
                edge = -lim if r.mean < 0 else lim
                ax.text(edge * 0.9, y + 0.05, f"{r.mean:+.3g}".replace("-", "−"), ha="left" if edge < 0 else "right",
                        va="bottom", color=colour, fontsize=MIN_PT, zorder=4)
        ax.set_xlim(-lim, lim)
        ax.axvline(0, color="black", lw=0.8, zorder=2)
        ax.tick_params(axis="x", labelsize=MIN_PT, top=True, labeltop=True, bottom=True, labelbottom=True)
        ax.tick_params(axis="y", length=0)
        ax.set_xticks(_ticks(lim)[::2] if len(units) > 1 and ax is not axes[counts.index(max(counts))]
                      else [t for t in _ticks(lim)[:1] + [-lim / 2, 0, lim / 2] + _ticks(lim)[2:]
                            if abs(t) < lim])
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda x, _: f"{x:+.3g}".replace("-", "−") if x else "0"))
        margins = sorted({r.margin for r in keys + [row.key for row in rows if row.key is not None
                                                    and panel_unit(row.key) == unit]
                          if math.isfinite(r.margin)})
        label = unit if unit != "log10" else "log10 error"
        ax.set_title(label, fontsize=MIN_PT, pad=22)
        ax.set_xlabel(", ".join(dict.fromkeys(f"±{m:.3g}" for m in margins)) + f"\n{_direction(rows, unit)}", fontsize=MIN_PT)
        ax.grid(axis="x", color="#e6e6e6", lw=0.6, zorder=0)
    axes[0].set_ylim(-0.6, n - 0.4)
    axes[0].set_yticks(range(n), list(reversed(labels)), fontsize=MIN_PT)
    for tick, row in zip(axes[0].get_yticklabels(), reversed(rows)):
        if row.greyed:
            tick.set_color("#7f7f7f")
    handles = [Line2D([], [], color=c, marker="o", lw=2, label=k) for k, c in colours.items() if k in used]
    if greyed_any:
        handles.append(Line2D([], [], color=GREY, marker="o", lw=2, label="untested: a gate or check failed"))
    handles.append(Patch(color=BAND, alpha=0.25, label="the row's margin"))
    handles.append(Line2D([], [], color="black", marker=">", lw=0, label="interval beyond the frame"))
    fig.legend(handles=handles, fontsize=MIN_PT, loc="lower center", ncol=3, frameon=False)
    legend_rows = -(-len(handles) // 3)
    bottom = (0.95 + 0.22 * legend_rows) / height
    fig.text(0.005, bottom - 0.62 / height, "margins\n(shaded)", fontsize=MIN_PT, va="bottom")
    fig.subplots_adjust(left=0.37, right=0.97, top=1 - 0.62 / height, bottom=bottom)
    return fig


def save_forest(rows, path: Path) -> Path:
    """Draw the forest plot of ``rows`` to ``path`` as SVG (deterministic: no date, fixed ids)."""
    import matplotlib.pyplot as plt

    fig = forest_figure(rows)
    # drawn at the column's width exactly, whatever a page set ``savefig.bbox`` to
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "polyattn-forest", "savefig.bbox": "standard"}):
        fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    return Path(path)


def svg_text_sizes(svg: str) -> list[tuple[str, float]]:
    """(text, size in points as shown at the column's width) of every text element of an SVG drawn
    by matplotlib with text kept as text."""
    import re
    import xml.etree.ElementTree as ET

    root = ET.fromstring(svg)
    width = float(re.match(r"[\d.]+", root.get("width")).group())
    unit = re.sub(r"[\d.]+", "", root.get("width")) or "px"
    view = float(root.get("viewBox").split()[2])
    px_per_user = (width * (96 / 72 if unit == "pt" else 1)) / view
    scale = WIDTH_PX / (width * (96 / 72 if unit == "pt" else 1))  # shown at the column's width
    out = []
    for el in root.iter():
        if not el.tag.endswith("text"):
            continue
        style = el.get("style", "")
        m = re.search(r"font(?:-size)?:\s*(?:[a-z]+\s+)*([\d.]+)px", style)
        if m is None:
            continue
        text = "".join(el.itertext()).strip()
        out.append((text, float(m.group(1)) * px_per_user * scale * 72 / 96))
    return out
