"""The rule on planted records: checks that void only what they validate, gates at a floor, counts
compared with an exact test, harms inside the margin, one multiplicity rule, untestable parts, the
direction across tiers, and planned grids with no runs."""
import math

import pytest
from support.planted_records import plant

from polyattn.claims import rule
from polyattn.claims.evaluate import evaluate
from polyattn.claims.report import _key, answer_rows, comparison_rows, summary
from polyattn.claims.spec import Arm, Comparison, Gate, RegisteredClaim
from polyattn.config import TrainConfig

GRID = "unit_cells"
#: per-seed noise, in fractions of accuracy (a spread of about 0.1 points)
NOISE = (0.0, 0.001, -0.001, 0.0005, -0.0005, 0.0012)


def _runs(root, arms: dict, seeds=5, grid=GRID):
    """``arms``: (activation, dataset) -> accuracy per seed (a list) or a level plus the shared noise."""
    configs = []
    for (act, data), acc in arms.items():
        for s in range(seeds):
            a = acc[s] if isinstance(acc, (list, tuple)) else acc + NOISE[s]
            cfg = TrainConfig(experiment=grid, activation=act, seed=s, preset="smoke", dataset=data)
            configs.append(plant(root, cfg, [{"epoch": 1, "test_acc": a}]))
    return configs


def _cmp(cid, cand, base, expect, data="a", **kw):
    return Comparison(cid, cid, Arm(GRID, {"activation": cand, "dataset": data}),
                      Arm(GRID, {"activation": base, "dataset": data}), expect, **kw)


def _claim(*comparisons, **kw):
    kw = {"margin": 1.0, "chance": 10.0, "chance_band": 2.0, **kw}
    return RegisteredClaim("unit", "unit claim", "test", "04_vit", comparisons=tuple(comparisons), **kw)


def _by(v):
    return {r.comparison.id: r for r in v.comparisons}


# --- checks per cell --------------------------------------------------------------------------------------

@pytest.fixture
def cells(tmp_path, planted_grid):
    planted_grid(GRID, _runs(tmp_path, {
        # cell a: the candidate never learns (at chance) where softmax does; the ablated control matches softmax
        ("softmax", "a"): 0.80, ("poly:p=3", "a"): 0.10, ("uniform", "a"): 0.80,
        # cell b: the candidate matches softmax, and so does attention ablated: the benchmark is blind here
        ("softmax", "b"): 0.80, ("poly:p=3", "b"): 0.80, ("uniform", "b"): 0.80,
        # cell c: the candidate matches softmax, and ablated attention falls far behind: the control passes
        ("softmax", "c"): 0.80, ("poly:p=3", "c"): 0.80, ("uniform", "c"): 0.60,
        # cell d: the candidate matches; the control's seeds scatter too widely to say
        ("softmax", "d"): 0.80, ("poly:p=3", "d"): 0.80,
        ("uniform", "d"): [0.85, 0.70, 0.90, 0.65, 0.82],
        # cell e: the candidate falls far behind; the control scatters as in d
        ("softmax", "e"): 0.80, ("poly:p=3", "e"): 0.60,
        ("uniform", "e"): [0.85, 0.70, 0.90, 0.65, 0.82]})
        # planned and never run
        + [TrainConfig(experiment=GRID, activation=a, seed=s, preset="smoke", dataset="a")
           for a in ("sigmoid", "softmax") for s in range(5, 10)])
    return tmp_path


def _physics_like(*cells_, logic="all"):
    comps = [_cmp(c, "poly:p=3", "softmax", "equivalent", data=c) for c in cells_]
    checks = [_cmp(f"ablated_{c}", "uniform", "softmax", "worse", data=c, role="check", validates=(c,))
              for c in cells_]
    return _claim(*comps, *checks, logic=logic)


def test_a_failed_control_voids_the_equivalence_it_validates_and_not_a_deficit_elsewhere(cells):
    v = evaluate(_physics_like("a", "b", "c"), root=cells, preset="smoke")
    by = _by(v)
    assert by["a"].result == "did not learn" and by["a"].voided_by is None       # its control failed too,
    assert by["a"].outcome == "contradicts" and "still counts" in by["a"].check_note  # but a deficit counts
    assert by["b"].result == "cannot see attention" and by["b"].outcome == "uninformative"
    assert by["c"].result == "equivalent" and by["c"].voided_by is None
    assert v.form == "not supported"
    text = summary(v)
    assert "cannot see attention (its positive control failed: ablated_b)" in text
    # without the deficit the voided cell leaves the claim partly testable, never equivalent
    v = evaluate(_physics_like("b", "c"), root=cells, preset="smoke")
    assert v.form == "partly testable" and v.parts_form == "equivalent within the margin"
    assert any(u.startswith("b:") and "cannot see attention" in u for u in v.untestable)


