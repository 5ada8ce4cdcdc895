"""Measured claims: rows decided by a library measure function rather than by paired comparisons."""
import importlib
import sys
import types

import pytest

from polyattn.claims import MEASURED, REGISTER, any_claim
from polyattn.claims.rule import FORMS
from polyattn.claims.spec import Finding, MeasuredClaim


def test_a_finding_takes_only_the_books_forms_and_a_sentence():
    assert Finding("holds", "it holds").numbers == {}
    with pytest.raises(ValueError, match="unknown verdict form 'matches'"):
        Finding("matches", "it matches")
    with pytest.raises(ValueError, match="non-empty sentence"):
        Finding("holds", "  ")


def test_a_measured_claim_runs_its_function_by_name_and_checks_what_it_returns(monkeypatch):
    module = types.ModuleType("polyattn.measures.planted")
    module.good = lambda root=None: Finding("measured", f"read from {root}", {"n": 3})
    module.bad = lambda root=None: {"form": "holds"}
    monkeypatch.setitem(sys.modules, "polyattn.measures.planted", module)
    claim = MeasuredClaim("planted", "a statement", "a source", "01_x", measure="measures.planted:good", rule="r")
    assert claim.evaluate("somewhere") == Finding("measured", "read from somewhere", {"n": 3})
    bad = MeasuredClaim("planted", "a statement", "a source", "01_x", measure="measures.planted:bad", rule="r")
    with pytest.raises(TypeError, match="returned dict, not a Finding"):
        bad.evaluate()
    with pytest.raises(ValueError, match="'module:function'"):
        MeasuredClaim("x", "s", "src", "01_x", measure="measures.planted.good", rule="r")


def test_every_measured_claim_states_its_rule_and_names_a_function_that_exists():
    for cid, c in MEASURED.items():
        assert c.rule.strip(), f"{cid}: say in words how the numbers decide the form"
        module, name = c.measure.split(":")
        assert callable(getattr(importlib.import_module(f"polyattn.{module}"), name, None)), f"{cid}: {c.measure}"


def test_one_register_one_id_one_statement():
    from polyattn.book.verdict_rows import CLAIMS, VERDICT_ROWS

    assert not set(MEASURED) & set(REGISTER)
    assert len(set(VERDICT_ROWS)) == len(VERDICT_ROWS)
    assert all(any_claim(c.id) is c for c in CLAIMS)
    with pytest.raises(ValueError, match="unknown claim 'nope'"):
        any_claim("nope")
    statements = [c.statement for c in (*REGISTER.values(), *MEASURED.values())]
    assert len(set(statements)) == len(statements)


def test_the_vocabulary_is_one_and_every_word_has_a_legend():
    from polyattn.book import verdict_rows
    from polyattn.claims.rule import LEGEND

    assert verdict_rows.FORMS is FORMS and set(FORMS) == set(LEGEND)
