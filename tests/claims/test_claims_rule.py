"""The one verdict rule, on every combination of outcomes, and a claim computed from planted records."""
import math

import pytest
from support.planted_records import plant

from polyattn.claims import rule
from polyattn.claims.evaluate import evaluate
from polyattn.claims.spec import Arm, Comparison, RegisteredClaim
from polyattn.config import TrainConfig


@pytest.mark.parametrize("outcomes,expect,form", [
    (["supports", "supports"], ["equivalent", "equivalent"], "equivalent within the margin"),
    (["supports", "supports"], ["worse", "equivalent"], "holds"),
    (["supports", "uninformative"], ["worse", "worse"], "holds"),
    (["contradicts", "open"], ["equivalent", "equivalent"], "not supported"),
    (["contradicts"], ["worse"], "not supported"),
    (["supports", "contradicts", "open"], ["equivalent"] * 3, "mixed"),
    (["supports", "open"], ["equivalent"] * 2, "inconclusive at this power"),
    (["open", "open"], ["worse"] * 2, "inconclusive at this power"),
    (["uninformative", "uninformative"], ["equivalent"] * 2, "inconclusive at this scale"),
])
def test_the_claim_form_follows_one_rule(outcomes, expect, form):
    assert rule.claim_form(outcomes, expect) == form


def test_a_claim_without_enough_runs_is_inconclusive_at_this_scale():
    assert rule.claim_form(["open"], ["worse"], enough_runs=False) == "inconclusive at this scale"


@pytest.mark.parametrize("kw,result", [
    (dict(n=5, mean=-0.2, holm_p=0.5, equivalent=True), "equivalent"),
    (dict(n=5, mean=-3.0, holm_p=0.01, equivalent=False), "worse"),
    (dict(n=5, mean=3.0, holm_p=0.01, equivalent=False), "better"),
    (dict(n=5, mean=3.0, holm_p=0.01, equivalent=False, higher_is_better=False), "worse"),
    (dict(n=5, mean=-3.0, holm_p=0.2, equivalent=False), "inconclusive"),
    (dict(n=1, mean=-3.0, holm_p=math.nan, equivalent=False), "inconclusive"),
    (dict(n=5, mean=0.1, holm_p=0.9, equivalent=True, candidate_at_chance=True, baseline_at_chance=True),
     "uninformative"),
    (dict(n=5, mean=-40.0, holm_p=0.001, equivalent=False, candidate_at_chance=True), "did not learn"),
])
def test_a_comparisons_result_comes_from_its_statistics(kw, result):
    assert rule.comparison_result(alpha=0.05, **kw) == result


def test_equivalent_and_significant_reads_equivalent_and_slightly_worse():
    q = rule.qualifier("equivalent", mean=-0.24, holm_p=0.03, alpha=0.05)
    assert q == ", and slightly worse"
    assert rule.qualifier("equivalent", mean=-0.24, holm_p=0.3, alpha=0.05) == ""


@pytest.mark.parametrize("result,expect,out", [
    ("equivalent", "equivalent", "supports"), ("worse", "equivalent", "contradicts"),
    ("inconclusive", "equivalent", "open"), ("worse", "worse", "supports"), ("equivalent", "worse", "contradicts"),
    ("better", "worse", "contradicts"), ("did not learn", "worse", "supports"),
    ("did not learn", "equivalent", "contradicts"), ("uninformative", "worse", "uninformative"),
])
def test_outcome_against_what_the_claim_expects(result, expect, out):
    assert rule.outcome(result, expect) == out


def test_every_form_has_a_legend_entry():
    assert set(rule.FORMS) == set(rule.LEGEND)


# --- a claim computed from planted records -------------------------------------------------------

def _plant(root, activation, seed, acc, status="ok"):
    cfg = TrainConfig(experiment="unit_claims", activation=activation, seed=seed, preset="smoke")
    return plant(root, cfg, [{"epoch": 1, "test_acc": acc}], status=status)


@pytest.fixture
def planted(tmp_path, planted_grid):
    accs = {"softmax": [0.80, 0.81, 0.79, 0.80, 0.82], "poly:p=3": [0.801, 0.808, 0.792, 0.799, 0.821],
            "poly:p=3,c=1": [0.70, 0.72, 0.69, 0.71, 0.70], "poly:p=1": [0.10, 0.11, 0.09, 0.10, 0.10],
            "poly:p=2": [0.105, 0.095, 0.10, 0.11, 0.10]}
    planted_grid("unit_claims", [_plant(tmp_path, act, s, a) for act, vals in accs.items() for s, a in enumerate(vals)])
    return tmp_path


def _claim(*comparisons, chance=None):
    return RegisteredClaim("unit", "unit claim", "test", "04_vit", comparisons=tuple(comparisons), margin=1.0,
                           chance=chance, chance_band=2.0)


def _cmp(cid, cand, base, expect):
    return Comparison(cid, cid, Arm("unit_claims", {"activation": cand}), Arm("unit_claims", {"activation": base}),
                      expect)


