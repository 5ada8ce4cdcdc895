"""What every section of chapter 04 shares (the ViT on Fashion-MNIST): loading a grid's runs,
the claim register's numbers for the prose and its tables, glued values and folded blocks, and the
results table, the per-seed table and the accuracy curves of a grid of activations.

Each section of the chapter loads its runs with one call and shows what its page module returns,
so that every section reruns on its own after the chapter's setup cell:

    records = runs(page, vit.table1, seeds, recompute)    # stored records, or trained ones
    results_table(records, registered, caption)           # accuracy and each difference from softmax
    curves_figure(records, groups, preset)                # test accuracy per epoch, a few lines a panel
    glue_values(numbers)                                  # the numbers the prose glues, as text
    glue_folded("ch04_fold_t1_seeds", table)              # secondary material, for a folded block

``groups`` are a section's panels (:data:`polyattn.studies.vit.table1.TABLE1_GROUPS`,
:data:`polyattn.studies.vit.converged.CONVERGED_GROUPS`).

``page`` is the chapter's :class:`polyattn.presets.Prologue`.  A comparison that the claim
register makes shows the register's numbers and result (marked ‡, from
:func:`polyattn.book.deliver.registered_rows`); every other comparison is description: its
difference, interval and seed pairs, without a result word.  The register reads the book preset's
records, so the numbers of the prose that quote it (:func:`claim_numbers`) are the book's at any
preset.

The sections' tables, figures and numbers: :mod:`polyattn.studies.vit.setup` (how the comparisons
are judged, what the paper ran), :mod:`polyattn.studies.vit.table1` (the Table 1 analogue),
:mod:`polyattn.studies.vit.table2` (the Table 2 analogue, and its recipe at the converged tier's
scale), :mod:`polyattn.studies.vit.scale_sweep` (which scale wins at which length, Figure 1),
:mod:`polyattn.studies.vit.converged` (the converged tier), :mod:`polyattn.studies.vit.unclipped`
(the recipes without gradient clipping), :mod:`polyattn.studies.vit.learned_scale` (the quadratic
with a learned scale) and :mod:`polyattn.studies.vit.findings` (the closing list).
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import pandas as pd

from ... import analysis
from ...analysis.tables import interval_cell, number_cell, registered_cell
from ...book.deliver import glue, registered_rows, styled
from ...book.views import SMALL, per_seed_view, with_note
from ...claims.register import claim
from ...claims.report import answer_rows, comparison_rows
from ...display import name
from ...pages.shown import glue_keyed
from ...runs import load_or_run_all, page_records

#: Marks a comparison whose numbers and result are the claim register's.
REGISTERED = "‡"
#: Said in a table's caption when some of its rows are the register's and the rest description.
DESCRIPTION_NOTE = ("rows marked ‡ are comparisons of registered claims, with the register's numbers and result; "
                    "the other differences are description, not tests")
#: The smallest font of the figures (points).
FONT = 9
#: The widest figure (inches): about the page's column, so that a figure is not shrunk to fit it.
WIDTH = 8.4


#: Glue each value under its key, for the page's ``{glue:text}`` and ``{glue:md}`` references.
glue_values = glue_keyed


def number_text(x, fmt: str = ".2f", missing: str = "not computed") -> str:
    """A number for the prose, with a true minus sign; ``missing`` when it is None or NaN."""
    if x is None or (isinstance(x, float) and x != x):
        return missing
    return number_cell(x, fmt)


def margin() -> float:
    """The equivalence margin (accuracy points) of the chapter's claims, from the register."""
    return claim("table_parity").margin


# --- the claim register's numbers -------------------------------------------------------------------


def claim_rows(delivered) -> dict[str, dict]:
    """Comparison id -> its row (:func:`polyattn.claims.report.comparison_rows`) of a delivered claim."""
    v = delivered.verdict
    return {r.comparison.id: row for r, row in zip(v.comparisons, comparison_rows(v))}


def claim_numbers(prefix: str, delivered, comparison_id: str) -> dict[str, str]:
    """One comparison of a delivered claim for the prose: ``<prefix>_diff`` (difference with its
    95% interval), ``_pairs``, ``_holm`` and ``_result`` (the register's word)."""
    row = claim_rows(delivered)[comparison_id]
    return {f"{prefix}_diff": row["Difference [95% CI]"], f"{prefix}_pairs": row["Pairs"],
            f"{prefix}_holm": row["Holm p"], f"{prefix}_result": row["Result"]}


def claim_table(delivered, min_pairs: int = 2):
    """A delivered claim's table without the comparisons that have fewer than ``min_pairs``
    stored seed pairs (no interval and no test yet; the caption names them), None when no
    comparison has that many."""
    columns = list(delivered.table.data.columns)
    rows = list(zip(delivered.verdict.comparisons, claim_rows(delivered).values()))
    kept = [{k: row[k] for k in columns} for r, row in rows if r.n >= min_pairs]
    if not kept:
        return None
    waiting = [row["Comparison"] for r, row in rows if r.n < min_pairs]
    note = f"left out until {min_pairs} seed pairs are stored: {'; '.join(waiting)}" if waiting else ""
    return styled(kept, with_note(delivered.table.caption or "", note) if note else delivered.table.caption or "")


