"""Chapter 04's closing section: one line per claim of the chapter with its register's verdict
and key number, each linked to its section, and the claims still waiting for runs.

    glue_values(findings_numbers("04_vit"))      # the list, glued as ``ch04_findings``
"""
from __future__ import annotations

from ...claims.checklist import SHORT
from ...claims.evaluate import evaluate
from ...claims.register import MEASURED, REGISTER
from ...claims.report import answer_rows, section_label
from .page import to_run

#: The closing list's short name of each claim of the chapter (the review checklist's where it has one).
SHORT_NAMES = {"table2_converged": "x³ matches softmax with the DeiT-style recipe, converged",
               "converged_unclipped": "converged without clipping: x³/√N matches softmax, unscaled x³ worse",
               "unclipped_parity": "scaled polynomials match softmax, unclipped"}
#: The label of the section that states a measured claim of the chapter.
MEASURED_SECTIONS = {"fig1_scale": "vit-scale"}


def short_name(claim_id: str) -> str:
    """A claim's name in a few words, for the closing list."""
    return {**SHORT, **SHORT_NAMES}.get(claim_id, claim_id)


def findings_list(chapter: str = "04_vit") -> str:
    """The closing list (Markdown): one line per claim of ``chapter`` with paired runs, its short
    name linked to its section, the register's verdict and its key number, then each measured
    claim; the claims still waiting for runs in one sentence with their grids' stored runs."""
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
