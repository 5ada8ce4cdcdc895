"""What every section of chapter 10 (other architectures, and detection) shares: the
architectures grid's runs as the page reads them, the names a reader knows the data sets and the
architectures by, the compact table style, the register's tables and comparisons of a delivered
claim, the margins the comparisons are judged by, and the page's glue.

The verdicts are the claim register's (``table2_architectures``, ``detection_segmentation``,
``linear_vit_deit``) and the measure's (``n_windows_channels``); every other comparison the page
shows is description: a difference, its 95% interval and the seed pairs, with no verdict word.
Each section of the page loads the runs it needs with one call and shows what its module returns:

    judging_values()                                   # the margins, the test level and power
    runs = load(preset, seeds, device, recompute)      # the architectures grid's records
    readable(text); architecture_name(a); plural(n, word); nowrap(table, *columns); not_run(runs)
    claim_table(deliver("detection_segmentation"))     # a delivered claim's table, as shown
    control_values(deliver("detection_segmentation"))  # the positive control, in words
    key_difference(deliver("linear_vit_deit"), "vit")  # one registered comparison's difference
    glue_values("ch10", values); fold("ch10_fold_...", table)   # glue for the text and the folds

:func:`load` keeps what it reads while the page runs, so that each section of the page asks for
its runs again instead of reading another section's variables.

The sections' tables, figures and values: :mod:`polyattn.studies.architectures.n` (what N is in each
architecture), :mod:`polyattn.studies.architectures.setup` (what runs here, and what the paper ran),
:mod:`polyattn.studies.architectures.accuracy` (accuracy per architecture and variant),
:mod:`polyattn.studies.architectures.table2` (Table 2 pooled over the architectures),
:mod:`polyattn.studies.architectures.readings` (the readings of N, paired) and
:mod:`polyattn.studies.architectures.detection` (the detection proxy: scenes, detector, runs and AP).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import pandas as pd

from ... import analysis
from ...analysis import architectures as arch
from ...book.deliver import styled
from ...claims import claim
from ...claims.report import estimate_cell
from ...claims.scope import DATA_NAMES
from ...display import label
from ...pages.controls import control_values  # noqa: F401  (the positive control, in words, for the page)
from ...pages.shown import fold, glue_values  # noqa: F401  (glue for the page's text and its folded parts)
from ...presets import prologue
from ...runs import page_records

SOFTMAX, OWN, FIXED, TOKENS = arch.VARIANTS
ARCHITECTURE_NAMES = arch.ARCHITECTURE_NAMES
#: What the paper preset does not run.
PAPER_NOTE = "the paper preset's ImageNet configurations are listed below, not trained"
#: Labels of the figures (points): at least the book's minimum.
FONT = 9
#: A smaller font for tables with many short columns.
SMALL = [{"selector": "th, td", "props": "font-size: 0.85em"}]
#: Data sets and architectures as a reader knows them, for cells read from the grids.
READABLE = {"fashion_mnist": "Fashion-MNIST", "imagenet": "ImageNet", "vit": "ViT", "deit": "DeiT", "swin": "Swin",
            "xcit": "XCiT"}
DESCRIPTION = "description, not a test: no verdict rests on these rows"


def readable(text: str) -> str:
    """Names of data sets and architectures in a cell read from a grid ("fashion_mnist (vit, deit)")
    as a reader knows them ("Fashion-MNIST (ViT, DeiT)"), "64 × 64" for "64 x 64", and maths labels
    as :func:`polyattn.display.label`."""
    out = re.sub(r"\b(" + "|".join(READABLE) + r")\b", lambda m: READABLE[m.group(1)], str(text))
    return label(out.replace(" x ", " × "))


def nowrap(table, *columns):
    """``table`` with ``columns`` kept on one line (an interval split over two lines doubles a row)."""
    return table.set_properties(subset=[c for c in columns if c in table.data.columns], **{"white-space": "nowrap"})


def architecture_name(a: str) -> str:
    return ARCHITECTURE_NAMES.get(a, a)


def plural(n: int, word: str) -> str:
    """"1 seed", "3 seeds"."""
    return f"{n} {word}{'' if n == 1 else 's'}"


# --- how the comparisons are judged -------------------------------------------------------------


def judging_values() -> dict[str, str]:
    """The margins of the chapter's claims (accuracy and AP points), the test level and power."""
    return {"margin": f"±{claim('table2_architectures').margin:g}",
            "det_margin": f"±{claim('detection_segmentation').margin:g}",
            "alpha": f"{analysis.ALPHA:g}", "power": f"{analysis.POWER:g}"}


