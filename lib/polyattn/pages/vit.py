"""Chapter 04's tables, figures and glued values (the ViT on Fashion-MNIST).

Each section of the chapter loads its runs with one call and shows what this module returns, so
that every section reruns on its own after the chapter's setup cell:

    records = runs(page, vit.table1, seeds, recompute)    # stored records, or trained ones
    results_table(records, registered, caption)           # accuracy and each difference from softmax
    curves_figure(records, TABLE1_GROUPS, preset)         # test accuracy per epoch, a few lines a panel
    glue_values(power_numbers(records))                   # the numbers the prose glues, as text

``page`` is the chapter's :class:`polyattn.presets.Prologue`.  A comparison that the claim
register makes shows the register's numbers and result (marked ‡, from
:func:`polyattn.book.deliver.registered_rows`); every other comparison is description: its
difference, interval and seed pairs, without a result word.  The register reads the book preset's
records, so the numbers of the prose that quote it (:func:`claim_numbers`) are the book's at any
preset.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..analysis.tables import interval_cell, number_cell, recipe_label, registered_cell
from ..display import name
from .shown import glue_keyed

#: Marks a comparison whose numbers and result are the claim register's.
REGISTERED = "‡"
#: Said in a table's caption when some of its rows are the register's and the rest description.
DESCRIPTION_NOTE = ("rows marked ‡ are comparisons of registered claims, with the register's numbers and result; "
                    "the other differences are description, not tests")
#: Table 1's activations in small multiples: the paper's family c·xᵖ, its neighbours, the wider family.
TABLE1_GROUPS = (
    ("The paper's family c·xᵖ", ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1", "poly:p=1", "poly:p=2")),
    ("Normalised neighbours", ("softmax", "relu_n", "sigmoid", "softpick")),
    ("The wider family", ("softmax", "taylor_softmax", "periodic", "power_softmax:p=2", "relu2_n")),
)
#: The converged tier's activations in two panels: the cubics, then the other powers.
CONVERGED_GROUPS = (
    ("Softmax and the cubics", ("softmax", "poly:p=3", "poly:p=3,c=1/14", "poly:p=3,c=1")),
    ("Softmax and the other powers", ("softmax", "poly:p=1", "poly:p=2", "poly_learned:p=2")),
)
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
    from ..claims.register import claim

    return claim("table_parity").margin


# --- the claim register's numbers -------------------------------------------------------------------


def claim_rows(delivered) -> dict[str, dict]:
    """Comparison id -> its row (:func:`polyattn.claims.report.comparison_rows`) of a delivered claim."""
    from ..claims.report import comparison_rows

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
    from ..book.deliver import styled
    from ..book.views import with_note

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
    from ..book.deliver import registered_rows

    return registered_rows(grid, delivered, pooled=pooled, preset=preset)


#: The closing list's short name of each claim of the chapter (the review checklist's where it has one).
SHORT_NAMES = {"table2_converged": "x³ matches softmax with the DeiT-style recipe, converged",
               "converged_unclipped": "converged without clipping: x³/√N matches softmax, unscaled x³ worse",
               "unclipped_parity": "scaled polynomials match softmax, unclipped"}
#: The label of the section that states a measured claim of the chapter.
MEASURED_SECTIONS = {"fig1_scale": "vit-scale"}


def short_name(claim_id: str) -> str:
    """A claim's name in a few words, for the closing list."""
    from ..claims.checklist import SHORT

    return {**SHORT, **SHORT_NAMES}.get(claim_id, claim_id)


def verdict_numbers(prefix: str, delivered) -> dict[str, str]:
    """A registered claim's verdict for the prose: ``<prefix>_form`` (the register's word, † when its
    margin or chance level was fixed after runs were seen, "(interim)" while planned pairs are
    missing) and ``<prefix>_key`` (its key comparison with the difference and 95% interval)."""
    from ..claims.report import answer_rows

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
    from ..experiments import GRIDS
    from ..runs import page_records

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