def registered(grid: str, delivered: Sequence, preset: str, pooled: bool = False) -> dict[str, dict]:
    """Activation -> the register's comparison with softmax in ``grid`` (book preset only)."""
    return registered_rows(grid, delivered, pooled=pooled, preset=preset)


def verdict_numbers(prefix: str, delivered) -> dict[str, str]:
    """A registered claim's verdict for the prose: ``<prefix>_form`` (the register's word, † when its
    margin or chance level was fixed after runs were seen, "(interim)" while planned pairs are
    missing) and ``<prefix>_key`` (its key comparison with the difference and 95% interval)."""
    v = delivered.verdict
    rows = answer_rows({v.claim.id: v}, [v.claim.id])
    late = bool(v.claim.registered_after or v.claim.chance_registered_after)
    if not rows:
        return {f"{prefix}_form": v.form + ("†" if late else ""),
                f"{prefix}_key": "no comparison has two paired runs yet"}
    r = rows[0]
    return {f"{prefix}_form": r["verdict"] + ("†" if r["late"] else "") + (" (interim)" if r["interim"] else ""),
            f"{prefix}_key": r["key number"]}


def grid_stored(grid_name: str, root=None) -> tuple[int, int]:
    """(stored, planned) runs of a grid at the book preset (records under ``root``, default the
    book's store)."""
    from ...experiments import GRIDS
    configs = GRIDS[grid_name]("book", None)
    return len(page_records(configs, "book", root=root)), len(configs)


def to_run(grid_name: str, root=None) -> str:
    """"5 of the 35 runs of the grid `vit_converged` are still to run" (Markdown), or that none or
    every run of it is stored."""
    stored, planned = grid_stored(grid_name, root)
    if stored >= planned:
        return f"all {planned:,} runs of the grid `{grid_name}` are stored"
    if stored == 0:
        return f"none of the {planned:,} runs of the grid `{grid_name}` is stored yet"
    return (f"{planned - stored:,} of the {planned:,} runs of the grid `{grid_name}` "
            f"{'is' if planned - stored == 1 else 'are'} still to run")


def glue_folded(name_: str, shown, missing: str = "No record of this grid is stored at this preset") -> None:
    """Glue a table or figure for a folded part of the page (``{glue}`` in a dropdown): a figure is
    closed so that it is not shown where it is made; nothing to show (None) glues ``missing``."""
    from IPython.display import Markdown

    glue(name_, Markdown(f"*{missing}.*") if shown is None else shown, display=False)
    if hasattr(shown, "savefig"):
        import matplotlib.pyplot as plt

        plt.close(shown)


def compact_claims_table(delivered: Sequence, min_pairs: int = 2):
    """The comparisons of one or more delivered claims in four columns (comparison, difference
    [95% CI], pairs, the register's result), without those with fewer than ``min_pairs`` stored
    pairs (the caption names them); None when none has that many.  Holm and TOST p are in the
    register's full table (``delivered.table``)."""
    rows, waiting, heads, tails = [], [], [], []
    for d in delivered:
        caption = d.table.caption or ""
        head, _, tail = caption.partition(": ")
        heads.append(head)
        tails.append(tail)
        for r, row in zip(d.verdict.comparisons, claim_rows(d).values()):
            if r.n >= min_pairs:
                rows.append({"Comparison": row["Comparison"], "Difference [95% CI]": row["Difference [95% CI]"],
                             "Pairs": row["Pairs"], "Result": row["Result"]})
            else:
                waiting.append(f"{row['Comparison']} ({row['Pairs']} pairs stored)")
    if not rows:
        return None
    tails = list(dict.fromkeys(tails))
    caption = (" / ".join(heads) + ": " + tails[0]) if len(tails) == 1 else "; ".join(
        f"{h}: {t}" for h, t in zip(heads, tails))
    caption += "; the register's comparisons (Holm and TOST p in its full account, folded below)"
    if waiting:
        caption += f"; left out until {min_pairs} seed pairs are stored: {'; '.join(waiting)}"
    return styled(rows, caption)


# --- loading ---------------------------------------------------------------------------------------------


def runs(page, grid: Callable, seeds=None, recompute: bool = False, stored_only: bool = False) -> list[dict]:
    """The records of ``grid(preset, seeds)`` for the page: none when the page trains nothing
    (preset paper); with ``stored_only`` the stored records at the book preset
    (:func:`polyattn.runs.page_records`), else every record, trained where missing."""
    if not page.trains:
        return []
    configs = page.on_device(grid(page.preset, seeds))
    if stored_only:
        return page_records(configs, page.preset, recompute=recompute, progress=False)
    return load_or_run_all(configs, recompute=recompute, progress=False)


def book_runs(grid: Callable) -> list[dict]:
    """The committed records of a grid that only the book preset runs (hours a run, never trained
    by a page), read at every preset."""
    return page_records(grid("book"), "book")


