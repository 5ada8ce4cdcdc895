"""The norm intervention's analysis on synthetic records with planted answers."""
import math

import pytest
from support.records import make_record

from polyattn.analysis import intervention as I

SEEDS = (0, 1, 2, 3, 4)
NOISE = (0.0, 0.003, -0.003, 0.002, -0.002)


def records(k_effect, cap_effect, base=0.88, cap_probes=None):
    """softmax at ``base`` per seed; softmax:k=K at base + k_effect(K); the capped cubic at base + cap_effect."""
    conv, inter = [], []
    for s, eps in zip(SEEDS, NOISE):
        conv.append(make_record("softmax", s, accs=(0.5, base + eps), experiment="vit_converged"))
        conv.append(make_record("poly:p=3,c=1", s, accs=(0.5, 0.3), experiment="vit_converged"))  # not read
        jitter = 0.0005 * (s - 2)
        for k in (2, 4, 8):
            inter.append(make_record(f"softmax:k={k}", s, accs=(0.5, base + eps + k_effect(k) + jitter),
                                     experiment="vit_norm_intervention"))
        inter.append(make_record("poly_cap:p=3", s, accs=(0.5, base + eps + cap_effect - jitter),
                                 experiment="vit_norm_intervention", probes=cap_probes))
    return conv, inter


def test_final_keeps_softmax_and_the_scaled_cubic_of_the_converged_tier_only():
    conv, inter = records(lambda k: 0.0, 0.0)
    final = I.intervention_final(conv, inter)
    assert set(final["activation"]) == {"softmax", "softmax:k=2", "softmax:k=4", "softmax:k=8", "poly_cap:p=3"}
    assert len(final) == 5 * len(SEEDS)


def test_the_holm_family_is_the_interventions_only():
    conv, inter = records(lambda k: 0.0, 0.0)
    conv += [make_record("poly:p=3", s, accs=(0.5, 0.87), experiment="vit_converged") for s in SEEDS]
    diffs = I.intervention_differences(I.intervention_final(conv, inter), margin=1.0)
    assert set(diffs["activation"]) == {"softmax:k=2", "softmax:k=4", "softmax:k=8", "poly_cap:p=3"}
    assert (diffs["family_size"] == 4).all()


def test_softmax_factor_parses_the_intervention_specs():
    assert I.softmax_factor("softmax") == 1.0
    assert I.softmax_factor("softmax:k=8") == 8.0
    assert I.softmax_factor("poly_cap:p=3") is None


def test_planted_degradation_with_k_and_capped_match_is_holds():
    conv, inter = records(lambda k: -0.01 * math.log2(k), 0.001)
    final = I.intervention_final(conv, inter)
    sl = I.k_slope(final)
    assert sl["slope"] == pytest.approx(-1.0, abs=0.05) and sl["ci_high"] < 0 and sl["n"] == len(SEEDS)
    m = I.mechanism_verdict(final, margin=1.0)
    assert (m.necessity, m.sufficiency, m.form) == ("holds", "holds", "holds")
    assert "per doubling of k" in m.text
    assert "$8\\cdot\\mathrm{softmax}$" in m.summary and "sufficiency holds: " in m.summary


def test_a_slope_from_two_values_of_k_says_so_and_one_from_four_does_not():
    conv, inter = records(lambda k: -0.01 * math.log2(k), 0.001)
    full = I.mechanism_verdict(I.intervention_final(conv, inter), margin=1.0)
    assert "per doubling of $k$" in full.summary and "alone" not in full.summary
    only_8 = [r for r in inter if r["config"]["activation"] in ("softmax:k=8", "poly_cap:p=3")]
    m = I.mechanism_verdict(I.intervention_final(conv, only_8), margin=1.0)
    assert "per doubling of $k$ (from $k$ = 1 and 8 alone)" in m.summary


