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
    # an untestable part never disappears from an all-of claim
    (["supports", "uninformative"], ["worse", "worse"], "partly testable"),
    (["contradicts", "uninformative"], ["worse", "worse"], "not supported"),
    (["supports", "smaller than the margin"], ["equivalent", "worse"], "holds, smaller than the margin"),
    (["smaller than the margin", "size unclear"], ["worse", "worse"], "detectable, size unclear"),
    (["contradicts", "open"], ["equivalent", "equivalent"], "not supported"),
    (["contradicts"], ["worse"], "not supported"),
    (["supports", "contradicts", "open"], ["equivalent"] * 3, "not supported"),
    (["supports", "size unclear"], ["worse", "equivalent"], "detectable, size unclear"),
    (["size unclear", "open"], ["worse", "worse"], "inconclusive at this power"),
    (["supports", "open"], ["equivalent"] * 2, "inconclusive at this power"),
    (["open", "open"], ["worse"] * 2, "inconclusive at this power"),
    (["uninformative", "uninformative"], ["equivalent"] * 2, "inconclusive at this scale"),
])
def test_the_claim_form_follows_one_rule(outcomes, expect, form):
    assert rule.claim_form(outcomes, expect) == form


def test_a_claim_without_enough_runs_is_inconclusive_at_this_scale():
    assert rule.claim_form(["open"], ["worse"], enough_runs=False) == "inconclusive at this scale"


def test_one_contradicting_part_fails_an_all_of_claim_and_one_supporting_part_carries_an_any_of_claim():
    assert rule.claim_form(["supports", "contradicts"], ["equivalent"] * 2, logic="all") == "not supported"
    assert rule.claim_form(["supports", "contradicts"], ["worse"] * 2, logic="any") == "holds"
    assert rule.claim_form(["contradicts", "contradicts"], ["worse"] * 2, logic="any") == "not supported"
    assert rule.claim_form(["contradicts", "open"], ["worse"] * 2, logic="any") == "inconclusive at this power"


def test_a_failed_check_makes_a_claim_not_testable_never_not_supported():
    assert rule.claim_form(["open"], ["equivalent"], checks=["contradicts"]) == "not testable as designed"
    assert rule.claim_form(["supports"], ["equivalent"], checks=["supports", "open"]) == \
        "equivalent within the margin"


_STATS = dict(ci_low=-4.0, ci_high=-2.0, margin=1.0)


@pytest.mark.parametrize("kw,result", [
    (dict(n=5, mean=-0.2, holm_p=0.5, equivalent=True), "equivalent"),
    (dict(n=5, mean=-3.0, holm_p=0.01, equivalent=False), "worse"),
    (dict(n=5, mean=3.0, holm_p=0.01, equivalent=False, ci_low=2.0, ci_high=4.0), "better"),
    (dict(n=5, mean=3.0, holm_p=0.01, equivalent=False, ci_low=2.0, ci_high=4.0, higher_is_better=False), "worse"),
    (dict(n=5, mean=-0.93, holm_p=0.04, equivalent=False, ci_low=-1.63, ci_high=-0.23), "worse, size unclear"),
    (dict(n=5, mean=-3.0, holm_p=0.2, equivalent=False), "inconclusive"),
    (dict(n=1, mean=-3.0, holm_p=math.nan, equivalent=False), "inconclusive"),
    (dict(n=5, mean=0.1, holm_p=0.9, equivalent=True, candidate_learned=False, baseline_learned=False),
     "uninformative"),
    (dict(n=5, mean=-40.0, holm_p=0.001, equivalent=False, candidate_learned=False), "did not learn"),
    (dict(n=3, mean=27.8, holm_p=0.4, equivalent=False, split=True), "split"),
    # one seed pair: a seed that stayed at chance against one that learned is not yet "most seeds"
    (dict(n=1, mean=-73.0, holm_p=math.nan, equivalent=False, candidate_learned=False), "inconclusive"),
    (dict(n=1, mean=-73.0, holm_p=math.nan, equivalent=False, split=True), "inconclusive"),
])
def test_a_comparisons_result_comes_from_its_statistics(kw, result):
    assert rule.comparison_result(alpha=0.05, **{**_STATS, **kw}) == result


