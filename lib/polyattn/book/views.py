"""The chapters' results tables for people: the rows of :mod:`polyattn.analysis` styled as the
pages show them (no index, padding between cells, a caption), with the rows of registered
claims marked.

    summary_view(summary, diffs, claims=registered_rows("vit_table1", CLAIM.values()))
    per_seed_view(final, caption="Per-seed final test accuracy (%)")
    best_view(best_constant(final_of_sweep), "The best constant per length")
"""
from __future__ import annotations

from typing import Optional

import pandas as pd

from ..analysis.sweep import best_constant_rows
from ..analysis.tables import per_seed_rows, summary_rows
from .deliver import styled

#: A smaller font for tables with many short columns.
SMALL = [{"selector": "th, td", "props": "font-size: 0.85em"}]

#: The caption's note on rows that show a registered claim's comparison (marked ‡).
REGISTERED_NOTE = ("‡ a comparison of a registered claim: its difference, Holm p (over the claim's own comparisons) "
                   "and result are the claim's, as in its table at the end of the chapter")


def with_note(caption: str, note: str) -> str:
    """``caption`` followed by ``note`` ("; " between them when both are given)."""
    return f"{caption}; {note}" if caption else note


def summary_view(summary: pd.DataFrame, diffs: Optional[pd.DataFrame] = None, caption: str = "",
                 claims: Optional[dict] = None) -> "pd.io.formats.style.Styler":
    """A results table, one row per activation (:func:`polyattn.analysis.tables.summary_rows`):
    the metric, the difference from the baseline with its interval, the p-values and the
    verdict.  Rows that a registered claim compares (``claims``, from
    :func:`polyattn.book.deliver.registered_rows`) show the claim's numbers and result, and the
    caption then says so."""
    claims = claims or {}
    if any(a in claims for a in summary["activation"]):
        caption = with_note(caption, REGISTERED_NOTE)
    return styled(summary_rows(summary, diffs, claims), caption).set_table_styles(SMALL, overwrite=False)


def per_seed_view(final: pd.DataFrame, index=("activation",), caption: str = "") -> "pd.io.formats.style.Styler":
    """The final metric of every run, one row per activation (and model and recipe), one column
    per seed (:func:`polyattn.analysis.tables.per_seed_rows`)."""
    return styled(per_seed_rows(final, index=index), caption)


def best_view(bc, caption: str = "") -> "pd.io.formats.style.Styler":
    """Figure 1's best constant per length, one column per N
    (:func:`polyattn.analysis.sweep.best_constant_rows`)."""
    return styled(best_constant_rows(bc), caption)