def test_no_degradation_and_a_worse_capped_cubic_is_not_supported():
    conv, inter = records(lambda k: 0.0, -0.03)
    m = I.mechanism_verdict(I.intervention_final(conv, inter), margin=1.0)
    assert (m.necessity, m.sufficiency, m.form) == ("contradicted", "contradicted", "not supported")


def test_one_prediction_held_and_one_contradicted_is_mixed():
    conv, inter = records(lambda k: -0.01 * math.log2(k), -0.03)
    m = I.mechanism_verdict(I.intervention_final(conv, inter), margin=1.0)
    assert (m.necessity, m.sufficiency, m.form) == ("holds", "contradicted", "mixed")


def test_missing_intervention_runs_are_pending_not_a_verdict():
    conv, inter = records(lambda k: 0.0, 0.0)
    m = I.mechanism_verdict(I.intervention_final(conv, inter[:2]), margin=1.0)
    assert m.form == "pending" and m.necessity == "pending"
    assert I.mechanism_verdict(I.intervention_final(conv, []), margin=1.0).form == "pending"


def test_norm_check_reports_the_probed_norm_per_activation():
    probes = [{"step": 10, "layer": 0, "head": h, "metric": "attn_fro_over_sqrt_n", "value": v}
              for h, v in enumerate((0.5, 0.7))]
    conv, inter = records(lambda k: 0.0, 0.0, cap_probes=probes)
    table = I.norm_check(conv + inter).set_index("activation")
    assert table.loc["poly_cap:p=3", "runs"] == len(SEEDS)
    assert table.loc["poly_cap:p=3", "norm_final_mean"] == pytest.approx(0.6)
    assert "softmax" not in table.index          # no probes, no row


def test_with_one_factor_the_slope_is_the_paired_difference_per_doubling():
    conv, inter = records(lambda k: -0.03, 0.0)
    only8 = [r for r in inter if r["config"]["activation"] == "softmax:k=8"]
    final = I.intervention_final(conv, only8)
    sl = I.k_slope(final)
    assert sl["n"] == len(SEEDS) and sl["ks"] == [1.0, 8.0]
    assert sl["slope"] == pytest.approx(-3.0 / 3, abs=0.01) and sl["ci_high"] < 0
    m = I.mechanism_verdict(I.intervention_final(conv, only8[:1]), margin=1.0)
    assert "nan" not in m.text and m.necessity == "pending"


def test_a_prediction_waits_for_the_minimum_of_paired_seeds():
    conv, inter = records(lambda k: 0.0, 0.0)
    two = [r for r in inter if r["seed"] in (0, 1)]
    final = I.intervention_final(conv, two)
    assert I.mechanism_verdict(final, margin=1.0).form != "pending"
    m = I.mechanism_verdict(final, margin=1.0, min_pairs=3)
    assert (m.necessity, m.sufficiency, m.form) == ("pending", "pending", "pending")
    with pytest.raises(ValueError, match="min_pairs"):
        I.mechanism_verdict(final, margin=1.0, min_pairs=1)


def test_an_inconclusive_summary_names_the_detectable_effect_and_the_scale():
    conv, inter = records(lambda k: 0.0, 0.0)
    final = I.intervention_final(conv, [r for r in inter if r["config"]["activation"] in ("softmax:k=8", "poly_cap:p=3")])
    wide = dict(zip(SEEDS, (0.02, -0.02, 0.015, -0.01, 0.0)))
    tested = final["activation"].isin(["softmax:k=8", "poly_cap:p=3"])
    final.loc[tested, "test_acc"] += final.loc[tested, "seed"].map(wide)
    m = I.mechanism_verdict(final, margin=1.0, scale="unit recipe, preset book")
    assert (m.necessity, m.sufficiency, m.form) == ("inconclusive", "inconclusive", "inconclusive at this power")
    assert m.summary.startswith("Necessity inconclusive: ") and "; sufficiency inconclusive: " in m.summary
    assert m.summary.count("detectable $\\pm$") == 2
    assert m.summary.endswith("(margin $\\pm$1 point; unit recipe, preset book).")
