"""What every section of chapter 07 shares (causal character language models, associative
recall): the runs of a grid as a page shows them, how variants, values and tables are shown and
glued, and the claim register's comparisons in the page's tables.

Each section of the chapter loads its runs with one call and shows what its page module returns,
so that every section reruns on its own after the chapter's setup cell:

    lm = charlm_runs(page, seeds, recompute)      # Runs: grid, records, frame, stored, budget
    nope_runs(...), sweep_runs(...)                # the other grids; load_runs(...) for any grid
    registered = register_rows(claim, "causal_charlm", preset)   # the register's rows (book preset)
    glue_values(numbers)                           # the numbers its prose glues, as text
    glue_folded("ch07_fold_setup", table)          # secondary material, for a folded block

``page`` is the chapter's :class:`polyattn.presets.Prologue`: its preset, device, whether it
trains, and the phrase that stands for a number it does not compute.  Under the ``book`` preset
the claim register's comparisons of the same runs replace the page's own in the tables (marked
‡, :func:`register_rows`); the register reads the book's records only, so other presets keep
their own numbers.

The sections' tables, figures and numbers: :mod:`polyattn.studies.causal.setup` (the variants and the
setup), :mod:`polyattn.studies.causal.bpc` (bits per character), :mod:`polyattn.studies.causal.lengths`
(length generalisation, without position encodings), :mod:`polyattn.studies.causal.sweep` (the √N
scaling across training lengths), :mod:`polyattn.studies.causal.sinks` (attention sinks),
:mod:`polyattn.studies.causal.samples` (generated text, attention maps), :mod:`polyattn.studies.causal.recall`
(associative recall) and :mod:`polyattn.studies.causal.survey` (the survey article's table).
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

import pandas as pd

from ... import analysis
from ...analysis import causal as ca
from ...analysis import length_sweep as ls
from ...analysis.tables import interval_cell
from ...book.deliver import styled
from ...claims import claim
from ...claims.report import comparison_rows
from ...display import label as display_label
from ...labels import charlm_label
from ...pages.shown import compact, fold, glue_keyed  # noqa: F401  (compact: chapter 07 reads it here)
from ...runs import load_or_run_all, page_records

#: Marks a comparison whose numbers and result are the claim register's.
REGISTERED = "‡"
#: The multiples of the training context every model is evaluated at.
MULTIPLES = tuple(m for _, m in ca.LENGTH_METRICS)


def show(label: str) -> str:
    """A variant's label as the reader sees it (x³/√(i+1), not x^3/sqrt(i+1))."""
    return display_label(label)


#: Glue each value under its key, for the page's ``{glue:text}`` and ``{glue:md}`` references.
glue_values = glue_keyed


def unbroken(text: str) -> str:
    """``text`` with no-break spaces, so that a difference and its interval stay on one line."""
    return text.replace(" ", "\u00a0")


#: Glue a table, figure or Markdown for a folded block of the page (``{glue}`` in a dropdown).
glue_folded = fold


# --- the runs -------------------------------------------------------------------------------------


class Runs:
    """The records of one grid as a page shows them: ``grid`` (the configs), ``records`` (those
    loaded, in grid order), ``frame`` (:func:`polyattn.analysis.causal.variant_frame`, or the
    sweep's frame), ``stored`` ("33 of 33") and ``budget`` (the compute, in words).  False when
    there is no record (a preset that trains nothing, or a grid not yet run)."""

    def __init__(self, grid: Sequence, records: Sequence[dict], preset: str, missing: str = "", loaded: bool = True):
        self.grid, self.records, self.preset, self.missing = list(grid), list(records), preset, missing
        #: whether the preset loads this grid at all (False: every number reads ``missing``)
        self.loaded = loaded
        self._frame = None

    def __bool__(self) -> bool:
        return bool(self.records)

    @property
    def frame(self) -> pd.DataFrame:
        if self._frame is None:
            self._frame = ca.variant_frame(self.records) if self.records else pd.DataFrame()
        return self._frame

    @property
    def stored(self) -> str:
        return f"{len(self.records):,} of {len(self.grid):,}"

    @property
    def seeds(self) -> list[int]:
        return sorted({int(r["seed"]) for r in self.records})

    @property
    def budget(self) -> str:
        return analysis.budget_text(analysis.compute_budget(self.records)) if self.records else self.missing


