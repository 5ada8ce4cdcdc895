"""What every section of chapter 06 (PINNsFormer with polynomial attention) shares: the
``physics`` grid's runs as the page reads them, the names a reader knows the variants and the
problems by, the equivalence margin, the setting of the runs in words, and the page's glue.

The statistics are :mod:`polyattn.analysis.physics`'s, the verdicts the claim register's and the
measured claim's (:mod:`polyattn.measures.physics`); each section of the page loads its runs with
one call and shows what its module returns:

    runs = load(preset, seeds, device, recompute)             # the ``physics`` grid's records
    variant_name(label); parameters_text(spec); small(table); not_run(runs)
    margin(); scope(runs)                                     # the claims' margin, the runs' setting
    control_values(deliver("physics_poly"))                   # the positive control, in words
    glue_values("ch06", values); fold("ch06_fold_...", table)      # glue for the text and the folds

:func:`load` keeps what it reads for the session, so that each section of the page asks for its
runs again instead of reading another section's variables.

The sections' tables, figures and values: :mod:`polyattn.studies.physics.problems` (the
introduction and the three problems), :mod:`polyattn.studies.physics.setting` (what runs, and what
the published setting was), :mod:`polyattn.studies.physics.errors` (how the errors are judged, and
the errors per problem and variant), :mod:`polyattn.studies.physics.comparisons` (paired
comparisons with softmax), :mod:`polyattn.studies.physics.budget` (convection with a longer
budget), :mod:`polyattn.studies.physics.fields` (predicted fields of the median seed),
:mod:`polyattn.studies.physics.curves` (loss curves) and :mod:`polyattn.studies.physics.attention`
(attention over the five tokens).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import pandas as pd

from ...analysis import physics as pa
from ...claims import claim
from ...data.pde import get_pde
from ...display import name
from ...experiments import physics as grids
from ...labels import PDES, PINNSFORMER_VARIANTS
from ...measures.physics import GREEK, physics_scope
from ...measures.stored import GridRecords
from ...pages.controls import control_values  # noqa: F401  (the positive control, in words, for the page)
from ...pages.shown import fold, glue_values  # noqa: F401  (glue for the page's text and its folded parts)
from ...presets import prologue
from ...runs import load_or_run_all, stored

SOFTMAX, POLY = "softmax", "x^3/sqrt(N)"
#: What the paper preset does not run.
PAPER_NOTE = "the published configuration is listed below for GPUs, not trained"
#: Labels of the figures (points): at least the book's minimum.
FONT = 9
#: A smaller font for tables with many columns (0.8 of 16 px is still above 9 pt): the comparison
#: table's eight columns are meant to fit the 784 px column at this size.
SMALL = [{"selector": "th, td", "props": "font-size: 0.8em"}]


def variant_name(label: str) -> str:
    """A variant as the reader knows it: x³/√N for ``x^3/sqrt(N)``; the PINN as it is."""
    return name(dict(PINNSFORMER_VARIANTS)[label]) if label in dict(PINNSFORMER_VARIANTS) else label


def parameters_text(spec: str) -> str:
    """A problem's parameters in words: ``convection:beta=30`` -> "β = 30"."""
    return ", ".join(f"{GREEK.get(k, k)} = {v:g}" for k, v in get_pde(spec).params.items())


def small(table):
    """``table`` in the smaller font (:data:`SMALL`), for tables with many columns."""
    return table.set_table_styles(SMALL, overwrite=False)


# --- the runs ----------------------------------------------------------------------------------


@dataclass
class Runs:
    """The ``physics`` grid's runs at a preset, as the page reads them."""
    preset: str
    trains: bool                 # whether the page has runs (book: all stored; smoke: trained)
    not_run: str                 # what the page says where it has none
    configs: list
    records: list = field(default_factory=list)
    final: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def grid_preset(self) -> str:
        """The preset whose problems and settings the page describes (the book's under paper)."""
        return self.preset if self.trains or self.preset == "book" else "book"

    @property
    def pdes(self) -> list:
        return [p for p in PDES if any(grids.pde_of(c) == p for c in self.configs)]

    def seeds(self, label: str) -> int:
        return len({c.seed for c in self.configs if grids.variant_label(c) == label})

    def caption(self, what: str) -> str:
        """``what`` with the setting of the runs, the preset among it (:func:`scope`)."""
        return f"{what}; {scope(self)} (the setting tables give each departure from the published setting)"

    @property
    def table(self) -> pd.DataFrame:
        """:func:`polyattn.analysis.physics.error_table` of the runs."""
        return pa.error_table(self.final) if len(self.final) else pd.DataFrame()


def load(preset: str, seeds=None, device: str = "cpu", recompute: bool = False) -> Runs:
    """The ``physics`` grid at ``preset``: the stored records at the book preset (the page waits
    until all are stored rather than start hours of training), the grid trained under smoke
    (seconds), none under paper.  Kept for the session."""
    return _load(preset, tuple(seeds) if seeds else None, device, bool(recompute))


@lru_cache(maxsize=4)
def _load(preset: str, seeds, device: str, recompute: bool) -> Runs:
    page = prologue(preset, device, paper_note=PAPER_NOTE)
    configs = page.on_device(grids.physics(preset if page.trains else "book", list(seeds) if seeds else None))
    runs = Runs(preset, page.trains, page.not_run, configs)
    if page.trains and preset == "book" and not recompute:
        found = sum(stored(c) is not None for c in configs)
        if found < len(configs):
            runs.trains = False
            runs.not_run = (f"{found} of {len(configs)} book runs of the `physics` grid are stored; this page shows "
                            "its results once all are (`python -m polyattn grid physics --preset book` computes the "
                            "rest)")
    if runs.trains:
        runs.records = load_or_run_all(configs, recompute=recompute, desc="physics", progress=False)
        runs.final = pa.physics_final(runs.records)
    return runs


def not_run(runs: Runs):
    """What the page says where it has no runs, as Markdown."""
    from IPython.display import Markdown

    return Markdown(runs.not_run)


def margin() -> float:
    """The equivalence margin (log10 rMAE) the register fixed for the chapter's claims."""
    return float(claim("physics_poly").margin)


def scope(runs: Runs) -> str:
    """The setting of the page's runs in words (:func:`polyattn.measures.physics.physics_scope`)."""
    if not runs.configs:
        return runs.not_run
    return physics_scope(GridRecords(tuple(runs.configs), ()))