def findings_list(chapter: str = "04_vit") -> str:
    """The closing list (Markdown): one line per claim of ``chapter`` with paired runs, its short
    name linked to its section, the register's verdict and its key number, then each measured
    claim; the claims still waiting for runs in one sentence with their grids' stored runs."""
    from ..claims.evaluate import evaluate
    from ..claims.register import MEASURED, REGISTER
    from ..claims.report import answer_rows, section_label

    ids = [cid for cid, c in REGISTER.items() if c.chapter == chapter]
    verdicts = {cid: evaluate(cid) for cid in ids}
    rows = {r["id"]: r for r in answer_rows(verdicts, ids)}
    lines, waiting, late = [], [], False
    for cid in ids:
        link = f"{{ref}}`{short_name(cid)} <{section_label(cid)}>`"
        r = rows.get(cid)
        if r is None:
            grids = dict.fromkeys(g for c in verdicts[cid].claim.comparisons for g in (c.candidate.grid, c.baseline.grid))
            waiting.append(f"{link} (" + "; ".join(to_run(g) for g in grids) + ")")
            continue
        late = late or r["late"]
        mark = ("†" if r["late"] else "") + (" (interim)" if r["interim"] else "")
        lines.append(f"- {link}: **{r['verdict']}**{mark}; {r['key number']}")
    for cid, c in MEASURED.items():
        if c.chapter != chapter or c.machine_dependent:
            continue
        finding = c.evaluate()
        first = finding.summary.strip().split(". ")[0].rstrip(".")
        lines.append(f"- {{ref}}`{short_name(cid)} <{MEASURED_SECTIONS.get(cid, 'vit-found')}>`: "
                     f"**{finding.form}**; {first}")
    text = "\n".join(lines).replace("\u2212", "−")
    if waiting:
        text += "\n\nStill waiting for paired runs: " + "; ".join(waiting) + "."
    if late:
        text += "\n\n† margin or chance level registered after the first runs were seen (the claim's account says which)."
    return text


def findings_numbers(chapter: str = "04_vit") -> dict[str, object]:
    """The closing list as the glue value ``ch04_findings`` (:func:`findings_list`)."""
    from IPython.display import Markdown

    return {"ch04_findings": Markdown(findings_list(chapter))}


def glue_folded(name_: str, shown, missing: str = "No record of this grid is stored at this preset") -> None:
    """Glue a table or figure for a folded part of the page (``{glue}`` in a dropdown): a figure is
    closed so that it is not shown where it is made; nothing to show (None) glues ``missing``."""
    from IPython.display import Markdown

    from ..book.deliver import glue

    glue(name_, Markdown(f"*{missing}.*") if shown is None else shown, display=False)
    if hasattr(shown, "savefig"):
        import matplotlib.pyplot as plt

        plt.close(shown)


def compact_claims_table(delivered: Sequence, min_pairs: int = 2):
    """The comparisons of one or more delivered claims in four columns (comparison, difference
    [95% CI], pairs, the register's result), without those with fewer than ``min_pairs`` stored
    pairs (the caption names them); None when none has that many.  Holm and TOST p are in the
    register's full table (``delivered.table``)."""
    from ..book.deliver import styled

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


# --- how the comparisons are judged, and what the paper ran ------------------------------------------


def judging_numbers() -> dict[str, str]:
    """The margin, level and power the prose of "How the comparisons are judged" states."""
    from .. import analysis

    m = margin()
    return {"ch04_margin": f"±{m:g} accuracy point{'' if m == 1 else 's'}", "ch04_alpha": f"{analysis.ALPHA:g}",
            "ch04_power": f"{analysis.POWER:g}"}


def paper_table():
    """The paper's ViT configurations (listed, not run)."""
    from ..book.deliver import styled
    from ..book.views import SMALL
    from ..experiments import vit

    rows = [{"Dataset": r["dataset"].replace("_", " "), "Model": r["model"], "Tokens": r["tokens"],
             "Activation": name(r["activation"]), "Epochs": r["epochs"], "Batch": r["batch"],
             "Recipe": "DeiT" if r["recipe"] == "deit" else r["recipe"]} for r in vit.paper_table()]
    return styled(rows, "The paper's configurations (not run here)").set_table_styles(SMALL, overwrite=False)


def deviations_table():
    """What the paper ran against what the book preset's Table 1 and 2 analogues run."""
    from .. import analysis
    from ..book.deliver import styled
    from ..experiments import vit

    deviations = analysis.deviations_table(vit.table1("book") + vit.table2("book"), vit.paper_configs())

    def shown(row, key):
        # specs hold no spaces, so ", " separates the activations of a cell
        return ", ".join(name(a) for a in row[key].split(", ")) if row[""] == "activations" else row[key]

    return styled([{"": r[""], "paper": shown(r, "paper"), "this book": shown(r, "this book")}
                   for r in deviations.to_dict("records")], "What the paper ran and what this book runs")