def test_planted_records_give_equivalent_worse_and_uninformative(planted):
    claim = _claim(_cmp("eq", "poly:p=3", "softmax", "equivalent"), _cmp("worse", "poly:p=3,c=1", "softmax", "worse"),
                   _cmp("chance", "poly:p=1", "poly:p=2", "equivalent"),
                   _cmp("nolearn", "poly:p=1", "softmax", "equivalent"), chance=10.0)
    v = evaluate(claim, root=planted, preset="smoke")
    by = {r.comparison.id: r for r in v.comparisons}
    assert by["eq"].result == "equivalent" and by["eq"].outcome == "supports" and by["eq"].n == 5
    assert by["worse"].result == "worse" and by["worse"].mean == pytest.approx(-10.0, abs=0.5)
    assert by["chance"].result == "uninformative" and by["chance"].outcome == "uninformative"
    assert by["nolearn"].result == "did not learn" and by["nolearn"].outcome == "contradicts"
    assert v.form == "mixed"
    # Holm within the claim's own four comparisons
    assert all(r.holm_p >= r.t_p for r in v.comparisons if math.isfinite(r.t_p))


def test_without_the_chance_guard_two_arms_at_chance_would_be_judged(planted):
    v = evaluate(_claim(_cmp("chance", "poly:p=1", "poly:p=2", "equivalent")), root=planted, preset="smoke")
    assert v.comparisons[0].result != "uninformative"
    v = evaluate(_claim(_cmp("chance", "poly:p=1", "poly:p=2", "equivalent"), chance=10.0), root=planted,
                 preset="smoke")
    assert v.form == "inconclusive at this scale"


def test_a_claim_whose_runs_are_missing_is_inconclusive_at_this_scale(planted):
    v = evaluate(_claim(_cmp("missing", "sigmoid", "softmax", "equivalent")), root=planted, preset="smoke")
    assert v.comparisons[0].n == 0 and v.form == "inconclusive at this scale"


# --- per-comparison margins, baselines with nothing to improve on, measurements under ``final`` --------

def _plant_sinks(root, activation, seed, rate):
    from support.planted_records import plant as plant_

    cfg = TrainConfig(experiment="unit_sinks", activation=activation, seed=seed, preset="smoke")
    return plant_(root, cfg, [{"epoch": 1, "test_acc": 0.5}], final={"sinks": {"sink_rate": rate}})


@pytest.fixture
def sinks(tmp_path, planted_grid):
    rates = {"softmax": [0.5, 0.625, 0.5], "sigmoid": [0.0, 0.25, 0.0], "softpick": [0.0, 0.0, 0.0],
             "poly:p=3": [0.0, 0.0, 0.0]}
    planted_grid("unit_sinks", [_plant_sinks(tmp_path, a, s, r) for a, vals in rates.items() for s, r in enumerate(vals)])
    return tmp_path


def _sink_cmp(cid, cand, base, **kw):
    return Comparison(cid, cid, Arm("unit_sinks", {"activation": cand}), Arm("unit_sinks", {"activation": base}),
                      "better", metric="sinks.sink_rate", **kw)


def test_a_measurement_stored_under_final_is_compared_with_its_own_margin(sinks):
    from polyattn.claims.report import summary

    claim = RegisteredClaim("unit", "unit claim", "test", "07_causal", margin=0.05, comparisons=(
        _sink_cmp("sigmoid", "sigmoid", "softmax", margin=0.125, baseline_null=0.0, chance_band=0.0625),))
    v = evaluate(claim, root=sinks, preset="smoke")
    r = v.comparisons[0]
    assert r.n == 3 and r.mean == pytest.approx(-(0.5 + 0.375 + 0.5) / 3, abs=1e-9)
    assert r.margin == 0.125 and r.unit == "share" and not r.higher_is_better
    assert r.result == "better" and v.form == "holds"
    assert "±0.125" in summary(v)


def test_a_baseline_at_its_null_level_makes_the_comparison_uninformative(sinks):
    # poly against softpick: the baseline forms no sink, so there is none to have fewer of
    claim = RegisteredClaim("unit", "unit claim", "test", "07_causal", margin=0.125, comparisons=(
        _sink_cmp("none", "poly:p=3", "softpick", baseline_null=0.0, chance_band=0.0625),
        _sink_cmp("some", "sigmoid", "softmax", baseline_null=0.0, chance_band=0.0625)))
    v = evaluate(claim, root=sinks, preset="smoke")
    by = {r.comparison.id: r for r in v.comparisons}
    assert by["none"].result == "uninformative" and by["some"].result != "uninformative"
    # without the null level the same pairs would be judged
    v = evaluate(RegisteredClaim("unit", "u", "t", "07_causal", margin=0.125, comparisons=(
        _sink_cmp("none", "poly:p=3", "softpick"),)), root=sinks, preset="smoke")
    assert v.comparisons[0].result != "uninformative"


def test_a_comparison_refuses_a_non_positive_margin():
    arm = Arm("vit_table1", {"activation": "softmax"})
    with pytest.raises(ValueError, match="margin must be positive"):
        Comparison("x", "x", arm, arm, "equivalent", margin=0.0)
