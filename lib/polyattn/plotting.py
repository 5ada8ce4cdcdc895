"""One look for the whole book: a fixed colour per activation and small figure helpers.

    from polyattn import plotting
    plotting.setup()                                   # theme + SVG figures in notebooks
    color = plotting.activation_color("poly:p=3")      # same colour in every chapter
    ax = plotting.line_plot(df, x="N", y="fro_over_sqrt_n", logx=True)
    plotting.stamp(ax, preset, "mean of 8 seeds")      # the preset is written on the figure

An activation is named by its spec string (see ``polyattn.activations``); its colour
is looked up after canonicalising the spec, so ``poly:p=3,c=2/28`` and
``poly:p=3,c=1/14`` share a colour.  Specs outside ``BOOK_SPECS`` get a colour hashed
from the canonical spec into a separate palette, so it never changes between runs.
"""
from __future__ import annotations

import hashlib
from typing import Iterable, Optional, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .display import label
from .specs import BOOK_SPECS, canonical

#: Explicit colours for the activations the book compares.  Families share a hue
#: (the scaled cubics are shades of red/orange, the normalised ones blue/teal).
BOOK_COLORS = {
    "softmax": "#1f4e9c",          # deep blue: the reference
    "poly:p=3": "#d62728",         # red: the paper's activation, x^3/sqrt(N)
    "poly:p=3,c=1/14": "#ff7f0e",  # orange: the paper's fixed ImageNet scale
    "poly:p=3,c=1": "#8c564b",     # brown: unscaled cubic
    "poly:p=1": "#e377c2",         # pink
    "poly:p=2": "#9467bd",         # purple
    "relu_n": "#7f7f7f",           # grey
    "sigmoid": "#2ca02c",          # green
    "softpick": "#bcbd22",         # olive
    "ssmax:s=0.43": "#17becf",     # teal
    "poly_norm:p=2": "#393b79",    # indigo
}

#: Colours for activations outside BOOK_SPECS, chosen by hashing the spec.  None of
#: them repeats a BOOK_COLORS entry.
FALLBACK_COLORS = (
    "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354",
    "#756bb1", "#636363", "#6baed6", "#fd8d3c", "#74c476", "#9e9ac8", "#969696",
    "#e7969c", "#de9ed6", "#b5cf6b", "#e7ba52",
)

#: Line styles by family, so figures stay readable in greyscale.
FAMILY_DASHES = {
    "softmax": "-", "poly": "-", "relu_n": "--", "sigmoid": "--", "softpick": "-.",
    "ssmax": "-.", "poly_norm": ":",
}

PRESET_NOTES = {
    "smoke": "preset smoke: a pipeline check, not evidence",
    "book": "preset book",
    "paper": "preset paper",
}


def _canonical(spec: str) -> str:
    try:
        return canonical(spec)
    except (ValueError, TypeError):
        return str(spec)


def activation_color(spec: str) -> str:
    """The hex colour of an activation, the same in every figure of the book."""
    key = _canonical(spec)
    if key in BOOK_COLORS:
        return BOOK_COLORS[key]
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return FALLBACK_COLORS[int.from_bytes(digest[:4], "big") % len(FALLBACK_COLORS)]


def activation_dash(spec: str) -> str:
    """The matplotlib line style of an activation's family."""
    key = _canonical(spec)
    return FAMILY_DASHES.get(key.partition(":")[0], "-")


def activation_order(specs: Iterable[str]) -> list[str]:
    """Unique specs in the book's order: BOOK_SPECS first (in their order), then the rest sorted.

    The returned strings are the ones given (not canonicalised), so they still match
    the values in the caller's DataFrame.
    """
    book_rank = {s: i for i, s in enumerate(BOOK_SPECS)}
    seen, unique = set(), []
    for s in specs:
        if s not in seen:
            seen.add(s)
            unique.append(s)

    def key(s):
        c = _canonical(s)
        return (0, book_rank[c], "") if c in book_rank else (1, 0, c)

    return sorted(unique, key=key)


def activation_palette(specs: Iterable[str]) -> dict[str, str]:
    """``{spec: colour}`` for the given specs (usable as seaborn's ``palette=``)."""
    return {s: activation_color(s) for s in activation_order(specs)}


