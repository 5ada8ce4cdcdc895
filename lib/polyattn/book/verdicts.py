"""The book's verdicts from the stored records alone: ``python -m polyattn verdicts``.

Every row of the intro's verdict table is computed here without executing a chapter: a claim
decided by comparisons of runs by the one rule (:mod:`polyattn.claims.evaluate`), a measured claim
by its measure function (:mod:`polyattn.measures`).  The chapters glue the same sentences (through
:func:`polyattn.book.deliver.deliver`) and never decide a row themselves.  Rows measured on the
machine that builds the book (costs) are not written here.

The command writes ``data/verdicts.json``, the README's answer block and its findings block;
``--check`` only says whether they are what the committed records give.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from ..claims.evaluate import evaluate
from ..claims.register import MEASURED, REGISTER
from ..claims.report import summary
from ..display import typographic
from ..results import REPO_ROOT
from .answer import ANSWER_END, ANSWER_START, answer_block, write_answer
from .common import VERDICTS_FILE, register_grids
from .verdict_rows import CLAIMS, FINDINGS_END, FINDINGS_START, findings_markdown, replace_findings


def register_id(row_id: str) -> Optional[str]:
    """The register claim behind a row of the verdict table, decided by comparisons of runs (None
    for a measured claim)."""
    return row_id if row_id in REGISTER else None


def measured_row(row_id: str, root: Optional[Path] = None) -> Optional[dict]:
    """A measured claim's row, from its measure function (None while the function is not written)."""
    register_grids()
    c = MEASURED[row_id]
    try:
        finding = c.evaluate(root)
    except (ModuleNotFoundError, AttributeError) as e:
        if "polyattn.measures" not in str(e) and c.measure.split(":")[1] not in str(e):
            raise
        return None
    return {"chapter": c.chapter, "form": finding.form, "preset": "book", "summary": typographic(finding.summary.strip())}


def row(row_id: str, verdict) -> dict:
    """A verdict-table row computed from a register verdict, exactly as a chapter glues it."""
    chapter = next(c.chapter for c in CLAIMS if c.id == row_id)
    return {"chapter": chapter, "form": verdict.form, "preset": "book", "summary": typographic(summary(verdict).strip())}


def register_rows(root: Optional[Path] = None) -> dict[str, dict]:
    """Every verdict-table row the register decides, computed from the records: comparisons of runs
    by the one rule, measured claims by their measure functions (machine-dependent rows left out)."""
    register_grids()
    out = {}
    for c in CLAIMS:
        if c.machine_dependent:
            continue
        cid = register_id(c.id)
        if cid is not None:
            out[c.id] = row(c.id, evaluate(cid, root=root))
        elif c.id in MEASURED:
            r = measured_row(c.id, root)
            if r is not None:
                out[c.id] = r
    return out


def with_register_rows(rows: dict[str, dict], root: Optional[Path] = None) -> dict[str, dict]:
    """Every row the register computes, and ``rows``' rows for the measured claims whose measure
    function is not written yet; sorted by id."""
    out = {k: v for k, v in rows.items() if k in MEASURED and not MEASURED[k].machine_dependent}
    out.update(register_rows(root))
    return dict(sorted(out.items()))


def computed(repo: Path = REPO_ROOT, root: Optional[Path] = None) -> dict[str, dict]:
    """The verdicts file as the records give it."""
    path = repo / VERDICTS_FILE
    return with_register_rows(json.loads(path.read_text()) if path.exists() else {}, root)


def write(repo: Path = REPO_ROOT) -> list[str]:
    """Write data/verdicts.json and the README's findings and answer blocks; the paths changed."""
    changed = []
    verdicts = computed(repo)
    path = repo / VERDICTS_FILE
    text = json.dumps(verdicts, indent=1, sort_keys=True) + "\n"
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        changed.append(str(VERDICTS_FILE))
    readme = repo / "README.md"
    before = readme.read_text()
    readme.write_text(replace_findings(before, findings_markdown(verdicts)))
    write_answer(repo)
    if readme.read_text() != before:
        changed.append("README.md")
    return changed


def differences(repo: Path = REPO_ROOT) -> list[str]:
    """What differs between the committed verdicts and README blocks and what the records give."""
    out = []
    want = computed(repo)
    path = repo / VERDICTS_FILE
    have = json.loads(path.read_text()) if path.exists() else {}
    for k in sorted(set(want) | set(have)):
        if want.get(k) != have.get(k):
            out.append(f"{VERDICTS_FILE}: row {k!r} differs from what the records give")
    readme = (repo / "README.md").read_text()
    findings = readme.split(FINDINGS_START, 1)[1].split(FINDINGS_END, 1)[0].strip()
    if findings != findings_markdown(want).strip():
        out.append("README.md: the findings block differs from the verdicts")
    answer = readme.split(ANSWER_START, 1)[1].split(ANSWER_END, 1)[0].strip()
    if answer != answer_block().strip():
        out.append("README.md: the answer block differs from the register")
    return out


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m polyattn verdicts", description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="only say whether the committed files are what the "
                                                          "records give (exit 1 when not)")
    args = p.parse_args(argv)
    if args.check:
        diffs = differences()
        for d in diffs:
            print(d)
        print("verdicts: up to date" if not diffs else "verdicts: run `python -m polyattn verdicts`")
        return 1 if diffs else 0
    changed = write()
    print("verdicts: written " + ", ".join(changed) if changed else "verdicts: already up to date")
    return 0