def test_a_check_without_validates_voids_every_primary_and_the_claim_is_not_testable(cells):
    claim = _claim(_cmp("b", "poly:p=3", "softmax", "equivalent", data="b"),
                   _cmp("ablated", "uniform", "softmax", "worse", data="b", role="check"))
    v = evaluate(claim, root=cells, preset="smoke")
    assert v.form == "not testable as designed"
    # the row is keyed by its primary, not by the check that failed
    assert _key(v).comparison.id == "b"


def test_a_control_that_must_not_move_and_moved_voids_what_it_validates(cells):
    claim = _claim(_cmp("c", "poly:p=3", "softmax", "equivalent", data="c"),
                   _cmp("b", "poly:p=3", "softmax", "equivalent", data="b"),
                   _cmp("moved", "uniform", "softmax", "equivalent", data="c", role="check", validates=("c",)))
    v = evaluate(claim, root=cells, preset="smoke")
    assert _by(v)["c"].result == "control failed" and _by(v)["b"].result == "equivalent"
    assert v.form == "partly testable"


def test_an_open_positive_control_voids_an_agreement_and_is_stated_as_open(cells):
    # ablated attention not shown beyond the margin: agreement within it cannot tell attention from none
    v = evaluate(_physics_like("d"), root=cells, preset="smoke")
    assert _by(v)["ablated_d"].outcome == "open"
    d = _by(v)["d"]
    assert d.result == "cannot see attention" and d.outcome == "uninformative" and d.voided_by == "ablated_d"
    assert "not shown beyond the ±" in d.voided_why and d.voided_check is _by(v)["ablated_d"]
    row = next(r for r in comparison_rows(v) if r["Comparison"] == "d")
    assert "not shown beyond" in row["Result"]
    assert "(open)" in summary(v) and v.open_checks
    assert v.form == "not testable as designed"
    # a difference beyond the margin still counts, with the open check written on it
    v = evaluate(_physics_like("e"), root=cells, preset="smoke")
    e = _by(v)["e"]
    assert e.voided_by is None and e.check_note.startswith("its check (ablated_e) is open")
    row = next(r for r in comparison_rows(v) if r["Comparison"] == "e")
    assert "is open" in row["Result"] and v.form == "not supported"
    # a check with no runs is open too, and said so
    claim = _claim(_cmp("c", "poly:p=3", "softmax", "equivalent", data="c"),
                   _cmp("none", "sigmoid", "softmax", "worse", data="c", role="check", validates=("c",)))
    v = evaluate(claim, root=cells, preset="smoke")
    assert v.form == "equivalent within the margin" and "Checks with no runs yet (open): none" in summary(v)


def test_a_check_must_name_comparisons_of_its_claim():
    with pytest.raises(ValueError, match="validates 'nope'"):
        _claim(_cmp("a", "poly:p=3", "softmax", "equivalent"),
               _cmp("chk", "uniform", "softmax", "worse", role="check", validates=("nope",)))
    with pytest.raises(ValueError, match="only a check"):
        _cmp("a", "poly:p=3", "softmax", "equivalent", validates=("a",))


# --- gates and counts -------------------------------------------------------------------------------------

@pytest.fixture
def floors(tmp_path, planted_grid):
    planted_grid(GRID, _runs(tmp_path, {
        # both arms above chance (10%) but softmax below the floor of 30%: nothing learned beyond it
        ("softmax", "low"): 0.25, ("poly:p=3", "low"): 0.2502,
        # x³/14-like: two of three seeds past the floor, softmax none (the MQAR long runs' pattern)
        ("softmax", "split"): [0.103, 0.104, 0.103], ("poly:p=3", "split"): [0.545, 0.529, 0.071],
        # one of three against three of three past chance
        ("softmax", "one"): [0.80, 0.81, 0.79], ("poly:p=3", "one"): [0.80, 0.10, 0.11],
        # one of six against six of six: the exact test separates them
        ("softmax", "six"): [0.80] * 6, ("poly:p=3", "six"): [0.79, 0.10, 0.11, 0.10, 0.09, 0.10],
        # past the floor, but ten points below softmax's own result in the "one" cell
        ("softmax", "drift"): 0.70, ("poly:p=3", "drift"): 0.70,
    }, seeds=3) + _runs(tmp_path, {("softmax", "six"): [0.80] * 6,
                                  ("poly:p=3", "six"): [0.79, 0.10, 0.11, 0.10, 0.09, 0.10]}, seeds=6))
    return tmp_path


