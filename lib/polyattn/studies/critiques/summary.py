"""Chapter 09's closing sections: the objections not settled at this scale with the runs that would
settle them, the reviewers' checklist, and "What this chapter found" (:func:`findings_table`).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ...book.deliver import deliver, styled
from ...claims import checklist
from ...claims.checklist import SHORT
from ...claims.evaluate import evaluate
from ...claims.register import MEASURED, REGISTER
from ...claims.report import answer_rows, section_label
from ...display import name
from ...results import load_records
from .page import UNSCALED, compact

#: The six claims this page measures (their forms fill the checklist's "this page" verdicts).
MEASURED_CLAIMS = ("norm_paradox", "scale_sensitivity", "powers_gradients", "softmax_saturation", "outliers",
                   "attention_maps", "training_speed")


# --- not settled at this scale --------------------------------------------------------------------


def run_hours(n_runs: int, records) -> str:
    """"about 13 CPU hours": ``n_runs`` times the mean wall time of ``records`` (the same recipe on
    this machine's CPUs)."""
    walls = [r["provenance"].get("wall_s") for r in records if (r.get("provenance") or {}).get("wall_s")]
    if not walls:
        return "cost unknown (no record to time)"
    return f"about {n_runs * float(np.mean(walls)) / 3600:.0f} CPU hours"


def unsettled_table(page):
    """The objections the book's records do not settle yet, each with the reason and the run that
    would settle it (with its cost from the committed records of the same recipe)."""
    from ...experiments import vit
    converged = load_records("vit_converged") if page.trains else []
    done = load_records("vit_unclipped") if page.trains else []
    grid = vit.unclipped("book")
    rows = [
        {"objection": "Without gradient clipping the unscaled cube diverges; ViTs train even unscaled (checklist "
                      "item 23)",
         "why not settled here": f"Table 1's recipe and this chapter's controls also run without clipping (the "
                                 f"section above); of the converged tier without clipping {len(done)} of the "
                                 f"{len(grid)} runs are committed",
         "the run that would settle it": f"the grid vit_unclipped: the converged tier without clipping for softmax, "
                                         f"{name('poly:p=3')} and {name(UNSCALED)} ({len(grid)} runs, "
                                         f"{run_hours(len(grid), converged)})"},
        {"objection": "The norm paradox, the outliers and the maps at the paper's scale (checklist items 9, 22 and 23)",
         "why not settled here": "the paper's models need ImageNet-sized data and GPUs; committed records keep no "
                                 "weights",
         "the run that would settle it": "the paper preset's Tiny-ImageNet runs with norm probes at layers 2, 7 and 12, "
                                         "and checkpoints kept for the outlier and map measurements "
                                         "(vit.paper_configs)"},
    ]
    return compact(styled(rows, "Objections not settled at this scale"))


# --- the checklist --------------------------------------------------------------------------------


def measured_forms() -> dict:
    """The form of each claim this page measures (:data:`MEASURED_CLAIMS`), by its measure function."""
    return {cid: deliver(cid, glue_it=False).verdict.form for cid in MEASURED_CLAIMS}


def checklist_values() -> dict:
    """The reviewers' checklist as glue values: the table (Markdown), its number of items and legend."""
    from IPython.display import Markdown

    return {"ch09_checklist": Markdown(checklist.table_markdown(page_forms=measured_forms())),
            "ch09_checklist_n": len(checklist.CHECKLIST), "ch09_checklist_legend": checklist.legend()}


# --- what this chapter found ----------------------------------------------------------------------


#: The section of this page that computes each claim it measures (its MyST label); the register's
#: claims sit under ``claim-<id>`` (:func:`polyattn.claims.report.section_label`).
MEASURED_SECTIONS = {"norm_paradox": "critiques-norm-paradox", "scale_sensitivity": "critiques-scale",
                     "powers_gradients": "critiques-gradients", "softmax_saturation": "critiques-gradients",
                     "outliers": "critiques-extreme-entries", "attention_maps": "critiques-attention-maps",
                     "training_speed": "critiques-training-speed"}


#: Short names of the claims the reviewers' checklist does not name (the others: its ``SHORT``).
SHORT_NAMES = {"alternatives_vs_unscaled": "an alternative helps the unscaled x³",
               "training_speed": "the cubes' gap to softmax shrinks with the budget"}


def _rho(n: Mapping, norm: str) -> str:
    return (f"{n[f'{norm}_rho']:+.2f} ({n[f'{norm}_activations_ci_low']:+.2f} to "
            f"{n[f'{norm}_activations_ci_high']:+.2f})")


#: The key number of each measured claim in the closing table, from its finding's numbers (the
#: sections give the whole sentence).
KEY_NUMBERS = {
    "norm_paradox": lambda n: (f"Spearman ρ of accuracy over {n['activations']} activations: with the attention "
                               f"norm {_rho(n, 'attention')}, with the Jacobian {_rho(n, 'jacobian')}"),
    "scale_sensitivity": lambda n: f"k = 1 → 2: {n['k_1_to_2_by_length']}",
    "powers_gradients": lambda n: (f"gradient through xᵖ/√N at initialisation: {n['gradient_p1_initial']:.2g} at p = 1, "
                                   f"{n['gradient_p7_initial']:.2g} at p = 7"),
    "softmax_saturation": lambda n: f"rows saturated in the micro ViT: at most {n['saturated_share_max']:.1%}",
    "outliers": lambda n: f"the token's share of the last layer's attention at ×{n['factor']:g}: {n['shares']}",
    "attention_maps": lambda n: f"negative share, first / last layer: {n['negative_shares']}",
    "training_speed": lambda n: (f"tasks whose gap shrinks detectably: {n['tasks shrinking']} of {n['tasks']} "
                                 f"(undecided: {n['tasks undecided']})"),
}


def findings_rows(chapter: str = "09_critiques") -> list[dict]:
    """The closing table's rows: one per claim of ``chapter`` (the register's, then those it
    measures) with its ``id``, short ``name``, ``section`` (MyST label), ``verdict``, ``late`` (a
    registered claim's margin fixed after the first runs, as the intro's answer table marks it) and
    ``key`` number (the register's key comparison; for a measured claim, :data:`KEY_NUMBERS`)."""
    names = {**SHORT, **SHORT_NAMES}
    ids = [cid for cid, c in REGISTER.items() if c.chapter == chapter]
    answered = {r["id"]: r for r in answer_rows({cid: evaluate(cid) for cid in ids}, ids)}
    rows = []
    for cid in ids:
        r = answered.get(cid)
        row = {"id": cid, "name": names.get(cid, cid), "section": section_label(cid)}
        if r is None:
            rows.append({**row, "verdict": "no paired runs stored yet", "late": False, "key": ""})
        else:
            verdict = r["verdict"] + (" (interim)" if r["interim"] else "")
            rows.append({**row, "verdict": verdict, "late": r["late"], "key": r["key number"]})
    for cid, c in MEASURED.items():
        if c.chapter != chapter or c.machine_dependent:
            continue
        finding = c.evaluate()
        key = KEY_NUMBERS[cid](finding.numbers) if cid in KEY_NUMBERS else finding.summary.split(". ")[0]
        rows.append({"id": cid, "name": names.get(cid, cid), "section": MEASURED_SECTIONS.get(cid, "critiques-found"),
                     "verdict": finding.form, "late": False, "key": key})
    return rows


def findings_table(chapter: str = "09_critiques"):
    """The closing table ("What this chapter found"): each claim's short name linked to the
    section that computes it, its verdict and its key number (:func:`findings_rows`), compact."""
    from html import escape

    rows = findings_rows(chapter)
    shown = [{"claim": f'<a href="#{r["section"]}">{escape(r["name"])}</a>',
              "verdict": f"<b>{escape(r['verdict'])}</b>{'†' if r['late'] else ''}",
              "key number": escape(" ".join(str(r["key"]).split()))} for r in rows]
    note = ("; † margin registered after the first runs were seen (see the claim's section)"
            if any(r["late"] for r in rows) else "")
    return compact(styled(shown, "Each claim this chapter computes, the register's and those it measures, with its "
                                 "verdict and key number (micro ViT on Fashion-MNIST, book preset)" + note))
