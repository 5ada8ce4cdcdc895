"""The reviewers' checklist: every critique once, every link and claim real, every item answered."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from polyattn.book.verdict_rows import CLAIM_IDS
from polyattn.claims import checklist
from polyattn.claims.register import REGISTER

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
N_ITEMS = 24  # the critiques of the reference notes' checklist


def _source(doc: str) -> str:
    return (CHAPTERS / f"{doc}.md").read_text()


def _labels(doc: str) -> set:
    return set(re.findall(r"^\(([\w-]+)\)=\s*$", _source(doc), flags=re.M))


def _headings(doc: str) -> list:
    return re.findall(r"^#{1,6} (.+)$", _source(doc), flags=re.M)


def test_every_item_is_present_exactly_once_in_order():
    numbers = [it.number for it in checklist.CHECKLIST]
    assert numbers == list(range(1, N_ITEMS + 1))


def test_every_claim_id_is_registered_and_every_verdict_id_is_a_chapter_verdict():
    for it in checklist.CHECKLIST:
        for cid in it.claims or ():
            assert cid in REGISTER, f"item {it.number}: {cid!r} is not in the register"
        for vid in it.verdicts:
            assert vid in CLAIM_IDS, f"item {it.number}: {vid!r} is not a chapter verdict"
        for key in (*(it.claims or ()), *it.verdicts):
            assert key in checklist.SHORT, f"item {it.number}: no short name for {key!r}"


def test_every_place_links_to_a_chapter_and_a_section_that_exist():
    for it in checklist.CHECKLIST:
        for place in it.places:
            assert (CHAPTERS / f"{place.doc}.md").exists(), f"item {it.number}: no chapter {place.doc}"
            if place.doc == checklist.HOME:
                assert place.label in _labels(place.doc), f"item {it.number}: no label ({place.label})= in {place.doc}"
            else:
                assert place.label is None, f"item {it.number}: labels are only linked in {checklist.HOME}"
                if place.heading is not None:
                    assert any(place.heading in h for h in _headings(place.doc)), (
                        f"item {it.number}: no heading of {place.doc} contains {place.heading!r}")


def test_items_without_claims_carry_a_section_or_a_reason():
    for it in checklist.CHECKLIST:
        if not it.claims:
            assert it.places or it.reason, f"item {it.number} is answered nowhere"
        if it.reason:
            assert not it.claims, f"item {it.number} has claims yet says it is not computed"


def test_the_chapter_declares_every_grid_the_checklist_reads_and_links_the_table():
    from polyattn.book.notebooks import declared_results, read_notebook

    declared = set(declared_results(read_notebook(CHAPTERS / f"{checklist.HOME}.md")))
    assert checklist.grids() and set(checklist.grids()) <= declared, set(checklist.grids()) - declared
    assert "reviewers-checklist" in _labels(checklist.HOME)


def test_the_table_has_one_row_per_item_and_the_verdicts_it_is_given():
    forms = {cid: "holds" for cid in checklist.claim_ids()}
    forms["qk_norm"] = "not supported"
    text = checklist.table_markdown(page_forms={"norm_paradox": "mixed"}, forms=forms)
    rows = text.splitlines()[2:]
    assert len(rows) == N_ITEMS
    assert all(r.count(" | ") == 4 for r in rows), "a cell holds an unescaped bar"
    by_item = {int(r.split("|")[1]): r for r in rows}
    assert "QK-norm does it: **not supported**" in by_item[8]
    assert "the paradox: **mixed**" in by_item[9]
    assert "{ref}`norm paradox <critiques-norm-paradox>`" in by_item[9]
    assert "{doc}`ch. 10 </chapters/10_architectures>`" in by_item[9]
    assert "computed, see the section" in by_item[10]  # its form is not given
    assert "nothing to compute" in by_item[24]
    # consecutive sections of one other chapter share one link
    assert by_item[3].count("{doc}`ch. 02") == 1


def test_reviewers_are_named_in_words():
    assert checklist.raised_by(("R25", "R26-2", "R26-1", "AI25")) == "ICLR 2025; ICLR 2026 #1, #2; LLM review"
    with pytest.raises(KeyError):
        checklist.verdict_cell(checklist.CHECKLIST[7], forms={})  # item 8 needs its claims' forms