def test_a_baseline_that_does_not_clear_its_gate_makes_the_comparison_uninformative(floors):
    gate = Gate("the planted floor", 30.0)
    v = evaluate(_claim(_cmp("low", "poly:p=3", "softmax", "equivalent", data="low", gate=gate)), root=floors,
                 preset="smoke")
    r = v.comparisons[0]
    assert r.gate_failed and r.result == "uninformative" and v.form == "inconclusive at this scale"
    assert "did not learn beyond the planted floor" in summary(v)
    # without the gate the same pairs are judged (equivalent)
    v = evaluate(_claim(_cmp("low", "poly:p=3", "softmax", "equivalent", data="low")), root=floors, preset="smoke")
    assert v.comparisons[0].result == "equivalent"


def test_a_baseline_that_drifts_from_its_own_reference_fails_the_gate_and_says_by_how_much(floors):
    gate = Gate("the planted floor", 30.0, within_of=("dataset", "one", 5.0), within_name="the one cell")
    r = evaluate(_claim(_cmp("drift", "poly:p=3", "softmax", "equivalent", data="drift", gate=gate)), root=floors,
                 preset="smoke").comparisons[0]
    assert r.gate_failed and r.result == "uninformative"
    assert r.gate_reason.endswith("fell 10.00 points behind the one cell (gate: 5)"), r.gate_reason
    # a wider tolerance lets the same baseline through, and the pairs are judged
    wide = Gate("the planted floor", 30.0, within_of=("dataset", "one", 15.0), within_name="the one cell")
    r = evaluate(_claim(_cmp("drift", "poly:p=3", "softmax", "equivalent", data="drift", gate=wide)), root=floors,
                 preset="smoke").comparisons[0]
    assert not r.gate_failed and r.gate_reason == "" and r.result == "equivalent"
    # a baseline below the floor is named by the floor
    r = evaluate(_claim(_cmp("low", "poly:p=3", "softmax", "equivalent", data="low", gate=gate)), root=floors,
                 preset="smoke").comparisons[0]
    assert r.gate_reason == "no model beat the planted floor"


def test_an_arm_split_across_its_floor_is_read_as_counts_with_an_exact_test(floors):
    gate = Gate("the copy plateau", 10.7)
    v = evaluate(_claim(_cmp("split", "poly:p=3", "softmax", "worse", data="split", gate=gate)), root=floors,
                 preset="smoke")
    r = v.comparisons[0]
    assert r.learned_counts == (2, 0, 3) and r.counts_p == pytest.approx(0.4)
    assert r.result == "split" and r.outcome == "open" and v.form == "inconclusive at this power"
    assert "2 of 3 seeds of the candidate learned" in summary(v) and "Fisher exact p = 0.4" in summary(v)


def test_counts_the_exact_test_cannot_separate_decide_nothing(floors):
    v = evaluate(_claim(_cmp("one", "poly:p=3", "softmax", "equivalent", data="one")), root=floors, preset="smoke")
    r = v.comparisons[0]
    assert r.learned_counts == (1, 3, 3) and r.counts_p == pytest.approx(0.4)
    assert r.result == "split" and v.form == "inconclusive at this power"    # not "worse", not "did not learn"
    v = evaluate(_claim(_cmp("six", "poly:p=3", "softmax", "equivalent", data="six")), root=floors, preset="smoke")
    r = v.comparisons[0]
    assert r.learned_counts == (1, 6, 6) and r.counts_p < 0.05
    assert r.result == "fewer seeds learned" and r.outcome == "contradicts" and v.form == "not supported"


def test_fisher_exact_p_matches_known_values():
    assert rule.fisher_exact_p(1, 3, 3) == pytest.approx(0.4)
    assert rule.fisher_exact_p(0, 5, 5) == pytest.approx(2 / 252)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        rule.fisher_exact_p(4, 1, 3)


# --- harms inside the margin, one multiplicity rule --------------------------------------------------------