def setup_numbers() -> dict[str, object]:
    """Table 1's sequence length and how the paper's 1/14 compares with its 1/sqrt(N)."""
    from ..experiments import vit

    n = vit.table1("book")[0].seq_len
    return {"ch04_t1_seq_len": n, "ch04_fixed_ratio": f"{math.sqrt(n) / 14:.2f}",
            "ch04_n_seeds": len(vit.TABLE1_SEEDS["book"])}


# --- loading ---------------------------------------------------------------------------------------------


def runs(page, grid: Callable, seeds=None, recompute: bool = False, stored_only: bool = False) -> list[dict]:
    """The records of ``grid(preset, seeds)`` for the page: none when the page trains nothing
    (preset paper); with ``stored_only`` the stored records at the book preset
    (:func:`polyattn.runs.page_records`), else every record, trained where missing."""
    from ..runs import load_or_run_all, page_records

    if not page.trains:
        return []
    configs = page.on_device(grid(page.preset, seeds))
    if stored_only:
        return page_records(configs, page.preset, recompute=recompute, progress=False)
    return load_or_run_all(configs, recompute=recompute, progress=False)


def book_runs(grid: Callable) -> list[dict]:
    """The committed records of a grid that only the book preset runs (hours a run, never trained
    by a page), read at every preset."""
    from ..runs import page_records

    return page_records(grid("book"), "book")


def caption(page, grid: Callable, records: list[dict], seeds=None) -> str:
    """What a grid trains at the page's preset (:func:`polyattn.analysis.grid_caption`)."""
    from .. import analysis

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
    from .. import analysis

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
    from ..book.deliver import styled
    from ..book.views import SMALL, with_note

    if not records:
        return None
    rows = result_rows(records, claims, order)
    note = DESCRIPTION_NOTE if any(r.get("Register's result") for r in rows) else \
        "every difference is description, not a test"
    return styled(rows, with_note(caption_text, note)).set_table_styles(SMALL, overwrite=False)


def per_seed_table(records: list[dict], caption_text: str, index=("activation",)):
    """The final test accuracy of every run, one column per seed."""
    from .. import analysis
    from ..book.views import per_seed_view

    if not records:
        return None
    return per_seed_view(analysis.final_accuracy(records), index=list(index), caption=caption_text)


def power_numbers(records: list[dict]) -> dict[str, str]:
    """How much Table 1's seeds can say: the seeds, the t multiplier of a 95% interval, the range
    of the minimal detectable effects against softmax, and the smallest two-sided p-value a
    Wilcoxon signed-rank test can reach with that many pairs."""
    from scipy import stats

    from .. import analysis

    if not records:
        return {k: "not run" for k in ("ch04_t1_seeds", "ch04_t_mult", "ch04_mde_low", "ch04_mde_high",
                                       "ch04_wilcoxon_p", "ch04_wilcoxon_n")}
    final = analysis.final_accuracy(records)
    n = int(final["seed"].nunique())
    mde = analysis.paired_difference(final, baseline="softmax", margin=margin())["mde"].dropna()
    return {"ch04_t1_seeds": str(n),
            "ch04_t_mult": number_text(stats.t.ppf(0.975, n - 1) if n >= 2 else None, ".2f", "undefined (one seed)"),
            "ch04_mde_low": number_text(mde.min() if len(mde) else None),
            "ch04_mde_high": number_text(mde.max() if len(mde) else None),
            "ch04_wilcoxon_p": number_text(2.0 / 2 ** n, ".3f"), "ch04_wilcoxon_n": str(analysis.WILCOXON_MIN_N)}


# --- the scale of the cubic at Table 1 (description) ----------------------------------------------------


def scale_differences(records: list[dict]) -> pd.DataFrame:
    """The paper's fixed x³/14 and the unscaled x³ against x³/sqrt(N), paired by seed, Holm over the two."""
    from .. import analysis

    final = analysis.final_accuracy(records)
    present = [a for a in ("poly:p=3,c=1/14", "poly:p=3,c=1") if (final["activation"] == a).any()]
    return analysis.paired_difference(final, baseline="poly:p=3", compare=present, margin=margin())


