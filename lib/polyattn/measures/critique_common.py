"""What chapter 09's measured claims share: the activations several of them compare, the
sentence of a finding, the names a reader reads, the chapter's margin, and the records of the
short retrainings of Table 1's model (grid ``critique_short_retrain``), which four of them read.

The claims themselves, one module a section of the chapter: :mod:`.critique_paradox` (the norm
paradox), :mod:`.critique_scale` (scale sensitivity), :mod:`.critique_gradients` (powers and
gradients, softmax's saturation), :mod:`.critique_outliers` (extreme entries) and
:mod:`.critique_maps` (attention maps); :mod:`.critique_survey` holds the random-score survey that
the gradient claims read beside the short retrainings.  Each reads stored records, never trains,
and decides its form by the rules of :mod:`polyattn.analysis.critique_verdicts` (thresholds
named there).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..claims.register import claim
from ..claims.spec import Finding
from ..display import name
from ..numbers import readable_numbers
from .stored import grid_records

#: The reviewer's pair: the unscaled cube against the linear map with the paper's scale (the
#: paper's x/16 on Tiny-ImageNet, where 16 = sqrt(256), is x/sqrt(N) here).
UNSCALED_CUBE, LINEAR = "poly:p=3,c=1", "poly:p=1"
#: The powers p = 1..7 and the plain powers x^p/sqrt(N).
POWERS = tuple(range(1, 8))
PLAIN_POWERS = tuple(f"poly:p={p}" for p in POWERS)
#: The activations whose outlier sweeps and maps are compared, softmax first.
MAP_SPECS = ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=1")
#: The short retrainings of Table 1's model.
SHORT_GRID = "critique_short_retrain"


def finding(form: str, summary: str, numbers: dict) -> Finding:
    """A finding whose sentence writes its numbers as a reader reads them (minus signs, powers of ten)."""
    return Finding(form, readable_numbers(summary), numbers)


def display_name(spec: str) -> str:
    return name(spec)


def chapter_margin() -> float:
    """The chapter's equivalence margin in accuracy points: the register's for Table 1's recipe."""
    return float(claim("table_parity").margin)


def listed(values, fmt: str, sep: str = ", ") -> str:
    return sep.join(format(v, fmt) for v in values)


# --- the short retrainings ---------------------------------------------------------------------------


def short_records(root: Optional[Path] = None):
    """The stored short retrainings (:func:`polyattn.measures.stored.grid_records`) and whether
    every planned run is stored with its measurements (each question compares activations, so it
    waits for all of them)."""
    grid = grid_records(SHORT_GRID, root)
    measured = [r for r in grid.records if r["status"] == "ok" and r.get("final")]
    return grid, grid.complete and len(measured) == grid.planned


def short_pending(grid) -> Finding:
    measured = sum(1 for r in grid.records if r["status"] == "ok" and r.get("final"))
    diverged = [display_name(r["config"]["activation"]) for r in grid.records if r["status"] != "ok"]
    return finding("inconclusive at this scale",
                   f"{measured} of the {grid.planned} short retrainings of Table 1's model are stored with their "
                   f"measurements (diverged: {', '.join(diverged) or 'none'}); every question compares activations, "
                   "so it waits for all of them.",
                   {"short_runs_measured": measured, "short_runs_planned": grid.planned})
