"""The torch-free spec grammar (:mod:`polyattn.specs`) against the activation registry built on it."""
import json
from fractions import Fraction
from pathlib import Path

import pytest

from polyattn import activations as A
from polyattn import specs

RESULTS = Path(__file__).resolve().parents[2] / "data" / "results"

#: Canonical forms as the registry wrote them before the grammar moved into its own module.
CANONICAL = [
    ("softmax:k=1", "softmax"), ("softmax:k=1.0", "softmax"), ("softmax:k=2/4", "softmax:k=1/2"),
    ("softmax:k=0.5", "softmax:k=1/2"), (" softmax ", "softmax"), ("softmax:", "softmax"),
    ("poly:p=3,c=2/28", "poly:p=3,c=1/14"), ("poly:c=1/14,p=3", "poly:p=3,c=1/14"), ("poly:p=3,c=1.0", "poly:p=3,c=1"),
    ("poly:p=6/2", "poly:p=3"), ("poly:p=3.0", "poly:p=3"), (" poly : p = 3 ", "poly:p=3"),
    ("poly:p = 3 , c = 1/14", "poly:p=3,c=1/14"), ("poly:p=3,c=0.5", "poly:p=3,c=1/2"),
    ("poly:p=3,c=-1/14", "poly:p=3,c=-1/14"),
    ("ssmax:s=0.43", "ssmax:s=0.43"), ("ssmax:s=43/100", "ssmax:s=0.43"), ("ssmax:s=1/3", "ssmax:s=0.333333"),
    ("ssmax:s=2.50", "ssmax:s=2.5"), ("ssmax:s=1e-3", "ssmax:s=0.001"), ("ssmax:s=0.430000", "ssmax:s=0.43"),
    ("invsqrt:e=1", "invsqrt"), ("invsqrt:e=1.0", "invsqrt"), ("invsqrt:e=2", "invsqrt:e=2"),
    ("invsqrt:e=0.25", "invsqrt:e=1/4"), ("poly_odd:p=3,c=2/4", "poly_odd:p=3,c=1/2"),
    ("poly_learned:p=4/2", "poly_learned:p=2"), ("power_softmax:p=1", "power_softmax:p=1"),
]

BAD = ["", "soft max", "poly", "poly:p=x", "poly:q=2", "poly:p=3,c", "poly:p=1.5", "poly_norm:p=3", "ssmax",
       "ssmax:s=-1", "relu_n:p=2", "poly:p=0", "poly:p=1/0", "poly:p=3,,c=1", "softmax:k=0", "invsqrt:e=0",
       "power_softmax:p=0", "poly_cap:p=0", "poly_odd", "poly_learned", "poly_learned:p=1.5", "uniform:x=1"]


def _record_activations() -> set:
    out = set()
    for path in RESULTS.rglob("*.json"):
        try:
            record = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("config"), dict) and "activation" in record["config"]:
            out.add(record["config"]["activation"])
    return out


@pytest.mark.parametrize("spec,want", CANONICAL)
def test_canonical_forms_are_the_registry_s(spec, want):
    assert specs.canonical(spec) == want == A.canonical(spec) == A.get(spec).spec


def test_every_committed_record_names_its_activation_canonically():
    found = _record_activations()
    assert len(found) > 20 and {"softmax", "poly:p=3,c=1/14", "ssmax:s=0.43", "invsqrt"} <= found
    assert {s: specs.canonical(s) for s in found} == {s: s for s in found}
    assert {s: A.get(s).spec for s in found} == {s: s for s in found}


@pytest.mark.parametrize("bad", BAD)
def test_bad_specs_raise_the_same_error_from_the_grammar_and_the_registry(bad):
    with pytest.raises(ValueError, match="valid forms") as from_specs:
        specs.canonical(bad)
    with pytest.raises(ValueError, match="valid forms") as from_registry:
        A.get(bad)
    assert str(from_specs.value) == str(from_registry.value)
    assert "\n" not in str(from_specs.value)


def test_the_grammar_and_the_registry_know_the_same_families_and_forms():
    assert list(specs.FAMILIES) == list(A._BUILDERS)
    assert A.SPEC_FORMS == specs.SPEC_FORMS and A.BOOK_SPECS == specs.BOOK_SPECS
    assert {specs.declare(s).family for s in specs.BOOK_SPECS + specs.EXTRA_SPECS} == set(specs.FAMILIES)
    assert specs.valid_forms().startswith("valid forms: softmax; softmax:k=K; poly:p=P; poly:p=P,c=C;")


@pytest.mark.parametrize("spec", specs.BOOK_SPECS + specs.EXTRA_SPECS + tuple(s for _, s in CANONICAL))
def test_declared_properties_are_the_activation_s(spec):
    d, act = specs.declare(spec), A.get(spec)
    fields = ("spec", "family", "params", "nonnegative", "rows_sum_to_one", "elementwise", "description",
              "learned_scale")
    assert {f: getattr(d, f) for f in fields} == {f: getattr(act, f) for f in fields}


def test_properties_the_analysis_reads_are_declared_without_building():
    assert specs.declare("softmax").rows_sum_to_one and not specs.declare("softmax:k=2").rows_sum_to_one
    assert specs.declare("poly:p=2").nonnegative and not specs.declare("poly:p=3").nonnegative
    assert specs.declare("poly:p=3,c=2/28").params == {"p": 3, "c": "1/14"}
    assert specs.declare("poly_learned:p=2").learned_scale and specs.declare("uniform").elementwise
    assert specs.properties_table() == A.properties_table()


def test_a_family_added_with_only_a_builder_is_parsed_and_canonicalised_by_its_builder(monkeypatch):
    for module, name in ((specs, "FAMILIES"), (A, "_BUILDERS"), (A, "_CACHE"), (specs, "_CACHE")):
        monkeypatch.setattr(module, name, dict(getattr(module, name)))
    monkeypatch.setattr(specs, "SPEC_FORMS", specs.SPEC_FORMS)

    def builder(params):
        base = A.get("poly:p=2")
        return A.Activation(f"planted:q={params['q']}", "planted", {"q": params["q"]}, True, False, True, "s^2",
                            pointwise=base.pointwise, pointwise_grad=base.pointwise_grad)

    A.register("planted", builder, {"q"}, ("planted:q=Q",))
    A.register("planted", builder, {"q"})  # the same builder again: nothing happens
    assert specs.parse("planted:q=2/4") == ("planted", {"q": Fraction(1, 2)})
    assert A.canonical("planted:q=2/4") == "planted:q=1/2" and "planted:q=Q" in A.SPEC_FORMS
    with pytest.raises(ValueError, match="only a builder"):
        specs.canonical("planted:q=1")
    with pytest.raises(ValueError, match="already registered"):
        A.register("planted", lambda p: None, {"q"})