def scale_numbers(records: list[dict]) -> dict[str, str]:
    """The paper's fixed x³/14 and the unscaled x³ against x³/sqrt(N) (:func:`scale_differences`),
    each difference with its 95% interval, and the seed pairs."""
    if not records:
        return {"ch04_fixed_diff": "not run", "ch04_unscaled_diff": "not run", "ch04_scale_pairs": "no"}
    d = scale_differences(records).set_index("activation")
    out = {"ch04_scale_pairs": ", ".join(sorted({str(int(n)) for n in d["n_pairs"]})) or "no"}
    for key, act in (("ch04_fixed_diff", "poly:p=3,c=1/14"), ("ch04_unscaled_diff", "poly:p=3,c=1")):
        out[key] = (interval_cell(*d.loc[act, ["mean_diff", "ci_low", "ci_high"]], missing="not comparable")
                    + " points") if act in d.index else "not run"
    return out


# --- figures ---------------------------------------------------------------------------------------------


def curves_figure(records: list[dict], groups: Sequence[tuple], preset: str, ylabel: str = "test accuracy (%)"):
    """Test accuracy per epoch, mean ± sd over seeds, one panel per ``(title, activations)``
    group (a panel with no run besides softmax's is dropped); None without records."""
    import matplotlib.pyplot as plt

    from .. import analysis, plotting

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


# --- Table 2 analogue --------------------------------------------------------------------------------------

_CELLS = ["model", "augment"]


def table2_cells(records: list[dict]) -> pd.DataFrame:
    """x³/sqrt(N) against softmax in each model/recipe cell, paired by seed."""
    from .. import analysis

    final = analysis.final_accuracy(records)
    return analysis.paired_difference(final, baseline="softmax", by=_CELLS, margin=margin())


def table2_pooled(records: list[dict]) -> pd.DataFrame:
    """The same comparison pooled over the cells (cell fixed effects), with the F-test of whether they differ."""
    from .. import analysis

    final = analysis.final_accuracy(records)
    return analysis.pooled_difference(final, baseline="softmax", cells=_CELLS, margin=margin())


def table2_table(records: list[dict], claims: Optional[dict] = None, caption_text: str = ""):
    """Each model/recipe cell's final test accuracy per activation (mean ± sd over seeds) and
    x³/sqrt(N) − softmax paired by seed (description), then the difference pooled over the cells:
    the register's numbers and result where it makes that comparison (``claims``, pooled rows)."""
    from .. import analysis
    from ..book.deliver import styled
    from ..book.views import SMALL, with_note

    if not records:
        return None
    claims = claims or {}
    final = analysis.final_accuracy(records)
    summary = analysis.summary_table(final, by=_CELLS + ["activation"])
    diffs = {(r["model"], r["augment"]): r for r in table2_cells(records).to_dict("records")}
    delta = "Δ, points [95% CI]"
    rows = {}
    for s in summary.to_dict("records"):
        cell = (s["model"], s["augment"])
        row = rows.setdefault(cell, {"Model, recipe": recipe_label(*cell)})
        acc = number_text(s["mean"], ".2f", "–") + ("" if s["std"] != s["std"] else f" ± {s['std']:.2f}")
        row[f"{name(s['activation'])} (%)"] = acc + (f" ({s['n_diverged']} diverged)" if s["n_diverged"] else "")
    acc_columns = list(dict.fromkeys(k for row in rows.values() for k in row if k != "Model, recipe"))
    out = []
    for cell, row in rows.items():
        d = diffs.get(cell)
        out.append({**row, delta: interval_cell(d["mean_diff"], d["ci_low"], d["ci_high"], missing="not comparable")
                    if d else "–", "Seed pairs": str(int(d["n_pairs"])) if d else "", "Register's result": ""})
    for r in table2_pooled(records).to_dict("records"):
        reg = claims.get(r["activation"])
        out.append({"Model, recipe": f"pooled over {int(r['n_cells'])} cells", **{c: "" for c in acc_columns},
                    delta: registered_cell(reg) if reg else interval_cell(r["mean_diff"], r["ci_low"], r["ci_high"],
                                                                          missing="not comparable"),
                    "Seed pairs": reg["Pairs"] if reg else str(int(r["n_pairs"])),
                    "Register's result": reg["Result"] if reg else ""})
    if not any(r["Register's result"] for r in out):
        for r in out:
            del r["Register's result"]
    note = DESCRIPTION_NOTE if claims else "every difference is description, not a test"
    caption = with_note(caption_text, "final test accuracy, mean ± sd over seeds; Δ: x³/√N − softmax, paired by seed "
                                      f"within each cell, pooled with cell fixed effects; {note}")
    return styled(out, caption).set_table_styles(SMALL, overwrite=False)