_TRAINED: dict = {}


def load_runs(name: str, grid_fn, page, seeds, recompute: bool, stored_only: bool, desc: str) -> Runs:
    """The records of the grid ``grid_fn(preset, seeds)``: read (``stored_only`` at the book preset)
    or loaded and, where missing, trained (``desc`` names them while they train); what a preset
    trains is kept for the kernel's life under ``name``, so a section rerun or a second section
    does not train it again."""
    grid = page.on_device(grid_fn(page.preset, seeds))
    if not page.trains:
        return Runs(grid, [], page.preset, page.not_run, loaded=False)
    key = (name, page.preset, page.device, None if seeds is None else tuple(seeds), bool(recompute))
    trains = recompute or page.preset != "book" or not stored_only
    if key in _TRAINED:
        return _TRAINED[key]
    if stored_only:
        records = page_records(grid, page.preset, recompute=recompute, desc=desc, progress=False)
    else:
        records = load_or_run_all(grid, recompute=recompute, desc=desc, progress=False)
    runs = Runs(grid, records, page.preset, page.not_run)
    if trains:
        _TRAINED[key] = runs
    return runs


def charlm_runs(page, seeds=None, recompute: bool = False) -> Runs:
    """The character language models with sinusoidal positions (grid ``causal_charlm``)."""
    from ...experiments import causal

    return load_runs("charlm", causal.charlm, page, seeds, recompute, False, "causal LMs")


def nope_runs(page, seeds=None, recompute: bool = False) -> Runs:
    """The models without position encodings (``causal_charlm_nope``); at the book preset only the
    stored runs."""
    from ...experiments import causal

    return load_runs("nope", causal.charlm_nope, page, seeds, recompute, True, "causal LMs without positions")


def sweep_runs(page, seeds=None, recompute: bool = False) -> Runs:
    """The length sweep (``causal_length_sweep``): at the book preset only the stored runs (the grid
    trains for hours), with :func:`polyattn.analysis.length_sweep.sweep_frame` as ``frame``."""
    from ...experiments import causal

    runs = load_runs("sweep", causal.length_sweep, page, seeds, recompute, True, "length sweep")
    runs._frame = ls.sweep_frame(runs.records)
    return runs


