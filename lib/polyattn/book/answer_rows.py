"""The answer table's rows: one per claim with an ``answer_row`` (:func:`polyattn.claims.register.answer_ids`), in its order,
each with its verdict word (the rule's forms, one vocabulary), its deciding comparison and the
markers that replace repeated notes (one legend line above the table says what they mean).

The forest plot (:mod:`polyattn.book.forest`) draws the same rows in the same order.  A row's key
is its deciding comparison: a primary comparison of the claim (never a check or a description),
the one that contradicts a claim that is not supported, else the first of the deciding tier.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..claims.register import answer_ids
from ..claims.report import key_cell, section_link, short_label
from .questions import _floor_words, informative

#: Forms under which a row says nothing about its claim: greyed in the forest plot.
UNTESTED_FORMS = ("not testable as designed", "inconclusive at this scale", "pending")

#: The markers of the answer table and the verdict table, each with the note it replaces.
MARKS = {
    "†": "margin, rule or chance level fixed after some runs were seen",
    "‡": "fewer pairs stored than planned (interim)",
    "§": "deciding needs more seeds than this book can run",
}


@dataclass
class AnswerRow:
    id: str
    claim: str  # the short name (the claim's headline)
    failed: tuple  # the comparisons of the claim's checks that failed (their results)
    statement: str
    chapter: str
    form: str
    key: Optional[object]  # the deciding ComparisonResult (None before two pairs are stored)
    named: bool  # whether the key's comparison is named in the table (several primaries, no deciding tier)
    late: bool
    interim: bool
    greyed: bool  # a gate or check failed, or nothing is testable yet: drawn grey

    @property
    def marks(self) -> str:
        return ("†" if self.late else "") + ("‡" if self.interim else "")


def deciding(v) -> Optional[object]:
    """A claim's deciding comparison: a primary with two pairs, informative ones first; for a claim
    that is not supported, one that contradicts it; else the first of the deciding tier."""
    primary = [r for r in v.comparisons if r.comparison.role == "primary" and r.n >= 2]
    if not primary:
        return None
    primary = sorted(primary, key=lambda r: not informative(r))  # stable: register order otherwise
    if v.form == "not supported":
        against = [r for r in primary if r.outcome == "contradicts" and informative(r)]
        if against:
            return against[0]
    tier = v.claim.deciding_tier
    first = [r for r in primary if tier is None or r.comparison.tier == tier]
    return (first or primary)[0]


def answer_rows(verdicts: dict, ids=None) -> list[AnswerRow]:
    """One row per claim of ``ids`` (default: the answer table's) that the register has, in order."""

    rows = []
    for cid in answer_ids() if ids is None else ids:
        v = verdicts.get(cid)
        if v is None:
            continue
        key = deciding(v)
        primaries = {r.comparison.label for r in v.comparisons if r.comparison.role == "primary"}
        rows.append(AnswerRow(
            id=cid, claim=v.claim.headline or v.claim.statement,
            failed=tuple(r for r in v.comparisons if r.comparison.role == "check" and r.outcome == "contradicts"),
            statement=v.claim.statement,
            chapter=v.claim.chapter, form=v.form, key=key, named=len(primaries) > 1 and not v.claim.deciding_tier,
            late=bool(v.claim.registered_after or v.claim.chance_registered_after),
            interim=any(r.n < r.planned for r in v.comparisons if r.comparison.role == "primary"),
            greyed=v.form in UNTESTED_FORMS or not informative(key)))
    return rows


def key_text(row: AnswerRow) -> str:
    """The table's key-number cell: the deciding comparison's number (named when the claim has
    several primaries and no deciding tier), or why it says nothing; then any check that failed."""

    r = row.key
    if r is None:
        return "no paired runs yet"
    text = key_cell(r)
    check = getattr(r, "voided_check", None)
    if check is not None and r.result == "cannot see attention":  # the ablated arm's number says why
        return f"untested: attention ablated only {key_cell(check)}"
    if not informative(r):
        text = f"untested: {_floor_words(r)}"
    text = f"{short_label(r.comparison.label)}: {text}" if row.named or not informative(r) else text
    if row.failed and informative(r):  # an untested row has said which check voided it
        text += " (check failed: " + "; ".join(short_label(f.comparison.label).replace(" (control)", "")
                                               for f in row.failed) + ")"
    return text


def legend_line(rows) -> str:
    """One line that says what the markers used in ``rows`` mean ("" when none is used)."""
    used = {m for row in rows for m in row.marks}
    return "; ".join(f"{m} {note}" for m, note in MARKS.items() if m in used) + ("." if used else "")


def table_markdown(rows: list[AnswerRow], links: bool = True, statements: bool = False) -> str:
    """The answer table: the claim's short name (linked to its section with ``links``, else with
    its chapter; with ``statements`` its full statement, as a chapter's findings give it), its
    verdict word with its markers, and its key number."""

    lines = ["| claim | verdict | key number |", "| --- | --- | --- |"]
    for row in rows:
        if statements:  # a statement keeps its maths, which a reference's title would show raw
            claim = f"{row.statement} ({section_link(row.id, 'section')})" if links else row.statement
        elif links:
            claim = section_link(row.id, row.claim)
        else:
            claim = f"{row.claim} (chapter {row.chapter.split('_', 1)[0]})"
        lines.append(f"| {claim} | **{row.form}**{row.marks} | {key_text(row).replace('|', chr(92) + '|')} |")
    return "\n".join(lines).replace("\u2212", "−")