def table2_numbers(records: list[dict]) -> dict[str, str]:
    """The F-test p of the cells' disagreement."""
    if not records:
        return {"ch04_t2_f_p": "not run"}
    pooled = table2_pooled(records)
    return {"ch04_t2_f_p": number_text(pooled["heterogeneity_p"].iloc[0] if len(pooled) else None, ".2g")}


def table2_figure(records: list[dict], preset: str):
    """Each seed's final accuracy per model/recipe cell and activation, with mean ± sd."""
    import matplotlib.pyplot as plt

    from .. import analysis, plotting

    if not records:
        return None
    final = analysis.final_accuracy(records)
    cells = list(dict.fromkeys(zip(final["model"], final["augment"])))
    acts = list(dict.fromkeys(final["activation"]))
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    width = 0.8 / len(acts)
    for j, act in enumerate(acts):
        color = plotting.activation_color(act)
        for i, (model, aug) in enumerate(cells):
            sub = final[(final["model"] == model) & (final["augment"] == aug) & (final["activation"] == act)]
            x = i + (j - (len(acts) - 1) / 2) * width
            vals = sub["test_acc"].to_numpy(dtype=float) * analysis.PERCENT
            ok = vals[np.isfinite(vals)]
            ax.scatter(np.full(len(ok), x), ok, color=color, s=14, alpha=0.6)
            if len(ok):
                ax.errorbar(x, ok.mean(), yerr=ok.std(ddof=1) if len(ok) > 1 else 0, fmt="o", color=color,
                            capsize=4, label=name(act) if i == 0 else None)
    ax.set_xticks(range(len(cells)))
    ax.set_xticklabels([recipe_label(m, a).replace(", ", "\n") for m, a in cells], fontsize=FONT + 1)
    ax.set_ylabel("final test accuracy (%)")
    ax.legend(frameon=False, fontsize=FONT)
    plotting.stamp(ax, preset, "dots: seeds; bars: mean ± sd").set_fontsize(FONT)
    fig.tight_layout()
    return fig


def table2_converged_numbers() -> dict[str, object]:
    """The DeiT-style recipe at the converged tier's scale: Table 2's training images, the drop
    path, the seeds, and the runs still to run."""
    from IPython.display import Markdown

    from ..experiments import vit

    grid = vit.table2_converged("book")          # the register reads the book preset's records
    return {"ch04_t2_images": f"{vit.table2('book')[0].train_subset:,}", "ch04_t2c_drop_path": f"{grid[0].drop_path:g}",
            "ch04_t2c_seeds": str(len({c.seed for c in grid})),
            "ch04_t2c_to_run": Markdown(to_run("vit_table2_converged"))}


# --- which scale wins at which length (Figure 1) ----------------------------------------------------------


def sweep_table(records: list[dict], preset: str, caption_text: str):
    """The best constant per length of a sweep's records (:func:`polyattn.book.views.best_view`)."""
    from .. import analysis
    from ..book.views import best_view

    if not records:
        return None
    best = analysis.best_constant(analysis.final_accuracy(records), n_boot=1000, seed=0)
    return best_view(best, f"{caption_text}, preset {preset}")


def fig1_numbers(numbers: Mapping[str, object]) -> dict[str, object]:
    """Which sweep decides the measured claim ``fig1_scale``, at what scale, and its best constant
    per length, for the prose (the slope and its interval are in the claim's sentence)."""
    from IPython.display import Markdown

    from ..measures import scale

    lengths = sorted(int(k.removeprefix("best c at N = ")) for k in numbers if k.startswith("best c at N = "))
    return {"ch04_best_by_length": ", ".join(f"{numbers[f'best c at N = {n}']} at N = {n}" for n in lengths) or "none",
            "ch04_deciding_sweep": "the longer sweep" if numbers["deciding sweep"] == scale.LONG_GRID
            else "the short sweep",
            "ch04_deciding_scale": Markdown(str(numbers["deciding sweep scale"]))}