def caption(page, grid: Callable, records: list[dict], seeds=None) -> str:
    """What a grid trains at the page's preset (:func:`polyattn.analysis.grid_caption`)."""
    if not page.trains:
        return page.not_run
    return analysis.grid_caption(grid(page.preset, seeds), records, page.preset)


# --- results tables ----------------------------------------------------------------------------------


def _ordered(frame: pd.DataFrame, order: Optional[Sequence[str]]) -> pd.DataFrame:
    if not order:
        return frame
    rank = {a: i for i, a in enumerate(order)}
    return frame.sort_values("activation", key=lambda s: s.map(lambda a: rank.get(a, len(rank))), kind="stable")


def result_rows(records: list[dict], claims: Optional[dict] = None, order: Optional[Sequence[str]] = None,
                baseline: str = "softmax") -> list[dict]:
    """One row per activation: final test accuracy (mean ± sd over seeds, diverged runs counted
    apart), the paired difference from ``baseline`` with its 95% interval, the seed pairs and,
    for a comparison of a registered claim (``claims``: activation -> the register's row), the
    register's numbers and result, marked ‡."""
    claims = claims or {}
    final = analysis.final_accuracy(records)
    summary = _ordered(analysis.summary_table(final), order)
    diffs = analysis.paired_difference(final, baseline=baseline, margin=margin()).set_index("activation")
    rows = []
    for s in summary.to_dict("records"):
        act = s["activation"]
        acc = number_text(s["mean"], ".2f", "–") + ("" if s["std"] != s["std"] else f" ± {s['std']:.2f}")
        if s["n_diverged"]:
            acc += f" ({s['n_diverged']} diverged)"
        reg = claims.get(act)
        if act == baseline:
            diff, pairs, result = "baseline", "", ""
        elif reg is not None:
            diff, pairs, result = registered_cell(reg), reg["Pairs"], reg["Result"]
        else:
            d = diffs.loc[act]
            diff = interval_cell(d["mean_diff"], d["ci_low"], d["ci_high"], missing="not comparable")
            pairs, result = str(int(d["n_pairs"])), ""
        rows.append({"Activation": name(act), "Test accuracy (%), mean ± sd": acc,
                     f"Δ vs {name(baseline)}, points [95% CI]": diff, "Seed pairs": pairs, "Register's result": result})
    if not any(r["Register's result"] for r in rows):
        for r in rows:
            del r["Register's result"]
    return rows


def results_table(records: list[dict], claims: Optional[dict] = None, caption_text: str = "",
                  order: Optional[Sequence[str]] = None):
    """:func:`result_rows` as a styled table; the caption says which rows are description."""
    if not records:
        return None
    rows = result_rows(records, claims, order)
    note = DESCRIPTION_NOTE if any(r.get("Register's result") for r in rows) else \
        "every difference is description, not a test"
    return styled(rows, with_note(caption_text, note)).set_table_styles(SMALL, overwrite=False)


def per_seed_table(records: list[dict], caption_text: str, index=("activation",)):
    """The final test accuracy of every run, one column per seed."""
    if not records:
        return None
    return per_seed_view(analysis.final_accuracy(records), index=list(index), caption=caption_text)


# --- figures ---------------------------------------------------------------------------------------------


def curves_figure(records: list[dict], groups: Sequence[tuple], preset: str, ylabel: str = "test accuracy (%)"):
    """Test accuracy per epoch, mean ± sd over seeds, one panel per ``(title, activations)``
    group (a panel with no run besides softmax's is dropped); None without records."""
    import matplotlib.pyplot as plt

    from ... import analysis, plotting

    if not records:
        return None
    frame = analysis.records_to_frame(records).dropna(subset=["epoch"])
    frame["acc"] = frame["test_acc"] * analysis.PERCENT
    panels = [(t, [a for a in specs if (frame["activation"] == a).any()]) for t, specs in groups]
    panels = [(t, specs) for t, specs in panels if set(specs) - {"softmax"}]     # softmax alone says nothing
    # at most WIDTH inches in all, so that the page shows the fonts at their size
    fig, axes = plt.subplots(1, len(panels), figsize=(min(4.1 * len(panels), WIDTH), 3.6), sharey=True, squeeze=False)
    for ax, (title, specs) in zip(axes[0], panels):
        plotting.line_plot(frame, x="epoch", y="acc", ax=ax, order=specs, legend=False, band="std")
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles, [name(s) for s in labels], fontsize=FONT, frameon=False, loc="lower right")
        ax.set_title(title, fontsize=FONT + 1)
        ax.set_xlabel("epoch")
        ax.set_ylabel(ylabel if ax is axes[0][0] else "")
    seeds = frame.groupby("activation")["seed"].nunique()
    note = f"{seeds.min()}–{seeds.max()} seeds a line" if seeds.min() != seeds.max() else f"{seeds.min()} seed(s) a line"
    plotting.stamp(axes[0][-1], preset, note, loc="upper left").set_fontsize(FONT)
    fig.tight_layout()
    return fig