def test_a_directional_claim_holds_only_beyond_its_margin():
    assert rule.outcome("worse", "worse") == "supports"
    assert rule.outcome("worse, size unclear", "worse") == "size unclear"
    assert rule.outcome("worse, size unclear", "equivalent") == "open"
    assert rule.outcome("better, size unclear", "worse") == "contradicts"


def test_chance_is_judged_per_seed_and_one_sided():
    # x^7 at 9.6%, 9.6% and 53.7%: its mean (24.3%) is far from chance, yet two of three seeds did not learn
    assert rule.arm_learned([9.6, 9.6, 53.7], chance=10.0, band=2.0) is False
    assert rule.arm_learned([80.0, 81.0, 9.0], chance=10.0, band=2.0) is True
    # far *worse* than chance did not learn either (bits/char above the unigram model)
    assert not rule.learned(6.0, chance=4.36, band=0.5, higher_is_better=False)
    assert rule.learned(2.0, chance=4.36, band=0.5, higher_is_better=False)
    assert rule.arm_learned([9.0, 80.0], chance=10.0, band=2.0) is None


def test_exact_intervals_for_counts_of_seeds():
    lo, hi = rule.exact_interval(2, 3)
    assert lo == pytest.approx(0.0943, abs=1e-3) and hi == pytest.approx(0.9916, abs=1e-3)
    assert rule.exact_interval(0, 3)[0] == 0.0 and rule.exact_interval(3, 3)[1] == 1.0


def test_equivalent_and_significant_reads_worse_by_less_than_the_margin():
    q = rule.qualifier("equivalent", mean=-0.24, holm_p=0.03, alpha=0.05)
    assert q == ", worse by less than the margin"
    # a claim that predicts this harm finds it, smaller than the margin; one that predicts a gain does not
    assert rule.outcome("equivalent", "worse", q) == "smaller than the margin"
    assert rule.outcome("equivalent", "better", q) == "contradicts"
    assert rule.outcome("equivalent", "equivalent", q) == "supports"
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
    assert v.form == "not supported"
    # Holm within the claim's informative primary comparisons: the uninformative one is left out
    assert all(r.holm_p >= r.t_p for r in v.comparisons if math.isfinite(r.holm_p))
    assert math.isnan(by["chance"].holm_p)


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


# --- roles, citing, the Holm family, pooled cells and interim rows, on planted records --------------

def _claim_with(*comparisons, chance=None, **kw):
    return RegisteredClaim("unit", "unit claim", "test", "04_vit", comparisons=tuple(comparisons), margin=1.0,
                           chance=chance, chance_band=2.0, **kw)


def _role(cid, cand, base, expect, role):
    return Comparison(cid, cid, Arm("unit_claims", {"activation": cand}), Arm("unit_claims", {"activation": base}),
                      expect, role=role)


def test_a_control_that_moves_makes_the_claim_not_testable_and_never_decides_it(planted):
    # the primary (x^3/sqrt(N) against softmax) is equivalent; the control (unscaled cube matches softmax) fails
    claim = _claim_with(_role("eq", "poly:p=3", "softmax", "equivalent", "primary"),
                        _role("control", "poly:p=3,c=1", "softmax", "equivalent", "check"))
    v = evaluate(claim, root=planted, preset="smoke")
    assert v.form == "not testable as designed"
    claim = _claim_with(_role("eq", "poly:p=3", "softmax", "equivalent", "primary"),
                        _role("other", "poly:p=3,c=1", "softmax", "equivalent", "description"))
    v = evaluate(claim, root=planted, preset="smoke")
    assert v.form == "equivalent within the margin"
    assert {r.comparison.id: r.result for r in v.comparisons}["other"] == "worse"


def test_a_claim_needs_a_primary_comparison():
    with pytest.raises(ValueError, match="no primary comparison"):
        _claim_with(_role("c", "poly:p=3", "softmax", "equivalent", "check"))


def test_uninformative_comparisons_stay_out_of_the_holm_family(planted):
    alone = evaluate(_claim_with(_cmp("worse", "poly:p=3,c=1", "softmax", "worse")), root=planted, preset="smoke")
    with_chance = evaluate(_claim_with(_cmp("worse", "poly:p=3,c=1", "softmax", "worse"),
                                       _cmp("chance", "poly:p=1", "poly:p=2", "equivalent"), chance=10.0),
                           root=planted, preset="smoke")
    assert with_chance.comparisons[0].holm_p == pytest.approx(alone.comparisons[0].holm_p)