def long_lengths(numbers: Mapping[str, object]) -> list[int]:
    """The lengths of the longer sweep whose runs are all stored."""
    return [int(n) for n in str(numbers.get("long sweep complete lengths", "")).split(", ") if n]


def long_sweep_table(numbers: Mapping[str, object]):
    """The longer sweep, one row per complete length: the mean accuracy of each constant, the
    spread across the constants, the largest seed standard deviation and the measure's reading
    (None while no length is complete)."""
    from ..book.deliver import styled
    from ..book.views import SMALL

    lengths = long_lengths(numbers)
    if not lengths:
        return None
    consts = list(dict.fromkeys(k.split(": c = ")[1].removesuffix(" (%)") for k in numbers
                                if k.startswith("long sweep N = ") and ": c = " in k))
    rows = [{"N": str(n),
             **{f"c = {c} (%)": number_text(numbers.get(f"long sweep N = {n}: c = {c} (%)"), ".2f", "–") for c in consts},
             "Spread (points)": number_text(numbers[f"long sweep N = {n}: spread (points)"]),
             "Largest seed sd": number_text(numbers[f"long sweep N = {n}: largest seed sd (points)"]),
             "Reading": numbers[f"long sweep N = {n}: flat"]} for n in lengths]
    scale = str(numbers["long sweep scale"]).replace("$", "")
    return styled(rows, f"The longer sweep at its complete lengths ({scale}): mean test accuracy over seeds per "
                        f"constant c of c·x³, the spread across the constants, the largest seed standard deviation "
                        f"of a constant (points) and the measure's reading (flat: spread under "
                        f"{numbers['flat spread (points)']:g} point); the book preset's committed records"
                  ).set_table_styles(SMALL, overwrite=False)


def _ratio(constants: Sequence[str]) -> float:
    """The largest constant of a grid over its smallest ("1/8" .. "32" -> 256)."""
    from fractions import Fraction

    values = [Fraction(c) for c in constants]
    return float(max(values) / min(values))


def long_sweep_numbers(numbers: Mapping[str, object]) -> dict[str, object]:
    """The longer sweep for the prose: its scale, constants, stored runs, and its flattest complete
    length with the spread, the best and worst constants and the largest seed standard deviation."""
    from IPython.display import Markdown

    from ..experiments import vit

    long_grid = vit.scale_sweep_long("book")
    out = {"ch04_long_scale": Markdown(f"{numbers['long sweep scale']}, batch {long_grid[0].batch_size}"),
           "ch04_long_constants": "{" + ", ".join(vit.SWEEP_LONG_CONSTANTS) + "}",
           "ch04_long_ratio": f"{_ratio(vit.SWEEP_LONG_CONSTANTS):g}",
           "ch04_long_seeds": str(len({c.seed for c in long_grid})),
           "ch04_long_stored": f"{numbers['long sweep runs stored']} of {numbers['long sweep runs planned']}",
           "ch04_short_scale": f"{vit.scale_sweep('book')[0].train_subset:,} images for "
                               f"{vit.scale_sweep('book')[0].epochs} epochs",
           "ch04_flat_margin": f"{numbers['flat spread (points)']:g}"}
    lengths = long_lengths(numbers)
    out["ch04_long_spreads"] = " and ".join(
        f"{number_text(numbers[f'long sweep N = {n}: spread (points)'])} points at N = {n}" for n in lengths) \
        or "nothing yet"
    formats = {"N": ("{}", "ch04_flat_n"), "spread (points)": ("{:.2f}", "ch04_flat_spread"),
               "best c": ("{}", "ch04_flat_best_c"), "worst c": ("{}", "ch04_flat_worst_c"),
               "best accuracy (%)": ("{:.1f}%", "ch04_flat_best_acc"),
               "worst accuracy (%)": ("{:.1f}%", "ch04_flat_worst_acc"),
               "largest seed sd (points)": ("{:.2f}", "ch04_flat_sd"), "reading": ("{}", "ch04_flat_reading")}
    for key, (fmt, glue_key) in formats.items():
        value = numbers.get(f"long sweep flattest {key}")
        out[glue_key] = fmt.format(value) if value is not None else "not stored"
    return out