#: Fonts tried after the theme's own for glyphs it lacks (chapter 07's Chinese titles), with the
#: file Debian installs them to (fonts-wqy-microhei, fonts-noto-cjk); each is used only when present.
FALLBACK_FONTS = (
    ("WenQuanYi Micro Hei", "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
    ("Noto Sans CJK SC", "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
)


def _fallback_fonts() -> list[str]:
    """The installed fonts of :data:`FALLBACK_FONTS`, in order (none when none is installed).

    A font installed after matplotlib cached its font list is added from its file.
    """
    from pathlib import Path

    from matplotlib import font_manager

    found = []
    for family, path in FALLBACK_FONTS:
        if family not in {f.name for f in font_manager.fontManager.ttflist} and Path(path).is_file():
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):
                continue
        if family in {f.name for f in font_manager.fontManager.ttflist}:
            found.append(family)
    return found


def setup(context: str = "notebook", font_scale: float = 1.0) -> None:
    """Set the book's seaborn theme; in IPython also switch inline figures to SVG."""
    sns.set_theme(context=context, style="whitegrid", font_scale=font_scale)
    matplotlib.rcParams.update({
        "figure.figsize": (6.4, 4.0),
        "figure.dpi": 100,
        "savefig.bbox": "tight",
        "axes.titlesize": "medium",
        "legend.fontsize": "small",
        "legend.title_fontsize": "small",
        "svg.fonttype": "none",
    })
    # matplotlib takes a glyph missing from the first family from the next one of font.family
    fallback = _fallback_fonts()
    if fallback:
        families = [f for f in matplotlib.rcParams["font.family"] if f not in fallback]
        matplotlib.rcParams["font.family"] = families + fallback
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: nothing inline to configure
        return
    shell = get_ipython()
    if shell is not None:
        from matplotlib.figure import Figure
        from matplotlib_inline.backend_inline import set_matplotlib_formats
        set_matplotlib_formats("svg")
        # every figure shown or glued is drawn at the column's width (see column_svg)
        shell.display_formatter.formatters["image/svg+xml"].for_type(Figure, column_svg)


#: The stamp's type size in points: the smallest text of a figure a reader must still read.
STAMP_POINTS = 9
#: The longest line of a stamp, in characters (about 4.5 inches at 9 points).
STAMP_CHARS = 90


def stamp(target, preset: str, text: Optional[str] = None, loc: str = "lower right"):
    """Write the preset (and an optional note) onto an Axes or Figure; returns the Text.

    On an Axes the stamp sits outside the data: ``"lower ..."`` under the x-axis label,
    ``"upper ..."`` above the title, at the axes' right or left edge.  On a Figure it sits in
    the figure's corner.  Under the smoke preset the stamp says the numbers are a pipeline check,
    not evidence.
    """
    if not isinstance(preset, str) or not preset:
        raise ValueError(f"stamp needs the preset name (smoke, book or paper), got {preset!r}")
    label = PRESET_NOTES.get(preset, f"preset {preset}")
    if text:
        label = f"{label} | {text}"
    if len(label) > STAMP_CHARS:  # a long stamp in lines, so that it never makes a figure wider than the column
        import textwrap

        label = "\n".join(line for part in label.split(" | ", 1)
                          for line in textwrap.wrap(part, STAMP_CHARS, break_on_hyphens=False))
    positions = {
        "lower right": (0.99, 0.01, "right", "bottom"),
        "lower left": (0.01, 0.01, "left", "bottom"),
        "upper right": (0.99, 0.99, "right", "top"),
        "upper left": (0.01, 0.99, "left", "top"),
    }
    if loc not in positions:
        raise ValueError(f"unknown stamp location {loc!r}; use one of {sorted(positions)}")
    x, y, ha, va = positions[loc]
    color = "#b22222" if preset == "smoke" else "#555555"
    if isinstance(target, matplotlib.figure.Figure):
        return target.text(x, y, label, ha=ha, va=va, fontsize=STAMP_POINTS, color=color,
                           transform=target.transFigure)
    # outside the axes, so that no point or error bar is hidden: the x coordinate is the axes'
    # edge, the y coordinate the bottom of the x-axis label or the top of the title
    edge = 1.0 if ha == "right" else 0.0
    if va == "bottom":
        return target.annotate(label, xy=(edge, 0.0), xycoords=("axes fraction", target.xaxis.label),
                               xytext=(0, -3), textcoords="offset points", ha=ha, va="top",
                               fontsize=STAMP_POINTS, color=color, annotation_clip=False)
    return target.annotate(label, xy=(edge, 1.0), xycoords=("axes fraction", target.title),
                           xytext=(0, 3), textcoords="offset points", ha=ha, va="bottom",
                           fontsize=STAMP_POINTS, color=color, annotation_clip=False)


def line_plot(df: pd.DataFrame, x: str, y: str, hue: str = "activation", ax=None,
              band: str = "std", logx: bool = False, logy: bool = False, marker: str = "o",
              legend: bool = True, order: Optional[Sequence[str]] = None):
    """Plot ``y`` against ``x`` with one line per activation, in the book's colours.

    Rows sharing (hue, x) -- e.g. several seeds -- are averaged; ``band`` draws
    ``"std"`` (mean +- one standard deviation), ``"minmax"`` or ``None``.
    Returns the Axes.
    """
    for col in (x, y, hue):
        if col not in df.columns:
            raise ValueError(f"line_plot: column {col!r} is not in the DataFrame (columns: {list(df.columns)})")
    if band not in ("std", "minmax", None):
        raise ValueError(f"line_plot: band must be 'std', 'minmax' or None, got {band!r}")
    if ax is None:
        _, ax = plt.subplots()
    specs = list(order) if order is not None else activation_order(df[hue].unique())
    for spec in specs:
        sub = df[df[hue] == spec]
        if sub.empty:
            continue
        g = sub.groupby(x)[y]
        stats = pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=0), "min": g.min(), "max": g.max()}).sort_index()
        xs = stats.index.to_numpy()
        color = activation_color(spec)
        ax.plot(xs, stats["mean"].to_numpy(), color=color, linestyle=activation_dash(spec),
                marker=marker, markersize=3.5, label=spec)
        if band and (g.size() > 1).any():
            lo, hi = ((stats["mean"] - stats["std"], stats["mean"] + stats["std"]) if band == "std"
                      else (stats["min"], stats["max"]))
            ax.fill_between(xs, lo.to_numpy(), hi.to_numpy(), color=color, alpha=0.15, linewidth=0)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if legend:  # beside the axes, where it hides no line or band
        legend_outside(ax, title=hue)
    return ax