# --- the architectures grid's runs --------------------------------------------------------------


@dataclass
class Runs:
    """The architectures grid's runs at a preset, as the page reads them."""
    preset: str
    trains: bool                 # whether this preset reads (book) or trains (smoke) the grid
    not_run: str                 # what the page says where it has no runs
    configs: list
    records: list = field(default_factory=list)
    final: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def seeds(self) -> int:
        return len({c.seed for c in self.configs})

    def caption(self, what: str) -> str:
        """``what`` with the preset, data, scale and the deviations from the paper's ImageNet runs."""
        c = self.configs[0]
        return (f"{what}; preset {self.preset}, {DATA_NAMES.get(c.dataset, c.dataset)} ({c.train_subset:,} training / "
                f"{c.test_subset:,} test images, not ImageNet), micro-sized timm models, {plural(c.epochs, 'epoch')} "
                f"(the paper: 300), {plural(self.seeds, 'seed')}, {len(self.records)} of {len(self.configs)} runs "
                "stored; the setup table gives every deviation")


def load(preset: str, seeds=None, device: str = "cpu", recompute: bool = False) -> Runs:
    """The ``architectures_table2`` grid's runs at ``preset``: at the book preset its stored
    records, under smoke the tiny grid trained (seconds), under paper none.  Kept while the page runs."""
    return _load(preset, tuple(seeds) if seeds else None, device, bool(recompute))


@lru_cache(maxsize=4)
def _load(preset: str, seeds, device: str, recompute: bool) -> Runs:
    from ...experiments import architectures as grids
    page = prologue(preset, device, paper_note=PAPER_NOTE)
    configs = page.on_device(grids.table2(preset if page.trains else "book", list(seeds) if seeds else None))
    return read_records(Runs(preset, page.trains, page.not_run, configs), "architectures_table2", recompute,
                        arch.architecture_final)


def read_records(runs, grid: str, recompute: bool, final):
    """``runs`` with its records read (or trained, under smoke) and ``final(records)`` as its final
    table; a preset without stored records says so instead."""
    if not runs.trains:
        return runs
    runs.records = page_records(runs.configs, runs.preset, recompute, desc=grid, progress=False)
    if not runs.records:
        runs.trains = False
        runs.not_run = f"No record of `{grid}` at preset {runs.preset} is stored yet."
        return runs
    runs.final = final(runs.records)
    return runs


def not_run(runs):
    from IPython.display import Markdown

    return Markdown(runs.not_run)


# --- a delivered claim: its table and one comparison's difference ------------------------------


def claim_table(delivered):
    """The register's table of a delivered claim without the comparisons that have no runs yet
    (they have nothing to show: a positive control's row appears once its runs are stored); the
    differences' common unit in their column's name, so that each interval fits on one line."""
    table = delivered.table
    rows = [r for r in table.data.to_dict("records") if not str(r["Pairs"]).startswith("0 of")]
    column = "Difference [95% CI]"
    cells = [str(r.get(column, "")) for r in rows]
    units = {c.rsplit("] ", 1)[1] for c in cells if "] " in c}
    if len(units) == 1 and all("] " in c for c in cells):
        unit = units.pop()
        named = f"Difference ({unit}) [95% CI]"
        rows = [{(named if k == column else k): (str(v).removesuffix(f" {unit}") if k == column else v)
                 for k, v in r.items()} for r in rows]
        column = named
    return nowrap(styled(rows, table.caption or "").set_table_styles(SMALL, overwrite=False), column)


def key_difference(delivered, comparison_id: str) -> str:
    """One comparison of a delivered registered claim: its difference with its 95% interval."""
    for r in delivered.verdict.comparisons:
        if r.comparison.id == comparison_id:
            return estimate_cell(r)
    raise ValueError(f"claim {delivered.verdict.claim.id!r} has no comparison {comparison_id!r}")

