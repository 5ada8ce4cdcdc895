"""Every figure a page test builds is measured as the book shows it: narrowed to the column by
``polyattn.plotting.column_svg`` (what the chapters display), its smallest text must read at
``MIN_LABEL_POINTS`` or more."""
from __future__ import annotations

import os
import re

import matplotlib
import pytest


@pytest.fixture(autouse=True)
def figures_readable_at_column_width(monkeypatch):
    from matplotlib.figure import Figure

    from polyattn import plotting

    made = []
    original = Figure.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(Figure, "__init__", recording)
    yield
    monkeypatch.setattr(Figure, "__init__", original)
    small = []
    for fig in made:
        if not fig.get_axes() or fig.canvas is None:
            continue
        matplotlib.use("Agg", force=False)
        if not hasattr(fig.canvas, "get_renderer"):
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            FigureCanvasAgg(fig)
        svg = plotting.column_svg(fig)
        points, text = plotting.smallest_label_points(fig)
        # the SVG as written: text matplotlib sets smaller than its artist (a mathtext exponent) counts too
        width = float(re.search(r'<svg\b[^>]*\bwidth="([\d.]+)pt"', svg).group(1))
        sizes = [float(s) for s in re.findall(r"font-size:\s*([\d.]+)px", svg)]
        if sizes and min(sizes) * min(1.0, plotting.COLUMN_PX * 0.75 / width) < points:
            points, text = min(sizes) * min(1.0, plotting.COLUMN_PX * 0.75 / width), "(text in the SVG)"
        if points < plotting.MIN_LABEL_POINTS - 1e-6:
            small.append(f"{points:.1f} pt: {text!r} in {plotting.alt_text(fig)!r}")
    if small and not os.environ.get("POLYATTN_FIGURE_REPORT"):
        pytest.fail("figures with text below 9 pt at the column's width:\n" + "\n".join(small))
    elif small:
        with open(os.environ["POLYATTN_FIGURE_REPORT"], "a") as out:
            out.write("\n".join(small) + "\n")
