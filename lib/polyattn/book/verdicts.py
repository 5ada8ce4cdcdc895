"""The book's verdicts from the stored records alone: ``python -m polyattn verdicts``.

Every row of the intro's verdict table whose claim is in the register is computed here, by the
one rule, without executing a chapter; the chapters glue the same sentences (through
:func:`polyattn.book.deliver.deliver`) and never decide these rows themselves. The rows that are
measurements rather than comparisons of runs (theorems checked numerically, probes, costs) are
still written by the chapters that measure them, and kept here as the last book build left them.

The command writes ``data/verdicts.json``, the README's answer block and its findings block;
``--check`` only says whether they are what the committed records give.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from ..results import REPO_ROOT

VERDICTS_FILE = Path("data") / "verdicts.json"
#: Rows of the verdict table that read a register claim under another id.
REGISTER_ID = {"norm_mechanism": "norm_intervention"}


def register_id(row_id: str) -> Optional[str]:
    """The register claim behind a row of the verdict table (None for a measured row)."""
    from ..claims.register import REGISTER

    cid = REGISTER_ID.get(row_id, row_id)
    return cid if cid in REGISTER else None


def row(row_id: str, verdict) -> dict:
    """A verdict-table row computed from a register verdict, exactly as a chapter glues it."""
    from ..claims.report import summary
    from ..display import typographic
    from .claims import CLAIMS

    chapter = next(c.chapter for c in CLAIMS if c.id == row_id)
    return {"chapter": chapter, "form": verdict.form, "preset": "book", "summary": typographic(summary(verdict).strip())}


def register_rows(root: Optional[Path] = None) -> dict[str, dict]:
    """Every verdict-table row that a register claim decides, computed from the records."""
    from ..claims.evaluate import evaluate
    from .claims import CLAIMS

    out = {}
    for c in CLAIMS:
        cid = register_id(c.id)
        if cid is not None and not c.machine_dependent:
            out[c.id] = row(c.id, evaluate(cid, root=root))
    return out


def with_register_rows(rows: dict[str, dict], root: Optional[Path] = None) -> dict[str, dict]:
    """``rows``' measured rows with every register row computed from the records, sorted by id."""
    out = {k: v for k, v in rows.items() if register_id(k) is None}
    out.update(register_rows(root))
    return dict(sorted(out.items()))


def computed(repo: Path = REPO_ROOT, root: Optional[Path] = None) -> dict[str, dict]:
    """The verdicts file as the records give it: the register's rows computed, the measured rows
    kept as the last book build wrote them."""
    path = repo / VERDICTS_FILE
    return with_register_rows(json.loads(path.read_text()) if path.exists() else {}, root)


def write(repo: Path = REPO_ROOT) -> list[str]:
    """Write data/verdicts.json and the README's findings and answer blocks; the paths changed."""
    from .answer import write_answer
    from .claims import findings_markdown, replace_findings

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
    from .answer import ANSWER_END, ANSWER_START, answer_block
    from .claims import FINDINGS_END, FINDINGS_START, findings_markdown

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