# --- the converged tier ---------------------------------------------------------------------------------


def plateau(records: list[dict]) -> float:
    """The largest change (points) of any run's test accuracy over its last two epochs (NaN
    without a run of three epochs)."""
    moves = [abs(r["metrics"][-1]["test_acc"] - r["metrics"][-3]["test_acc"]) * 100
             for r in records if len(r.get("metrics") or []) >= 3]
    return max(moves) if moves else math.nan


def converged_numbers() -> dict[str, object]:
    """The converged tier's recipe, its stored runs, those still to run (with clipping and without)
    and their cost, and how flat their last epochs are."""
    from IPython.display import Markdown

    from ..data import split_sizes
    from ..experiments import vit

    grid, unclipped = vit.converged("book"), vit.unclipped("book")
    train, test = split_sizes(grid[0].dataset, grid[0].train_subset, grid[0].test_subset)
    records = book_runs(vit.converged)
    minutes = [r["provenance"]["wall_s"] / 60 for r in records]
    return {"ch04_conv_train_images": f"{train:,}", "ch04_conv_test_images": f"{test:,}",
            "ch04_conv_epochs": str(grid[0].epochs), "ch04_conv_batch": str(grid[0].batch_size),
            "ch04_conv_clip": f"{grid[0].clip_grad:g}", "ch04_conv_planned": str(len(grid)),
            "ch04_unclipped_planned": str(len(unclipped)),
            "ch04_conv_activations": ", ".join(name(a) for a in vit.CONVERGED_ACTIVATIONS),
            "ch04_conv_seeds": str(len({c.seed for c in grid})),
            "ch04_conv_stored": f"{len(records)} of {len(grid)}",
            "ch04_conv_to_run": Markdown(to_run("vit_converged")), "ch04_uconv_to_run": Markdown(to_run("vit_unclipped")),
            "ch04_conv_minutes": f"{min(minutes):.0f} to {max(minutes):.0f}" if minutes else "–",
            "ch04_conv_plateau": number_text(plateau(records), ".2f", "not measured")}


def converged_caption() -> str:
    """The converged tier's results table caption: the register's account of its scale."""
    from ..claims.register import claim

    return f"The converged tier against softmax: {claim('converged_scale_needed').scale}, the committed records"


def unclipped_runs_table(records: list[dict]):
    """Each stored run of the converged tier without clipping: its final accuracy, or the step
    where it diverged."""
    from ..book.deliver import styled

    if not records:
        return None
    rows = [{"Activation": name(r["config"]["activation"]), "Seed": r["seed"],
             "Final test accuracy (%)": (f"diverged at step {r['diverged_step']}" if r["status"] == "diverged"
                                         else f"{100 * r['metrics'][-1]['test_acc']:.2f}"),
             "Epochs": r["metrics"][-1]["epoch"] if r.get("metrics") else 0} for r in records]
    return styled(rows, "The converged tier without gradient clipping: the runs stored so far")


def unclipped_converged_numbers(records: list[dict], planned: int) -> dict[str, str]:
    """How many runs of the unclipped converged tier are stored, and how many diverged."""
    return {"ch04_uconv_stored": f"{len(records)} of {planned}",
            "ch04_uconv_diverged": str(sum(r["status"] == "diverged" for r in records))}


#: The converged tier's two questions: (row, (claim, comparison) with clipping, (claim, comparison) without).
CLIPPING_LAYOUT = (
    ("x³/√N − softmax", ("table_parity", "converged"), ("converged_unclipped", "cube_sqrt_n")),
    ("x³ − x³/√N", ("converged_scale_needed", "cube_vs_scaled_converged"), ("converged_unclipped", "cube_vs_scaled")),
)


def comparison_cell(delivered, comparison_id: str) -> str:
    """One comparison of a delivered claim in a cell: "−0.24 [−0.49, +0.01] points, equivalent
    (5 of 5 pairs)"; with fewer than two stored pairs, how many are stored."""
    row = claim_rows(delivered)[comparison_id]
    r = next(r for r in delivered.verdict.comparisons if r.comparison.id == comparison_id)
    if r.n < 2:
        return f"{row['Pairs']} pairs stored"
    return f"{row['Difference [95% CI]']}, {row['Result']} ({row['Pairs']} pairs)"


