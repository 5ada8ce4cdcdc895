"""Chapter 09's page code that its sections share (the reviewers' remaining objections).

The verdicts and the numbers of their sentences come from the measure modules of chapter 09
(``polyattn.measures.critique_*``) and the claim register; the page modules shape what the page
shows beside them, one module for each section of the chapter or for a few sections that read the
same records:

* :mod:`.critique_paradox`: the norm paradox (Table 1's records);
* :mod:`.critique_scale`: scale sensitivity, on one axis (the scale sweep's records);
* :mod:`.critique_gradients`: powers and gradients without training (the random-score survey,
  Table 1's records and the short retrainings);
* :mod:`.critique_outliers`: extreme entries (the short retrainings);
* :mod:`.critique_maps`: attention maps (the short retrainings);
* :mod:`.critique_trained`: the critique grids trained at Table 1's scale, described (the powers,
  the Q/K controls, the weight decay of every matrix);
* :mod:`.critique_register`: the claim register's comparisons in compact tables, and the
  alternatives to the 1/sqrt(N) factor without clipping;
* :mod:`.critique_summary`: what this scale does not settle, the reviewers' checklist and the
  closing table.

This module holds what they share: the records, the captions' deviations, the compact table
style and the glued values.  Each section of the chapter loads what it shows with one call, so
that it reruns on its own after the setup cell (``page`` is the chapter's
:class:`polyattn.presets.Prologue`):

    table1_records(page); sweep_records(page)            # committed records, never trained here
    short_runs(page, recompute)                          # the short retrainings of Table 1's model
    trained_runs(page, "critique_powers", seeds, recompute)   # a trained critique grid (Runs)
    glue_values(source_numbers(page, recompute))         # what the chapter computes from

and then, per section, one table (``*_table``), at most one figure (``*_figure``) and the numbers
its prose glues (``*_numbers``, or :func:`glue_numbers` over a finding's numbers with
:data:`FORMATS`).  What the page folds away (detail tables, the register's full tables) is glued
with :func:`glue_folded`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from ...analysis.tables import number_cell
from ...book.deliver import glue, stored_records
from ...measures.critique_outliers import N_BOOT
from ...pages.shown import compact as _compact
from ...pages.shown import fold, glue_keyed
from ...runs import load_or_run_all, page_records

#: The unscaled cube of the reviewers' objections and the paper's x^3/sqrt(N).
UNSCALED, SCALED = "poly:p=3,c=1", "poly:p=3"

#: What each caption says of the runs against the paper's (the records of Table 1's analogue, the
#: short retrainings).
TABLE1_DEVIATION = "; a micro ViT on Fashion-MNIST, not the paper's ViTs on Tiny-ImageNet and ImageNet-1k"
SHORT_DEVIATION = ("; a short retraining of a micro ViT on Fashion-MNIST, not the paper's ViTs trained on "
                   "Tiny-ImageNet and ImageNet-1k")

#: A table of many short columns in smaller type, so that it fits the page's column.
SMALL_TYPE = [{"selector": "th, td", "props": "font-size: 0.85em"}]


def compact(table):
    """:func:`polyattn.pages.shown.compact` across the page's column (a Markdown note as it is)."""
    return _compact(table, full_width=True)


#: The format of each number a section's prose glues, by glue prefix (keys of the finding's numbers).
FORMATS = {
    "ch09_paradox": {"attention_below_first_probe": ".0%", "jacobian_below_first_probe": ".0%",
                     "attention_below_later_probes": ".0%", "jacobian_below_later_probes": ".0%",
                     "attention_above_from_step": "d", "last_probed_step": "d", "strong_rho": "g"},
    "ch09_scale": {"paper_k": "", "training_images": ",", "epochs": "d", "seed_sd_mean": ".1f", "margin": "g"},
    "ch09_powers": {"random_small_sigma": "g", "random_unit_sigma": "g", "random_p7_small_sigma": ".1e",
                    "random_p7_unit_sigma": ".3g", "crossing_sigma_min": ".2f", "crossing_sigma_max": ".2f",
                    "training_seconds": ".0f", "short_runs": "d"},
    "ch09_saturation": {"random_softmax_min": ".2f", "random_softmax_max": ".2f",
                        "random_half_saturated_sigma": "g", "saturated_share_max": ".1%", "score_std_max": ".2f"},
    "ch09_outlier": {"factor": "g", "images": "d"},
    "ch09_maps": {"uniform_distance": ".2f", "test_images": "d"},
}


# --- table cells and glued values -----------------------------------------------------------------


def first_only(values: Iterable) -> list:
    """The values with each repeat of the one above blanked, for a table's grouping column."""
    values = list(values)
    return [v if i == 0 or v != values[i - 1] else "" for i, v in enumerate(values)]


def before_after(before: float, after: float) -> str:
    """A table cell "before → after", each number as the book's tables write it."""
    return f"{number_cell(before)} → {number_cell(after)}"


def formatted(numbers: Mapping[str, object], formats: Mapping[str, str]) -> dict[str, str]:
    """``{key: format(numbers[key], spec)}`` for each key of ``formats`` (a string is kept as it
    is; a missing number reads "not stored")."""
    out = {}
    for key, spec in formats.items():
        value = numbers.get(key)
        out[key] = ("not stored" if value is None or (isinstance(value, float) and math.isnan(value)) else
                    value if isinstance(value, str) else format(value, spec))
    return out