#: The colour of a reference activation drawn behind a panel's own lines.
REFERENCE_GREY = "#a0a0a0"


def group_panels(df: pd.DataFrame, x: str, y: str, groups: Sequence[tuple], axes, reference: Optional[str] = "softmax",
                 hue: str = "activation", **line_kw) -> list:
    """One panel per ``(title, specs)`` group: the group's activations in their colours
    (:func:`line_plot`) and ``reference``, when the group lacks it, as a thin grey line behind them,
    so that every panel has a few lines and the same yardstick.  Returns the axes used."""
    axes = list(np.ravel(axes))
    if len(axes) < len(groups):
        raise ValueError(f"group_panels: {len(groups)} groups need as many axes, got {len(axes)}")
    for ax, (title, specs) in zip(axes, groups):
        present = [s for s in specs if (df[hue] == s).any()]
        if not present:
            raise ValueError(f"group_panels: no row of group {title!r} ({', '.join(specs)}) in the frame")
        if reference is not None and reference not in present and (df[hue] == reference).any():
            ref = df[df[hue] == reference].groupby(x)[y].mean().sort_index()
            ax.plot(ref.index.to_numpy(), ref.to_numpy(), color=REFERENCE_GREY, lw=1.2, label=reference, zorder=1)
        line_plot(df, x, y, hue=hue, ax=ax, order=present, legend=False, **line_kw)
        ax.set_title(title)
    return axes[:len(groups)]


def reference_line(ax, xs, ys, label: str, color: str = "black", linestyle: str = "--"):
    """A thin reference curve (a bound, a sqrt(N) line) drawn behind the data."""
    xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if xs.shape != ys.shape:
        raise ValueError(f"reference_line: xs and ys differ in shape ({xs.shape} vs {ys.shape})")
    return ax.plot(xs, ys, color=color, linestyle=linestyle, linewidth=1.0, label=label, zorder=1)[0]


