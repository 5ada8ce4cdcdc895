"""The claims of the intro's verdict table, the glue that carries a chapter's verdict, and the table.

A verdict has a *form* from :data:`FORMS` (what the statistics support, decided by the
register's rule or a measured claim's measure function, never by a chapter) and a one-sentence
*summary* with the key number, in Markdown with maths.  The intro's table and the README's
findings block are both written from ``data/verdicts.json``, which ``python -m polyattn verdicts``
computes from the records; only the rows measured on the machine that builds the book (costs)
are read from the chapter that measured them (:func:`collect_verdicts`).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..claims.register import REGISTER, any_claim, verdict_ids
from ..claims.report import section_link
from ..claims.rule import FORMS  # noqa: E402  (the book's one vocabulary of verdicts)
from ..display import typographic
from .answer_rows import MARKS
from .common import REPO_ROOT, VERDICTS_FILE

#: The rows of the intro's verdict table, in order: the register's claims with a ``verdict_row``, decided by
#: comparisons of runs or by a measurement. A claim's statement, source, chapter and place live in the claim.
VERDICT_ROWS = verdict_ids()


def _rows() -> tuple:
    return tuple(any_claim(cid) for cid in VERDICT_ROWS)


#: The claims of the verdict table (register objects: ``id``, ``statement``, ``source``, ``chapter``,
#: ``machine_dependent``).
CLAIMS = _rows()
CLAIM_IDS = VERDICT_ROWS


def statement(c) -> str:
    """What a row of the verdict table claims (the register's statement: one statement per claim)."""
    return c.statement


def verdict(claim_id: str, summary: str, form: str) -> str:
    """Glue a claim's verdict for the intro's table (called by :func:`polyattn.book.deliver.deliver`
    with the verdict the library computed; a chapter never decides one itself).

    ``form``: one of :data:`FORMS`; ``summary``: one sentence with the key number, Markdown with
    ``$...$`` maths.  Glued as ``verdict_<id>`` (the
    summary, as Markdown) and ``verdict_<id>_form``.  Returns the summary.
    """
    if claim_id not in CLAIM_IDS:
        raise ValueError(f"unknown claim {claim_id!r}; the claims of the verdict table are {', '.join(CLAIM_IDS)}")
    if form not in FORMS:
        raise ValueError(f"unknown verdict form {form!r}; choose one of {', '.join(FORMS)}")
    if not isinstance(summary, str) or not summary.strip():
        raise ValueError(f"the verdict on {claim_id!r} must be a non-empty sentence, got {summary!r}")
    from IPython.display import Markdown
    from myst_nb import glue


    summary = typographic(summary.strip())
    glue(f"verdict_{claim_id}", Markdown(summary), display=False)
    glue(f"verdict_{claim_id}_form", form, display=False)
    return summary


def glued_keys(nb) -> set[str]:
    """The glue keys stored in an executed notebook's outputs."""
    keys = set()
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                keys.add(name)
    return keys


def _glued_values(nb) -> dict[str, str]:
    """Glue key -> its stored text (Markdown source for Markdown values)."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if not name:
                continue
            data = o.get("data", {})
            for mime in ("application/papermill.record/text/markdown", "text/markdown",
                         "application/papermill.record/text/plain", "text/plain"):
                if mime in data:
                    value = data[mime]
                    value = "".join(value) if isinstance(value, list) else value
                    if "plain" in mime and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                        value = value[1:-1]
                    out[name] = value
                    break
    return out


def collect_verdicts(executed: dict[str, Path]) -> dict[str, dict]:
    """claim id -> {"form", "summary", "chapter", "preset"} for every verdict the executed chapters glued."""
    import nbformat

    out = {}
    for c in CLAIMS:
        path = executed.get(c.chapter)
        if path is None:
            continue
        nb = nbformat.read(str(path), as_version=4)
        values = _glued_values(nb)
        if f"verdict_{c.id}" in values and f"verdict_{c.id}_form" in values:
            params = nb.metadata.get("papermill", {}).get("parameters", {})
            out[c.id] = {"form": values[f"verdict_{c.id}_form"], "summary": values[f"verdict_{c.id}"],
                         "chapter": c.chapter, "preset": params.get("preset")}
    return out


def findings_markdown(verdicts: dict[str, dict]) -> str:
    """The README's findings block: one bullet per claim with a record-derived verdict."""
    lines = []
    for c in CLAIMS:
        v = verdicts.get(c.id)
        if c.machine_dependent:
            lines.append(f"- {statement(c)}: measured on the machine that builds the book (chapter "
                         f"{c.chapter.split('_', 1)[0]}).")
        elif v is None:
            lines.append(f"- {statement(c)}: pending (chapter {c.chapter.split('_', 1)[0]}).")
        else:
            lines.append(f"- {statement(c)}: **{v['form']}**. {v['summary']}")
    return "\n".join(lines)


FINDINGS_START = "<!-- findings: written by `python -m polyattn verdicts` from the verdicts; do not edit -->"
FINDINGS_END = "<!-- end of findings -->"


def replace_findings(readme_text: str, block: str) -> str:
    """``readme_text`` with the text between the findings markers replaced by ``block``."""
    if FINDINGS_START not in readme_text or FINDINGS_END not in readme_text:
        raise ValueError("README.md has no findings markers; add the lines "
                         f"{FINDINGS_START!r} and {FINDINGS_END!r} where the findings go")
    head, rest = readme_text.split(FINDINGS_START, 1)
    _, tail = rest.split(FINDINGS_END, 1)
    return f"{head}{FINDINGS_START}\n{block}\n{FINDINGS_END}{tail}"


#: The notes a verdict's summary repeats from claim to claim, each folded into its marker on the
#: intro's table (:data:`polyattn.book.answer_rows.MARKS` says what the markers mean, once).
_FOLDED = ((r"\s*\*(?:Chance level registered late|Registered late):[^*]*\*", "†"),
           (r", more than this book can run", "§"))


def fold_notes(summary: str) -> tuple[str, str]:
    """A summary without the notes that every row would repeat, and the markers that replace them."""

    marks = ""
    for pattern, mark in _FOLDED:
        summary, n = re.subn(pattern, mark if mark == "§" else "", summary)
        if n and mark not in marks:
            marks += mark
    return summary.strip(), marks


def verdict_table(executed: dict[str, Path], verdicts: dict[str, dict] | None = None,
                  root: Path | None = None) -> str:
    """The intro's verdict table as MyST markdown.

    Every row comes from ``verdicts`` (default: ``data/verdicts.json`` under ``root``, which
    ``python -m polyattn verdicts`` computes from the records), except the rows measured on the
    machine that builds the book, which come from the executed chapter that measured them
    (``executed`` maps chapter names to executed notebooks).  A row without a verdict reads
    "pending: chapter NN".
    """
    if verdicts is None:
        path = (root or REPO_ROOT) / VERDICTS_FILE
        verdicts = json.loads(path.read_text()) if path.exists() else {}
    machine = collect_verdicts({k: v for k, v in executed.items()
                                if any(c.machine_dependent and c.chapter == k for c in CLAIMS)})

    lines = ["| claim | raised by | checked in | verdict |", "| --- | --- | --- | --- |"]
    used = set()
    for c in CLAIMS:
        number = c.chapter.split("_", 1)[0]
        v = machine.get(c.id) if c.machine_dependent else verdicts.get(c.id)
        if c.chapter not in executed:
            where = f"chapter {number}"
        elif c.id in REGISTER:
            where = section_link(c.id, f"chapter {number}")
        else:
            where = f"{{doc}}`chapter {number} </chapters/{c.chapter}>`"
        if v is not None:
            summary, marks = fold_notes(" ".join(v["summary"].split()))
            used |= set(marks)
            cell = f"**{v['form']}**{marks.replace('§', '')}: {summary.replace('|', chr(92) + '|')}"
        else:
            cell = f"pending: chapter {number}"
        lines.append(f"| {statement(c)} | {c.source} | {where} | {cell} |")
    legend = "; ".join(f"{m} {note}" for m, note in MARKS.items() if m in used)
    return (legend + ".\n\n" if legend else "") + "\n".join(lines)