def test_a_cited_comparison_keeps_the_result_of_the_claim_that_owns_it(planted, monkeypatch):
    from polyattn.claims import register

    owner = _claim_with(_cmp("worse", "poly:p=3,c=1", "softmax", "worse"), _cmp("eq", "poly:p=3", "softmax", "equivalent"))
    owner = RegisteredClaim("unit_owner", **{k: getattr(owner, k) for k in ("statement", "source", "chapter",
                                                                            "comparisons", "margin")})
    monkeypatch.setitem(register.REGISTER, "unit_owner", owner)
    cite = Comparison("worse_cited", "cited", Arm("unit_claims", {"activation": "poly:p=3,c=1"}),
                      Arm("unit_claims", {"activation": "softmax"}), "equivalent", cited_from="unit_owner:worse")
    v = evaluate(_claim_with(cite), root=planted, preset="smoke")
    owned = evaluate(owner, root=planted, preset="smoke").comparisons[0]
    assert v.comparisons[0].holm_p == owned.holm_p and v.comparisons[0].result == owned.result == "worse"
    assert v.comparisons[0].outcome == "contradicts"   # judged against this claim's expectation
    bad = Comparison("x", "x", cite.candidate, cite.baseline, "equivalent", cited_from="unit_owner:nope")
    with pytest.raises(ValueError, match="has no comparison 'nope'"):
        evaluate(_claim_with(bad), root=planted, preset="smoke")


def test_pooled_cells_of_opposite_sign_give_no_pooled_number(tmp_path, planted_grid):
    configs = []
    for s in range(4):
        for model, delta in (("micro", +5.0), ("mini", -5.0)):
            base = 0.80 + 0.001 * s
            for act, acc in (("softmax", base), ("poly:p=3", base + delta / 100 + 0.002 * (s % 2))):
                cfg = TrainConfig(experiment="unit_pool", activation=act, seed=s, preset="smoke", model=model)
                configs.append(plant(tmp_path, cfg, [{"epoch": 1, "test_acc": acc}]))
    planted_grid("unit_pool", configs)
    comp = Comparison("pooled", "pooled", Arm("unit_pool", {"activation": "poly:p=3"}),
                      Arm("unit_pool", {"activation": "softmax"}), "equivalent", pool_over=("model",))
    r = evaluate(_claim_with(comp), root=tmp_path, preset="smoke").comparisons[0]
    assert r.cells_disagree and r.result == "inconclusive"
    assert sorted(round(m) for m, *_ in r.cell_estimates.values()) == [-5, 5]
    from polyattn.claims.report import summary

    assert "opposite directions" in summary(evaluate(_claim_with(comp), root=tmp_path, preset="smoke"))


def test_a_row_with_fewer_pairs_than_planned_says_so(planted, planted_grid):
    from polyattn.claims.report import answer_rows, summary

    v = evaluate(_claim_with(_cmp("eq", "poly:p=3", "softmax", "equivalent")), root=planted, preset="smoke")
    # a sixth seed planned in both arms and not run yet: 5 of 6 pairs
    extra = [TrainConfig(experiment="unit_claims", activation=a, seed=5, preset="smoke") for a in ("poly:p=3", "softmax")]
    from polyattn import experiments

    configs = experiments.GRIDS["unit_claims"]("smoke", None) + extra
    planted_grid("unit_claims", configs)
    v = evaluate(_claim_with(_cmp("eq", "poly:p=3", "softmax", "equivalent")), root=planted, preset="smoke")
    assert "5 of 6 planned pairs" in summary(v)
    from polyattn.claims import register

    rows = answer_rows({"unit": v}, ids=["unit"])
    assert rows[0]["interim"] and register is not None


def test_combine_forms_reads_each_part_by_what_it_says_of_the_claim():
    assert rule.combine_forms([]) == "inconclusive at this scale"
    assert rule.combine_forms(["worse", "worse"]) == "not supported"
    assert rule.combine_forms(["equivalent", "equivalent"]) == "equivalent within the margin"
    assert rule.combine_forms(["equivalent", "inconclusive"]) == "inconclusive at this power"
    assert rule.combine_forms(["worse", "better"]) == "not supported"   # neither supports equivalence
    # one contradicting part and none supporting: not supported (not "mixed")
    assert rule.combine_forms(["worse", "inconclusive"]) == "not supported"
    assert rule.combine_forms(["equivalent", "worse"]) == "not supported"
    # a detectable difference inside the margin leaves an equivalence open, as the register reads it
    assert rule.combine_forms(["equivalent", "worse, size unclear"]) == "inconclusive at this power"
    with pytest.raises(ValueError, match="unknown form"):
        rule.combine_forms(["nearly"])