def legend_outside(ax, title: Optional[str] = None):
    """Move the legend to the right of the axes (for figures with many activations)."""
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    return ax.legend(handles, labels, title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


#: The width figures are drawn at, in CSS pixels: a little inside the book's text column (about 760 px in
#: a 1400 px wide window), since a figure wider than the column is shrunk by the browser, and its type
#: with it.
COLUMN_PX = 752
#: CSS pixels per inch (a browser draws an SVG's 1 pt as 4/3 px).
CSS_PX_PER_INCH = 96
#: The smallest type a reader must read in a figure, in points as the page shows it.
MIN_LABEL_POINTS = 9


def _tight_width_inches(fig) -> float:
    """The width of ``fig`` as ``savefig(bbox_inches="tight")`` writes it, padding included."""
    fig.draw_without_rendering()  # a layout engine (constrained, tight) places the axes at draw time
    renderer = fig.canvas.get_renderer()
    pad = matplotlib.rcParams["savefig.pad_inches"]
    pad = pad if isinstance(pad, (int, float)) else 0.1
    return fig.get_tightbbox(renderer).width + 2 * pad


def displayed_scale(fig, column_px: int = COLUMN_PX) -> float:
    """The factor the page shrinks ``fig`` by: 1 when it fits the column, less when it is wider."""
    return min(1.0, column_px / (_tight_width_inches(fig) * CSS_PX_PER_INCH))


def fit_to_column(fig, column_px: int = COLUMN_PX, tries: int = 6):
    """Narrow ``fig`` until its saved width fits the column, keeping its type sizes, so that the page
    shows it at its own size instead of shrinking its labels; returns the figure.

    The axes narrow, the text (labels, legends outside the axes) keeps its size; the height shrinks in
    proportion, not below three quarters of itself."""
    limit = column_px / CSS_PX_PER_INCH - 0.01  # a hair inside, so that the page does not scale it at all
    w0, h0 = fig.get_size_inches()
    slope, last = 1.0, None  # how much the saved width changes per inch of figure width
    for _ in range(tries):
        w = fig.get_size_inches()[0]
        width = _tight_width_inches(fig)
        if width <= limit:
            break
        if last is not None and last[0] != w:
            slope = min(1.0, max(0.2, (last[1] - width) / (last[0] - w)))
        last = (w, width)
        new_w = max(w - (width - limit) / slope - 0.02, 0.4 * w0)
        fig.set_size_inches(new_w, h0 * max(new_w / w0, 0.75), forward=False)
    return fig


def _texts(fig):
    """The visible, non-empty Text artists of ``fig`` (titles, labels, ticks, legends, annotations)."""
    from matplotlib.text import Text

    return [a for a in fig.findobj(Text) if a.get_visible() and a.get_text().strip()
            and (a.axes is None or a.axes.get_visible()) and a.get_figure(root=True) is fig
            and _shown_tick(a)]


def _shown_tick(text) -> bool:
    """False for the label of a tick outside its axis's view (matplotlib keeps them, unseen)."""
    axis_of = getattr(text, "axes", None)
    if axis_of is None:
        return True
    for axis in (axis_of.xaxis, axis_of.yaxis):
        for tick in axis.get_major_ticks() + axis.get_minor_ticks():
            if text in (tick.label1, tick.label2):
                return tick.get_visible() and (tick.label1On if text is tick.label1 else tick.label2On) and \
                    _inside(axis, tick.get_loc())
    return True


def _inside(axis, loc) -> bool:
    lo, hi = sorted(axis.get_view_interval())
    span = (hi - lo) * 1e-9
    return lo - span <= loc <= hi + span


def smallest_label_points(fig, column_px: int = COLUMN_PX) -> tuple[float, str]:
    """The smallest text of ``fig`` in points as the page shows it (its size times
    :func:`displayed_scale`), with the text itself."""
    fig.canvas.draw()
    scale = displayed_scale(fig, column_px)
    texts = _texts(fig)
    if not texts:
        return float("inf"), ""
    smallest = min(texts, key=lambda a: a.get_fontsize())
    return smallest.get_fontsize() * scale, smallest.get_text()


#: TeX-style text that a label may carry, and its plain form: a norm's subscript is drawn as a
#: subscript by :func:`column_svg`, dollar signs and backslashes of unrendered TeX are dropped.
_TEX_WORDS = {"\\sqrt": "√", "\\cdot": "·", "\\times": "×", "\\alpha": "α", "\\phi": "φ",
              "\\partial": "∂", "\\log": "log", "\\|": "‖"}


def plain_text(text: str) -> str:
    """A figure's text without TeX markup (``$x^3/\\sqrt{N}$`` -> ``x³/√N``); mathtext is left alone only
    where there is none."""
    import re


    if "$" not in text and "\\" not in text:
        return text
    out = text.replace("$", "")
    for tex, plain in _TEX_WORDS.items():
        out = out.replace(tex, plain)
    out = re.sub(r"√\{([^{}]*)\}", lambda m: "√" + (m.group(1) if len(m.group(1)) == 1 else f"({m.group(1)})"), out)
    out = re.sub(r"\^\{(\d+)\}", r"^\1", out)
    out = out.replace("{", "").replace("}", "").replace("\\", "")
    return label(out)


def alt_text(fig) -> str:
    """What ``fig`` shows, in words, for the page's alt text: its title(s) and, per distinct pair,
    what is plotted against what."""
    parts = []
    sup = getattr(fig, "_suptitle", None)
    if sup is not None and sup.get_text().strip():
        parts.append(sup.get_text().strip())
    titles, pairs = [], []
    for ax in fig.get_axes():
        if not ax.get_visible():
            continue
        if ax.get_title().strip() and ax.get_title().strip() not in titles:
            titles.append(ax.get_title().strip())
        x, y = ax.get_xlabel().strip(), ax.get_ylabel().strip()
        pair = f"{y} against {x}" if x and y else (y or x)
        if pair and pair not in pairs:
            pairs.append(pair)
    if titles:
        parts.append("panels: " + "; ".join(titles[:8]))
    if pairs:
        parts.append("; ".join(pairs[:4]))
    text = ". ".join(plain_text(p) for p in parts) or "A figure of this section"
    return "Figure: " + text.replace("\n", " ").replace("‖_F", "‖")


_SUPERSCRIPTS = str.maketrans("0123456789-−.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁻·")


def power_of_ten(value, _pos=None, base: float = 10) -> str:
    """A log axis's tick as plain text with a Unicode exponent (``10⁻⁴``, ``2³``, ``−10¹``), at the
    label's full size: matplotlib's mathtext sets the exponent at 0.7 of it, below the book's
    smallest type.  Zero (a symlog axis) is ``0``; a value that is not a power is left unlabelled."""
    if not np.isfinite(value):
        return ""
    if value == 0:
        return "0"
    sign = "−" if value < 0 else ""
    exponent = np.log(abs(value)) / np.log(base)
    if abs(exponent - round(exponent)) > 1e-9:
        return ""  # minor ticks stay unlabelled, as matplotlib leaves them
    exponent = int(round(exponent))
    digits = f"{base:g}"
    return sign + {0: "1", 1: digits}.get(exponent, digits + str(exponent).translate(_SUPERSCRIPTS))


def _plain_log_ticks(fig) -> None:
    """Label every log or symlog axis of ``fig`` with :func:`power_of_ten` where matplotlib's own
    scientific formatter (mathtext) labels it."""
    from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, NullFormatter

    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            major = axis.get_major_formatter()
            if not isinstance(major, LogFormatterSciNotation):
                continue
            base = float(getattr(major, "_base", 10))
            axis.set_major_formatter(FuncFormatter(lambda v, pos, base=base: power_of_ten(v, pos, base)))
            if isinstance(axis.get_minor_formatter(), LogFormatterSciNotation):
                axis.set_minor_formatter(NullFormatter())


def column_svg(fig) -> str:
    """``fig`` as the page's SVG: narrowed to the column (:func:`fit_to_column`), TeX markup in its
    text made plain (:func:`plain_text`; ``‖A‖_F`` gets a real subscript F), and its alt text
    (:func:`alt_text`) as the SVG's title, which the book's site reads into the image's alt."""
    import html
    import io
    import re

    from matplotlib.text import Text

    for text in fig.findobj(Text):
        raw = text.get_text()
        if raw and ("$" in raw or "\\" in raw):
            text.set_text(plain_text(raw))
    _plain_log_ticks(fig)
    fit_to_column(fig)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    svg = buffer.getvalue()
    # a subscript after a norm's bars (‖A‖_F, ‖x‖_2): drawn lowered, not as an underscore
    svg = re.sub(r"‖_([A-Za-z0-9])", r'‖<tspan baseline-shift="sub">\1</tspan>', svg)
    title = f"<title>{html.escape(alt_text(fig))}</title>"
    return re.sub(r"(<svg\b[^>]*>)", lambda m: m.group(1) + title, svg, count=1)