@pytest.fixture
def harms(tmp_path, planted_grid):
    planted_grid(GRID, _runs(tmp_path, {
        ("softmax", "h"): 0.80, ("softmax:k=8", "h"): 0.796, ("softmax:k=1/8", "h"): 0.797,
        # beyond the margin by about 0.7 points, with a spread that the family's adjustment makes matter
        ("poly:p=3", "h"): [0.7850, 0.7780, 0.7880, 0.7830, 0.7800],
        ("poly:p=2", "h"): 0.80, ("poly:p=1", "h"): 0.80, ("relu2_n", "h"): 0.80,
    }))
    return tmp_path


def test_a_harm_smaller_than_the_margin_is_named_and_the_claim_holds_smaller_than_the_margin(harms):
    claim = _claim(_cmp("necessity", "softmax:k=8", "softmax", "worse", data="h"),
                   _cmp("tightened", "softmax:k=1/8", "softmax", "equivalent", data="h", role="description",
                        shown_with="necessity"))
    v = evaluate(claim, root=harms, preset="smoke")
    r = _by(v)["necessity"]
    assert r.result == "equivalent" and r.qualifier == ", worse by less than the margin"
    assert r.outcome == "smaller than the margin" and v.form == "holds, smaller than the margin"
    text = summary(v)
    assert "worse by less than the margin" in text and "Holm p" in text and "inside ±1" in text
    assert "; beside it, tightened: " in text          # the ÷8 arm beside the ×8 one
    # expecting equivalence, the same result supports it and still names the harm
    v = evaluate(_claim(_cmp("necessity", "softmax:k=8", "softmax", "equivalent", data="h")), root=harms,
                 preset="smoke")
    assert v.form == "equivalent within the margin" and "worse by less than the margin" in summary(v)


def test_the_interval_judged_against_the_margin_carries_the_family_adjustment(harms):
    alone = evaluate(_claim(_cmp("beyond", "poly:p=3", "softmax", "worse", data="h")), root=harms, preset="smoke")
    r = alone.comparisons[0]
    assert r.ci_high < -1.0 and r.result == "worse" and r.family_size == 1
    family = _claim(_cmp("beyond", "poly:p=3", "softmax", "worse", data="h"),
                    *(_cmp(a, a, "softmax", "equivalent", data="h") for a in ("poly:p=2", "poly:p=1", "relu2_n")))
    v = evaluate(family, root=harms, preset="smoke")
    r = _by(v)["beyond"]
    assert r.family_size == 4 and r.adj_low < r.ci_low and r.adj_high > -1.0
    assert r.result == "worse, size unclear"      # its Bonferroni interval crosses the margin's edge
    assert "Bonferroni-adjusted interval for 4 comparisons" in summary(v)


def test_only_the_deciding_tier_forms_the_family(harms):
    import dataclasses

    deciding = dataclasses.replace(_cmp("beyond", "poly:p=3", "softmax", "worse", data="h"), tier="big")
    others = [dataclasses.replace(_cmp(a, a, "softmax", "equivalent", data="h"), tier="small")
              for a in ("poly:p=2", "poly:p=1", "relu2_n")]
    v = evaluate(_claim(deciding, *others, deciding_tier="big"), root=harms, preset="smoke")
    alone = evaluate(_claim(_cmp("beyond", "poly:p=3", "softmax", "worse", data="h")), root=harms, preset="smoke")
    assert _by(v)["beyond"].holm_p == pytest.approx(alone.comparisons[0].holm_p)
    assert _by(v)["beyond"].family_size == 1 and _by(v)["poly:p=2"].family_size == 3


# --- untestable parts, the direction across tiers, pending ------------------------------------------------

def test_an_all_of_claim_with_an_untestable_part_is_partly_testable(cells, planted_grid):
    claim = _claim(_cmp("c", "poly:p=3", "softmax", "equivalent", data="c"),
                   _cmp("chance", "poly:p=3", "poly:p=3", "equivalent", data="a"))    # both arms at chance
    v = evaluate(claim, root=cells, preset="smoke")
    assert v.form == "partly testable" and v.parts_form == "equivalent within the margin"
    assert v.untestable == ["chance: neither arm learned the task"]
    assert "Partly testable: 1 of 2 parts could not be tested" in summary(v)


