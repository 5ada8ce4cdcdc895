"""Where the book shows a claim is read from the claim itself: a claim added to the register with its
headline, places and topic reaches the answer table, the verdict table and the forest plot's groups."""
import dataclasses

import pytest

from polyattn.book.answer_rows import answer_rows
from polyattn.claims import REGISTER, claim
from polyattn.claims.evaluate import evaluate
from polyattn.claims.register import answer_ids, verdict_ids
from polyattn.claims.report import topic_of
from polyattn.claims.spec import RegisteredClaim


def _planted(**shown):
    base = claim("table_parity")
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
    return RegisteredClaim(**{**fields, "id": "planted_claim", "headline": None, "answer_row": None,
                              "verdict_row": None, "topic": None, **shown})


def test_a_planted_claim_reaches_the_answer_the_verdict_table_and_the_forest_groups(monkeypatch):
    first = answer_ids()[0]
    planted = _planted(headline="A planted claim", answer_row=0, verdict_row=0, topic="Planted")
    monkeypatch.setitem(REGISTER, planted.id, planted)
    assert answer_ids()[0] == "planted_claim" and answer_ids()[1] == first
    assert verdict_ids()[0] == "planted_claim"
    assert topic_of(planted) == "Planted"
    verdict = evaluate("table_parity")
    rows = answer_rows({"planted_claim": dataclasses.replace(verdict, claim=planted)})
    assert [r.claim for r in rows] == ["A planted claim"]


def test_a_claim_without_places_is_in_no_table_and_takes_its_chapters_group(monkeypatch):
    planted = _planted()
    monkeypatch.setitem(REGISTER, planted.id, planted)
    assert "planted_claim" not in answer_ids() and "planted_claim" not in verdict_ids()
    assert topic_of(planted) == "ViT"  # chapter 04's group


def test_places_are_checked_when_the_claim_is_made():
    with pytest.raises(ValueError, match="needs both a headline and an answer_row"):
        _planted(headline="No row")
    with pytest.raises(ValueError, match="longer than 42 characters"):
        _planted(headline="x" * 43, answer_row=99)
    with pytest.raises(ValueError, match=r"answer_row \[1\] is given to more than one claim"):
        answer_ids([_planted(headline="One", answer_row=1), claim("marked_garment")])


def test_the_answer_table_has_at_most_twenty_rows_and_every_place_once():
    assert 0 < len(answer_ids()) <= 20
    assert len(set(verdict_ids())) == len(verdict_ids())