def test_a_split_comparisons_row_gives_counts_not_a_mean_interval():
    """Seeds that learned and seeds that did not: the row reads the counts, and leaves out the
    intervals and p-values of a mean that describes no seed."""
    from types import SimpleNamespace

    from polyattn.claims.evaluate import ComparisonResult
    from polyattn.claims.report import comparison_rows

    comp = Comparison("c", "x³ − softmax", Arm("g", {}), Arm("g", {}), "equivalent")
    common = dict(comparison=comp, n=3, planned=3, diverged=0, unit="points", higher_is_better=True,
                  candidate_mean=75.0, baseline_mean=75.2, mean=-0.2, ci_low=-185.4, ci_high=185.1, ci90_low=-120.0,
                  ci90_high=119.0, t_p=0.99, tost_p=0.48, equivalent=False, mde=math.nan, holm_p=1.0)
    split = ComparisonResult(**common, result="split", learned_counts=(2, 2, 3))
    plain = ComparisonResult(**common, result="inconclusive", learned_counts=(3, 3, 3))
    rows = comparison_rows(SimpleNamespace(comparisons=[split, plain]))
    assert rows[0]["Difference [95% CI]"] == "seeds that learned: 2 of 3 against 2 of 3"
    assert rows[0]["90% CI"] == rows[0]["Holm p"] == rows[0]["TOST p"] == ""
    assert "185" in rows[1]["Difference [95% CI]"] and rows[1]["Holm p"] != ""
    # most of the candidate's seeds at chance, one learned: "did not learn", still read as counts
    bimodal = ComparisonResult(**common, result="did not learn", learned_counts=(1, 3, 3), split=True)
    row = comparison_rows(SimpleNamespace(comparisons=[bimodal]))[0]
    assert row["Difference [95% CI]"] == "seeds that learned: 1 of 3 against 3 of 3" and row["Result"] == "did not learn"


def test_an_inconclusive_comparison_whose_interval_excludes_zero_states_its_holm_p():
    """"−6.98 [−10.91, −3.05] points, inconclusive" reads as a contradiction unless the sentence
    says that the Holm-corrected p kept it open."""
    from polyattn.claims.evaluate import ComparisonResult
    from polyattn.claims.report import _comparison_text

    comp = Comparison("c", "x⁵/√N − x³/√N", Arm("g", {}), Arm("g", {}), "worse")
    common = dict(comparison=comp, n=3, planned=3, diverged=0, unit="points", higher_is_better=True,
                  candidate_mean=70.0, baseline_mean=77.0, mean=-6.98, ci90_low=-10.0, ci90_high=-4.0, t_p=0.02,
                  tost_p=0.9, equivalent=False, mde=12.7, holm_p=0.12, result="inconclusive")
    away = ComparisonResult(**common, ci_low=-10.91, ci_high=-3.05)
    across = ComparisonResult(**common, ci_low=-12.0, ci_high=1.0)
    assert "(3 pairs, Holm p = 0.12), inconclusive" in _comparison_text(away)
    assert "Holm p" not in _comparison_text(across)


def test_a_claims_summary_puts_its_deciding_tier_first_and_the_others_as_description(planted):
    """The tier designed to decide leads; another tier's comparison follows as description, without
    the detectable effect and pairs needed that would suggest more seeds there could decide."""
    import dataclasses

    from polyattn.claims.report import summary

    small = dataclasses.replace(_cmp("small tier", "poly:p=3", "softmax", "equivalent"), tier="small")
    big = dataclasses.replace(small, id="big tier", label="big tier", tier="big")
    claim = RegisteredClaim("unit", "unit claim", "test", "04_vit", comparisons=(small, big), margin=0.001,
                            deciding_tier="big")
    v = evaluate(claim, root=planted, preset="smoke")
    assert [r.outcome for r in v.comparisons] == ["open", "open"]
    text = summary(v)
    assert text.startswith("big tier: ") and ". As description, the other tiers: small tier: " in text
    decided, described = text.split("As description")
    assert "these seeds detect" in decided and "these seeds detect" not in described
