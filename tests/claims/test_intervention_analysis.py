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


def test_planted_degradation_with_k_gives_a_negative_slope():
    conv, inter = records(lambda k: -0.01 * math.log2(k), 0.001)
    final = I.intervention_final(conv, inter)
    sl = I.k_slope(final)
    assert sl["slope"] == pytest.approx(-1.0, abs=0.05) and sl["ci_high"] < 0 and sl["n"] == len(SEEDS)
    diffs = I.intervention_differences(final, margin=1.0).set_index("activation")
    assert diffs.loc["softmax:k=8", "mean_diff"] == pytest.approx(-3.0, abs=0.05)
    assert diffs.loc["poly_cap:p=3", "tost_p"] < 0.05        # the capped cube within 1 point of softmax


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
    one = I.k_slope(I.intervention_final(conv, only8[:1]))
    assert one["n"] == 1 and math.isnan(one["ci_low"]) and math.isnan(one["p"])
