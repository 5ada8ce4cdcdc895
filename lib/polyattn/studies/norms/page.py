"""What the sections of chapter 03 (norms during training) share: the glue, the words for signed
numbers, counts and ratios, the compact table style, the smallest figure font, and Table 1's
runs with their probes, which both the norms during training and the correlation with accuracy
read.

Each section of the chapter loads what it shows with one call, so that it reruns on its own
after the chapter's setup cell:

    sweep = scale_sweep(page, seeds, recompute)        # Figure 1's sweep of c at several lengths
    glue_values(sweep_values(sweep)); scale_figure(sweep); best_constant_table(sweep)
    glue_values(fig1_values(finding))                  # chapter 04's verdict on Figure 1, as ch03_fig1_*
    t1 = table1_runs(page, seeds, recompute)           # Table 1's runs, with their probes
    norms_figure(t1); glue_values(bound_values(t1))    # Figures 2 and 3
    correlation_figure(t1); correlation_table(t1); glue_values(norms_values(finding))
    iv = intervention_runs()                           # the book's committed intervention records
    accuracy_table(iv); norm_check_table(iv); k_figure(iv); glue_values(intervention_values(iv))
    maps = attention_maps(page, recompute); maps_figure(maps); glue_values(map_values(maps))

``page`` is the chapter's :class:`polyattn.presets.Prologue` (preset, device, whether it trains,
and the phrase that stands for a number it does not compute).  A figure function returns the
figure (None when there is nothing to draw); a table function returns a styled table.

The sections' tables, figures and values: :mod:`polyattn.studies.norms.scale_sweep` (Figure 1, the
best constant at several lengths), :mod:`polyattn.studies.norms.training` (Figures 2 and 3, the
norms during training), :mod:`polyattn.studies.norms.accuracy` (whether the norms predict
accuracy), :mod:`polyattn.studies.norms.intervention` (the mechanism, by intervention) and
:mod:`polyattn.studies.norms.maps` (attention maps).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ... import analysis
from ...display import typographic
from ...pages.shown import compact, glue_keyed  # noqa: F401  (compact: chapter 03 reads it here)
from ...runs import page_records

#: The smallest font of any figure text, in points.
SMALL = 9


#: Glue each value under its key, for the page's ``{glue:text}`` and ``{glue:md}`` references.
glue_values = glue_keyed


def signed(x: float, digits: int = 2) -> str:
    """``+0.21`` / ``−0.06`` with a typographic minus; "none" for a missing number."""
    return typographic(f"{x:+.{digits}f}") if x == x and x is not None else "none"


def plural(n: int, noun: str) -> str:
    """"1 epoch", "6 epochs"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


# --- Table 1's runs, read by the norms during training and by the correlation with accuracy ---------


@dataclass
class Table1:
    """Table 1's runs as the page shows them: the configs, their records, the probe frame and
    the grid's caption (records and probes empty where the page trains nothing)."""

    grid: list
    records: list
    preset: str
    caption: str
    probes: pd.DataFrame = field(default_factory=pd.DataFrame)
    missing: str = "no run stored"      # what stands for a number the page cannot compute

    def __bool__(self) -> bool:
        return bool(self.records)


def table1_runs(page, seeds=None, recompute: bool = False) -> Table1:
    """Table 1's runs at the page's preset (stored at ``book``, trained under ``smoke``), with
    their probes."""
    from ...experiments import vit
    if not page.trains:
        return Table1(vit.table1("book"), [], page.preset, page.not_run, missing=page.not_run)
    grid = page.on_device(vit.table1(page.preset, seeds))
    records = page_records(grid, page.preset, recompute=recompute, desc="table 1", progress=False)
    probes = analysis.probe_frame(records) if records else pd.DataFrame()
    return Table1(grid, records, page.preset, analysis.grid_caption(grid, records, page.preset), probes)