def clipping_table(delivered: Mapping[str, object], layout=CLIPPING_LAYOUT):
    """The converged tier's questions with and without gradient clipping, side by side: each cell
    the register's comparison (:func:`comparison_cell`); ``delivered``: claim id -> delivered claim."""
    from ..book.deliver import styled
    from ..claims.register import claim

    rows = [{"Comparison": label, "With clipping at norm 1": comparison_cell(delivered[c0], i0),
             "Without clipping": comparison_cell(delivered[c1], i1)} for label, (c0, i0), (c1, i1) in layout]
    unclipped = claim(layout[0][2][0])
    scale = unclipped.scale.replace("no gradient clipping, ", "")
    return styled(rows, f"The converged tier with and without gradient clipping (the paper does not clip): the "
                        f"register's comparisons, margin ±{unclipped.margin:g}; {scale}")


# --- Table 1's recipe without clipping --------------------------------------------------------------------


def unclipped_table(unclipped: list[dict], clipped: list[dict], preset: str, recipe: str = "Table 1's recipe"):
    """A recipe (Table 1's by default) without gradient clipping beside the same activations with
    it (mean ± sd over seeds, diverged runs counted apart)."""
    from .. import analysis
    from ..book.deliver import styled

    if not unclipped:
        return None
    ok = [r for r in unclipped if r["status"] == "ok"]
    final_u = analysis.final_accuracy(ok) if ok else pd.DataFrame(columns=["activation", "test_acc"])
    final_c = analysis.final_accuracy(clipped) if clipped else pd.DataFrame(columns=["activation", "test_acc"])

    def cell(values):
        values = 100 * values.astype(float)
        if not len(values):
            return "–"
        return f"{values.mean():.2f}" + (f" ± {values.std():.2f}" if len(values) > 1 else "")

    rows = []
    for act in dict.fromkeys(r["config"]["activation"] for r in unclipped):
        runs_ = [r for r in unclipped if r["config"]["activation"] == act]
        rows.append({"Activation": name(act), "Runs": len(runs_),
                     "Diverged": sum(r["status"] != "ok" for r in runs_),
                     "Without clipping (%)": cell(final_u[final_u["activation"] == act]["test_acc"]),
                     "With clipping (%)": cell(final_c[final_c["activation"] == act]["test_acc"])})
    return styled(rows, f"{recipe[:1].upper()}{recipe[1:]} without and with gradient clipping (final test accuracy, "
                        f"mean ± sd over seeds), preset {preset}; every other setting as with clipping")


# --- the quadratic with a learned scale ------------------------------------------------------------------


def learned_scales(records: list[dict]) -> Optional[np.ndarray]:
    """The learned factors g_h of every run, as runs × layers × heads (None without any)."""
    scales = [r["learned_head_scales"] for r in records if r.get("learned_head_scales")]
    return np.asarray(scales, dtype=float) if scales else None


def learned_scale_table(records: list[dict]):
    """Per layer, the learned factor g_h (in units of 1/sqrt(N)) after training: mean, smallest
    and largest over the runs and their heads."""
    from ..book.deliver import styled

    arr = learned_scales(records)
    if arr is None:
        return None
    rows = [{"Layer": i + 1, "Mean g": f"{arr[:, i].mean():.2f}", "Smallest": f"{arr[:, i].min():.2f}",
             "Largest": f"{arr[:, i].max():.2f}"} for i in range(arr.shape[1])]
    return styled(rows, f"The learned factor g after training, over {arr.shape[0]} runs and their "
                        f"{arr.shape[2]} heads a layer (1 is the fixed x²/√N)")


def learned_scale_numbers(records: list[dict], planned: int) -> dict[str, str]:
    """The stored runs of the learned-scale quadratic and the range of its factors."""
    arr = learned_scales(records)
    out = {"ch04_quad_stored": f"{len(records)} of {planned}"}
    if arr is None:
        return {**out, "ch04_quad_low": "not stored", "ch04_quad_high": "not stored"}
    return {**out, "ch04_quad_low": f"{arr.min():.2f}", "ch04_quad_high": f"{arr.max():.2f}"}