def test_the_summary_states_the_direction_across_tiers_and_the_pooled_deciding_estimate(harms):
    import dataclasses

    big = dataclasses.replace(_cmp("big", "softmax:k=8", "softmax", "equivalent", data="h"), tier="big")
    small = dataclasses.replace(_cmp("small", "softmax:k=8", "softmax", "equivalent", data="h"), tier="small")
    v = evaluate(_claim(big, small, deciding_tier="big", deciding_tier_after="chosen once every tier was stored"),
                 root=harms, preset="smoke")
    (d,) = v.directions
    assert d["tiers"] == ["big", "small"] and d["favour_baseline"] == 2 and d["favour_candidate"] == 0
    assert d["pooled_tiers"] == ["big"] and d["pooled"] == pytest.approx(_by(v)["big"].mean)
    text = summary(v)
    assert "across 2 tiers (big, small)" in text and "the deciding tier alone" in text
    assert "chosen after the data: chosen once every tier was stored" in text


def test_a_planned_grid_with_no_runs_is_pending(cells):
    v = evaluate(_claim(_cmp("nothing", "sigmoid", "softmax", "equivalent", data="a")), root=cells, preset="smoke")
    assert v.form == "pending"
    assert answer_rows({"unit": v}, ids=["unit"]) == []          # a page that lists its waiting claims apart
    (row,) = answer_rows({"unit": v}, ids=["unit"], pending=True)
    assert row["verdict"] == "pending" and row["key number"] == "0 of 5 planned pairs stored"
    from polyattn.claims.design import design_rows

    (plan,) = design_rows({"unit": v})
    assert plan.plan == "pending"


def test_every_new_word_is_in_the_one_vocabulary():
    for form in ("holds, smaller than the margin", "partly testable", "pending"):
        assert form in rule.FORMS and form in rule.LEGEND
    for result in ("cannot see attention", "control failed", "fewer seeds learned", "more seeds learned"):
        assert result in rule.RESULTS and result in rule.FORM_OUTCOME
    assert math.isnan(float("nan"))


# --- the register's readings of the committed records ----------------------------------------------------

def test_the_registers_checks_name_the_cells_they_validate():
    from polyattn.claims.register import REGISTER

    physics = {c.id: c.validates for c in REGISTER["physics_poly"].checks}
    assert physics == {"ablated_convection": ("convection",), "ablated_reaction": ("reaction",),
                       "ablated_wave": ("wave",)}
    for cid in ("table_parity", "converged_scale_needed", "quadratic"):
        check = next(c for c in REGISTER[cid].checks if c.id == "ablated_vs_softmax")
        assert check.validates == ("tier:converged",)
    # the Table 1 analogue's own control validates its tier alone where the claim has several
    (t1,) = [c for c in REGISTER["table_parity"].checks if c.id == "ablated_vs_softmax_table1"]
    assert t1.validates == ("tier:table1",) and t1.candidate.grid == "vit_table1_ablated"
    assert {c.id for c in REGISTER["family"].checks} == {"ablated_vs_softmax_table1"}
    (check,) = REGISTER["converged_unclipped"].checks
    assert set(check.validates) == {"cube_sqrt_n", "cube_vs_scaled"}


def test_the_committed_records_read_as_the_rule_now_says():
    physics = evaluate("physics_poly")
    by = _by(physics)
    assert physics.form == "not supported"
    assert by["convection"].result == "did not learn" and by["convection"].learned_counts == (0, 5, 5)
    assert by["reaction"].result == "cannot see attention"
    # recall with ten times the training: read as counts against the copy plateau, with an exact test
    mqar = _by(evaluate("mqar_long"))
    assert mqar["cube_14"].learned_counts == (2, 0, 3) and mqar["cube_14"].counts_p == pytest.approx(0.4)
    assert mqar["cube_14"].result == "split"
    # no verdict word from one of three seeds against three of three
    for cid in ("lra_long", "powers_trained"):
        for r in evaluate(cid).comparisons:
            if r.learned_counts and r.learned_counts[0] == 1 and r.learned_counts[1] == 3:
                assert r.result == "split", (cid, r.comparison.id)
    # the unconfounded intervention names its harm, and the ÷8 arm stands beside the ×8 one
    text = summary(evaluate("norm_intervention_unclipped"))
    assert "worse by less than the margin" in text and "beside it, softmax/8 − softmax" in text
    # the length sweep's bigram-level lengths are uninformative: no model learned beyond the trigram
    sweep = _by(evaluate("length_scale_needed"))
    assert sweep["cube_vs_row_1024"].gate_failed and sweep["cube_vs_row_1024"].result == "uninformative"