def training_steps(cfg) -> int:
    """The optimiser steps of a character-LM config: its windows per epoch over the batch size, times its epochs."""
    return (cfg.options["windows"] // cfg.batch_size) * cfg.epochs


def scale_caption(runs: Runs) -> str:
    """The scale of a grid's runs for a caption: model, data, context, steps, seeds, preset."""
    cfg = runs.grid[0]
    data = "King James Bible" if cfg.dataset == "bible_kjv" else f"generated text ({cfg.dataset})"
    return (f"{cfg.model} character LM, {data}, T = {cfg.options['context']}, {training_steps(cfg):,} steps, "
            f"{len(runs.seeds)} seed(s), preset {runs.preset}")


# --- the register's comparisons in the page's tables ------------------------------------------------


def register_rows(delivered, grid: str, preset: str) -> dict[tuple, dict]:
    """``{(candidate label, baseline label, metric): row}`` of a delivered claim's comparisons on
    ``grid``: the row of :func:`polyattn.claims.report.comparison_rows` with the comparison's result
    under ``"numbers"``; empty unless ``preset`` is the book's, whose records the register reads."""
    if preset != "book":
        return {}
    v = delivered.verdict
    return {(charlm_label(dict(r.comparison.candidate.fields)), charlm_label(dict(r.comparison.baseline.fields)),
             r.comparison.metric): {**row, "numbers": r}
            for r, row in zip(v.comparisons, comparison_rows(v)) if r.comparison.candidate.grid == grid}


def register_cell(row: dict, fmt: str = "+.3f") -> str:
    """A register comparison's difference and interval (blank without pairs), marked ‡."""
    r = row["numbers"]
    return f"{interval_cell(r.mean, r.ci_low, r.ci_high, fmt)} {REGISTERED}" if r.n else ""


def register_summary(registered: Mapping[tuple, dict], preset: str = "book") -> str:
    """A section's register comparisons (:func:`register_rows`) in one phrase, equal ones together:
    "all 7 (x³/√(i+1), ...): +0.000 [+0.000, +0.000] share (3 of 3 pairs), uninformative"; "none"
    without any; under another preset than the book's, a phrase saying the register reads the book's."""
    if preset != "book":
        return "not shown at this preset (the register reads the book preset's records only)"
    groups: dict = {}
    for (candidate, _, _), row in registered.items():
        groups.setdefault((row["Difference [95% CI]"], row["Pairs"], row["Result"]), []).append(show(candidate))
    parts = [f"{', '.join(names)}: {diff} ({pairs} pairs), {result}" for (diff, pairs, result), names in groups.items()]
    if len(groups) == 1 and len(registered) > 1:
        return f"all {len(registered)} ({parts[0].replace(': ', '): ', 1)}"
    return "; ".join(parts) or "none"


def claim_values(prefix: str, delivered) -> dict:
    """What the prose says of a delivered claim beside its verdict: ``<prefix>_notes``, what of it
    was fixed after its runs (the margin, the comparisons, the chance level) in the register's
    words, or a phrase saying nothing was; ``<prefix>_family``, its number of comparisons;
    ``<prefix>_chance_band``, how near the chance level (in the metric's unit) both models of a
    comparison must be for it to count as uninformative."""
    c = delivered.verdict.claim
    notes = list(dict.fromkeys(t for t in (getattr(c, "registered_after", None),
                                           getattr(c, "chance_registered_after", None)) if t))
    return {f"{prefix}_notes": "; ".join(notes) or "nothing (margin, comparisons and chance level were fixed "
                                                   "before the runs)",
            f"{prefix}_family": len(c.comparisons),
            f"{prefix}_chance_band": f"{c.chance_band:g}" if getattr(c, "chance_band", None) else "not set"}


def claims_table(delivered: Sequence, caption: str, min_pairs: int = 1, names: Optional[Mapping[str, str]] = None,
                 roles: Optional[Sequence[str]] = None):
    """The comparisons of delivered claims as one compact table (claim, comparison, role, pairs,
    difference, Holm p, TOST p, result), only those with at least ``min_pairs`` stored pairs; the
    claim column only for several claims (``names``: a short name per claim id, else the id in
    words); the difference without its unit, which the caption states.  None when no comparison has
    stored pairs (the page then shows no table, not rows of placeholders).  ``roles``: only the
    comparisons of these roles (primary, check, description), all by default."""
    rows = []
    for d in delivered:
        cid = d.verdict.claim.id
        for r, row in zip(d.verdict.comparisons, comparison_rows(d.verdict)):
            if r.n >= min_pairs and (roles is None or row["Role"] in roles):
                unit = getattr(r, "unit", "") or ""
                diff = row["Difference [95% CI]"]
                rows.append({**({"claim": (names or {}).get(cid, cid.replace("_", " "))} if len(delivered) > 1 else {}),
                             "comparison": row["Comparison"], "role": row["Role"], "pairs": row["Pairs"],
                             "difference [95% CI]": unbroken(diff.removesuffix(" " + unit) if unit else diff),
                             "Holm p": row["Holm p"], "TOST p": row["TOST p"], "result": row["Result"]})
    if not rows:
        return None
    if len({r["pairs"] for r in rows}) == 1:         # the same pairs in every row: said once, in the caption
        caption += f". Pairs: {rows[0]['pairs']} in every row"
        for r in rows:
            del r["pairs"]
    return compact(styled(rows, caption), ["pairs", "Holm p", "TOST p"])


def margin() -> float:
    """The equivalence margin of every bits/char comparison on the page (the register's)."""
    return float(claim("lm_vs_softmax").margin)


def rope_runs(page, seeds=None, recompute: bool = False) -> Runs:
    """The length sweep with rotary positions (``causal_length_rope``): at the book preset only the
    stored runs (the grid trains for hours)."""
    from ...experiments import causal_rope

    return load_runs("rope", causal_rope.length_rope, page, seeds, recompute, True, "RoPE length sweep")


def probe_runs(page, recompute: bool = False) -> Runs:
    """Softmax's probes of the rotary-position sweep's budget (``causal_length_probe``), stored only at
    the book preset."""
    from ...experiments import causal_rope

    return load_runs("rope_probe", causal_rope.length_probe, page, None, recompute, True, "length probes")