def glue_numbers(prefix: str, numbers: Mapping[str, object], formats: Optional[Mapping[str, str]] = None
                 ) -> dict[str, str]:
    """Glue each number of ``formats`` (default :data:`FORMATS` of ``prefix``) as ``<prefix>_<key>``
    (text, formatted by its spec, with the minus signs and powers of ten a reader reads) for the
    page's ``{glue:text}`` references."""
    values = formatted(numbers, FORMATS[prefix] if formats is None else formats)
    for key, text in values.items():
        glue(f"{prefix}_{key}", text, display=False)
    return values


#: Glue each value under its key, for the page's ``{glue:text}`` and ``{glue:md}`` references.
glue_values = glue_keyed


def glue_folded(name: str, shown) -> None:
    """Glue a table or figure for a folded part of the page (``{glue}`` in a dropdown): a figure is
    closed so that it is not shown where it is made; nothing to show (``None``) glues a note."""
    fold(name, shown, nothing_stored("Not computed at this preset: its records are not stored") if shown is None else None)


def n_boot(preset: str) -> int:
    """Bootstrap resamples for the page's intervals: the register's 2,000 at the book preset."""
    return N_BOOT if preset == "book" else 200


# --- the records ----------------------------------------------------------------------------------


@dataclass
class Runs:
    """The records of one grid as the page shows them: ``grid`` (the configs, in grid order) and
    ``records`` (those loaded; at the book preset a read-only grid may have fewer)."""
    grid: list
    records: list = field(default_factory=list)

    @property
    def config(self):
        return self.grid[0]

    @property
    def complete(self) -> bool:
        return bool(self.grid) and len(self.records) == len(self.grid)

    @property
    def measured(self) -> list:
        """The records that stored what the run measured of its model (a diverged run stores none)."""
        return [r for r in self.records if r["status"] == "ok" and r.get("final")]

    @property
    def all_measured(self) -> bool:
        """Every planned run is stored with its measurements (the short retrainings' questions
        compare activations, so each waits for all of them)."""
        return bool(self.grid) and len(self.measured) == len(self.grid)

    @property
    def seeds(self) -> list:
        return sorted({c.seed for c in self.grid})


def table1_records(page) -> list:
    """The committed records of the Table 1 analogue (chapter 04): read, never trained here."""
    from ...experiments import vit

    return stored_records(vit.table1("book")) if page.trains else []


def sweep_records(page) -> list:
    """The committed records of the scale sweep (chapter 04): read, never trained here."""
    from ...experiments import vit

    return stored_records(vit.scale_sweep("book")) if page.trains else []


def short_runs(page, recompute: bool = False) -> Runs:
    """The short retrainings of Table 1's model (grid ``critique_short_retrain`` at the page's
    preset): loaded, or trained where a record is missing (seconds under smoke)."""
    from ...experiments import GRIDS
    grid = page.on_device(GRIDS["critique_short_retrain"](page.preset if page.trains else "book"))
    if not page.trains:
        return Runs(grid)
    return Runs(grid, load_or_run_all(grid, recompute=recompute, desc="short retrainings", progress=False))


def trained_runs(page, name: str, seeds=None, recompute: bool = False, read_only: bool = False) -> Runs:
    """A trained critique grid at the page's preset: loaded, or trained where a record is missing;
    with ``read_only`` the book preset reads stored records only (:func:`polyattn.runs.page_records`)."""
    from ...experiments import GRIDS
    grid = page.on_device(GRIDS[name](page.preset if page.trains else "book", seeds))
    if not page.trains:
        return Runs(grid)
    desc = name.replace("critique_", "").replace("_", " ")
    records = (page_records(grid, page.preset, recompute, desc=desc, progress=False) if read_only else
               load_or_run_all(grid, recompute=recompute, desc=desc, progress=False))
    return Runs(grid, records)


def nothing_stored(what: str = "No record of this grid is stored at this preset"):
    """What a section shows in place of a table or figure it cannot compute yet (Markdown)."""
    from IPython.display import Markdown

    return Markdown(f"*{what}.*")


def short_pending(runs: Runs):
    """What a section on the short retrainings shows until every one of them is stored with its
    measurements (Markdown)."""
    return nothing_stored(f"{len(runs.measured)} of the {len(runs.grid)} short retrainings are stored with their "
                          "measurements; every question here compares activations, so it waits for all of them")


def source_numbers(page, recompute: bool = False) -> dict:
    """What the chapter computes from, as glue values ``ch09_<key>``: Table 1's tokens and seeds,
    the records found of Table 1 and the scale sweep, and the short retrainings' settings."""
    from ...experiments import vit

    t1, sweep = vit.table1("book"), vit.scale_sweep("book")
    short = short_runs(page, recompute)
    c = short.config
    return {"ch09_t1_n": t1[0].seq_len, "ch09_t1_seeds": len({x.seed for x in t1}),
            "ch09_t1_stored": len(table1_records(page)), "ch09_t1_planned": len(t1),
            "ch09_sweep_stored": len(sweep_records(page)), "ch09_sweep_planned": len(sweep),
            "ch09_short_stored": len(short.measured), "ch09_short_planned": len(short.grid),
            "ch09_retrain_images": f"{c.train_subset:,}", "ch09_retrain_epochs": c.epochs,
            "ch09_retrain_batch": c.batch_size, "ch09_retrain_test": c.test_subset, "ch09_retrain_preset": c.preset}
